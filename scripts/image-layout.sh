#!/usr/bin/env bash
# Lays out what the container image holds, from a meson build directory, into DESTDIR: the controller at
# usr/bin/nodesmith and every provider plugin the build made in usr/lib/nodesmith/plugins.d (the chart's
# provider.pluginsDir), owned by the caller, writable by no one else (the loader refuses plugins that are). The
# Dockerfile runs this same script in its build stage, so the directory a test runs from and the image agree; where
# a container engine exists (docker or podman), `image-layout.sh --image TAG` builds the image itself instead.
#
# Usage: image-layout.sh BUILDDIR DESTDIR
#        image-layout.sh --image TAG
set -euo pipefail
umask 022
if [ "${1:-}" = --image ]; then
  [ $# -eq 2 ] || { echo "usage: image-layout.sh --image TAG" >&2; exit 2; }
  engine=$(command -v docker || command -v podman || true)
  [ -n "$engine" ] || { echo "image-layout.sh: no container engine (docker or podman) on this machine" >&2; exit 1; }
  exec "$engine" build -t "$2" "$(cd "$(dirname "$0")/.." && pwd)"
fi
[ $# -eq 2 ] || { echo "usage: image-layout.sh BUILDDIR DESTDIR" >&2; exit 2; }
build=$1 dest=$2
[ -x "$build/nodesmith" ] || { echo "image-layout.sh: $build/nodesmith: not built (run ninja -C $build)" >&2; exit 1; }
plugins=("$build"/plugins.d/*.so)
[ -e "${plugins[0]}" ] || { echo "image-layout.sh: $build/plugins.d: no provider plugin built" >&2; exit 1; }
install -d -m 0755 "$dest/usr/bin" "$dest/usr/lib/nodesmith/plugins.d" "$dest/etc/nodesmith/provider"
install -m 0755 "$build/nodesmith" "$dest/usr/bin/nodesmith"
for so in "${plugins[@]}"; do
  install -m 0644 "$so" "$dest/usr/lib/nodesmith/plugins.d/"
done
