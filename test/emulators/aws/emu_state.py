"""The emulated account: the instance-type catalog and prices (from the shared data directory), zones, subnets,
security groups, images, launch templates, instances, issued credentials, the SQS queue and the injected faults.
All access goes through one lock, since the HTTP server answers requests on several threads."""
import hashlib
import json
import os
import secrets
import threading
import time


def _stable_fraction(*parts):
    """A number in [0, 1) that depends only on `parts`, so prices and offerings are the same at every run."""
    digest = hashlib.sha256("/".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


class Fault:
    def __init__(self, spec):
        self.kind = spec["kind"]
        self.count = int(spec.get("count", 1))
        self.action = spec.get("action")
        self.status = int(spec.get("status", 503))
        self.delay_ms = int(spec.get("delay_ms", 0))

    def matches(self, action):
        return self.count > 0 and (self.action is None or self.action == action)


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
                                 "tags": {"karpenter.sh/discovery": "demo"}}]
        self.images = [
            {"id": "ami-0e000000000000a64", "name": "amazon-eks-node-al2023-x86_64-standard-1.30-v20240501",
             "arch": "x86_64", "created": "2024-05-01T08:21:37.000Z", "owner": "602401143452", "tags": {}},
            {"id": "ami-0e000000000000a32", "name": "amazon-eks-node-al2023-arm64-standard-1.30-v20240501",
             "arch": "arm64", "created": "2024-05-01T08:21:37.000Z", "owner": "602401143452", "tags": {}},
        ]
        self.ssm_parameters = {
            "/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/recommended/image_id":
                "ami-0e000000000000a64",
            "/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/arm64/standard/recommended/image_id":
                "ami-0e000000000000a32",
        }
        self.launch_templates = {}  # id -> {id, name, version, created, tags, data}
        self.instances = {}         # id -> dict
        self.fleets_by_token = {}   # client token -> (params signature, rendered response)
        self.ice = set()            # (type, zone, capacity type)
        self.faults = []
        self.queue_name = "nodesmith-interruptions"
        self.queue = []             # messages: {id, receipt, body, visible_at}
        self.request_counts = {}
        self.imds_tokens = {}       # token -> expiry epoch
        self.imds_role = "nodesmith-node-role"

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
        """Consumes and returns the first injected fault of one of `kinds` that applies to `action`."""
        with self.lock:
            for fault in self.faults:
                if fault.kind in kinds and fault.matches(action):
                    fault.count -= 1
                    return fault
            return None

    def count_request(self, action):
        with self.lock:
            self.request_counts[action] = self.request_counts.get(action, 0) + 1

    # ---- the interruption queue ----
    def enqueue(self, body):
        with self.lock:
            self.queue.append({"id": secrets.token_hex(16), "receipt": None, "body": body, "visible_at": 0.0})
