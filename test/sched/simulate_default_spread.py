"""`nodesmith simulate` reads Karpenter's SCHEDULER_CONFIG (--scheduler-config) as Karpenter does: the flag, else the
variable, else no default spread; the document's podTopologySpread.defaultConstraints spread every pending pod that
has none of its own, selected as kube-scheduler selects it (a Deployment's pods through their ReplicaSet, bare pods
through a Service, pods nothing selects not at all); a bad document is a usage error naming where it came from, its
line and its field.

Usage: simulate_default_spread.py NODESMITH
"""
import json
import os
import subprocess
import sys
import tempfile

SMALL = "resources: {requests: {cpu: 100m, memory: 128Mi}}"
MANIFEST = f"""\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: default}}
spec:
  template:
    spec:
      nodeClassRef: {{group: nodesmith.io, kind: SimNodeClass, name: default}}
      requirements:
        - {{key: node.kubernetes.io/instance-type, operator: In, values: [m5.xlarge]}}
---
apiVersion: nodesmith.io/v1
kind: SimNodeClass
metadata: {{name: default}}
spec: {{}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: web, image: nginx, {SMALL}}}]
---
apiVersion: v1
kind: Service
metadata: {{name: api}}
spec:
  type: ClusterIP
  selector: {{app: api}}
  ports: [{{port: 80}}]
""" + "".join(f"""\
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {{app: {app}}}}}
spec:
  containers: [{{name: c, image: nginx, {SMALL}}}]
""" for name, app in (("api-1", "api"), ("api-2", "api"), ("loner-1", "loner"), ("loner-2", "loner")))

HOSTNAME = ("podTopologySpread: {defaultConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, "
            "whenUnsatisfiable: DoNotSchedule}]}")
# JSON is a YAML document too, as sigs.k8s.io/yaml reads it; maxSkew 3 lets three pods share a node.
LOOSE = json.dumps({"podTopologySpread": {"defaultConstraints": [
    {"maxSkew": 3, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"}]}})
BAD = """\
podTopologySpread:
  defaultConstraints:
    - maxSkew: 1
      topologyKey: topology.kubernetes.io/zone
      whenUnsatisfiable: DoNotSchedule
      labelSelector: {matchLabels: {app: web}}
"""


def simulate(nodesmith, path, *args, env=None):
    full = {k: v for k, v in os.environ.items() if k != "SCHEDULER_CONFIG"}
    full.update(env or {})
    return subprocess.run([nodesmith, "simulate", "-f", path, "--output", "json", *args], capture_output=True,
                          text=True, timeout=120, env=full)


def nodes_of(proc):
    """How many claims hold pods of each group (web, api, loner)."""
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr}")
    doc = json.loads(proc.stdout)
    assert doc["pods_unschedulable"] == [], doc["pods_unschedulable"]
    spread = {}
    for claim in doc["nodeclaims"]:
        for group in {p.split("/")[1].split("-")[0] for p in claim["pods"]}:
            spread[group] = spread.get(group, 0) + 1
    return spread


def main():
    nodesmith = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "pods.yaml")
        with open(path, "w") as f:
            f.write(MANIFEST)
        assert nodes_of(simulate(nodesmith, path)) == {"web": 1, "api": 1, "loner": 1}, "no default: one node"
        # The Deployment's and the Service's pods one per node (the loners, which nothing selects, get no default
        # and go wherever the round puts them: onto the claims with the fewest pods, as Karpenter offers them).
        for proc in (simulate(nodesmith, path, env={"SCHEDULER_CONFIG": HOSTNAME}),
                     simulate(nodesmith, path, "--scheduler-config", HOSTNAME)):
            got = nodes_of(proc)
            assert (got["web"], got["api"]) == (3, 2), got
        assert nodes_of(simulate(nodesmith, path, "--scheduler-config", LOOSE, env={"SCHEDULER_CONFIG": HOSTNAME})) \
            == {"web": 1, "api": 1, "loner": 1}, "the flag wins over the variable"
        assert nodes_of(simulate(nodesmith, path, env={"SCHEDULER_CONFIG": ""})) == {"web": 1, "api": 1, "loner": 1}
        for args, env, source in (([], {"SCHEDULER_CONFIG": BAD}, "SCHEDULER_CONFIG:6:"),
                                  (["--scheduler-config", BAD], {}, "--scheduler-config:6:")):
            proc = simulate(nodesmith, path, *args, env=env)
            assert proc.returncode == 2, (args, proc.returncode, proc.stderr)
            assert "setting SCHEDULER_CONFIG (--scheduler-config)" in proc.stderr, proc.stderr
            assert source in proc.stderr and "podTopologySpread.defaultConstraints[0].labelSelector: must not be set" \
                in proc.stderr, proc.stderr
        proc = simulate(nodesmith, path, "--scheduler-config", "podTopologySpread: {defaultConstraint: []}")
        assert proc.returncode == 2 and 'unknown field "podTopologySpread.defaultConstraint"' in proc.stderr, proc.stderr
    print("default spread: the Deployment's 3 pods on 3 nodes and the Service's 2 on 2; flag over variable; "
          "bad documents refused with source, line and field")


if __name__ == "__main__":
    main()
