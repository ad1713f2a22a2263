#!/usr/bin/env bash
# Runs one libFuzzer harness for a bounded time: FUZZER WORK_DIR SEED_CORPUS SECONDS. New inputs go to WORK_DIR (in
# the build tree); a crash leaves WORK_DIR/crash-* and fails the test. Copy a crash into fuzz/corpus/NAME once fixed.
set -euo pipefail
fuzzer=$1 work=$2 seeds=$3 seconds=$4
mkdir -p "$work"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
  -artifact_prefix="$work/" "$work" "$seeds"
