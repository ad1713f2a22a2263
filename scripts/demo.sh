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
  case "$f" in examples/timeline-*) continue ;; esac
  echo "== nodesmith simulate -f $f"
  ./build/nodesmith simulate -f "$f" --provider sim
done
# The lifecycle engine over simulated time: each timeline with its manifests, and an HTML report per timeline.
mkdir -p build/reports
for t in examples/timeline-*.yaml; do
  case "$t" in *-manifests.yaml) continue ;; esac
  name=$(basename "$t" .yaml)
  echo "== nodesmith simulate -f examples/$name-manifests.yaml --timeline $t --report build/reports/$name.html"
  ./build/nodesmith simulate -f "examples/$name-manifests.yaml" --timeline "$t" --report "build/reports/$name.html" 2>/dev/null
done
echo "reports: build/reports/*.html"
