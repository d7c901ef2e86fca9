#!/usr/bin/env bash
# `npm run build`, unless dist/ was built from the sources as they are now: `npm ci` builds it
# (prepare), and `npm test` and `npm run test:production` would otherwise build it again, unchanged.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
stamp="$root/dist/.built"
sources=("$root/src" "$root/activities" "$root/workflows" "$root/contracts" "$root/package.json" "$root/package-lock.json" "$root/tsconfig.json" "$root/tsconfig.build.json")
if [ -f "$stamp" ] && [ -z "$(find "${sources[@]}" -newer "$stamp" -print -quit)" ]; then
  echo "build-if-changed: dist/ is up to date with the sources" >&2
  exit 0
fi
cd "$root"
npm run build
