"""Launch errors other than insufficient capacity through a timeline (time_fixtures/launch-errors.yaml), as
Karpenter's NodeClaim lifecycle handles a failed create: the claim is kept, marked Launched=False with the error,
and launched again; a claim that cannot launch is deleted at the registration TTL and its pods planned again.
- three Internal errors: one claim, failed at 0 s, launched at 3 s (the fourth attempt), its pod bound;
- Unauthorized for every launch: the second replica's claim stays Pending with Launched=False "unauthorized", is
  deleted at the registration TTL (3m) and a new one created, which launches once the faults are cleared at 7m.

Usage: timeline_launch_errors.py NODESMITH FIXTURE_DIR
"""
import json
import subprocess
import sys


def main():
    nodesmith, fixtures = sys.argv[1], sys.argv[2]
    proc = subprocess.run([nodesmith, "simulate", "-f", f"{fixtures}/launch-errors-manifests.yaml", "--timeline",
                           f"{fixtures}/launch-errors.yaml", "--output", "json"], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    doc = json.loads(proc.stdout)
    d = [(x["time_s"], x["message"], x["nodeclaims"], x["detail"]) for x in doc["decisions"]]
    created = [x for x in d if x[1] == "created nodeclaim"]
    if len(created) != 3:
        sys.exit(f"claims created: {created}; expected three (one, then one deleted at the TTL and its successor)")
    first, second, third = (x[2] for x in created)
    launched = {x[2]: x[0] for x in d if x[1] == "launched nodeclaim"}
    failed = [(x[0], x[2], x[3]) for x in d if x[1] == "failed launching nodeclaim"]
    if launched.get(first) != 3 or (0, first, "internal error") not in failed:
        sys.exit(f"first claim: launched at {launched.get(first)}, failures {failed}; expected a failure at 0 s and "
                 "the launch at 3 s")
    if second in launched or (121, second, "unauthorized") not in failed:
        sys.exit(f"second claim {second}: launched {launched.get(second)}, failures {failed}")
    timed_out = [x for x in d if x[1] == "nodeclaim registration timed out"]
    if [(x[0], x[2]) for x in timed_out] != [(301, second)]:
        sys.exit(f"registration timeouts {timed_out}, expected {second} at 301 s")
    if launched.get(third) != 420:
        sys.exit(f"third claim {third} launched at {launched.get(third)}, expected 420 s (when the faults are cleared)")
    held = next(s for s in doc["steps"] if s["name"] == "permissions back")["state"]
    c = next(c for c in held["nodeclaims"] if c["name"] == third)
    cond = next(k for k in c["conditions"] if k["type"] == "Launched")
    if c["phase"] != "Pending" or cond["status"] != "False" or cond["reason"] != "unauthorized":
        sys.exit(f"{third} before the clear: phase {c['phase']}, Launched {cond}")
    last = doc["steps"][-1]["state"]
    if last["pods_pending"] != 0 or len(last["nodes"]) != 2 or not last["invariants"]["ok"]:
        sys.exit(f"at the end: {last['pods_pending']} pending, {len(last['nodes'])} nodes, {last['invariants']}")
    print(f"ok: {first} launched at 3 s after three internal errors; {second} timed out at 301 s; {third} launched "
          "at 420 s")


main()
