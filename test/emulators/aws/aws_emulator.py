#!/usr/bin/python3
"""A local AWS emulator for nodesmith's AWS provider tests.

One HTTP server on 127.0.0.1 (a free port; "PORT <n>" is the first line on stdout) speaks the real protocols on one
endpoint, so AWS_ENDPOINT_URL and AWS_EC2_METADATA_SERVICE_ENDPOINT can both point at it:
  - EC2 Query/XML (POST form body, SigV4 for service "ec2");
  - STS: AssumeRoleWithWebIdentity (unsigned, as in AWS) and GetCallerIdentity (signed);
  - SQS, SSM and Pricing JSON protocols (X-Amz-Target AmazonSQS.*, AmazonSSM.*, AWSPriceListService.*), and SQS's
    older Query protocol too (what botocore before 1.31 speaks);
  - EKS REST-JSON: DescribeCluster (GET /clusters/NAME);
  - IMDSv2 under /latest/ (a PUT session token is required for every GET);
  - the SSO portal's GetRoleCredentials (GET /federation/credentials) and a container credentials endpoint
    (GET /v1/credentials, as EKS Pod Identity's agent and ECS serve them), each checking the token it was given.
Every signed request is checked with botocore's SigV4 signer (emu_sigv4.py): a wrong signature is refused with
SignatureDoesNotMatch, an unknown key with AuthFailure, and a request dated more than 5 minutes away with
RequestExpired, as AWS does.

Control endpoint (unsigned JSON, for tests; README.md has the details):
  POST /_emulator/faults  {"kind": "throttle"|"error5xx"|"error"|"slow"|"timeout"|"sts_reject", "count": n,
                           "action": "DescribeInstances" or "actions": [...], "status": 503, "code": "...",
                           "delay_ms": 1500}
                          {"kind": "random", "rate": 0.2, "kinds": ["throttle", "error5xx", "timeout"], "seed": 1,
                           "delay_ms": 2500}
                          {"kind": "ice", "instance_type": "m5.large", "zone": "us-east-1a", "capacity_type": "spot"}
  POST /_emulator/clear   removes every fault
  POST /_emulator/events  {"kind": "spot-interruption"|"rebalance"|"state-change"|"scheduled-change"|
                           "capacity-reservation-interruption", "instance_id": "i-...", "state": "stopping",
                           "detail_type": "...", "termination_time": "2030-01-01T00:00:00Z"}  (queued into the SQS
                           queue; detail_type and termination_time for a capacity reservation interruption)
  POST /_emulator/instance_status {"instance_id": "i-...", "instanceStatus": "impaired", "systemStatus": "impaired",
                          "impaired_since": epoch, "events": [{"code": "instance-retirement", "not_before": epoch}]}
                          what DescribeInstanceStatus reports of an instance (absent checks are ok; impaired_since
                          defaults to the emulator's now; an empty body makes it healthy again)
  POST /_emulator/credentials {"lifetime_s": 900}   lifetime of credentials issued by STS and IMDS from now on
  POST /_emulator/ssm     {"name": "/aws/service/...", "value": "ami-..."}  sets an SSM parameter
  POST /_emulator/clusters {"name": "prod"}  adds an EKS cluster DescribeCluster knows
  POST /_emulator/capacity_reservations {"instance_type": "m5.large", "zone": "us-east-1a", "count": 2,
                          "available": 2, "tags": {...}, "owner": "111122223333", "id": "cr-...", "state": "active",
                          "instance_match_criteria": "targeted", "end_date": "2030-01-01T00:00:00.000Z"}
                          adds a capacity reservation (answers {"id": ...}); GET lists them
  POST /_emulator/clock   {"offset_s": 43200}  runs the emulator's clock (signature expiry) ahead of the machine's
  POST /_emulator/sso     {"token": "..."}  the SSO access token GetRoleCredentials accepts
  POST /_emulator/container {"token": "..."}  the Authorization token the container endpoint accepts
  POST /_emulator/pricing {"token_mode": "empty"|"repeat"|""}  GetProducts' last page has NextToken "", or every page
                          repeats the token it was asked for
  GET  /_emulator/state   {"instances": [...], "requests": {action: count}, "queue": n, ...}
  GET  /_emulator/launch_templates, GET /_emulator/fleets   what was created and asked for

Usage: aws_emulator.py --data-dir ../shared/data [--region us-east-1] [--port 0]
       [--access-key AKIDEMULATOR --secret-key ...] [--tls-cert server.pem --tls-key server.key] [--verbose]
With --tls-cert the emulator serves HTTPS only (for the TLS tests: a generated CA signs the certificate).
/_emulator/state also counts the connections accepted and the User-Agent of every API request.
"""
import argparse
import json
import os
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import emu_ec2  # noqa: E402
import emu_identity  # noqa: E402
import emu_json  # noqa: E402
import emu_sigv4  # noqa: E402
from emu_state import Fault, State  # noqa: E402

JSON_SERVICES = {"AmazonSQS": "sqs", "AmazonSSM": "ssm", "AWSPriceListService": "pricing"}
REQUEST_FAULTS = ("slow", "timeout", "throttle", "error5xx", "error")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "nodesmith-aws-emulator"

    # ---- plumbing ----
    def setup(self):
        super().setup()
        with self.server.state.lock:
            self.server.state.connections += 1

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("emulator: " + (fmt % args) + "\n")

    def lower_headers(self):
        out = {}
        for name, value in self.headers.items():
            key = name.lower()
            out[key] = out[key] + "," + value if key in out else value
        return out

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send(self, status, content_type, body, extra_headers=(), fault=None):
        """Answers; under a timeout fault, only after its delay (a client that gave up has gone by then)."""
        if fault is not None and fault.kind == "timeout":
            time.sleep(fault.delay_ms / 1000)
        data = body.encode() if isinstance(body, str) else body
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-amzn-RequestId", os.urandom(8).hex() + "-emu")
            for name, value in extra_headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def send_json_error(self, status, type_, message, query_error=None):
        extra = [("x-amzn-query-error", query_error)] if query_error else []
        self.send(status, "application/x-amz-json-1.0", json.dumps({"__type": type_, "message": message}), extra)

    # ---- verbs ----
    def do_GET(self):
        self.dispatch("GET")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_POST(self):
        self.dispatch("POST")

    def dispatch(self, method):
        state = self.server.state
        path = self.path.split("?", 1)[0]
        headers = self.lower_headers()
        body = self.read_body()
        if not path.startswith("/_emulator/"):
            with state.lock:
                agent = headers.get("user-agent", "")
                state.user_agents[agent] = state.user_agents.get(agent, 0) + 1
        if path.startswith("/latest/"):
            status, ctype, text = emu_identity.imds(state, method, path, headers)
            self.send(status, ctype, text)
        elif method == "GET" and path == "/federation/credentials":
            state.count_request("GetRoleCredentials")
            query = dict(parse_qsl(self.path.split("?", 1)[1] if "?" in self.path else ""))
            status, text = emu_identity.sso_role_credentials(state, query, headers)
            self.send(status, "application/json", text)
        elif method == "GET" and path == "/v1/credentials":
            state.count_request("ContainerCredentials")
            status, text = emu_identity.container_credentials(state, headers)
            self.send(status, "application/json", text)
        elif path.startswith("/_emulator/"):
            self.control(method, path, body)
        elif method == "GET" and path.startswith("/clusters/"):
            self.eks_call(method, path, headers, body)
        elif method != "POST":
            self.send(405, "text/plain", "")
        elif "x-amz-target" in headers:
            self.json_call(headers, body)
        else:
            self.query_call(headers, body)

    # ---- the control endpoint ----
    def control(self, method, path, body):
        state = self.server.state
        spec = json.loads(body or b"{}")
        if path == "/_emulator/state" and method == "GET":
            with state.lock:
                answer = {"instances": list(state.instances.values()), "requests": dict(state.request_counts),
                          "queue": len(state.queue), "launch_templates": len(state.launch_templates),
                          "faults": sum(f.count for f in state.faults if f.kind != "random"),
                          "faults_injected": dict(state.faults_injected),
                          "faults_by_action": {a: dict(k) for a, k in state.faults_by_action.items()},
                          "connections": state.connections, "user_agents": dict(state.user_agents),
                          "port": self.server.server_address[1]}
            self.send(200, "application/json", json.dumps(answer))
        elif path == "/_emulator/launch_templates" and method == "GET":
            with state.lock:
                answer = [state.template_view(t) for t in state.launch_templates.values()]
            self.send(200, "application/json", json.dumps(answer))
        elif path == "/_emulator/launch_templates/delete" and method == "POST":
            with state.lock:
                found = state.launch_templates.pop(spec["id"], None)
            self.send(200 if found else 404, "application/json", "{}")
        elif path == "/_emulator/fleets" and method == "GET":
            with state.lock:
                answer = list(state.fleet_requests)
            self.send(200, "application/json", json.dumps(answer))
        elif path == "/_emulator/faults" and method == "POST":
            with state.lock:
                if spec.get("kind") == "ice":
                    state.ice.add((spec["instance_type"], spec["zone"], spec.get("capacity_type", "on-demand")))
                else:
                    state.faults.append(Fault(spec))
            self.send(200, "application/json", "{}")
        elif path == "/_emulator/clear" and method == "POST":
            with state.lock:
                state.faults.clear()
                state.ice.clear()
            self.send(200, "application/json", "{}")
        elif path == "/_emulator/events" and method == "POST":
            state.enqueue(spec["body"] if spec["kind"] == "raw" else
                          emu_json.event_body(state, spec["kind"], spec["instance_id"], spec))
            self.send(200, "application/json", "{}")
        elif path == "/_emulator/instance_status" and method == "POST":
            with state.lock:
                found = state.instances.get(spec["instance_id"])
                if found is not None:
                    found["health"] = {k: spec[k] for k in ("instanceStatus", "systemStatus", "events")
                                       if k in spec}
                    found["health"]["impaired_since"] = spec.get("impaired_since", time.time() + state.clock_offset_s)
            self.send(200 if found is not None else 404, "application/json", "{}")
        elif path == "/_emulator/credentials" and method == "POST":
            with state.lock:
                state.credential_lifetime_s = int(spec["lifetime_s"])
            self.send(200, "application/json", "{}")
        elif path == "/_emulator/ssm" and method == "POST":
            with state.lock:
                state.ssm_parameters[spec["name"]] = spec["value"]
            self.send(200, "application/json", "{}")
        elif path == "/_emulator/clock" and method == "POST":
            with state.lock:
                state.clock_offset_s = int(spec["offset_s"])
            self.send(200, "application/json", "{}")
        elif path == "/_emulator/sso" and method == "POST":
            with state.lock:
                state.sso_token = spec["token"]
            self.send(200, "application/json", "{}")
        elif path == "/_emulator/container" and method == "POST":
            with state.lock:
                state.container_token = spec["token"]
            self.send(200, "application/json", "{}")
        elif path == "/_emulator/pricing" and method == "POST":
            with state.lock:
                state.pricing_token_mode = spec.get("token_mode", "")
            self.send(200, "application/json", "{}")
        elif path == "/_emulator/capacity_reservations" and method == "POST":
            self.send(200, "application/json", json.dumps({"id": state.add_capacity_reservation(spec)}))
        elif path == "/_emulator/capacity_reservations" and method == "GET":
            with state.lock:
                answer = list(state.capacity_reservations.values())
            self.send(200, "application/json", json.dumps(answer))
        elif path == "/_emulator/clusters" and method == "POST":
            with state.lock:
                state.clusters.add(spec["name"])
            self.send(200, "application/json", "{}")
        else:
            self.send(404, "application/json", json.dumps({"error": f"no control endpoint {method} {path}"}))

    # ---- faults shared by both protocols ----
    def injected(self, action):
        """The fault this request meets, or None. A slow fault delays the request and is the only fault applied to
        it, so a client that gives up on it meets the next fault on its next attempt; a timeout fault lets the
        request take effect and delays only the answer (see send)."""
        fault = self.server.state.take_fault(action, REQUEST_FAULTS)
        if fault is not None and fault.kind == "slow":
            time.sleep(fault.delay_ms / 1000)
            return None
        return fault

    def verify(self, method, headers, body):
        state = self.server.state
        try:
            return emu_sigv4.verify(method, self.path, headers, body, state.secret_for, now=state.utcnow())
        except emu_sigv4.SignatureError:
            state.count_request("signature_failures")
            raise

    # ---- Query protocol: EC2 and STS ----
    def query_call(self, headers, body):
        state = self.server.state
        params = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        action = params.get("Action", "")
        if action == "AssumeRoleWithWebIdentity":
            state.count_request(action)
            try:
                self.send(200, "text/xml", emu_identity.assume_role_with_web_identity(state, params))
            except emu_identity.StsError as e:
                self.send(e.status, "text/xml", emu_identity.sts_error_xml(e.code, e.message))
            return
        try:
            akid, _, service = self.verify("POST", headers, body)
        except emu_sigv4.SignatureError as e:
            self.send(e.status, "text/xml", emu_ec2.error_xml(e.code, e.message))
            return
        state.count_request(action)
        fault = self.injected(action)
        if fault is not None and fault.kind == "throttle":
            code = "RequestLimitExceeded" if service == "ec2" else "Throttling"
            self.send(503 if service == "ec2" else 400, "text/xml", emu_ec2.error_xml(code, "Request limit exceeded."))
            return
        if fault is not None and fault.kind == "error5xx":
            self.send(fault.status, "text/xml", emu_ec2.error_xml(
                "InternalError" if fault.status == 500 else "Unavailable",
                "An internal error has occurred" if fault.status == 500 else "The service is unavailable."))
            return
        if fault is not None and fault.kind == "error":
            self.send(fault.status, "text/xml", emu_ec2.error_xml(fault.code, f"Injected {fault.code} for {action}"))
            return
        if service == "sts":
            if action != "GetCallerIdentity":
                self.send(400, "text/xml", emu_identity.sts_error_xml("InvalidAction", f"{action} is not emulated"))
            else:
                self.send(200, "text/xml", emu_identity.get_caller_identity(akid))
            return
        if service == "sqs":
            try:
                self.send(200, "text/xml", emu_json.sqs_query(self.server.sqs, action, params))
            except emu_json.JsonError as e:
                code = e.query_error.split(";")[0] if e.query_error else e.type.split("#")[-1]
                self.send(e.status, "text/xml", emu_identity.sts_error_xml(code, e.message))
            return
        if service != "ec2":
            self.send(400, "text/xml", emu_ec2.error_xml("InvalidAction", f"service {service} is not a Query service"))
            return
        try:
            self.send(200, "text/xml;charset=UTF-8", self.server.ec2.handle(action, params), fault=fault)
        except emu_ec2.Ec2Error as e:
            self.send(e.status, "text/xml;charset=UTF-8", emu_ec2.error_xml(e.code, e.message), fault=fault)

    # ---- JSON protocol: SQS, SSM, Pricing ----
    def json_call(self, headers, body):
        state = self.server.state
        prefix, _, operation = headers["x-amz-target"].partition(".")
        if prefix not in JSON_SERVICES:
            self.send_json_error(400, "UnknownOperationException", f"unknown target {headers['x-amz-target']}")
            return
        try:
            self.verify("POST", headers, body)
        except emu_sigv4.SignatureError as e:
            type_ = {"SignatureDoesNotMatch": "InvalidSignatureException", "AuthFailure": "UnrecognizedClientException",
                     "RequestExpired": "InvalidSignatureException"}.get(e.code, e.code)
            self.send_json_error(e.status if e.status != 401 else 400, type_, e.message)
            return
        state.count_request(operation)
        fault = self.injected(operation)
        if fault is not None and fault.kind == "throttle":
            self.send_json_error(400, "ThrottlingException", "Rate exceeded")
            return
        if fault is not None and fault.kind == "error5xx":
            self.send_json_error(fault.status, "InternalFailure", "The request processing has failed.")
            return
        if fault is not None and fault.kind == "error":
            self.send_json_error(fault.status, fault.code, f"Injected {fault.code} for {operation}")
            return
        service = JSON_SERVICES[prefix]
        handler = {"sqs": self.server.sqs, "ssm": self.server.ssm, "pricing": self.server.pricing}[service]
        method = getattr(handler, operation, None) if not operation.startswith("_") else None
        if method is None:
            self.send_json_error(400, "UnknownOperationException", f"{operation} is not emulated for {service}")
            return
        try:
            answer = method(json.loads(body or b"{}"))
        except emu_json.JsonError as e:
            self.send_json_error(e.status, e.type, e.message, e.query_error)
            return
        self.send(200, "application/x-amz-json-1.0", json.dumps(answer), fault=fault)

    # ---- EKS REST-JSON ----
    def eks_call(self, method, path, headers, body):
        state = self.server.state
        try:
            _, _, service = self.verify(method, headers, body)
        except emu_sigv4.SignatureError as e:
            self.send(e.status if e.status != 401 else 403, "application/json", json.dumps({"message": e.message}),
                      [("x-amzn-ErrorType", e.code + ":")])
            return
        state.count_request("DescribeCluster")
        fault = self.injected("DescribeCluster")
        if fault is not None and fault.kind in ("throttle", "error5xx", "error"):
            code = {"throttle": "ThrottlingException", "error5xx": "ServerException"}.get(fault.kind, fault.code)
            status = {"throttle": 429, "error5xx": fault.status}.get(fault.kind, fault.status)
            self.send(status, "application/json", json.dumps({"message": f"Injected {code}"}),
                      [("x-amzn-ErrorType", code + ":http://internal.amazon.com/coral/com.amazonaws.eks/")])
            return
        status, answer, extra = emu_json.describe_cluster(state, service, path[len("/clusters/"):])
        self.send(status, "application/json", json.dumps(answer), extra, fault=fault)


def watch_parent(parent):
    """Stops the emulator when the process that started it is gone, so a crashed test leaves nothing behind."""
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.5)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", required=True, help="the shared data directory (aws-instance-types.json, ...)")
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--port", type=int, default=0, help="0 = a free port")
    parser.add_argument("--access-key", default="AKIDEMULATOR")
    parser.add_argument("--secret-key", default="emulator/secret/key+EXAMPLE")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate (and --tls-key)")
    parser.add_argument("--tls-key", help="the certificate's PEM private key")
    args = parser.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        # The handshake runs in the request thread, so a client refusing the certificate cannot stall accept().
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
        # A client refusing the certificate is what the TLS tests expect: no traceback for it.
        default_handle_error = server.handle_error
        server.handle_error = lambda request, address: (
            None if isinstance(sys.exc_info()[1], (ssl.SSLError, ConnectionError)) and not args.verbose
            else default_handle_error(request, address))
    server.daemon_threads = True
    server.verbose = args.verbose
    server.state = State(args.data_dir, args.region, args.access_key, args.secret_key)
    base = f"{'https' if args.tls_cert else 'http'}://127.0.0.1:{server.server_address[1]}"
    server.ec2 = emu_ec2.Ec2(server.state)
    server.sqs = emu_json.Sqs(server.state, base)
    server.ssm = emu_json.Ssm(server.state)
    server.pricing = emu_json.Pricing(server.state)
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
