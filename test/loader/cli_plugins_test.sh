#!/usr/bin/env bash
# `nodesmith plugins` over a directory holding a good and a refused plugin, and the CLI's answers to bad flags.
set -u
nodesmith=$1
variants=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 0755 "$dir"
install -m 0755 "$variants/good.so" "$variants/no_launch.so" "$dir/"
fail() { echo "FAIL: $*"; exit 1; }

out=$("$nodesmith" plugins --plugins-dir "$dir" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "plugins with a refused plugin exited $rc, want 1: $out"
grep -q "^good .* ok .*abi 3 .*version 0.0.1" <<<"$out" || fail "good plugin not listed as ok: $out"
grep -q "^no_launch .* refused .*required method 'launch' (ABI 1) is NULL" <<<"$out" || fail "refusal reason missing: $out"

rm "$dir/no_launch.so"
out=$(NODESMITH_PLUGINS_DIR="$dir" "$nodesmith" plugins 2>&1) || fail "all-good directory via the environment failed: $out"

out=$("$nodesmith" plugins --bogus 2>&1); rc=$?
[ $rc -eq 2 ] || fail "unknown flag exited $rc, want 2"
grep -q "unknown or incomplete option '--bogus'" <<<"$out" || fail "unknown flag message: $out"
out=$("$nodesmith" offerings --output yaml 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "output must be text or json" <<<"$out" || fail "bad --output: $rc $out"
out=$("$nodesmith" offerings --plugins-dir "$dir" --provider nope 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "provider nope: no file" <<<"$out" || fail "missing provider: $rc $out"
out=$("$nodesmith" offerings --plugins-dir "$dir" --provider good --set answer=x 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "option 'answer' of provider good is 'x'" <<<"$out" || fail "bad --set value: $rc $out"
out=$("$nodesmith" offerings --plugins-dir "$dir" --provider good --output json 2>/dev/null) || fail "offerings json failed"
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["instance_types"][0]["name"]=="tp.small", d' <<<"$out" || fail "offerings json shape: $out"
"$nodesmith" frobnicate >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown command must exit 2"
"$nodesmith" offerings --help | grep -q "^Usage: nodesmith offerings" || fail "offerings --help"
echo "1 passed, 0 failed"
