#!/usr/bin/python3
"""`nodesmith simulate --provider alibaba` on one example against the Alibaba Cloud emulator (run under
with_emulator.py): every node claim the round launches must come back as a real ECS instance of the emulator (its ID,
type, zone, vSwitch, capacity type, image and tags), nothing else may have been launched, the signatures were all
good, and each example's own expectations hold. The emulator's record of every instance it launched (deleted ones
included) must hold exactly one per node claim, each deleted once simulate terminated what it launched.

With "faults" after the example, one request in five first meets throttling, a 5xx, a lost answer (the action took
effect) or, for launches, no stock in the pool ECS would pick: every pod must still be placed, one instance per node
claim, none left.

Usage: with_emulator.py DATA -- simulate_alibaba.py NODESMITH EXAMPLES_DIR EXAMPLE [faults]
       (EXAMPLE: alibaba/nginx, alibaba/arm64-amd64, alibaba/zone-spread, alibaba/zone-id, refused)
"""
import json
import os
import subprocess
import sys
import urllib.request

IMAGES = {"amd64": "aliyun_3_x64_20G_alibase_20250117.vhd", "arm64": "aliyun_3_arm64_20G_alibase_20250117.vhd"}
ARM_FAMILIES = ("ecs.g8y.", "ecs.c8y.", "ecs.r8y.")


def control(path, body=None):
    request = urllib.request.Request(os.environ["ALIBABA_EMULATOR_URL"] + "/_emulator/" + path,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


def simulate(nodesmith, manifest, settings):
    url = os.environ["ALIBABA_EMULATOR_URL"]
    command = [nodesmith, "simulate", "-f", manifest, "--provider", "alibaba", "--allow-launch", "--set",
               "cluster_id=c-demo", "--set", "endpoint_url=" + url, "--output", "json"] + settings
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
    assert control("state")["history"] == []
    print("refused node class:", proc.stderr.strip().splitlines()[-1])


def main():
    nodesmith, examples, example = sys.argv[1:4]
    faults = sys.argv[4:5] == ["faults"]
    if example == "refused":
        return refused(nodesmith, os.path.join(os.path.dirname(os.path.abspath(__file__)), "refused-nodeclass.yaml"))
    settings = []
    if faults:
        # the first launch certainly loses its answer and the next certainly meets no stock, whatever the draw
        control("faults", {"kind": "timeout", "count": 1, "delay_ms": 2500, "actions": ["CreateAutoProvisioningGroup"]})
        control("faults", {"kind": "transient_nostock", "count": 1, "actions": ["CreateAutoProvisioningGroup"]})
        control("faults", {"kind": "random", "rate": 0.2, "kinds": ["throttle", "error5xx", "timeout", "nostock"],
                                "delay_ms": 2500, "seed": 13})
        settings = ["--set", "max_attempts=6", "--set", "request_timeout=2s"]
    doc = simulate(nodesmith, os.path.join(examples, example + ".yaml"), settings)
    state = control("state")
    assert state["signature_failures"] == 0, state["signature_failures"]
    if faults:
        injected = sum(state["faults_injected"].values())
        requests = sum(state["counts"].values())
        assert (injected - 2) * 10 >= requests, f"{injected} faults in {requests} requests is not about 20%"
        assert all(state["faults_injected"].get(k) for k in ("throttle", "error5xx", "timeout", "nostock")), state
        print(f"{injected} faults injected in {requests} requests: {state['faults_injected']}")
    assert doc["pods_unschedulable"] == [], doc["pods_unschedulable"]
    assert doc["launch_failures"] == [], doc["launch_failures"]
    assert doc["pods_scheduled"] == doc["pods_total"] > 0, doc
    claims = doc["nodeclaims"]
    assert claims, doc
    # The emulator's own record of every instance ECS launched, deleted ones included: exactly one per node claim
    # (one per client token, lost answers and retries included), nothing launched for anything else, and none left
    # running once simulate terminated what it launched.
    history = state["history"]
    by_claim = {}
    for inst in history:
        by_claim.setdefault(inst["Tags"].get("karpenter.sh/nodeclaim"), []).append(inst)
    names = sorted(c["name"] for c in claims)
    assert sorted(by_claim) == names, f"instances launched for {sorted(by_claim, key=str)}, node claims {names}"
    for name, insts in by_claim.items():
        assert len(insts) == 1, f"{name}: {len(insts)} instances: {[i['InstanceId'] for i in insts]}"
    tokens = [i["ClientToken"] for i in history]
    assert all(tokens) and len(set(tokens)) == len(tokens), tokens
    assert state["instances"] == [], [i["InstanceId"] for i in state["instances"]]
    assert all(i["Status"] == "Deleted" for i in history), [(i["InstanceId"], i["Status"]) for i in history]
    assert sorted(t["provider_id"] for t in doc["terminated"]) == sorted(c["provider_id"] for c in claims), doc
    assert doc.get("termination_failures", []) == [], doc["termination_failures"]
    for c in claims:
        inst = by_claim[c["name"]][0]
        region, _, iid = c["provider_id"].partition(".")
        assert region == "cn-hangzhou" and inst["InstanceId"] == iid, (c["provider_id"], inst["InstanceId"])
        assert inst["InstanceType"] == c["instance_type"] and inst["ZoneId"] == c["zone"], (c, inst)
        assert (inst["SpotStrategy"] != "NoSpot") == (c["capacity_type"] == "spot"), (c, inst)
        arch = "arm64" if c["instance_type"].startswith(ARM_FAMILIES) else "amd64"
        assert inst["ImageId"] == IMAGES[arch], (c, inst["ImageId"])
        tags = inst["Tags"]
        assert tags["kubernetes.io/cluster/c-demo"] == "owned" and tags["karpenter.sh/nodepool"] == c["nodepool"], tags
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
        assert all("--node-config" in c["instance"]["UserData"] for c in claims)
    if example == "alibaba/zone-spread":
        zones = [c["zone"] for c in claims]
        assert len(claims) == 6 and len(set(zones)) == 3 and all(zones.count(z) == 2 for z in set(zones)), zones
        assert all(c["capacity_type"] == "spot" for c in claims), claims
        vsw = {"cn-hangzhou-h": "vsw-demo0", "cn-hangzhou-i": "vsw-demo1", "cn-hangzhou-j": "vsw-demo2"}
        assert all(c["instance"]["VSwitchId"] == vsw[c["zone"]] for c in claims), claims
    if example == "alibaba/zone-id":
        # zone IDs in the NodePool's and the pods' requirements select zones; the label is on each node claim
        assert all(c["zone"] == "cn-hangzhou-j" for c in claims), claims
        assert all(c["labels"]["topology.k8s.alibabacloud/zone-id"] == c["zone"] for c in claims), claims
        launches = [l for l in control("launches")["launches"] if l["launched"]]
        assert launches and all(ch.endswith("@cn-hangzhou-j") for l in launches for ch in l["choices"]), launches
    print(f"{example}: {len(claims)} node claims, one emulator instance each, all deleted: "
          + ", ".join(f"{c['name']}={c['instance_type']}@{c['zone']}/{c['capacity_type']}" for c in claims))


if __name__ == "__main__":
    main()
