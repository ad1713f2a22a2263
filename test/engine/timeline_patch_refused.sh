#!/bin/sh
# A timeline patch that breaks a node class is refused by the provider's validate_nodeclass, with its message, when
# the patch is applied, and simulate exits non-zero:  timeline_patch_refused.sh NODESMITH FIXTURE_DIR
set -u
out=$("$1" simulate -f "$2/patch-nodeclass-manifests.yaml" --timeline "$2/patch-nodeclass-refused.yaml" 2>&1)
rc=$?
[ $rc -ne 0 ] || { echo "FAIL: simulate accepted a patch the provider refuses"; exit 1; }
echo "$out" | grep -q 'patch: SimNodeClass default as patched:1: SimNodeClass default: provider sim: validate_nodeclass default: SimNodeClass default: spec.zones\[0\] "nowhere-1a" is not one of the provider' ||
    { echo "FAIL: the refusal lacks the provider's message:"; echo "$out"; exit 1; }
echo "1 passed, 0 failed"
