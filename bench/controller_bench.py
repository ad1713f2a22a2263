#!/usr/bin/python3
"""Figures of `nodesmith controller --provider sim --simulate-kubelet` on the real control plane (test/kube's bed,
with the real kube-scheduler binding every pod): N pending pods to all bound and all Running.

Each row runs on a fresh control plane. The pods (one namespace, alike: pause, 100m cpu, 128Mi) are created first,
with nothing to run on, and kube-scheduler marks them Unschedulable; then the controller starts, and the clock runs
from its start to the moment the last pod is bound (spec.nodeName) and Running, as a watch of the namespace sees it.

Printed per row: pods, seconds to all bound and to all Running, nodes, cost per hour (the provider's prices of the
nodes' instance types), API requests, controller CPU seconds and peak RSS (VmHWM from /proc at the moment all pods
run). API requests come from the API server's own metrics: the controller runs as a user of its own whose requests
fall in the API Priority and Fairness flow schema global-default (nothing else in the bed does), so
apiserver_flowcontrol_dispatched_requests_total{flow_schema="global-default"} counts them, watches and lists
included.

Targets (issue 12): all bound within 60 s at 20,000 pods; peak RSS at most 64 MiB at 1,000 pods and 256 MiB at 50,000.
The figures are printed; nothing fails on a missed target (a loaded machine would make that a flaky test).

Side by side: Karpenter itself, sigs.k8s.io/karpenter/kwok v1.14.0 (Karpenter with its fake cloud, whose instances
are kwok Nodes) with kwok v0.7.0 as the kubelet of its Nodes (bench/build-karpenter-kwok.sh builds both once into
~/.cache/nodesmith), on a fresh control plane with the same pods and NodePool, as a user of its own (flow schema
global-default) beside kwok's (group system:nodes, flow schema system-nodes): its row adds kwok's requests, CPU and
RSS, which nodesmith's row has inside the controller (--simulate-kubelet). Both rows choose from one catalog: the kwok
provider's instance_types.json, read from the Go module cache the build used and handed to the sim as its `catalog`
(kwok_catalog), so nodes and cost per hour compare the same offer.

Where a row's time goes is printed on stderr as it runs (pods created, listed, marked Unschedulable; then bound and
Running every 10 s); NS_KUBEBED_KEEP=1 keeps the control plane's directory and the autoscaler's log.

Usage: controller_bench.py NODESMITH [--pods N,...] (default 1000,20000) [--karpenter-pods N] (default 20000; 0: no
Karpenter row). One JSON object per row on stdout, then a
table. The scheduler and controller manager get a client rate limit of 1000 requests/s (NS_KUBEBED_COMPONENT_QPS), so
their defaults (50 and 20 requests/s: 400 s to bind 20,000 pods) are not what is measured, and the API server keeps
its watch cache for pods as a cluster's does (the test bed's tests turn it off to see 410s).
"""
import argparse
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "kube"))
import kubebed  # noqa: E402

CREATORS = 8
STALL_S = 120
APF_FLOW = "global-default"
KUBELET_FLOW = "system-nodes"
POD_CPU, POD_MEMORY = "100m", "128Mi"

NODECLASS_CRDS = os.path.join(HERE, "..", "charts", "nodesmith", "nodeclass-crds")


def nodepool(group, kind):
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
            "spec": {"template": {"spec": {
                "nodeClassRef": {"group": group, "kind": kind, "name": "default"},
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                                 {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}],
                "expireAfter": "720h"}},
                # the run measures provisioning: nothing is consolidated while it runs
                "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "1h"}}}


class Session:
    """Keep-alive HTTPS requests to the bed's API server as its admin (one per thread)."""

    def __init__(self, bed):
        self.bed = bed
        self.conn = None

    def request(self, method, path, body=None, ok=(200, 201)):
        for attempt in range(3):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection("127.0.0.1", self.bed._port, context=self.bed._ctx,
                                                        timeout=300)
            try:
                data = None if body is None else json.dumps(body).encode()
                headers = {"Accept": "application/json", "Content-Type": "application/json"}
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                text = resp.read()
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
                continue
            if resp.status not in ok:
                raise kubebed.BedError("%s %s: HTTP %d %s" % (method, path, resp.status, text[:300]))
            return text
        return None


def bench_pod(name):
    """The benchmark's pod NAME (pause, POD_CPU and POD_MEMORY)."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "bench"}},
            "spec": {"terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": POD_CPU, "memory": POD_MEMORY}}}]}}


def create_pods(bed, ns, total):
    """TOTAL pods created by CREATORS threads, each over a connection of its own; returns the seconds it took."""
    nxt = iter(range(total))
    lock = threading.Lock()
    errors = []

    def creator():
        s = Session(bed)
        while True:
            with lock:
                i = next(nxt, None)
            if i is None:
                return
            try:
                s.request("POST", "/api/v1/namespaces/%s/pods" % ns, bench_pod("bench-%06d" % i))
            except (OSError, kubebed.BedError) as e:
                errors.append(str(e))
                return
    t0 = time.monotonic()
    threads = [threading.Thread(target=creator) for _ in range(CREATORS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise kubebed.BedError("creating the benchmark's pods failed: " + errors[0])
    return time.monotonic() - t0


class PodWatch:
    """Follows the namespace's pods with one watch: when each pod was first seen bound and Running."""

    def __init__(self, bed, ns, total):
        self.bed, self.ns, self.total = bed, ns, total
        self.bound, self.running, self.unschedulable = set(), set(), set()
        self.all_bound_at = self.all_running_at = None
        self.done = threading.Event()
        self.error = None
        # in pages: one answer of 20,000 pods outlasted the read timeout of a loaded API server
        session, cont = Session(bed), ""
        while True:
            listing = json.loads(session.request("GET", "/api/v1/namespaces/%s/pods?limit=500%s" % (ns, cont)))
            for p in listing["items"]:
                self._see(p)
            if not listing["metadata"].get("continue"):
                break
            cont = "&continue=" + urllib.parse.quote(listing["metadata"]["continue"], safe="")
        self.rv = listing["metadata"]["resourceVersion"]
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _see(self, pod):
        name = pod["metadata"]["name"]
        if pod["spec"].get("nodeName"):
            self.bound.add(name)
        if pod.get("status", {}).get("phase") == "Running":
            self.running.add(name)
        for c in pod.get("status", {}).get("conditions", []):
            if c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable":
                self.unschedulable.add(name)
        now = time.monotonic()
        if self.all_bound_at is None and len(self.bound) >= self.total:
            self.all_bound_at = now
        if self.all_running_at is None and len(self.running) >= self.total:
            self.all_running_at = now
            self.done.set()

    def _run(self):
        while not self.done.is_set():
            conn = http.client.HTTPSConnection("127.0.0.1", self.bed._port, context=self.bed._ctx, timeout=600)
            try:
                conn.request("GET", "/api/v1/namespaces/%s/pods?watch=1&allowWatchBookmarks=true&resourceVersion=%s"
                             % (self.ns, self.rv), headers={"Accept": "application/json"})
                resp = conn.getresponse()
                if resp.status != 200:
                    raise kubebed.BedError("watch of pods in %s: HTTP %d" % (self.ns, resp.status))
                while not self.done.is_set():
                    line = resp.readline()
                    if not line:
                        break
                    ev = json.loads(line)
                    if ev["type"] == "ERROR":
                        raise kubebed.BedError("watch of pods in %s: %s" % (self.ns, ev["object"].get("message")))
                    self.rv = ev["object"]["metadata"]["resourceVersion"]
                    if ev["type"] in ("ADDED", "MODIFIED"):
                        self._see(ev["object"])
            except (OSError, http.client.HTTPException, ValueError, kubebed.BedError) as e:
                self.error = e
                return
            finally:
                conn.close()


def progress(name, what):
    """A line on stderr while a row runs, so a slow phase shows where the time goes."""
    print("%s: %s" % (name, what), file=sys.stderr, flush=True)


def apf_dispatched(session, flow):
    """Requests the API server dispatched in one APF flow schema so far."""
    text = session.request("GET", "/metrics").decode()
    total = 0.0
    for m in re.finditer(r'^apiserver_flowcontrol_dispatched_requests_total\{([^}]*)\} (\S+)$', text, re.M):
        if 'flow_schema="%s"' % flow in m.group(1):
            total += float(m.group(2))
    return int(total)


def proc_figures(pid):
    """CPU seconds (user + system) and peak RSS in MiB of a running process, from /proc."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    with open("/proc/%d/status" % pid) as f:
        hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
    return cpu, hwm / 1024.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def create(bed, path, obj):
    bed.request("POST", path, obj)


def kubectl(bed, *args):
    r = subprocess.run(["kubectl", "--kubeconfig", bed.kubeconfig, *args], capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        raise kubebed.BedError("kubectl %s failed: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout


def bench_user(bed, name, group):
    """A kubeconfig for NAME (in GROUP, not system:masters) bound to cluster-admin."""
    kubeconfig = bed.user(name, [group])
    create(bed, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
                        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                        "metadata": {"name": name + "-admin"},
                        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                    "name": "cluster-admin"},
                        "subjects": [{"kind": "User", "name": name, "apiGroup": "rbac.authorization.k8s.io"}]})
    return kubeconfig


def install_crds(bed, directory, files):
    for f in files:
        kubectl(bed, "apply", "--server-side", "--validate=false", "-f", os.path.join(directory, f))
    for f in files:
        kubectl(bed, "wait", "--for", "condition=Established", "--timeout=60s", "-f", os.path.join(directory, f))


KARPENTER_VERSION = "v1.14.0"
KWOK_ZONE, KWOK_CAPACITY = "topology.kubernetes.io/zone", "karpenter.sh/capacity-type"


def kwok_catalog(built):
    """The instance types of Karpenter's kwok provider (its cloudprovider/instance_types.json, read from the Go module
    cache the build used, not copied into this tree) in the sim's catalog format, and their zones: both rows choose
    from the same types at the same prices, so nodes and cost per hour compare packing. The Linux types only (the
    NodePool requires linux; Karpenter filters the Windows ones out the same way). Both keep kubelet's max pods from
    the file; the overhead differs (kwok reserves 100m cpu and 10Mi, the sim computes EKS's kube-reserved and
    eviction threshold), which changes no choice for these pods (docs/controller.md)."""
    path = os.path.join(os.path.dirname(built), "gomod", "sigs.k8s.io", "karpenter@" + KARPENTER_VERSION, "kwok",
                        "cloudprovider", "instance_types.json")
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "Ti": 1024 * 1024}
    with open(path) as f:
        types = json.load(f)
    catalog, zones = [], []
    for t in types:
        if t["operatingSystems"] != ["linux"]:
            continue
        res = t["resources"]
        memory = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti)", res["memory"])
        if not memory or not res["cpu"].isdigit():
            raise kubebed.BedError("%s: type %s: cpu %r or memory %r not understood" % (path, t["name"], res["cpu"],
                                                                                      res["memory"]))
        offerings = []
        for o in t["offerings"]:
            req = {r["key"]: r["values"] for r in o["Requirements"] if r["operator"] == "In"}
            zone, capacity = req[KWOK_ZONE][0], req[KWOK_CAPACITY][0]
            if zone not in zones:
                zones.append(zone)
            offerings.append({"zone": zone, "capacity_type": capacity, "price": o["Price"]})
        family, size = t["name"].split("-")[:2]
        catalog.append({"name": t["name"], "vcpu": int(res["cpu"]),
                        "memory_mib": int(int(memory.group(1)) * units[memory.group(2)]),
                        "arch": t["architecture"], "family": family, "category": family, "size": size,
                        "max_pods_or_enis": int(res.get("pods", 110)), "offerings": offerings})
    out = tempfile.NamedTemporaryFile("w", prefix="bench-kwok-catalog-", suffix=".json", delete=False)
    with out:
        json.dump(catalog, out)
    return out.name, zones


def sim_prices(nodesmith, provider_args):
    """The price per hour of a sim Node (by its instance type, zone and capacity type), from `nodesmith offerings`."""
    r = subprocess.run([nodesmith, "offerings", "--provider", "sim", *provider_args, "--output", "json"],
                       capture_output=True, text=True, check=True)
    prices = {(it["name"], o["zone"], o["capacity_type"]): o["price_per_hour"]
              for it in json.loads(r.stdout)["instance_types"] for o in it["offerings"]}
    return lambda labels: prices.get(tuple(labels.get(k) for k in (
        "node.kubernetes.io/instance-type", "topology.kubernetes.io/zone", "karpenter.sh/capacity-type")))


def kwok_price(labels):
    """The price per hour Karpenter's kwok provider labels its Nodes with (its instance types' offering price)."""
    price = labels.get("eks-node-viewer/instance-price")
    return float(price) if price is not None else None


def nodes_and_cost(bed, price_of):
    """The cluster's Nodes and what they cost per hour, PRICE_OF(labels) each."""
    nodes = json.loads(kubectl(bed, "get", "nodes", "-o", "json"))["items"]
    cost, unknown = 0.0, set()
    for n in nodes:
        price = price_of(n["metadata"]["labels"])
        if price is None:
            unknown.add(n["metadata"]["name"])
        else:
            cost += price
    if unknown:
        raise kubebed.BedError("no price for nodes %s" % sorted(unknown))
    return len(nodes), cost


def stop(procs):
    for p in procs:
        if p and p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def run_row(name, pods, setup, start, price_of):
    """One row on a fresh control plane. SETUP(bed) installs what the autoscaler needs; START(bed, log) starts it and
    returns its Popen and that of the kubelet playing its Nodes when that is another process (kwok), else None. The
    autoscaler's requests are those of flow schema global-default, a separate kubelet's those of system-nodes (its
    user is in group system:nodes)."""
    os.environ["NS_KUBEBED_COMPONENT_QPS"] = "1000"
    with kubebed.plane() as bed:
        admin = Session(bed)
        setup(bed)
        ns = bed.namespace("bench")
        # the watch starts on the empty namespace: it sees every pod created and marked, and nothing is listed
        watch = PodWatch(bed, ns, pods)
        created_s = create_pods(bed, ns, pods)
        progress(name, "%d pods created in %.1f s (%.0f pods/s), %d of them Unschedulable" % (
            pods, created_s, pods / created_s, len(watch.unschedulable)))
        # Autoscalers act on pods kube-scheduler has tried and marked Unschedulable (Karpenter's FailedToSchedule), so
        # the clock starts once it has marked them all; kube-scheduler marks them one round trip at a time. Should it
        # stop marking (no pod marked for STALL_S), the row starts anyway and says how many were marked.
        t_unsched = time.monotonic()
        marked, marked_at = len(watch.unschedulable), t_unsched
        next_report = t_unsched + 10
        while len(watch.unschedulable) < pods and time.monotonic() - marked_at < STALL_S:
            if watch.error:
                raise kubebed.BedError(str(watch.error))
            time.sleep(0.2)
            if len(watch.unschedulable) > marked:
                marked, marked_at = len(watch.unschedulable), time.monotonic()
            if time.monotonic() >= next_report:
                next_report += 10
                progress(name, "%d pods Unschedulable" % len(watch.unschedulable))
        unschedulable = len(watch.unschedulable)
        progress(name, "%d pods Unschedulable %.1f s after the last was created" % (
            unschedulable, time.monotonic() - t_unsched))
        before = {f: apf_dispatched(admin, f) for f in (APF_FLOW, KUBELET_FLOW)}
        log = tempfile.NamedTemporaryFile("w+", prefix="bench-%s-" % name, suffix=".log", delete=False)
        t0 = time.monotonic()
        proc, kubelet = start(bed, log)
        next_report = t0 + 10
        limit_s = max(900, pods // 20)  # 50,000 pods at kube-scheduler's 25 bindings/s on a loaded machine
        try:
            while not watch.done.is_set():
                for p in (proc, kubelet):
                    if p and p.poll() is not None:
                        raise kubebed.BedError("%s exited with status %d; log %s" % (p.args[0], p.returncode,
                                                                                     log.name))
                if watch.error:
                    raise kubebed.BedError(str(watch.error))
                if time.monotonic() - t0 > limit_s:
                    raise kubebed.BedError("%s: %d/%d pods bound, %d Running after %d s; log %s" % (
                        name, len(watch.bound), pods, len(watch.running), limit_s, log.name))
                watch.done.wait(0.5)
                if time.monotonic() >= next_report:
                    next_report += 10
                    # the peak RSS so far too: a row that does not finish still shows what the cache held
                    progress(name, "+%.0f s: %d bound, %d Running, peak RSS %.1f MiB" % (
                        time.monotonic() - t0, len(watch.bound), len(watch.running), proc_figures(proc.pid)[1]))
            cpu, peak = proc_figures(proc.pid)
            row = {"autoscaler": name, "pods": pods, "create_pods_s": round(created_s, 1),
                   "unschedulable_at_start": unschedulable,
                   "all_bound_s": round(watch.all_bound_at - t0, 1),
                   "all_running_s": round(watch.all_running_at - t0, 1),
                   "api_requests": apf_dispatched(admin, APF_FLOW) - before[APF_FLOW],
                   "cpu_s": round(cpu, 1), "peak_rss_mib": round(peak, 1)}
            if kubelet:
                kcpu, kpeak = proc_figures(kubelet.pid)
                row.update(kubelet_api_requests=apf_dispatched(admin, KUBELET_FLOW) - before[KUBELET_FLOW],
                           kubelet_cpu_s=round(kcpu, 1), kubelet_peak_rss_mib=round(kpeak, 1))
            row["nodes"], cost = nodes_and_cost(bed, price_of)
            row["cost_per_hour"] = round(cost, 2)
        finally:
            stop((proc, kubelet))
        if os.environ.get("NS_KUBEBED_KEEP"):
            progress(name, "log kept: " + log.name)
        else:
            os.unlink(log.name)
        return row


def nodesmith_row(nodesmith, pods, built):
    catalog, zones = kwok_catalog(built)
    provider_args = ["--set", "catalog=" + catalog, "--set", "zones=" + ",".join(zones)]
    crds = subprocess.run(["bash", os.path.join(HERE, "..", "test", "controller", "fetch-karpenter-crds.sh")],
                          capture_output=True, text=True, check=True).stdout.strip()
    users = {}

    def setup(bed):
        install_crds(bed, crds, ["karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml"])
        install_crds(bed, NODECLASS_CRDS, ["nodesmith.io_simnodeclasses.yaml"])
        create(bed, "/apis/karpenter.sh/v1/nodepools", nodepool("nodesmith.io", "SimNodeClass"))
        create(bed, "/apis/nodesmith.io/v1/simnodeclasses", {"apiVersion": "nodesmith.io/v1", "kind": "SimNodeClass",
                                                               "metadata": {"name": "default"}, "spec": {}})
        users["kubeconfig"] = bench_user(bed, "nodesmith-bench", "bench")

    def start(bed, log):
        env = dict(os.environ, LOG_LEVEL="info", METRICS_PORT=str(free_port()), HEALTH_PROBE_PORT=str(free_port()))
        p = subprocess.Popen([nodesmith, "controller", "--provider", "sim", *provider_args, "--simulate-kubelet",
                              "--kubeconfig", users["kubeconfig"], "--bind-address", "127.0.0.1",
                              "--leader-election-namespace", "default"],
                             stdout=log, stderr=subprocess.STDOUT, env=env,
                             preexec_fn=lambda: kubebed._die_with_parent(signal.SIGTERM))
        return p, None

    try:
        return run_row("nodesmith", pods, setup, start, sim_prices(nodesmith, provider_args))
    finally:
        os.unlink(catalog)


def build_karpenter_kwok(source_only):
    """The directory of Karpenter's kwok build and kwok (bench/build-karpenter-kwok.sh), built once; SOURCE_ONLY: only
    Karpenter's module downloaded (its catalog, for nodesmith's rows alone)."""
    r = subprocess.run(["bash", os.path.join(HERE, "build-karpenter-kwok.sh")] + (["--source-only"] if source_only
                                                                                  else []),
                       capture_output=True, text=True,
                       env=dict(os.environ, NS_KARPENTER_VERSION=KARPENTER_VERSION))
    if r.returncode != 0:
        raise kubebed.BedError("building Karpenter and kwok failed: " + r.stderr.strip())
    return r.stdout.strip()


def karpenter_row(pods, built):
    """Karpenter v1.14.0's kwok provider with kwok as the kubelet of its Nodes (bench/build-karpenter-kwok.sh)."""
    users = {}

    def setup(bed):
        crds = os.path.join(built, "crds")
        install_crds(bed, crds, sorted(os.listdir(crds)))
        create(bed, "/apis/karpenter.sh/v1/nodepools", nodepool("karpenter.kwok.sh", "KWOKNodeClass"))
        create(bed, "/apis/karpenter.kwok.sh/v1alpha1/kwoknodeclasses", {
            "apiVersion": "karpenter.kwok.sh/v1alpha1", "kind": "KWOKNodeClass", "metadata": {"name": "default"}})
        users["karpenter"] = bench_user(bed, "karpenter-bench", "bench")
        users["kwok"] = bench_user(bed, "kwok-bench", "system:nodes")

    def start(bed, log):
        # Karpenter's chart's settings (its defaults otherwise); a local process, so no GOMEMLIMIT from a pod limit.
        # One instance without leader election, as the bed runs kube-scheduler in a benchmark: on a loaded machine a
        # lease renewal missed its 10 s deadline and Karpenter exits on a lost lease ("panic: leader election lost",
        # load average 19, 1,000 pods).
        env = dict(os.environ, KUBECONFIG=users["karpenter"], SYSTEM_NAMESPACE="default", LOG_LEVEL="info",
                   DISABLE_LEADER_ELECTION="true",
                   KUBERNETES_MIN_VERSION="1.19.0-0", METRICS_PORT=str(free_port()),
                   HEALTH_PROBE_PORT=str(free_port()))
        karpenter = subprocess.Popen([os.path.join(built, "bin", "karpenter")], stdout=log, stderr=subprocess.STDOUT,
                                     env=env, preexec_fn=lambda: kubebed._die_with_parent(signal.SIGTERM))
        kwok = subprocess.Popen([os.path.join(built, "bin", "kwok"), "--kubeconfig", users["kwok"],
                                 "--manage-all-nodes=false",
                                 "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake"],
                                stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ),
                                preexec_fn=lambda: kubebed._die_with_parent(signal.SIGTERM))
        return karpenter, kwok

    return run_row("karpenter", pods, setup, start, kwok_price)


def print_table(rows):
    cols = ("autoscaler", "pods", "all_bound_s", "all_running_s", "nodes", "cost_per_hour", "api_requests", "cpu_s",
            "peak_rss_mib", "kubelet_api_requests", "kubelet_cpu_s", "kubelet_peak_rss_mib")
    print(" ".join("%-14s" % c[:14] for c in cols))
    for r in rows:
        print(" ".join("%-14s" % r.get(c, "-") for c in cols))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("nodesmith")
    ap.add_argument("--pods", default="1000,20000", help="comma-separated pod counts, one nodesmith row each")
    ap.add_argument("--karpenter-pods", type=int, default=20000,
                    help="pods of the Karpenter row (0: none); its build failing is printed, not fatal")
    args = ap.parse_args()
    # SIGTERM (meson's timeout) unwinds, so the control plane is stopped and its files removed
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    # both rows choose from the kwok provider's catalog: without a Karpenter row its module is enough
    built = build_karpenter_kwok(not args.karpenter_pods)
    rows = []
    for n in [int(x) for x in args.pods.split(",") if x]:
        rows.append(nodesmith_row(os.path.abspath(args.nodesmith), n, built))
        print(json.dumps(rows[-1]), flush=True)
    if args.karpenter_pods:
        try:
            rows.append(karpenter_row(args.karpenter_pods, built))
            print(json.dumps(rows[-1]), flush=True)
        except kubebed.BedError as e:
            print("no Karpenter row: %s" % e, flush=True)
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
