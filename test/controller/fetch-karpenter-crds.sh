#!/usr/bin/env bash
# Karpenter's own CRDs (karpenter.sh NodePool and NodeClaim) for the controller's end-to-end tests, from the Go module
# sigs.k8s.io/karpenter (pkg/apis/crds) through the module proxy, verified against the checksum database by the go
# command. They are cached outside the tree and never copied into it: nodesmith will ship CRDs of its own.
# Prints the directory holding them. Needs the Go that build-control-plane.sh uses (it fetches one when missing).
set -euo pipefail
version=${NS_KARPENTER_VERSION:-v1.14.0}
cache=${NODESMITH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodesmith}
out=$cache/karpenter-crds-$version
if [ -f "$out/karpenter.sh_nodepools.yaml" ] && [ -f "$out/karpenter.sh_nodeclaims.yaml" ]; then echo "$out"; exit 0; fi
here=$(cd "$(dirname "$0")" && pwd)
go=$(bash "$here/../kube/build-control-plane.sh" --print-go)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$cache/gomod"
dir=$(cd "$work" && GOMODCACHE=$cache/gomod GOFLAGS=-mod=mod GO111MODULE=on "$go" mod download -json \
  "sigs.k8s.io/karpenter@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] && [ -d "$dir/pkg/apis/crds" ] || { echo "fetch-karpenter-crds: sigs.k8s.io/karpenter@$version has no pkg/apis/crds" >&2; exit 1; }
mkdir -p "$out.tmp"
cp "$dir/pkg/apis/crds/karpenter.sh_nodepools.yaml" "$dir/pkg/apis/crds/karpenter.sh_nodeclaims.yaml" "$out.tmp/"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$out"
