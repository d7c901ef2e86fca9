#!/usr/bin/env bash
# Installs the Node.js that .node-version pins into the git-ignored .tools folder and prints its bin
# directory, for `.ci/run` to put first on PATH: the official binary, as the npm package
# node-linux-<arch> ships it (`npm pack` fetches it from the registry; nothing of it runs at
# install). The machine's own Node.js is left alone. Safe to run repeatedly.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
version=$(tr -d '[:space:]' < "$root/.node-version")
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "install-node: no Node.js package for $(uname -m)" >&2; exit 1 ;;
esac
dir="$root/.tools/node-v$version"

if [ "$("$dir/bin/node" --version 2>/dev/null)" != "v$version" ]; then
  echo "install-node: node-linux-$arch@$version into ${dir#"$root"/}" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-$arch@$version" >/dev/null)
  tar -xzf "$tmp"/node-linux-"$arch"-*.tgz -C "$tmp"
  mkdir -p "$dir/bin"
  mv "$tmp/package/bin/node" "$dir/bin/node.partial"
  mv "$dir/bin/node.partial" "$dir/bin/node"
fi
echo "$dir/bin"
