#!/usr/bin/python3
"""`nodesmith simulate --from-cluster` on a real control plane (test/kube): the live cluster's NodePool, EC2NodeClass,
a static Node, a Deployment whose pods the real kube-scheduler bound where they fit, and the rest Unschedulable.
simulate reads it as a user allowed only get and list (no watch, no write), decides NodeClaims for exactly the pods
the scheduler could not place, and the cluster is unchanged afterwards. Manifests given with -f add to the live state.
Starts and stops its own control plane and every process it starts.

Usage: test_simulate_from_cluster.py NODESMITH_BINARY SOURCE_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kube"))
import kubebed  # noqa: E402

KUBECTL = os.environ.get("NS_TEST_KUBECTL", "/usr/bin/kubectl")
NODESMITH = None
ROOT = None
BED = None
PLANE = None

# What a what-if reader needs, and nothing more: get and list of what the engine reads, with every node-class kind the
# loaded provider declares (the sim takes SimNodeClass and AWS's two).
READ_ONLY_ROLE = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: nodesmith-whatif}
rules:
  - apiGroups: [""]
    resources: [pods, nodes]
    verbs: [get, list]
  - apiGroups: [policy]
    resources: [poddisruptionbudgets]
    verbs: [get, list]
  - apiGroups: [""]
    resources: [persistentvolumes, persistentvolumeclaims]
    verbs: [get, list]
  - apiGroups: [storage.k8s.io]
    resources: [storageclasses, volumeattachments]
    verbs: [get, list]
  - apiGroups: [apps]
    resources: [daemonsets, replicasets, statefulsets]
    verbs: [get, list]
  - apiGroups: [""]
    resources: [services, replicationcontrollers]
    verbs: [get, list]
  - apiGroups: [karpenter.sh]
    resources: [nodepools, nodeclaims]
    verbs: [get, list]
  - apiGroups: [karpenter.k8s.aws]
    resources: [ec2nodeclasses, awsnodetemplates]
    verbs: [get, list]
  - apiGroups: [nodesmith.io]
    resources: [simnodeclasses]
    verbs: [get, list]
  - apiGroups: [autoscaling.x-k8s.io]
    resources: [capacitybuffers]
    verbs: [get, list]
  - apiGroups: [""]
    resources: [podtemplates]
    verbs: [get, list]
  - apiGroups: [apps]
    resources: [deployments]
    verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: nodesmith-whatif}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: nodesmith-whatif}
subjects:
  - {apiGroup: rbac.authorization.k8s.io, kind: User, name: whatif}
"""

EXTRA = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: batch, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: batch}}
  template:
    metadata: {labels: {app: batch}}
    spec:
      containers:
        - name: work
          image: busybox
          resources: {requests: {cpu: "2", memory: 1Gi}}
"""


def kubectl(*args, stdin=None, check=True):
    return subprocess.run([KUBECTL, "--kubeconfig", BED.kubeconfig] + list(args), input=stdin, capture_output=True,
                          text=True, check=check).stdout


def kget(*args):
    return json.loads(kubectl("get", "-o", "json", *args))


def simulate(*args):
    return subprocess.run([NODESMITH, "simulate", "--from-cluster"] + list(args), capture_output=True, text=True,
                          timeout=120)


def setUpModule():
    global BED, PLANE
    PLANE = kubebed.plane()
    BED = PLANE.__enter__()
    for d in ("crds", "nodeclass-crds"):
        kubectl("apply", "--server-side", "-f", os.path.join(ROOT, "charts", "nodesmith", d))
    for crd in ("nodepools.karpenter.sh", "nodeclaims.karpenter.sh", "ec2nodeclasses.karpenter.k8s.aws"):
        kubectl("wait", "--for", "condition=Established", "--timeout=60s", "crd/" + crd)
    kubectl("apply", "-f", "-", stdin=READ_ONLY_ROLE)
    # A node of an existing node group (no NodeClaim): room for four of the ten 500m nginx pods
    BED.node("static-1", cpu="2", memory="8Gi")
    kubectl("apply", "-f", os.path.join(ROOT, "examples", "nginx.yaml"))


def tearDownModule():
    PLANE.__exit__(None, None, None)


def unschedulable_pods():
    """The nginx pods kube-scheduler could not place, once all ten exist and every one was tried."""
    def settled():
        pods = kget("pods", "-n", "default", "-l", "app=nginx")["items"]
        if len(pods) != 10:
            return None
        pending = []
        for p in pods:
            if p["spec"].get("nodeName"):
                continue
            cond = [c for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled"]
            if not cond or cond[0].get("reason") != "Unschedulable":
                return None
            pending.append(p["metadata"]["name"])
        return pending
    return BED.wait_for("the scheduler to try every nginx pod", settled, timeout=120)


class FromCluster(unittest.TestCase):
    def test_decides_claims_for_what_the_scheduler_could_not_place(self):
        pending = unschedulable_pods()
        self.assertEqual(len(pending), 6, pending)
        whatif = BED.user("whatif")
        before = (kget("nodeclaims")["items"], [n["metadata"]["name"] for n in kget("nodes")["items"]])
        r = simulate("--kubeconfig", whatif, "--output", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["pods_total"], 6, doc)
        self.assertEqual(doc["pods_scheduled"], 6, doc)
        self.assertEqual(doc["pods_on_existing_nodes"], 0, doc)
        placed = sorted(p.split("/")[1] for c in doc["nodeclaims"] for p in c["pods"])
        self.assertEqual(placed, sorted(pending))
        self.assertEqual(doc["pods_unschedulable"], [], doc)
        self.assertGreater(len(doc["nodeclaims"]), 0, doc)
        self.assertTrue(all(c["nodepool"] == "default" for c in doc["nodeclaims"]), doc["nodeclaims"])
        self.assertIn('"read the cluster"', r.stderr)
        self.assertNotIn("capacitybuffers", r.stderr)  # not served yet (WarmHeadroom installs the CRD): no word
        # nothing was written: no NodeClaim, no Node
        after = (kget("nodeclaims")["items"], [n["metadata"]["name"] for n in kget("nodes")["items"]])
        self.assertEqual(before, after)

        # -f adds to the live state: three more pods of 2 cpu each, which need claims of their own
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as extra:
            extra.write(EXTRA)
            extra.flush()
            r = simulate("--kubeconfig", whatif, "--output", "json", "-f", extra.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        more = json.loads(r.stdout)
        self.assertEqual((more["pods_total"], more["pods_scheduled"]), (9, 9), more)
        placed = [p for c in more["nodeclaims"] for p in c["pods"]]
        self.assertEqual(sum(p.startswith("default/batch-") for p in placed), 3, placed)

    def test_a_dump_of_the_cluster_counts_each_workload_once(self):
        """`kubectl get -o yaml` of the same cluster as -f input, without --from-cluster: the Deployment, its
        ReplicaSet and their pods are one workload, whichever order the dump lists them in, and simulate decides the
        same claims for the same pods as when it reads the live cluster."""
        pending = unschedulable_pods()
        live = json.loads(simulate("--kubeconfig", BED.kubeconfig, "--output", "json").stdout)
        for kinds in ("nodepools,ec2nodeclasses,nodes,deployments,replicasets,pods",
                      "pods,replicasets,deployments,nodes,ec2nodeclasses,nodepools"):
            with self.subTest(order=kinds), tempfile.NamedTemporaryFile("w", suffix=".yaml") as dump:
                dump.write(kubectl("get", kinds, "-n", "default", "-o", "yaml"))
                dump.flush()
                r = subprocess.run([NODESMITH, "simulate", "-f", dump.name, "--output", "json"], capture_output=True,
                                   text=True, timeout=120)
                self.assertEqual(r.returncode, 0, r.stderr)
                doc = json.loads(r.stdout)
                self.assertEqual((doc["pods_total"], doc["pods_scheduled"]), (6, 6), doc)
                placed = sorted(p.split("/")[1] for c in doc["nodeclaims"] for p in c["pods"])
                self.assertEqual(placed, sorted(pending))
                self.assertEqual(sorted(c["instance_type"] for c in doc["nodeclaims"]),
                                 sorted(c["instance_type"] for c in live["nodeclaims"]))
                self.assertIn('"a workload counts through its own objects in the manifests, not expanded"', r.stderr)

    def test_a_timeline_from_the_live_cluster_writes_its_report(self):
        unschedulable_pods()
        with tempfile.TemporaryDirectory() as tmp:
            timeline, report = os.path.join(tmp, "t.yaml"), os.path.join(tmp, "r.html")
            with open(timeline, "w") as f:
                f.write("description: the live cluster ten minutes on\nsteps:\n  - name: ten minutes on\n"
                        "    advance: 10m\n")
            r = simulate("--kubeconfig", BED.user("whatif"), "--timeline", timeline, "--report", report,
                         "--output", "json")
            self.assertEqual(r.returncode, 0, r.stderr)
            doc = json.loads(r.stdout)
            last = doc["steps"][-1]
            self.assertEqual(last["name"], "ten minutes on")
            self.assertEqual(last["state"]["pods_pending"], 0, last)
            with open(report) as f:
                self.assertIn("ten minutes on", f.read())

    def test_a_cluster_it_cannot_read_is_an_error_naming_it(self):
        denied = BED.user("nobody")  # no role: every list is forbidden
        r = simulate("--kubeconfig", denied)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("nodesmith simulate --from-cluster: ", r.stderr)
        self.assertIn('User "nobody" cannot list resource', r.stderr)

    def test_refuses_what_a_what_if_cannot_do(self):
        for args, why in ((["--provider", "aws"], "sim provider only"),
                          (["--allow-launch"], "sim provider only")):
            r = simulate(*args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(why, r.stderr)
        r = subprocess.run([NODESMITH, "simulate", "--kubeconfig", BED.kubeconfig, "-f",
                            os.path.join(ROOT, "examples", "nginx.yaml")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("needs --from-cluster", r.stderr)


BUFFERS = """
apiVersion: v1
kind: PodTemplate
metadata: {name: chunk, namespace: default}
template:
  spec:
    containers:
      - {name: pause, image: registry.k8s.io/pause:3.9, resources: {requests: {cpu: "1", memory: 1Gi}}}
---
apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityBuffer
metadata: {name: fixed, namespace: default}
spec:
  podTemplateRef: {name: chunk}
  replicas: 2
---
apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityBuffer
metadata: {name: nginx-share, namespace: default}
spec:
  scalableRef: {apiGroup: apps, kind: Deployment, name: nginx}
  percentage: 30
"""


class WarmHeadroom(unittest.TestCase):
    """Runs after FromCluster (unittest orders classes by name): with the chart's CapacityBuffer CRD served, simulate
    --from-cluster reads the buffers, their PodTemplate and the Deployment a scalableRef names, and a timeline with
    the CapacityBuffer gate places their chunks: 2 of the template, and ceil(30% of nginx's 10 replicas) = 3."""

    def test_buffers_in_the_cluster_are_placed(self):
        unschedulable_pods()
        kubectl("apply", "--server-side", "-f", os.path.join(ROOT, "charts", "nodesmith", "feature-crds"))
        kubectl("wait", "--for", "condition=Established", "--timeout=60s", "crd/capacitybuffers.autoscaling.x-k8s.io")
        kubectl("apply", "-f", "-", stdin=BUFFERS)
        with tempfile.TemporaryDirectory() as tmp:
            timeline = os.path.join(tmp, "t.yaml")
            with open(timeline, "w") as f:
                f.write("description: the live cluster's headroom\nfeatureGates: {CapacityBuffer: true}\nsteps:\n"
                        "  - name: a minute on\n    advance: 1m\n")
            r = simulate("--kubeconfig", BED.user("whatif"), "--timeline", timeline, "--output", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        last = json.loads(r.stdout)["steps"][-1]["state"]
        self.assertEqual(last["headroom"], {**last["headroom"], "wanted": 5, "placed": 5}, last["headroom"])
        self.assertEqual(last["pods_pending"], 0, last)
        # nothing was written to the buffers either
        self.assertNotIn("status", kget("capacitybuffer", "-n", "default", "fixed"))


if __name__ == "__main__":
    NODESMITH, ROOT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=sys.argv[:1], verbosity=2)
