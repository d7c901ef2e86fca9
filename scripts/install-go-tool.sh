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

source "$root/scripts/go-env.sh"
require_go "install-$name"
mkdir -p "$bin"
exec 9>"$bin/.$name.lock"
flock 9
[ -x "$bin/$name" ] && [ -f "$marker" ] && exit 0
echo "install-$name: building $name $version ($purpose) into .tools/bin" >&2
GOBIN="$bin" go install -gcflags="$GO_GCFLAGS" -ldflags="$GO_LDFLAGS" "$module@$version"
rm -f "$bin/.$name"-*
touch "$marker"
