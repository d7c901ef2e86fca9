#!/usr/bin/env bash
# Builds the pinned Temporal server and its SQL schema tool from the Go module proxy, for
# `npm run cluster` and the production tests. The binaries are built once per machine into the user's
# cache (so a fresh clone links them in seconds) and linked into the git-ignored .tools/bin as
# temporal-server and temporal-sql-tool. The first build takes about 7 minutes on 2 cores.
# Safe to run repeatedly.
set -euo pipefail

TEMPORAL_SERVER_VERSION=v1.32.2
# The server's go.mod asks for a newer Go than Debian ships; GOTOOLCHAIN fetches it from the proxy.
GO_TOOLCHAIN=go1.26.10

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.tools/bin"
cache="${DURABLE_WEBHOOKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/durable-webhooks}/temporal-server-$TEMPORAL_SERVER_VERSION"

say() { printf 'install-temporal-server: %s\n' "$*" >&2; }

if [ ! -x "$cache/server" ] || [ ! -x "$cache/sql" ]; then
  if ! command -v go >/dev/null 2>&1; then
    say "Go is missing; install Go 1.21 or newer, which fetches the $GO_TOOLCHAIN toolchain itself from the Go module proxy."
    exit 1
  fi
  go_version=$(go env GOVERSION | sed 's/^go//')
  if [ "$(printf '%s\n%s\n' 1.21 "$go_version" | sort -V | head -n 1)" != 1.21 ]; then
    say "Go $go_version cannot fetch the $GO_TOOLCHAIN toolchain (GOTOOLCHAIN needs Go 1.21 or newer); install a newer Go."
    exit 1
  fi
  say "building Temporal server $TEMPORAL_SERVER_VERSION with $GO_TOOLCHAIN into $cache (about 7 minutes the first time)"
  mkdir -p "$cache.partial"
  # GOGC=400: the compiler collects its garbage a quarter as often; measured, 19% less CPU for this
  # build, at the same peak memory (1.7 GB). Without optimisation and inlining (-N -l): 316 rather than
  # 413 CPU-seconds (user and system, modules already downloaded, 2 cores), while the production suite
  # spent 134 rather than 124 CPU-seconds with it. This server is the laptop's and the tests'; a
  # production cluster runs Temporal's own images (docs/production.md).
  GOGC=400 GOTOOLCHAIN="$GO_TOOLCHAIN" GOBIN="$cache.partial" \
    go install -gcflags='all=-N -l' -ldflags='-s -w' "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION"
  rm -rf "$cache"
  mv "$cache.partial" "$cache"
fi

mkdir -p "$bin"
ln -sfn "$cache/server" "$bin/temporal-server"
ln -sfn "$cache/sql" "$bin/temporal-sql-tool"
