#!/usr/bin/env bash
# Installs the npm packages a test folder declares (its package.json and package-lock.json) into a cache outside the
# tree, ${NODESMITH_CACHE:-$HOME/.cache/nodesmith}/npm-<name>, and does nothing when the cached lock file is the same.
# Tests find the packages with NODE_PATH=<that directory>/node_modules. Usage: npm-deps.sh DIR NAME
set -euo pipefail
dir=$1
name=$2
cache="${NODESMITH_CACHE:-$HOME/.cache/nodesmith}/npm-$name"
if [ -d "$cache/node_modules" ] && cmp -s "$dir/package-lock.json" "$cache/package-lock.json"; then
  exit 0
fi
echo "installing npm packages for $name into $cache"
mkdir -p "$cache"
cp "$dir/package.json" "$dir/package-lock.json" "$cache/"
(cd "$cache" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
