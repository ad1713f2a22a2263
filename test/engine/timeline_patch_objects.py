"""Run-time patches of Nodes, NodeClaims and Pods through a timeline (time_fixtures/patch-objects.yaml), each checked
by what the engine then does, not only by the state it shows:
- a Node labelled team=blue takes the pending pod that selects team=blue (no NodePool offers the label);
- tainted NoSchedule, it keeps a second such pod pending, which binds there once the taints are patched to [];
- a NodeClaim annotated karpenter.sh/do-not-disrupt "true" is no consolidation candidate: with every claim annotated
  nothing is disrupted for five minutes, although the spread pods, their anti-affinity label removed by a Pod patch,
  would fit on one node; once the annotation is removed (null), consolidation packs them onto the labelled node;
- a patch of an object that does not exist fails its step, naming the step, the object and the field.

Usage: timeline_patch_objects.py NODESMITH FIXTURE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    nodesmith, fixtures = sys.argv[1], sys.argv[2]
    proc = subprocess.run([nodesmith, "simulate", "-f", f"{fixtures}/patch-objects-manifests.yaml", "--timeline",
                           f"{fixtures}/patch-objects.yaml", "--output", "json"], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    doc = json.loads(proc.stdout)
    states = {s["name"]: s["state"] for s in doc["steps"] if s["name"]}
    plain = [s["state"] for s in doc["steps"]]

    running = states["running"]
    if len(running["nodes"]) != 3 or running["pending"] != ["default/pinned"]:
        sys.exit(f"after 2m: {len(running['nodes'])} nodes, pending {running['pending']}; expected 3 and pinned")
    first = sorted(n["name"] for n in running["nodes"])[0]

    def node(state, name):
        return next((n for n in state["nodes"] if n["name"] == name), None)

    labelled = node(states["label a node"], first)
    if labelled["labels"].get("team") != "blue":
        sys.exit(f"{first} labels after the patch: {labelled['labels']}")
    taint_step = states["taint it"]
    if "default/pinned" not in node(taint_step, first)["pod_names"]:
        sys.exit(f"pinned did not bind to the labelled node {first}: {node(taint_step, first)['pod_names']}")
    if node(taint_step, first)["taints"] != ["dedicated=blue:NoSchedule"]:
        sys.exit(f"{first} taints after the taint patch: {node(taint_step, first)['taints']}")
    before_untaint = plain[[s["name"] for s in doc["steps"]].index("untaint it") - 1]
    if before_untaint["pending"] != ["default/extra"]:
        sys.exit(f"with the taint, pending {before_untaint['pending']}; expected extra kept off the tainted node")
    protect = states["protect the claims"]
    if "default/extra" not in node(protect, first)["pod_names"] or node(protect, first)["taints"] != []:
        sys.exit(f"after the untaint: {first} pods {node(protect, first)['pod_names']}, taints "
                 f"{node(protect, first)['taints']}")
    if any(c["annotations"].get("karpenter.sh/do-not-disrupt") != "true" for c in protect["nodeclaims"]):
        sys.exit(f"claim annotations: {[c['annotations'] for c in protect['nodeclaims']]}")

    unprotect_at = next(s["time_s"] for s in doc["steps"] if s["name"] == "unprotect the claims")
    disrupting = [d for d in doc["decisions"] if d["message"] == "disrupting node(s)"]
    early = [d for d in disrupting if d["time_s"] < unprotect_at]
    if early:
        sys.exit(f"disrupted while every claim had do-not-disrupt: {early}")
    if not disrupting:
        sys.exit("nothing consolidated after the do-not-disrupt annotations were removed")
    freed = states["free the pods"]
    last = states["settled"]
    if len(last["nodes"]) != 1 or last["nodes"][0]["name"] != first or last["pods_pending"] != 0:
        sys.exit(f"at the end: nodes {[n['name'] for n in last['nodes']]}, pending {last['pending']}; expected only "
                 f"{first}, holding every pod")
    if len(last["nodes"][0]["pod_names"]) != 5 or not last["invariants"]["ok"] or len(freed["nodes"]) != 3:
        sys.exit(f"at the end {first} holds {last['nodes'][0]['pod_names']}, invariants {last['invariants']}")
    if any("do-not-disrupt" in str(c["annotations"]) for c in last["nodeclaims"]):
        sys.exit(f"annotation left after null: {[c['annotations'] for c in last['nodeclaims']]}")
    print(f"ok: label, taint and untaint of {first}, do-not-disrupt held {len(disrupting)} consolidation(s) until "
          f"{unprotect_at} s, one node at the end")

    refused(nodesmith, fixtures)


def refused(nodesmith, fixtures):
    cases = [("patch: {kind: Node, name: nosuch, metadata: {labels: {team: blue}}}",
              "timeline step 2: patch: Node nosuch: metadata.labels.team: no Node nosuch"),
             ("patch: {kind: Node, name: nosuch, spec: {unschedulable: true}}",
              "timeline step 2: patch: Node nosuch: spec.unschedulable: no Node nosuch"),
             ("patch: {kind: Pod, selector: {matchLabels: {app: none}}, metadata: {labels: {team: blue}}}",
              "timeline step 2: patch: no Pod in namespace default matches the selector")]
    with tempfile.TemporaryDirectory() as tmp:
        for action, want in cases:
            path = os.path.join(tmp, "t.yaml")
            with open(path, "w") as f:
                f.write(f"steps:\n  - advance: 1m\n  - {action}\n")
            proc = subprocess.run([nodesmith, "simulate", "-f", f"{fixtures}/patch-objects-manifests.yaml",
                                   "--timeline", path], capture_output=True, text=True, timeout=300)
            if proc.returncode != 1 or f"{path}:3: {want}" not in proc.stderr:
                sys.exit(f"{action}: exit {proc.returncode}, expected 1 and \"{path}:3: {want}\" in:\n"
                         f"{proc.stderr[-2000:]}")


main()
