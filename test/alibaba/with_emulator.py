#!/usr/bin/python3
"""Runs a command against a fresh Alibaba Cloud emulator: starts test/emulators/alibaba/alibaba_emulator.js with the
official SDK packages scripts/npm-deps.sh cached, points the SDK environment at it (static test keys, region, no
metadata service), replaces @EMULATOR@ in the command's arguments with the emulator's URL, runs the command and stops
the emulator. Exits with the command's status.

Usage: with_emulator.py DATA_DIR -- COMMAND [ARG...]
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EMULATOR = os.path.join(HERE, "..", "emulators", "alibaba", "alibaba_emulator.js")
ACCESS_KEY = "LTAIemulatorKey0001"
SECRET_KEY = "emulator/Secret+Key=0001"
CLEARED = ("ALIBABA_CLOUD_SECURITY_TOKEN", "ALIBABA_CLOUD_ROLE_ARN", "ALIBABA_CLOUD_OIDC_PROVIDER_ARN",
           "ALIBABA_CLOUD_OIDC_TOKEN_FILE", "ALIBABA_CLOUD_PROFILE", "ALIBABA_CLOUD_CREDENTIALS_FILE",
           "ALIBABA_CLOUD_ECS_METADATA", "ALIBABA_CLOUD_STS_REGION")


def node_modules():
    cache = os.environ.get("NODESMITH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "nodesmith")
    path = os.path.join(cache, "npm-alibaba", "node_modules")
    if not all(os.path.isdir(os.path.join(path, "@alicloud", p)) for p in ("openapi-util", "mns")):
        sys.exit(f"the official Alibaba Cloud SDK packages are not in {path}: run scripts/install-deps.sh")
    return path


def start(data_dir):
    env = dict(os.environ, NODE_PATH=node_modules())
    emulator = subprocess.Popen(["node", EMULATOR, "--data-dir", data_dir, "--access-key", ACCESS_KEY,
                                 "--secret-key", SECRET_KEY], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                text=True, env=env)
    line = emulator.stdout.readline()
    if not line.startswith("PORT "):
        emulator.kill()
        sys.exit(f"the Alibaba Cloud emulator did not announce its port (got {line!r})")
    return emulator, "http://127.0.0.1:" + line.split()[1]


def environment(url):
    env = dict(os.environ)
    for name in CLEARED:
        env.pop(name, None)
    env.update({"ALIBABA_CLOUD_ACCESS_KEY_ID": ACCESS_KEY, "ALIBABA_CLOUD_ACCESS_KEY_SECRET": SECRET_KEY,
                "ALIBABA_CLOUD_REGION_ID": "cn-hangzhou", "ALIBABA_CLOUD_ECS_METADATA_DISABLED": "true",
                "ALIBABA_EMULATOR_URL": url, "NODE_PATH": node_modules()})
    return env


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    data_dir, command = sys.argv[1], sys.argv[3:]
    emulator, url = start(data_dir)
    try:
        status = subprocess.run([arg.replace("@EMULATOR@", url) for arg in command], env=environment(url)).returncode
    finally:
        emulator.terminate()
        emulator.wait(10)
        emulator.stdout.close()
    sys.exit(status)


if __name__ == "__main__":
    main()
