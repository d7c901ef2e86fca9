#!/usr/bin/env bash
# The pinned Helm, built from the Go module proxy, and deploy/helm/validate (the strict decoder of
# rendered objects into the Kubernetes API types, its modules pinned by its go.sum), both into
# .tools/bin: the chart tests lint, render and validate with them. Safe to run repeatedly.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-go-tool.sh" helm helm.sh/helm/v4/cmd/helm v4.3.2 "lints and renders the Helm chart, a few minutes the first time"

bin="$root/.tools/bin"
stamp=$(cat "$root/deploy/helm/validate/go.sum" "$root/deploy/helm/validate/main.go" | sha256sum | cut -c1-16)
marker="$bin/.k8s-validate-$stamp"
[ -x "$bin/k8s-validate" ] && [ -f "$marker" ] && exit 0
echo "install-helm: building deploy/helm/validate (k8s.io/api, KEDA's and Prometheus Operator's types) into .tools/bin" >&2
(cd "$root/deploy/helm/validate" && GOGC=400 go build -mod=readonly -gcflags='all=-N -l' -ldflags='-s -w' -o "$bin/k8s-validate" .)
rm -f "$bin"/.k8s-validate-*
touch "$marker"
