/* Malformed manifests of every kind: each must fail with NS_ERR_INVALID_CONFIG and a message that names the file,
 * the line, the object and the field. The expected messages are written out in full. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "manifest/loader.h"
#include "test_kinds.h"

static const struct {
    const char *file;
    const char *message; /* after FIXTURE_DIR "/bad/" */
} cases[] = {
    {"alias.yaml",
     "alias.yaml:6: YAML alias *missing refers to no earlier anchor"},
    {"apiversion.yaml",
     "apiversion.yaml:1: Deployment: apiVersion: \"apps/v1beta2\" is not supported for kind Deployment (supported: apps/v1)"},
    /* CapacityBuffer: the CRD's rules with its messages, and what nodesmith does not implement named by field. */
    {"buffer-both-refs.yaml",
     "buffer-both-refs.yaml:6: CapacityBuffer default/web: spec: You must define either PodTemplateRef or ScalableRef, but not both"},
    {"buffer-limits.yaml",
     "buffer-limits.yaml:7: CapacityBuffer default/web: spec.limits.cpu: invalid quantity \"lots\": no digits"},
    {"buffer-no-size.yaml",
     "buffer-no-size.yaml:6: CapacityBuffer default/web: spec: If podTemplateRef is set, replicas or limits must also be set"},
    {"buffer-no-template.yaml",
     "buffer-no-template.yaml:13: CapacityBuffer default/web: spec.podTemplateRef names PodTemplate default/web-chunk, which is not among the loaded manifests (a buffer's template is in its own namespace)"},
    {"buffer-replicas.yaml",
     "buffer-replicas.yaml:7: CapacityBuffer default/web: spec.replicas: -1 is out of range 0..2147483647"},
    {"buffer-percentage.yaml",
     "buffer-percentage.yaml:7: CapacityBuffer default/web: spec.percentage: -5 is out of range 0..2147483647"},
    {"buffer-scalable.yaml",
     "buffer-scalable.yaml:1: CapacityBuffer shop/web: spec.scalableRef names Deployment shop/web, which is not among the loaded manifests (a buffer's workload is in its own namespace)"},
    {"buffer-strategy.yaml",
     "buffer-strategy.yaml:6: CapacityBuffer default/web: spec.provisioningStrategy: \"buffer.x-k8s.io/ephemeral-capacity\" is not supported (nodesmith, like Karpenter, keeps only active buffers: \"buffer.x-k8s.io/active-capacity\")"},
    {"daemonset-selector.yaml",
     "daemonset-selector.yaml:6: DaemonSet default/agent: missing required field \"spec.selector\""},
    {"deployment-replicas.yaml",
     "deployment-replicas.yaml:6: Deployment default/web: spec.replicas: expected an integer, got the string \"three\""},
    {"deployment-selector.yaml",
     "deployment-selector.yaml:8: Deployment default/web: spec.selector: does not match the labels of spec.template.metadata.labels"},
    {"dup-key.yaml",
     "dup-key.yaml:6: Pod: duplicate field \"metadata.labels\" (first on line 5)"},
    {"duplicate.yaml",
     "duplicate.yaml:7: Pod default/web is defined twice (first at " FIXTURE_DIR "/bad/duplicate.yaml:1)"},
    {"job-mode.yaml",
     "job-mode.yaml:6: Job default/report: spec.completionMode: \"Parallel\" is not NonIndexed or Indexed"},
    {"label-key-invalid.yaml",
     "label-key-invalid.yaml:9: NodePool general: spec.template.metadata.labels: label key \"example.com/team/web\" is invalid: must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"},
    {"label-value-too-long.yaml",
     "label-value-too-long.yaml:7: Pod: metadata.labels.team: label value \"tttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttt\" is invalid: must be no more than 63 characters"},
    {"missing-kind.yaml",
     "missing-kind.yaml:1: object: missing required field \"kind\""},
    {"name-invalid.yaml",
     "name-invalid.yaml:4: NodePool: metadata.name: name \"General_Pool\" is invalid: must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"},
    {"namespace-invalid.yaml",
     "namespace-invalid.yaml:5: Pod: metadata.namespace: namespace \"Shop.Front\" is invalid: must be at most 63 lower case alphanumeric characters or '-', starting and ending with an alphanumeric character"},
    {"node-selector-value.yaml",
     "node-selector-value.yaml:7: Pod default/web: spec.nodeSelector.team: label value \"web team\" is invalid: must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"},
    {"node-taint.yaml",
     "node-taint.yaml:8: Node n1: spec.taints[0]: effect \"NoRun\" is not one of NoSchedule, PreferNoSchedule, NoExecute"},
    {"nodeclaim-no-reqs.yaml",
     "nodeclaim-no-reqs.yaml:6: NodeClaim c1: missing required field \"spec.requirements\""},
    {"nodeclass-kubelet.yaml",
     "nodeclass-kubelet.yaml:9: EC2NodeClass default: spec.kubelet.kubeReserved: \"gpu\" is not a supported reserved resource (cpu, memory, ephemeral-storage, pid)"},
    {"nodepool-budget.yaml",
     "nodepool-budget.yaml:13: NodePool general: spec.disruption.budgets[0]: 'schedule' must be set with 'duration'"},
    {"nodepool-minvalues.yaml",
     "nodepool-minvalues.yaml:10: NodePool general: spec.template.spec.requirements[0]: minValues 2 needs at least that many values, but 1 are listed (key node.kubernetes.io/instance-type)"},
    {"nodepool-no-ref.yaml",
     "nodepool-no-ref.yaml:8: NodePool general: missing required field \"spec.template.spec.nodeClassRef\""},
    {"nodepool-operator.yaml",
     "nodepool-operator.yaml:11: NodePool general: spec.template.spec.requirements[0]: operator \"Equals\" is not one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte"},
    {"nodepool-restricted.yaml",
     "nodepool-restricted.yaml:8: NodePool general: spec.template.spec.requirements[0]: label \"kubernetes.io/hostname\": label is restricted as it might interfere with the internal provisioning logic; use a well-known label (karpenter.sh/nodepool, topology.kubernetes.io/zone, topology.kubernetes.io/region, node.kubernetes.io/instance-type, kubernetes.io/arch, kubernetes.io/os, karpenter.sh/capacity-type, node.kubernetes.io/windows-build) or a custom label outside the karpenter.sh domain"},
    {"nodepool-restricted-domain.yaml",
     "nodepool-restricted-domain.yaml:8: NodePool general: spec.template.metadata.labels.sub.karpenter.sh/tier: label \"sub.karpenter.sh/tier\": label is restricted as it might interfere with the internal provisioning logic; use a well-known label (karpenter.sh/nodepool, topology.kubernetes.io/zone, topology.kubernetes.io/region, node.kubernetes.io/instance-type, kubernetes.io/arch, kubernetes.io/os, karpenter.sh/capacity-type, node.kubernetes.io/windows-build) or a custom label outside the karpenter.sh domain"},
    /* Karpenter's CEL rules on a static NodePool (spec.replicas), with its messages. */
    {"nodepool-static-limits.yaml",
     "nodepool-static-limits.yaml:13: NodePool fixed: spec.limits: only 'limits.nodes' is supported on static NodePools (spec.replicas is set; found limits.cpu)"},
    {"nodepool-static-negative.yaml",
     "nodepool-static-negative.yaml:6: NodePool fixed: spec.replicas: -1 is out of range 0..9223372036854775807"},
    {"nodepool-static-weight.yaml",
     "nodepool-static-weight.yaml:7: NodePool fixed: spec.weight: 'weight' is not supported on static NodePools (spec.replicas is set)"},
    {"nodepool-taints.yaml",
     "nodepool-taints.yaml:8: NodePool general: spec.template.spec: duplicate taint key/effect pair a:NoSchedule"},
    {"nodepool-v1beta1.yaml",
     "nodepool-v1beta1.yaml:12: NodePool beta: spec.disruption: consolidateAfter cannot be combined with consolidationPolicy=WhenUnderutilized"},
    {"not-a-map.yaml",
     "not-a-map.yaml:1: object: expected a Kubernetes object (a mapping), got a list"},
    {"pdb-both.yaml",
     "pdb-both.yaml:6: PodDisruptionBudget default/web: spec: minAvailable and maxUnavailable cannot both be set"},
    {"pdb-percent.yaml",
     "pdb-percent.yaml:6: PodDisruptionBudget default/web: spec.minAvailable: \"150%\" is not an integer or a percentage between 0% and 100%"},
    {"pod-gte-affinity.yaml",
     "pod-gte-affinity.yaml:13: Pod default/web: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]: operator \"Gte\" is not one of In, NotIn, Exists, DoesNotExist, Gt, Lt"},
    {"pod-no-containers.yaml",
     "pod-no-containers.yaml:6: Pod default/web: missing required field \"spec.containers\" (a pod needs at least one container)"},
    {"pod-quantity.yaml",
     "pod-quantity.yaml:10: Pod default/web: spec.containers[0].resources.requests.cpu: invalid quantity \"1x\": unknown suffix (expected one of n u m k M G T P E Ki Mi Gi Ti Pi Ei or an exponent like e3)"},
    {"pod-toleration.yaml",
     "pod-toleration.yaml:10: Pod shop/web: spec.tolerations[0]: value must be empty when operator is Exists"},
    {"pod-unknown-field.yaml",
     "pod-unknown-field.yaml:8: Pod default/web: unknown field \"spec.containers[0].resorces\""},
    {"provisioner-both.yaml",
     "provisioner-both.yaml:10: Provisioner old: spec: ttlSecondsAfterEmpty and consolidation.enabled are mutually exclusive (Karpenter rejects a Provisioner that sets both)"},
    {"provisioner-kubelet.yaml",
     "provisioner-kubelet.yaml:8: Provisioner old: spec.kubeletConfiguration: evictionSoft.memory.available needs a matching evictionSoftGracePeriod.memory.available"},
    {"provisioner-provider.yaml",
     "provisioner-provider.yaml:7: Provisioner old: spec.provider: inline provider configuration is not supported; move it to a node class and reference it with spec.providerRef"},
    {"podtemplate-no-template.yaml",
     "podtemplate-no-template.yaml:5: PodTemplate default/web-chunk: unknown field \"spec\""},
    {"replicaset-no-template.yaml",
     "replicaset-no-template.yaml:6: ReplicaSet default/cache: missing required field \"spec.template\""},
    {"service-selector-value.yaml",
     "service-selector-value.yaml:6: Service shop/web: spec.selector.app: label value \"web front\" is invalid: must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"},
    {"service-unknown-field.yaml",
     "service-unknown-field.yaml:7: Service default/web: unknown field \"spec.typ\""},
    {"statefulset-unknown.yaml",
     "statefulset-unknown.yaml:7: StatefulSet default/db: unknown field \"spec.servicename\""},
    {"syntax.yaml",
     "syntax.yaml:4: YAML syntax error: did not find expected ',' or '}' (while parsing a flow mapping, line 3)"},
    {"unresolved-ref.yaml",
     "unresolved-ref.yaml:1: NodePool orphan: nodeClassRef names EC2NodeClass nowhere in group karpenter.k8s.aws, which is not among the loaded manifests"},
    {"volumeattachment-field.yaml",
     "volumeattachment-field.yaml:6: VolumeAttachment csi-1: unknown field \"spec.node\""},
    {"volumeattachment-node.yaml",
     "volumeattachment-node.yaml:5: VolumeAttachment csi-1: missing required field \"spec.nodeName\""},
    {"volumeattachment-source.yaml",
     "volumeattachment-source.yaml:8: VolumeAttachment csi-1: spec.source: must specify exactly one of inlineVolumeSpec and persistentVolumeName"},
};

START_TEST(test_malformed)
{
    char path[1024], want[2048];
    snprintf(path, sizeof(path), "%s/bad/%s", FIXTURE_DIR, cases[_i].file);
    snprintf(want, sizeof(want), "%s/bad/%s", FIXTURE_DIR, cases[_i].message);
    ns_cluster *c = test_cluster_new();
    int rc = ns_manifest_load_file(c, path);
    if (rc == 0)
        rc = ns_cluster_resolve(c); /* cross-object errors surface here */
    ck_assert_int_eq(rc, NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(), want);
    ns_cluster_free(c);
}
END_TEST

/* Names are checked against Kubernetes' 253 characters (the message carries the whole name). */
START_TEST(test_name_too_long)
{
    ns_cluster *c = ns_cluster_new();
    ck_assert_int_eq(ns_manifest_load_file(c, FIXTURE_DIR "/bad/name-too-long.yaml"), NS_ERR_INVALID_CONFIG);
    const char *msg = ns_error_message();
    ck_assert_ptr_nonnull(strstr(msg, "/bad/name-too-long.yaml:4: Pod: metadata.name: name \"www"));
    ck_assert_ptr_nonnull(strstr(msg, "www\" is invalid: must be no more than 253 characters"));
    ns_cluster_free(c);
}
END_TEST

/* Tighter limits than Kubernetes' 253, each refused at decode with the reason: a NodePool or Provisioner name is a
 * label value of its NodeClaims (63, as Karpenter's NodeClaims would be refused beyond it), node claim and node class
 * names travel through the provider ABI (127). The longest accepted names load. */
static int load_named(const char *const kind_doc[2], size_t name_len)
{
    char name[300], doc[1024];
    memset(name, 'n', name_len);
    name[name_len] = '\0';
    snprintf(doc, sizeof(doc), "%s%s%s", kind_doc[0], name, kind_doc[1]);
    ns_cluster *c = test_cluster_new();
    int rc = ns_manifest_load_string(c, "names.yaml", doc, strlen(doc));
    ns_cluster_free(c);
    return rc;
}

/* Each document around its metadata.name, which is on line 4. */
static const char *const pool_doc[2] = {"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: ",
                                        "\nspec:\n  template:\n    spec:\n"
                                        "      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: d}\n      requirements: []\n"};
static const char *const provisioner_doc[2] = {"apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: ",
                                               "\nspec: {providerRef: {name: d}}\n"};
static const char *const claim_doc[2] = {"apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: ",
                                         "\nspec:\n  requirements: []\n"
                                         "  nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: d}\n"};
static const char *const nodeclass_doc[2] = {"apiVersion: nodesmith.io/v1\nkind: SimNodeClass\nmetadata:\n  name: ", "\n"};

START_TEST(test_name_limits_tighter_than_kubernetes)
{
    ck_assert_msg(load_named(pool_doc, 63) == NS_OK, "%s", ns_error_message());
    ck_assert_int_eq(load_named(pool_doc, 64), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "nnn: metadata.name: name is 64 characters, more than 63: the "
                                 "name is the karpenter.sh/nodepool label value of every NodeClaim and Node the pool "
                                 "creates, and a label value is at most 63 characters (Karpenter's NodeClaims for "
                                 "this pool would be refused by the API server)"));
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "names.yaml:4: NodePool nnnn"));
    ck_assert_msg(load_named(provisioner_doc, 63) == NS_OK, "%s", ns_error_message());
    ck_assert_int_eq(load_named(provisioner_doc, 200), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "name is 200 characters, more than 63: the name is the "
                                 "karpenter.sh/provisioner-name label value"));
    ck_assert_msg(load_named(claim_doc, 127) == NS_OK, "%s", ns_error_message());
    ck_assert_int_eq(load_named(claim_doc, 128), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "name is 128 characters, more than 127: nodesmith's provider ABI "
                                 "carries node claim names of at most 127 bytes"));
    ck_assert_msg(load_named(nodeclass_doc, 127) == NS_OK, "%s", ns_error_message());
    ck_assert_int_eq(load_named(nodeclass_doc, 253), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "names.yaml:4: SimNodeClass nnnn"));
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "name is 253 characters, more than 127: nodesmith's provider ABI "
                                 "carries node class names of at most 127 bytes (Kubernetes allows 253)"));
}
END_TEST

START_TEST(test_provisioner_rejection_is_not_partial)
{
    ns_cluster *c = test_cluster_new();
    ck_assert_int_eq(ns_manifest_load_file(c, FIXTURE_DIR "/bad/provisioner-both.yaml"), NS_ERR_INVALID_CONFIG);
    ck_assert_uint_eq(c->n_nodepools, 0);
    ns_cluster_free(c);
}
END_TEST

START_TEST(test_missing_file_and_directory)
{
    ns_cluster *c = test_cluster_new();
    ck_assert_int_eq(ns_manifest_load_path(c, FIXTURE_DIR "/no-such-dir"), NS_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "no-such-dir"));
    ck_assert_int_eq(ns_manifest_load_file(c, FIXTURE_DIR "/no-such.yaml"), NS_ERR_NOT_FOUND);
    ns_cluster_free(c);
}
END_TEST

int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    Suite *s = suite_create("manifest-errors");
    TCase *tc = tcase_create("errors");
    tcase_add_loop_test(tc, test_malformed, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, test_name_too_long);
    tcase_add_test(tc, test_name_limits_tighter_than_kubernetes);
    tcase_add_test(tc, test_provisioner_rejection_is_not_partial);
    tcase_add_test(tc, test_missing_file_and_directory);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
