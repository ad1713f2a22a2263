#!/usr/bin/python3
"""Runs a command against a fresh Azure emulator: starts test/emulators/azure/azure_emulator.py, points the Azure
environment at it (ARM and Entra ID hosts, a client secret, the node resource group, IMDS), trusts its generated CA
through NODESMITH_CA_BUNDLE (and NODE_EXTRA_CA_CERTS for Node), replaces @EMULATOR@ in the command's arguments with
the emulator's https URL and @IMDS@ with its IMDS URL, runs the command and stops the emulator. Exits with the
command's status.

Usage: with_emulator.py DATA_DIR -- COMMAND [ARG...]
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EMULATOR = os.path.join(HERE, "..", "emulators", "azure", "azure_emulator.py")
sys.path.insert(0, os.path.join(HERE, "..", "emulators", "azure"))
from azure_emulator import CONFIG, RG, SUB  # noqa: E402

SUBNET = (f"/subscriptions/{SUB}/resourceGroups/demo-network/providers/Microsoft.Network/virtualNetworks/"
          "demo-vnet/subnets/nodes")


def start(data_dir):
    emulator = subprocess.Popen(["/usr/bin/python3", EMULATOR, "--data-dir", data_dir] + (["--verbose"] if os.environ.get("AZURE_EMULATOR_VERBOSE") else []), stdout=subprocess.PIPE,
                                stdin=subprocess.PIPE, text=True)
    line = emulator.stdout.readline().split()
    if len(line) != 6 or line[0] != "PORT":
        emulator.kill()
        sys.exit(f"the Azure emulator did not announce its ports (got {line!r})")
    url, imds, ca = f"https://127.0.0.1:{line[1]}", f"http://127.0.0.1:{line[3]}", line[5]
    env = dict(os.environ)
    for name in ("AZURE_FEDERATED_TOKEN_FILE", "ARM_CLOUD", "AZURE_POD_IDENTITY_AUTHORITY_HOST"):
        env.pop(name, None)
    env.update({"AZURE_TENANT_ID": CONFIG["tenant"], "AZURE_CLIENT_ID": CONFIG["client_id"],
                "AZURE_CLIENT_SECRET": CONFIG["client_secret"], "AZURE_SUBSCRIPTION_ID": SUB,
                "AZURE_NODE_RESOURCE_GROUP": RG, "LOCATION": "southcentralus", "AZURE_AUTHORITY_HOST": url,
                "VNET_SUBNET_ID": SUBNET, "NODESMITH_CA_BUNDLE": ca, "NODE_EXTRA_CA_CERTS": ca,
                "AZURE_EMULATOR_URL": url, "AZURE_EMULATOR_IMDS": imds})
    cache = os.environ.get("NODESMITH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "nodesmith")
    env.setdefault("NODE_PATH", os.path.join(cache, "npm-azure", "node_modules"))
    return emulator, url, imds, env


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    emulator, url, imds, env = start(sys.argv[1])
    try:
        command = [a.replace("@EMULATOR@", url).replace("@IMDS@", imds) for a in sys.argv[3:]]
        status = subprocess.run(command, env=env).returncode
    finally:
        emulator.stdin.close()
        emulator.terminate()
        emulator.wait(10)
        emulator.stdout.close()
    sys.exit(status)


if __name__ == "__main__":
    main()
