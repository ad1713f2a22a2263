#!/usr/bin/python3
"""The CRDs nodesmith ships (charts/nodesmith/crds; nodeclass-crds, which the chart installs per provider; feature-crds,
which it installs per feature gate): checked against the published CRDs of Karpenter (v1.14.0, CapacityBuffer among
them), its AWS provider (v1.14.0, and v0.32.0 for the AWSNodeTemplate of the Provisioner era) and its Azure provider
(v1.14.2), fetched from the Go module proxy, never copied into the tree, field by field; then applied to a real control plane (test/kube) where the API server must default, refuse and print
objects as those CRDs make it do. The Alibaba Cloud provider's module is one the proxy does not serve
("This module version is not available"), so its ECSNodeClass is checked on the API server only, against the
messages and defaults of its published chart (cloudpilot-ai/karpenter-provider-alibabacloud,
charts/karpenter/crds).

Usage: test_chart_crds.py CHART_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kube"))
sys.path.insert(0, os.path.join(HERE, "..", "controller"))
import kubebed  # noqa: E402
import test_controller_e2e as e2e  # noqa: E402

CHART = None
PLANE = None
# file: (Go module, version) publishing the same CRD in its pkg/apis/crds.
UPSTREAM = {"crds/karpenter.sh_nodepools.yaml": ("sigs.k8s.io/karpenter", "v1.14.0"),
            "crds/karpenter.sh_nodeclaims.yaml": ("sigs.k8s.io/karpenter", "v1.14.0"),
            "nodeclass-crds/karpenter.k8s.aws_ec2nodeclasses.yaml": ("github.com/aws/karpenter-provider-aws", "v1.14.0"),
            "nodeclass-crds/karpenter.k8s.aws_awsnodetemplates.yaml": ("github.com/aws/karpenter", "v0.32.0"),
            "nodeclass-crds/karpenter.azure.com_aksnodeclasses.yaml": ("github.com/Azure/karpenter-provider-azure",
                                                                       "v1.14.2"),
            "feature-crds/autoscaling.x-k8s.io_capacitybuffers.yaml": ("sigs.k8s.io/karpenter", "v1.14.0")}
# Where nodesmith's CRD deliberately takes more than the published one: the provider reads these
# (docs/providers/azure.md marks them as extensions). Only a superset of the published enum is allowed there.
ENUM_EXTENSIONS = {("nodeclass-crds/karpenter.azure.com_aksnodeclasses.yaml", ".spec.imageFamily"):
                   {"Windows2019", "Windows2022"}}
SCHEMA_KEYS = ("type", "default", "enum", "pattern", "format", "minimum", "maximum", "minLength", "maxLength",
               "minItems", "maxItems", "maxProperties", "required", "x-kubernetes-int-or-string")


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def upstream(name):
    module, version = UPSTREAM[name]
    d = subprocess.run(["bash", os.path.join(HERE, "..", "kube", "fetch-crds.sh"), module, version],
                       capture_output=True, text=True, check=True).stdout.strip()
    return load(os.path.join(d, os.path.basename(name)))


def crd_files():
    """Every CRD the chart ships, relative to the chart."""
    return ["%s/%s" % (d, f) for d in ("crds", "nodeclass-crds", "feature-crds") for f in sorted(os.listdir(os.path.join(CHART, d)))]


def schema_facts(schema, path="", out=None):
    """Every property path with its constraints, and every CEL rule's message at its path."""
    out = {} if out is None else out
    facts = {k: schema[k] for k in SCHEMA_KEYS if k in schema}
    for k in ("required", "enum"):
        if k in facts:
            facts[k] = sorted(facts[k])
    if schema.get("type") in ("array", "object"):
        # The API server checks string constraints on strings only: on an array or object they check nothing.
        for k in ("pattern", "maxLength", "minLength"):
            facts.pop(k, None)
    out[path] = facts
    for rule in schema.get("x-kubernetes-validations", []):
        out["%s CEL %s" % (path, rule["message"])] = {"rule": rule["rule"]}
    for name, child in schema.get("properties", {}).items():
        schema_facts(child, path + "." + name, out)
    if "items" in schema:
        schema_facts(schema["items"], path + "[]", out)
    if isinstance(schema.get("additionalProperties"), dict):
        schema_facts(schema["additionalProperties"], path + "{}", out)
    return out


class Test1SameFieldsAsKarpenter(unittest.TestCase):
    maxDiff = None

    """Each CRD has every field, constraint, default, CEL rule (same message), printer column, name, category and
    subresource of Karpenter's published one. Descriptions may differ; nodesmith writes its own."""

    def test_every_upstream_fact_is_in_ours(self):
        for name in UPSTREAM:
            with self.subTest(crd=name):
                ours, theirs = load(os.path.join(CHART, name)), upstream(name)
                self.assertEqual(ours["metadata"]["name"], theirs["metadata"]["name"])
                self.assertEqual((ours["spec"]["group"], ours["spec"]["scope"]),
                                 (theirs["spec"]["group"], theirs["spec"]["scope"]))
                self.assertEqual(ours["spec"]["names"], theirs["spec"]["names"])
                ov, tv = ours["spec"]["versions"], theirs["spec"]["versions"]
                self.assertEqual([v["name"] for v in ov], [v["name"] for v in tv])
                for o, t in zip(ov, tv):
                    self.assertEqual(o.get("subresources"), t.get("subresources"))
                    self.assertEqual((o["served"], o["storage"], o.get("deprecated"), o.get("deprecationWarning")),
                                     (t["served"], t["storage"], t.get("deprecated"), t.get("deprecationWarning")))
                    cols = [(c["name"], c["type"], c["jsonPath"], c.get("priority", 0))
                            for c in o.get("additionalPrinterColumns", [])]
                    self.assertEqual(cols, [(c["name"], c["type"], c["jsonPath"], c.get("priority", 0))
                                            for c in t.get("additionalPrinterColumns", [])])
                    mine = schema_facts(o["schema"]["openAPIV3Schema"])
                    missing = []
                    for path, facts in schema_facts(t["schema"]["openAPIV3Schema"]).items():
                        if path not in mine:
                            missing.append("%s: absent" % path)
                        elif (name, path) in ENUM_EXTENSIONS:
                            extra = set(mine[path].get("enum", ())) - set(facts["enum"])
                            if extra != ENUM_EXTENSIONS[(name, path)] or \
                                    dict(mine[path], enum=None) != dict(facts, enum=None):
                                missing.append("%s: ours %s, published %s plus %s" % (
                                    path, mine[path], facts, sorted(ENUM_EXTENSIONS[(name, path)])))
                        elif " CEL " not in path and mine[path] != facts:
                            missing.append("%s: ours %s, Karpenter's %s" % (path, mine[path], facts))
                        elif " CEL " in path and mine[path]["rule"].replace(" ", "") != facts["rule"].replace(" ", ""):
                            missing.append("%s: rule %r, Karpenter's %r" % (path, mine[path]["rule"], facts["rule"]))
                    self.assertEqual(missing, [], "%s differs from Karpenter's" % name)


def kubectl(*args, stdin=None):
    return e2e.kubectl(*args, stdin=stdin)


def refused(manifest, *, update_of=None):
    """The API server's answer to applying MANIFEST (after UPDATE_OF, when given) as a dry run: its error text, or
    None when it accepted it."""
    if update_of:
        kubectl("apply", "-f", "-", stdin=update_of)
    r = subprocess.run([e2e.KUBECTL, "--kubeconfig", e2e.BED.kubeconfig, "apply", "--dry-run=server", "-f", "-"],
                       input=manifest, capture_output=True, text=True, timeout=60)
    return None if r.returncode == 0 else r.stderr


NODEPOOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: %(name)s}
spec:
  template:
    metadata: {labels: %(labels)s}
    spec:
      nodeClassRef: {group: %(group)s, kind: SimNodeClass, name: default}
      requirements: %(requirements)s
  %(extra)s
"""


def nodepool(name="valid", labels="{team: a}", group="nodesmith.io",
             requirements='[{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]', extra=""):
    return NODEPOOL % {"name": name, "labels": labels, "group": group, "requirements": requirements, "extra": extra}


EC2NODECLASS = """
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: %(name)s}
spec:
  role: KarpenterNodeRole
  amiSelectorTerms: [{alias: %(alias)s}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  %(extra)s
"""

AKSNODECLASS = """
apiVersion: karpenter.azure.com/%(version)s
kind: AKSNodeClass
metadata: {name: %(name)s}
spec: %(spec)s
"""

ECSNODECLASS = """
apiVersion: karpenter.k8s.alibabacloud/v1alpha1
kind: ECSNodeClass
metadata: {name: %(name)s}
spec:
  vSwitchSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  imageSelectorTerms: [{alias: %(alias)s}]
  %(extra)s
"""


def aks(spec, name="bad"):
    return AKSNODECLASS % {"version": "v1beta1", "name": name, "spec": spec}


def ecs(extra="", alias="AlibabaCloudLinux3", name="bad"):
    return ECSNODECLASS % {"name": name, "alias": alias, "extra": extra}


NODECLAIM = """
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: handmade
  labels: {karpenter.sh/nodepool: valid, node.kubernetes.io/instance-type: m5.large,
           karpenter.sh/capacity-type: spot, topology.kubernetes.io/zone: us-west-2a}
spec:
  nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}
  requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [%(type)s]}]
"""


class Test2OnTheApiServer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for f in crd_files():
            kubectl("apply", "--server-side", "-f", os.path.join(CHART, f))
        for f in crd_files():
            kubectl("wait", "--for", "condition=Established", "--timeout=60s", "crd/" + load(
                os.path.join(CHART, f))["metadata"]["name"])

    def test_defaults_are_karpenters(self):
        kubectl("apply", "-f", "-", stdin=nodepool())
        spec = e2e.kget("nodepool", "valid")["spec"]
        self.assertEqual(spec["template"]["spec"]["expireAfter"], "720h")
        self.assertEqual(spec["disruption"], {"consolidateAfter": "0s", "budgets": [{"nodes": "10%"}],
                                              "consolidationPolicy": "WhenEmptyOrUnderutilized"})
        kubectl("apply", "-f", "-", stdin=EC2NODECLASS % {"name": "defaults", "alias": "al2023@latest", "extra": ""})
        self.assertEqual(e2e.kget("ec2nodeclass", "defaults")["spec"]["metadataOptions"],
                         {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled", "httpPutResponseHopLimit": 1,
                          "httpTokens": "required"})
        kubectl("apply", "-f", "-", stdin="---\n{apiVersion: nodesmith.io/v1, kind: SimNodeClass, metadata: {name: "
                "default}, spec: {}}")
        self.assertEqual(e2e.kget("simnodeclass", "default")["spec"],
                         {"imageFamily": "Linux", "imageVersion": "v1", "ephemeralStorage": "20Gi"})
        kubectl("apply", "-f", "-", stdin=AKSNODECLASS % {"version": "v1beta1", "name": "default", "spec": "{kubelet: {}}"})
        self.assertEqual(e2e.kget("aksnodeclass", "default")["spec"],
                         {"imageFamily": "Ubuntu", "osDiskSizeGB": 128,
                          "kubelet": {"cpuManagerPolicy": "none", "cpuCFSQuota": True, "cpuCFSQuotaPeriod": "100ms",
                                      "topologyManagerPolicy": "none", "containerLogMaxSize": "50Mi",
                                      "containerLogMaxFiles": 5}})
        kubectl("apply", "-f", "-", stdin=ECSNODECLASS % {"name": "default", "alias": "AlibabaCloudLinux3",
                                                          "extra": "systemDisk: {}\n  dataDisks: [{}]"})
        spec = e2e.kget("ecsnodeclass", "default")["spec"]
        self.assertEqual((spec["vSwitchSelectionPolicy"], spec["formatDataDisk"], spec["passwordInherit"],
                          spec["systemDisk"], spec["dataDisks"]),
                         ("cheapest", False, False,
                          {"categories": ["cloud", "cloud_efficiency", "cloud_ssd", "cloud_essd", "cloud_auto",
                                          "cloud_essd_entry"], "performanceLevel": "PL0"}, [{"volumeSize": "20Gi"}]))
        kubectl("apply", "-f", "-", stdin="---\n{apiVersion: karpenter.k8s.aws/v1alpha1, kind: AWSNodeTemplate, "
                "metadata: {name: legacy}, spec: {subnetSelector: {karpenter.sh/discovery: demo}, "
                "securityGroupSelector: {karpenter.sh/discovery: demo}, instanceProfile: KarpenterNodeInstanceProfile}}")
        self.assertEqual(e2e.kget("awsnodetemplate", "legacy")["spec"]["instanceProfile"], "KarpenterNodeInstanceProfile")

    def test_aksnodeclass_v1alpha2_is_served_deprecated_and_stored_as_v1beta1(self):
        r = subprocess.run([e2e.KUBECTL, "--kubeconfig", e2e.BED.kubeconfig, "apply", "-f", "-"],
                           input=AKSNODECLASS % {"version": "v1alpha2", "name": "old", "spec": "{imageFamily: AzureLinux}"},
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("use v1beta1.AKSNodeClass instead", r.stderr)
        obj = e2e.kget("aksnodeclass", "old")
        self.assertEqual((obj["apiVersion"], obj["spec"]["imageFamily"]), ("karpenter.azure.com/v1beta1", "AzureLinux"))

    def test_invalid_objects_are_refused_with_karpenters_messages(self):
        cases = [
            (nodepool(labels='{karpenter.sh/nodepool: x}'), 'label "karpenter.sh/nodepool" is restricted'),
            (nodepool(labels='{kubernetes.io/hostname: x}'), 'label "kubernetes.io/hostname" is restricted'),
            (nodepool(labels='{sub.karpenter.sh/x: yes-really}'), 'label domain "karpenter.sh" is restricted'),
            (nodepool(requirements="[{key: a, operator: In}]"),
             "requirements with operator 'In' must have a value defined"),
            (nodepool(requirements="[{key: a, operator: Gt, values: ['1', '2']}]"),
             "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value"),
            (nodepool(requirements="[{key: a, operator: In, values: [a1, a2], minValues: 3}]"),
             "requirements with 'minValues' must have at least that many values specified in the 'values' field"),
            (nodepool(requirements="[{key: a, operator: Near, values: [x]}]"), 'Unsupported value: "Near"'),
            (nodepool(group="a/b"), "spec.template.spec.nodeClassRef.group in body should match"),
            (nodepool(group="''"), "group may not be empty"),
            (nodepool(extra="disruption: {consolidateAfter: 1s, budgets: [{nodes: '1', schedule: '@daily'}]}"),
             "'schedule' must be set with 'duration'"),
            (nodepool(extra="disruption: {consolidateAfter: soon}"), "spec.disruption.consolidateAfter in body"),
            (nodepool(extra="disruption: {consolidateAfter: 1s, consolidationPolicy: Always}"),
             'Unsupported value: "Always"'),
            (nodepool(extra="weight: 101"), "should be less than or equal to 100"),
            (nodepool(name="static", extra="replicas: 2\n  weight: 3"), "'weight' is not supported on static NodePools"),
            (nodepool(name="static", extra="replicas: 2\n  limits: {cpu: '4'}"),
             "only 'limits.nodes' is supported on static NodePools"),
            (EC2NODECLASS % {"name": "both", "alias": "al2023@latest", "extra": "instanceProfile: p"},
             "must specify exactly one of ['role', 'instanceProfile']"),
            (EC2NODECLASS % {"name": "win", "alias": "windows2022@v1", "extra": ""},
             "windows families may only specify version 'latest'"),
            (EC2NODECLASS % {"name": "fam", "alias": "al2@latest", "extra": "amiFamily: Bottlerocket"},
             "if set, amiFamily must be 'AL2' or 'Custom' when using an AL2 alias"),
            (EC2NODECLASS % {"name": "tag", "alias": "al2023@latest", "extra": "tags: {karpenter.sh/nodepool: x}"},
             "tag contains a restricted tag matching karpenter.sh/nodepool"),
            (EC2NODECLASS % {"name": "kub", "alias": "al2023@latest",
                             "extra": "kubelet: {imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 60}"},
             "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent"),
            ("---\n{apiVersion: nodesmith.io/v1, kind: SimNodeClass, metadata: {name: long}, spec: {imageVersion: '%s'}}"
             % ("v" * 65), "may not be more than 64"),
            ("---\n{apiVersion: nodesmith.io/v1, kind: SimNodeClass, metadata: {name: fam}, spec: {imageFamily: Plan9}}",
             'Unsupported value: "Plan9"'),
            (aks("{fipsMode: FIPS, imageFamily: Ubuntu2204}"), "FIPS is not yet supported for Ubuntu2204 or Ubuntu2404"),
            (aks("{linuxOSConfig: {swapFileSize: 1Gi}}"),
             "kubelet.failSwapOn must be set to false when linuxOSConfig.swapFileSize is specified"),
            (aks("{tags: {'a<b': x}}"), "tags keys must not contain '<', '>', '%', '&', or '?'"),
            (aks("{maxPods: 5}"), "should be greater than or equal to 10"),
            (aks("{imageFamily: Plan9}"), 'Unsupported value: "Plan9"'),
            (aks("{linuxOSConfig: {sysctls: {netIPv4IPLocalPortRange: '80 40000'}}}"),
             "netIPv4IPLocalPortRange first port must be in [1024, 60999]"),
            (aks("{kubelet: {imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 60}}"),
             "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent"),
            (ecs(alias="Ubuntu"), "family is not supported, must be one of the following: "
                                  "'AlibabaCloudLinux3,ContainerOS'"),
            (ecs("passwordInherit: true\n  password: Secret-Pass1"),
             "password cannot be set when passwordInherit is true"),
            (ecs("tags: {'ecs:ecs-cluster-name': x}"), "tag contains a restricted tag matching ecs:ecs-cluster-name"),
            (ecs("systemDisk: {size: 10}"), "size invalid"),
            (ecs("vSwitchSelectionPolicy: random"), 'Unsupported value: "random"'),
            (ecs("kubeletConfiguration: {evictionSoft: {memory.available: 5%}, "
                 "evictionSoftGracePeriod: {nodefs.available: 1m}}"),
             "evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod"),
            (ECSNODECLASS.replace("[{tags: {karpenter.sh/discovery: demo}}]\n  securityGroupSelectorTerms", "[]\n  "
                                  "securityGroupSelectorTerms") % {"name": "bad", "alias": "ContainerOS", "extra": ""},
             "vSwitchSelectorTerms cannot be empty"),
        ]
        for manifest, message in cases:
            with self.subTest(message=message):
                err = refused(manifest)
                self.assertIsNotNone(err, "accepted:\n" + manifest)
                self.assertIn(message, err)
        # a valid one of each passes the same dry run, so the refusals above are the rules', not the harness's
        self.assertIsNone(refused(nodepool(name="fine")))
        self.assertIsNone(refused(EC2NODECLASS % {"name": "fine", "alias": "windows2022@latest", "extra": ""}))
        # nodesmith's extensions, which the Azure provider reads, pass
        self.assertIsNone(refused(aks("{imageFamily: Windows2022, imageID: /CommunityGalleries/x/images/y/versions/1, "
                                      "userData: echo}", name="fine")))
        self.assertIsNone(refused(ecs("systemDisk: {size: 40}\n  passwordInherit: true", name="fine")))

    def test_transition_rules_compare_with_the_stored_object(self):
        kubectl("apply", "-f", "-", stdin=nodepool(name="moving"))
        err = refused(nodepool(name="moving", group="karpenter.k8s.aws"))
        self.assertIn("nodeClassRef.group is immutable", err or "")
        err = refused(nodepool(name="moving", extra="replicas: 1"))
        self.assertIn("Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) "
                      "provisioning modes", err or "")
        kubectl("apply", "-f", "-", stdin=NODECLAIM % {"type": "m5.large"})
        err = refused(NODECLAIM % {"type": "m5.xlarge"})
        self.assertIn("spec is immutable", err or "")

    def test_scale_subresource_moves_a_static_pool(self):
        kubectl("apply", "-f", "-", stdin=nodepool(name="fixed", extra="replicas: 1"))
        kubectl("scale", "nodepool", "fixed", "--replicas=3")
        self.assertEqual(e2e.kget("nodepool", "fixed")["spec"]["replicas"], 3)
        scale = json.loads(kubectl("get", "--raw", "/apis/karpenter.sh/v1/nodepools/fixed/scale"))
        self.assertEqual(scale["spec"]["replicas"], 3)

    def test_printer_columns_and_category(self):
        kubectl("apply", "-f", "-", stdin=nodepool())
        kubectl("apply", "-f", "-", stdin=NODECLAIM % {"type": "m5.large"})
        now = "2026-01-01T00:00:00Z"
        kubectl("patch", "nodeclaim", "handmade", "--subresource=status", "--type=merge", "-p", json.dumps(
            {"status": {"nodeName": "node-a", "providerID": "sim:///us-west-2a/i-1", "imageID": "sim-linux-v1",
                        "conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "",
                                        "lastTransitionTime": now}]}}))
        kubectl("patch", "nodepool", "valid", "--subresource=status", "--type=merge", "-p", json.dumps(
            {"status": {"nodes": 1, "resources": {"cpu": "2", "memory": "8Gi"},
                        "conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "ready",
                                        "lastTransitionTime": now}]}}))
        table = kubectl("get", "nodepools,nodeclaims")
        print("# " + table.replace("\n", "\n# "))
        self.assertRegex(table, r"NAME\s+NODECLASS\s+NODES\s+READY\s+AGE\n")
        self.assertRegex(table, r"nodepool.karpenter.sh/valid\s+default\s+1\s+True\s+")
        self.assertRegex(table, r"NAME\s+TYPE\s+CAPACITY\s+ZONE\s+NODE\s+READY\s+AGE\n")
        self.assertRegex(table, r"nodeclaim.karpenter.sh/handmade\s+m5\.large\s+spot\s+us-west-2a\s+node-a\s+True\s+")
        wide = kubectl("get", "nodepools,nodeclaims", "-o", "wide")
        self.assertRegex(wide, r"NAME\s+NODECLASS\s+NODES\s+READY\s+AGE\s+WEIGHT\s+CPU\s+MEMORY\n")
        self.assertRegex(wide, r"valid\s+default\s+1\s+True\s+\S+\s+2\s+8Gi\n")
        self.assertRegex(wide, r"handmade\s+m5\.large\s+spot\s+us-west-2a\s+node-a\s+True\s+\S+\s+sim-linux-v1\s+"
                               r"sim:///us-west-2a/i-1\s+valid\s+default\s+")
        # `kubectl get karpenter` lists every kind of the category
        kinds = {line.split("/")[0] for line in kubectl("get", "karpenter", "-o", "name").split()}
        self.assertTrue({"nodepool.karpenter.sh", "nodeclaim.karpenter.sh", "simnodeclass.nodesmith.io",
                         "ec2nodeclass.karpenter.k8s.aws", "awsnodetemplate.karpenter.k8s.aws",
                         "aksnodeclass.karpenter.azure.com", "ecsnodeclass.karpenter.k8s.alibabacloud"} <= kinds, kinds)
        # the AKSNodeClass columns, its image family in the wide view
        self.assertRegex(kubectl("get", "aksnodeclasses"), r"NAME\s+READY\s+AGE\n")
        self.assertRegex(kubectl("get", "aksnodeclasses", "-o", "wide"), r"NAME\s+READY\s+AGE\s+IMAGEFAMILY\n"
                                                                         r"default\s+\S*\s+\S+\s+Ubuntu\n")

    def test_capacitybuffer_as_karpenters_crd_makes_it(self):
        """The buffer's strategy defaulted, its two CEL rules refusing with the API's messages, its status written
        through the subresource and shown in its columns, under its short name and category."""
        template = ("---\n{apiVersion: v1, kind: PodTemplate, metadata: {name: chunk, namespace: default}, template: "
                    "{spec: {containers: [{name: pause, image: pause}]}}}")
        kubectl("apply", "-f", "-", stdin=template)
        buffer = ("---\n{apiVersion: autoscaling.x-k8s.io/v1beta1, kind: CapacityBuffer, metadata: {name: %s, "
                  "namespace: default}, spec: %s}")
        kubectl("apply", "-f", "-", stdin=buffer % ("web", "{podTemplateRef: {name: chunk}, replicas: 2}"))
        self.assertEqual(e2e.kget("cb", "web", "-n", "default")["spec"]["provisioningStrategy"],
                         "buffer.x-k8s.io/active-capacity")
        kubectl("apply", "-f", "-", stdin=buffer % ("scaled", "{scalableRef: {apiGroup: apps, kind: Deployment, "
                                                              "name: web}, percentage: 20}"))
        for spec, message in (("{podTemplateRef: {name: chunk}}",
                               "If podTemplateRef is set, replicas or limits must also be set"),
                              ("{podTemplateRef: {name: chunk}, replicas: 1, scalableRef: {kind: Deployment, "
                               "name: web}}", "You must define either PodTemplateRef or ScalableRef, but not both"),
                              ("{scalableRef: {kind: Deployment, name: web}, percentage: -1}",
                               "should be greater than or equal to 0"),
                              ("{podTemplateRef: {name: chunk}, limits: {cpu: lots}}", "spec.limits.cpu")):
            with self.subTest(spec=spec):
                self.assertIn(message, refused(buffer % ("bad", spec)) or "accepted")
        kubectl("patch", "cb", "web", "-n", "default", "--subresource=status", "--type=merge", "-p", json.dumps(
            {"status": {"replicas": 2, "provisioningStrategy": "buffer.x-k8s.io/active-capacity",
                        "podTemplateRef": {"name": "chunk"},
                        "conditions": [{"type": "ReadyForProvisioning", "status": "True", "reason": "Resolved",
                                        "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}))
        table = kubectl("get", "cb", "-n", "default")
        self.assertRegex(table, r"NAME\s+STRATEGY\s+PODTEMPLATE\s+REPLICAS\s+CONDITIONSTYPE\s+CONDITIONSSTATUS\s+"
                                r"CONDITIONSREASON\s+AGE\n")
        self.assertRegex(table, r"\nweb\s+buffer.x-k8s.io/active-capacity\s+chunk\s+2\s+ReadyForProvisioning\s+True\s+"
                                r"Resolved\s+")
        self.assertIn("capacitybuffer.autoscaling.x-k8s.io/scaled",
                      kubectl("get", "autoscaling", "-n", "default", "-o", "name").split())


def setUpModule():
    global PLANE
    e2e.STATE_DIR = tempfile.TemporaryDirectory(prefix="nodesmith-sim-cloud-")
    PLANE = kubebed.plane()
    e2e.BED = PLANE.__enter__()


def tearDownModule():
    PLANE.__exit__(None, None, None)
    e2e.STATE_DIR.cleanup()


if __name__ == "__main__":
    CHART = sys.argv.pop(1)
    unittest.main(verbosity=2)
