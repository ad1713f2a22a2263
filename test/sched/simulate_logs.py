"""The log lines of `nodesmith simulate` in Karpenter's field shapes, the same in one-round and timeline modes.

Karpenter (pkg/controllers/provisioning/provisioner.go, scheduling/results.go, nodeclaim/lifecycle/launch.go) writes
object references as {"name", "namespace"} (klog.KObj through controller-runtime's zap), counts as numbers, a failure
under "error", and "found provisionable pod(s)" only when the round computes new NodeClaims. The fixture has a
Deployment that needs a claim and a pod asking for a DaemonSet's host port, which no node can give it.

Usage: simulate_logs.py NODESMITH FIXTURE
"""
import json
import os
import subprocess
import sys
import tempfile

MESSAGES = ("found provisionable pod(s)", "computed new nodeclaim(s) to fit pod(s)", "created nodeclaim",
            "launched nodeclaim", "could not schedule pod")


def lines(nodesmith, *args):
    proc = subprocess.run([nodesmith, "simulate", "--provider", "sim", *args], capture_output=True, text=True,
                          timeout=120)
    if proc.returncode != 0:
        sys.exit(f"simulate {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    out = []
    for text in (proc.stdout + proc.stderr).splitlines():
        if text.startswith("{"):
            try:
                out.append(json.loads(text))
            except json.JSONDecodeError:
                pass  # the summary document, not a log line
    steps = [o for o in out if o.get("message") == "applying timeline step"]
    assert all(isinstance(o["step"], int) and isinstance(o["line"], int) for o in steps), steps
    assert ("--timeline" in args) == bool(steps), steps
    return [o for o in out if o.get("message") in MESSAGES]


def ref(o, key, namespaced):
    r = o[key]
    assert isinstance(r, dict) and isinstance(r.get("name"), str) and r["name"], (key, o)
    assert set(r) == ({"name", "namespace"} if namespaced else {"name"}), (key, r)
    return r


def check(found, mode):
    by = {}
    for o in found:
        by.setdefault(o["message"], []).append(o)
    assert set(by) == set(MESSAGES), (mode, sorted(by))
    assert len(by["found provisionable pod(s)"]) == 1, (mode, "one round computes claims")
    assert by["found provisionable pod(s)"][0]["Pods"].count("shop/") >= 3, by["found provisionable pod(s)"]
    computed = by["computed new nodeclaim(s) to fit pod(s)"][0]
    assert isinstance(computed["nodeclaims"], int) and computed["nodeclaims"] >= 1, computed
    assert computed["pods"] == 3, computed
    for o in by["created nodeclaim"]:
        ref(o, "NodeClaim", False)
        assert ref(o, "NodePool", False)["name"] == "default", o
        assert isinstance(o["requests"], dict) and o["requests"]["cpu"], o
        assert isinstance(o["instance-types"], str) and o["instance-types"], o
        assert "Pod" not in o and "detail" not in o, o
    for o in by["launched nodeclaim"]:
        ref(o, "NodeClaim", False)
        assert o["provider-id"].startswith("sim://") and o["instance-type"] and o["zone"], o
        assert o["capacity-type"] in ("spot", "on-demand") and isinstance(o["allocatable"], dict), o
    (unsched,) = by["could not schedule pod"]
    assert ref(unsched, "Pod", True) == {"name": "exporter", "namespace": "shop"}, unsched
    assert "host port" in unsched["error"] and "9100" in unsched["error"], unsched["error"]
    assert "the most any type offers" not in unsched["error"], unsched["error"]
    assert unsched["level"] == "ERROR" and "reason" not in unsched, unsched
    return {m: sorted(set().union(*(set(o) - {"time"} for o in by[m]))) for m in MESSAGES}


def main():
    nodesmith, fixture = sys.argv[1:3]
    one_round = check(lines(nodesmith, "-f", fixture), "one round")
    with tempfile.TemporaryDirectory() as tmp:
        timeline = os.path.join(tmp, "timeline.yaml")
        with open(timeline, "w") as f:
            f.write("description: the fixture's pods, provisioned\nsteps:\n  - name: provision\n    advance: 2m\n")
        in_timeline = check(lines(nodesmith, "-f", fixture, "--timeline", timeline,
                                  "--report", os.path.join(tmp, "r.html")), "timeline")
    for message in MESSAGES:
        assert one_round[message] == in_timeline[message], (message, one_round[message], in_timeline[message])
    print("log lines in Karpenter's shapes, the same keys in both modes:", json.dumps(one_round))


if __name__ == "__main__":
    main()
