#!/usr/bin/env bash
# Helm for the chart's tests, built once from its Go module (helm.sh/helm/v3/cmd/helm) through the module proxy (the
# go command checks it against the checksum database) into a cache outside the tree keyed by version, like the
# control plane (test/kube/build-control-plane.sh, whose Go it uses). Prints the helm binary's path; the compiler's
# output goes to <cache>/build.log.
#
# Environment: NODESMITH_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/nodesmith), NS_HELM_VERSION.
set -euo pipefail
version=${NS_HELM_VERSION:-v3.22.0}
cache=${NODESMITH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodesmith}
out=$cache/helm-$version
if [ -x "$out/bin/helm" ] && [ -f "$out/.complete" ]; then echo "$out/bin/helm"; exit 0; fi
here=$(cd "$(dirname "$0")" && pwd)
go=$(bash "$here/../kube/build-control-plane.sh" --print-go)
mkdir -p "$out" "$cache/gomod"
# Two test runs starting at once must not build twice into the same directory.
exec 9>"$out.lock"
flock 9
if [ -x "$out/bin/helm" ] && [ -f "$out/.complete" ]; then echo "$out/bin/helm"; exit 0; fi
echo "build-helm: building helm.sh/helm/v3/cmd/helm@$version with $("$go" env GOVERSION); log in $out/build.log" >&2
# GOTOOLCHAIN=auto: helm may require a newer Go than the one found; the go command then fetches that toolchain
# through the proxy, checked like any module.
if ! GOMODCACHE=$cache/gomod GOBIN=$out/bin GOFLAGS=-mod=mod GOTOOLCHAIN=auto GOMAXPROCS=2 CGO_ENABLED=0 GOWORK=off \
     "$go" install "helm.sh/helm/v3/cmd/helm@$version" >"$out/build.log" 2>&1; then
  echo "build-helm: go install helm.sh/helm/v3/cmd/helm@$version failed:" >&2
  tail -20 "$out/build.log" >&2
  exit 1
fi
touch "$out/.complete"
echo "$out/bin/helm"
