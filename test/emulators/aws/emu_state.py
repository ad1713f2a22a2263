"""The emulated account: the instance-type catalog and prices (from the shared data directory), zones, subnets,
security groups, images, launch templates, instances, issued credentials, the SQS queue and the injected faults.
All access goes through one lock, since the HTTP server answers requests on several threads."""
import base64
import datetime
import hashlib
import json
import os
import random
import secrets
import threading
import time


def _stable_fraction(*parts):
    """A number in [0, 1) that depends only on `parts`, so prices and offerings are the same at every run."""
    digest = hashlib.sha256("/".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


class Fault:
    """An injected fault. Kinds: throttle, error5xx, error (a given code and status), slow (delay, then answer),
    timeout (answer, but only after delay_ms: the client gives up while the action takes effect), sts_reject, and
    random (each matching request meets one of `kinds` with probability `rate`, drawn from a seeded generator)."""

    def __init__(self, spec):
        self.kind = spec["kind"]
        self.count = int(spec.get("count", 1))
        actions = spec.get("actions")
        self.actions = set(actions) if actions else ({spec["action"]} if spec.get("action") else None)
        self.status = int(spec.get("status", 503))
        self.code = spec.get("code", "InternalError")
        self.delay_ms = int(spec.get("delay_ms", 0))
        self.rate = float(spec.get("rate", 0))
        self.kinds = list(spec.get("kinds", ["throttle", "error5xx"]))
        self.rng = random.Random(spec.get("seed", 1))

    def matches(self, action):
        return self.count > 0 and (self.actions is None or action in self.actions)


class State:
    def __init__(self, data_dir, region, access_key, secret_key):
        self.lock = threading.RLock()
        self.region = region
        self.static_keys = {access_key: (secret_key, None)}
        self.temporary_keys = {}  # akid -> (secret, token, expires_epoch)
        self.credential_lifetime_s = 3600
        with open(os.path.join(data_dir, "aws-instance-types.json"), encoding="utf-8") as f:
            self.types = {t["name"]: t for t in json.load(f)}
        prices_file = os.path.join(data_dir, f"aws-prices-{region}.json")
        if not os.path.exists(prices_file):
            prices_file = os.path.join(data_dir, "aws-prices-us-east-1.json")
        with open(prices_file, encoding="utf-8") as f:
            self.prices = json.load(f)
        self.type_names = sorted(n for n in self.types if n in self.prices)
        short = "".join(p[0] for p in region.split("-")[:-1]) + region.split("-")[-1]
        self.zones = [(f"{region}{s}", f"{short}-az{i + 1}") for i, s in enumerate("abc")]
        self.subnets = [
            {"id": f"subnet-0e{i:015x}", "zone": z, "zone_id": zid, "cidr": f"10.0.{i * 32}.0/19",
             "available": 8000 - i * 100, "tags": {"karpenter.sh/discovery": "demo", "Name": f"demo-{z}"}}
            for i, (z, zid) in enumerate(self.zones)]
        self.security_groups = [{"id": "sg-0e000000000000001", "name": "demo-node",
                                 "tags": {"karpenter.sh/discovery": "demo"}},
                                {"id": "sg-0e000000000000002", "name": "demo-extra",
                                 "tags": {"karpenter.sh/discovery": "other"}}]
        self.images = []
        self.ssm_parameters = {}
        eks = "/aws/service/eks/optimized-ami/1.30"
        for family, arch, variant, image_id, parameter, name in [
            ("al2023", "x86_64", "standard", "ami-0e000000000000a64",
             f"{eks}/amazon-linux-2023/x86_64/standard/recommended/image_id", "amazon-eks-node-al2023-x86_64-standard"),
            ("al2023", "arm64", "standard", "ami-0e000000000000a32",
             f"{eks}/amazon-linux-2023/arm64/standard/recommended/image_id", "amazon-eks-node-al2023-arm64-standard"),
            ("al2023", "x86_64", "nvidia", "ami-0e0000000000nv64",
             f"{eks}/amazon-linux-2023/x86_64/nvidia/recommended/image_id", "amazon-eks-node-al2023-x86_64-nvidia"),
            ("al2023", "arm64", "nvidia", "ami-0e0000000000nv32",
             f"{eks}/amazon-linux-2023/arm64/nvidia/recommended/image_id", "amazon-eks-node-al2023-arm64-nvidia"),
            ("al2", "x86_64", "standard", "ami-0e00000000000264",
             f"{eks}/amazon-linux-2/recommended/image_id", "amazon-eks-node"),
            ("al2", "arm64", "standard", "ami-0e00000000000232",
             f"{eks}/amazon-linux-2-arm64/recommended/image_id", "amazon-eks-arm64-node"),
            ("al2", "x86_64", "nvidia", "ami-0e0000000000g264",
             f"{eks}/amazon-linux-2-gpu/recommended/image_id", "amazon-eks-gpu-node"),
            ("bottlerocket", "x86_64", "standard", "ami-0e00000000000b64",
             "/aws/service/bottlerocket/aws-k8s-1.30/x86_64/latest/image_id", "bottlerocket-aws-k8s-1.30-x86_64"),
            ("bottlerocket", "arm64", "standard", "ami-0e00000000000b32",
             "/aws/service/bottlerocket/aws-k8s-1.30/arm64/latest/image_id", "bottlerocket-aws-k8s-1.30-aarch64"),
            ("windows2019", "x86_64", "standard", "ami-0e0000000000w219",
             "/aws/service/ami-windows-latest/Windows_Server-2019-English-Core-EKS_Optimized-1.30/image_id",
             "Windows_Server-2019-English-Core-EKS_Optimized-1.30"),
            ("windows2022", "x86_64", "standard", "ami-0e0000000000w222",
             "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.30/image_id",
             "Windows_Server-2022-English-Core-EKS_Optimized-1.30"),
        ]:
            self.images.append({"id": image_id, "name": f"{name}-v20240501", "arch": arch,
                                "created": "2024-05-01T08:21:37.000Z", "owner": "602401143452",
                                "tags": {"family": family, "variant": variant}})
            self.ssm_parameters[parameter] = image_id
        # a private image, for selectors by name, owner and tags
        self.images.append({"id": "ami-0e00000000000c64", "name": "team-golden-al2023-x86_64", "arch": "x86_64",
                            "created": "2024-06-01T00:00:00.000Z", "owner": "111122223333",
                            "tags": {"team": "platform"}})
        self.instance_profiles = {"KarpenterNodeRole-demo", "KarpenterNodeInstanceProfile-demo"}
        self.clusters = {"demo"}
        self.launch_templates = {}  # id -> {id, name, version, created, tags, data}
        self.instances = {}         # id -> dict
        self.fleets_by_token = {}   # client token -> (params signature, rendered response)
        self.fleet_requests = []    # every CreateFleet's parameters, newest last
        self.faults_injected = {}   # kind -> how many requests met it
        self.faults_by_action = {}  # action -> {kind: how many}
        self.ice = set()            # (type, zone, capacity type)
        self.capacity_reservations = {}  # id -> dict (see add_capacity_reservation)
        self.faults = []
        self.queue_name = "nodesmith-interruptions"
        self.queue = []             # messages: {id, receipt, body, visible_at}
        self.request_counts = {}
        self.pricing_token_mode = ""  # "", "empty" or "repeat": see emu_json.Pricing
        self.connections = 0        # connections accepted (keep-alive reuse shows as fewer than requests)
        self.user_agents = {}       # User-Agent -> requests (control requests excluded)
        self.imds_tokens = {}       # token -> expiry epoch
        self.sso_token = "emulator-sso-access-token"        # what GetRoleCredentials accepts
        self.container_token = "emulator-pod-identity-token"  # what the container endpoint accepts
        self.imds_role = "nodesmith-node-role"
        self.clock_offset_s = 0  # how far the emulator's clock runs ahead of the machine's

    def utcnow(self):
        return datetime.datetime.utcnow() + datetime.timedelta(seconds=self.clock_offset_s)

    # ---- prices and offerings ----
    def on_demand_price(self, name):
        return float(self.prices[name])

    def spot_price(self, name, zone):
        return round(self.on_demand_price(name) * (0.3 + 0.2 * _stable_fraction(name, zone)), 6)

    def offered(self, name, zone):
        """Every type is offered in the first two zones; in the third, two types in three are."""
        return zone != self.zones[2][0] or _stable_fraction(name, "offered") < 0.67

    # ---- credentials ----
    def secret_for(self, akid):
        with self.lock:
            if akid in self.static_keys:
                return self.static_keys[akid]
            found = self.temporary_keys.get(akid)
            if found and found[2] > time.time():
                return found[0], found[1]
            return None

    def issue_credentials(self):
        with self.lock:
            akid = "ASIAEMU" + secrets.token_hex(6).upper()
            secret = secrets.token_urlsafe(30)
            token = "IQoJemulator" + secrets.token_urlsafe(48)
            expires = time.time() + self.credential_lifetime_s
            self.temporary_keys[akid] = (secret, token, expires)
            return akid, secret, token, expires

    # ---- faults ----
    def take_fault(self, action, kinds):
        """Consumes and returns the first injected fault of one of `kinds` that applies to `action`. A random fault
        is not consumed: it draws, and yields a one-off fault of the kind drawn (or nothing)."""
        with self.lock:
            for fault in self.faults:
                if fault.kind == "random" and fault.matches(action):
                    if fault.rng.random() >= fault.rate:
                        continue
                    drawn = fault.rng.choice(fault.kinds)
                    if drawn not in kinds:
                        continue
                    self._count_fault(action, drawn)
                    return Fault({"kind": drawn, "status": 503 if drawn == "error5xx" else 400,
                                  "delay_ms": fault.delay_ms})
                if fault.kind in kinds and fault.matches(action):
                    fault.count -= 1
                    self._count_fault(action, fault.kind)
                    return fault
            return None

    def _count_fault(self, action, kind):
        self.faults_injected[kind] = self.faults_injected.get(kind, 0) + 1
        per_action = self.faults_by_action.setdefault(action, {})
        per_action[kind] = per_action.get(kind, 0) + 1

    def count_request(self, action):
        with self.lock:
            self.request_counts[action] = self.request_counts.get(action, 0) + 1

    # ---- capacity reservations ----
    def add_capacity_reservation(self, spec):
        """An On-Demand Capacity Reservation of `count` instances of one type in one zone, `available` of them free
        (default: all), owned by this account unless `owner` says otherwise."""
        with self.lock:
            rid = spec.get("id") or "cr-0e" + secrets.token_hex(8)[:15]
            zone = spec["zone"]
            zone_id = next(zid for z, zid in self.zones if z == zone)
            count = int(spec.get("count", 1))
            self.capacity_reservations[rid] = {
                "id": rid, "instance_type": spec["instance_type"], "zone": zone, "zone_id": zone_id,
                "owner": spec.get("owner", "111122223333"), "total": count,
                "available": int(spec.get("available", count)), "state": spec.get("state", "active"),
                "match": spec.get("instance_match_criteria", "targeted"), "tags": dict(spec.get("tags", {})),
                "end": spec.get("end_date"), "created": time.time(),
                "type": spec.get("reservation_type", "default")}
            return rid

    # ---- launch templates ----
    def template_view(self, t):
        """A launch template as tests read it: its parameters, with the user data decoded."""
        data = dict(t["data"])
        if "UserData" in data:
            data["UserData"] = base64.b64decode(data["UserData"]).decode("utf-8", "replace")
        return {"id": t["id"], "name": t["name"], "tags": t["tags"], "data": data}

    # ---- the interruption queue ----
    def enqueue(self, body):
        with self.lock:
            self.queue.append({"id": secrets.token_hex(16), "receipt": None, "body": body, "visible_at": 0.0})
