#!/usr/bin/python3
"""The Helm chart (charts/nodesmith) under Helm itself (built from helm.sh/helm/v3/cmd/helm through the Go module proxy
by build-helm.sh, cached): `helm lint --strict` for every provider, then `helm template` with Karpenter-shaped values,
each rendered object read back as YAML and checked for what an operator relies on.

Usage: test_chart_helm.py CHART_DIR
"""
import os
import subprocess
import sys
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CHART = None
HELM = None
# The cluster helm checks the chart's kubeVersion against (the test bed's); a helm built by `go install` defaults to an
# old one, having no release ldflags.
KUBE_VERSION = ["--kube-version", "1.34.4"]


def helm(*args, check=True):
    r = subprocess.run([HELM, *args], capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise AssertionError("helm %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return r


def render(*sets, namespace="nodesmith", extra=()):
    """helm template's objects, keyed (kind, name)."""
    args = ["template", "nodesmith", CHART, "--namespace", namespace, *KUBE_VERSION, *extra]
    for s in sets:
        args += ["--set", s]
    docs = [d for d in yaml.safe_load_all(helm(*args).stdout) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def container(objs):
    return objs[("Deployment", "nodesmith")]["spec"]["template"]["spec"]["containers"][0]


def env(objs):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container(objs)["env"]}


class Test1Lint(unittest.TestCase):
    def test_lint_is_clean_for_every_provider(self):
        for provider in ("sim", "aws", "azure", "alibaba"):
            with self.subTest(provider=provider):
                r = helm("lint", "--strict", CHART, *KUBE_VERSION, "--set", "provider.name=" + provider)
                self.assertIn("1 chart(s) linted, 0 chart(s) failed", r.stdout)

    def test_an_unknown_provider_is_refused_by_name(self):
        r = helm("template", "nodesmith", CHART, *KUBE_VERSION, "--set", "provider.name=gcp", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('provider.name "gcp": not a provider this chart knows', r.stderr)


class Test2Template(unittest.TestCase):
    def test_deployment_is_shaped_like_karpenters(self):
        objs = render()
        dep = objs[("Deployment", "nodesmith")]
        pod = dep["spec"]["template"]["spec"]
        labels = dep["spec"]["template"]["metadata"]["labels"]
        self.assertEqual(dep["metadata"]["namespace"], "nodesmith")
        self.assertEqual(dep["spec"]["replicas"], 2)
        self.assertEqual(dep["spec"]["selector"]["matchLabels"], {k: labels[k] for k in dep["spec"]["selector"]
                                                                  ["matchLabels"]})
        # kept off the nodes it manages, replicas on different hosts, spread over zones
        term = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
        self.assertIn({"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"}, term["matchExpressions"])
        anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
        self.assertEqual(anti["topologyKey"], "kubernetes.io/hostname")
        self.assertEqual(anti["labelSelector"]["matchLabels"], dep["spec"]["selector"]["matchLabels"])
        spread = pod["topologySpreadConstraints"][0]
        self.assertEqual((spread["topologyKey"], spread["maxSkew"], spread["whenUnsatisfiable"]),
                         ("topology.kubernetes.io/zone", 1, "DoNotSchedule"))
        self.assertEqual(spread["labelSelector"]["matchLabels"], dep["spec"]["selector"]["matchLabels"])
        self.assertEqual(pod["priorityClassName"], "system-cluster-critical")
        # non-root, read-only root, no privileges
        c = container(objs)
        self.assertTrue(pod["securityContext"]["runAsNonRoot"])
        self.assertEqual(c["securityContext"]["runAsUser"], 65532)
        self.assertTrue(c["securityContext"]["readOnlyRootFilesystem"])
        self.assertFalse(c["securityContext"]["allowPrivilegeEscalation"])
        self.assertEqual(c["securityContext"]["capabilities"]["drop"], ["ALL"])
        self.assertEqual(c["resources"], {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}})
        # ports and probes on the controller's settings
        ports = {p["name"]: p["containerPort"] for p in c["ports"]}
        self.assertEqual(ports, {"http-metrics": 8080, "http": 8081})
        self.assertEqual((c["livenessProbe"]["httpGet"]["path"], c["readinessProbe"]["httpGet"]["path"]),
                         ("/healthz", "/readyz"))
        e = env(objs)
        self.assertEqual((e["METRICS_PORT"], e["HEALTH_PROBE_PORT"]), ("8080", "8081"))
        self.assertEqual(e["LEADER_ELECTION_NAMESPACE"], {"fieldRef": {"fieldPath": "metadata.namespace"}})
        # the PDB and the Service select the pods
        pdb = objs[("PodDisruptionBudget", "nodesmith")]
        self.assertEqual(pdb["spec"]["maxUnavailable"], 1)
        self.assertEqual(pdb["spec"]["selector"]["matchLabels"], dep["spec"]["selector"]["matchLabels"])
        svc = objs[("Service", "nodesmith")]
        self.assertEqual(svc["spec"]["selector"], dep["spec"]["selector"]["matchLabels"])
        self.assertEqual(svc["spec"]["ports"][0]["port"], 8080)
        self.assertNotIn(("ServiceMonitor", "nodesmith"), objs)

    def test_settings_feature_gates_and_provider_reach_the_controller(self):
        objs = render("settings.batchMaxDuration=30s", "settings.batchIdleDuration=2s", "settings.clusterName=prod",
                      "settings.featureGates.spotToSpotConsolidation=true", "settings.kubeClient.qps=50",
                      "logLevel=debug", "controller.metrics.port=9000", "controller.healthProbe.port=9001",
                      "provider.name=alibaba", "provider.options.cluster_id=c-123",
                      "provider.options.region=cn-hangzhou", "replicas=3")
        e = env(objs)
        self.assertEqual((e["BATCH_MAX_DURATION"], e["BATCH_IDLE_DURATION"], e["CLUSTER_NAME"], e["LOG_LEVEL"],
                          e["KUBE_CLIENT_QPS"], e["METRICS_PORT"], e["HEALTH_PROBE_PORT"]),
                         ("30s", "2s", "prod", "debug", "50", "9000", "9001"))
        self.assertEqual(e["FEATURE_GATES"], "NodeRepair=false,ReservedCapacity=true,SpotToSpotConsolidation=true,"
                                             "NodeOverlay=false,StaticCapacity=false,CapacityBuffer=false")
        c = container(objs)
        self.assertIn("--provider=alibaba", c["args"])
        self.assertIn("--provider-config=/etc/nodesmith/provider/alibaba.yaml", c["args"])
        self.assertEqual({p["name"]: p["containerPort"] for p in c["ports"]}, {"http-metrics": 9000, "http": 9001})
        options = yaml.safe_load(objs[("ConfigMap", "nodesmith-provider")]["data"]["alibaba.yaml"])
        self.assertEqual(options, {"cluster_id": "c-123", "region": "cn-hangzhou"})
        self.assertEqual(objs[("Deployment", "nodesmith")]["spec"]["replicas"], 3)
        # a change of options rolls the pods
        other = render("provider.name=alibaba", "provider.options.cluster_id=c-456")
        key = "checksum/provider-options"
        self.assertNotEqual(objs[("Deployment", "nodesmith")]["spec"]["template"]["metadata"]["annotations"][key],
                            other[("Deployment", "nodesmith")]["spec"]["template"]["metadata"]["annotations"][key])

    def test_service_monitor(self):
        objs = render("serviceMonitor.enabled=true", "serviceMonitor.additionalLabels.release=prom")
        sm = objs[("ServiceMonitor", "nodesmith")]
        self.assertEqual(sm["spec"]["endpoints"][0]["port"], "http-metrics")
        self.assertEqual(sm["metadata"]["labels"]["release"], "prom")
        self.assertEqual(sm["spec"]["selector"]["matchLabels"],
                         objs[("Service", "nodesmith")]["spec"]["selector"])

    def test_credentials_wiring(self):
        # IRSA: the role on the ServiceAccount, where EKS's webhook looks for it
        sa = render("credentials.aws.roleARN=arn:aws:iam::111122223333:role/nodesmith")[("ServiceAccount", "nodesmith")]
        self.assertEqual(sa["metadata"]["annotations"]["eks.amazonaws.com/role-arn"],
                         "arn:aws:iam::111122223333:role/nodesmith")
        # EKS Pod Identity: nothing on the ServiceAccount (the association lives in EKS)
        self.assertNotIn("annotations", render()[("ServiceAccount", "nodesmith")]["metadata"])
        # Azure workload identity: client ID and tenant on the ServiceAccount, the webhook's label on the pods
        objs = render("provider.name=azure", "credentials.azure.clientID=00000000-0000-0000-0000-000000000001",
                      "credentials.azure.tenantID=00000000-0000-0000-0000-000000000002")
        a = objs[("ServiceAccount", "nodesmith")]["metadata"]["annotations"]
        self.assertEqual((a["azure.workload.identity/client-id"], a["azure.workload.identity/tenant-id"]),
                         ("00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002"))
        self.assertEqual(objs[("Deployment", "nodesmith")]["spec"]["template"]["metadata"]["labels"]
                         ["azure.workload.identity/use"], "true")
        # Alibaba Cloud RRSA: the token projected for STS's audience and the three variables the provider reads
        objs = render("provider.name=alibaba", "credentials.alibaba.roleARN=acs:ram::1:role/nodesmith",
                      "credentials.alibaba.oidcProviderARN=acs:ram::1:oidc-provider/ack-rrsa-c1")
        e = env(objs)
        self.assertEqual((e["ALIBABA_CLOUD_ROLE_ARN"], e["ALIBABA_CLOUD_OIDC_PROVIDER_ARN"]),
                         ("acs:ram::1:role/nodesmith", "acs:ram::1:oidc-provider/ack-rrsa-c1"))
        pod = objs[("Deployment", "nodesmith")]["spec"]["template"]["spec"]
        vol = [v for v in pod["volumes"] if v["name"] == "rrsa-oidc-token"][0]
        self.assertEqual(vol["projected"]["sources"][0]["serviceAccountToken"]["audience"], "sts.aliyuncs.com")
        mount = [m for m in container(objs)["volumeMounts"] if m["name"] == "rrsa-oidc-token"][0]
        self.assertEqual(os.path.join(mount["mountPath"], "token"), e["ALIBABA_CLOUD_OIDC_TOKEN_FILE"])
        # ... or left to ACK's pod identity webhook, by role name
        sa = render("provider.name=alibaba", "credentials.alibaba.roleName=nodesmith")[("ServiceAccount", "nodesmith")]
        self.assertEqual(sa["metadata"]["annotations"]["pod-identity.alibabacloud.com/role-name"], "nodesmith")

    def test_rbac_is_one_narrow_role_per_concern(self):
        objs = render("provider.name=aws")
        roles = {name: o for (kind, name), o in objs.items() if kind == "ClusterRole"}
        self.assertEqual(sorted(roles), ["nodesmith-events", "nodesmith-nodeclaims", "nodesmith-nodeclasses",
                                         "nodesmith-read", "nodesmith-termination"])
        for name, role in roles.items():
            binding = objs[("ClusterRoleBinding", name)]
            self.assertEqual(binding["roleRef"]["name"], name)
            self.assertEqual(binding["subjects"], [{"kind": "ServiceAccount", "name": "nodesmith",
                                                    "namespace": "nodesmith"}])
            for rule in role["rules"]:
                for field in ("apiGroups", "resources", "verbs"):
                    self.assertNotIn("*", rule[field], (name, rule))
                self.assertFalse({"secrets", "configmaps"} & set(rule["resources"]), (name, rule))
        nodeclasses = roles["nodesmith-nodeclasses"]["rules"]
        self.assertEqual({(g, r) for rule in nodeclasses for g in rule["apiGroups"] for r in rule["resources"]},
                         {("karpenter.k8s.aws", r) for r in ("ec2nodeclasses", "awsnodetemplates",
                                                             "ec2nodeclasses/status", "awsnodetemplates/status")})
        # the simulated kubelet's rights only when asked for
        self.assertIn(("ClusterRole", "nodesmith-simulated-kubelet"),
                      render("provider.name=sim", "controller.simulateKubelet=true"))
        # CapacityBuffers' rights only with their gate on: read with their PodTemplates and Deployments (a
        # scalableRef), status written
        buffers = render("provider.name=sim", "settings.featureGates.capacityBuffer=true")[
            ("ClusterRole", "nodesmith-capacitybuffers")]["rules"]
        self.assertEqual({(g, r, v) for rule in buffers for g in rule["apiGroups"] for r in rule["resources"]
                          for v in rule["verbs"]},
                         {("autoscaling.x-k8s.io", "capacitybuffers", v) for v in ("get", "list", "watch")} |
                         {("autoscaling.x-k8s.io", "capacitybuffers/status", v) for v in ("patch", "update")} |
                         {("", "podtemplates", v) for v in ("get", "list", "watch")} |
                         {("apps", "deployments", v) for v in ("get", "list", "watch")})
        lease = objs[("Role", "nodesmith-lease")]
        self.assertEqual(lease["metadata"]["namespace"], "nodesmith")
        updates = [r for r in lease["rules"] if "update" in r["verbs"]]
        self.assertEqual(updates[0]["resourceNames"], ["karpenter-leader-election"])

    def test_crds_ship_with_the_chart_per_provider(self):
        """NodePool and NodeClaim for every provider (crds/); the node classes of the chosen provider only, each the
        kind its ClusterRole names, kept on uninstall; none with nodeClassCRDs.install=false (Karpenter's chart
        already installed them)."""
        common = ["nodeclaims.karpenter.sh", "nodepools.karpenter.sh"]
        expected = {"sim": ["awsnodetemplates.karpenter.k8s.aws", "ec2nodeclasses.karpenter.k8s.aws",
                            "simnodeclasses.nodesmith.io"],
                    "aws": ["awsnodetemplates.karpenter.k8s.aws", "ec2nodeclasses.karpenter.k8s.aws"],
                    "azure": ["aksnodeclasses.karpenter.azure.com"],
                    "alibaba": ["ecsnodeclasses.karpenter.k8s.alibabacloud"]}
        for provider, nodeclasses in expected.items():
            with self.subTest(provider=provider):
                objs = render("provider.name=" + provider, extra=("--include-crds",))
                crds = {name: o for (kind, name), o in objs.items() if kind == "CustomResourceDefinition"}
                self.assertEqual(sorted(crds), sorted(common + nodeclasses))
                for name in nodeclasses:
                    self.assertEqual(crds[name]["metadata"]["annotations"]["helm.sh/resource-policy"], "keep")
                rbac = {"%s.%s" % (r, g) for rule in objs[("ClusterRole", "nodesmith-nodeclasses")]["rules"]
                        for g in rule["apiGroups"] for r in rule["resources"] if "/" not in r}
                self.assertEqual(rbac, set(nodeclasses))
                objs = render("provider.name=" + provider, "nodeClassCRDs.install=false", extra=("--include-crds",))
                self.assertEqual(sorted(name for kind, name in objs if kind == "CustomResourceDefinition"), common)
        # the node-class CRDs render as written in the chart (helm's YAML round trip changes no fact)
        objs = render("provider.name=azure")
        with open(os.path.join(CHART, "nodeclass-crds", "karpenter.azure.com_aksnodeclasses.yaml")) as f:
            self.assertEqual(objs[("CustomResourceDefinition", "aksnodeclasses.karpenter.azure.com")]["spec"],
                             yaml.safe_load(f)["spec"])

    def test_capacitybuffer_crd_ships_with_its_feature_gate(self):
        """CapacityBuffer (autoscaling.x-k8s.io) with settings.featureGates.capacityBuffer only, as written in
        feature-crds/, kept on uninstall; not with featureCRDs.install=false (Karpenter's chart already installed it)."""
        name = ("CustomResourceDefinition", "capacitybuffers.autoscaling.x-k8s.io")
        self.assertNotIn(name, render("provider.name=sim"))
        crd = render("provider.name=sim", "settings.featureGates.capacityBuffer=true")[name]
        with open(os.path.join(CHART, "feature-crds", "autoscaling.x-k8s.io_capacitybuffers.yaml")) as f:
            self.assertEqual(crd["spec"], yaml.safe_load(f)["spec"])
        self.assertEqual(crd["metadata"]["annotations"]["helm.sh/resource-policy"], "keep")
        self.assertEqual(crd["metadata"]["labels"]["app.kubernetes.io/managed-by"], "Helm")
        self.assertNotIn(name, render("provider.name=sim", "settings.featureGates.capacityBuffer=true",
                                      "featureCRDs.install=false"))

if __name__ == "__main__":
    CHART = sys.argv.pop(1)
    HELM = subprocess.run(["bash", os.path.join(HERE, "build-helm.sh")], capture_output=True, text=True,
                          check=True).stdout.strip()
    unittest.main(verbosity=2)
