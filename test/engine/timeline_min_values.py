"""Karpenter's MIN_VALUES_POLICY as a timeline setting (engine.minValuesPolicy): a NodePool asking for three distinct
instance types of which the sim catalog has two launches nothing under Strict and one claim under BestEffort, marked
karpenter.sh/nodeclaim-min-values-relaxed "true"; the timeline's setting wins over the command's, and without it the
command's (here the MIN_VALUES_POLICY variable) holds.

Usage: timeline_min_values.py NODESMITH
"""
import json
import os
import subprocess
import sys
import tempfile

MANIFEST = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.xlarge, no-such.type],
           minValues: 3}
---
apiVersion: nodesmith.io/v1
kind: SimNodeClass
metadata: {name: default}
spec: {}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: web, image: nginx, resources: {requests: {cpu: 500m, memory: 512Mi}}}]
"""


def run(nodesmith, tmp, engine, env_policy):
    manifests, timeline = os.path.join(tmp, "m.yaml"), os.path.join(tmp, "t.yaml")
    with open(manifests, "w") as f:
        f.write(MANIFEST)
    with open(timeline, "w") as f:
        f.write((f"engine: {{minValuesPolicy: {engine}}}\n" if engine else "") + "steps:\n  - advance: 1m\n")
    env = {k: v for k, v in os.environ.items() if k not in ("MIN_VALUES_POLICY", "PREFERENCE_POLICY")}
    if env_policy:
        env["MIN_VALUES_POLICY"] = env_policy
    proc = subprocess.run([nodesmith, "simulate", "-f", manifests, "--timeline", timeline, "--output", "json"],
                          capture_output=True, text=True, timeout=120, env=env)
    if proc.returncode != 0:
        sys.exit(f"engine {engine}, MIN_VALUES_POLICY {env_policy}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)["steps"][-1]["state"]


def main():
    nodesmith = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        for engine, env_policy, want in (("Strict", None, 0), ("BestEffort", None, 1), ("Strict", "BestEffort", 0),
                                         ("BestEffort", "Strict", 1), (None, "BestEffort", 1), (None, None, 0)):
            state = run(nodesmith, tmp, engine, env_policy)
            if len(state["nodeclaims"]) != want or state["pods_pending"] != 1 - want:
                sys.exit(f"engine.minValuesPolicy {engine}, MIN_VALUES_POLICY {env_policy}: "
                         f"{len(state['nodeclaims'])} claims, {state['pods_pending']} pending; expected {want} claim(s)")
            relaxed = [c["annotations"].get("karpenter.sh/nodeclaim-min-values-relaxed") for c in state["nodeclaims"]]
            if want and relaxed != ["true"]:
                sys.exit(f"BestEffort claim annotations: {relaxed}")
    print("ok: Strict launches nothing, BestEffort one relaxed claim; the timeline's setting wins over the command's")


main()
