"""Existing capacity from manifests (time_fixtures/existing-capacity.yaml): launched NodeClaims and their Nodes, with
provider IDs the simulated cloud has never seen, get instances of their own offerings and are managed as if the
engine had launched them, as Karpenter manages the claims it finds at start-up:
- neither is garbage collected as a claim whose instance is gone;
- the empty one is consolidated (WhenEmpty, its Initialized condition a day old, so consolidateAfter has passed) and
  its instance, the one started for it, terminated;
- deleting the busy one drains it (its ReplicaSet pod moves to a new node), terminates its instance and removes its
  Node, karpenter.sh/termination finalizer and all;
- a launched claim without its offering's labels is refused, naming the claim and where it was written.

Usage: timeline_existing_capacity.py NODESMITH FIXTURE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    nodesmith, fixtures = sys.argv[1], sys.argv[2]
    manifests = f"{fixtures}/existing-capacity-manifests.yaml"
    timeline = f"{fixtures}/existing-capacity.yaml"
    proc = subprocess.run([nodesmith, "simulate", "-f", manifests, "--timeline", timeline, "--output", "json"],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    doc = json.loads(proc.stdout)
    decisions = [(d["time_s"], d["message"], d["nodeclaims"], d["detail"]) for d in doc["decisions"]]
    gc = [d for d in decisions if d[1].startswith("garbage collected")]
    if gc:
        sys.exit(f"garbage collected: {gc}")
    states = {s["name"]: s["state"] for s in doc["steps"]}
    running = states["running"]
    busy = [c for c in running["nodeclaims"] if c["name"] == "default-busy"]
    if len(busy) != 1 or busy[0]["phase"] != "Initialized" or busy[0]["provider_id"] == "sim:///us-west-2a/i-0busy" or \
            not busy[0]["provider_id"].startswith("sim:///us-west-2a/") or busy[0]["price_per_hour"] <= 0:
        sys.exit(f"the busy claim after 3m: {busy}; expected Initialized on an instance started for it, priced")
    node = [n for n in running["nodes"] if n["name"] == "default-busy"]
    if len(node) != 1 or node[0]["pod_names"] != ["default/web-abcde-1"] or node[0]["status"] != "Ready":
        sys.exit(f"the busy node after 3m: {node}")
    idle = [d for d in decisions if d[2] == "default-idle"]
    want = [(15, "disrupting node(s)"), (20, "terminated instance"), (20, "deleted node"), (20, "deleted nodeclaim")]
    if [(d[0], d[1]) for d in idle if d[1] not in ("tainted node", "disruption")] != want:
        sys.exit(f"the idle claim's decisions {idle}, expected {want}")
    terminated = next(d[3] for d in idle if d[1] == "terminated instance")
    if not terminated.startswith("sim:///us-west-2b/") or terminated.endswith("i-0idle"):
        sys.exit(f"terminated {terminated}, expected the instance started for default-idle in us-west-2b")
    busy_after = [(d[0], d[1]) for d in decisions if d[2] == "default-busy" and d[0] >= 180]
    for what in ["evicted pod", "terminated instance", "deleted node", "deleted nodeclaim"]:
        if what not in [d[1] for d in busy_after]:
            sys.exit(f"after deleting default-busy: {busy_after}, no \"{what}\"")
    last = states["settled"]
    names = [n["name"] for n in last["nodes"]]
    if "default-busy" in names or len(names) != 1 or last["nodes"][0]["pod_names"] != ["default/web-abcde-1"]:
        sys.exit(f"at the end: nodes {[(n['name'], n['status'], n['pod_names']) for n in last['nodes']]}; expected "
                 "the busy Node gone and its pod on a new node")
    if not all(s["state"]["invariants"]["ok"] for s in doc["steps"]):
        sys.exit(f"invariants: {[s['state']['invariants'] for s in doc['steps']]}")
    refused(nodesmith, manifests, timeline)
    print(f"ok: manifest claims backed ({busy[0]['provider_id']}, {terminated}), the empty one consolidated at 15 s, "
          "the deleted one drained and gone")


def refused(nodesmith, manifests, timeline):
    with open(manifests) as f:
        text = f.read()
    bad = text.replace("node.kubernetes.io/instance-type: m5.large,\n           topology.kubernetes.io/zone: us-west-2a,",
                       "node.kubernetes.io/instance-type: m5.large,", 1)
    line = bad[:bad.index("name: default-busy")].count("\n")  # name: is on line line+1; its document starts 3 lines up
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.yaml")
        with open(path, "w") as f:
            f.write(bad)
        proc = subprocess.run([nodesmith, "simulate", "-f", path, "--timeline", timeline], capture_output=True,
                              text=True, timeout=300)
    want = (f"NodeClaim default-busy ({path}:{line - 2}): status.providerID is set, so its instance must exist; give "
            "it the labels node.kubernetes.io/instance-type, topology.kubernetes.io/zone and "
            "karpenter.sh/capacity-type of the offering it runs on")
    if proc.returncode != 1 or want not in proc.stderr:
        sys.exit(f"a claim without its zone label: exit {proc.returncode}, expected 1 and \"{want}\" in:\n"
                 f"{proc.stderr[-2000:]}")


main()
