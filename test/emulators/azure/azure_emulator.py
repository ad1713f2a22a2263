#!/usr/bin/python3
"""A local Azure emulator for nodesmith's Azure provider tests (README.md has the details).

Two listeners on 127.0.0.1: HTTPS (a CA generated at start-up) for ARM (Compute, Network, Resource SKUs,
ResourceHealth), the Entra ID token endpoint, the Retail Prices API and the control endpoint; plain HTTP for IMDS, as
on a VM. The first line on stdout is "PORT <https-port> IMDS <http-port> CA <ca.pem path>".

Every ARM request must carry a bearer token the emulator issued (and that has not expired) and an api-version ARM
publishes for the resource type; bodies are checked (emu_arm.py).

Usage: azure_emulator.py --data-dir ../shared/data [--location southcentralus] [--verbose]
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import emu_aad  # noqa: E402
import emu_catalog  # noqa: E402
import emu_tls  # noqa: E402
from emu_arm import API_VERSIONS, Arm, err  # noqa: E402
from emu_state import Fault, State  # noqa: E402

CONFIG = {"tenant": "72f988bf-86f1-41af-91ab-2d7cd011db47", "client_id": "9a1e5d5e-1f3b-4c2a-8d33-0f1e2c3b4a59",
          "client_secret": "emulator~client~secret", "federated_token": "eyJhbGciOiJSUzI1NiJ9.emulator.projected"}
SUB = "00000000-1111-2222-3333-444444444444"
RG = "MC_demo_demo_southcentralus"

ROUTES = [  # (method, regex over the path, op, api family)
    ("GET", r"/subscriptions/([^/]+)/providers/Microsoft\.Compute/skus", "skus", "skus"),
    ("GET", r"/subscriptions/[^/]+/providers/Microsoft\.(Compute|Network)/locations/[^/]+/operations/([^/]+)",
     "operation", None),
    ("GET", r"/subscriptions/[^/]+/providers/Microsoft\.(Compute|Network)/locations/[^/]+/operationResults/([^/]+)",
     "operation_result", None),
    ("GET", r"/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.Compute/virtualMachines",
     "vm.list", "compute"),
    ("GET", r"/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.Compute/virtualMachines/([^/]+)/"
            r"instanceView", "vm.instanceview", "compute"),
    ("*", r"/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.Compute/virtualMachines/([^/]+)/"
          r"extensions/([^/]+)", "vmext", "compute"),
    ("GET", r"/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.Compute/virtualMachines/([^/]+)/"
            r"extensions", "vmext.list", "compute"),
    ("*", r"/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.Compute/virtualMachines/([^/]+)",
     "vm", "compute"),
    ("GET", r"/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.Network/networkInterfaces",
     "nic.list", "network"),
    ("*", r"/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.Network/networkInterfaces/([^/]+)",
     "nic", "network"),
    ("GET", r"/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.ResourceHealth/availabilityStatuses",
     "health.list", "health"),
    ("GET", r"/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.Network/virtualNetworks/([^/]+)/"
            r"subnets/([^/]+)", "subnet.get", "network"),
    ("GET", r"/subscriptions/([^/]+)/providers/Microsoft\.Compute/locations/([^/]+)/communityGalleries/([^/]+)/"
            r"images/([^/]+)/versions/([^/]+)", "gallery.version.get", "gallery"),
]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "nodesmith-azure-emulator"

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("azure emulator: " + (fmt % args) + "\n")

    def headers_lower(self):
        return {k.lower(): v for k, v in self.headers.items()}

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def answer(self, status, headers, body):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("x-ms-request-id", os.urandom(8).hex())
        if body is not None:
            self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data and self.command != "HEAD":
            self.wfile.write(data)

    def lose_answer(self):
        """The action took effect but the answer never reaches the client."""
        self.close_connection = True
        try:
            self.connection.shutdown(2)
        except OSError:
            pass

    def do_GET(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def do_PATCH(self):
        self.dispatch()

    def dispatch(self):
        try:
            if self.server.imds:
                return self.imds()
            self.route()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def imds(self):
        st = self.server.state
        url = urlparse(self.path)
        if url.path.rstrip("/") != "/metadata/identity/oauth2/token":
            return self.answer(404, {}, {"error": "not_found"})
        st.count_request("imds.token", None)
        fault = st.take_fault("imds.token")
        if fault is not None and fault.kind in ("throttle", "error5xx", "lost", "error"):
            return self.fault_answer(fault)
        status, body = emu_aad.imds_token(st, CONFIG, self.path, self.headers_lower())
        self.answer(status, {}, body)

    def fault_answer(self, fault):
        if fault.kind == "lost":
            return self.lose_answer()
        if fault.kind == "throttle":
            return self.answer(429, {"Retry-After": str(fault.retry_after)},
                               {"error": {"code": "TooManyRequests", "message": "The request is being throttled."}})
        if fault.kind == "error5xx":
            return self.answer(fault.status, {}, {"error": {"code": "InternalServerError" if fault.status == 500 else
                                                            "ServiceUnavailable", "message": "injected"}})
        return self.answer(fault.status, {}, {"error": {"code": fault.code, "message": fault.message}})

    def route(self):
        st = self.server.state
        url = urlparse(self.path)
        path = unquote(url.path)
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        body = self.body()
        if path.startswith("/_emulator/"):
            return self.control(path[len("/_emulator/"):], body)
        m = re.fullmatch(r"/([^/]+)/v2\.0/\.well-known/openid-configuration", path)
        if m and self.command == "GET":
            status, out = emu_aad.openid_metadata(self.server.base, m.group(1))
            return self.answer(status, {}, out)
        m = re.fullmatch(r"/([^/]+)/oauth2/v2\.0/token", path)
        if m and self.command == "POST":
            st.count_request("token", None)
            fault = st.take_fault("token")
            if fault is not None and fault.kind in ("throttle", "error5xx", "lost", "error"):
                return self.fault_answer(fault)
            status, out = emu_aad.token(st, CONFIG, m.group(1), body)
            return self.answer(status, {}, out)
        if path == "/api/retail/prices" and self.command == "GET":
            return self.prices(query)
        for method, pattern, op, family in ROUTES:
            m = re.fullmatch(pattern, path, flags=re.IGNORECASE)
            if m and (method == "*" or method == self.command):
                return self.arm(op, family, m, query, body)
        self.answer(404, {}, {"error": {"code": "InvalidResourceType", "message": f"no route for {self.command} "
                                                                                   f"{path}"}})

    def prices(self, query):
        st = self.server.state
        st.count_request("prices", query.get("api-version"))
        fault = st.take_fault("prices")
        if fault is not None and fault.kind in ("throttle", "error5xx", "lost", "error"):
            return self.fault_answer(fault)
        filt = query.get("$filter", "")
        items = self.server.price_items if f"armRegionName eq '{st.location}'" in filt or "$skip" in query else []
        if "$filter" in query and "serviceName eq 'Virtual Machines'" not in filt:
            items = []
        self.answer(200, {}, emu_catalog.price_page(items, self.server.base, query))

    def check_auth(self):
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Bearer "):
            return err(401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.",
                       {"WWW-Authenticate": 'Bearer authorization_uri="https://login.microsoftonline.com/'
                                           f'{CONFIG["tenant"]}", error="invalid_token"'})
        valid, known = self.server.state.token_valid(auth[7:])
        if valid:
            return None
        with self.server.state.lock:
            self.server.state.auth_failures += 1
        code = "ExpiredAuthenticationToken" if known else "InvalidAuthenticationToken"
        return err(401, code, "The access token expiry UTC time is earlier than current UTC time." if known
                   else "The access token is invalid.", {"WWW-Authenticate": 'Bearer error="invalid_token"'})

    def arm(self, op, family, m, query, body):
        st, arm = self.server.state, self.server.arm
        name = None
        if op in ("vm", "nic", "vmext"):
            name = m.group(3)
            op = f"{op}.{self.command.lower()}"
        st.count_request(op, query.get("api-version"))
        bad = self.check_auth()
        if bad:
            return self.answer(*bad)
        if family is not None:
            version = query.get("api-version")
            if not version:
                return self.answer(*err(400, "MissingApiVersionParameter", "The api-version query parameter "
                                        "(?api-version=) is required for all requests."))
            if version not in API_VERSIONS[family]:
                return self.answer(*err(400, "InvalidApiVersionParameter", f"The api-version '{version}' is invalid. "
                                        f"The supported versions are '{','.join(sorted(API_VERSIONS[family]))}'."))
            if m.group(1).lower() != st.subscription:
                return self.answer(*err(404, "SubscriptionNotFound", f"The subscription '{m.group(1)}' could not be "
                                        "found."))
            # subnets live in the cluster's network group, which may be any; the rest in the node resource group
            if family not in ("skus", "gallery") and op != "subnet.get" and \
                    m.group(2).lower() != st.resource_group.lower():
                return self.answer(*err(404, "ResourceGroupNotFound", f"Resource group '{m.group(2)}' could not be "
                                        "found."))
        fault = st.take_fault(op)
        if fault is not None and fault.kind == "slow":
            time.sleep(fault.delay_ms / 1000)
        if fault is not None and fault.kind in ("throttle", "error5xx", "error"):
            return self.fault_answer(fault)
        parsed = None
        if self.command == "PUT":
            try:
                parsed = json.loads(body or b"null")
            except ValueError:
                return self.answer(*err(400, "InvalidRequestContent", "The request content was not valid JSON."))
        base = self.server.base
        if op == "skus":
            filt = query.get("$filter")
            if filt is not None and filt != f"location eq '{st.location}'":
                result = 200, {}, {"value": []}
            else:
                result = 200, {}, emu_catalog.sku_pages(st, base, query)
        elif op == "operation":
            result = arm.operation(m.group(2), False)
        elif op == "operation_result":
            result = arm.operation(m.group(2), True)
        elif op == "vm.list":
            result = arm.list_vms(base, query)
        elif op == "vm.instanceview":
            result = arm.instance_view(m.group(3))
        elif op == "vm.put":
            result = arm.put_vm(name, parsed, base, fault)
        elif op == "vm.get":
            result = arm.get_vm(name, query.get("$expand") == "instanceView")
        elif op == "vm.delete":
            result = arm.delete_vm(name, base)
        elif op == "nic.list":
            result = arm.list_nics()
        elif op == "nic.put":
            result = arm.put_nic(name, parsed, base)
        elif op == "nic.get":
            result = arm.get_nic(name)
        elif op == "nic.delete":
            result = arm.delete_nic(name, base)
        elif op == "health.list":
            result = arm.list_health()
        elif op == "vmext.put":
            result = arm.put_extension(name, m.group(4), parsed, base)
        elif op == "vmext.get":
            result = arm.get_extension(name, m.group(4))
        elif op == "vmext.list":
            result = arm.list_extensions(m.group(3))
        elif op == "subnet.get":
            result = arm.get_subnet(m.group(2), m.group(3), m.group(4))
        elif op == "gallery.version.get":
            result = arm.get_gallery_version(m.group(2), m.group(3), m.group(4), m.group(5))
        else:
            result = err(405, "MethodNotAllowed", f"{self.command} is not allowed here")
        if fault is not None and fault.kind == "lost":
            return self.lose_answer()
        self.answer(*result)

    def control(self, what, body):
        st = self.server.state
        spec = json.loads(body or b"{}") if self.command == "POST" else {}
        if what == "faults" and self.command == "POST":
            if spec["kind"] == "capacity":
                with st.lock:
                    key = (spec["sku"], spec.get("zone", ""), spec.get("capacity_type", "on-demand"))
                    st.shortages.add(key)
                    if spec.get("code"):
                        st.shortages_code[key] = spec["code"]
            else:
                with st.lock:
                    st.faults.append(Fault(spec))
            return self.answer(200, {}, {})
        if what == "clear" and self.command == "POST":
            st.clear()
            return self.answer(200, {}, {})
        if what == "events" and self.command == "POST":
            return self.answer(*self.server.arm.inject_event(spec))
        if what == "tokens" and self.command == "POST":
            with st.lock:
                st.token_lifetime_s = int(spec.get("lifetime_s", 3600))
                if spec.get("expire_all"):
                    st.tokens = {t: 0 for t in st.tokens}
            return self.answer(200, {}, {})
        if what == "state" and self.command == "GET":
            with st.lock:
                out = {"vms": [dict(self.server.arm.public_vm(v), custom_data=v.get("_custom_data"),
                                    extensions=[dict(e, request=v["_ext_requests"][k], protected_settings=(
                                        v["_ext_requests"][k].get("properties") or {}).get("protectedSettings"))
                                                for k, e in v.get("_extensions", {}).items()])
                               for v in st.vms.values()],
                       "history": list(st.history),
                       "nics": list(st.nics.values()), "requests": dict(st.requests),
                       "api_versions": {k: sorted(v) for k, v in st.api_versions.items()},
                       "faults_injected": dict(st.faults_injected), "auth_failures": st.auth_failures,
                       "vm_puts": dict(st.vm_puts), "tokens_issued": len(st.tokens)}
            return self.answer(200, {}, out)
        if what == "nics" and self.command == "POST":  # a NIC left behind by a crashed launch
            status, headers, out = self.server.arm.put_nic(spec["name"], spec["body"], self.server.base)
            return self.answer(status, {}, out)
        self.answer(404, {}, {"error": {"code": "NotFound", "message": f"no control endpoint {what}"}})


def serve(server):
    server.serve_forever(poll_interval=0.2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--location", default="southcentralus")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="nodesmith-azure-emu-")
    ca, context = emu_tls.make_ca_and_server(tmp)
    state = State(SUB, RG, args.location, emu_catalog.load_skus(args.data_dir, args.location))
    https = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    https.socket = context.wrap_socket(https.socket, server_side=True)
    imds = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    for srv, is_imds in ((https, False), (imds, True)):
        srv.daemon_threads = True
        srv.state, srv.verbose, srv.imds = state, args.verbose, is_imds
        srv.arm = Arm(state)
        srv.base = f"https://127.0.0.1:{https.server_address[1]}"
        srv.price_items = emu_catalog.price_items(emu_catalog.load_prices(args.data_dir, args.location),
                                                  args.location, state.skus)
    threading.Thread(target=serve, args=(imds,), daemon=True).start()
    print(f"PORT {https.server_address[1]} IMDS {imds.server_address[1]} CA {ca}", flush=True)
    # Exit with the process that started us: stdin closes when it goes.
    threading.Thread(target=serve, args=(https,), daemon=True).start()
    try:
        sys.stdin.read()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
