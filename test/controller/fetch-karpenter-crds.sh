#!/usr/bin/env bash
# Karpenter's own CRDs (karpenter.sh NodePool and NodeClaim) for the controller's end-to-end tests, from the Go module
# sigs.k8s.io/karpenter (pkg/apis/crds) through the module proxy: test/kube/fetch-crds.sh fetches and caches them
# outside the tree (never copied into it: nodesmith will ship CRDs of its own). Prints the directory holding them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../kube/fetch-crds.sh" sigs.k8s.io/karpenter "${NS_KARPENTER_VERSION:-v1.14.0}"
