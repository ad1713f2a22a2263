"""CapacityBuffers in simulate -f, one case a run.

scalable (time_fixtures/buffer-scalable.yaml): a scalableRef's chunks take the Deployment's pod template (1 cpu,
2 GiB) and number max(replicas, ceil(percentage of its replicas)), as Karpenter's computeReplicas does, following the
Deployment as the timeline scales it: 4 replicas at 50% -> 2, 9 -> 5, 0 -> the replicas (1).

chunks (time_fixtures/buffer-chunks.yaml): chunks are built as Karpenter's virtual pods are, without the
PersistentVolumeClaim and ephemeral volumes of their template (Karpenter's sanitizeVirtualPodSpec), so a chunk whose
template names a claim that does not exist, and one whose ephemeral volume's claim would be named after the pod, are
placed; a buffer whose scalableRef is a batch Job (Karpenter's resolver reads apps only) loads, asks for no chunk, and
is reported once with Karpenter's ResolutionFailed reason and resolver's message; the claim buffer's percentage,
which a podTemplateRef ignores, is reported once. The timeline then adds a PodTemplate
and a buffer of 2 chunks of it (4 chunks), deletes the claim buffer by name and the scratch PodTemplate by a label
selector, leaving its buffer with no chunk (2 chunks), patches the added buffer to 3 replicas (3 chunks), and patches
its PodTemplate to select arm64 nodes, which the NodePool does not offer: its 3 chunks are wanted and none is placed.

Usage: timeline_buffers.py NODESMITH FIXTURE_DIR scalable|chunks
"""
import json
import subprocess
import sys

CHUNK_CPU, CHUNK_MEM = 1000, 2 << 30


def simulate(nodesmith, fixtures, name):
    """The step states by step name, and the log lines, of the timeline `name` over its manifests."""
    proc = subprocess.run([nodesmith, "simulate", "-f", f"{fixtures}/{name}-manifests.yaml", "--timeline",
                           f"{fixtures}/{name}.yaml", "--output", "json"],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    logs = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    return {s["name"]: s["state"] for s in json.loads(proc.stdout)["steps"]}, logs


def scalable(nodesmith, fixtures):
    states, _ = simulate(nodesmith, fixtures, "buffer-scalable")
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


def chunks(nodesmith, fixtures):
    states, logs = simulate(nodesmith, fixtures, "buffer-chunks")
    # claim's and scratch's chunks, none of nightly; late's 2 added; claim deleted, and scratch's template; late
    # patched to 3 replicas
    for step, n in (("placed", 2), ("added", 4), ("deleted", 2), ("patched", 3)):
        room = states[step]["headroom"]
        if (room["wanted"], room["placed"]) != (n, n):
            sys.exit(f"{step}: headroom {room}, expected {n} chunks wanted and placed")
    # the chunks take the patched template's shape: none fits the amd64 pool
    room = states["template patched"]["headroom"]
    if (room["wanted"], room["placed"]) != (3, 0):
        sys.exit(f"template patched: headroom {room}, expected 3 chunks wanted and none placed")
    nightly = [(w.get("level"), w.get("reason"), w.get("error")) for w in logs
               if w.get("object") == "CapacityBuffer default/nightly"]
    if nightly != [("WARN", "ResolutionFailed", 'unsupported scalableRef API group "batch"')]:
        sys.exit(f"nightly was not reported once as ResolutionFailed: {nightly}")
    claim = [w.get("level") for w in logs if w.get("object") == "CapacityBuffer default/claim"
             and w.get("message", "").startswith("ignoring spec.percentage")]
    if claim != ["WARN"]:
        sys.exit(f"claim's percentage beside its podTemplateRef was not reported once as ignored: {claim}")


if __name__ == "__main__":
    {"scalable": scalable, "chunks": chunks}[sys.argv[3]](sys.argv[1], sys.argv[2])
