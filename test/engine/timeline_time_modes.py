"""Event-driven time against stepping every tick: runs each timeline with `nodesmith simulate --timeline --output
json` twice, once as is and once with --every-tick, and asserts the two documents are the same (decisions, samples,
states, invariants), apart from the engine step counts they report: `engine_steps` and each step's
`state.invariants.checks`. Also asserts the event-driven run took fewer engine steps.

Usage: timeline_time_modes.py NODESMITH MANIFESTS TIMELINE [MANIFESTS TIMELINE ...]
"""
import json
import subprocess
import sys


def run(nodesmith, manifests, timeline, every_tick):
    args = [nodesmith, "simulate", "-f", manifests, "--timeline", timeline, "--output", "json"]
    if every_tick:
        args.append("--every-tick")
    proc = subprocess.run(args, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)


def without_step_counts(doc):
    steps = doc.pop("engine_steps")
    for s in doc["steps"]:
        s["state"]["invariants"].pop("checks")
    return steps


def first_difference(a, b, path="$"):
    if type(a) is not type(b):
        return f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'the event-driven' if k in a else 'the every-tick'} run"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None if len(a) == len(b) else f"{path}: {len(a)} items != {len(b)}"
    return None if a == b else f"{path}: {a!r} != {b!r}"


def main():
    nodesmith, pairs = sys.argv[1], sys.argv[2:]
    if not pairs or len(pairs) % 2:
        sys.exit(__doc__)
    failed = False
    for manifests, timeline in zip(pairs[::2], pairs[1::2]):
        events, ticks = run(nodesmith, manifests, timeline, False), run(nodesmith, manifests, timeline, True)
        n_events, n_ticks = without_step_counts(events), without_step_counts(ticks)
        diff = first_difference(events, ticks)
        print(f"{timeline}: {len(events['decisions'])} decisions, {n_ticks} engine steps every tick, "
              f"{n_events} event-driven" + (f"; DIFFERENT at {diff}" if diff else ""))
        if diff or n_events >= n_ticks:
            failed = True
    sys.exit(1 if failed else 0)


main()
