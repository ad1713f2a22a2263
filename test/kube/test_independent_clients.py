#!/usr/bin/python3
"""The test bed is a real control plane, as two clients nodesmith did not write see it: kubectl (the machine's
v1.32.4) and Debian's python3-kubernetes. Each test is also a recipe for the client's own tests: the Deployment
controller makes ReplicaSets and pods and the scheduler binds them to a Ready node; the garbage collector follows
owner references; a PodDisruptionBudget refuses an eviction with 429; a watch from an expired resource version ends
with 410 after an etcd compaction, and so does a list's continue token.
"""
import json
import os
import re
import subprocess
import sys
import time
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kubebed  # noqa: E402

from kubernetes import client, config, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

KUBECTL = os.environ.get("NS_TEST_KUBECTL", "/usr/bin/kubectl")
BED = None
PLANE = None


def setUpModule():
    global BED, PLANE
    # The client leaves its pooled connections to the garbage collector; that is its business, not this test's.
    warnings.simplefilter("ignore", ResourceWarning)
    PLANE = kubebed.plane()
    BED = PLANE.__enter__()
    config.load_kube_config(config_file=BED.kubeconfig)


def tearDownModule():
    PLANE.__exit__(None, None, None)


def kubectl(*args, stdin=None):
    r = subprocess.run([KUBECTL, "--kubeconfig", BED.kubeconfig, *args], input=stdin, capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        raise AssertionError("kubectl %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return r.stdout


def eventually(what, predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %ds waiting for %s" % (timeout, what))
        time.sleep(0.25)


def own_node(ns):
    """A Ready node only this test's pods may use: labelled and tainted with the namespace's name."""
    name = ns + "-node"
    BED.node(name, labels={"nodesmith.test/owner": ns},
             taints=[{"key": "nodesmith.test/owner", "value": ns, "effect": "NoSchedule"}])
    placement = {"nodeSelector": {"nodesmith.test/owner": ns},
                 "tolerations": [{"key": "nodesmith.test/owner", "operator": "Equal", "value": ns,
                                  "effect": "NoSchedule"}]}
    return name, placement


def pod_manifest(ns, name, labels, placement):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": dict(placement, containers=[{"name": "c", "image": "registry.invalid/pause"}])}


def play_kubelet(ns, name):
    """What a kubelet would report for a started pod: Running and Ready (no kubelet runs in the bed)."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    client.CoreV1Api().patch_namespaced_pod_status(name, ns, {"status": {
        "phase": "Running", "startTime": now,
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}]}})


class ServerVersion(unittest.TestCase):
    def test_kubectl_sees_the_pinned_release(self):
        with open(kubebed.BUILD_SCRIPT) as f:
            pinned = re.search(r"k8s_version=\$\{NS_K8S_VERSION:-(v[0-9.]+)\}", f.read()).group(1)
        want = os.environ.get("NS_K8S_VERSION", pinned)
        version = json.loads(kubectl("version", "-o", "json"))
        self.assertEqual(version["serverVersion"]["gitVersion"], want)
        self.assertEqual(client.VersionApi().get_code().git_version, want)


class Deployments(unittest.TestCase):
    def test_deployment_replicaset_pods_scheduled_then_garbage_collected(self):
        ns = BED.namespace("deploy")
        node, placement = own_node(ns)
        deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": ns},
                      "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                               "template": {"metadata": {"labels": {"app": "web"}},
                                            "spec": dict(placement, containers=[
                                                {"name": "c", "image": "registry.invalid/pause",
                                                 "resources": {"requests": {"cpu": "100m"}}}])}}}
        kubectl("apply", "-f", "-", stdin=json.dumps(deployment))
        apps, core = client.AppsV1Api(), client.CoreV1Api()
        uid = apps.read_namespaced_deployment("web", ns).metadata.uid

        rs = eventually("a ReplicaSet owned by the Deployment",
                        lambda: apps.list_namespaced_replica_set(ns).items)[0]
        owner = rs.metadata.owner_references[0]
        self.assertEqual((owner.kind, owner.name, owner.uid, owner.controller), ("Deployment", "web", uid, True))

        def bound_pods():
            pods = core.list_namespaced_pod(ns, label_selector="app=web").items
            return pods if len(pods) == 2 and all(p.spec.node_name for p in pods) else None
        pods = eventually("2 pods bound by the scheduler", bound_pods)
        for p in pods:
            self.assertEqual(p.spec.node_name, node)
            self.assertEqual(p.metadata.owner_references[0].uid, rs.metadata.uid)
        # kubectl reads the same state.
        listed = json.loads(kubectl("get", "pods", "-n", ns, "-o", "json"))["items"]
        self.assertEqual(sorted(p["spec"]["nodeName"] for p in listed), [node, node])
        events = core.list_namespaced_event(ns, field_selector="reason=Scheduled").items
        self.assertTrue(events, "no Scheduled event from the scheduler")

        # Deleting the Deployment: the garbage collector deletes the ReplicaSet, then its pods. Bound pods wait for
        # a kubelet to confirm (graceful deletion), so they first only get a deletionTimestamp.
        kubectl("delete", "deployment", "web", "-n", ns, "--wait=false")
        eventually("the ReplicaSet collected", lambda: not apps.list_namespaced_replica_set(ns).items)
        eventually("the pods marked for deletion", lambda: all(
            p.metadata.deletion_timestamp for p in core.list_namespaced_pod(ns).items))
        for p in core.list_namespaced_pod(ns).items:  # the kubelet's part: confirm with grace period 0
            core.delete_namespaced_pod(p.metadata.name, ns, grace_period_seconds=0)
        eventually("the pods gone", lambda: not core.list_namespaced_pod(ns).items)

    def test_owner_reference_garbage_collection(self):
        ns = BED.namespace("gc")
        core = client.CoreV1Api()
        owner = core.create_namespaced_config_map(ns, {"metadata": {"name": "owner"}, "data": {"k": "v"}})
        core.create_namespaced_config_map(ns, {"metadata": {"name": "dependent", "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}]}})
        core.create_namespaced_config_map(ns, {"metadata": {"name": "bystander"}})
        core.delete_namespaced_config_map("owner", ns)
        eventually("the dependent collected", lambda: "dependent" not in
                   [c.metadata.name for c in core.list_namespaced_config_map(ns).items])
        names = [c.metadata.name for c in core.list_namespaced_config_map(ns).items]
        self.assertIn("bystander", names)


class Evictions(unittest.TestCase):
    def test_pdb_blocks_eviction_with_429_and_two_pdbs_give_500(self):
        ns = BED.namespace("evict")
        _, placement = own_node(ns)
        core, policy = client.CoreV1Api(), client.PolicyV1Api()
        for name in ("a", "b"):
            core.create_namespaced_pod(ns, pod_manifest(ns, name, {"app": "db"}, placement))
        eventually("both pods bound", lambda: all(
            p.spec.node_name for p in core.list_namespaced_pod(ns).items))
        for name in ("a", "b"):
            play_kubelet(ns, name)
        pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db"},
               "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "db"}}}}
        policy.create_namespaced_pod_disruption_budget(ns, pdb)

        def pdb_status(allowed):
            p = policy.read_namespaced_pod_disruption_budget("db", ns)
            s = p.status
            return (s and s.observed_generation == p.metadata.generation and s.current_healthy == 2
                    and s.disruptions_allowed == allowed)
        eventually("the disruption controller to allow 0 disruptions", lambda: pdb_status(0))

        eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "a", "namespace": ns}}
        with self.assertRaises(ApiException) as refused:
            core.create_namespaced_pod_eviction("a", ns, eviction)
        self.assertEqual(refused.exception.status, 429)
        body = json.loads(refused.exception.body)
        self.assertEqual(body["reason"], "TooManyRequests")
        self.assertIn("Cannot evict pod as it would violate the pod's disruption budget.", body["message"])
        self.assertEqual(body["details"]["causes"][0]["reason"], "DisruptionBudget")
        self.assertIsNone(core.read_namespaced_pod("a", ns).metadata.deletion_timestamp)

        policy.patch_namespaced_pod_disruption_budget("db", ns, {"spec": {"minAvailable": 1}})
        eventually("the disruption controller to allow 1 disruption", lambda: pdb_status(1))
        core.create_namespaced_pod_eviction("a", ns, eviction)
        self.assertIsNotNone(core.read_namespaced_pod("a", ns).metadata.deletion_timestamp)

        policy.create_namespaced_pod_disruption_budget(ns, dict(pdb, metadata={"name": "db2"}))
        with self.assertRaises(ApiException) as ambiguous:
            core.create_namespaced_pod_eviction("b", ns, dict(eviction, metadata={"name": "b", "namespace": ns}))
        self.assertEqual(ambiguous.exception.status, 500)
        self.assertIn("more than one PodDisruptionBudget", json.loads(ambiguous.exception.body)["message"])


class Watches(unittest.TestCase):
    def test_watch_from_a_compacted_revision_ends_with_410(self):
        ns = BED.namespace("watch410")
        core = client.CoreV1Api()
        core.create_namespaced_config_map(ns, {"metadata": {"name": "c"}, "data": {"n": "0"}})
        old = core.list_namespaced_config_map(ns).metadata.resource_version
        for n in range(1, 4):
            core.patch_namespaced_config_map("c", ns, {"data": {"n": str(n)}})
        BED.compact()
        with self.assertRaises(ApiException) as gone:
            for _ in watch.Watch().stream(core.list_namespaced_config_map, ns, resource_version=old,
                                          timeout_seconds=10):
                pass
        self.assertEqual(gone.exception.status, 410)
        self.assertIn("Expired", gone.exception.reason)
        # What an informer does next: relist, then watch from the list's resource version.
        relisted = core.list_namespaced_config_map(ns)
        self.assertEqual(relisted.items[0].data["n"], "3")
        w = watch.Watch()
        core.patch_namespaced_config_map("c", ns, {"data": {"n": "4"}})
        seen = [e for e in w.stream(core.list_namespaced_config_map, ns,
                                    resource_version=relisted.metadata.resource_version, timeout_seconds=5)]
        self.assertEqual([(e["type"], e["object"].data["n"]) for e in seen], [("MODIFIED", "4")])

    def test_list_continue_token_from_a_compacted_revision_is_410(self):
        ns = BED.namespace("continue410")
        core = client.CoreV1Api()
        for n in range(3):
            core.create_namespaced_config_map(ns, {"metadata": {"name": "c%d" % n}})
        page = core.list_namespaced_config_map(ns, limit=1)
        self.assertTrue(page.metadata._continue)
        core.patch_namespaced_config_map("c0", ns, {"data": {"x": "y"}})
        BED.compact()
        with self.assertRaises(ApiException) as gone:
            core.list_namespaced_config_map(ns, limit=1, _continue=page.metadata._continue)
        self.assertEqual(gone.exception.status, 410)
        self.assertEqual(json.loads(gone.exception.body)["reason"], "Expired")


if __name__ == "__main__":
    unittest.main(verbosity=2)
