#!/usr/bin/python3
"""`nodesmith simulate --provider azure` leaves neither VM nor NIC behind when a round does not end well
(docs/simulate.md, "Real providers"), against the Azure emulator (run under with_emulator.py), one case per run:

  refuse        without --allow-launch simulate refuses (exit 2) and ARM sees no NIC or VM PUT;
  launch-fails  ARM refuses every VM (400 InvalidParameter) after the launch has made its NIC: exit 1, the failure in
                launch_failures, and the NIC is gone;
  sigterm       SIGTERM arrives while the six launches of azure/zone-spread's round are under way (VM PUTs slowed
                down): simulate stops between two launches, terminates every VM it launched and exits 143.

Each case ends with the emulator's listing holding neither VM nor NIC.

Usage: with_emulator.py DATA -- simulate_cleanup_azure.py NODESMITH EXAMPLES_DIR CASE
"""
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.request


def control(path, body=None):
    context = ssl.create_default_context(cafile=os.environ["NODESMITH_CA_BUNDLE"])
    request = urllib.request.Request(os.environ["AZURE_EMULATOR_URL"] + "/_emulator/" + path,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, context=context, timeout=10) as answer:
        return json.load(answer)


def command(nodesmith, manifest, *extra):
    url = os.environ["AZURE_EMULATOR_URL"]
    return [nodesmith, "simulate", "-f", manifest, "--provider", "azure", "--set", "cluster_name=demo", "--set",
            "arm_endpoint=" + url, "--set", "prices_endpoint=" + url, *extra]


def nothing_left():
    state = control("state")
    assert not state["vms"], sorted(vm["name"] for vm in state["vms"])
    assert not state["nics"], sorted(nic["name"] for nic in state["nics"])
    return state


def case_refuse(nodesmith, examples):
    proc = subprocess.run(command(nodesmith, os.path.join(examples, "azure", "nginx.yaml")), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "--allow-launch" in proc.stderr, proc.stderr
    state = nothing_left()
    assert not {"vm.put", "nic.put"} & set(state["requests"]), state["requests"]


def case_launch_fails(nodesmith, examples):
    control("faults", {"kind": "error", "ops": ["vm.put"], "count": 1000, "status": 400, "code": "InvalidParameter",
                       "message": "The value of parameter imageReference is invalid."})
    proc = subprocess.run(command(nodesmith, os.path.join(examples, "azure", "nginx.yaml"), "--allow-launch",
                                  "--output", "json"), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    doc = json.loads(proc.stdout)
    assert doc["nodeclaims"] == [] and len(doc["launch_failures"]) == 1, doc
    assert "InvalidParameter" in doc["launch_failures"][0]["error"], doc["launch_failures"]
    state = nothing_left()
    assert state["requests"].get("nic.put"), "the launch made its NIC before the VM was refused"


def case_sigterm(nodesmith, examples):
    # Every VM PUT takes 1.5 s, so the signal lands while the round's launches are being made.
    control("faults", {"kind": "slow", "ops": ["vm.put"], "count": 100, "delay_ms": 1500})
    proc = subprocess.Popen(command(nodesmith, os.path.join(examples, "azure", "zone-spread.yaml"), "--allow-launch",
                                    "--output", "json"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not control("state")["vms"]:
        time.sleep(0.05)
    assert control("state")["vms"], "no VM within 120 s"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 128 + signal.SIGTERM, (proc.returncode, err)
    assert "stopped by SIGTERM" in err, err
    state = nothing_left()
    made = {e["name"] for e in state["history"] if e["event"] == "created"}
    assert 0 < len(made) < 6, f"the signal stopped the round before its last launch: {sorted(made)}"
    deleted = {e["name"] for e in state["history"] if e["event"] == "deleted"}
    assert made <= deleted, sorted(made - deleted)
    print(f"SIGTERM after {len(made)} of 6 VMs: each deleted, no NIC left")


def main():
    nodesmith, examples, case = sys.argv[1:4]
    globals()["case_" + case.replace("-", "_")](nodesmith, examples)
    print(f"{case}: ok")


if __name__ == "__main__":
    main()
