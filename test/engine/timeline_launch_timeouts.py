"""Launch timeouts through a timeline (time_fixtures/launch-timeouts.yaml): a launch that hangs until the provider
call's deadline (5 minutes, the default --provider-timeout) holds the engine's step that long on the simulated clock
and fails as the watchdog fails it (throttled: the claim is kept, Launched=False, launched again after a second's
back-off). Two hung launches: failed at 300 s (recorded and logged once: the second failure, at 601 s, leaves the
claim's Launched condition as it was), launched at 602 s, which only two hangs of 300 s and two back-offs give.

Usage: timeline_launch_timeouts.py NODESMITH FIXTURE_DIR
"""
import json
import subprocess
import sys


def main():
    nodesmith, fixtures = sys.argv[1], sys.argv[2]
    proc = subprocess.run([nodesmith, "simulate", "-f", f"{fixtures}/launch-errors-manifests.yaml", "--timeline",
                           f"{fixtures}/launch-timeouts.yaml", "--output", "json"], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    doc = json.loads(proc.stdout)
    d = [(x["time_s"], x["message"], x["nodeclaims"], x["reason"], x["detail"]) for x in doc["decisions"]]
    created = [x for x in d if x[1] == "created nodeclaim"]
    if [x[0] for x in created] != [0]:
        sys.exit(f"claims created: {created}; expected one at 0 s")
    claim = created[0][2]
    failed = [x for x in d if x[1] == "failed launching nodeclaim"]
    if [(x[0], x[2], x[4]) for x in failed] != [(300, claim, "Throttled")] or \
            "did not return within 300000 ms" not in failed[0][3]:
        sys.exit(f"failed launches {failed}; expected {claim} throttled at 300 s, having not returned in 300000 ms")
    logged = [json.loads(line) for line in proc.stderr.splitlines() if '"failed launching nodeclaim"' in line]
    if [l["time"] for l in logged] != ["2026-01-01T00:05:00.000Z"]:
        sys.exit(f"failed launch log lines at {[l['time'] for l in logged]}; expected one at 300 s")
    launched = [(x[0], x[2]) for x in d if x[1] == "launched nodeclaim"]
    if launched != [(602, claim)]:
        sys.exit(f"launches {launched}; expected {claim} at 602 s (300 s hung, 1 s back-off, 300 s hung, 1 s)")
    last = doc["steps"][-1]["state"]
    if last["pods_pending"] != 0 or len(last["nodes"]) != 1 or not last["invariants"]["ok"]:
        sys.exit(f"at the end: {last['pods_pending']} pending, {len(last['nodes'])} nodes, {last['invariants']}")
    print(f"ok: {claim} hung twice for 300 s, failed as throttled, launched at 602 s")


main()
