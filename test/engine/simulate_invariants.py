"""The invariant checker through `nodesmith simulate --timeline`:
- pods pending before the run and acted on by a step at 0 s, and pods held back by a NodePool's limits that become
  placeable when a node goes, are no violation (time_fixtures/held-by-limits.yaml), and simulate exits 0;
- each held-back pod is reported once, at INFO, with the pool, the resource, its limit and what is in use, and never
  again at DEBUG while it waits;
- a real violation (a provider that keeps listing terminated instances: --set violation=list-terminated, so an
  instance stays without a NodeClaim past the garbage-collection grace) makes simulate exit non-zero.

Usage: simulate_invariants.py NODESMITH FIXTURE_DIR EXAMPLES_DIR
"""
import json
import os
import re
import subprocess
import sys

HELD = "pod held back by NodePool limits"


def simulate(nodesmith, manifests, timeline, *extra):
    args = [nodesmith, "--log-level", "debug", "simulate", "-f", manifests, "--timeline", timeline,
            "--output", "json", *extra]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    return proc, (json.loads(proc.stdout) if proc.stdout.strip() else None)


def log_lines(stderr, message):
    lines = []
    for line in stderr.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("message") == message:
            lines.append(entry)
    return lines


def violations(doc):
    return [v for s in doc["steps"] for v in s["state"]["invariants"]["violations"]]


def held_by_limits(nodesmith, fixtures):
    proc, doc = simulate(nodesmith, os.path.join(fixtures, "held-by-limits-manifests.yaml"),
                         os.path.join(fixtures, "held-by-limits.yaml"))
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    assert violations(doc) == [], violations(doc)
    held = [d for d in doc["decisions"] if d["message"] == HELD]
    pods = sorted(d["pods"] for d in held)
    assert len(pods) == 2 and pods == sorted(set(pods)), pods
    assert all(p.startswith("default/web-") for p in pods), pods
    for d in held:
        assert re.fullmatch(r"nodepool capped: all instance types exceed the NodePool's limits "
                            r"\(cpu limit 8, in use \d+m?, remaining -?\d+m?\)", d["reason"]), d["reason"]
    # Once each, at INFO; no "could not schedule pod" for them at any level while they wait.
    lines = log_lines(proc.stderr, HELD)
    assert len(lines) == 2 and all(l["level"] == "INFO" for l in lines), lines
    unschedulable = [l for l in log_lines(proc.stderr, "could not schedule pod") if "web-" in json.dumps(l)]
    assert unschedulable == [], unschedulable[:3]
    # And they do get nodes once the batch nodes are gone.
    room = next(s["state"] for s in doc["steps"] if s["name"] == "room again")
    assert room["pods_pending"] == 0 and room["pods_placed"] == 2, room
    print(f"held back: {pods}, reason {held[0]['reason']!r}")


def real_violation(nodesmith, examples):
    proc, doc = simulate(nodesmith, os.path.join(examples, "timeline-scale-to-zero-manifests.yaml"),
                         os.path.join(examples, "timeline-scale-to-zero.yaml"), "--set", "violation=list-terminated")
    found = violations(doc) if doc else []
    assert found and all("without a nodeclaim" in v for v in found), found[:3]
    assert proc.returncode != 0, "simulate exited 0 with invariant violations"
    assert "invariant violation(s)" in proc.stderr, proc.stderr[-2000:]
    print(f"real violation: exit {proc.returncode}, {len(found)} violation(s), first: {found[0]}")


held_by_limits(sys.argv[1], sys.argv[2])
real_violation(sys.argv[1], sys.argv[3])
