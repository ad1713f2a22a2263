#!/usr/bin/env bash
# Installs what is missing, then builds and runs every test twice: a normal build and an address+undefined
# sanitizer build. Exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The real Kubernetes control plane the `kube` suite runs against: built from the official sources on the first run
# (long; see docs/kubernetes.md), then reused from the cache outside the tree.
bash test/kube/build-control-plane.sh >/dev/null
# Karpenter's CRDs for the controller's end-to-end tests (test/controller) and the AWS provider's (EC2NodeClass) for
# the client's CRD tests (test/kube/client), from the Go module proxy, cached.
bash test/controller/fetch-karpenter-crds.sh >/dev/null
bash test/kube/fetch-crds.sh github.com/aws/karpenter-provider-aws v1.14.0 >/dev/null
# Helm for the chart's tests (test/chart), built from its Go module through the proxy, cached.
bash test/chart/build-helm.sh >/dev/null
# Plugins writable by group or others are refused by the loader, so builds must not produce them.
umask 022

run_suite() {
  local dir=$1; shift
  if [ -d "$dir" ]; then meson setup --reconfigure "$dir" "$@" >/dev/null; else meson setup "$dir" "$@" >/dev/null; fi
  ninja -C "$dir"
  meson test -C "$dir" --print-errorlogs --num-processes 2 --timeout-multiplier 3
}

echo "== normal build"
run_suite build
echo "== sanitizer build (address, undefined)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
run_suite build-asan -Db_sanitize=address,undefined -Db_lundef=false
echo "== all tests passed in both builds"
