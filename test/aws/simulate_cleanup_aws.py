#!/usr/bin/python3
"""`nodesmith simulate --provider aws` never leaves instances behind (docs/simulate.md, "Real providers"), against a
fresh AWS emulator per case:

  refuse       without --allow-launch simulate refuses (exit 2) and the emulator sees no launch;
  long-pool    a NodePool named with 45 characters still launches (the claim name, which is the client token, stays
               within 63 characters), and the instance is terminated before simulate exits;
  sigint, sigterm
               the signal arrives while launches are under way (CreateFleet slowed down): simulate stops between two
               launches, terminates every instance it launched, lists each, and exits 128 + the signal;
  launch-fails CreateFleet refused: exit 1, the failure in launch_failures, nothing running;
  unreachable  the endpoint refuses connections: exit 1 naming the provider's failure, nothing launched.

Usage: simulate_cleanup_aws.py NODESMITH EXAMPLES_DIR DATA_DIR CASE
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
EMULATOR = os.path.join(HERE, "..", "emulators", "aws", "aws_emulator.py")
LAUNCHES = {"CreateFleet", "RunInstances"}


def control(url, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method="POST" if data else "GET",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as answer:
        return json.load(answer)


def env_for(url):
    env = dict(os.environ, AWS_ENDPOINT_URL=url, AWS_ACCESS_KEY_ID="AKIDEMULATOR",
               AWS_SECRET_ACCESS_KEY="emulator/secret/key+EXAMPLE", AWS_REGION="us-east-1",
               AWS_EC2_METADATA_DISABLED="true")
    for name in ("AWS_SESSION_TOKEN", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_PROFILE"):
        env.pop(name, None)
    return env


def command(nodesmith, manifest, *extra):
    return [nodesmith, "simulate", "-f", manifest, "--provider", "aws", "--set", "cluster_name=demo", *extra]


def running(state):
    return [i for i in state["instances"] if i["state"] not in ("shutting-down", "terminated")]


def assert_all_terminated(url, stdout_text=None, doc=None):
    state = control(url, "/_emulator/state")
    assert not running(state), f"simulate left instances running: {running(state)}"
    ids = {i["id"] for i in state["instances"]}
    if stdout_text is not None:
        listed = set(re.findall(r"terminated instance aws:///[a-z0-9-]+/(i-[0-9a-z]+)", stdout_text))
        assert listed == ids, (listed, ids)
    if doc is not None:
        listed = {t["provider_id"].rsplit("/", 1)[1] for t in doc["terminated"]}
        assert listed == ids, (listed, ids)
    return state


def case_refuse(nodesmith, examples, url):
    proc = subprocess.run(command(nodesmith, os.path.join(examples, "nginx.yaml")), capture_output=True, text=True,
                          timeout=120, env=env_for(url))
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "--allow-launch" in proc.stderr, proc.stderr
    state = control(url, "/_emulator/state")
    assert not state["instances"] and not LAUNCHES & set(state["requests"]), state


def case_long_pool(nodesmith, examples, url):
    pool = "a-nodepool-whose-name-is-forty-five-chars-xyz"
    assert len(pool) == 45
    text = open(os.path.join(examples, "nginx.yaml")).read().replace("metadata:\n  name: default\nspec:\n  template",
                                                                     f"metadata:\n  name: {pool}\nspec:\n  template", 1)
    assert pool in text
    with tempfile.TemporaryDirectory() as tmp:
        manifest = os.path.join(tmp, "long.yaml")
        with open(manifest, "w") as f:
            f.write(text)
        proc = subprocess.run(command(nodesmith, manifest, "--allow-launch", "--output", "json"), capture_output=True,
                              text=True, timeout=300, env=env_for(url))
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    assert "are real" in proc.stderr, "simulate says it launches real instances"
    doc = json.loads(proc.stdout)
    assert doc["launch_failures"] == [] and len(doc["nodeclaims"]) == 1, doc
    claim = doc["nodeclaims"][0]
    assert claim["name"].startswith(pool + "-") and len(claim["name"]) == len(pool) + 6 <= 63, claim["name"]
    assert_all_terminated(url, doc=doc)


def case_signal(nodesmith, examples, url, sig):
    # Every launch takes 1.5 s, so the signal lands while the six claims of zone-spread are being launched.
    control(url, "/_emulator/faults", {"kind": "slow", "action": "CreateFleet", "count": 100, "delay_ms": 1500})
    proc = subprocess.Popen(command(nodesmith, os.path.join(examples, "aws", "zone-spread.yaml"), "--allow-launch"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_for(url))
    deadline = time.time() + 120
    while time.time() < deadline and not control(url, "/_emulator/state")["instances"]:
        time.sleep(0.05)
    assert control(url, "/_emulator/state")["instances"], "no launch within 120 s"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, (proc.returncode, err)
    assert ("stopped by " + signal.Signals(sig).name) in err, err
    state = assert_all_terminated(url, stdout_text=out)
    assert len(state["instances"]) < 6, "the signal stopped the round before its last launch"
    assert re.search(r"\d+ instance\(s\) terminated, 0 could not be", out), out


def case_launch_fails(nodesmith, examples, url):
    control(url, "/_emulator/faults", {"kind": "error", "action": "CreateFleet", "count": 1000, "status": 400,
                                       "code": "InvalidParameterValue"})
    proc = subprocess.run(command(nodesmith, os.path.join(examples, "nginx.yaml"), "--allow-launch", "--output",
                                  "json"), capture_output=True, text=True, timeout=300, env=env_for(url))
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    doc = json.loads(proc.stdout)
    assert doc["nodeclaims"] == [] and len(doc["launch_failures"]) == 1, doc
    assert "InvalidParameterValue" in doc["launch_failures"][0]["error"], doc["launch_failures"]
    assert_all_terminated(url, doc=doc)


def case_unreachable(nodesmith, examples, url):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    proc = subprocess.run(command(nodesmith, os.path.join(examples, "nginx.yaml"), "--allow-launch"),
                          capture_output=True, text=True, timeout=300, env=env_for(closed))
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert "could not be reached" in proc.stderr, proc.stderr
    assert not control(url, "/_emulator/state")["instances"]


def main():
    nodesmith, examples, data_dir, case = sys.argv[1:5]
    emulator = subprocess.Popen(["/usr/bin/python3", EMULATOR, "--data-dir", data_dir], stdout=subprocess.PIPE,
                                text=True)
    try:
        url = "http://127.0.0.1:" + emulator.stdout.readline().split()[1]
        if case in ("sigint", "sigterm"):
            case_signal(nodesmith, examples, url, signal.SIGINT if case == "sigint" else signal.SIGTERM)
        else:
            globals()["case_" + case.replace("-", "_")](nodesmith, examples, url)
        print(f"{case}: ok")
    finally:
        emulator.terminate()
        emulator.wait(10)
        emulator.stdout.close()


if __name__ == "__main__":
    main()
