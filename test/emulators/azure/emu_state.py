"""The emulated subscription's state (VMs, NICs, long-running operations, health annotations) and the faults tests
inject. One lock guards it all; handlers hold it only while they read or change state, never while they sleep."""
import random
import threading
import time
import uuid


class Fault:
    def __init__(self, spec):
        self.kind = spec["kind"]  # throttle | error | slow | lost | random
        self.count = int(spec.get("count", 1))
        ops = spec.get("ops") or ([spec["op"]] if spec.get("op") else None)
        self.ops = set(ops) if ops else None
        self.code = spec.get("code", "InternalServerError")
        self.status = int(spec.get("status", 500))
        self.message = spec.get("message", "injected by the emulator")
        self.delay_ms = int(spec.get("delay_ms", 2500))
        self.retry_after = spec.get("retry_after", 1)
        self.rate = float(spec.get("rate", 0))
        self.kinds = spec.get("kinds", ["throttle", "error5xx", "lost", "allocation"])
        self.rng = random.Random(spec.get("seed", 1))

    def matches(self, op):
        return self.ops is None or op in self.ops


class State:
    def __init__(self, subscription, resource_group, location, skus):
        self.lock = threading.Lock()
        self.subscription = subscription
        self.resource_group = resource_group
        self.location = location
        self.skus = skus  # name -> ARM resource SKU record for this location
        self.vms = {}  # lower-case name -> VM resource (ARM shape) plus "_" private fields
        self.nics = {}
        self.operations = {}  # id -> {"status", "error", "polls_left", "on_done"}
        self.health = {}  # lower-case vm name -> list of availability status records
        self.faults = []
        self.shortages = set()  # (sku, zone or "", "spot"|"on-demand")
        self.shortages_code = {}  # the same keys -> the ARM error code to answer
        self.requests = {}
        self.faults_injected = {}
        self.api_versions = {}  # op -> set of api-versions seen
        self.token_lifetime_s = 3600
        self.tokens = {}  # access token -> expiry (epoch seconds)
        self.auth_failures = 0
        self.lro_polls = 1
        self.vm_puts = {}  # lower-case name -> number of PUTs that created or updated it
        # what happened to VMs, in order: {"event": "created"|"failed", "name", "tags", "size", "zone", "priority",
        # "vm" (the VM as ARM answered it then)}, {"event": "deleted", "name", "tags"}, {"event": "extension", "vm",
        # "name", "body" (as sent)} — the record tests check launches and terminations against, also once the VMs are
        # gone
        self.history = []

    # ---- tokens ----
    def issue_token(self):
        token = "emu." + uuid.uuid4().hex + uuid.uuid4().hex
        with self.lock:
            self.tokens[token] = time.time() + self.token_lifetime_s
            return token, self.token_lifetime_s

    def token_valid(self, token):
        with self.lock:
            exp = self.tokens.get(token)
            return exp is not None and exp > time.time(), exp is not None

    # ---- faults ----
    def count_request(self, op, api_version):
        with self.lock:
            self.requests[op] = self.requests.get(op, 0) + 1
            if api_version:
                self.api_versions.setdefault(op, set()).add(api_version)

    def take_fault(self, op):
        """The fault meeting this request, or None. Counted faults are used up; random ones stay."""
        with self.lock:
            for f in list(self.faults):
                if not f.matches(op):
                    continue
                if f.kind == "random":
                    if f.rng.random() >= f.rate:
                        continue
                    kind = f.rng.choice(f.kinds)
                    if kind == "allocation" and op != "vm.put":
                        kind = "error5xx"
                    self.faults_injected[kind] = self.faults_injected.get(kind, 0) + 1
                    return Fault({"kind": kind, "delay_ms": f.delay_ms, "retry_after": f.retry_after,
                                  "status": f.rng.choice([500, 502, 503])})
                f.count -= 1
                if f.count <= 0:
                    self.faults.remove(f)
                self.faults_injected[f.kind] = self.faults_injected.get(f.kind, 0) + 1
                return f
        return None

    def clear(self):
        with self.lock:
            self.faults.clear()
            self.shortages.clear()
            self.shortages_code.clear()

    # ---- operations ----
    def new_operation(self, error=None, on_done=None):
        op_id = str(uuid.uuid4())
        with self.lock:
            self.operations[op_id] = {"error": error, "polls_left": self.lro_polls, "on_done": on_done,
                                      "start": time.time()}
        return op_id

    def poll_operation(self, op_id):
        """("InProgress"|"Succeeded"|"Failed", error) or None when unknown."""
        with self.lock:
            op = self.operations.get(op_id)
            if op is None:
                return None
            if op["polls_left"] > 0:
                op["polls_left"] -= 1
                return "InProgress", None
            if op["on_done"] is not None:
                op["on_done"]()
                op["on_done"] = None
            return ("Failed", op["error"]) if op["error"] else ("Succeeded", None)
