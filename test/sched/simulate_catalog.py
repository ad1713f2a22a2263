"""A sim catalog file states each type's offerings (zone x capacity type, price, available), reserved capacity and
labels of its own, so a scenario from Karpenter's tests can be written down; bad entries are refused naming the
file, the entry's line, the entry, the offering and the field.

The scenario (test/sched/fixtures/simulate-catalog.{json,yaml}) follows Karpenter's provisioning behaviour: the
cheapest available offering the pool allows wins (a reserved one first while its reservation has room: Karpenter's
"Capacity Reservations" suite), an offering marked unavailable is never launched even when cheaper, and a pod's
selector on a type's own label (example.com/tier) picks only the types carrying it. Two pods each need a node: the
first takes the reservation (capacity 1) in us-west-2a, the second falls to on-demand in us-west-2a, not to the
cheaper but unavailable us-west-2b, nor to the cheaper silver and unlabelled types, nor to the spot offering the pool
does not allow.

Usage: simulate_catalog.py NODESMITH FIXTURES_DIR
"""
import json
import os
import subprocess
import sys
import tempfile


def simulate(nodesmith, fixtures):
    proc = subprocess.run([nodesmith, "simulate", "--provider", "sim", "-f", f"{fixtures}/simulate-catalog.yaml",
                           "--catalog", f"{fixtures}/simulate-catalog.json", "--output", "json"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        sys.exit(f"simulate exited {proc.returncode}:\n{proc.stderr}")
    return json.loads(proc.stdout)


def check_scenario(doc):
    assert doc["pods_unschedulable"] == [] and doc["launch_failures"] == [], doc
    claims = sorted(doc["nodeclaims"], key=lambda c: c["price_per_hour"])
    got = [(c["instance_type"], c["zone"], c["capacity_type"], c["price_per_hour"]) for c in claims]
    assert got == [("t1.large", "us-west-2a", "reserved", 0.02), ("t1.large", "us-west-2a", "on-demand", 0.10)], got
    for c in claims:
        assert c["labels"]["example.com/tier"] == "gold", c["labels"]
        assert c["instance_type_options"] == ["t1.large"], c["instance_type_options"]
        assert c["pod_count"] == 1, c
    assert abs(doc["cost_per_hour"] - 0.12) < 1e-9, doc["cost_per_hour"]


def offerings(nodesmith, catalog_text):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "catalog.json")
        with open(path, "w") as f:
            f.write(catalog_text)
        proc = subprocess.run([nodesmith, "offerings", "--provider", "sim", "--set", f"catalog={path}",
                               "--output", "json"], capture_output=True, text=True, timeout=60)
        return proc, path


def entry(**extra):
    """A catalog whose second entry, on line 3, is t1.large with the given fields."""
    good = {"name": "t0.large", "vcpu": 2, "memory_mib": 8192, "arch": "amd64"}
    bad = {"name": "t1.large", "vcpu": 2, "memory_mib": 8192, "arch": "amd64", **extra}
    return f"[\n  {json.dumps(good)},\n  {json.dumps(bad)}\n]\n"


def check_offerings_listed(nodesmith, fixtures):
    with open(f"{fixtures}/simulate-catalog.json") as f:
        proc, _ = offerings(nodesmith, f.read())
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    t1 = next(t for t in doc["instance_types"] if t["name"] == "t1.large")
    assert t1["labels"]["example.com/tier"] == "gold", t1["labels"]
    listed = {(o["zone"], o["capacity_type"]): o for o in t1["offerings"]}
    assert set(listed) == {("us-west-2a", "on-demand"), ("us-west-2b", "on-demand"), ("us-west-2a", "reserved"),
                           ("us-west-2c", "spot")}, sorted(listed)
    assert listed[("us-west-2b", "on-demand")]["available"] is False
    assert listed[("us-west-2a", "reserved")]["available"] is True
    assert abs(listed[("us-west-2c", "spot")]["price_per_hour"] - 0.01) < 1e-9


BAD = [
    (entry(offerings=[{"zone": "us-west-2a", "capacity_type": "on-demand", "price": 1, "cost": 2}]),
     "offering 0: unknown field cost"),
    (entry(offerings=[{"zone": "us-west-2a", "capacity_type": "on-demand", "price": 1},
                      {"zone": "eu-west-1a", "capacity_type": "spot", "price": 1}]),
     "offering 1: field zone is eu-west-1a, which is not one of the sim's zones"),
    (entry(offerings=[{"zone": "us-west-2a", "capacity_type": "dedicated", "price": 1}]),
     "offering 0: field capacity_type is \"dedicated\"; expected spot, on-demand or reserved"),
    (entry(offerings=[{"zone": "us-west-2a", "capacity_type": "reserved", "price": 1}]),
     "offering 0: field reservation_id must be a non-empty string"),
    (entry(offerings=[{"zone": "us-west-2a", "capacity_type": "spot", "price": 1, "reservation_capacity": 2}]),
     "offering 0: reservation_id and reservation_capacity are for capacity_type reserved, not spot"),
    (entry(offerings=[{"zone": "us-west-2a", "capacity_type": "spot", "price": -1}]),
     "offering 0: field price must be a number of at least 0"),
    (entry(offerings=[{"zone": "us-west-2a", "capacity_type": "spot", "price": 1, "available": "yes"}]),
     "offering 0: field available must be true or false"),
    (entry(offerings=[{"zone": "us-west-2a", "capacity_type": "spot", "price": 1},
                      {"zone": "us-west-2a", "capacity_type": "spot", "price": 2}]),
     "offering 1: zone us-west-2a and capacity type spot are already offered by offering 0"),
    (entry(offerings=[]), "field offerings must be a non-empty array"),
    (entry(labels={"example.com/tier": 3}), "label example.com/tier must be a string"),
    (entry(labels={"topology.kubernetes.io/zone": "x"}),
     "label topology.kubernetes.io/zone is in a domain the sim labels itself"),
]


def check_refusals(nodesmith):
    for text, want in BAD:
        proc, path = offerings(nodesmith, text)
        assert proc.returncode != 0, (want, proc.stdout)
        assert f"catalog file {path}: line 3: entry 1 (t1.large): {want}" in proc.stderr, (want, proc.stderr)


def main():
    nodesmith, fixtures = sys.argv[1:3]
    check_scenario(simulate(nodesmith, fixtures))
    check_offerings_listed(nodesmith, fixtures)
    check_refusals(nodesmith)
    print(f"catalog scenario as Karpenter decides it; {len(BAD)} bad entries refused by file, line, entry and field")


if __name__ == "__main__":
    main()
