#!/usr/bin/env bash
# Installs the Debian packages nodesmith builds and tests with; skips apt entirely when all are present.
set -euo pipefail
packages=(
  meson ninja-build pkg-config gcc
  libcurl4-openssl-dev libcjson-dev libssl-dev libyaml-dev libexpat1-dev libmicrohttpd-dev
  check libsubunit-dev
  python3 python3-botocore python3-kubernetes python3-yaml
  openssl curl
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Node.js runs the Alibaba Cloud emulator and the Azure SDK check, whose official SDK packages come from npm (cached
# outside the tree).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends nodejs npm
fi
bash "$(dirname "$0")/npm-deps.sh" "$(dirname "$0")/../test/emulators/alibaba" alibaba
bash "$(dirname "$0")/npm-deps.sh" "$(dirname "$0")/../test/emulators/azure" azure
