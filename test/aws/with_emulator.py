#!/usr/bin/python3
"""Runs a command against a fresh AWS emulator: starts test/emulators/aws/aws_emulator.py, points the AWS SDK
environment variables at it (endpoint, static test keys, region, IMDS off), replaces @EMULATOR@ in the command's
arguments with the emulator's URL, runs the command and stops the emulator. Exits with the command's status.

Usage: with_emulator.py DATA_DIR -- COMMAND [ARG...]
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EMULATOR = os.path.join(HERE, "..", "emulators", "aws", "aws_emulator.py")


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    data_dir, command = sys.argv[1], sys.argv[3:]
    emulator = subprocess.Popen(["/usr/bin/python3", EMULATOR, "--data-dir", data_dir], stdout=subprocess.PIPE,
                                text=True)
    try:
        line = emulator.stdout.readline()
        if not line.startswith("PORT "):
            sys.exit(f"the AWS emulator did not announce its port (got {line!r})")
        url = "http://127.0.0.1:" + line.split()[1]
        env = dict(os.environ)
        for name in ("AWS_SESSION_TOKEN", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_PROFILE"):
            env.pop(name, None)
        env.update({"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "AKIDEMULATOR",
                    "AWS_SECRET_ACCESS_KEY": "emulator/secret/key+EXAMPLE", "AWS_REGION": "us-east-1",
                    "AWS_EC2_METADATA_DISABLED": "true", "AWS_EMULATOR_URL": url})
        status = subprocess.run([arg.replace("@EMULATOR@", url) for arg in command], env=env).returncode
    finally:
        emulator.terminate()
        emulator.wait(10)
        emulator.stdout.close()
    sys.exit(status)


if __name__ == "__main__":
    main()
