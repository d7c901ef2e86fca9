#!/usr/bin/env bash
# Builds a pinned Go program into .tools/bin with `go install` from the Go module proxy, unless that
# version is already there. One build at a time: a second caller waits on the first's lock, then
# finds the binary built. Usage: install-go-tool.sh <binary> <module> <version> <what it is for>
set -euo pipefail
name=$1 module=$2 version=$3 purpose=$4

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.tools/bin"
marker="$bin/.$name-$version"
[ -x "$bin/$name" ] && [ -f "$marker" ] && exit 0

if ! command -v go >/dev/null 2>&1; then
  echo "install-$name: Go is missing; install Go 1.22+ (Debian: apt-get install golang), or put $name at .tools/bin/$name" >&2
  exit 1
fi
mkdir -p "$bin"
exec 9>"$bin/.$name.lock"
flock 9
[ -x "$bin/$name" ] && [ -f "$marker" ] && exit 0
echo "install-$name: building $name $version ($purpose) into .tools/bin" >&2
# Without the symbol table and DWARF: smaller binaries that link faster (panics still name their lines).
# Without optimisation and inlining: about a quarter less compile time, for tools the tests run briefly.
GOGC=400 GOBIN="$bin" go install -gcflags='all=-N -l' -ldflags='-s -w' "$module@$version"
rm -f "$bin/.$name"-*
touch "$marker"
