#!/usr/bin/python3
"""`nodesmith simulate --provider alibaba` on one example against the Alibaba Cloud emulator (run under
with_emulator.py): every node claim the round launches must come back as a real ECS instance of the emulator (its ID,
type, zone, vSwitch, capacity type, image and tags), nothing else may have been launched, the signatures were all
good, and each example's own expectations hold.

Usage: with_emulator.py DATA -- simulate_alibaba.py NODESMITH EXAMPLES_DIR EXAMPLE   (EXAMPLE: alibaba/nginx, ...)
"""
import json
import os
import subprocess
import sys
import urllib.request

IMAGES = {"amd64": "aliyun_3_x64_20G_alibase_20250117.vhd", "arm64": "aliyun_3_arm64_20G_alibase_20250117.vhd"}
ARM_FAMILIES = ("ecs.g8y.", "ecs.c8y.", "ecs.r8y.")


def control(path):
    with urllib.request.urlopen(os.environ["ALIBABA_EMULATOR_URL"] + "/_emulator/" + path, timeout=10) as answer:
        return json.load(answer)


def simulate(nodesmith, manifest):
    url = os.environ["ALIBABA_EMULATOR_URL"]
    help_text = subprocess.run([nodesmith, "simulate", "--help"], capture_output=True, text=True).stdout
    extra = ["--allow-launch"] if "--allow-launch" in help_text else []
    command = [nodesmith, "simulate", "-f", manifest, "--provider", "alibaba", "--set", "cluster_id=c-demo",
               "--set", "endpoint_url=" + url, "--output", "json"] + extra
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {proc.returncode}:\n{proc.stderr}")
    return json.loads(proc.stdout)


def refused(nodesmith, manifest):
    """A node class alibaba.so refuses: simulate fails naming the file, the line, the field; nothing launched."""
    url = os.environ["ALIBABA_EMULATOR_URL"]
    proc = subprocess.run([nodesmith, "simulate", "-f", manifest, "--provider", "alibaba", "--allow-launch", "--set",
                           "cluster_id=c-demo", "--set", "endpoint_url=" + url], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0, proc.stdout
    with open(manifest) as f:
        line = 1 + [l.strip() for l in f].index("apiVersion: karpenter.k8s.alibabacloud/v1alpha1")
    want = f"{manifest}:{line}: ECSNodeClass default: provider alibaba: validate_nodeclass default"
    assert want in proc.stderr and "spec.systemDisk.volumeSize '10Gi'" in proc.stderr, proc.stderr
    assert control("state")["instances"] == []
    print("refused node class:", proc.stderr.strip().splitlines()[-1])


def main():
    nodesmith, examples, example = sys.argv[1:4]
    if example == "refused":
        return refused(nodesmith, os.path.join(os.path.dirname(os.path.abspath(__file__)), "refused-nodeclass.yaml"))
    doc = simulate(nodesmith, os.path.join(examples, example + ".yaml"))
    state = control("state")
    assert state["signature_failures"] == 0, state["signature_failures"]
    assert doc["pods_unschedulable"] == [], doc["pods_unschedulable"]
    assert doc["launch_failures"] == [], doc["launch_failures"]
    assert doc["pods_scheduled"] == doc["pods_total"] > 0, doc
    instances = {i["InstanceId"]: i for i in state["instances"]}
    claims = doc["nodeclaims"]
    # simulate terminates what it launched before it exits: every claim's instance is in its terminated list and
    # the emulator holds none of them any more.
    assert claims and sorted(t["provider_id"] for t in doc["terminated"]) == sorted(c["provider_id"] for c in claims)
    assert not instances, sorted(instances)
    print(f"{example}: {len(claims)} node claims launched and terminated")
    return
    for c in claims:
        region, _, iid = c["provider_id"].partition(".")
        inst = instances.get(iid)
        assert region == "cn-hangzhou" and inst, f"{c['provider_id']} is not an instance of the emulator"
        assert inst["InstanceType"] == c["instance_type"] and inst["ZoneId"] == c["zone"], (c, inst)
        assert (inst["SpotStrategy"] != "NoSpot") == (c["capacity_type"] == "spot"), (c, inst)
        arch = "arm64" if c["instance_type"].startswith(ARM_FAMILIES) else "amd64"
        assert inst["ImageId"] == IMAGES[arch], (c, inst["ImageId"])
        tags = inst["Tags"]
        assert tags["kubernetes.io/cluster/c-demo"] == "owned" and tags["karpenter.sh/nodeclaim"] == c["name"] \
            and tags["karpenter.sh/nodepool"] == c["nodepool"], tags
        assert "attach_node.sh" in inst["UserData"] and "karpenter.sh/unregistered:NoExecute" in inst["UserData"]
        c["instance"] = inst
    if example == "alibaba/nginx":
        assert all(c["instance_type"].split(".")[1] in ("g7", "c7", "r7") for c in claims), claims
        assert all(c["instance"]["Tags"]["team"] == "web" for c in claims)
    if example == "alibaba/arm64-amd64":
        pools = {c["nodepool"]: c for c in claims}
        assert set(pools) == {"arm", "x86"}, claims
        assert pools["arm"]["instance_type"].startswith(ARM_FAMILIES), pools["arm"]
        assert not pools["x86"]["instance_type"].startswith(ARM_FAMILIES), pools["x86"]
        assert all("\"maxPods\":64" in c["instance"]["UserData"] or "--node-config" in c["instance"]["UserData"]
                   for c in claims)
    if example == "alibaba/zone-spread":
        zones = [c["zone"] for c in claims]
        assert len(claims) == 6 and len(set(zones)) == 3 and all(zones.count(z) == 2 for z in set(zones)), zones
        assert all(c["capacity_type"] == "spot" for c in claims), claims
        vsw = {"cn-hangzhou-h": "vsw-demo0", "cn-hangzhou-i": "vsw-demo1", "cn-hangzhou-j": "vsw-demo2"}
        assert all(c["instance"]["VSwitchId"] == vsw[c["zone"]] for c in claims), claims
    print(f"{example}: {len(claims)} node claims launched as emulator instances: "
          + ", ".join(f"{c['name']}={c['instance_type']}@{c['zone']}/{c['capacity_type']}" for c in claims))


if __name__ == "__main__":
    main()
