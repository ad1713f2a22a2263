#!/usr/bin/python3
"""`nodesmith offerings --provider aws` against a fresh AWS emulator (issue 8's case: offerings once hard-coded a
node class that aws.so rightly refused). With --nodeclass naming an example's EC2NodeClass, the listed types must be
the emulator's own (checked against the catalog file the emulator serves: vCPUs and architecture), each offered in
us-east-1 zones with a positive price, and the node class must come back Ready. Without --nodeclass, the command
must fail with aws.so's reason and the hint to give one.

Usage: offerings_aws.py NODESMITH EXAMPLES_DIR DATA_DIR
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WITH_EMULATOR = os.path.join(HERE, "with_emulator.py")


def offerings(nodesmith, data_dir, *args):
    return subprocess.run(["/usr/bin/python3", WITH_EMULATOR, data_dir, "--", nodesmith, "offerings", "--provider",
                           "aws", "--set", "cluster_name=demo", *args], capture_output=True, text=True, timeout=240)


def main():
    nodesmith, examples, data_dir = sys.argv[1:4]
    proc = offerings(nodesmith, data_dir, "--nodeclass", os.path.join(examples, "nginx.yaml"), "--output", "json")
    if proc.returncode != 0:
        sys.exit(f"offerings --nodeclass exited {proc.returncode}:\n{proc.stderr}")
    doc = json.loads(proc.stdout)
    assert doc["provider"] == "aws", doc["provider"]
    nodeclass = doc["nodeclass"]
    assert (nodeclass["kind"], nodeclass["name"]) == ("EC2NodeClass", "default"), nodeclass
    ready = [c for c in nodeclass["status"]["conditions"] if c["type"] == "Ready"]
    assert ready and ready[0]["status"] == "True", nodeclass["status"]
    with open(os.path.join(data_dir, "aws-instance-types.json")) as f:
        catalog = {t["name"]: t for t in json.load(f)}
    types = doc["instance_types"]
    assert len(types) > 100, len(types)
    for t in types:
        known = catalog.get(t["name"])
        assert known, f"{t['name']} is not in the emulator's catalog"
        assert t["capacity"]["cpu_milli"] == known["vcpu"] * 1000, (t["name"], t["capacity"], known["vcpu"])
        assert t["labels"]["kubernetes.io/arch"] == known["arch"], (t["name"], t["labels"], known["arch"])
        assert t["offerings"], f"{t['name']} has no offerings"
        for o in t["offerings"]:
            assert o["zone"] in ("us-east-1a", "us-east-1b", "us-east-1c"), (t["name"], o)
            assert o["price_per_hour"] > 0, (t["name"], o)
    proc = offerings(nodesmith, data_dir)
    assert proc.returncode != 0, "offerings --provider aws without --nodeclass succeeded"
    for words in ("an empty EC2NodeClass does not suit provider aws; give --nodeclass FILE",
                  "spec.subnetSelectorTerms must be a non-empty array"):
        assert words in proc.stderr, f"{words!r} not in:\n{proc.stderr}"
    print(f"offerings --provider aws --nodeclass: {len(types)} instance types of the emulator's catalog listed")


if __name__ == "__main__":
    main()
