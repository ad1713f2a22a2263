"""`nodesmith simulate` reads MIN_VALUES_POLICY and PREFERENCE_POLICY as Karpenter does: a flag, else the variable,
else Strict and Respect; a bad value stops it with a usage error naming the setting.

Usage: simulate_policies.py NODESMITH
"""
import json
import os
import subprocess
import sys
import tempfile

# Two of the sim catalog's types, where the pool asks for three distinct instance types (Karpenter's "should schedule
# even when minValues requirement is not met").
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


def simulate(nodesmith, path, *args, env=None):
    full = {k: v for k, v in os.environ.items() if k not in ("MIN_VALUES_POLICY", "PREFERENCE_POLICY")}
    full.update(env or {})
    return subprocess.run([nodesmith, "simulate", "-f", path, "--output", "json", *args], capture_output=True,
                          text=True, timeout=120, env=full)


def claims(proc):
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr}")
    return len(json.loads(proc.stdout)["nodeclaims"])


def main():
    nodesmith = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "pods.yaml")
        with open(path, "w") as f:
            f.write(MANIFEST)
        assert claims(simulate(nodesmith, path)) == 0, "Strict by default: two types cannot give minValues 3"
        assert claims(simulate(nodesmith, path, "--min-values-policy", "BestEffort")) == 1
        assert claims(simulate(nodesmith, path, env={"MIN_VALUES_POLICY": "BestEffort"})) == 1
        assert claims(simulate(nodesmith, path, "--min-values-policy", "Strict",
                               env={"MIN_VALUES_POLICY": "BestEffort"})) == 0, "the flag wins over the variable"
        for args, env, setting in ((["--min-values-policy", "Loose"], {}, "MIN_VALUES_POLICY (--min-values-policy)"),
                                   ([], {"PREFERENCE_POLICY": "ignore"}, "PREFERENCE_POLICY (--preference-policy)")):
            proc = simulate(nodesmith, path, *args, env=env)
            assert proc.returncode == 2, (args, env, proc.returncode, proc.stderr)
            assert setting in proc.stderr and "is not known" in proc.stderr, proc.stderr


if __name__ == "__main__":
    main()
