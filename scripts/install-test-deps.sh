#!/usr/bin/env bash
# Everything every test file needs beyond npm packages, installed only where missing: PostgreSQL,
# Chromium and Go (Debian packages, when run as root or with sudo) and the pinned Temporal binaries.
# The Go-built tools only a few files use (Mailpit, stripe-mock, Helm) are built by the first test
# that needs one (test/support/go-tools.ts), so no other test waits for them.
# Used by `npm test` (pretest) and by .ci/run. Safe to run repeatedly.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

say() { printf 'install-test-deps: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else return 1; fi; }

missing=()
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || [ -n "${DATABASE_URL:-}" ] || missing+=(postgresql)
[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || missing+=(chromium)
# Go builds Mailpit, stripe-mock, Helm and, for the production suite, the Temporal server.
command -v go >/dev/null 2>&1 || missing+=(golang)

if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1 && as_root true 2>/dev/null; then
    say "installing ${missing[*]} from Debian's packages"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    say "missing: ${missing[*]}. Install them (Debian: apt-get install ${missing[*]}), or set DATABASE_URL / CHROMIUM_PATH to existing ones."
    exit 1
  fi
fi

bash "$root/scripts/install-temporal.sh"
