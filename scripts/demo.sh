#!/usr/bin/env bash
# Installs what is missing, builds, and runs nodesmith on its embedded default: the simulated cloud.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
umask 022
if [ -d build ]; then meson setup --reconfigure build >/dev/null; else meson setup build >/dev/null; fi
ninja -C build
# The main job: Karpenter's provisioning decisions for every example, on the simulated cloud (sim.so).
for f in examples/*.yaml; do
  echo "== nodesmith simulate -f $f"
  ./build/nodesmith simulate -f "$f" --provider sim
done
