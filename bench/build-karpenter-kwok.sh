#!/usr/bin/env bash
# Karpenter's kwok provider (sigs.k8s.io/karpenter/kwok: Karpenter itself with a fake cloud whose instances are kwok
# Nodes) and kwok (sigs.k8s.io/kwok/cmd/kwok, the kubelet of those Nodes), built once from their Go modules through
# the module proxy (checked against the checksum database by the go command) into a cache outside the tree keyed by
# version, like the control plane (test/kube/build-control-plane.sh, whose Go it uses). For bench/controller_bench.py's
# side-by-side row. Prints the directory holding bin/karpenter, bin/kwok and crds/ (Karpenter's CRDs and the kwok
# provider's node class CRD, as its chart installs them); the compiler's output goes to <cache>/build.log.
#
# --source-only: only Karpenter's module, downloaded into the cache's module directory (what nodesmith's row reads its
# catalog from, bench/controller_bench.py kwok_catalog), without building anything; prints the same directory.
# --check: builds nothing; prints the directory when the build is complete, else says what is missing and exits 3.
#
# The cache counts as built only when its .complete stamp is there and so are both binaries (executable) and the CRDs:
# a binary removed or left unwritten since is built again, like build-helm.sh checks bin/helm.
#
# Environment: NODESMITH_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/nodesmith), NS_KARPENTER_VERSION,
# NS_KWOK_VERSION.
set -euo pipefail
karpenter_version=${NS_KARPENTER_VERSION:-v1.14.0}
kwok_version=${NS_KWOK_VERSION:-v0.7.0}
cache=${NODESMITH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodesmith}
out=$cache/karpenter-kwok-$karpenter_version-kwok-$kwok_version

# What the cache lacks of a complete build, one item a line; nothing when it is complete.
missing() {
  [ -f "$out/.complete" ] || echo "the .complete stamp"
  local b
  for b in karpenter kwok; do [ -x "$out/bin/$b" ] || echo "bin/$b (an executable)"; done
  compgen -G "$out/crds/*.yaml" >/dev/null || echo "crds/*.yaml"
}
if [ -z "$(missing)" ]; then echo "$out"; exit 0; fi
if [ "${1:-}" = --check ]; then
  echo "build-karpenter-kwok: $out is not a complete build, it lacks: $(missing | paste -sd, | sed 's/,/, /g');" \
       "run bench/build-karpenter-kwok.sh" >&2
  exit 3
fi
source_only=false
if [ "${1:-}" = --source-only ]; then source_only=true; fi
here=$(cd "$(dirname "$0")" && pwd)
go=$(bash "$here/../test/kube/build-control-plane.sh" --print-go)
mkdir -p "$out" "$cache/gomod"
# Two runs starting at once must not build twice into the same directory.
exec 9>"$out.lock"
flock 9
if [ -z "$(missing)" ]; then echo "$out"; exit 0; fi
: >"$out/build.log"
if $source_only; then
  if ! GOMODCACHE=$cache/gomod GOFLAGS=-mod=mod GOTOOLCHAIN=auto GOWORK=off \
       "$go" mod download "sigs.k8s.io/karpenter@$karpenter_version" >>"$out/build.log" 2>&1; then
    echo "build-karpenter-kwok: go mod download sigs.k8s.io/karpenter@$karpenter_version failed:" >&2
    tail -20 "$out/build.log" >&2
    exit 1
  fi
  echo "$out"
  exit 0
fi
# The stamp goes until both binaries and the CRDs are in place again.
rm -f "$out/.complete"
# Both commands are named kwok by their package: each is installed into a directory of its own, then named.
for pair in "karpenter sigs.k8s.io/karpenter/kwok@$karpenter_version" "kwok sigs.k8s.io/kwok/cmd/kwok@$kwok_version"; do
  name=${pair%% *} pkg=${pair#* }
  echo "build-karpenter-kwok: building $pkg with $("$go" env GOVERSION); log in $out/build.log" >&2
  # GOTOOLCHAIN=auto: a module may require a newer Go than the one found; the go command then fetches that
  # toolchain through the proxy, checked like any module.
  if ! GOMODCACHE=$cache/gomod GOBIN=$out/gobin-$name GOFLAGS=-mod=mod GOTOOLCHAIN=auto GOMAXPROCS=2 CGO_ENABLED=0 \
       GOWORK=off "$go" install "$pkg" >>"$out/build.log" 2>&1; then
    echo "build-karpenter-kwok: go install $pkg failed:" >&2
    tail -20 "$out/build.log" >&2
    exit 1
  fi
  mkdir -p "$out/bin"
  mv "$out/gobin-$name/kwok" "$out/bin/$name"
  rmdir "$out/gobin-$name"
done
mod=$cache/gomod/sigs.k8s.io/karpenter@$karpenter_version/kwok
mkdir -p "$out/crds"
cp "$mod"/charts/crds/*.yaml "$mod"/apis/crds/*.yaml "$out/crds/"
chmod u+w "$out"/crds/*.yaml
touch "$out/.complete"
echo "$out"
