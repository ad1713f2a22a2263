"""A CapacityBuffer's scalableRef in simulate -f (time_fixtures/buffer-scalable.yaml): the chunks take the
Deployment's pod template (1 cpu, 2 GiB) and number max(replicas, ceil(percentage of its replicas)), as Karpenter's
computeReplicas does, following the Deployment as the timeline scales it: 4 replicas at 50% -> 2, 9 -> 5, 0 -> the
replicas (1).

Usage: timeline_buffer_scalable.py NODESMITH FIXTURE_DIR
"""
import json
import subprocess
import sys

CHUNK_CPU, CHUNK_MEM = 1000, 2 << 30


def main():
    nodesmith, fixtures = sys.argv[1], sys.argv[2]
    proc = subprocess.run([nodesmith, "simulate", "-f", f"{fixtures}/buffer-scalable-manifests.yaml", "--timeline",
                           f"{fixtures}/buffer-scalable.yaml", "--output", "json"],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    states = {s["name"]: s["state"] for s in json.loads(proc.stdout)["steps"]}
    for name, wanted, pods in (("four", 2, 4), ("ten", 5, 9), ("zero", 1, 0)):
        st = states[name]
        room = st["headroom"]
        if (room["wanted"], room["placed"], room["ready"], st["pods_placed"]) != (wanted, wanted, wanted, pods):
            sys.exit(f"{name}: headroom {room}, {st['pods_placed']} pods placed; expected {wanted} chunks for {pods}")
    # The chunk's shape is the Deployment's pod: its cost share is computed here from the node it is on.
    st = states["four"]
    node = st["nodes"][0]
    share = max(2 * CHUNK_CPU / node["cpu_allocatable_milli"], 2 * CHUNK_MEM / node["memory_allocatable_bytes"])
    if len(st["nodes"]) != 1 or abs(st["headroom"]["cost_per_hour"] - node["price_per_hour"] * share) > 1e-6:
        sys.exit(f"four: headroom {st['headroom']} on {node}; expected two chunks of 1 cpu / 2 GiB on one node")


if __name__ == "__main__":
    main()
