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
    print("ok: repairs at 1980 s and 4800 s, two blocked at 4200 s, five nodes at the end")


main()
