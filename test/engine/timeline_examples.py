"""Runs one examples/timeline-NAME.yaml with `nodesmith simulate --timeline --output json --report` and asserts its
decisions, the invariants at every step, and that the HTML report is well formed, self-contained and charts every
sample.

Usage: timeline_examples.py NODESMITH EXAMPLES_DIR NAME
"""
import html.parser
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


# Settings an example runs with, as its timeline's header says.
EXTRA_ARGS = {"cost-consolidation": ["--packing", "cost"]}


def run(nodesmith, examples, name, report):
    args = [nodesmith, "simulate", "-f", os.path.join(examples, f"timeline-{name}-manifests.yaml"),
            "--timeline", os.path.join(examples, f"timeline-{name}.yaml"), "--output", "json", "--report", report]
    args += EXTRA_ARGS.get(name, [])
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)


def step(doc, name):
    for s in doc["steps"]:
        if s["name"] == name:
            return s["state"]
    raise AssertionError(f"no step named {name!r}")


def decisions(doc, message, method=None):
    return [d for d in doc["decisions"] if d["message"] == message and (method is None or d["method"] == method)]


def names(field):
    return [n for n in field.split(",") if n]


# ---- checks every example gets

def check_invariants(doc):
    for s in doc["steps"]:
        inv = s["state"]["invariants"]
        assert inv["ok"] is True and inv["violations"] == [], (s["index"], s["description"], inv)


def check_states(doc):
    assert doc["steps"], "no step ran"
    times = [s["time_s"] for s in doc["steps"]]
    assert times == sorted(times), times
    for s in doc["steps"]:
        state = s["state"]
        assert state["pods_placed"] + state["pods_pending"] <= state["pods_total"], state
        launched = [c for c in state["nodeclaims"] if c["phase"] != "Pending"]
        assert abs(state["cost_per_hour"] - sum(c["price_per_hour"] for c in launched)) < 1e-6, s["index"]
        for n in state["nodes"]:
            assert n["cpu_requested_milli"] <= n["cpu_allocatable_milli"], n
    series = doc["cost_over_time"]
    assert series and all(a["time_s"] <= b["time_s"] for a, b in zip(series, series[1:]))
    last = doc["steps"][-1]["state"]
    assert series[-1]["nodes"] == len(last["nodes"]) and abs(series[-1]["cost_per_hour"] - last["cost_per_hour"]) < 1e-6


class Page(html.parser.HTMLParser):
    """Checks that elements nest properly and collects what a self-contained page must not have."""
    VOID = {"meta", "br", "link", "img", "input", "hr", "line", "rect", "polyline", "circle", "path"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.external, self.svg_count = [], [], [], 0

    def handle_starttag(self, tag, attrs):
        if tag == "svg":
            self.svg_count += 1
        if tag in ("script", "link", "img", "iframe", "object", "embed"):
            self.external.append(tag)
        for key, value in attrs:
            if key in ("src", "href", "xlink:href") or (value or "").strip().lower().startswith(("http:", "https:", "//")):
                self.external.append(f"{tag} {key}={value}")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()


def check_report(path, doc):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert text.startswith("<!DOCTYPE html>"), text[:40]
    page = Page()
    page.feed(text)
    page.close()
    assert not page.errors, page.errors[:5]
    assert not page.stack, f"unclosed {page.stack}"
    assert not page.external, page.external
    assert "url(" not in text and "@import" not in text
    assert page.svg_count == 1
    svg = ET.fromstring(text[text.index("<svg"):text.index("</svg>") + len("</svg>")])
    n = len(doc["cost_over_time"])
    for cls, key in (("series-nodes", "nodes"), ("series-cost", "cost_per_hour")):
        lines = [e for e in svg.iter("polyline") if e.get("class") == cls]
        assert len(lines) == 1, cls
        points = [tuple(map(float, p.split(","))) for p in lines[0].get("points").split()]
        assert len(points) == 2 * n - 1, (cls, len(points), n)
        # A step line: x only grows, and the odd points repeat the previous value at the next sample's time.
        assert all(a[0] <= b[0] for a, b in zip(points, points[1:])), cls
        assert all(points[i][1] == points[i - 1][1] for i in range(1, len(points), 2)), cls
        # Equal values sit at equal heights.
        ys = {}
        for sample, (_, y) in zip(doc["cost_over_time"], points[::2]):
            assert ys.setdefault(sample[key], y) == y, (cls, sample)
    markers = [e for e in svg.iter("line") if e.get("class") == "step-marker"]
    assert len(markers) == len({s["time_s"] for s in doc["steps"]}), len(markers)
    assert text.count("<tr>") >= len(doc["steps"]) + len(doc["decisions"])


# ---- per example

def check_scale_to_zero(doc):
    up = step(doc, "nodes launched and pods running")
    assert up["pods_placed"] == 10 and up["pods_pending"] == 0, up["pending"]
    assert up["nodes"] and all(n["status"] == "Ready" for n in up["nodes"]), up["nodes"]
    launched = {n["name"] for n in up["nodes"]}
    end = step(doc, "empty nodes removed")
    assert end["nodes"] == [] and end["nodeclaims"] == [] and end["cost_per_hour"] == 0, end["nodes"]
    emptied_at = next(s["time_s"] for s in doc["steps"] if s["name"] == "scale to zero")
    empty = decisions(doc, "disrupting node(s)", "empty")
    assert {n for d in empty for n in names(d["nodes"])} == launched, empty
    for d in empty:
        # ttlSecondsAfterEmpty: 60, then the 15 s stabilisation window, give or take a few ticks.
        assert emptied_at + 60 <= d["time_s"] <= emptied_at + 60 + 15 + 5, d
    assert {n for d in decisions(doc, "deleted node") for n in names(d["nodes"])} >= launched
    assert not decisions(doc, "disrupting node(s)", "underutilized"), "WhenEmpty semantics: no consolidation"


def check_consolidation(doc):
    full = step(doc, "three full nodes")
    assert len(full["nodes"]) == 3 and full["pods_placed"] == 6, [n["name"] for n in full["nodes"]]
    before = {n["name"] for n in full["nodes"]}
    end = step(doc, "consolidated")
    assert len(end["nodes"]) == 1 and end["pods_placed"] == 3 and end["pods_pending"] == 0, end["nodes"]
    assert end["nodes"][0]["name"] not in before, "the survivor is the replacement"
    assert end["cost_per_hour"] < full["cost_per_hour"]
    multi = decisions(doc, "disrupting node(s)", "underutilized")
    assert len(multi) == 1, multi
    assert set(names(multi[0]["nodes"])) == before, multi[0]
    assert not decisions(doc, "disrupting node(s)", "empty")


def check_cost_consolidation(doc):
    # Built-in catalog prices per vCPU: m5 0.048, c5 0.0425, r5 0.063.
    running = step(doc, "running")
    assert [n["instance_type"] for n in running["nodes"]] == ["m5.4xlarge"], running["nodes"]
    assert abs(running["cost_per_hour"] - 16 * 0.048) < 1e-9
    end = step(doc, "consolidated")
    assert end["pods_placed"] == 4 and end["pods_pending"] == 0, end
    assert len(end["nodes"]) == 2 and "default-big" not in {n["name"] for n in end["nodes"]}, end["nodes"]
    # each new node holds what runs on it; together they hold the four pods
    assert sum(n["pods"] for n in end["nodes"]) == 4
    for n in end["nodes"]:
        assert n["memory_requested_bytes"] <= n["memory_allocatable_bytes"], n
    # cheaper than the m5.4xlarge, and than the c5.4xlarge Karpenter's rule would replace it by
    assert end["cost_per_hour"] < 16 * 0.0425 < 16 * 0.048, end["cost_per_hour"]
    assert abs(end["cost_per_hour"] - (8 * 0.048 + 2 * 0.063)) < 1e-9, [n["instance_type"] for n in end["nodes"]]
    disrupting = decisions(doc, "disrupting node(s)", "underutilized")
    assert len(disrupting) == 1 and names(disrupting[0]["nodes"]) == ["default-big"], disrupting
    assert "replacement-node-count=2" in decisions(doc, "disruption", "underutilized")[0]["detail"]


def check_spot_interruption(doc):
    before = step(doc, "web running on spot")
    assert before["pods_placed"] == 6 and all(n["capacity_type"] == "spot" for n in before["nodes"])
    victim = sorted(n["name"] for n in before["nodes"])[0]
    offering = next((n["instance_type"], n["zone"]) for n in before["nodes"] if n["name"] == victim)
    warned_at = next(s["time_s"] for s in doc["steps"] if s["name"] == "interruption warning")
    got = [d for d in decisions(doc, "received interruption event") if victim in names(d["nodes"])]
    assert got and warned_at <= got[0]["time_s"] <= warned_at + 2, got
    assert any(victim in names(d["nodes"]) for d in decisions(doc, "tainted node"))
    assert any(offering[0] in d["detail"] and offering[1] in d["detail"]
               for d in decisions(doc, "marked offering unavailable")), decisions(doc, "marked offering unavailable")
    replacements = [d for d in decisions(doc, "launched nodeclaim") if d["time_s"] >= warned_at]
    assert replacements, "a replacement was launched"
    deleted = [d for d in decisions(doc, "deleted node") if victim in names(d["nodes"])]
    assert deleted and deleted[0]["time_s"] <= warned_at + 120, "drained and removed before the 2-minute deadline"
    end = step(doc, "replaced before the deadline")
    assert victim not in {n["name"] for n in end["nodes"]}
    assert end["pods_placed"] == 6 and end["pods_pending"] == 0
    assert len(end["nodes"]) == len(before["nodes"])
    assert all((n["instance_type"], n["zone"]) != offering or n["name"] in {m["name"] for m in before["nodes"]}
               for n in end["nodes"]), "the replacement avoids the interrupted offering"


def check_drift(doc):
    before = step(doc, "five nodes running")
    assert len(before["nodes"]) == 5 and before["pods_placed"] == 5
    assert all(n["labels"].get("team") == "blue" for n in before["nodes"])
    old = {n["name"] for n in before["nodes"]}
    drift = decisions(doc, "disrupting node(s)", "drifted")
    assert len(drift) == 5 and all(len(names(d["nodes"])) == 1 for d in drift), [(d["time_s"], d["nodes"]) for d in drift]
    assert {names(d["nodes"])[0] for d in drift} == old
    # The budget lets one node go at a time: each drifted node is gone before the next is disrupted.
    gone = {names(d["nodes"])[0]: d["time_s"] for d in decisions(doc, "deleted node") if d["nodes"]}
    for prev, nxt in zip(drift, drift[1:]):
        assert gone[names(prev["nodes"])[0]] <= nxt["time_s"], (prev, nxt)
    patched_at = next(s["time_s"] for s in doc["steps"] if s["name"] == "template changed")
    assert max(s["nodes"] for s in doc["cost_over_time"] if s["time_s"] > patched_at) <= 6, "one replacement at a time"
    end = step(doc, "rolled one node at a time")
    assert len(end["nodes"]) == 5 and end["pods_placed"] == 5 and end["pods_pending"] == 0
    assert not old & {n["name"] for n in end["nodes"]}
    assert all(n["labels"].get("team") == "green" and n["status"] == "Ready" for n in end["nodes"])


def check_windows(doc):
    up = step(doc, "running")
    assert up["pods_placed"] == 10 and len(up["nodes"]) == 1, up["nodes"]
    node = up["nodes"][0]
    assert node["nodepool"] == "windows2022" and node["capacity_type"] == "on-demand"
    assert node["labels"]["kubernetes.io/os"] == "windows"
    assert node["labels"]["node.kubernetes.io/windows-build"] == "10.0.20348"
    deleted_at = next(s["time_s"] for s in doc["steps"] if s["name"] == "deleted")
    assert step(doc, "deleted")["pods_total"] == 0
    empty = decisions(doc, "disrupting node(s)", "empty")
    assert len(empty) == 1 and names(empty[0]["nodes"]) == [node["name"]], empty
    # consolidateAfter: 30s from the last pod leaving, then the stabilisation window.
    assert deleted_at + 30 <= empty[0]["time_s"] <= deleted_at + 30 + 15 + 5, empty[0]
    gone = [d for d in decisions(doc, "deleted node") if node["name"] in names(d["nodes"])]
    assert gone and gone[0]["time_s"] >= empty[0]["time_s"]
    end = step(doc, "node removed")
    assert end["nodes"] == [] and end["cost_per_hour"] == 0


def check_static_capacity(doc):
    up = decisions(doc, "provisioning nodeclaims to satisfy replica count")
    assert [d["reason"] for d in up] == ["current 0, desired 3", "current 3, desired 5"], up
    three = step(doc, "three static nodes")
    assert len(three["nodes"]) == 3 and three["pods_placed"] == 2 and three["pods_pending"] == 0
    assert all(n["nodepool"] == "fixed" for n in three["nodes"])
    five = step(doc, "five nodes")
    assert len(five["nodes"]) == 5
    # Scale-down takes the empty nodes first (Karpenter's static deprovisioning order).
    down = decisions(doc, "deprovisioning nodeclaims to satisfy replica count")
    assert len(down) == 1 and down[0]["reason"] == "current 5, desired 2", down
    empty = {n["nodeclaim"] for n in five["nodes"] if n["pods"] == 0}
    assert set(names(down[0]["nodeclaims"])) == empty, (down[0], empty)
    two = step(doc, "two nodes")
    assert len(two["nodes"]) == 2 and two["pods_placed"] == 2 and two["pods_pending"] == 0
    # Drift replaces node for node, each replacement from the template before the old node goes.
    old = {n["name"] for n in two["nodes"]}
    drift = decisions(doc, "disrupting node(s)", "drifted")
    assert len(drift) == 2 and {names(d["nodes"])[0] for d in drift} == old, drift
    patched_at = next(s["time_s"] for s in doc["steps"] if s["name"] == "template changed")
    assert min(s["nodes"] for s in doc["cost_over_time"] if s["time_s"] > patched_at) >= 2
    assert max(s["nodes"] for s in doc["cost_over_time"] if s["time_s"] > patched_at) <= 3, "one replacement at a time"
    end = step(doc, "rolled node for node")
    assert len(end["nodes"]) == 2 and end["pods_placed"] == 2 and not old & {n["name"] for n in end["nodes"]}
    assert all(n["labels"].get("team") == "green" and n["status"] == "Ready" for n in end["nodes"])
    assert len(up) == 2, "drift's replacements are not scaling"


def check_instance_health(doc):
    up = step(doc, "three db nodes running")
    assert len(up["nodes"]) == 3 and all(n["pods"] == 1 for n in up["nodes"]), up["nodes"]
    # `nodepool, count: 1` picks the first node by name.
    ordered = sorted(n["name"] for n in up["nodes"])
    impaired, reclaimed = ordered[0], ordered[1]
    # Unhealthy is ForcefulTermination: the pod goes at once although the budget allows no disruption, and the
    # node after Karpenter's 5 s minimum drain time.
    at = next(s["time_s"] for s in doc["steps"] if s["name"] == "instance impaired")
    got = [d for d in decisions(doc, "received interruption event", "InstanceUnhealthy") if impaired in names(d["nodes"])]
    assert got and got[0]["time_s"] == at, got
    evicted = [d for d in decisions(doc, "evicted pod") if impaired in names(d["nodes"])]
    assert evicted and evicted[0]["time_s"] == at, evicted
    assert not [d for d in decisions(doc, "eviction blocked") if impaired in names(d["nodes"])]
    gone = [d for d in decisions(doc, "deleted node") if impaired in names(d["nodes"])]
    assert gone and gone[0]["time_s"] <= at + 10, gone
    assert not decisions(doc, "marked offering unavailable")
    mid = step(doc, "terminated at once")
    assert impaired not in {n["name"] for n in mid["nodes"]} and mid["pods_placed"] == 3, mid["nodes"]
    # The capacity reservation interruption is CordonAndDrain: tainted, its eviction refused by the budget, until the
    # instance is reclaimed at the deadline and its pod placed again.
    at = next(s["time_s"] for s in doc["steps"] if s["name"] == "reservation interrupted")
    got = [d for d in decisions(doc, "received interruption event", "CapacityReservationInterruption")
           if reclaimed in names(d["nodes"])]
    assert got and got[0]["time_s"] == at, got
    assert any(reclaimed in names(d["nodes"]) and d["time_s"] == at for d in decisions(doc, "tainted node"))
    blocked = [d for d in decisions(doc, "eviction blocked") if reclaimed in names(d["nodes"])]
    assert blocked and blocked[0]["time_s"] == at, blocked
    assert not [d for d in decisions(doc, "evicted pod") if reclaimed in names(d["nodes"])]
    held = step(doc, "drain held by the budget")
    assert any(n["name"] == reclaimed and n["pods"] == 1 for n in held["nodes"]), held["nodes"]
    lost = [d for d in decisions(doc, "removed node of terminated instance") if reclaimed in names(d["nodes"])]
    assert lost and lost[0]["time_s"] == at + 120, lost
    end = step(doc, "reclaimed at the deadline")
    assert reclaimed not in {n["name"] for n in end["nodes"]}
    assert len(end["nodes"]) == 3 and end["pods_placed"] == 3 and end["pods_pending"] == 0, end


CHUNK_CPU, CHUNK_MEM = 2000, 4 << 30  # the example's PodTemplate web-chunk


def check_warm_headroom(doc):
    warm = step(doc, "headroom provisioned")
    # The buffer's two chunks have a node before any pod: room for both, and their cost is the larger of their cpu
    # and memory shares of it, times its price (computed here from the node, not taken from nodesmith's figure).
    assert len(warm["nodes"]) == 1 and warm["pods_placed"] == 0, warm
    node = warm["nodes"][0]
    assert node["cpu_allocatable_milli"] - node["cpu_requested_milli"] >= 2 * CHUNK_CPU, node
    assert node["memory_allocatable_bytes"] - node["memory_requested_bytes"] >= 2 * CHUNK_MEM, node
    assert warm["headroom"] == {**warm["headroom"], "wanted": 2, "placed": 2, "ready": 2}, warm["headroom"]
    share = max(2 * CHUNK_CPU / node["cpu_allocatable_milli"], 2 * CHUNK_MEM / node["memory_allocatable_bytes"])
    assert abs(warm["headroom"]["cost_per_hour"] - node["price_per_hour"] * share) < 1e-6, (warm["headroom"], node)
    # Emptiness and consolidation leave the node that holds the headroom, 5 minutes past consolidateAfter.
    kept = step(doc, "headroom kept")
    assert [n["name"] for n in kept["nodes"]] == [node["name"]] and kept["headroom"]["ready"] == 2, kept
    # Two web pods start on the warm node without a launch: they run on the node that was there before them.
    started = step(doc, "started without a launch")
    assert started["pods_placed"] == 2 and started["pods_pending"] == 0, started
    warm_node = next(n for n in started["nodes"] if n["name"] == node["name"])
    assert warm_node["pods"] == 2, warm_node
    # The chunks they displaced are provisioned elsewhere: a new node, and both chunks ready again.
    refilled = step(doc, "headroom refilled")
    assert len(refilled["nodes"]) == 2 and refilled["headroom"]["ready"] == 2, refilled
    # The NodePool's 24 cpu limit caps the headroom: real pods go first, and the chunks find no room under it.
    capped = step(doc, "limits cap the headroom")
    claims = [c for c in capped["nodeclaims"]]
    assert sum(n["cpu_allocatable_milli"] for n in capped["nodes"]) <= 24000, capped["nodes"]
    assert capped["pods_placed"] == 8 and capped["pods_pending"] == 1, capped
    assert capped["headroom"]["placed"] == 0 and capped["headroom"]["cost_per_hour"] == 0, capped["headroom"]
    assert len(claims) == len(capped["nodes"]), claims
    # Web shrinks: the empty nodes go, but not the one the chunks are back on.
    end = step(doc, "headroom back, the rest consolidated")
    assert end["pods_placed"] == 1 and end["headroom"]["ready"] == 2, end
    assert len(end["nodes"]) == 1 and end["nodes"][0]["pods"] == 1, end["nodes"]
    free = end["nodes"][0]["cpu_allocatable_milli"] - end["nodes"][0]["cpu_requested_milli"]
    assert free >= 2 * CHUNK_CPU, end["nodes"][0]
    assert all("headroom_ready" in s for s in doc["cost_over_time"]), doc["cost_over_time"][0]


CHECKS = {
    "scale-to-zero": check_scale_to_zero,
    "consolidation": check_consolidation,
    "cost-consolidation": check_cost_consolidation,
    "spot-interruption": check_spot_interruption,
    "drift": check_drift,
    "windows": check_windows,
    "static-capacity": check_static_capacity,
    "warm-headroom": check_warm_headroom,
    "instance-health": check_instance_health,
}

# The only disruption methods each example may use: anything else is a decision the scenario does not call for.
METHODS = {
    "scale-to-zero": {"empty"},
    "consolidation": {"underutilized"},
    "cost-consolidation": {"underutilized"},
    "spot-interruption": set(),
    "drift": {"drifted"},
    "windows": {"empty"},
    # consolidateAfter 0s over nodes mostly empty, yet no emptiness and no consolidation: the pool is static.
    "static-capacity": {"drifted"},
    "warm-headroom": {"empty", "underutilized"},
    "instance-health": set(),
}


def check_methods(doc, name):
    used = {d["method"] for d in decisions(doc, "disrupting node(s)")}
    assert used <= METHODS[name], f"unexpected disruption methods {used - METHODS[name]}"
    assert not decisions(doc, "abandoned disruption"), decisions(doc, "abandoned disruption")


def main():
    nodesmith, examples, name = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, f"{name}.html")
        doc = run(nodesmith, examples, name, report)
        check_states(doc)
        check_invariants(doc)
        check_methods(doc, name)
        CHECKS[name](doc)
        check_report(report, doc)
    print(f"timeline-{name}: ok ({len(doc['steps'])} steps, {len(doc['decisions'])} decisions)")


if __name__ == "__main__":
    main()
