#!/usr/bin/env bash
# CRDs published in a Go module (pkg/apis/crds of sigs.k8s.io/karpenter, github.com/aws/karpenter-provider-aws, ...)
# for tests that apply them to the test control plane: `fetch-crds.sh MODULE VERSION [DIR]` downloads the module at
# that release through the module proxy (the go command verifies it against the checksum database), copies its
# DIR/*.yaml (default pkg/apis/crds; a module that publishes its CRDs only in its chart names that directory) into a
# cache directory outside the tree (never into it) and prints that directory.
# Needs the Go that build-control-plane.sh uses (it fetches one when missing).
set -euo pipefail
[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: fetch-crds.sh MODULE VERSION [DIR]" >&2; exit 2; }
module=$1 version=$2 crds=${3:-pkg/apis/crds}
cache=${NODESMITH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodesmith}
out=$cache/crds/${module//\//_}@$version
if [ -f "$out/.complete" ]; then echo "$out"; exit 0; fi
here=$(cd "$(dirname "$0")" && pwd)
go=$(bash "$here/build-control-plane.sh" --print-go)
work=$(mktemp -d)
trap 'rm -rf "$work" "$out.tmp"' EXIT
mkdir -p "$cache/gomod" "$cache/crds"
# GOTOOLCHAIN=auto: a module may require a newer Go than the one that builds the control plane (karpenter v1.14.0
# says go 1.26.5); the go command then fetches that toolchain through the proxy, checked like any module.
json=$(cd "$work" && GOMODCACHE=$cache/gomod GOFLAGS=-mod=mod GO111MODULE=on GOTOOLCHAIN=auto "$go" mod download \
  -json "$module@$version") || true
dir=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ] || [ ! -d "$dir/$crds" ]; then
  echo "fetch-crds: $module@$version: no $crds ($(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Error": "\(.*\)",*$/\1/p'))" >&2
  exit 1
fi
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
cp "$dir/$crds"/*.yaml "$out.tmp/"
chmod u+w "$out.tmp"/*.yaml
touch "$out.tmp/.complete"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$out"
