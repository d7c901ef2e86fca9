#!/usr/bin/env bash
# Builds the pinned stripe-mock (Stripe's mock server, which validates every request against
# Stripe's OpenAPI specification) into .tools/bin with `go install`. Safe to run repeatedly.
set -euo pipefail

STRIPE_MOCK_VERSION=v0.203.0

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.tools/bin"
marker="$bin/.stripe-mock-$STRIPE_MOCK_VERSION"
[ -x "$bin/stripe-mock" ] && [ -f "$marker" ] && exit 0

if ! command -v go >/dev/null 2>&1; then
  echo "install-stripe-mock: Go is missing; install Go 1.22+ (Debian: apt-get install golang), or put stripe-mock at .tools/bin/stripe-mock" >&2
  exit 1
fi
mkdir -p "$bin"
echo "install-stripe-mock: building stripe-mock $STRIPE_MOCK_VERSION into .tools/bin" >&2
GOBIN="$bin" go install "github.com/stripe/stripe-mock@$STRIPE_MOCK_VERSION"
rm -f "$bin"/.stripe-mock-*
touch "$marker"
