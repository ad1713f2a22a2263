#!/usr/bin/python3
"""`nodesmith simulate --provider azure` on one example against the Azure emulator (run under with_emulator.py):
every node claim the round launches must have been a real VM of the emulator (its name from the claim, its size,
zone, priority and tags; Windows ones with their bootstrap extension), exactly one per claim, nothing else may have
been launched, each example's own expectations hold, and once simulate has terminated what it launched the
emulator's listing holds neither VM nor NIC.

With "faults" after the example, one ARM request in five fails first (429, 5xx, lost answers, allocation failures,
the token endpoint included; at least one allocation failure and one lost VM creation answer whatever the draws, and
for Windows a lost and a throttled answer to the bootstrap extension's PUT):
every pod must still be placed, with exactly one VM per node claim, none left.

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
    command = [nodesmith, "simulate", "-f", manifest, "--provider", "azure", "--allow-launch", "--set",
               "cluster_name=demo", "--set", "arm_endpoint=" + url, "--set", "prices_endpoint=" + url, "--output",
               "json"] + settings
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {proc.returncode}:\n{proc.stderr}")
    return json.loads(proc.stdout)


def vms_of_claims(claims, history):
    """Each claim's VM as ARM answered when its creation succeeded (the emulator's record: simulate has deleted them
    all by now). Exactly one per claim and none for anything else: a VM that failed (allocation) is no VM, but a
    second successful one for a claim, or one for no claim, is a leak."""
    names = {"aks-" + c["name"]: c for c in claims}
    created = [e for e in history if e["event"] == "created"]
    strangers = sorted({e["name"] for e in history if e["event"] in ("created", "failed")} - set(names))
    assert not strangers, f"VMs for no node claim: {strangers}"
    for name in names:
        count = sum(e["name"] == name for e in created)
        assert count == 1, f"{name}: {count} VMs created for node claim {names[name]['name']}"
    deleted = {e["name"] for e in history if e["event"] == "deleted"}
    assert set(names) <= deleted, f"never deleted: {sorted(set(names) - deleted)}"
    return {names[e["name"]]["name"]: e["vm"] for e in created}


def check_claim(c, vm):
    assert c["provider_id"] == "azure://" + vm["id"], (c["provider_id"], vm["id"])
    assert vm["properties"]["hardwareProfile"]["vmSize"] == c["instance_type"], (vm, c)
    zone = vm.get("zones", ["0"])[0]
    assert c["zone"] == ("0" if zone == "0" else f"southcentralus-{zone}"), (c["zone"], zone)
    spot = vm["properties"]["priority"] == "Spot"
    assert spot == (c["capacity_type"] == "spot"), (vm["properties"]["priority"], c["capacity_type"])
    assert vm["tags"]["karpenter.sh_nodeclaim"] == c["name"] and vm["tags"]["karpenter.sh_nodepool"] == \
        c["nodepool"] and vm["tags"]["karpenter.azure.com_cluster"] == "demo", vm["tags"]


def check_windows_bootstrap(claims, vms, history):
    """Windows VMs got the Custom Script Extension that runs their bootstrap (AKS's shape); Linux ones none."""
    puts = {}
    for e in history:
        if e["event"] == "extension":
            puts.setdefault(e["vm"], []).append(e)
    for c in claims:
        vm = vms[c["name"]]
        windows = vm["properties"]["storageProfile"]["osDisk"]["osType"] == "Windows"
        exts = puts.get(vm["name"], [])
        if not windows:
            assert not exts, (vm["name"], exts)
            continue
        assert exts, f"{vm['name']}: no bootstrap extension"
        for e in exts:
            props = e["body"]["properties"]
            assert e["name"] == "windows-cse-agent-karpenter", e["name"]
            assert (props["publisher"], props["type"], props["typeHandlerVersion"]) == \
                ("Microsoft.Compute", "CustomScriptExtension", "1.10"), props
            assert "CustomData.bin" in props["protectedSettings"]["commandToExecute"], props


def check_example(example, claims, vms):
    if example == "azure/nginx":
        assert all(c["instance_type"].split("_")[1].startswith("D") for c in claims), claims
        assert all(vms[c["name"]]["tags"]["team"] == "web" for c in claims)
    if example == "azure/zone-spread":
        zones = [c["zone"] for c in claims]
        assert len(claims) == 6 and len(set(zones)) == 3 and all(zones.count(z) == 2 for z in set(zones)), zones
        assert all(c["capacity_type"] == "spot" for c in claims), claims
    if example.startswith("azure/windows"):
        sku = {"azure/windows": "2022-datacenter-core-smalldisk-g2",
               "azure/windows2019-v1alpha2": "2019-datacenter-core-smalldisk-g2"}[example]
        for c in claims:
            vm = vms[c["name"]]
            image = vm["properties"]["storageProfile"]["imageReference"]
            assert image["sku"] == sku, image
            assert vm["tags"]["compute.aks.billing"] == "windows"
            assert len(vm["properties"]["osProfile"]["computerName"]) <= 15, vm["properties"]["osProfile"]
    if example == "azure/v1alpha2-gpu":
        for c in claims:
            image = vms[c["name"]]["properties"]["storageProfile"]["imageReference"]["communityGalleryImageId"]
            assert image.endswith("/versions/202510.01.0"), image
            assert c["instance_type"].startswith("Standard_N"), c


def main():
    nodesmith, examples, example = sys.argv[1:4]
    faults = sys.argv[4:5] == ["faults"]
    settings = []
    if faults:
        control("faults", {"kind": "random", "rate": 0.2, "kinds": ["throttle", "error5xx", "lost", "allocation"],
                           "retry_after": 0, "seed": 11})
        # whatever the draws give, one VM creation certainly fails for capacity and one answer to one is lost
        control("faults", {"kind": "allocation", "count": 1, "ops": ["vm.put"]})
        control("faults", {"kind": "lost", "count": 1, "ops": ["vm.put"]})
        if example.startswith("azure/windows"):
            # and the bootstrap extension's PUT: its answer lost once, then throttled once
            control("faults", {"kind": "lost", "count": 1, "ops": ["vmext.put"]})
            control("faults", {"kind": "throttle", "count": 1, "ops": ["vmext.put"], "retry_after": 0})
        settings = ["--set", "max_attempts=6", "--set", "request_timeout=3s"]
    doc = simulate(nodesmith, os.path.join(examples, example + ".yaml"), settings)
    state = control("state")
    if faults:
        injected = sum(state["faults_injected"].values())
        requests = sum(state["requests"].values())
        assert injected * 10 >= requests, f"{injected} faults in {requests} requests"
        assert state["faults_injected"].get("allocation") and state["faults_injected"].get("lost"), \
            state["faults_injected"]
        windows_claims = sum(vm["properties"]["storageProfile"]["osDisk"]["osType"] == "Windows"
                             for vm in (e["vm"] for e in state["history"] if e["event"] == "created"))
        if example.startswith("azure/windows"):
            # both certain faults met an extension PUT, which was sent again each time
            assert state["requests"].get("vmext.put", 0) >= windows_claims + 2 > 2, state["requests"]
            print(f"{state['requests']['vmext.put']} extension PUTs for {windows_claims} Windows VMs")
        print(f"{injected} faults injected in {requests} requests: {state['faults_injected']}")
    assert doc["pods_unschedulable"] == [], doc["pods_unschedulable"]
    assert doc["launch_failures"] == [], doc["launch_failures"]
    assert doc["pods_scheduled"] == doc["pods_total"] > 0, doc
    claims = doc["nodeclaims"]
    # simulate terminates what it launched before it exits: every claim's VM is in its terminated list, and the
    # emulator's own listing holds neither VM nor NIC any more
    assert claims and sorted(t["provider_id"] for t in doc["terminated"]) == sorted(c["provider_id"] for c in claims)
    assert not state["vms"], sorted(vm["name"] for vm in state["vms"])
    assert not state["nics"], sorted(nic["name"] for nic in state["nics"])
    vms = vms_of_claims(claims, state["history"])
    for c in claims:
        check_claim(c, vms[c["name"]])
    check_windows_bootstrap(claims, vms, state["history"])
    check_example(example, claims, vms)
    print(f"{example}: {len(claims)} node claims, one VM each, all terminated, no VM or NIC left: "
          + ", ".join(f"{c['name']}={c['instance_type']}@{c['zone']}/{c['capacity_type']}" for c in claims))


if __name__ == "__main__":
    main()
