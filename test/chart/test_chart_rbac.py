#!/usr/bin/python3
"""The chart's RBAC, for real: the chart rendered by Helm (the simulated provider, its simulated kubelet) is applied to
a real control plane (test/kube), and the controller runs from the image's layout (scripts/image-layout.sh) as the
image's non-root user, with the chart's Deployment's arguments, environment and provider options, authenticated by a
token of the chart's ServiceAccount (TokenRequest API, `kubectl create token`). It provisions for a Deployment, writes
the statuses, drains and deletes a NodeClaim, and releases its Lease: any permission the chart lacks is a 403 in
its log, and the test fails on it. A ServiceAccount without the chart's bindings shows that it would.

Usage: test_chart_rbac.py CHART_DIR BUILD_DIR
"""
import base64
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "kube"))
sys.path.insert(0, os.path.join(HERE, "..", "controller"))
import kubebed  # noqa: E402
import test_controller_e2e as e2e  # noqa: E402

CHART = None
BUILD = None
PLANE = None
WORK = None      # the layout and the kubeconfigs, readable by the image's user
OBJECTS = None   # the chart's rendered objects
NAMESPACE = "nodesmith"
IMAGE_USER = 65532
# Variables the test harness sets itself (free ports, the log level it reads, short batches).
HARNESS_ENV = ("METRICS_PORT", "HEALTH_PROBE_PORT", "LOG_LEVEL", "BATCH_IDLE_DURATION", "BATCH_MAX_DURATION")


def kubectl(*args, stdin=None):
    return e2e.kubectl(*args, stdin=stdin)


def token_kubeconfig(service_account):
    """A kubeconfig holding a TokenRequest token of SERVICE_ACCOUNT in the chart's namespace."""
    token = kubectl("create", "token", service_account, "-n", NAMESPACE, "--duration=1h").strip()
    path = os.path.join(WORK, service_account + ".kubeconfig")
    with open(e2e.BED.ca, "rb") as f:
        ca = base64.b64encode(f.read()).decode()  # the bed's files are its owner's only
    with open(path, "w") as f:
        yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "sa",
                        "clusters": [{"name": "bed", "cluster": {"server": e2e.BED.url,
                                                                 "certificate-authority-data": ca}}],
                        "users": [{"name": service_account, "user": {"token": token}}],
                        "contexts": [{"name": "sa", "context": {"cluster": "bed", "user": service_account,
                                                                "namespace": NAMESPACE}}]}, f)
    os.chmod(path, 0o644)
    return path


def deployment_command(kubeconfig):
    """The chart's container as a command line on this machine: the image's root is the layout directory, the
    provider options are the chart's ConfigMap, field references resolve as in the release's namespace."""
    dep = OBJECTS[("Deployment", "nodesmith")]
    c = dep["spec"]["template"]["spec"]["containers"][0]
    layout = os.path.join(WORK, "layout")
    for name, text in OBJECTS[("ConfigMap", "nodesmith-provider")]["data"].items():
        with open(os.path.join(layout, "etc", "nodesmith", "provider", name), "w") as f:
            f.write(text)
    args = []
    for a in c["args"]:
        flag, eq, value = a.partition("=")
        args.append(flag + eq + (layout + value if value.startswith("/") else value))
    env = {}
    for e in c["env"]:
        if e["name"] in HARNESS_ENV:
            continue
        if "value" in e:
            env[e["name"]] = e["value"]
        else:
            assert e["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}, e
            env[e["name"]] = NAMESPACE
    user = ["setpriv", "--reuid=%d" % IMAGE_USER, "--regid=%d" % IMAGE_USER, "--clear-groups", "--pdeathsig=TERM"]
    return user + [os.path.join(layout, "usr", "bin", "nodesmith"), *args, "--kubeconfig", kubeconfig], env


def setUpModule():
    global PLANE, WORK, OBJECTS
    e2e.STATE_DIR = tempfile.TemporaryDirectory(prefix="nodesmith-sim-cloud-")
    os.chown(e2e.STATE_DIR.name, IMAGE_USER, IMAGE_USER)
    WORK = tempfile.mkdtemp(prefix="nodesmith-chart-")
    os.chmod(WORK, 0o755)
    subprocess.run(["bash", os.path.join(ROOT, "scripts", "image-layout.sh"), BUILD, os.path.join(WORK, "layout")],
                   check=True)
    helm = subprocess.run(["bash", os.path.join(HERE, "build-helm.sh")], capture_output=True, text=True,
                          check=True).stdout.strip()
    rendered = subprocess.run([helm, "template", "nodesmith", CHART, "--namespace", NAMESPACE, "--include-crds",
                               "--kube-version", "1.34.4",
                               "--set", "provider.name=sim", "--set", "controller.simulateKubelet=true",
                               "--set", "settings.clusterName=chart-e2e",
                               "--set", "provider.options.state_file=" + os.path.join(e2e.STATE_DIR.name, "cloud")],
                              capture_output=True, text=True, check=True).stdout
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    OBJECTS = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    PLANE = kubebed.plane()
    e2e.BED = PLANE.__enter__()
    kubectl("create", "namespace", NAMESPACE)
    crds = [d for d in docs if d["kind"] == "CustomResourceDefinition"]
    kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(crds))
    for d in crds:
        kubectl("wait", "--for", "condition=Established", "--timeout=60s", "crd/" + d["metadata"]["name"])
    rest = [d for d in docs if d["kind"] not in ("CustomResourceDefinition", "Deployment")]
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(rest))
    # The Deployment is not run here (no kubelet runs its image), but the API server must accept it as rendered.
    kubectl("apply", "--dry-run=server", "-f", "-", stdin=yaml.safe_dump(OBJECTS[("Deployment", "nodesmith")]))
    e2e.BED.wait_for("service account nodesmith", lambda: e2e.BED._exists(
        "/api/v1/namespaces/%s/serviceaccounts/nodesmith" % NAMESPACE))


def tearDownModule():
    PLANE.__exit__(None, None, None)
    e2e.STATE_DIR.cleanup()
    shutil.rmtree(WORK, ignore_errors=True)


def refusals(text):
    # "HTTP 403" is how the kube client reports a refusal; a bare "403" also matches timestamps such as ".403Z".
    return [line for line in text.splitlines() if "HTTP 403" in line or "forbidden" in line.lower()]


def unrefused(ctl, predicate):
    """PREDICATE, failing at once (instead of at its timeout) when the controller's log shows a refusal."""
    def check():
        refused = refusals(ctl.text())
        if refused:
            raise AssertionError("the chart's RBAC refused the controller:\n" + "\n".join(refused[:5]))
        return predicate()
    return check


class Test1WithoutTheChartsBindings(unittest.TestCase):
    """The harness sees a missing permission: a ServiceAccount with no binding is refused, and says so."""

    def test_an_unbound_service_account_is_refused(self):
        kubectl("create", "serviceaccount", "unbound", "-n", NAMESPACE)
        command, env = deployment_command(token_kubeconfig("unbound"))
        ctl = e2e.Controller("unbound", env, command)
        try:
            try:
                e2e.eventually("a 403 in the log", lambda: refusals(ctl.text()) or ctl.p.poll() is not None,
                               timeout=60)
                self.assertTrue(refusals(ctl.text()), "the controller exited without a 403")
            except AssertionError:
                print(ctl.text()[-4000:], file=sys.stderr)
                raise
            self.assertNotEqual(e2e.Test1ProvisioningEndToEnd._probe(ctl, "/readyz"), (200, "ok"))
        finally:
            ctl.stop()
            ctl.close()


class Test2WithTheChartsServiceAccount(unittest.TestCase):
    def test_provision_drain_and_release_with_only_the_charts_rbac(self):
        command, env = deployment_command(token_kubeconfig("nodesmith"))
        ctl = e2e.Controller("chart-a", env, command)
        ns = e2e.BED.namespace("chart")
        try:
            try:
                e2e.eventually("the controller to lead", lambda: "successfully acquired lease" in ctl.text(),
                               timeout=90)
            except AssertionError:
                print(ctl.text()[-4000:], file=sys.stderr)
                raise
            self.assertEqual(e2e.Test1ProvisioningEndToEnd._probe(ctl, "/readyz"), (200, "ok"))
            kubectl("apply", "-f", "-", stdin=e2e.NODEPOOL)
            kubectl("apply", "-f", "-", stdin=(e2e.DEPLOYMENT % {"ns": ns}).replace("replicas: 50", "replicas: 12"))

            def live_pods():
                return [p for p in e2e.kget("pods", "-n", ns)["items"] if p["status"].get("phase") == "Running" and
                        not p["metadata"].get("deletionTimestamp")]
            try:
                e2e.eventually("12 pods Running", unrefused(ctl, lambda: len(live_pods()) == 12), timeout=180)
            except AssertionError:
                print(ctl.text()[-6000:], file=sys.stderr)
                raise
            # statuses written through their subresources
            nc = e2e.eventually("the SimNodeClass's status", lambda: e2e.kget("simnodeclass", "default")
                                .get("status"), timeout=30)
            self.assertIn(("Ready", "True"), [(c["type"], c["status"]) for c in nc["conditions"]])
            pool = e2e.eventually("the NodePool's status", lambda: e2e.kget("nodepool", "default").get("status", {})
                                  .get("nodes"), timeout=30)
            claims = e2e.kget("nodeclaims")["items"]
            self.assertEqual(pool, len(claims))
            table = kubectl("get", "nodepools,nodeclaims")
            print("# " + table.replace("\n", "\n# "))
            self.assertRegex(table, r"nodepool.karpenter.sh/default\s+default\s+%d\s+True" % len(claims))
            for c in claims:
                self.assertRegex(table, r"nodeclaim.karpenter.sh/%s\s+m5\.\S+\s+on-demand\s+us-west-2[abc]\s+%s\s+True"
                                 % (c["metadata"]["name"], c["status"]["nodeName"]))
            # termination: the NodeClaim holding most pods is drained through evictions, its Node deleted
            on = {}
            for p in live_pods():
                on[p["spec"]["nodeName"]] = on.get(p["spec"]["nodeName"], 0) + 1
            node = max(on, key=on.get)
            claim = [c["metadata"]["name"] for c in claims if c["status"].get("nodeName") == node][0]
            kubectl("delete", "nodeclaim", claim, "--wait=false")
            e2e.eventually("NodeClaim %s drained and gone" % claim, unrefused(ctl, lambda: kubectl(
                "get", "nodeclaim", claim, "--ignore-not-found") == "" and len(live_pods()) == 12), timeout=180)
            self.assertEqual(kubectl("get", "node", node, "--ignore-not-found"), "")
            self.assertIn('"message":"evicted pod"', ctl.text())
            # SIGTERM: clean exit, the Lease in the release's namespace released (the Role's resourceNames)
            self.assertEqual(ctl.stop(), 0, ctl.text()[-3000:])
            lease = e2e.kget("lease", "-n", NAMESPACE, "karpenter-leader-election")
            self.assertFalse(lease["spec"].get("holderIdentity"), lease["spec"])
            text = ctl.text()
            self.assertEqual(refusals(text), [], "the chart's RBAC refused the controller something")
            self.assertEqual([line for line in text.splitlines() if '"level":"ERROR"' in line], [],
                             "the controller logged errors")
            print("# %d NodeClaims for 12 pods; %s drained (%d pods) with the chart's ServiceAccount token"
                  % (len(claims), claim, on[node]))
        finally:
            ctl.close()
            kubectl("delete", "namespace", ns, "--wait=false")


if __name__ == "__main__":
    CHART, BUILD = sys.argv.pop(1), sys.argv.pop(1)
    unittest.main(verbosity=2)
