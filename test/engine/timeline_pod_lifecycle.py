"""A pod's lifecycle through a timeline (time_fixtures/pod-lifecycle.yaml), each step checked by what the engine then
does, as Karpenter would:
- a pod that Succeeded counts for nothing: its node is empty and consolidated 15 s (the validation wait) later;
- a do-not-disrupt "30m" pod reported started 23 minutes before the run blocks its node's drift until 7m, not until
  30 minutes after it was bound;
- a pod deleted with a grace period of 2m stays Terminating on its node, and its node, empty for Karpenter, is deleted
  only when the pod is gone (at 4m);
- what cannot be (a start time after the step, a pending pod's phase, a terminal phase changed) fails its step naming
  the pod and the field.

Usage: timeline_pod_lifecycle.py NODESMITH FIXTURE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    nodesmith, fixtures = sys.argv[1], sys.argv[2]
    manifests = f"{fixtures}/pod-lifecycle-manifests.yaml"
    proc = subprocess.run([nodesmith, "simulate", "-f", manifests, "--timeline", f"{fixtures}/pod-lifecycle.yaml",
                           "--output", "json"], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    doc = json.loads(proc.stdout)
    states = {s["name"]: s["state"] for s in doc["steps"]}

    def pool_of(name):
        return name.rsplit("-", 1)[0]

    disrupting = {}
    for d in doc["decisions"]:
        if d["message"] == "disrupting node(s)":
            for n in d["nodes"].split(","):
                disrupting.setdefault(pool_of(n), []).append((d["time_s"], d["reason"]))
    deleted = {}
    for d in doc["decisions"]:
        if d["message"] == "deleted node":
            deleted.setdefault(pool_of(d["nodes"]), []).append(d["time_s"])

    if disrupting.get("jobs") != [(135, "Empty")]:
        sys.exit(f"the Succeeded pod's node: disruptions {disrupting.get('jobs')}, expected [(135, 'Empty')]")
    if disrupting.get("guarded", [None])[0] != (435, "Drifted"):
        sys.exit(f"the guarded node: disruptions {disrupting.get('guarded')}, expected drift at 435 s (protection "
                 "ends at 420 s, plus the 15 s validation)")
    if deleted.get("term") != [240]:
        sys.exit(f"the terminating pod's node deleted at {deleted.get('term')}, expected [240] (the grace period's "
                 "end)")
    term = [n for n in states["terminating"]["nodes"] if pool_of(n["name"]) == "term"]
    if len(term) != 1 or term[0]["pod_names"] != ["default/slow"] or term[0]["status"] != "Deleting":
        sys.exit(f"at 3m the term node is {term}; expected Deleting, still running default/slow")
    if not all(s["state"]["invariants"]["ok"] for s in doc["steps"]):
        sys.exit(f"invariants: {[s['state']['invariants'] for s in doc['steps']]}")
    refused(nodesmith, manifests)
    print("ok: Succeeded pod's node consolidated at 135 s, drift held by do-not-disrupt until 435 s, terminating "
          "pod's node deleted at 240 s")


def refused(nodesmith, manifests):
    cases = [("podStatus: {name: job, startTime: 2026-01-01T01:00:00Z}",
              "timeline step 2: podStatus: Pod default/job: status.startTime: 2026-01-01T01:00:00.000Z is after "
              "the step's time"),
             ("podStatus: {name: nosuch, phase: Failed}",
              "timeline step 2: podStatus: Pod default/nosuch: status.phase: no Pod default/nosuch"),
             ("podStatus: {selector: {matchLabels: {app: none}}, phase: Failed}",
              "timeline step 2: podStatus: no Pod in namespace default matches the selector")]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.yaml")
        for action, want in cases:
            with open(path, "w") as f:
                f.write(f"steps:\n  - advance: 1m\n  - {action}\n")
            check(nodesmith, manifests, path, 3, want)
        with open(path, "w") as f:
            f.write("steps:\n  - advance: 1m\n  - podStatus: {name: job, phase: Succeeded}\n"
                    "  - podStatus: {name: job, phase: Failed}\n")
        check(nodesmith, manifests, path, 4, "timeline step 3: podStatus: Pod default/job: status.phase: Pod "
              "default/job is Succeeded already; a terminal phase does not change")
        with open(path, "w") as f:
            f.write("steps:\n  - podStatus: {name: job, phase: Failed}\n")
        check(nodesmith, manifests, path, 2, "timeline step 1: podStatus: Pod default/job: status.phase: Pod "
              "default/job is pending: no kubelet runs it")


def check(nodesmith, manifests, path, line, want):
    proc = subprocess.run([nodesmith, "simulate", "-f", manifests, "--timeline", path], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 1 or f"{path}:{line}: {want}" not in proc.stderr:
        sys.exit(f"exit {proc.returncode}, expected 1 and \"{path}:{line}: {want}\" in:\n{proc.stderr[-2000:]}")


main()
