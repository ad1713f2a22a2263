"""Runs `nodesmith simulate --output json` on one example and asserts the decisions it must make.

Usage: simulate_examples.py NODESMITH EXAMPLES_DIR NAME
"""
import json
import subprocess
import sys


def run(nodesmith, *args):
    proc = subprocess.run([nodesmith, *args], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    return json.loads(proc.stdout)


def labels_by_type(nodesmith):
    doc = run(nodesmith, "offerings", "--output", "json")
    return {t["name"]: t["labels"] for t in doc["instance_types"]}


def claims_of(doc, prefix):
    """Claims holding at least one pod whose name starts with prefix (namespace/name)."""
    return [c for c in doc["nodeclaims"] if any(p.startswith(prefix) for p in c["pods"])]


def common(doc, pods):
    assert doc["pods_total"] == pods, doc["pods_total"]
    assert doc["pods_scheduled"] == pods, doc["pods_unschedulable"]
    assert doc["pods_unschedulable"] == [], doc["pods_unschedulable"]
    assert doc["launch_failures"] == [], doc["launch_failures"]
    assert doc["cost_per_hour"] > 0
    assert abs(doc["cost_per_hour"] - sum(c["price_per_hour"] for c in doc["nodeclaims"])) < 1e-9
    for c in doc["nodeclaims"]:
        assert 0 < c["cpu_requested_milli"] <= c["cpu_allocatable_milli"], c
        assert 0 < c["memory_requested_bytes"] <= c["memory_allocatable_bytes"], c
    assert 0 < doc["cpu_utilization"] <= 1 and 0 < doc["memory_utilization"] <= 1


def check_nginx(doc, nodesmith):
    common(doc, 10)
    assert len(doc["nodeclaims"]) == 1, doc["nodeclaims"]
    c = doc["nodeclaims"][0]
    labels = labels_by_type(nodesmith)[c["instance_type"]]
    assert labels["kubernetes.io/arch"] == "amd64"
    assert labels["karpenter.k8s.aws/instance-category"] in ("c", "m", "r")
    assert c["capacity_type"] == "spot", "spot is allowed and cheaper"
    assert c["nodepool"] == "default"


def check_mixed_gpu(doc, nodesmith):
    common(doc, 11)
    labels = labels_by_type(nodesmith)
    for c in claims_of(doc, "default/train"):
        assert c["nodepool"] == "gpu" and c["capacity_type"] == "on-demand", c
        assert int(labels[c["instance_type"]]["karpenter.k8s.aws/instance-gpu-count"]) >= sum(
            p.startswith("default/train") for p in c["pods"]), c
        assert all(p.startswith("default/train") for p in c["pods"]), "the GPU taint keeps other pods off"
    for prefix in ("default/batch", "default/cache"):
        for c in claims_of(doc, prefix):
            assert c["nodepool"] == "general", c
            assert "karpenter.k8s.aws/instance-gpu-count" not in labels[c["instance_type"]], c
    assert len(claims_of(doc, "default/train")) >= 1


def check_arm64_amd64(doc, nodesmith):
    common(doc, 7)
    labels = labels_by_type(nodesmith)
    for prefix, arch in (("default/api-arm", "arm64"), ("default/legacy-x86", "amd64")):
        claims = claims_of(doc, prefix)
        assert claims, prefix
        for c in claims:
            assert labels[c["instance_type"]]["kubernetes.io/arch"] == arch, (prefix, c["instance_type"])


def check_windows(doc, nodesmith):
    common(doc, 5)
    for prefix, pool in (("default/iis-2019", "windows2019"), ("default/iis-2022", "windows2022")):
        claims = claims_of(doc, prefix)
        assert claims, prefix
        for c in claims:
            assert c["nodepool"] == pool and c["capacity_type"] == "on-demand", c
    # Each node class with the status the sim resolves for it (provider ABI 4): the image its alias names.
    classes = {nc["name"]: nc for nc in doc["nodeclasses"]}
    assert sorted(classes) == ["windows2019", "windows2022"], classes
    for name, nc in classes.items():
        assert nc["kind"] == "EC2NodeClass" and nc["apiVersion"] == "karpenter.k8s.aws/v1", nc
        status = nc["status"]
        # one entry per architecture with Windows-capable types (amd64 only), with Karpenter's requirement
        assert status["amis"] == [{"id": f"{name}@latest", "requirements": [
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}], status
        conditions = {c["type"]: c for c in status["conditions"]}
        assert status["conditions"][0]["type"] == "Ready", status
        assert conditions["Ready"]["status"] == "True" and conditions["Ready"]["reason"] == "Ready", conditions
        assert set(conditions) == {"Ready", "ValidationSucceeded", "AMIsReady", "ZonesReady"}, conditions


def check_zone_spread(doc, nodesmith):
    common(doc, 6)
    assert len(doc["nodeclaims"]) == 6, "hostname anti-affinity: one web pod per node"
    per_zone = {}
    for c in doc["nodeclaims"]:
        assert len(c["pods"]) == 1, c
        per_zone[c["zone"]] = per_zone.get(c["zone"], 0) + 1
    assert sorted(per_zone.values()) == [2, 2, 2], per_zone


def main():
    nodesmith, examples, name = sys.argv[1:4]
    doc = run(nodesmith, "simulate", "-f", f"{examples}/{name}.yaml", "--output", "json")
    globals()["check_" + name.replace("-", "_")](doc, nodesmith)
    print(f"simulate {name}: ok ({len(doc['nodeclaims'])} node claims, {doc['cost_per_hour']:.4f}/h)")


if __name__ == "__main__":
    main()
