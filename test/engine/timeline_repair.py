"""Node repair through a timeline (time_fixtures/repair.yaml), as Karpenter's node.health controller decides it: the
node whose Ready turned Unknown at 3m is deleted at 33m (its 30-minute toleration) and not before; two NotReady nodes
of five are held by the circuit breaker (20% of five, rounded up, is one), each reported once as blocked when its
toleration ends; when one comes back at 80m the other is deleted at once; each repaired node is replaced.

Usage: timeline_repair.py NODESMITH FIXTURE_DIR
"""
import json
import subprocess
import sys


def main():
    nodesmith, fixtures = sys.argv[1], sys.argv[2]
    proc = subprocess.run([nodesmith, "simulate", "-f", f"{fixtures}/repair-manifests.yaml", "--timeline",
                           f"{fixtures}/repair.yaml", "--output", "json"], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    doc = json.loads(proc.stdout)
    by = {}
    for d in doc["decisions"]:
        by.setdefault(d["message"], []).append(d)
    repaired = [(d["time_s"], d["reason"]) for d in by.get("deleting unhealthy node", [])]
    want = [(1980, "node condition Ready has been Unknown for longer than its toleration"),
            (4800, "node condition Ready has been False for longer than its toleration")]
    if repaired != want:
        sys.exit(f"repairs {repaired}, expected {want}")
    blocked = by.get("node repair blocked", [])
    if [d["time_s"] for d in blocked] != [4200, 4200] or len({d["nodeclaims"] for d in blocked}) != 2 or \
            any(d["reason"] != "more than 20% nodes are unhealthy in the nodepool" for d in blocked):
        sys.exit(f"blocked repairs {[(d['time_s'], d['nodeclaims'], d['reason']) for d in blocked]}, expected two "
                 "claims at 4200 s with Karpenter's message")
    # the second repair is of one of the two claims that were blocked, and the one that came back stays
    second = by["deleting unhealthy node"][1]["nodeclaims"]
    if second not in {d["nodeclaims"] for d in blocked}:
        sys.exit(f"repaired {second} at 4800 s, which was not blocked")
    gone = {d["nodeclaims"] for d in by.get("deleted nodeclaim", [])}
    if gone != {d["nodeclaims"] for d in by["deleting unhealthy node"]}:
        sys.exit(f"deleted nodeclaims {sorted(gone)}, expected exactly the repaired ones")
    last = doc["steps"][-1]["state"]
    if len(last["nodes"]) != 5 or last["pods_pending"] != 0 or not last["invariants"]["ok"]:
        sys.exit(f"final state: {len(last['nodes'])} nodes, {last['pods_pending']} pending, invariants "
                 f"{last['invariants']}")
    # the state says it: the stopped node's Ready condition, its pod by name, the repaired claim's annotations
    stopped = doc["steps"][1]["state"]
    unknown = [n for n in stopped["nodes"] if n["conditions"][0]["status"] == "Unknown"]
    if len(unknown) != 1 or unknown[0]["conditions"][0] != {
            "type": "Ready", "status": "Unknown", "reason": "", "message": "",
            "last_transition": "2026-01-01T00:03:00.000Z"}:
        sys.exit(f"state after the kubelet stopped: {[n['conditions'] for n in stopped['nodes']]}")
    if len(unknown[0]["pod_names"]) != 1 or not unknown[0]["pod_names"][0].startswith("default/spread-") or \
            unknown[0]["taints"] != []:
        sys.exit(f"stopped node's pods {unknown[0]['pod_names']}, taints {unknown[0]['taints']}")
    first = by["deleting unhealthy node"][0]["nodeclaims"]
    after = next(s for s in doc["steps"] if s["name"] == "two nodes NotReady")["state"]
    if any(c["name"] == first for c in after["nodeclaims"]):
        sys.exit(f"{first} still listed at 2400 s")
    kinds = {c["type"] for c in after["nodeclaims"][0]["conditions"]}
    if not {"Launched", "Registered", "Initialized"} <= kinds or \
            "karpenter.sh/nodepool-hash" not in after["nodeclaims"][0]["annotations"]:
        sys.exit(f"a claim's conditions {sorted(kinds)}, annotations {after['nodeclaims'][0]['annotations']}")
    print("ok: repairs at 1980 s and 4800 s, two blocked at 4200 s, five nodes at the end; the states say it")


main()
