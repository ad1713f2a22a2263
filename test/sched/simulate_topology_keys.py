"""Topology spread on a custom label through `nodesmith simulate` (issue 9 rule 5), as Karpenter's topology groups
decide it: the domains of example.com/rack are the values the sim catalog's types carry (r1, r2), so four pods that
each need a node go two to rack r1 and two to the dearer rack r2 (without the spread all four take the cheaper r1;
before any key but zone and hostname was supported, all four were refused).

Usage: simulate_topology_keys.py NODESMITH FIXTURES_DIR
"""
import json
import subprocess
import sys


def main():
    nodesmith, fixtures = sys.argv[1:3]
    proc = subprocess.run([nodesmith, "simulate", "--provider", "sim", "-f", f"{fixtures}/simulate-topology-keys.yaml",
                           "--catalog", f"{fixtures}/simulate-topology-keys.json", "--output", "json"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr}")
    doc = json.loads(proc.stdout)
    assert doc["pods_unschedulable"] == [] and doc["launch_failures"] == [], doc
    pods = {}
    for c in doc["nodeclaims"]:
        rack = c["labels"]["example.com/rack"]
        assert c["instance_type"] == f"{rack}.large", c
        pods[rack] = pods.get(rack, 0) + c["pod_count"]
    assert pods == {"r1": 2, "r2": 2}, pods
    print("4 pods spread 2/2 over example.com/rack, the catalog types' own label")


if __name__ == "__main__":
    main()
