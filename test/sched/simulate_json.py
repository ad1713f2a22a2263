"""`nodesmith simulate --output json` shows each new claim as Karpenter writes the NodeClaim (labels, annotations,
taints, startup taints, requirements) and, for each pod placed on an existing node, that node.

The expected values come from the manifest (test/sched/fixtures/simulate-json/cluster.yaml), read here with PyYAML,
and from Karpenter's NodeClaim template (pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go): the pool's
template labels and annotations, the nodepool label, the nodepool-hash annotations, the pool's taints and startup
taints, and its requirements joined with the instance types the claim may launch with.

Usage: simulate_json.py NODESMITH FIXTURE_DIR
"""
import json
import subprocess
import sys

import yaml


def run(nodesmith, fixture):
    proc = subprocess.run([nodesmith, "simulate", "-f", fixture, "--provider", "sim", "--output", "json"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr}")
    return json.loads(proc.stdout)


def requirement(claim, key):
    found = [r for r in claim["requirements"] if r["key"] == key]
    assert len(found) == 1, (key, claim["requirements"])
    return found[0]


def check_claim(claim, pool):
    tmpl = pool["spec"]["template"]
    for key, value in tmpl["metadata"]["labels"].items():
        assert claim["labels"][key] == value, (key, claim["labels"])
    assert claim["labels"]["karpenter.sh/nodepool"] == pool["metadata"]["name"]
    assert claim["labels"]["team"] == "blue", "a single-valued requirement labels the claim"
    for key, value in tmpl["metadata"]["annotations"].items():
        assert claim["annotations"][key] == value, (key, claim["annotations"])
    assert claim["annotations"]["karpenter.sh/nodepool-hash-version"], claim["annotations"]
    assert claim["annotations"]["karpenter.sh/nodepool-hash"], claim["annotations"]
    assert claim["taints"] == tmpl["spec"]["taints"], claim["taints"]
    assert claim["startup_taints"] == tmpl["spec"]["startupTaints"], claim["startup_taints"]
    for want in tmpl["spec"]["requirements"]:
        got = requirement(claim, want["key"])
        assert got["operator"] == want["operator"], (want, got)
        assert set(got["values"]) <= set(want["values"]), (want, got)
        assert got.get("minValues") == want.get("minValues"), (want, got)
    types = requirement(claim, "node.kubernetes.io/instance-type")
    assert types["operator"] == "In" and set(types["values"]) == set(claim["instance_type_options"]), types
    assert claim["instance_type"] in types["values"]


def main():
    nodesmith, fixture = sys.argv[1:3]
    with open(f"{fixture}/cluster.yaml") as f:
        objects = list(yaml.safe_load_all(f))
    pool = next(o for o in objects if o["kind"] == "NodePool")
    doc = run(nodesmith, fixture)

    assert doc["pods_total"] == 4 and doc["pods_scheduled"] == 4, doc["pods_unschedulable"]
    placed = {p["pod"]: p["node"] for p in doc["existing_node_placements"]}
    assert len(placed) == doc["pods_on_existing_nodes"] == 2, doc["existing_node_placements"]
    assert all(pod.startswith("default/web-") and node == "static-1" for pod, node in placed.items()), placed

    assert doc["nodeclaims"], doc
    on_claims = [p for c in doc["nodeclaims"] for p in c["pods"]]
    assert sorted(on_claims) == sorted(p for p in on_claims if p.startswith("default/crunch-")), on_claims
    assert len(on_claims) == 2 and not set(on_claims) & set(placed), on_claims
    for claim in doc["nodeclaims"]:
        check_claim(claim, pool)
    print(f"{len(doc['nodeclaims'])} claim(s) as Karpenter writes them; {len(placed)} pods on static-1")


if __name__ == "__main__":
    main()
