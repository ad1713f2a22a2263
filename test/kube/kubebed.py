#!/usr/bin/python3
"""The Kubernetes test bed: a real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, built
by build-control-plane.sh from the official sources) on loopback ports, started and stopped by the tests themselves.

Commands (the plane's coordinates are read from the NS_TEST_KUBE* environment where a command needs a running one):
  serve            start a plane, print its NAME=VALUE environment then READY on stdout, and run until stdin closes,
                   SIGTERM/SIGINT, or the parent dies; then stop everything and remove its files
  run -- CMD...    start a plane, run CMD with its environment, stop it; exits with CMD's status
  tap -- PROG...   start ONE plane, run each PROG against it (a *.py with /usr/bin/python3), report TAP for meson
  namespace PREFIX create a namespace PREFIX-<random>; prints its name
  node NAME [--label K=V]... [--taint K=V:EFFECT]... [--cpu N] [--memory Q] [--pods N] [--provider-id ID]
                   create a Node, mark it Ready through the status subresource (as a kubelet would), and wait until
                   the node lifecycle controller has removed its not-ready taint, so the scheduler can bind to it
  user NAME [--group G]...
                   mint a client certificate for NAME (groups = organisations) from the bed's CA; prints a kubeconfig
  compact          compact etcd at its current revision (older resource versions then answer 410 where etcd serves
                   the watch: configmaps, whose watch cache is off)
  proxy            a TCP forwarder to the API server, for tests of dropped connections: prints "PORT n", forwards
                   until stdin closes; SIGUSR1 cuts every open connection (a watch dropped mid-stream), new ones
                   are still accepted; SIGUSR2 cuts them and closes every new one until SIGHUP (the server is
                   unreachable for a while). TLS passes through, so the server's certificate still verifies.

Python: `with kubebed.plane() as bed:` gives a Bed (from the environment when a plane is already running, else a
private one stopped at the end of the block).
"""
import argparse
import base64
import contextlib
import ctypes
import datetime
import http.client
import json
import os
import random
import secrets
import shutil
import signal
import socket
import ssl
import string
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_SCRIPT = os.path.join(HERE, "build-control-plane.sh")
PR_SET_PDEATHSIG = 1
START_TIMEOUT = float(os.environ.get("NS_KUBEBED_START_TIMEOUT", "180"))
# The variables a test gets; kube_bed.c reads the same names.
ENV_NAMES = ("NS_TEST_KUBECONFIG", "NS_TEST_KUBE_URL", "NS_TEST_KUBE_CA", "NS_TEST_KUBE_CLIENT_CERT",
             "NS_TEST_KUBE_CLIENT_KEY", "NS_TEST_KUBE_TOKEN", "NS_TEST_KUBE_NOBODY_TOKEN", "NS_TEST_KUBE_ETCD_URL",
             "NS_TEST_KUBE_DIR", "NS_KUBEBED")


class BedError(Exception):
    pass


def _die_with_parent(signum=signal.SIGKILL):
    """Runs in each child between fork and exec: the kernel signals it when the process that started it dies, even by
    SIGKILL, so nothing outlives the test."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _openssl(*args, cwd):
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise BedError("openssl %s failed: %s" % (" ".join(args[:2]), r.stderr.strip()))


def control_plane_bin():
    if os.environ.get("NS_K8S_BIN"):
        return os.environ["NS_K8S_BIN"]
    r = subprocess.run(["bash", BUILD_SCRIPT, "--check"], capture_output=True, text=True)
    if r.returncode != 0:
        raise BedError(r.stderr.strip() or "build-control-plane.sh --check failed")
    return r.stdout.strip()


class Bed:
    """A running control plane's coordinates and the helpers tests share. Requests go straight to the API server with
    the admin client certificate, so the helpers depend on neither kubectl nor the clients under test."""

    def __init__(self, env):
        missing = [n for n in ENV_NAMES if n not in env]
        if missing:
            raise BedError("no running test bed: %s not set" % ", ".join(missing))
        self.env = {n: env[n] for n in ENV_NAMES}
        self.kubeconfig = env["NS_TEST_KUBECONFIG"]
        self.url = env["NS_TEST_KUBE_URL"]
        self.ca = env["NS_TEST_KUBE_CA"]
        self.dir = env["NS_TEST_KUBE_DIR"]
        self.etcd_url = env["NS_TEST_KUBE_ETCD_URL"]
        self._ctx = ssl.create_default_context(cafile=self.ca)
        self._ctx.load_cert_chain(env["NS_TEST_KUBE_CLIENT_CERT"], env["NS_TEST_KUBE_CLIENT_KEY"])
        self._port = int(self.url.rsplit(":", 1)[1])

    # --- raw API access
    def request(self, method, path, body=None, content_type="application/json", ok=(200, 201)):
        conn = http.client.HTTPSConnection("127.0.0.1", self._port, context=self._ctx, timeout=30)
        try:
            data = None if body is None else json.dumps(body).encode()
            headers = {"Accept": "application/json", "User-Agent": "nodesmith-kubebed"}
            if data is not None:
                headers["Content-Type"] = content_type
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            text = resp.read().decode()
        finally:
            conn.close()
        if resp.status not in ok:
            raise BedError("%s %s: HTTP %d %s" % (method, path, resp.status, text.strip()[:400]))
        return resp.status, (json.loads(text) if text else None)

    def get(self, path):
        return self.request("GET", path)[1]

    def wait_for(self, what, predicate, timeout=60, interval=0.25):
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise BedError("timed out after %gs waiting for %s" % (timeout, what))
            time.sleep(interval)

    # --- helpers
    def namespace(self, prefix="test"):
        name = "%s-%s" % (prefix, "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(6)))
        self.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": name}})
        # The serviceaccount controller adds "default"; pods are refused until it exists.
        self.wait_for("service account default in namespace " + name,
                      lambda: self._exists("/api/v1/namespaces/%s/serviceaccounts/default" % name))
        return name

    def _exists(self, path):
        return self.request("GET", path, ok=(200, 404))[0] == 200

    def node(self, name, labels=None, taints=None, cpu="4", memory="16Gi", pods="110", provider_id=None):
        meta_labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
        meta_labels.update(labels or {})
        spec = {"taints": taints or []}
        if provider_id:
            spec["providerID"] = provider_id
        self.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                                "metadata": {"name": name, "labels": meta_labels}, "spec": spec})
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        resources = {"cpu": cpu, "memory": memory, "pods": pods}
        status = {"status": {
            "capacity": resources, "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "marked Ready by the nodesmith test bed", "lastHeartbeatTime": now,
                            "lastTransitionTime": now}],
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": name}]}}
        self.request("PATCH", "/api/v1/nodes/%s/status" % name, status, "application/merge-patch+json")

        def untainted():
            node = self.get("/api/v1/nodes/" + name)
            keys = [t["key"] for t in node["spec"].get("taints", [])]
            return node if "node.kubernetes.io/not-ready" not in keys else None
        return self.wait_for("node %s to lose its not-ready taint" % name, untainted)

    def user(self, name, groups=()):
        """A kubeconfig for a client certificate with CN=name and O=each group, signed by the bed's CA."""
        base = os.path.join(self.dir, "users", name)
        os.makedirs(os.path.dirname(base), exist_ok=True)
        subject = "/CN=" + name + "".join("/O=" + g for g in groups)
        _client_cert(self.dir, base, subject)
        path = base + ".kubeconfig"
        _write_kubeconfig(path, self.url, self.ca, base + ".crt", base + ".key", name)
        return path

    def compact(self):
        """Compacts etcd at its current revision; returns the revision."""
        rev = int(self._etcd("/v3/kv/range", {"key": base64.b64encode(b"/").decode()})["header"]["revision"])
        self._etcd("/v3/kv/compaction", {"revision": str(rev), "physical": True})
        return rev

    def _etcd(self, path, body):
        host, port = self.etcd_url.split("//")[1].split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        try:
            conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            text = resp.read().decode()
        finally:
            conn.close()
        if resp.status != 200:
            raise BedError("etcd %s: HTTP %d %s" % (path, resp.status, text.strip()))
        return json.loads(text)


def _client_cert(pki, base, subject):
    _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", base + ".key", "-out", base + ".csr", "-subj", subject, cwd=pki)
    ext = base + ".ext"
    with open(ext, "w") as f:
        f.write("keyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n")
    _openssl("x509", "-req", "-in", base + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-days", "2", "-sha256", "-extfile", ext, "-out", base + ".crt", cwd=pki)


def _write_kubeconfig(path, url, ca, cert, key, user, embed=False):
    def field(name, file):
        if embed:
            with open(file, "rb") as f:
                return name + "-data", base64.b64encode(f.read()).decode()
        return name, file
    ca_k, ca_v = field("certificate-authority", ca)
    crt_k, crt_v = field("client-certificate", cert)
    key_k, key_v = field("client-key", key)
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "bed",
              "clusters": [{"name": "bed", "cluster": {"server": url, ca_k: ca_v}}],
              "users": [{"name": user, "user": {crt_k: crt_v, key_k: key_v}}],
              "contexts": [{"name": "bed", "context": {"cluster": "bed", "user": user}}]}
    with open(path, "w") as f:
        json.dump(config, f, indent=1)  # JSON is YAML; every client reads it
    os.chmod(path, 0o600)


class ControlPlane:
    """Starts and stops one control plane in a private temporary directory."""

    def __init__(self):
        self.procs = []
        self.dir = None
        self.logs = None

    def start(self):
        bindir = control_plane_bin()
        self._reap_stale()
        self.dir = tempfile.mkdtemp(prefix="nodesmith-kubebed-")
        with open(os.path.join(self.dir, "owner.pid"), "w") as f:
            f.write(str(os.getpid()))
        self.logs = os.environ.get("NS_KUBEBED_LOG_DIR") or self.dir
        os.makedirs(self.logs, exist_ok=True)
        try:
            self._pki()
            env = self._launch(bindir)
        except BaseException:
            self.stop()
            raise
        return env

    def _reap_stale(self):
        """Removes the files of planes whose owner was killed before it could clean up."""
        tmp = tempfile.gettempdir()
        for name in os.listdir(tmp):
            if not name.startswith("nodesmith-kubebed-"):
                continue
            path = os.path.join(tmp, name)
            try:
                with open(os.path.join(path, "owner.pid")) as f:
                    os.kill(int(f.read()), 0)
            except ProcessLookupError:
                shutil.rmtree(path, ignore_errors=True)
            except (OSError, ValueError):
                pass

    def _pki(self):
        d = self.dir
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=nodesmith-test-bed-ca",
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                 cwd=d)
        _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-keyout", "apiserver.key", "-out", "apiserver.csr", "-subj", "/CN=kube-apiserver", cwd=d)
        with open(os.path.join(d, "apiserver.ext"), "w") as f:
            f.write("keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
                    "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,"
                    "DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n")
        _openssl("x509", "-req", "-in", "apiserver.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-days", "2", "-sha256", "-extfile", "apiserver.ext", "-out", "apiserver.crt", cwd=d)
        _client_cert(d, os.path.join(d, "admin"), "/CN=nodesmith-admin/O=system:masters")
        _client_cert(d, os.path.join(d, "controller-manager"), "/CN=system:kube-controller-manager")
        _client_cert(d, os.path.join(d, "scheduler"), "/CN=system:kube-scheduler")
        _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "sa.key", cwd=d)
        _openssl("ec", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=d)
        self.token = secrets.token_hex(24)
        self.nobody_token = secrets.token_hex(24)
        with open(os.path.join(d, "tokens.csv"), "w") as f:
            f.write('%s,nodesmith-token-admin,uid-admin,"system:masters"\n' % self.token)
            f.write("%s,nodesmith-nobody,uid-nobody\n" % self.nobody_token)
        os.chmod(os.path.join(d, "tokens.csv"), 0o600)

    def _spawn(self, name, argv):
        log = open(os.path.join(self.logs, name + ".log"), "ab")
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                             preexec_fn=_die_with_parent, cwd=self.dir)
        log.close()
        self.procs.append((name, p))
        return p

    def _check_alive(self):
        for name, p in self.procs:
            if p.poll() is not None:
                raise BedError("%s exited with status %s during start-up; last lines of %s:\n%s" % (
                    name, p.returncode, os.path.join(self.logs, name + ".log"), self.log_tail(name)))

    def log_tail(self, name, lines=25):
        try:
            with open(os.path.join(self.logs, name + ".log"), errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def _wait(self, what, predicate):
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            self._check_alive()
            try:
                if predicate():
                    return
            except (OSError, BedError, ValueError, KeyError):
                pass
            if time.monotonic() > deadline:
                raise BedError("timed out after %gs waiting for %s" % (START_TIMEOUT, what))
            time.sleep(0.2)

    def _launch(self, bindir):
        d = self.dir
        p = lambda name: os.path.join(d, name)  # noqa: E731
        etcd_port, etcd_peer, api_port = _free_port(), _free_port(), _free_port()
        etcd_url = "http://127.0.0.1:%d" % etcd_port
        self._spawn("etcd", [
            os.path.join(bindir, "etcd"), "--name", "bed", "--data-dir", p("etcd"),
            "--listen-client-urls", etcd_url, "--advertise-client-urls", etcd_url,
            "--listen-peer-urls", "http://127.0.0.1:%d" % etcd_peer,
            "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % etcd_peer,
            "--initial-cluster", "bed=http://127.0.0.1:%d" % etcd_peer,
            # A test bed's data is thrown away: fsync only slows a shared 2-core machine down.
            "--unsafe-no-fsync", "--log-level", "warn"])
        self._wait("etcd on " + etcd_url, lambda: _http_ok("127.0.0.1", etcd_port, "/health"))

        url = "https://127.0.0.1:%d" % api_port
        # A benchmark (bench/controller_bench.py, NS_KUBEBED_COMPONENT_QPS set) runs the API server as a cluster does:
        # with the watch cache for pods too. Without it every pod watch (kube-scheduler's, kube-controller-manager's,
        # the autoscaler's, the benchmark's) is a watch of etcd decoded apart, and every list of 20,000 pods reads
        # etcd, which is what such a row would measure.
        bench_qps = int(os.environ.get("NS_KUBEBED_COMPONENT_QPS") or 0)
        self._spawn("kube-apiserver", [
            os.path.join(bindir, "kube-apiserver"),
            "--etcd-servers", etcd_url, "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
            "--secure-port", str(api_port),
            "--tls-cert-file", p("apiserver.crt"), "--tls-private-key-file", p("apiserver.key"),
            "--client-ca-file", p("ca.crt"), "--token-auth-file", p("tokens.csv"),
            "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file", p("sa.pub"), "--service-account-signing-key-file", p("sa.key"),
            "--service-cluster-ip-range", "10.96.0.0/16", "--authorization-mode", "Node,RBAC",
            "--allow-privileged", "--profiling=false",
            # Endpoints may not hold a loopback address, so the "kubernetes" service keeps no endpoints here.
            "--endpoint-reconciler-type", "none",
            # Configmaps and pods are watched straight from etcd, so an etcd compaction expires their old resource
            # versions (410: the informers' relist is tested on both); every other resource keeps the watch cache,
            # as in a real cluster (its bookmarks are tested on those).
            "--watch-cache-sizes", "configmaps#0" if bench_qps else "configmaps#0,pods#0",
            "--cert-dir", p("apiserver-certs")])
        self._wait("kube-apiserver /readyz on " + url, lambda: self._readyz(api_port))

        kubeconfig = p("admin.kubeconfig")
        _write_kubeconfig(kubeconfig, url, p("ca.crt"), p("admin.crt"), p("admin.key"), "nodesmith-admin",
                          embed=True)
        for component in ("controller-manager", "scheduler"):
            _write_kubeconfig(p(component + ".kubeconfig"), url, p("ca.crt"), p(component + ".crt"),
                              p(component + ".key"), "system:kube-" + component)
        # A benchmark of thousands of pods (bench/controller_bench.py) raises the scheduler's and controller manager's
        # client rate limits (50 and 20 requests/s by default), which would otherwise be what it measures. It loads
        # the API server enough that a lease renewal can miss its deadline (seen with 60 s at load 50), and a component
        # whose renewal fails exits: there they run without leader election (one instance of each).
        common = ["--bind-address", "127.0.0.1", "--secure-port", "0", "--leader-elect=%s" % ("false" if bench_qps
                                                                                               else "true"),
                  "--profiling=false"]
        if bench_qps:
            common += ["--kube-api-qps", str(bench_qps), "--kube-api-burst", str(2 * bench_qps)]
        self._spawn("kube-controller-manager", [
            os.path.join(bindir, "kube-controller-manager"), *common,
            "--kubeconfig", p("controller-manager.kubeconfig"),
            "--service-account-private-key-file", p("sa.key"), "--root-ca-file", p("ca.crt"),
            "--use-service-account-credentials=true", "--cluster-name", "nodesmith-test-bed",
            # No kubelet renews node heartbeats here: the node lifecycle controller still runs (it removes the
            # not-ready taint of a node marked Ready), but only marks a silent node unknown after an hour.
            "--node-monitor-grace-period", "1h", "--node-startup-grace-period", "1h"])
        self._spawn("kube-scheduler", [
            os.path.join(bindir, "kube-scheduler"), *common,
            "--kubeconfig", p("scheduler.kubeconfig"),
            "--authentication-kubeconfig", p("scheduler.kubeconfig"),
            "--authorization-kubeconfig", p("scheduler.kubeconfig")])
        env = {"NS_TEST_KUBECONFIG": kubeconfig, "NS_TEST_KUBE_URL": url, "NS_TEST_KUBE_CA": p("ca.crt"),
               "NS_TEST_KUBE_CLIENT_CERT": p("admin.crt"), "NS_TEST_KUBE_CLIENT_KEY": p("admin.key"),
               "NS_TEST_KUBE_TOKEN": self.token, "NS_TEST_KUBE_NOBODY_TOKEN": self.nobody_token,
               "NS_TEST_KUBE_ETCD_URL": etcd_url, "NS_TEST_KUBE_DIR": d,
               "NS_KUBEBED": os.path.abspath(__file__)}
        bed = Bed(env)
        # Both components hold their leader lease once they are up (with leader election).
        for lease in ("kube-controller-manager", "kube-scheduler") if not bench_qps else ():
            self._wait(lease + " leader lease", lambda: bed.get(
                "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/" + lease)["spec"]["holderIdentity"])
        self._wait("service account default/default",
                   lambda: bed._exists("/api/v1/namespaces/default/serviceaccounts/default"))
        return env

    def _readyz(self, port):
        ctx = ssl.create_default_context(cafile=os.path.join(self.dir, "ca.crt"))
        ctx.load_cert_chain(os.path.join(self.dir, "admin.crt"), os.path.join(self.dir, "admin.key"))
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=5)
        try:
            conn.request("GET", "/readyz")
            return conn.getresponse().status == 200
        finally:
            conn.close()

    def stop(self):
        # Clients first, storage last, so nothing logs a storm of errors about a vanished etcd.
        for name, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.procs = []
        if self.dir and not os.environ.get("NS_KUBEBED_KEEP"):
            shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None


def _http_ok(host, port, path):
    conn = http.client.HTTPConnection(host, port, timeout=5)
    try:
        conn.request("GET", path)
        return conn.getresponse().status == 200
    finally:
        conn.close()


@contextlib.contextmanager
def plane():
    """The running plane from the environment if there is one, else a private plane for the block's duration."""
    if os.environ.get("NS_TEST_KUBECONFIG"):
        yield Bed(os.environ)
        return
    cp = ControlPlane()
    env = cp.start()
    saved = {n: os.environ.get(n) for n in ENV_NAMES}
    os.environ.update(env)
    try:
        yield Bed(env)
    finally:
        for n, v in saved.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v
        cp.stop()


class _Stop(Exception):
    pass


def _raise_stop(signum, frame):
    raise _Stop()


@contextlib.contextmanager
def _started():
    """A plane for a command of this program: SIGTERM/SIGINT/SIGHUP stop it cleanly."""
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, _raise_stop)
    # A harness whose test died, however it died, stops the plane and removes its files.
    _die_with_parent(signal.SIGTERM)
    cp = ControlPlane()
    try:
        env = cp.start()
        yield cp, env
    finally:
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        cp.stop()


def _child_env(env):
    """The environment of a program run against the plane; kubectl keeps its discovery cache in the plane's
    directory instead of piling up one entry per random port in ~/.kube/cache."""
    return dict(os.environ, KUBECACHEDIR=os.path.join(env["NS_TEST_KUBE_DIR"], "kubectl-cache"), **env)


def cmd_serve(args):
    with _started() as (cp, env):
        for name in ENV_NAMES:
            print("%s=%s" % (name, env[name]))
        print("READY", flush=True)
        # Runs until the test closes our stdin (it exited, however it exited) or a signal arrives.
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except _Stop:
            pass
    return 0


def cmd_run(args):
    if not args.command:
        raise BedError("run: no command after --")
    with _started() as (cp, env):
        p = subprocess.Popen(args.command, env=_child_env(env), preexec_fn=_die_with_parent)
        try:
            return p.wait()
        except _Stop:
            p.terminate()
            p.wait()
            return 1


def cmd_tap(args):
    progs = args.command
    print("1..%d" % len(progs), flush=True)
    try:
        ctx = _started()
        cp, env = ctx.__enter__()
    except _Stop:
        print("Bail out! stopped by a signal while starting the control plane")
        return 1
    except BedError as e:
        print("Bail out! the control plane did not start: %s" % str(e).splitlines()[0])
        print("# " + str(e).replace("\n", "\n# "))
        return 1
    failed = 0
    try:
        child_env = _child_env(env)
        for i, prog in enumerate(progs, 1):
            argv = ["/usr/bin/python3", prog] if prog.endswith(".py") else [prog]
            start = time.monotonic()
            r = subprocess.run(argv, env=child_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
            out = r.stdout.decode(errors="replace").rstrip()
            if out:
                print("# " + out.replace("\n", "\n# "))
            name = os.path.basename(prog)
            took = time.monotonic() - start
            if r.returncode == 0:
                print("ok %d - %s (%.1fs)" % (i, name, took), flush=True)
            else:
                failed += 1
                print("not ok %d - %s (exit status %d, %.1fs)" % (i, name, r.returncode, took), flush=True)
                for comp in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"):
                    tail = cp.log_tail(comp, 8).rstrip()
                    if tail:
                        print("# --- last lines of %s.log\n# %s" % (comp, tail.replace("\n", "\n# ")))
    except _Stop:
        print("Bail out! stopped by a signal")
        failed += 1
    finally:
        ctx.__exit__(None, None, None)
    return 1 if failed else 0


def cmd_namespace(args):
    print(Bed(os.environ).namespace(args.prefix))
    return 0


def cmd_node(args):
    labels = dict(kv.split("=", 1) for kv in args.label)
    taints = []
    for t in args.taint:
        kv, effect = t.rsplit(":", 1)
        key, _, value = kv.partition("=")
        taints.append({"key": key, "value": value, "effect": effect} if value else {"key": key, "effect": effect})
    Bed(os.environ).node(args.name, labels, taints, args.cpu, args.memory, args.pods, args.provider_id)
    print(args.name)
    return 0


def cmd_user(args):
    print(Bed(os.environ).user(args.name, args.group))
    return 0


def cmd_compact(args):
    print(Bed(os.environ).compact())
    return 0


def cmd_proxy(args):
    target = ("127.0.0.1", int(Bed(os.environ).url.rsplit(":", 1)[1]))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    open_conns = set()
    lock = threading.Lock()

    def pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            with lock:
                open_conns.discard(src)
            src.close()

    held = threading.Event()

    def accept():
        while True:
            try:
                client_sock, _ = listener.accept()
                if held.is_set():
                    client_sock.close()  # held: the server is unreachable
                    continue
                server_sock = socket.create_connection(target)
            except OSError:
                return
            with lock:
                open_conns.update((client_sock, server_sock))
            for a, b in ((client_sock, server_sock), (server_sock, client_sock)):
                threading.Thread(target=pump, args=(a, b), daemon=True).start()

    def cut(signum, frame):
        with lock:
            for sock in open_conns:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                    sock.close()
            open_conns.clear()

    def hold(signum, frame):
        held.set()
        cut(signum, frame)

    signal.signal(signal.SIGUSR1, cut)
    signal.signal(signal.SIGUSR2, hold)
    signal.signal(signal.SIGHUP, lambda signum, frame: held.clear())
    _die_with_parent(signal.SIGTERM)
    threading.Thread(target=accept, daemon=True).start()
    print("PORT %d" % listener.getsockname()[1], flush=True)
    with contextlib.suppress(_Stop):
        signal.signal(signal.SIGTERM, _raise_stop)
        while sys.stdin.buffer.read(4096):
            pass
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("serve").set_defaults(fn=cmd_serve)
    for name, fn in (("run", cmd_run), ("tap", cmd_tap)):
        p = sub.add_parser(name)
        p.add_argument("command", nargs=argparse.REMAINDER)
        p.set_defaults(fn=fn)
    p = sub.add_parser("namespace")
    p.add_argument("prefix", nargs="?", default="test")
    p.set_defaults(fn=cmd_namespace)
    p = sub.add_parser("node")
    p.add_argument("name")
    p.add_argument("--label", action="append", default=[])
    p.add_argument("--taint", action="append", default=[])
    p.add_argument("--cpu", default="4")
    p.add_argument("--memory", default="16Gi")
    p.add_argument("--pods", default="110")
    p.add_argument("--provider-id")
    p.set_defaults(fn=cmd_node)
    p = sub.add_parser("user")
    p.add_argument("name")
    p.add_argument("--group", action="append", default=[])
    p.set_defaults(fn=cmd_user)
    sub.add_parser("compact").set_defaults(fn=cmd_compact)
    sub.add_parser("proxy").set_defaults(fn=cmd_proxy)
    args = ap.parse_args(argv)
    if getattr(args, "command", None) and args.command[0] == "--":
        args.command = args.command[1:]
    try:
        return args.fn(args)
    except BedError as e:
        print("kubebed %s: %s" % (args.cmd, e), file=sys.stderr)
        return 1
    except _Stop:
        print("kubebed %s: stopped by a signal; the control plane is stopped" % args.cmd, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
