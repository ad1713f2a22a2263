"""Commitments through `nodesmith simulate` (docs/cost.md): the running Node on ri.large takes one of the three
reserved instances, so two of the four new claims get ri.large at the effective $0.04/h; the other two find the
commitment used up and pay ri.large's own $0.10/h, still below od.large's $0.12/h, and spill to on-demand:
0.04 + 0.04 + 0.10 + 0.10 = $0.28/h (without commitments: 4 x 0.10 = $0.40/h). Text and JSON outputs both show the
utilisation (3 of 3, 3 nodes) and the spill (2 nodes, $0.20/h); a bad settings file names commitment, field and why.

Usage: simulate_commitments.py NODESMITH FIXTURES_DIR
"""
import json
import subprocess
import sys


def simulate(nodesmith, fixtures, *extra):
    return subprocess.run([nodesmith, "simulate", "--provider", "sim", "-f", f"{fixtures}/manifests.yaml",
                           "--catalog", f"{fixtures}/catalog.json", *extra],
                          capture_output=True, text=True, timeout=120)


def main():
    nodesmith, fixtures = sys.argv[1:3]
    proc = simulate(nodesmith, fixtures, "--commitments", f"{fixtures}/commitments.yaml", "--output", "json")
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr}")
    doc = json.loads(proc.stdout)
    assert doc["pods_unschedulable"] == [] and doc["launch_failures"] == [], doc
    prices = sorted((c["instance_type"], c["price_per_hour"]) for c in doc["nodeclaims"])
    assert prices == [("ri.large", 0.04)] * 2 + [("ri.large", 0.1)] * 2, prices
    assert abs(doc["cost_per_hour"] - 0.28) < 1e-9, doc["cost_per_hour"]
    [c] = doc["commitments"]
    assert (c["name"], c["kind"], c["amount"], c["used"], c["nodes"]) == ("ri-3", "instances", 3, 3, 3), c
    assert c["spilled_nodes"] == 2 and abs(c["spilled_per_hour"] - 0.2) < 1e-9, c

    proc = simulate(nodesmith, fixtures)
    assert proc.returncode == 0, proc.stderr
    assert "0.4000 per hour" in proc.stdout and "commitment" not in proc.stdout, proc.stdout

    proc = simulate(nodesmith, fixtures, "--commitments", f"{fixtures}/commitments.yaml")
    assert proc.returncode == 0, proc.stderr
    want = "commitment ri-3 (instances): 3 of 3 used (100%), 3 nodes; spilled to on-demand: 2 nodes, $0.2000/h"
    assert want in proc.stdout, proc.stdout

    proc = simulate(nodesmith, fixtures, "--commitments", f"{fixtures}/bad.yaml")
    want = "bad.yaml:5: commitment sp-1: effectivePrice: applies to kind instances only"
    assert proc.returncode == 2 and want in proc.stderr, (proc.returncode, proc.stderr)
    print("2 of 4 claims on the reservations left by the running node at $0.04/h, 2 spilled at $0.10/h: $0.28/h")


if __name__ == "__main__":
    main()
