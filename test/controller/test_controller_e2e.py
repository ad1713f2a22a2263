#!/usr/bin/python3
"""`nodesmith controller --provider sim --simulate-kubelet` on a real control plane (test/kube): Karpenter's own CRDs,
a NodePool, a node class and a Deployment of 50 pods applied with kubectl; NodeClaims appear as Karpenter writes them,
Nodes register, the real kube-scheduler binds the pods, they run; SIGTERM stops the controller cleanly and releases
its Lease. Starts and stops its own control plane (kubebed.plane()) and every process it starts.

Usage: test_controller_e2e.py NODESMITH_BINARY
"""
import http.client
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kube"))
import kubebed  # noqa: E402

KUBECTL = os.environ.get("NS_TEST_KUBECTL", "/usr/bin/kubectl")
NODESMITH = None
STATE_DIR = None  # the simulated cloud every controller of this module shares (sim option state_file)
BED = None
PLANE = None
CRDS = None

SIM_NODECLASS_CRD = {
    # A permissive CRD for the simulated provider's node class (nodesmith will ship its own CRDs).
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "simnodeclasses.nodesmith.io"},
    "spec": {"group": "nodesmith.io", "scope": "Cluster",
             "names": {"plural": "simnodeclasses", "singular": "simnodeclass", "kind": "SimNodeClass",
                       "listKind": "SimNodeClassList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]},
}


def kubectl(*args, stdin=None, check=True):
    r = subprocess.run([KUBECTL, "--kubeconfig", BED.kubeconfig, *args], input=stdin, capture_output=True,
                       text=True, timeout=120)
    if check and r.returncode != 0:
        raise AssertionError("kubectl %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return r.stdout


def kget(*args):
    return json.loads(kubectl("get", *args, "-o", "json"))


def eventually(what, predicate, timeout=180, interval=1.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError("timed out after %ds waiting for %s" % (timeout, what))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def install_crds(*files, stdin=None):
    for f in files:
        kubectl("apply", "--server-side", "-f", os.path.join(CRDS, f))
    if stdin:
        kubectl("apply", "-f", "-", stdin=stdin)


def setUpModule():
    global BED, PLANE, CRDS, STATE_DIR
    STATE_DIR = tempfile.TemporaryDirectory(prefix="nodesmith-sim-cloud-")
    CRDS = subprocess.run(["bash", os.path.join(HERE, "fetch-karpenter-crds.sh")], capture_output=True, text=True,
                          check=True).stdout.strip()
    PLANE = kubebed.plane()
    BED = PLANE.__enter__()
    # Karpenter's CRDs come later (ProvisioningEndToEnd): the controller is not ready without them.
    install_crds(stdin=json.dumps(SIM_NODECLASS_CRD))
    kubectl("wait", "--for", "condition=Established", "--timeout=60s", "crd/simnodeclasses.nodesmith.io")


def http_get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


def metric(text, name, **labels):
    """The value of the sample NAME{LABELS} (labels in any order), or None."""
    want = {k: str(v) for k, v in labels.items()}
    for line in text.splitlines():
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        if got == want:
            return float(m.group(3))
    return None


def karpenter_events(namespace, reason=None, kind=None):
    """Events nodesmith published (source karpenter) in NAMESPACE ("default" holds those about cluster-scoped
    objects, as client-go puts them), optionally of one reason and involved kind."""
    sel = ["source=karpenter"] + (["reason=" + reason] if reason else []) + (["involvedObject.kind=" + kind] if kind
                                                                              else [])
    return kget("events", "-n", namespace, "--field-selector", ",".join(sel))["items"]


def tearDownModule():
    PLANE.__exit__(None, None, None)
    STATE_DIR.cleanup()


def cloud_instances():
    """The shared simulated cloud's instances that are not terminated: {provider_id: nodeclaim_name}."""
    path = os.path.join(STATE_DIR.name, "cloud")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    return {r[3]: r[8] for r in rows if r[1] != "6"}  # 6: NS_INSTANCE_TERMINATED


class Controller:
    """A `nodesmith controller` process with its log in a file (EXTRA_ENV over the environment, None unsetting a
    variable). COMMAND replaces the default command line (the simulated provider with the shared cloud, on the bed's
    admin kubeconfig); its ports and identity still come from here."""

    def __init__(self, identity, extra_env=None, command=None):
        self.log = tempfile.NamedTemporaryFile("w+", prefix="controller-", suffix=".log", delete=False)
        env = dict(os.environ, BATCH_IDLE_DURATION="1s", BATCH_MAX_DURATION="10s", LOG_LEVEL="info",
                   METRICS_PORT=str(free_port()), HEALTH_PROBE_PORT=str(free_port()), **(extra_env or {}))
        env = {k: v for k, v in env.items() if v is not None}  # None in EXTRA_ENV: unset
        self.env = env
        self.metrics_port = int(env["METRICS_PORT"])
        self.health_port = int(env["HEALTH_PROBE_PORT"])
        command = command or [NODESMITH, "controller", "--provider", "sim", "--simulate-kubelet",
                              "--set", "state_file=" + os.path.join(STATE_DIR.name, "cloud"),
                              "--kubeconfig", BED.kubeconfig]
        self.p = subprocess.Popen(command + ["--identity", identity, "--bind-address", "127.0.0.1"],
                                  stdout=self.log, stderr=subprocess.STDOUT, env=env,
                                  preexec_fn=lambda: kubebed._die_with_parent(signal.SIGTERM))

    def text(self):
        with open(self.log.name) as f:
            return f.read()

    def stop(self, timeout=30):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise AssertionError("controller did not stop within %ds of SIGTERM:\n%s" % (timeout, self.text()[-4000:]))

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        os.unlink(self.log.name)


NODEPOOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    metadata:
      labels:
        team: e2e
    spec:
      nodeClassRef:
        group: nodesmith.io
        kind: SimNodeClass
        name: default
      requirements:
      - key: karpenter.sh/capacity-type
        operator: In
        values: ["on-demand"]
      - key: node.kubernetes.io/instance-type
        operator: In
        values: ["m5.large", "m5.xlarge", "m5.2xlarge"]
      expireAfter: 720h
  limits:
    cpu: "1000"
---
apiVersion: nodesmith.io/v1
kind: SimNodeClass
metadata:
  name: default
spec: {}
"""

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inflate
  namespace: %(ns)s
spec:
  replicas: 50
  selector:
    matchLabels: {app: inflate}
  template:
    metadata:
      labels: {app: inflate}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: inflate
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: 500m, memory: 256Mi}
"""


class Test1ProvisioningEndToEnd(unittest.TestCase):
    def test_50_pods_get_nodes_from_nodeclaims(self):
        ns = BED.namespace("ctl")
        ctl = Controller("replica-a")
        try:
            # Without Karpenter's CRDs: alive, not ready, saying why.
            eventually("/healthz", lambda: self._probe(ctl, "/healthz") == (200, "ok"), timeout=30)
            time.sleep(2)
            status, body = self._probe(ctl, "/readyz")
            self.assertEqual(status, 503, body)
            self.assertIn("NodePool and NodeClaim CRDs", body)
            self.assertEqual(self._probe(ctl, "/nothing")[0], 404)
            install_crds("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml")
            eventually("the controller's cache to sync", lambda: "cache synced" in ctl.text(), timeout=90)
            self.assertEqual(self._probe(ctl, "/readyz"), (200, "ok"))
            eventually("the controller to lead", lambda: "successfully acquired lease" in ctl.text(), timeout=60)
            kubectl("apply", "-f", "-", stdin=NODEPOOL)
            kubectl("apply", "-f", "-", stdin=DEPLOYMENT % {"ns": ns})
            t0 = time.monotonic()

            def all_running():
                pods = kget("pods", "-n", ns)["items"]
                running = [p for p in pods if p["status"].get("phase") == "Running" and p["spec"].get("nodeName")]
                return len(pods) == 50 and len(running) == 50 and pods
            try:
                pods = eventually("50 pods bound by kube-scheduler and Running", all_running, timeout=240)
            except AssertionError:
                print(ctl.text()[-6000:], file=sys.stderr)
                raise
            elapsed = time.monotonic() - t0
            print("# 50 pods Running %.1f s after kubectl apply" % elapsed)

            # Pods run as soon as their Node is Ready; the claim is marked Initialized on the controller's next pass,
            # and a claim launched for pods the scheduler then bound elsewhere initializes after they all run.
            def all_initialized():
                claims = kget("nodeclaims")["items"]
                return all({k["type"]: k["status"] for k in c.get("status", {}).get("conditions", [])}
                           .get("Initialized") == "True" for c in claims) and claims
            claims = eventually("every NodeClaim Initialized", all_initialized, timeout=120)
            nodes = {n["metadata"]["name"]: n for n in kget("nodes")["items"]}
            self.assertGreater(len(claims), 0)
            used = {p["spec"]["nodeName"] for p in pods}
            claim_nodes = set()
            for c in claims:
                m = c["metadata"]
                self.assertEqual(m.get("generateName"), "default-")
                self.assertTrue(m["name"].startswith("default-") and len(m["name"]) == len("default-") + 5, m["name"])
                self.assertIn("karpenter.sh/termination", m.get("finalizers", []))
                owner = m["ownerReferences"][0]
                self.assertEqual((owner["kind"], owner["name"], owner.get("blockOwnerDeletion")),
                                 ("NodePool", "default", True))
                self.assertEqual(m["labels"]["karpenter.sh/nodepool"], "default")
                self.assertEqual(m["labels"]["team"], "e2e")
                self.assertIn("karpenter.sh/nodepool-hash", m["annotations"])
                self.assertEqual(c["spec"]["nodeClassRef"], {"group": "nodesmith.io", "kind": "SimNodeClass",
                                                             "name": "default"})
                conds = {k["type"]: k["status"] for k in c["status"]["conditions"]}
                for t in ("Launched", "Registered", "Initialized"):
                    self.assertEqual(conds.get(t), "True", (m["name"], c["status"]["conditions"]))
                # operatorpkg's SetCondition: each condition's observedGeneration is the claim's generation
                self.assertTrue(all(k.get("observedGeneration") == m["generation"] for k in c["status"]["conditions"]),
                                (m["name"], m["generation"], c["status"]["conditions"]))
                node = nodes[c["status"]["nodeName"]]
                claim_nodes.add(node["metadata"]["name"])
                self.assertEqual(node["spec"]["providerID"], c["status"]["providerID"])
                self.assertEqual(node["metadata"]["labels"]["karpenter.sh/nodepool"], "default")
                self.assertEqual(node["metadata"]["labels"]["karpenter.sh/registered"], "true")
                self.assertIn(node["metadata"]["labels"]["node.kubernetes.io/instance-type"],
                              ("m5.large", "m5.xlarge", "m5.2xlarge"))
                taints = [t["key"] for t in node["spec"].get("taints", [])]
                self.assertNotIn("karpenter.sh/unregistered", taints)
            self.assertTrue(used <= claim_nodes, (used, claim_nodes))
            # kube-scheduler, not nodesmith, bound them
            events = kget("events", "-n", ns, "--field-selector", "reason=Scheduled")["items"]
            self.assertGreaterEqual(len(events), 50)
            self.assertTrue(all(e.get("source", {}).get("component") == "default-scheduler" or
                                e.get("reportingComponent") == "default-scheduler" for e in events))
            # Karpenter's Nominated events on the pods, rate-limited as Karpenter's (burst 10, then 5 per second)
            uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods}
            claim_names = {c["metadata"]["name"] for c in claims}
            nominated = karpenter_events(ns, "Nominated", "Pod")
            self.assertGreaterEqual(len(nominated), 10, nominated)
            self.assertLessEqual(len(nominated), 50)
            for e in nominated:
                inv = e["involvedObject"]
                self.assertEqual((inv["apiVersion"], inv["namespace"], e["type"], e["count"],
                                  e.get("reportingComponent")), ("v1", ns, "Normal", 1, "karpenter"), e)
                self.assertEqual(inv["uid"], uids[inv["name"]], e)
                m = re.fullmatch(r"Pod should schedule on: nodeclaim/(\S+)", e["message"])
                self.assertTrue(m and m.group(1) in claim_names, e["message"])
            print("# %d Nominated events for 50 pods (rate-limited)" % len(nominated))
            # the node class's status as the provider resolved it (ABI 4), with the root Ready
            nc_status = eventually("the SimNodeClass's status", lambda: kget("simnodeclass", "default")
                                   .get("status"), timeout=30)
            nc_conds = {k["type"]: k for k in nc_status["conditions"]}
            self.assertEqual(nc_conds["Ready"]["status"], "True", nc_status)
            self.assertTrue(all(k.get("lastTransitionTime") for k in nc_conds.values()), nc_status)
            nc_generation = kget("simnodeclass", "default")["metadata"]["generation"]
            self.assertTrue(all(k.get("observedGeneration") == nc_generation for k in nc_conds.values()), nc_status)
            self.assertIn("ValidationSucceeded", nc_conds)
            # Karpenter's metrics
            status, text = http_get(ctl.metrics_port, "/metrics")
            self.assertEqual(status, 200)
            print("# " + "\n# ".join(l for l in text.splitlines() if not l.startswith("#")))
            self.assertEqual(metric(text, "karpenter_nodeclaims_created_total", nodepool="default",
                                    reason="provisioned", min_values_relaxed="false"), len(claims))
            zones = {nodes[c["status"]["nodeName"]]["metadata"]["labels"]["topology.kubernetes.io/zone"] for c in claims}
            self.assertEqual(sum(metric(text, "karpenter_nodes_created_total", nodepool="default", zone=z) or 0
                                 for z in zones), len(claims))
            cpu = sum(float(c["status"]["capacity"]["cpu"]) for c in claims)
            self.assertEqual(metric(text, "karpenter_nodepools_usage", nodepool="default", resource_type="cpu"), cpu)
            self.assertEqual(metric(text, "karpenter_nodepools_limit", nodepool="default", resource_type="cpu"), 1000)
            self.assertEqual(metric(text, "karpenter_cluster_state_node_count"), len(nodes))
            self.assertEqual(metric(text, "karpenter_cluster_state_synced"), 1)
            self.assertIn("# TYPE karpenter_nodeclaims_created_total counter", text)
            self.assertRegex(text, r'karpenter_build_info\{commit="",goarch="\w+",goversion="",version="[^"]+"\} 1')
            # what an operator sees
            table = kubectl("get", "nodepools,nodeclaims")
            print("# " + table.replace("\n", "\n# "))
            self.assertRegex(table, r"NAME\s+NODECLASS\s+NODES\s+READY\s+AGE")
            self.assertRegex(table, r"NAME\s+TYPE\s+CAPACITY\s+ZONE\s+NODE\s+READY\s+AGE")
            for c in claims:
                self.assertRegex(table, r"nodeclaim.karpenter.sh/%s\s+m5\.\S+\s+on-demand\s+us-west-2[abc]\s+%s\s+True"
                                 % (c["metadata"]["name"], c["status"]["nodeName"]))
            # SIGTERM: clean exit, Lease released
            self.assertEqual(ctl.stop(), 0, ctl.text()[-3000:])
            # (the informers' 404s before Karpenter's CRDs were installed are expected)
            errors = [line for line in ctl.text().splitlines() if '"level":"ERROR"' in line and
                      not ('"message":"list failed"' in line and "HTTP 404" in line)]
            self.assertEqual(errors, [], "the controller logged errors")
            lease = kget("lease", "-n", "default", "karpenter-leader-election")
            self.assertFalse(lease["spec"].get("holderIdentity"), lease["spec"])
        finally:
            ctl.close()

    @staticmethod
    def _probe(ctl, path):
        try:
            return http_get(ctl.health_port, path)
        except OSError:
            return None


class Test2FailoverEndToEnd(unittest.TestCase):
    """Two replicas: the standby steps nothing; the leader is killed (SIGKILL, no Lease release) while its NodeClaims
    launch; the standby takes the Lease once it expires and finishes the job: every pod Running, one instance per
    NodeClaim, no instance without a NodeClaim."""

    def test_standby_takes_over_from_a_killed_leader(self):
        install_crds("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml")
        for crd in ("nodepools.karpenter.sh", "nodeclaims.karpenter.sh"):
            kubectl("wait", "--for", "condition=Established", "--timeout=60s", "crd/" + crd)
        kubectl("apply", "-f", "-", stdin=NODEPOOL)
        ns = BED.namespace("failover")
        leader = Controller("replica-b")
        standby = None
        try:
            eventually("replica-b to lead", lambda: "successfully acquired lease" in leader.text(), timeout=90)
            standby = Controller("replica-c")
            eventually("replica-c's cache to sync", lambda: "cache synced" in standby.text(), timeout=90)
            before = {c["metadata"]["name"] for c in kget("nodeclaims")["items"]}
            kubectl("apply", "-f", "-", stdin=(DEPLOYMENT % {"ns": ns}).replace("name: inflate", "name: failover")
                    .replace("replicas: 50", "replicas: 30"))

            def new_claims():
                return [c for c in kget("nodeclaims")["items"] if c["metadata"]["name"] not in before]
            eventually("the leader to create a NodeClaim", new_claims, timeout=90, interval=0.2)
            leader.p.kill()  # in the middle of its launches: no Lease release
            leader.p.wait()
            self.assertNotIn("successfully acquired lease", standby.text())
            self.assertNotIn("created nodeclaim", standby.text())
            eventually("replica-c to take the Lease", lambda: "successfully acquired lease" in standby.text(),
                       timeout=60)
            lease = kget("lease", "-n", "default", "karpenter-leader-election")
            self.assertEqual(lease["spec"]["holderIdentity"], "replica-c")

            def all_running():
                pods = kget("pods", "-n", ns)["items"]
                return len(pods) == 30 and all(p["status"].get("phase") == "Running" for p in pods)
            try:
                eventually("30 pods Running after the takeover", all_running, timeout=240)
            except AssertionError:
                print(standby.text()[-6000:], file=sys.stderr)
                raise
            claims = [c for c in kget("nodeclaims")["items"] if not c["metadata"].get("deletionTimestamp")]
            ids = [c["status"].get("providerID") for c in claims]
            self.assertEqual(len(ids), len(set(ids)), "two NodeClaims share an instance")
            cloud = cloud_instances()
            self.assertEqual(sorted(cloud), sorted(ids), "instances and NodeClaims differ (duplicate or orphan)")
            names = {c["metadata"]["name"] for c in claims}
            self.assertTrue(set(cloud.values()) <= names, (cloud, names))
            print("# after the takeover: %d NodeClaims, %d instances" % (len(claims), len(cloud)))
            self.assertEqual(standby.stop(), 0, standby.text()[-3000:])
            errors = [line for line in standby.text().splitlines() if '"level":"ERROR"' in line]
            self.assertEqual(errors, [], "the standby logged errors")
        finally:
            leader.close()
            if standby:
                standby.close()
            kubectl("delete", "namespace", ns, "--wait=false")


PDB = """
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: consolidate
  namespace: %(ns)s
spec:
  minAvailable: 4
  selector:
    matchLabels: {app: inflate}
"""


class Test3ConsolidationEndToEnd(unittest.TestCase):
    """Scale down: the disruption controller consolidates (removes NodeClaims whose pods fit elsewhere, or that are
    empty). Then a NodeClaim holding the Deployment's pods is deleted with kubectl: the karpenter.sh/termination
    finalizer keeps it while the node is tainted and drained through the Eviction API, so the real API server
    enforces a PodDisruptionBudget (minAvailable 4 of 5); then its instance is terminated and its Node deleted."""

    def test_scale_down_consolidates_and_deletion_drains_within_a_pdb(self):
        install_crds("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml")
        kubectl("apply", "-f", "-", stdin=NODEPOOL)
        ns = BED.namespace("consolidate")
        ctl = Controller("replica-d")
        try:
            eventually("replica-d to lead", lambda: "successfully acquired lease" in ctl.text(), timeout=90)
            kubectl("apply", "-f", "-", stdin=(DEPLOYMENT % {"ns": ns}).replace("replicas: 50", "replicas: 20"))

            def live_pods():
                return [p for p in kget("pods", "-n", ns)["items"] if p["status"].get("phase") == "Running" and
                        not p["metadata"].get("deletionTimestamp")]

            def running(n):
                return lambda: len(kget("pods", "-n", ns)["items"]) == n and len(live_pods()) == n
            eventually("20 pods Running", running(20), timeout=240)
            kubectl("apply", "-f", "-", stdin=PDB % {"ns": ns})
            eventually("the PDB to be observed", lambda: kget("pdb", "-n", ns, "consolidate").get("status", {})
                       .get("observedGeneration") == 1, timeout=60)
            kubectl("scale", "-n", ns, "deployment/inflate", "--replicas=5")
            eventually("5 pods Running", running(5), timeout=120)
            try:
                eventually("consolidation", lambda: '"message":"disrupting node(s)"' in ctl.text(), timeout=180)
            except AssertionError:
                print(ctl.text()[-8000:], file=sys.stderr)
                raise
            eventually("5 pods Running after consolidation", running(5), timeout=180)

            def allowed_disruptions(reason):
                status, text = http_get(ctl.metrics_port, "/metrics")
                self.assertEqual(status, 200)
                return metric(text, "karpenter_nodepools_allowed_disruptions", nodepool="default", reason=reason)
            # Karpenter's gauge under the CRD's default budget, 10% of the pool's nodes rounded up
            eventually("karpenter_nodepools_allowed_disruptions of at least 1",
                       lambda: (allowed_disruptions("Underutilized") or 0) >= 1, timeout=30)
            # A budget of 0 stops further consolidation, so the deletion below is the only disruption of its claim
            # (a claim consolidation already marked would evict with its DisruptionReason, not Forceful Termination).
            kubectl("patch", "nodepool", "default", "--type=merge", "-p",
                    '{"spec":{"disruption":{"budgets":[{"nodes":"0"}]}}}')
            # The controller writes the pool's conditions with the generation it read, after the round that decided
            # on it: once they carry the patched generation, no consolidation decided on the old budget is still to
            # start, and settled() below sees every one that did.
            def budget_observed():
                pool = kget("nodepool", "default")
                conds = pool.get("status", {}).get("conditions", [])
                return conds and all(k.get("observedGeneration") == pool["metadata"]["generation"] for k in conds)
            eventually("the NodePool's conditions to observe the budget of 0", budget_observed, timeout=60)
            eventually("karpenter_nodepools_allowed_disruptions of 0 for every reason",
                       lambda: all(allowed_disruptions(r) == 0 for r in ("Empty", "Drifted", "Underutilized")),
                       timeout=30)

            def settled():
                claims = kget("nodeclaims")["items"]
                busy = [c for c in claims if c["metadata"].get("deletionTimestamp") or
                        any(k["type"] == "DisruptionReason" for k in c.get("status", {}).get("conditions", []))]
                return not busy and running(5)() and claims
            claims = eventually("disruptions in flight to finish", settled, timeout=180)
            # delete the NodeClaim holding most of the Deployment's pods
            on = {}
            for p in live_pods():
                on[p["spec"]["nodeName"]] = on.get(p["spec"]["nodeName"], 0) + 1
            node = max(on, key=on.get)
            claim = [c["metadata"]["name"] for c in claims if c["status"].get("nodeName") == node][0]
            kubectl("delete", "nodeclaim", claim, "--wait=false")
            deadline = time.monotonic() + 240
            low = 5
            while time.monotonic() < deadline:
                low = min(low, len(live_pods()))
                if kubectl("get", "nodeclaim", claim, "--ignore-not-found") == "" and running(5)():
                    break
                time.sleep(0.5)
            else:
                print(ctl.text()[-8000:], file=sys.stderr)
                self.fail("NodeClaim %s was not drained and removed within 240 s" % claim)
            self.assertGreaterEqual(low, 4, "the PodDisruptionBudget was broken")
            self.assertIn('"message":"evicted pod"', ctl.text())
            # Karpenter's events: the consolidated claim and node, the evicted pods, a drain the budget held up
            terminating = karpenter_events("default", "DisruptionTerminating", "NodeClaim")
            self.assertTrue(terminating, "no DisruptionTerminating event")
            self.assertTrue(all(re.fullmatch(r"Disrupting NodeClaim: (Empty|Underutilized)", e["message"])
                                for e in terminating), terminating)
            evicted = karpenter_events(ns, "Evicted", "Pod")
            self.assertTrue(any(e["message"] == "Evicted pod: Forceful Termination" for e in evicted), evicted)
            # Each node whose drain the budget held up (the deleted claim's, or one consolidation drained before it)
            # has its FailedDraining event.
            log = [json.loads(line) for line in ctl.text().splitlines() if line.startswith("{")]
            held = {entry["Node"]["name"] for entry in log if entry.get("message") == "eviction blocked"}
            # Two or more of the Deployment's pods on the deleted claim's node are evicted at once against a budget
            # allowing one: its drain is held up whatever else consolidation did.
            if on[node] >= 2:
                self.assertIn(node, held, "%d pods on %s, evicted without a blocked eviction" % (on[node], node))
            for name in sorted(held):
                draining = eventually("a FailedDraining event on %s" % name, lambda name=name: [
                    e for e in karpenter_events("default", "FailedDraining", "Node")
                    if e["involvedObject"]["name"] == name], timeout=30)
                self.assertEqual((draining[0]["type"], draining[0]["message"]),
                                 ("Warning", "Failed to drain node, evicting pod violates a PDB"))
            self.assertNotIn('"message":"failed publishing event"', ctl.text())
            self.assertEqual(kubectl("get", "node", node, "--ignore-not-found"), "")
            # the instances of removed NodeClaims are terminated: the cloud and the NodeClaims agree
            eventually("cloud and NodeClaims to agree", lambda: sorted(cloud_instances()) == sorted(
                c["status"].get("providerID") for c in kget("nodeclaims")["items"]), timeout=60)
            print("# %s drained (%d pod(s) of the Deployment on it); fewest available pods under the PDB: %d"
                  % (claim, on[node], low))
            self.assertEqual(ctl.stop(), 0, ctl.text()[-3000:])
            errors = [line for line in ctl.text().splitlines() if '"level":"ERROR"' in line]
            self.assertEqual(errors, [], "the controller logged errors")
        finally:
            kubectl("patch", "nodepool", "default", "--type=merge", "-p",
                    '{"spec":{"disruption":{"budgets":[{"nodes":"10%"}]}}}')
            ctl.close()


SPOT_POOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: spot
spec:
  template:
    spec:
      nodeClassRef:
        group: nodesmith.io
        kind: SimNodeClass
        name: default
      requirements:
      - key: karpenter.sh/capacity-type
        operator: In
        values: ["spot"]
      - key: node.kubernetes.io/instance-type
        operator: In
        values: ["m5.large"]
  limits:
    cpu: "100"
"""


class Test4SpotInterruptionEndToEnd(unittest.TestCase):
    """A spot interruption announced by the provider on the live cluster: the sim's node agent sets the Node condition
    SimInterruptionScheduled=True (reason SpotInterruption, the deadline two minutes ahead, EC2's warning), as AKS's
    node problem detector relays Azure's Scheduled Events. The node is cordoned (karpenter.sh/disrupted), a replacement
    NodeClaim is launched in another offering (the interrupted one is marked unavailable), the pods are drained onto it
    and the interrupted NodeClaim, its instance and Node are gone before the deadline; Karpenter's events say so."""

    def test_interrupted_node_is_replaced_and_drained_before_the_deadline(self):
        install_crds("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml")
        kubectl("apply", "-f", "-", stdin=NODEPOOL + "---" + SPOT_POOL)
        ns = BED.namespace("spot")
        ctl = Controller("replica-e")
        try:
            eventually("replica-e to lead", lambda: "successfully acquired lease" in ctl.text(), timeout=90)
            # three pods that fit one m5.large, with a do-not-disrupt value Karpenter ignores (with an event)
            deployment = (DEPLOYMENT % {"ns": ns}).replace("name: inflate", "name: spot").replace(
                "replicas: 50", "replicas: 3").replace("    spec:\n      terminationGracePeriodSeconds",
                                                       "    spec:\n      nodeSelector: {karpenter.sh/nodepool: spot}"
                                                       "\n      terminationGracePeriodSeconds").replace(
                "      labels: {app: inflate}\n    spec",
                "      labels: {app: inflate}\n      annotations: {karpenter.sh/do-not-disrupt: ten}\n    spec")
            kubectl("apply", "-f", "-", stdin=deployment)

            def pods():
                return [p for p in kget("pods", "-n", ns)["items"] if not p["metadata"].get("deletionTimestamp")]

            def running():
                ps = pods()
                return len(ps) == 3 and all(p["status"].get("phase") == "Running" for p in ps) and ps
            before = eventually("3 pods Running on spot capacity", running, timeout=240)
            node = before[0]["spec"]["nodeName"]
            self.assertEqual({p["spec"]["nodeName"] for p in before}, {node}, "the pods should share one node")
            claim = [c for c in kget("nodeclaims")["items"] if c["status"].get("nodeName") == node][0]
            claim_name = claim["metadata"]["name"]
            self.assertEqual(claim["metadata"]["labels"]["karpenter.sh/capacity-type"], "spot")
            zone = claim["metadata"]["labels"]["topology.kubernetes.io/zone"]
            claims_before = {c["metadata"]["name"] for c in kget("nodeclaims")["items"]}
            deadline = time.time() + 120
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(deadline))
            patch = {"status": {"conditions": [{"type": "SimInterruptionScheduled", "status": "True",
                                                "reason": "SpotInterruption", "message": stamp,
                                                "lastHeartbeatTime": time.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                                "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ")}]}}
            # every version of the node, as a watch streams them: the cordon is seen however short it lasts
            watch = subprocess.Popen([KUBECTL, "--kubeconfig", BED.kubeconfig, "get", "node", node, "--watch", "-o",
                                      "jsonpath={.spec.taints[*].key}={.spec.taints[*].effect}{\"\\n\"}"],
                                     stdout=subprocess.PIPE, text=True)
            seen = []
            reader = threading.Thread(target=lambda: seen.extend(watch.stdout), daemon=True)
            reader.start()
            eventually("the node watch to start", lambda: seen, timeout=30, interval=0.2)
            kubectl("patch", "node", node, "--subresource=status", "--type=strategic", "-p", json.dumps(patch))
            while time.time() < deadline:
                n = kubectl("get", "node", node, "-o", "name", "--ignore-not-found")
                gone = kubectl("get", "nodeclaim", claim_name, "--ignore-not-found") == "" and not n
                if gone and running():
                    break
                time.sleep(0.5)
            else:
                print(ctl.text()[-8000:], file=sys.stderr)
                self.fail("the interrupted node %s was not drained and removed before the deadline" % node)
            left = deadline - time.time()
            watch.terminate()
            watch.wait()
            reader.join()
            self.assertTrue(any(re.match(r".*karpenter\.sh/disrupted.*=.*NoSchedule", line) for line in seen),
                            "the interrupted node was never seen cordoned: %s" % seen)
            after = running()
            self.assertTrue(all(p["spec"]["nodeName"] != node for p in after))
            replacements = [c for c in kget("nodeclaims")["items"] if c["metadata"]["name"] not in claims_before]
            self.assertTrue(replacements, "no replacement NodeClaim was launched")
            for r in replacements:
                labels = r["metadata"]["labels"]
                # the interrupted offering (m5.large spot in its zone) is unavailable for a while
                self.assertNotEqual(labels["topology.kubernetes.io/zone"], zone, labels)
            self.assertNotIn(claim["status"]["providerID"], cloud_instances())
            print("# %s interrupted (deadline %s): replaced by %s and drained %.0f s before the deadline"
                  % (claim_name, stamp, ", ".join(r["metadata"]["name"] for r in replacements), left))
            self.assertIn('"message":"received interruption event"', ctl.text())
            # Karpenter's events (the AWS provider's interruption events, the terminator's evictions)
            for kind, name in (("NodeClaim", claim_name), ("Node", node)):
                for reason in ("SpotInterrupted", "TerminatingOnInterruption"):
                    got = [e for e in karpenter_events("default", reason, kind) if e["involvedObject"]["name"] == name]
                    self.assertEqual(len(got), 1, (kind, name, reason, got))
                    self.assertEqual(got[0]["type"], "Warning")
            uids = {p["metadata"]["name"] for p in before}
            evicted = [e for e in karpenter_events(ns, "Evicted", "Pod") if e["involvedObject"]["name"] in uids]
            self.assertEqual(len(evicted), 3, evicted)
            self.assertTrue(all(e["message"] == "Evicted pod: Forceful Termination" for e in evicted), evicted)
            invalid = karpenter_events(ns, "InvalidDoNotDisruptAnnotation", "Pod")
            self.assertTrue(invalid, "no InvalidDoNotDisruptAnnotation event")
            self.assertEqual(invalid[0]["message"], 'Invalid karpenter.sh/do-not-disrupt annotation: failed to parse '
                             '"ten" as a duration: time: invalid duration "ten", ignoring annotation')
            self.assertEqual(ctl.stop(), 0, ctl.text()[-3000:])
            errors = [line for line in ctl.text().splitlines() if '"level":"ERROR"' in line]
            self.assertEqual(errors, [], "the controller logged errors")
        finally:
            ctl.close()
            kubectl("delete", "namespace", ns, "--wait=false")


class Test5RestartEndToEnd(unittest.TestCase):
    """The controller restarted at random points of provisioning, consolidation and an interruption's drain (SIGKILL or
    SIGTERM, drawn from a seed printed with the points; NS_E2E_SEED replays a run): each time a new process carries on
    from what the cluster and the cloud hold, and the end state is the one an uninterrupted run reaches: every pod
    Running on a NodeClaim's node and no NodeClaim's node without a pod (no empty node left; the earlier tests' pods,
    still in the cluster, count), every NodeClaim launched, registered and initialized with its Node, the cloud's live
    instances exactly the NodeClaims' (none launched twice, none orphaned), no disruption left half done (no
    karpenter.sh/disrupted taint, no disruption annotation), the interrupted node gone before its deadline."""

    def test_restarts_at_random_points_reach_the_same_end_state(self):
        install_crds("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml")
        kubectl("apply", "-f", "-", stdin=NODEPOOL)
        seed = int(os.environ.get("NS_E2E_SEED", random.randrange(1 << 30)))
        rnd = random.Random(seed)
        print("# seed %d (NS_E2E_SEED replays it)" % seed)
        ns = BED.namespace("restart")
        # one replica, as most clusters run Karpenter: a restart does not wait for a Lease to expire
        env = {"DISABLE_LEADER_ELECTION": "true"}
        ctl = [Controller("replica-g", env)]
        points = []

        def restart(phase, low, high):
            delay = rnd.uniform(low, high)
            how = rnd.choice(("SIGKILL", "SIGTERM"))
            time.sleep(delay)
            old = ctl[-1]
            if how == "SIGKILL":
                old.p.kill()
                old.p.wait()
            else:
                self.assertEqual(old.stop(), 0, old.text()[-3000:])
            points.append("%s +%.1fs %s" % (phase, delay, how))
            ctl.append(Controller("replica-g", env))

        def pods():
            return [p for p in kget("pods", "-n", ns)["items"] if not p["metadata"].get("deletionTimestamp")]

        def running(n):
            return lambda: len(kget("pods", "-n", ns)["items"]) == n and all(
                p["status"].get("phase") == "Running" for p in pods())

        try:
            eventually("the controller's cache to sync", lambda: "cache synced" in ctl[-1].text(), timeout=90)
            kubectl("apply", "-f", "-", stdin=(DEPLOYMENT % {"ns": ns}).replace("name: inflate", "name: restart")
                    .replace("replicas: 50", "replicas: 16"))
            restart("provisioning", 0.5, 4.0)
            eventually("16 pods Running", running(16), timeout=240)
            kubectl("scale", "-n", ns, "deployment/restart", "--replicas=4")
            restart("consolidation", 2.0, 25.0)
            eventually("4 pods Running", running(4), timeout=180)
            node = pods()[0]["spec"]["nodeName"]
            victim = [c for c in kget("nodeclaims")["items"] if c["status"].get("nodeName") == node][0]
            deadline = time.time() + 120
            patch = {"status": {"conditions": [{"type": "SimInterruptionScheduled", "status": "True",
                                                "reason": "SpotInterruption",
                                                "message": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(deadline)),
                                                "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ")}]}}
            kubectl("patch", "node", node, "--subresource=status", "--type=strategic", "-p", json.dumps(patch))
            restart("interruption", 0.2, 3.0)
            print("# seed %d, restarts: %s" % (seed, "; ".join(points)))
            eventually("the interrupted NodeClaim and Node to go", lambda: kubectl(
                "get", "nodeclaim", victim["metadata"]["name"], "--ignore-not-found") == "" and kubectl(
                "get", "node", node, "--ignore-not-found") == "", timeout=max(1, deadline - time.time()))

            waiting = ["nothing read yet"]

            def settled():
                """The claims when the end state holds; else None, with what is still missing in waiting[0]."""
                claims = kget("nodeclaims")["items"]
                nodes = {n["metadata"]["name"]: n for n in kget("nodes")["items"]}
                live = pods()
                why = []
                if len(live) != 4 or any(p["status"].get("phase") != "Running" for p in live):
                    why.append("pods: %s" % [(p["metadata"]["name"], p["status"].get("phase"),
                                               p["spec"].get("nodeName")) for p in live])
                for c in claims:
                    name = c["metadata"]["name"]
                    if c["metadata"].get("deletionTimestamp"):
                        why.append("%s is being deleted" % name)
                    conds = {k["type"]: k["status"] for k in c.get("status", {}).get("conditions", [])}
                    if any(conds.get(t) != "True" for t in ("Launched", "Registered", "Initialized")):
                        why.append("%s conditions %s" % (name, conds))
                    n = nodes.get(c["status"].get("nodeName"))
                    if not n:
                        why.append("%s has no Node" % name)
                    elif any(t["key"] == "karpenter.sh/disrupted" for t in n["spec"].get("taints", [])):
                        why.append("%s's Node is tainted karpenter.sh/disrupted" % name)
                    marks = [k for k in c["metadata"].get("annotations", {}) if k.startswith("nodesmith.io/disruption-")]
                    if marks:
                        why.append("%s is annotated %s" % (name, marks))
                # an uninterrupted run leaves no empty node behind (emptiness); the earlier tests' workloads are still
                # in the cluster, on NodeClaims of the same pool: a node is empty when no namespace has a pod there
                used = {p["spec"].get("nodeName") for p in kget("pods", "-A")["items"]
                        if not p["metadata"].get("deletionTimestamp")}
                empty = {c["status"].get("nodeName") for c in claims} - used
                if empty:
                    why.append("nodes without pods: %s" % sorted(empty))
                stray = {p["spec"].get("nodeName") for p in live} - {c["status"].get("nodeName") for c in claims}
                if stray:
                    why.append("pods on nodes no NodeClaim has: %s" % sorted(map(str, stray)))
                ids = sorted(c["status"].get("providerID") or "" for c in claims)
                if sorted(cloud_instances()) != ids or len(set(ids)) != len(ids):
                    why.append("instances %s, claims' %s" % (sorted(cloud_instances().items()), ids))
                waiting[0] = "; ".join(why)
                return None if why or not claims else claims
            try:
                claims = eventually("the end state", settled, timeout=240)
            except AssertionError as e:
                for c in ctl:
                    print("# log of %s:\n%s" % (c.log.name, c.text()[-6000:]), file=sys.stderr)
                raise AssertionError("%s; still: %s (seed %d)" % (e, waiting[0], seed)) from None
            print("# end state: 4 pods on %d NodeClaims, %d instances" % (len(claims), len(cloud_instances())))
            self.assertEqual(ctl[-1].stop(), 0, ctl[-1].text()[-3000:])
            for c in ctl:
                errors = [line for line in c.text().splitlines() if '"level":"ERROR"' in line]
                self.assertEqual(errors, [], "a controller logged errors")
        finally:
            for c in ctl:
                c.close()
            kubectl("delete", "namespace", ns, "--wait=false")


STATIC_NODE = """
apiVersion: v1
kind: Node
metadata:
  name: %(name)s
  labels:
    eks.amazonaws.com/nodegroup: legacy
    node.kubernetes.io/instance-type: m5.xlarge
    topology.kubernetes.io/zone: us-west-2a
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    kubernetes.io/hostname: %(name)s
"""

LEGACY_PDB = """
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: legacy
  namespace: %(ns)s
spec:
  minAvailable: 50%%
  selector:
    matchLabels: {app: legacy}
"""


class StaticKubelet(threading.Thread):
    """Plays kubelet for the static nodes of the Cluster Autoscaler's node group (nodesmith's simulated kubelet only
    plays it for its own nodes): keeps them Ready, reports their pods Running and Ready, and confirms the deletion of
    the pods evicted from them."""

    def __init__(self, nodes):
        super().__init__(daemon=True)
        self.nodes = set(nodes)
        self.quit = threading.Event()

    def run(self):
        while not self.quit.is_set():
            try:
                self.once()
            except (AssertionError, subprocess.TimeoutExpired) as e:  # an API hiccup: next round
                print("# static kubelet: %s" % e, file=sys.stderr)
            self.quit.wait(0.5)

    def once(self):
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for p in kget("pods", "-A")["items"]:
            if p["spec"].get("nodeName") not in self.nodes:
                continue
            name, ns = p["metadata"]["name"], p["metadata"]["namespace"]
            if p["metadata"].get("deletionTimestamp"):
                kubectl("delete", "pod", "-n", ns, name, "--grace-period=0", "--force", "--wait=false", check=False)
            elif p["status"].get("phase") != "Running":
                status = {"phase": "Running", "startTime": now, "conditions": [
                    {"type": t, "status": "True", "lastTransitionTime": now}
                    for t in ("Initialized", "ContainersReady", "Ready", "PodScheduled")]}
                kubectl("patch", "pod", "-n", ns, name, "--subresource=status", "--type=merge", "-p",
                        json.dumps({"status": status}), check=False)


class ReadyWatch(threading.Thread):
    """Every change of a namespace's pods as `kubectl get --watch` streams it: the fewest Ready pods (not being
    deleted) seen at any moment since start, and how many changes were seen."""

    def __init__(self, ns):
        super().__init__(daemon=True)
        self.p = subprocess.Popen([KUBECTL, "--kubeconfig", BED.kubeconfig, "get", "pods", "-n", ns, "--watch",
                                   "--output-watch-events", "-o", "json"], stdout=subprocess.PIPE, text=True)
        self.ready, self.low, self.changes = {}, None, 0
        self.armed = False  # set once the initial listing is in: the count grows through it

    def run(self):
        buf, dec = "", json.JSONDecoder()
        for line in self.p.stdout:
            buf += line
            while True:
                buf = buf.lstrip()
                try:
                    ev, end = dec.raw_decode(buf)
                except ValueError:
                    break
                buf = buf[end:]
                self.seen(ev)

    def seen(self, ev):
        o = ev["object"]
        name = o["metadata"]["name"]
        ok = ev["type"] != "DELETED" and not o["metadata"].get("deletionTimestamp") and any(
            c["type"] == "Ready" and c["status"] == "True" for c in o.get("status", {}).get("conditions", []))
        self.ready[name] = ok
        if self.armed:
            self.changes += 1
            n = sum(self.ready.values())
            self.low = n if self.low is None else min(self.low, n)

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            self.p.wait()
        self.join()


class Test6ClusterAutoscalerMigrationEndToEnd(unittest.TestCase):
    """A migration from Cluster Autoscaler, as Karpenter's guide describes it: the workload runs on the static nodes of
    an existing node group (Nodes the test creates and plays kubelet for) under a PodDisruptionBudget minAvailable 50%;
    with nodesmith running and a NodePool in place, the node group's nodes are cordoned and drained with kubectl drain
    (the Eviction API, which the budget gates): the evicted pods go pending, nodesmith launches NodeClaims for them,
    and the pods end up on nodesmith's nodes; the budget holds throughout (sampled), the static nodes are left to
    their owner (cordoned and empty, nothing of nodesmith's on them)."""

    def test_pods_move_from_a_drained_node_group_without_breaking_the_pdb(self):
        install_crds("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml")
        kubectl("apply", "-f", "-", stdin=NODEPOOL)
        ctl = Controller("replica-f")
        kubelet = watch = None
        statics = ["legacy-1", "legacy-2"]
        ns = BED.namespace("migrate")
        try:
            eventually("replica-f to lead", lambda: "successfully acquired lease" in ctl.text(), timeout=90)
            # a cluster with only the node group: the earlier tests' workloads and NodeClaims go
            for d in kget("deployments", "-A")["items"]:
                if d["metadata"]["namespace"] != "kube-system":
                    kubectl("delete", "deployment", "-n", d["metadata"]["namespace"], d["metadata"]["name"],
                            "--wait=false", "--ignore-not-found")
            eventually("the earlier tests' pods to go", lambda: not [
                p for p in kget("pods", "-A")["items"] if p["metadata"]["namespace"] != "kube-system"], timeout=120)
            kubectl("delete", "nodeclaims", "--all", "--wait=false")
            eventually("the earlier tests' NodeClaims and nodes to go", lambda: not kget("nodeclaims")["items"] and
                       not kubectl("get", "nodes", "-l", "karpenter.sh/nodepool", "-o", "name"), timeout=180)
            for name in statics:
                kubectl("apply", "-f", "-", stdin=STATIC_NODE % {"name": name})
                status = {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                          "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                          "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                          "lastHeartbeatTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                          "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]}
                kubectl("patch", "node", name, "--subresource=status", "--type=merge", "-p",
                        json.dumps({"status": status}))
            kubelet = StaticKubelet(statics)
            kubelet.start()
            deployment = (DEPLOYMENT % {"ns": ns}).replace("name: inflate", "name: legacy").replace(
                "replicas: 50", "replicas: 4").replace("app: inflate", "app: legacy")

            def ready_pods():
                return [p for p in kget("pods", "-n", ns)["items"] if not p["metadata"].get("deletionTimestamp") and
                        any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))]
            # Four pods on legacy-1, two on legacy-2, placed with cordons rather than left to kube-scheduler: legacy-1's
            # four evictions at once exceed the 3 the budget allows (6 Ready, or 4 plus at most the 2 replacements of
            # legacy-2's pods), so the drain meets a refusal whatever the timing. Spread 3 and 3 (kube-scheduler's
            # usual choice), every eviction passes when the first node's three replacements are Ready in time.
            kubectl("cordon", statics[1])
            kubectl("apply", "-f", "-", stdin=deployment)
            eventually("4 pods Ready on %s" % statics[0], lambda: len(ready_pods()) == 4, timeout=120)
            kubectl("uncordon", statics[1])
            kubectl("cordon", statics[0])
            kubectl("scale", "-n", ns, "deployment/legacy", "--replicas=6")
            eventually("6 pods Ready on the node group", lambda: len(ready_pods()) == 6, timeout=120)
            kubectl("uncordon", statics[0])
            placed = sorted(p["spec"]["nodeName"] for p in ready_pods())
            self.assertEqual(placed, [statics[0]] * 4 + [statics[1]] * 2)
            kubectl("apply", "-f", "-", stdin=LEGACY_PDB % {"ns": ns})
            eventually("the PDB to be observed", lambda: kget("pdb", "-n", ns, "legacy").get("status", {})
                       .get("observedGeneration") == 1, timeout=60)
            claims_before = len(kget("nodeclaims")["items"])
            self.assertEqual(claims_before, 0)
            # the migration: cordon the node group, then drain it
            watch = ReadyWatch(ns)
            watch.start()
            eventually("the watch to list the 6 Ready pods", lambda: sum(watch.ready.values()) == 6, timeout=30)
            watch.armed = True
            kubectl("cordon", *statics)
            drain = subprocess.Popen([KUBECTL, "--kubeconfig", BED.kubeconfig, "drain", *statics,
                                      "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=240s"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                moved = [p for p in ready_pods() if p["spec"]["nodeName"] not in statics]
                if drain.poll() is not None and len(moved) == 6:
                    break
                time.sleep(0.3)
            else:
                drain.kill()
                print(ctl.text()[-8000:], file=sys.stderr)
                self.fail("the pods did not move to nodesmith's nodes within 300 s")
            out = drain.communicate()[0]
            self.assertEqual(drain.returncode, 0, out)
            time.sleep(1)  # the watch catches up with the last changes
            watch.stop()
            low = watch.low
            self.assertGreaterEqual(low, 3, "the PodDisruptionBudget (minAvailable 50%) was broken")
            # kubectl drain met the budget: some evictions were refused until the moved pods were Ready
            self.assertIn("Cannot evict pod as it would violate the pod's disruption budget", out)
            claims = kget("nodeclaims")["items"]
            nodes = {n["metadata"]["name"]: n for n in kget("nodes")["items"]}
            claim_nodes = {c["status"].get("nodeName") for c in claims}
            for p in ready_pods():
                self.assertIn(p["spec"]["nodeName"], claim_nodes, p["metadata"]["name"])
            # the node group's nodes are the autoscaler's (or the operator's) to remove: nodesmith left them alone
            for name in statics:
                self.assertTrue(nodes[name]["spec"].get("unschedulable"))
                self.assertNotIn("karpenter.sh/disrupted", [t["key"] for t in nodes[name]["spec"].get("taints", [])])
            print("# %d pods moved from %d drained static nodes to %d NodeClaims; fewest Ready pods under the PDB: %d "
                  "(over %d pod changes)" % (6, len(statics), len(claims), low, watch.changes))
            self.assertEqual(ctl.stop(), 0, ctl.text()[-3000:])
            errors = [line for line in ctl.text().splitlines() if '"level":"ERROR"' in line]
            self.assertEqual(errors, [], "the controller logged errors")
        finally:
            if watch:
                watch.stop()
            if kubelet:
                kubelet.quit.set()
                kubelet.join()
            ctl.close()
            kubectl("delete", "nodes", *statics, "--ignore-not-found", "--wait=false")
            kubectl("delete", "namespace", ns, "--wait=false")


AWS_EMULATOR = os.path.join(HERE, "..", "emulators", "aws", "aws_emulator.py")
# The actions of Karpenter's controller policy (docs/providers/aws.md): the provider may call nothing else.
sys.path.insert(0, os.path.join(HERE, "..", "emulators", "aws"))
from emu_policy import documented_actions  # noqa: E402

AWS_POLICY = documented_actions()

AWS_NODEPOOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: aws
spec:
  template:
    metadata:
      labels: {team: aws-e2e}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: aws}
      taints:
      - {key: e2e/aws, effect: NoSchedule}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: ["m5"]}
      - {key: karpenter.k8s.aws/instance-size, operator: In, values: ["large", "xlarge", "2xlarge"]}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
  limits:
    cpu: "100"
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: aws
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms:
  - alias: al2023@latest
  subnetSelectorTerms:
  - tags: {karpenter.sh/discovery: demo}
  securityGroupSelectorTerms:
  - tags: {karpenter.sh/discovery: demo}
"""


class Test7AwsProviderEndToEnd(unittest.TestCase):
    """The AWS provider (aws.so) on the live cluster, against the AWS emulator (test/emulators/aws, which checks every
    signature with botocore): Karpenter's EC2NodeClass CRD, an EC2NodeClass and a NodePool of m5 on-demand nodes, a
    Deployment of 10 pods of 1 CPU. The controller launches EC2 instances through CreateFleet; it plays their kubelet
    (--simulate-kubelet: the emulator's instances run none), the real kube-scheduler binds the pods. Scaled to 2, the
    claims left empty or too big are consolidated and their instances terminated. Throughout, the emulator's running
    instances are exactly the NodeClaims' (tagged with the claim, its pool and the cluster), and the provider calls
    only actions of Karpenter's IAM policy."""

    @unittest.skipUnless(os.environ.get("NS_AWS_DATA"), "the AWS provider is not built (NS_AWS_DATA unset)")
    def test_scale_up_and_down_on_emulated_ec2(self):
        aws_crds = subprocess.run(["bash", os.path.join(HERE, "..", "kube", "fetch-crds.sh"),
                                   "github.com/aws/karpenter-provider-aws", "v1.14.0"], capture_output=True, text=True,
                                  check=True).stdout.strip()
        install_crds("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml")
        kubectl("apply", "--server-side", "-f", os.path.join(aws_crds, "karpenter.k8s.aws_ec2nodeclasses.yaml"))
        kubectl("wait", "--for", "condition=Established", "--timeout=60s", "crd/ec2nodeclasses.karpenter.k8s.aws")
        emulator = subprocess.Popen(["/usr/bin/python3", AWS_EMULATOR, "--data-dir", os.environ["NS_AWS_DATA"]],
                                    stdout=subprocess.PIPE, text=True)
        ns = BED.namespace("aws")
        ctl = None
        try:
            url = "http://127.0.0.1:" + emulator.stdout.readline().split()[1]

            def emulator_state():
                with urllib.request.urlopen(url + "/_emulator/state", timeout=10) as answer:
                    return json.load(answer)
            env = {"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "AKIDEMULATOR",
                   "AWS_SECRET_ACCESS_KEY": "emulator/secret/key+EXAMPLE", "AWS_REGION": "us-east-1",
                   "AWS_EC2_METADATA_DISABLED": "true", "AWS_SESSION_TOKEN": None, "AWS_ROLE_ARN": None,
                   "AWS_WEB_IDENTITY_TOKEN_FILE": None, "AWS_PROFILE": None}
            ctl = Controller("replica-aws", env, [NODESMITH, "controller", "--provider", "aws", "--simulate-kubelet",
                                                  "--set", "cluster_name=demo", "--kubeconfig", BED.kubeconfig])
            eventually("replica-aws to lead", lambda: "successfully acquired lease" in ctl.text(), timeout=90)
            kubectl("apply", "-f", "-", stdin=AWS_NODEPOOL)
            kubectl("apply", "-f", "-", stdin=(DEPLOYMENT % {"ns": ns}).replace("name: inflate", "name: aws")
                    .replace("replicas: 50", "replicas: 10").replace("cpu: 500m", "cpu: \"1\"")
                    .replace("    spec:\n", "    spec:\n      nodeSelector: {karpenter.sh/nodepool: aws}\n"
                             "      tolerations: [{key: e2e/aws, operator: Exists}]\n"))

            def pods():
                return [p for p in kget("pods", "-n", ns)["items"] if not p["metadata"].get("deletionTimestamp")]

            def claims():
                return [c for c in kget("nodeclaims", "-l", "karpenter.sh/nodepool=aws")["items"]]

            def running(n):
                return lambda: len(kget("pods", "-n", ns)["items"]) == n and all(
                    p["status"].get("phase") == "Running" for p in pods())

            def agreed():
                """The claims when the emulator's live instances are exactly theirs and every claim is initialized
                with its Node; else None."""
                live = {i["id"]: i for i in emulator_state()["instances"] if i["state"] in ("pending", "running")}
                cs = claims()
                ids = [c["status"].get("providerID", "").rsplit("/", 1)[-1] for c in cs]
                ok = sorted(ids) == sorted(live) and cs and all(
                    {k["type"]: k["status"] for k in c["status"].get("conditions", [])}.get("Initialized") == "True"
                    and not c["metadata"].get("deletionTimestamp") for c in cs)
                return (cs, live) if ok else None
            try:
                eventually("10 pods Running", running(10), timeout=240)
                up, live = eventually("the emulator's instances to be the NodeClaims'", agreed, timeout=60)
            except AssertionError:
                print(ctl.text()[-8000:], file=sys.stderr)
                raise
            nodes = {n["metadata"]["name"]: n for n in kget("nodes")["items"]}
            for c in up:
                name = c["metadata"]["name"]
                m = re.fullmatch(r"aws:///(us-east-1[abc])/(i-[0-9a-z]+)", c["status"]["providerID"])
                self.assertTrue(m, c["status"])
                inst = live[m.group(2)]
                labels = c["metadata"]["labels"]
                self.assertEqual((inst["zone"], inst["type"], inst["capacity_type"]),
                                 (labels["topology.kubernetes.io/zone"], labels["node.kubernetes.io/instance-type"],
                                  "on-demand"), inst)
                self.assertIn(inst["type"], ("m5.large", "m5.xlarge", "m5.2xlarge"))
                self.assertEqual((inst["tags"]["karpenter.sh/nodeclaim"], inst["tags"]["karpenter.sh/nodepool"],
                                  inst["tags"]["kubernetes.io/cluster/demo"]), (name, "aws", "owned"), inst["tags"])
                self.assertEqual(labels["karpenter.k8s.aws/instance-family"], "m5")
                node = nodes[c["status"]["nodeName"]]
                self.assertEqual(node["spec"]["providerID"], c["status"]["providerID"])
                self.assertTrue(any((t["key"], t["effect"]) == ("e2e/aws", "NoSchedule")
                                    for t in node["spec"].get("taints", [])), node["spec"])
            self.assertTrue({p["spec"]["nodeName"] for p in pods()} <= {c["status"]["nodeName"] for c in up})
            # the EC2NodeClass's status as the provider resolved it against the emulator
            status = eventually("the EC2NodeClass's status", lambda: kget("ec2nodeclass", "aws").get("status"),
                                timeout=30)
            conds = {k["type"]: k["status"] for k in status.get("conditions", [])}
            self.assertEqual(conds.get("Ready"), "True", status)
            self.assertEqual(sorted(s["zone"] for s in status["subnets"]), ["us-east-1a", "us-east-1b", "us-east-1c"])
            self.assertTrue(status["securityGroups"] and status["amis"], status)
            print("# scale-up: 10 pods on %d NodeClaims (%s), each an emulated EC2 instance"
                  % (len(up), ", ".join(sorted(i["type"] for i in live.values()))))

            kubectl("scale", "-n", ns, "deployment/aws", "--replicas=2")

            def scaled_down():
                got = agreed()
                if not got or not running(2)():
                    return None
                cs, _ = got
                used = {p["spec"]["nodeName"] for p in pods()}
                # no empty node left, and less capacity than 10 CPUs' worth
                cpu = sum(float(q[:-1]) / 1000 if q.endswith("m") else float(q)
                          for q in (c["status"]["capacity"]["cpu"] for c in cs))
                return got if {c["status"]["nodeName"] for c in cs} == used and cpu < 10 else None
            try:
                down, live = eventually("consolidation after the scale-down", scaled_down, timeout=300)
            except AssertionError:
                print(ctl.text()[-8000:], file=sys.stderr)
                raise
            state = emulator_state()
            gone = {c["status"]["providerID"].rsplit("/", 1)[-1] for c in up} - set(live)
            self.assertTrue(gone, "no instance was terminated")
            for i in state["instances"]:
                if i["id"] in gone:
                    self.assertIn(i["state"], ("shutting-down", "terminated"), i)
            self.assertFalse({n for n in kubectl("get", "nodes", "-o", "name").split()} &
                             {"node/" + c["status"]["nodeName"] for c in up if
                              c["status"]["providerID"].rsplit("/", 1)[-1] in gone}, "a removed NodeClaim's Node stays")
            called = set(state["requests"]) - {"signature_failures"}
            self.assertLessEqual(called, AWS_POLICY, "actions outside the IAM policy")
            self.assertNotIn("signature_failures", state["requests"])
            self.assertIn("CreateFleet", called)
            self.assertIn("TerminateInstances", called)
            print("# scale-down to 2 pods: %d NodeClaims (%s); %d instance(s) terminated, %d launched in all"
                  % (len(down), ", ".join(sorted(i["type"] for i in live.values())), len(gone),
                     len(state["instances"])))
            self.assertEqual(ctl.stop(), 0, ctl.text()[-3000:])
            errors = [line for line in ctl.text().splitlines() if '"level":"ERROR"' in line]
            self.assertEqual(errors, [], "the controller logged errors")
        finally:
            if ctl:
                ctl.close()
            emulator.terminate()
            emulator.wait(10)
            emulator.stdout.close()
            kubectl("delete", "namespace", ns, "--wait=false")


LEGACY = """
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata:
  name: legacy
spec:
  providerRef:
    name: legacy
  taints:
  - key: e2e/legacy
    effect: NoSchedule
  requirements:
  - key: karpenter.sh/capacity-type
    operator: In
    values: ["on-demand"]
  - key: node.kubernetes.io/instance-type
    operator: In
    values: ["m5.large"]
  limits:
    resources:
      cpu: "100"
---
apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata:
  name: legacy
spec:
  subnetSelector:
    karpenter.sh/discovery: e2e
  securityGroupSelector:
    karpenter.sh/discovery: e2e
"""


class Test8V1alpha5EndToEnd(unittest.TestCase):
    """A cluster still on Karpenter's v1alpha5 API: the Provisioner and AWSNodeTemplate CRDs of Karpenter v0.32.0 (the
    last release serving them, from the Go module proxy), a Provisioner whose providerRef names an AWSNodeTemplate by
    name only. The controller reads the Provisioner through the manifests' converter and the AWSNodeTemplate through
    the provider (the simulated one declares that kind), warning about each; pods that select the Provisioner's pool
    get NodeClaims owned by the Provisioner, so deleting the Provisioner has the API server's garbage collector delete
    them, and the controller drains and terminates them. The Provisioner never consolidates (no consolidation, no
    ttlSecondsAfterEmpty): Karpenter's Unconsolidatable event on each Node and NodeClaim says so. A Provisioner named like an existing NodePool is set aside
    with a warning. No NodePool status is written for the Provisioner (nothing logged at ERROR)."""

    def test_provisioner_and_awsnodetemplate_are_read_and_converted(self):
        legacy_crds = subprocess.run(["bash", os.path.join(HERE, "..", "kube", "fetch-crds.sh"),
                                      "github.com/aws/karpenter", "v0.32.0"], capture_output=True, text=True,
                                     check=True).stdout.strip()
        install_crds("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml")
        for f in ("karpenter.sh_provisioners.yaml", "karpenter.k8s.aws_awsnodetemplates.yaml"):
            kubectl("apply", "--server-side", "-f", os.path.join(legacy_crds, f))
        kubectl("wait", "--for", "condition=Established", "--timeout=60s", "crd/provisioners.karpenter.sh",
                "crd/awsnodetemplates.karpenter.k8s.aws")
        kubectl("apply", "-f", "-", stdin=NODEPOOL)
        kubectl("apply", "-f", "-", stdin=LEGACY)
        # a Provisioner with the name of a NodePool (as a v0.32 migration leaves them): the NodePool is the pool
        kubectl("apply", "-f", "-", stdin=LEGACY.split("---")[0].replace("name: legacy\nspec", "name: default\nspec"))
        provisioner_uid = kget("provisioner", "legacy")["metadata"]["uid"]
        ns = BED.namespace("legacy")
        ctl = Controller("replica-legacy")
        try:
            eventually("replica-legacy to lead", lambda: "successfully acquired lease" in ctl.text(), timeout=90)
            kubectl("apply", "-f", "-", stdin=(DEPLOYMENT % {"ns": ns}).replace("name: inflate", "name: legacy")
                    .replace("replicas: 50", "replicas: 6").replace("cpu: 500m", "cpu: \"1\"")
                    .replace("    spec:\n", "    spec:\n      nodeSelector: {karpenter.sh/nodepool: legacy}\n"
                             "      tolerations: [{key: e2e/legacy, operator: Exists}]\n"))

            def legacy_claims():
                return [c for c in kget("nodeclaims")["items"]
                        if c["metadata"]["labels"].get("karpenter.sh/nodepool") == "legacy"]

            def running():
                pods = kget("pods", "-n", ns)["items"]
                return len(pods) == 6 and all(p["status"].get("phase") == "Running" for p in pods) and pods
            try:
                pods = eventually("6 pods Running on the Provisioner's nodes", running, timeout=240)
            except AssertionError:
                print(ctl.text()[-8000:], file=sys.stderr)
                raise
            claims = legacy_claims()
            self.assertGreaterEqual(len(claims), 3)  # m5.large: 2 CPUs, less the daemon overhead, per node
            nodes = {n["metadata"]["name"]: n for n in kget("nodes")["items"]}
            for c in claims:
                m = c["metadata"]
                self.assertEqual(m["ownerReferences"], [{"apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner",
                                                         "name": "legacy", "uid": provisioner_uid,
                                                         "blockOwnerDeletion": True}])
                self.assertTrue(m["name"].startswith("legacy-"), m["name"])
                self.assertEqual(c["spec"]["nodeClassRef"], {"group": "karpenter.k8s.aws", "kind": "AWSNodeTemplate",
                                                             "name": "legacy"})
                node = nodes[c["status"]["nodeName"]]
                self.assertEqual(node["metadata"]["labels"]["node.kubernetes.io/instance-type"], "m5.large")
                self.assertIn({"key": "e2e/legacy", "effect": "NoSchedule"}, node["spec"].get("taints", []))
            self.assertTrue({p["spec"]["nodeName"] for p in pods} <= {c["status"]["nodeName"] for c in claims})
            self.assertEqual([c for c in kget("nodeclaims")["items"]
                              if c["metadata"]["ownerReferences"][0]["kind"] == "Provisioner" and
                              c["metadata"]["ownerReferences"][0]["name"] == "default"], [])
            # the warnings, each naming its object
            log = [json.loads(line) for line in ctl.text().splitlines() if line.startswith("{")]
            warned = {(e.get("Provisioner"), e.get("AWSNodeTemplate"), e.get("NodePool")) for e in log
                      if e.get("level") == "WARN"}
            self.assertIn(("legacy", None, None), warned, ctl.text()[-4000:])
            self.assertIn((None, "legacy", None), warned, ctl.text()[-4000:])
            self.assertIn(("default", None, "default"), warned, ctl.text()[-4000:])
            self.assertNotIn(("default", None, None), warned)  # the set-aside Provisioner is not read as a pool
            # a Provisioner with neither consolidation nor ttlSecondsAfterEmpty never consolidates: Karpenter's
            # Unconsolidatable event on each of its Nodes and NodeClaims says so
            for kind, names in (("Node", {c["status"]["nodeName"] for c in claims}),
                                ("NodeClaim", {c["metadata"]["name"] for c in claims})):
                def unconsolidatable():
                    got = {e["involvedObject"]["name"]: e for e in karpenter_events("default", "Unconsolidatable", kind)
                           if e["involvedObject"]["name"] in names}
                    return len(got) == len(names) and got
                try:
                    got = eventually("Unconsolidatable events on the %ss" % kind, unconsolidatable, timeout=60)
                except AssertionError:
                    print(karpenter_events("default", "Unconsolidatable"), file=sys.stderr)
                    raise
                for e in got.values():
                    self.assertEqual((e["type"], e["message"], e["count"]),
                                     ("Normal", 'NodePool "legacy" has consolidation disabled', 1), e)
            # the Provisioner goes: the API server's garbage collector deletes its NodeClaims, the controller drains
            # and terminates them
            kubectl("delete", "deployment", "-n", ns, "legacy")
            kubectl("delete", "provisioner", "legacy", "--wait=false")
            names = {c["metadata"]["name"] for c in claims}
            provider_ids = {c["status"]["providerID"] for c in claims}
            try:
                eventually("the Provisioner's NodeClaims to go", lambda: not legacy_claims(), timeout=180)
            except AssertionError:
                print(ctl.text()[-8000:], file=sys.stderr)
                raise
            eventually("their instances to be terminated", lambda: not provider_ids & set(cloud_instances()),
                       timeout=60)
            self.assertFalse({n["metadata"]["name"] for n in kget("nodes")["items"]} &
                             {c["status"]["nodeName"] for c in claims})
            print("# %d NodeClaims of Provisioner legacy (%s) removed with it" % (len(names), " ".join(sorted(names))))
            self.assertEqual(ctl.stop(), 0, ctl.text()[-3000:])
            errors = [line for line in ctl.text().splitlines() if '"level":"ERROR"' in line]
            self.assertEqual(errors, [], "the controller logged errors")
        finally:
            ctl.close()
            kubectl("delete", "provisioner", "default", "legacy", "--ignore-not-found", "--wait=false")
            kubectl("delete", "namespace", ns, "--wait=false")


VOLUMES = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: volumes
spec:
  template:
    spec:
      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}
      taints: [{key: e2e/volumes, effect: NoSchedule}]
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
      - {key: node.kubernetes.io/instance-type, operator: In, values: ["m5.large"]}
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: e2e-zonal
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  hostPath: {path: /tmp/e2e-zonal}
  claimRef: {namespace: %(ns)s, name: zonal}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [us-west-2c]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: zonal, namespace: %(ns)s}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: e2e-zonal
  resources: {requests: {storage: 1Gi}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: e2e-zone-b
provisioner: e2e.nodesmith.io/test-plays-it
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [us-west-2b]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: topo, namespace: %(ns)s}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: e2e-zone-b
  resources: {requests: {storage: 1Gi}}
"""

VOLUME_POD = """
apiVersion: v1
kind: Pod
metadata: {name: %(claim)s, namespace: %(ns)s}
spec:
  terminationGracePeriodSeconds: 0
  nodeSelector: {karpenter.sh/nodepool: volumes}
  tolerations: [{key: e2e/volumes, operator: Exists}]
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.10
    resources: {requests: {cpu: 500m, memory: 128Mi}}
  volumes: [{name: data, persistentVolumeClaim: {claimName: %(claim)s}}]
"""


class Test9VolumeTopologyEndToEnd(unittest.TestCase):
    """Volume topology (Karpenter's VolumeTopology) from the controller's informers: a pod whose claim is bound to a
    PersistentVolume with zone node affinity (us-west-2c), and one whose unbound claim's WaitForFirstConsumer
    StorageClass allows only us-west-2b. Both pods would fit one m5.large; each gets a NodeClaim in its volume's zone,
    and the real kube-scheduler (whose VolumeBinding checks the same topology) binds each to its Node. The test plays
    the external provisioner for the second claim once the scheduler has selected a node (the claim's
    volume.kubernetes.io/selected-node annotation). Without the storage informers both pods stay without a claim
    (their claims are not found)."""

    def test_pods_get_nodeclaims_in_their_volumes_zones(self):
        install_crds("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml")
        ns = BED.namespace("volumes")
        kubectl("apply", "-f", "-", stdin=NODEPOOL.split("---")[1])  # the SimNodeClass
        kubectl("apply", "-f", "-", stdin=VOLUMES % {"ns": ns})
        eventually("claim zonal to be bound to its volume",
                   lambda: kget("pvc", "-n", ns, "zonal")["status"].get("phase") == "Bound", timeout=60)
        ctl = Controller("replica-volumes")
        try:
            eventually("replica-volumes to lead", lambda: "successfully acquired lease" in ctl.text(), timeout=90)
            for claim in ("zonal", "topo"):
                kubectl("apply", "-f", "-", stdin=VOLUME_POD % {"ns": ns, "claim": claim})

            def provision():
                """The external provisioner's part: a volume in the selected node's zone for claim topo."""
                pvc = kget("pvc", "-n", ns, "topo")
                node = pvc["metadata"].get("annotations", {}).get("volume.kubernetes.io/selected-node")
                if node and not pvc["spec"].get("volumeName") and not kubectl("get", "pv", "e2e-topo", "-o", "name",
                                                                             "--ignore-not-found"):
                    zone = kget("node", node)["metadata"]["labels"]["topology.kubernetes.io/zone"]
                    kubectl("apply", "-f", "-", stdin=json.dumps({
                        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "e2e-topo"},
                        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                 "storageClassName": "e2e-zone-b", "hostPath": {"path": "/tmp/e2e-topo"},
                                 "claimRef": {"namespace": ns, "name": "topo", "uid": pvc["metadata"]["uid"]},
                                 "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                                     {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}}}}))

            def running():
                provision()
                pods = kget("pods", "-n", ns)["items"]
                return len(pods) == 2 and all(p["status"].get("phase") == "Running" for p in pods) and pods
            try:
                pods = eventually("both pods Running on nodes of their volumes' zones", running, timeout=240)
            except AssertionError:
                print(ctl.text()[-8000:], file=sys.stderr)
                raise
            claims = {c["status"]["nodeName"]: c for c in kget("nodeclaims")["items"]
                      if c["metadata"]["labels"].get("karpenter.sh/nodepool") == "volumes"}
            self.assertEqual(len(claims), 2, list(claims))
            for p in pods:
                claim = claims[p["spec"]["nodeName"]]
                zone = {"zonal": "us-west-2c", "topo": "us-west-2b"}[p["metadata"]["name"]]
                self.assertEqual(claim["metadata"]["labels"]["topology.kubernetes.io/zone"], zone, claim)
            print("# pods zonal and topo on NodeClaims %s" % " ".join(
                "%s (%s)" % (c["metadata"]["name"], c["metadata"]["labels"]["topology.kubernetes.io/zone"])
                for c in claims.values()))
            self.assertEqual(ctl.stop(), 0, ctl.text()[-3000:])
            errors = [line for line in ctl.text().splitlines() if '"level":"ERROR"' in line]
            self.assertEqual(errors, [], "the controller logged errors")
        finally:
            ctl.close()
            kubectl("delete", "namespace", ns, "--wait=false")
            kubectl("delete", "nodepool", "volumes", "--ignore-not-found", "--wait=false")
            kubectl("delete", "pv", "e2e-zonal", "e2e-topo", "--ignore-not-found", "--wait=false")
            kubectl("delete", "storageclass", "e2e-zone-b", "--ignore-not-found", "--wait=false")


def load_tests(loader, tests, pattern):
    """The test classes in the order of their number: unittest sorts them by name, which puts Test10 before
    Test1ProvisioningEndToEnd, and Test1 must come first (it checks the controller is not ready before Karpenter's
    CRDs are installed). A test named on the command line runs alone, as before."""
    classes = [obj for name, obj in globals().items() if isinstance(obj, type) and
               issubclass(obj, unittest.TestCase) and re.match(r"Test\d+", name)]
    suite = unittest.TestSuite()
    for cls in sorted(classes, key=lambda c: int(re.match(r"Test(\d+)", c.__name__).group(1))):
        suite.addTests(loader.loadTestsFromTestCase(cls))
    return suite


SPREAD_POOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: %(pool)s
spec:
  disruption: {consolidateAfter: Never}
  template:
    spec:
      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}
      taints: [{key: e2e/spread, effect: NoSchedule}]
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
      - {key: node.kubernetes.io/instance-type, operator: In, values: ["m5.large"]}
"""

# Three pods of each kind kube-scheduler deduces a default spread's selector from, each kind in its own NodePool; every
# group is behind a Service of its app. The bare pods have only the Service. No consolidation: kube-scheduler, which
# has no such default, may pack the pods on one node, and the claims it leaves empty must stay to be counted.
SPREAD_POD_SPEC = """
      terminationGracePeriodSeconds: 0
      nodeSelector: {karpenter.sh/nodepool: %(pool)s}
      tolerations: [{key: e2e/spread, operator: Exists}]
      containers:
      - name: pause
        image: registry.k8s.io/pause:3.10
        resources: {requests: {cpu: 100m, memory: 64Mi}}
"""
SPREAD_GROUPS = {
    "rs": """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %(ns)s}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:""" + SPREAD_POD_SPEC,
    "ss": """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: %(ns)s}
spec:
  replicas: 3
  serviceName: db
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:""" + SPREAD_POD_SPEC,
    "rc": """
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: %(ns)s}
spec:
  replicas: 3
  selector: {app: legacy}
  template:
    metadata: {labels: {app: legacy}}
    spec:""" + SPREAD_POD_SPEC,
    "svc": "".join("""
---
apiVersion: v1
kind: Pod
metadata: {name: api-%d, namespace: %%(ns)s, labels: {app: api}}
spec:""" % i + SPREAD_POD_SPEC.replace("\n  ", "\n") for i in range(3)),
}
SPREAD_APPS = {"rs": "web", "ss": "db", "rc": "legacy", "svc": "api"}
SPREAD_SERVICE = """
---
apiVersion: v1
kind: Service
metadata: {name: %(app)s, namespace: %(ns)s}
spec:
  selector: {app: %(app)s}
  ports: [{port: 80}]
"""
ZONE_SPREAD = """
podTopologySpread:
  defaultConstraints:
    - maxSkew: 1
      topologyKey: topology.kubernetes.io/zone
      whenUnsatisfiable: DoNotSchedule
"""


class Test10DefaultSpreadEndToEnd(unittest.TestCase):
    """Karpenter's default topology spread (SCHEDULER_CONFIG, issue 9 rule 11) through the controller's informers: three
    small pods of a Deployment (its ReplicaSet), of a StatefulSet, of a ReplicationController and three bare pods,
    each group behind a Service and in a NodePool of its own (m5.large, where all three fit one node), all pending before
    the controller starts. With a default
    zone spread (maxSkew 1, DoNotSchedule) each pool gets three NodeClaims in three zones, the selector deduced as
    kube-scheduler does from the Services, ReplicaSets, StatefulSets and ReplicationControllers the controller watches
    (the bare pods only from their Service); without SCHEDULER_CONFIG each pool gets one NodeClaim. Every pod runs,
    bound by the real kube-scheduler."""

    def run_phase(self, phase, env, check):
        """The four groups in pools of their own, all pending (Unschedulable) before a controller with ENV starts, so
        its first round sees every pod with its Service and controller; CHECK(kind, zones of the pool's NodeClaims)
        once every pod runs. The controller then drains what the phase made (namespace, pools, claims)."""
        ns = BED.namespace("spread-" + phase)
        pools = {kind: "%s-%s" % (phase, kind) for kind in SPREAD_GROUPS}
        for kind, pool in pools.items():
            kubectl("apply", "-f", "-", stdin=SPREAD_POOL % {"pool": pool})
            kubectl("apply", "-f", "-", stdin=(SPREAD_SERVICE % {"app": SPREAD_APPS[kind], "ns": ns}) +
                    "---" + (SPREAD_GROUPS[kind] % {"ns": ns, "pool": pool}))

        def unschedulable():
            pods = kget("pods", "-n", ns)["items"]
            return len(pods) == 12 and all(any(k["type"] == "PodScheduled" and k.get("reason") == "Unschedulable"
                                               for k in p["status"].get("conditions", [])) for p in pods)
        eventually("12 pods Unschedulable", unschedulable, timeout=120)
        # Earlier tests delete their namespaces without waiting; a pod of theirs still pending (Test9's, whose volume
        # is being deleted) would make this controller log "could not schedule pod" at ERROR, which the check below
        # counts. Start only once they are gone, so every ERROR left is this phase's own.
        eventually("earlier tests' namespaces deleted", lambda: not [
            n for n in kget("namespaces")["items"] if n["status"].get("phase") == "Terminating"], timeout=180)
        ctl = Controller("replica-spread-" + phase, env)
        try:
            def running():
                pods = kget("pods", "-n", ns)["items"]
                return len(pods) == 12 and all(p["status"].get("phase") == "Running" for p in pods) and pods
            try:
                eventually("12 pods Running", running, timeout=240)
            except AssertionError:
                print(ctl.text()[-8000:], file=sys.stderr)
                raise
            time.sleep(3)  # a claim launched late would show now
            zones = {}
            for kind, pool in pools.items():
                claims = kget("nodeclaims", "-l", "karpenter.sh/nodepool=" + pool)["items"]
                zones[kind] = sorted(c["metadata"]["labels"]["topology.kubernetes.io/zone"] for c in claims)
            print("# %s: NodeClaims' zones per pool %s" % (phase, zones))
            try:
                for kind, got in zones.items():
                    check(kind, got)
            except AssertionError:
                print("\n".join(line for line in ctl.text().splitlines() if "nodeclaim" in line.lower()),
                      file=sys.stderr)
                raise
            kubectl("delete", "namespace", ns, "--timeout=120s")
            kubectl("delete", "nodepool", *pools.values(), "--wait=false")
            eventually("the phase's NodeClaims gone", lambda: not [
                c for c in kget("nodeclaims")["items"] if c["metadata"]["labels"].get("karpenter.sh/nodepool") in
                pools.values()], timeout=180)
            self.assertEqual(ctl.stop(), 0, ctl.text()[-3000:])
            errors = [line for line in ctl.text().splitlines() if '"level":"ERROR"' in line]
            self.assertEqual(errors, [], "the controller logged errors")
        finally:
            ctl.close()
            kubectl("delete", "namespace", ns, "--ignore-not-found", "--wait=false")
            kubectl("delete", "nodepool", *pools.values(), "--ignore-not-found", "--wait=false")

    def test_pods_behind_services_and_controllers_spread_over_zones(self):
        install_crds("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml")
        kubectl("apply", "-f", "-", stdin=NODEPOOL.split("---")[1])  # the SimNodeClass
        self.run_phase("on", {"SCHEDULER_CONFIG": ZONE_SPREAD},
                       # every zone; a fourth claim came now and then while the simulated kubelet took the not-ready
                       # taint off before reporting Ready (kube-controller-manager put it back on an initialized Node)
                       lambda kind, zones: self.assertEqual(set(zones), {"us-west-2a", "us-west-2b", "us-west-2c"},
                                                            kind))
        self.run_phase("off", {"SCHEDULER_CONFIG": None}, lambda kind, zones: self.assertEqual(len(zones), 1, kind))


STATIC_NODEPOOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: static
spec:
  replicas: 2
  limits:
    nodes: "4"
  template:
    metadata:
      labels: {e2e/static: "true"}
    spec:
      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}
      taints: [{key: e2e/static, effect: NoSchedule}]
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
      - {key: node.kubernetes.io/instance-type, operator: In, values: ["m5.large"]}
"""


class Test11StaticCapacityEndToEnd(unittest.TestCase):
    """A static NodePool (spec.replicas, Karpenter's StaticCapacity gate, issue 10 rule 13) on the real control plane:
    with the gate off the controller launches nothing for it (no pod asks for it); with FEATURE_GATES
    StaticCapacity=true it keeps exactly `replicas` NodeClaims, each with its registered Node, and follows replicas
    changed through the CRD's scale subresource (kubectl scale) and by a patch: up to 3, up to 6 held at the pool's
    limits.nodes 4, down to 1 and to 0, the deleted claims' Nodes and instances gone. The scale subresource reads the
    node count back from status.nodes."""

    def claims(self, live_only=True):
        return [c for c in kget("nodeclaims", "-l", "karpenter.sh/nodepool=static")["items"]
                if not live_only or not c["metadata"].get("deletionTimestamp")]

    def nodes(self):
        return kget("nodes", "-l", "karpenter.sh/nodepool=static")["items"]

    def settled(self, n):
        """Exactly n NodeClaims of the pool (none deleting), each registered with a Ready Node, no other Node of the
        pool, and the cloud running exactly their instances."""
        claims, nodes = self.claims(False), self.nodes()
        if len(claims) != n or len(nodes) != n:
            return False
        ready = {nd["metadata"]["name"] for nd in nodes if any(
            k["type"] == "Ready" and k["status"] == "True" for k in nd.get("status", {}).get("conditions", []))}
        if any(c["metadata"].get("deletionTimestamp") or c.get("status", {}).get("nodeName") not in ready
               for c in claims):
            return False
        pool_instances = {pid for pid, claim in cloud_instances().items() if claim.startswith("static-")}
        return pool_instances == {c["status"]["providerID"] for c in claims}

    def hold(self, n, ctl, seconds=8):
        """n NodeClaims reached, and still n (none added, none deleted) several ticks later."""
        try:
            eventually("%d static NodeClaims with Ready Nodes" % n, lambda: self.settled(n), timeout=180)
        except AssertionError:
            print(ctl.text()[-6000:], file=sys.stderr)
            raise
        names = {c["metadata"]["name"] for c in self.claims(False)}
        time.sleep(seconds)
        self.assertTrue(self.settled(n), [c["metadata"]["name"] for c in self.claims(False)])
        self.assertEqual({c["metadata"]["name"] for c in self.claims(False)}, names)
        scale = kget("nodepool", "static", "--subresource=scale")
        self.assertEqual((scale["spec"].get("replicas", 0), scale["status"].get("replicas", 0)),
                         (kget("nodepool", "static")["spec"]["replicas"], n), scale)

    def test_replicas_are_kept_and_follow_kubectl_scale(self):
        install_crds("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml")
        kubectl("apply", "-f", "-", stdin=NODEPOOL.split("---")[1])  # the SimNodeClass
        ctl = Controller("replica-static-off", {"FEATURE_GATES": "StaticCapacity=false"})
        try:
            eventually("replica-static-off to lead", lambda: "successfully acquired lease" in ctl.text(), timeout=90)
            kubectl("apply", "-f", "-", stdin=STATIC_NODEPOOL)
            # the controller has seen the pool once it writes its status; some ticks later there is still no claim
            eventually("the static NodePool's status", lambda: kget("nodepool", "static").get("status", {})
                       .get("conditions"), timeout=60)
            time.sleep(5)
            self.assertEqual(self.claims(False), [], "a NodeClaim for a static pool with the gate off")
            self.assertEqual(ctl.stop(), 0, ctl.text()[-3000:])
        finally:
            ctl.close()
        ctl = Controller("replica-static", {"FEATURE_GATES": "StaticCapacity=true"})
        try:
            eventually("replica-static to lead", lambda: "successfully acquired lease" in ctl.text(), timeout=90)
            self.hold(2, ctl)
            for c in self.claims():
                owner = c["metadata"]["ownerReferences"][0]
                self.assertEqual((owner["kind"], owner["name"]), ("NodePool", "static"))
                self.assertEqual(c["metadata"]["labels"].get("e2e/static"), "true", c["metadata"])
            kubectl("scale", "nodepool", "static", "--replicas=3")
            self.hold(3, ctl)
            kubectl("patch", "nodepool", "static", "--type", "merge", "-p", '{"spec": {"replicas": 6}}')
            self.hold(4, ctl)  # limits.nodes
            before = {c["metadata"]["name"] for c in self.claims()}
            kubectl("scale", "nodepool", "static", "--replicas=1")
            self.hold(1, ctl)
            self.assertTrue({c["metadata"]["name"] for c in self.claims()} <= before)
            kubectl("scale", "nodepool", "static", "--replicas=0")
            self.hold(0, ctl)
            print("# static NodePool: 2, 3, 6 (held at limits.nodes 4), 1, 0 NodeClaims with their Nodes")
            self.assertEqual(ctl.stop(), 0, ctl.text()[-3000:])
            errors = [line for line in ctl.text().splitlines() if '"level":"ERROR"' in line]
            self.assertEqual(errors, [], "the controller logged errors")
        finally:
            ctl.close()
            kubectl("delete", "nodepool", "static", "--ignore-not-found", "--wait=false")


BUFFER_OBJECTS = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: buffer
spec:
  disruption: {consolidateAfter: Never}
  template:
    metadata:
      labels: {e2e/buffer: "true"}
    spec:
      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}
      taints: [{key: e2e/buffer, effect: NoSchedule}]
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
      - {key: node.kubernetes.io/instance-type, operator: In, values: ["m5.large"]}
---
apiVersion: v1
kind: PodTemplate
metadata:
  name: chunk
  namespace: %(ns)s
template:
  spec:
    nodeSelector: {karpenter.sh/nodepool: buffer}
    tolerations: [{key: e2e/buffer, operator: Exists}]
    containers:
    - name: chunk
      image: registry.k8s.io/pause:3.10
      resources:
        requests: {cpu: "1", memory: 1Gi}
---
apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityBuffer
metadata:
  name: warm
  namespace: %(ns)s
spec:
  podTemplateRef: {name: chunk}
  replicas: 1
"""

BUFFER_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: late
  namespace: %(ns)s
spec:
  terminationGracePeriodSeconds: 0
  nodeSelector: {karpenter.sh/nodepool: buffer}
  tolerations: [{key: e2e/buffer, operator: Exists}]
  containers:
  - name: late
    image: registry.k8s.io/pause:3.10
    resources:
      requests: {cpu: "1", memory: 1Gi}
"""


class Test12CapacityBufferEndToEnd(unittest.TestCase):
    """Warm headroom from Karpenter's CapacityBuffer (autoscaling.x-k8s.io/v1beta1, Karpenter's own CRD) on the real
    control plane, FEATURE_GATES CapacityBuffer=true: a buffer of one 1-cpu chunk of a PodTemplate's shape makes the
    controller launch a NodeClaim with no pod pending, and writes the buffer's status (ReadyForProvisioning Resolved,
    replicas 1, Provisioning, podTemplateGeneration following the template's edits); a pod of that shape created later is bound to that node, already Ready before the pod
    existed, and the chunk is provisioned again elsewhere (a second claim). A buffer naming a missing PodTemplate is
    not ReadyForProvisioning (PodTemplateNotFound), one whose scalableRef is a batch Job not ReadyForProvisioning
    (ResolutionFailed, Karpenter's resolver's message), and neither launches anything."""

    def claims(self):
        return kget("nodeclaims", "-l", "karpenter.sh/nodepool=buffer")["items"]

    def ready_nodes(self):
        return {nd["metadata"]["name"] for nd in kget("nodes", "-l", "karpenter.sh/nodepool=buffer")["items"]
                if any(k["type"] == "Ready" and k["status"] == "True"
                       for k in nd.get("status", {}).get("conditions", []))}

    def condition(self, name, kind):
        st = kget("capacitybuffer", "-n", self.ns, name).get("status", {})
        return next((k for k in st.get("conditions", []) if k["type"] == kind), None), st

    def test_buffer_launches_spare_capacity_a_later_pod_starts_on(self):
        install_crds("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml",
                     "autoscaling.x-k8s.io_capacitybuffers.yaml")
        kubectl("wait", "--for", "condition=Established", "--timeout=60s",
                "crd/capacitybuffers.autoscaling.x-k8s.io")
        self.ns = "e2e-buffer"
        kubectl("create", "namespace", self.ns)
        kubectl("apply", "-f", "-", stdin=NODEPOOL.split("---")[1])  # the SimNodeClass
        kubectl("apply", "-f", "-", stdin=BUFFER_OBJECTS % {"ns": self.ns})
        ctl = Controller("buffer", {"FEATURE_GATES": "CapacityBuffer=true"})
        try:
            eventually("buffer to lead", lambda: "successfully acquired lease" in ctl.text(), timeout=90)
            try:
                node = eventually("one NodeClaim of the buffer's pool with a Ready Node", lambda: (
                    len(self.claims()) == 1 and self.claims()[0].get("status", {}).get("nodeName") in
                    self.ready_nodes() and self.claims()[0]["status"]["nodeName"]), timeout=180)
                ready = eventually("ReadyForProvisioning", lambda: self.condition("warm", "ReadyForProvisioning")[0])
                prov = eventually("Provisioning FitsExistingCapacity", lambda: (
                    lambda k: k and k["reason"] == "FitsExistingCapacity" and k)(
                        self.condition("warm", "Provisioning")[0]), timeout=60)
            except AssertionError:
                print(ctl.text()[-6000:], file=sys.stderr)
                raise
            st = kget("capacitybuffer", "-n", self.ns, "warm")["status"]
            self.assertEqual((ready["status"], ready["reason"]), ("True", "Resolved"), st)
            self.assertEqual((st["replicas"], st["podTemplateRef"]["name"], st["provisioningStrategy"]),
                             (1, "chunk", "buffer.x-k8s.io/active-capacity"), st)
            # the generation of the PodTemplate resolved, as Karpenter records it; it follows a change of the template
            generation = kget("podtemplate", "-n", self.ns, "chunk")["metadata"]["generation"]
            self.assertEqual(st.get("podTemplateGeneration"), generation, st)
            kubectl("patch", "podtemplate", "-n", self.ns, "chunk", "--type=merge", "-p",
                    '{"template": {"metadata": {"labels": {"e2e/edited": "true"}}}}')
            self.assertEqual(kget("podtemplate", "-n", self.ns, "chunk")["metadata"]["generation"], generation + 1)
            eventually("podTemplateGeneration of the edited template", lambda: kget(
                "capacitybuffer", "-n", self.ns, "warm")["status"].get("podTemplateGeneration") == generation + 1,
                timeout=60)
            # each condition's observedGeneration is the buffer's generation, as Karpenter's SetCondition writes it;
            # an edit of the spec (a limit that caps nothing) moves it
            observed = lambda: [k.get("observedGeneration") for k in kget(
                "capacitybuffer", "-n", self.ns, "warm")["status"]["conditions"]]
            buffer_generation = kget("capacitybuffer", "-n", self.ns, "warm")["metadata"]["generation"]
            self.assertEqual(observed(), [buffer_generation, buffer_generation])
            kubectl("patch", "capacitybuffer", "-n", self.ns, "warm", "--type=merge", "-p",
                    '{"spec": {"limits": {"cpu": "4"}}}')
            eventually("observedGeneration of the edited buffer",
                       lambda: observed() == [buffer_generation + 1, buffer_generation + 1], timeout=60)
            self.assertEqual(prov["status"], "True", st)
            first = self.claims()[0]["metadata"]["name"]
            time.sleep(5)  # no second claim while nothing takes the chunk's room
            self.assertEqual([c["metadata"]["name"] for c in self.claims()], [first])
            self.assertEqual(kget("pods", "-n", self.ns)["items"], [], "the buffer's chunk was written as a pod")

            kubectl("apply", "-f", "-", stdin=BUFFER_POD % {"ns": self.ns})
            pod = eventually("the late pod Running", lambda: (lambda p: p.get("status", {}).get("phase") == "Running"
                                                              and p)(kget("pod", "-n", self.ns, "late")), timeout=90)
            self.assertEqual(pod["spec"]["nodeName"], node, "the late pod did not start on the buffer's node")
            # the real pod took the chunk's room: the chunk is provisioned again on a claim of its own
            eventually("a second NodeClaim for the displaced chunk", lambda: len(self.claims()) == 2, timeout=90)

            kubectl("apply", "-f", "-", stdin="""
apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityBuffer
metadata: {name: orphan, namespace: %s}
spec: {podTemplateRef: {name: absent}, replicas: 3, percentage: 50}
---
apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityBuffer
metadata: {name: nightly, namespace: %s}
spec: {scalableRef: {apiGroup: batch, kind: Job, name: nightly}, replicas: 3}
""" % (self.ns, self.ns))
            k = eventually("orphan's ReadyForProvisioning", lambda: self.condition("orphan", "ReadyForProvisioning")[0],
                           timeout=60)
            self.assertEqual((k["status"], k["reason"]), ("False", "PodTemplateNotFound"), k)
            # a scalableRef Karpenter's resolver does not read: its error, as Karpenter's controller writes it
            k, st = eventually("nightly's ReadyForProvisioning",
                               lambda: (lambda r: r[0] and r)(self.condition("nightly", "ReadyForProvisioning")),
                               timeout=60)
            self.assertEqual((k["status"], k["reason"], k["message"]),
                             ("False", "ResolutionFailed", 'unsupported scalableRef API group "batch"'), st)
            self.assertEqual(st["provisioningStrategy"], "buffer.x-k8s.io/active-capacity", st)
            self.assertNotIn("replicas", st)
            k = eventually("nightly's Provisioning", lambda: self.condition("nightly", "Provisioning")[0], timeout=60)
            self.assertEqual((k["status"], k["reason"]), ("False", "NotReadyForProvisioning"), k)
            time.sleep(5)
            self.assertEqual(len(self.claims()), 2, "a buffer without its template launched capacity")
            print("# CapacityBuffer: 1 claim for the chunk, the late pod on its node %s, 2nd claim for the displaced "
                  "chunk; status replicas 1, Provisioning %s" % (node, prov["reason"]))
            self.assertEqual(ctl.stop(), 0, ctl.text()[-3000:])
            errors = [line for line in ctl.text().splitlines() if '"level":"ERROR"' in line]
            self.assertEqual(errors, [], "the controller logged errors")
            # nightly's resolver error is warned once for its generation, not on each watch event of it (its two
            # status writes among them)
            nightly = [json.loads(line) for line in ctl.text().splitlines()
                       if '"reason":"ResolutionFailed"' in line]
            self.assertEqual([(w["level"], w["CapacityBuffer"], w["error"]) for w in nightly],
                             [("WARN", {"name": "nightly", "namespace": self.ns},
                               'unsupported scalableRef API group "batch"')], nightly)
            # so is orphan's percentage, which a podTemplateRef ignores
            orphan = [json.loads(line) for line in ctl.text().splitlines() if "ignoring spec.percentage" in line]
            self.assertEqual([(w["level"], w["CapacityBuffer"]) for w in orphan],
                             [("WARN", {"name": "orphan", "namespace": self.ns})], orphan)
        finally:
            ctl.close()
            kubectl("delete", "namespace", self.ns, "--wait=false")
            kubectl("delete", "nodepool", "buffer", "--ignore-not-found", "--wait=false")


if __name__ == "__main__":
    NODESMITH = sys.argv.pop(1)
    unittest.main(verbosity=2)
