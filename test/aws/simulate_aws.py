#!/usr/bin/python3
"""`nodesmith simulate --provider aws --allow-launch` on one example against a fresh AWS emulator: every node claim the
round launches must come back with a real instance from the emulator (its ID, type, zone, capacity type and tags),
nothing else may have been launched, every one of them is terminated before simulate exits (and listed as such), and
each example's own expectations hold (the AMI of each family and variant, spreads).

Usage: simulate_aws.py NODESMITH EXAMPLES_DIR DATA_DIR EXAMPLE   (EXAMPLE: nginx, aws/zone-spread, ...)
"""
import json
import os
import re
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
EMULATOR = os.path.join(HERE, "..", "emulators", "aws", "aws_emulator.py")
AL2023 = {"amd64": "ami-0e000000000000a64", "arm64": "ami-0e000000000000a32"}
AL2023_NVIDIA = {"amd64": "ami-0e0000000000nv64", "arm64": "ami-0e0000000000nv32"}
WINDOWS = {"windows2019": "ami-0e0000000000w219", "windows2022": "ami-0e0000000000w222"}
# The provider may call nothing beyond the policy docs/providers/aws.md gives (Karpenter's controller policy).
sys.path.insert(0, os.path.join(HERE, "..", "emulators", "aws"))
from emu_policy import documented_actions  # noqa: E402

POLICY = documented_actions()
ARM64 = re.compile(r"^[a-z]+\d+g[a-z]*\.")  # Graviton families: m6g, c7gn, g5g, ...


def control(url, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    with urllib.request.urlopen(urllib.request.Request(url + path, data=data), timeout=10) as answer:
        return json.load(answer)


def simulate(nodesmith, manifest, url):
    env = dict(os.environ, AWS_ENDPOINT_URL=url, AWS_ACCESS_KEY_ID="AKIDEMULATOR",
               AWS_SECRET_ACCESS_KEY="emulator/secret/key+EXAMPLE", AWS_REGION="us-east-1",
               AWS_EC2_METADATA_DISABLED="true")
    for name in ("AWS_SESSION_TOKEN", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_PROFILE"):
        env.pop(name, None)
    proc = subprocess.run([nodesmith, "simulate", "-f", manifest, "--provider", "aws", "--set", "cluster_name=demo",
                           "--allow-launch", "--output", "json"], capture_output=True, text=True, timeout=300, env=env)
    if proc.returncode != 0:
        sys.exit(f"nodesmith simulate -f {manifest} --provider aws exited {proc.returncode}:\n{proc.stderr}")
    return json.loads(proc.stdout)


def check_launched(doc, state):
    """Every claim is a real emulator instance, and the emulator launched nothing else."""
    assert doc["pods_unschedulable"] == [], doc["pods_unschedulable"]
    assert doc["launch_failures"] == [], doc["launch_failures"]
    assert doc["pods_scheduled"] == doc["pods_total"] > 0
    instances = {i["id"]: i for i in state["instances"]}
    assert len(instances) == len(doc["nodeclaims"]), (len(instances), len(doc["nodeclaims"]))
    for c in doc["nodeclaims"]:
        m = re.fullmatch(r"aws:///([a-z0-9-]+)/(i-[0-9a-z]+)", c["provider_id"])
        assert m, c["provider_id"]
        inst = instances.get(m.group(2))
        assert inst, f"{c['provider_id']} is not an instance of the emulator"
        assert m.group(1) == c["zone"] == inst["zone"], (c, inst)
        # an instance in a capacity reservation is an on-demand instance to EC2, and reserved capacity to Karpenter
        capacity_type = "reserved" if inst.get("reservation") else inst["capacity_type"]
        assert inst["type"] == c["instance_type"] and capacity_type == c["capacity_type"], (c, inst)
        assert inst["tags"]["karpenter.sh/nodeclaim"] == c["name"], inst["tags"]
        assert inst["tags"]["karpenter.sh/nodepool"] == c["nodepool"], inst["tags"]
        assert inst["tags"]["kubernetes.io/cluster/demo"] == "owned", inst["tags"]
        assert inst["state"] in ("shutting-down", "terminated"), f"simulate left {inst} running"
        c["instance"] = inst
    terminated = {t["provider_id"]: t["nodeclaim"] for t in doc["terminated"]}
    assert terminated == {c["provider_id"]: c["name"] for c in doc["nodeclaims"]}, (terminated, doc["nodeclaims"])
    assert doc["termination_failures"] == [], doc["termination_failures"]
    return instances


def arch(instance_type):
    return "arm64" if ARM64.match(instance_type) or instance_type.startswith(("a1.", "x2g")) else "amd64"


def main():
    nodesmith, examples, data_dir, example = sys.argv[1:5]
    emulator = subprocess.Popen(["/usr/bin/python3", EMULATOR, "--data-dir", data_dir], stdout=subprocess.PIPE,
                                text=True)
    try:
        url = "http://127.0.0.1:" + emulator.stdout.readline().split()[1]
        if example == "aws/reserved":
            control(url, "/_emulator/capacity_reservations", {"id": "cr-0e00000000000b01", "instance_type": "m5.xlarge",
                                                              "zone": "us-east-1b", "count": 2, "tags": {"team": "batch"}})
        doc = simulate(nodesmith, os.path.join(examples, example + ".yaml"), url)
        state = control(url, "/_emulator/state")
        check_launched(doc, state)
        called = set(state["requests"]) - {"signature_failures"}
        assert called <= POLICY, f"actions outside the IAM policy: {called - POLICY}"
        assert "signature_failures" not in state["requests"], state["requests"]
        templates = {t["id"]: t for t in control(url, "/_emulator/launch_templates")}
        claims = doc["nodeclaims"]
        for c in claims:
            t = templates[c["instance"]["template"]]
            assert t["data"]["ImageId"] == c["instance"]["image"]
            assert "karpenter.sh/nodepool=" + c["nodepool"] in t["data"]["UserData"], t["data"]["UserData"]
        if example in ("nginx", "arm64-amd64", "aws/zone-spread"):
            for c in claims:
                assert c["instance"]["image"] == AL2023[arch(c["instance_type"])], c
        if example == "nginx":
            assert len(claims) == 1 and claims[0]["capacity_type"] == "spot", claims
        if example == "arm64-amd64":
            assert {arch(c["instance_type"]) for c in claims} == {"amd64", "arm64"}, claims
        if example == "windows":
            for c in claims:
                assert c["instance"]["image"] == WINDOWS[c["nodepool"]], c
                assert "<powershell>" in templates[c["instance"]["template"]]["data"]["UserData"]
        if example == "aws/mixed-gpu":
            gpu = [c for c in claims if c["nodepool"] == "gpu"]
            assert gpu, claims
            for c in gpu:
                assert c["instance"]["image"] == AL2023_NVIDIA[arch(c["instance_type"])], c
        if example == "aws/zone-spread":
            zones = [c["zone"] for c in claims]
            assert len(claims) == 6 and all(zones.count(z) == 2 for z in set(zones)) and len(set(zones)) == 3, zones
        if example == "aws/reserved":
            # the reservation's two instances are used first; the third claim is on-demand
            reserved = [c for c in claims if c["capacity_type"] == "reserved"]
            assert len(claims) == 3 and len(reserved) == 2, claims
            for c in reserved:
                assert (c["instance_type"], c["zone"]) == ("m5.xlarge", "us-east-1b"), c
                assert c["instance"]["reservation"] == "cr-0e00000000000b01", c
                user_data = templates[c["instance"]["template"]]["data"]["UserData"]
                assert "karpenter.k8s.aws/capacity-reservation-id=cr-0e00000000000b01" in user_data, user_data
            assert [c["capacity_type"] for c in claims if c not in reserved] == ["on-demand"], claims
        print(f"{example}: {len(claims)} node claims launched as emulator instances: "
              + ", ".join(f"{c['name']}={c['instance_type']}@{c['zone']}" for c in claims))
    finally:
        emulator.terminate()
        emulator.wait(10)
        emulator.stdout.close()


if __name__ == "__main__":
    main()
