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
grep -q "^good .* ok .*abi 7 .*version 0.0.1" <<<"$out" || fail "good plugin not listed as ok: $out"
grep -q "^no_launch .* refused .*required method 'launch' (ABI 1) is NULL" <<<"$out" || fail "refusal reason missing: $out"

# Misbehaving plugins (the watchdog): each is one refusal naming what it did, and the listing goes on. Crashes are
# met under the default deadline; the hang, which never ends, under a deadline of its own in a directory of its own,
# so no well-behaved plugin has to load within it.
install -m 0755 "$variants/crash_entry.so" "$variants/crash_init.so" "$dir/"
out=$("$nodesmith" plugins --plugins-dir "$dir" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "plugins with crashing plugins exited $rc, want 1: $out"
grep -q "^crash_entry .* refused .*crash_entry.so crashed in nodesmith_provider_entry: SIGSEGV" <<<"$out" ||
    fail "crash in the entry function not reported: $out"
grep -q "^crash_init .* refused .*provider crash_init crashed in init: SIGSEGV" <<<"$out" ||
    fail "crash in init not reported: $out"
grep -q "^good .* ok .*abi [0-9]" <<<"$out" || fail "good plugin not listed after the broken ones: $out"
hang_dir=$(mktemp -d)
trap 'rm -rf "$dir" "$hang_dir"' EXIT
chmod 0755 "$hang_dir"
install -m 0755 "$variants/hang_init.so" "$variants/hang_launch.so" "$variants/crash_launch.so" "$hang_dir/"
start=$(date +%s)
out=$("$nodesmith" plugins --plugins-dir "$hang_dir" --provider-timeout 1s 2>&1); rc=$?
[ $rc -eq 1 ] || fail "plugins with a hanging plugin exited $rc, want 1: $out"
[ $(( $(date +%s) - start )) -lt 60 ] || fail "plugins took a minute with a 1s deadline"
grep -q "^hang_init .* refused .*provider hang_init: init: did not return within 1000 ms" <<<"$out" ||
    fail "hang in init not reported: $out"
out=$("$nodesmith" plugins --plugins-dir "$dir" --provider-timeout soon 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "provider-timeout takes a positive duration" <<<"$out" || fail "bad --provider-timeout: $rc $out"
# In-process (offerings, simulate): a crash ends the command with the line naming provider and method; a hang is a
# failed call naming them, and the command fails.
out=$("$nodesmith" offerings --plugins-dir "$dir" --provider crash_init 2>&1); rc=$?
[ $rc -eq 139 ] || fail "offerings with a plugin crashing in init exited $rc, want 139 (SIGSEGV): $out"
grep -q "^nodesmith: provider crash_init crashed in init: SIGSEGV" <<<"$out" || fail "crash line missing: $out"
out=$("$nodesmith" offerings --plugins-dir "$hang_dir" --provider hang_init --provider-timeout 1s 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "provider hang_init: init: did not return within 1000 ms" <<<"$out" ||
    fail "offerings with a plugin hanging in init: $rc $out"
cat >"$hang_dir/pending.yaml" <<'YAML'
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: tin}
spec:
  template:
    spec:
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
      nodeClassRef: {group: tin.example.com, kind: TinNodeClass, name: tin}
---
apiVersion: tin.example.com/v1
kind: TinNodeClass
metadata: {name: tin}
spec: {gauge: 4}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers:
    - name: web
      image: nginx
      resources: {requests: {cpu: 500m, memory: 512Mi}}
YAML
out=$("$nodesmith" simulate -f "$hang_dir/pending.yaml" --plugins-dir "$hang_dir" --provider crash_launch \
    --allow-launch 2>&1); rc=$?
[ $rc -eq 139 ] || fail "simulate with a plugin crashing in launch exited $rc, want 139 (SIGSEGV): $out"
grep -q "^nodesmith: provider crash_launch crashed in launch: SIGSEGV" <<<"$out" || fail "crash line missing: $out"
out=$("$nodesmith" simulate -f "$hang_dir/pending.yaml" --plugins-dir "$hang_dir" --provider hang_launch \
    --allow-launch --provider-timeout 1s 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "provider hang_launch: launch .*: did not return within 1000 ms" <<<"$out" ||
    fail "simulate with a plugin hanging in launch: $rc $out"
rm "$dir/crash_entry.so" "$dir/crash_init.so"

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
# offerings --nodeclass: a node class of the provider's own kind (TinNodeClass, which the core does not name), checked
# by the provider before any listing.
printf 'apiVersion: tin.example.com/v1\nkind: TinNodeClass\nmetadata: {name: tin}\nspec: {gauge: 4}\n' >"$dir/tin.yaml"
out=$("$nodesmith" offerings --plugins-dir "$dir" --provider good --nodeclass "$dir/tin.yaml" 2>&1) ||
    fail "offerings --nodeclass: $out"
grep -q "^tp.small" <<<"$out" || fail "offerings --nodeclass lists no tp.small: $out"
# ... then the node class's status as the provider resolves it (ABI 4), with the Ready condition the core derives.
grep -q "^node class TinNodeClass tin: Ready=True (Ready)$" <<<"$out" || fail "offerings: no Ready status: $out"
grep -q "^  GaugeReady  *True  *GaugeReady" <<<"$out" || fail "offerings: no GaugeReady condition: $out"
grep -q "^  gauge: 4$" <<<"$out" || fail "offerings: no resolved gauge: $out"
printf 'apiVersion: tin.example.com/v1\nkind: TinNodeClass\nmetadata: {name: rare}\nspec: {gauge: 25}\n' >"$dir/rare.yaml"
out=$("$nodesmith" offerings --plugins-dir "$dir" --provider good --nodeclass "$dir/rare.yaml" --output json 2>/dev/null) ||
    fail "offerings --nodeclass rare.yaml: $out"
python3 -c '
import json, sys
nc = json.load(sys.stdin)["nodeclass"]
assert (nc["kind"], nc["name"], nc["apiVersion"]) == ("TinNodeClass", "rare", "tin.example.com/v1"), nc
ready, gauge = nc["status"]["conditions"]
assert ready == {"type": "Ready", "status": "False", "reason": "UnhealthyDependents", "message": "GaugeReady=False"}, ready
assert gauge == {"type": "GaugeReady", "status": "False", "reason": "GaugeNotFound",
                 "message": "no wire of spec.gauge in stock (at most 20)"}, gauge
assert "gauge" not in nc["status"], nc
' <<<"$out" || fail "offerings json status of an unresolved node class: $out"
# A provider of ABI 3 reports no status: offerings says so and still lists.
install -m 0755 "$variants/abi3.so" "$dir/"
out=$("$nodesmith" offerings --plugins-dir "$dir" --provider abi3 --nodeclass "$dir/tin.yaml" 2>&1) ||
    fail "offerings with an ABI-3 provider: $out"
grep -q "^node class TinNodeClass tin: no status (provider abi3 (ABI 3) does not support nodeclass_status)$" <<<"$out" ||
    fail "offerings with an ABI-3 provider: $out"
rm "$dir/abi3.so"
printf 'apiVersion: tin.example.com/v1\nkind: TinNodeClass\nmetadata: {name: thick}\nspec: {gauge: 99}\n' >"$dir/bad.yaml"
out=$("$nodesmith" offerings --plugins-dir "$dir" --provider good --nodeclass "$dir/bad.yaml" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "bad.yaml:1: TinNodeClass thick: provider good: validate_nodeclass thick: TinNodeClass thick: spec.gauge must be a number from 1 to 30" <<<"$out" ||
    fail "bad --nodeclass: $rc $out"
printf 'apiVersion: nodesmith.io/v1\nkind: SimNodeClass\nmetadata: {name: s}\n' >"$dir/other.yaml"
out=$("$nodesmith" offerings --plugins-dir "$dir" --provider good --nodeclass "$dir/other.yaml" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "holds 0 node classes of the provider's kinds (TinNodeClass (tin.example.com/v1), TinNodeClass (tin.example.com/v1alpha1))" <<<"$out" ||
    fail "--nodeclass of another provider's kind: $rc $out"
"$nodesmith" frobnicate >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown command must exit 2"
"$nodesmith" offerings --help | grep -q "^Usage: nodesmith offerings" || fail "offerings --help"
echo "1 passed, 0 failed"
