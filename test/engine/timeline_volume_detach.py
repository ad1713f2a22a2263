"""VolumeAttachments through a timeline (time_fixtures/volume-detach.yaml), as Karpenter's node termination waits for
them (awaitVolumeDetachment, v1.14): db's CSI volume is attached to its node by the attach-detach stand-in; the node's
claim is deleted at 120 s, db evicted at once; the node is drained 5 s later and then waits, VolumesDetached Unknown
(AwaitingVolumeDetachment), until the stand-in detaches the volume 45 s after db left (at 166 s: db was gone at the
step after its eviction), when the instance, the node and the claim go in one step. The timeline adds an inline
attachment (kept) and adds then deletes another by hand.

Usage: timeline_volume_detach.py NODESMITH FIXTURE_DIR
"""
import json
import subprocess
import sys


def main():
    nodesmith, fixtures = sys.argv[1], sys.argv[2]
    proc = subprocess.run([nodesmith, "simulate", "-f", f"{fixtures}/volume-detach-manifests.yaml", "--timeline",
                           f"{fixtures}/volume-detach.yaml", "--output", "json"], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    doc = json.loads(proc.stdout)
    states = {s["name"]: s["state"] for s in doc["steps"] if s["name"]}
    running = states["running"]
    node = running["nodes"][0]["name"]
    attachments = [(a["node"], a["persistent_volume"]) for a in running["volume_attachments"]]
    if attachments != [(node, "pv-data")]:
        sys.exit(f"attachments at 2m: {attachments}; expected pv-data on {node}")
    d = [(x["time_s"], x["message"], x["nodes"], x["pods"]) for x in doc["decisions"]]
    evicted = [x[0] for x in d if x[1] == "evicted pod" and x[3] == "default/db"]
    ends = {x[1]: x[0] for x in d if x[2] == node and x[1] in ("terminated instance", "deleted node")}
    if evicted != [120] or ends != {"terminated instance": 166, "deleted node": 166}:
        sys.exit(f"db evicted at {evicted}, node {node} ended {ends}; expected 120, then 166 (121 + 45 s)")
    waiting = states["waiting"]
    claim = next(c for c in waiting["nodeclaims"] if c["node"] == node)
    conds = {k["type"]: (k["status"], k["reason"]) for k in claim["conditions"]}
    if conds.get("Drained") != ("True", "Drained") or \
            conds.get("VolumesDetached") != ("Unknown", "AwaitingVolumeDetachment"):
        sys.exit(f"claim of {node} at 150 s: {conds}; expected drained and awaiting volume detachment")
    if (node, "pv-data") not in [(a["node"], a["persistent_volume"]) for a in waiting["volume_attachments"]]:
        sys.exit(f"pv-data detached before 150 s: {waiting['volume_attachments']}")
    names = {s: [a["name"] for a in states[s]["volume_attachments"]] for s in ("gone", "attach by hand",
                                                                                 "detach by hand")}
    if names != {"gone": ["inline-1"], "attach by hand": ["inline-1", "manual-1"], "detach by hand": ["inline-1"]}:
        sys.exit(f"attachments after the node went, and around the manual ones: {names}")
    if not doc["steps"][-1]["state"]["invariants"]["ok"]:
        sys.exit(f"invariants: {doc['steps'][-1]['state']['invariants']}")
    print(f"ok: {node} drained at 125 s, waited for pv-data until it was detached at 166 s, then terminated")


main()
