#!/bin/sh
# Builds examples/provider-skeleton the way a vendor would, against an installed nodesmith only, and runs the
# conformance suite on the result:
#   skeleton_conformance.sh BUILD_DIR SKELETON_SRC_DIR CONFORMANCE_EXE
# 1. stage this build's development files (provider.h, nodesmith-provider.pc) with `meson install --destdir`;
# 2. copy the skeleton out of the source tree, so nothing but the staged header can be included;
# 3. build and install it with its own Makefile, pkg-config pointed at the staged .pc (prefix rewritten);
# 4. run nodesmith-conformance on the installed skeleton.so with its test hooks on.
set -eu
build_dir=$1
skeleton_src=$2
conformance=$3

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
