#!/usr/bin/env bash
# The pinned stripe-mock: Stripe's mock server, which validates every request against Stripe's
# OpenAPI specification. Safe to run repeatedly.
set -euo pipefail
exec bash "$(dirname "$0")/install-go-tool.sh" stripe-mock github.com/stripe/stripe-mock v0.203.0 "Stripe's OpenAPI-validating mock"
