#!/usr/bin/env bash
# Every tool `npm test` builds with Go, into .tools/bin: stripe-mock, Mailpit, then Helm with the
# chart's validator. `.ci/run` runs this beside the installs and the suite, where the test files that
# use them (run last) wait for each; `npm test` alone builds each when its first test needs it.
set -euo pipefail
scripts=$(dirname "$0")
bash "$scripts/install-stripe-mock.sh"
bash "$scripts/install-mailpit.sh"
bash "$scripts/install-helm.sh"
