#!/usr/bin/env bash
# The pinned Mailpit: a real SMTP server with an HTTP API, for the SMTP tests. Safe to run repeatedly.
set -euo pipefail
exec bash "$(dirname "$0")/install-go-tool.sh" mailpit github.com/axllent/mailpit v1.33.1 "a real SMTP server for the tests, about a minute"
