#!/usr/bin/python3
"""NodePools with names of 58 and 63 characters, the longest a NodePool can have (its name is the karpenter.sh/nodepool
label value of its NodeClaims, at most 63 characters): `nodesmith simulate` and `nodesmith simulate --timeline`
finish, and every node claim is named as generateName names it: the first 58 characters of "<nodepool>-" and 5
characters of Kubernetes' alphabet, 63 at most. A NodePool of 64 characters is refused when loaded, saying why.

Usage: long_names.py NODESMITH
"""
import json
import re
import subprocess
import sys
import tempfile
import os

MANIFESTS = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: {pool}}}
spec:
  template:
    spec:
      requirements: [{{key: kubernetes.io/arch, operator: In, values: [amd64]}}]
      nodeClassRef: {{group: nodesmith.io, kind: SimNodeClass, name: default}}
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
      containers: [{{name: web, image: nginx, resources: {{requests: {{cpu: "3", memory: 1Gi}}}}}}]
"""
TIMELINE = """steps:
  - name: launch
    advance: 2m
  - name: more
    scale: {kind: Deployment, name: web, replicas: 6}
  - name: launch more
    advance: 2m
"""
SUFFIX = re.compile(r"[bcdfghjklmnpqrstvwxz2456789]{5}")


def check_names(names, pool):
    assert names, "no node claim"
    prefix = (pool + "-")[:58]
    for name in names:
        assert len(name) <= 63 and name.startswith(prefix) and SUFFIX.fullmatch(name[len(prefix):]), name


def main():
    nodesmith = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        for length in (58, 63):
            pool = ("p" * (length - 2)) + "-x"
            manifests = os.path.join(tmp, f"m{length}.yaml")
            timeline = os.path.join(tmp, "t.yaml")
            with open(manifests, "w") as f:
                f.write(MANIFESTS.format(pool=pool))
            with open(timeline, "w") as f:
                f.write(TIMELINE)
            proc = subprocess.run([nodesmith, "simulate", "-f", manifests, "--output", "json"], capture_output=True,
                                  text=True, timeout=60)
            assert proc.returncode == 0, (length, proc.stderr)
            check_names([c["name"] for c in json.loads(proc.stdout)["nodeclaims"]], pool)
            proc = subprocess.run([nodesmith, "simulate", "-f", manifests, "--timeline", timeline, "--output", "json"],
                                  capture_output=True, text=True, timeout=60)
            assert proc.returncode == 0, (length, proc.stderr)
            doc = json.loads(proc.stdout)
            claims = {c["name"] for s in doc["steps"] for c in s["state"]["nodeclaims"]}
            check_names(claims, pool)
            print(f"NodePool of {length} characters: {len(claims)} node claims, e.g. {sorted(claims)[0]}")
        manifests = os.path.join(tmp, "m64.yaml")
        with open(manifests, "w") as f:
            f.write(MANIFESTS.format(pool="p" * 64))
        proc = subprocess.run([nodesmith, "simulate", "-f", manifests], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
        assert f"m64.yaml:3: NodePool {'p' * 64}: metadata.name: name is 64 characters, more than 63: the name is " \
               "the karpenter.sh/nodepool label value" in proc.stderr, proc.stderr
        print("NodePool of 64 characters: refused when loaded")


if __name__ == "__main__":
    main()
