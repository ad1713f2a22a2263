#!/bin/sh
# layer-includes.sh DIR SRCDIR AREA... : makes DIR a directory holding one link per AREA to SRCDIR/AREA, the only
# headers a layer's sources can include (core/meson.build gives each area's library -I DIR and nothing wider).
set -eu
dir=$1
src=$2
shift 2
rm -rf "$dir"
mkdir -p "$dir"
for area in "$@"; do
  ln -s "$src/$area" "$dir/$area"
done
