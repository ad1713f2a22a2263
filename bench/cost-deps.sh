#!/usr/bin/env bash
# Installs GLPK (Debian's libglpk-dev and glpk-utils) for the cost benchmark's optimum side; the product never links
# it. Reconfigure afterwards (meson setup --reconfigure build) so bench/meson.build finds it.
set -euo pipefail
if ! dpkg-query -W -f='${Status}' libglpk-dev 2>/dev/null | grep -q "install ok installed"; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends libglpk-dev glpk-utils
fi
