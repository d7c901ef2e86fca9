#!/usr/bin/env bash
# Builds the pinned Mailpit (a real SMTP server with an HTTP API, for the SMTP tests) into
# .tools/bin with `go install` from the Go module proxy. Safe to run repeatedly.
set -euo pipefail

MAILPIT_VERSION=v1.33.1

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.tools/bin"
marker="$bin/.mailpit-$MAILPIT_VERSION"
[ -x "$bin/mailpit" ] && [ -f "$marker" ] && exit 0

if ! command -v go >/dev/null 2>&1; then
  echo "install-mailpit: Go is missing; install Go 1.22+ (Debian: apt-get install golang), or put Mailpit at .tools/bin/mailpit" >&2
  exit 1
fi
mkdir -p "$bin"
echo "install-mailpit: building Mailpit $MAILPIT_VERSION into .tools/bin (about a minute)" >&2
GOBIN="$bin" go install "github.com/axllent/mailpit@$MAILPIT_VERSION"
rm -f "$bin"/.mailpit-*
touch "$marker"
