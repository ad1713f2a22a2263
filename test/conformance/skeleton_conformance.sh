#!/bin/sh
# Builds examples/provider-skeleton the way a vendor would, against an installed nodesmith only, and runs the
# conformance suite on the result:
#   skeleton_conformance.sh BUILD_DIR SKELETON_SRC_DIR CONFORMANCE_EXE NODESMITH_EXE MANIFESTS
# 1. stage this build's development files (provider.h, nodesmith-provider.pc) with `meson install --destdir`;
# 2. copy the skeleton out of the source tree, so nothing but the staged header can be included;
# 3. build and install it with its own Makefile, pkg-config pointed at the staged .pc (prefix rewritten);
# 4. run nodesmith-conformance on the installed skeleton.so with its test hooks on;
# 5. run `nodesmith simulate` on manifests of the skeleton's own node-class kind, which the core does not name: they
#    load because the plugin declares the kind, and a node class the plugin's validate_nodeclass refuses fails the
#    run with the plugin's message before anything is launched.
set -eu
build_dir=$1
skeleton_src=$2
conformance=$3
nodesmith=$4
manifests=$5

umask 022
work=$(mktemp -d "${TMPDIR:-/tmp}/nodesmith-skeleton.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

echo "== staging the development files of $build_dir into $work/stage"
meson install -C "$build_dir" --no-rebuild --destdir "$work/stage" --tags devel >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; exit 1; }
pc=$(find "$work/stage" -name nodesmith-provider.pc | head -n 1)
if [ -z "$pc" ]; then
    echo "the staged install has no nodesmith-provider.pc" >&2
    exit 1
fi
pc_dir=$(dirname "$pc")
prefix=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --variable=prefix nodesmith-provider)
pkg_config="pkg-config --define-variable=prefix=$work/stage$prefix"
echo "== using $pc (prefix $prefix staged at $work/stage$prefix)"

echo "== building the skeleton outside the source tree"
cp -R "$skeleton_src" "$work/skeleton"
rm -f "$work/skeleton"/*.o "$work/skeleton"/*.so
PKG_CONFIG_PATH="$pc_dir" make -C "$work/skeleton" PKG_CONFIG="$pkg_config"
PKG_CONFIG_PATH="$pc_dir" make -C "$work/skeleton" PKG_CONFIG="$pkg_config" install
plugindir=$(PKG_CONFIG_PATH="$pc_dir" $pkg_config --variable=plugindir nodesmith-provider)
case $plugindir in
"$work"/*) ;;
*) echo "plugindir $plugindir is outside the staged install" >&2; exit 1 ;;
esac

echo "== nodesmith-conformance $plugindir/skeleton.so --set test_hooks=true --require-hooks"
"$conformance" "$plugindir/skeleton.so" --set test_hooks=true --require-hooks

echo "== nodesmith simulate --provider skeleton -f $manifests"
out=$("$nodesmith" simulate --plugins-dir "$plugindir" --provider skeleton --allow-launch -f "$manifests" --output json 2>"$work/sim.err") ||
    { cat "$work/sim.err"; echo "simulate with the skeleton's node class failed" >&2; exit 1; }
printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
claims = d.get("nodeclaims") or d.get("node_claims") or []
assert claims, "no node claims launched: %s" % json.dumps(d)[:400]
assert sorted(t["provider_id"] for t in d["terminated"]) == sorted(c["provider_id"] for c in claims), d["terminated"]
print("launched %d node claim(s) on SkeletonNodeClass" % len(claims))
'
sed 's/diskGiB: 40/diskGiB: 3/' "$manifests" >"$work/bad.yaml"
if "$nodesmith" simulate --plugins-dir "$plugindir" --provider skeleton --allow-launch -f "$work/bad.yaml" >"$work/bad.out" 2>&1; then
    echo "a SkeletonNodeClass with diskGiB 3 was accepted" >&2
    exit 1
fi
grep -q "bad.yaml:2: SkeletonNodeClass default: provider skeleton: validate_nodeclass default: SkeletonNodeClass default: spec.diskGiB must be a whole number from 8 to 16384" "$work/bad.out" ||
    { cat "$work/bad.out"; echo "the refusal does not carry the provider's message" >&2; exit 1; }
grep -q '"launched nodeclaim"\|launched node claim' "$work/bad.out" && { echo "launched despite a bad node class" >&2; exit 1; }
echo "a bad SkeletonNodeClass is refused with the provider's message"
