/*
 * Volume topology (issue 9 rule 7), from Karpenter's VolumeTopology (pkg/controllers/provisioning/scheduling/
 * volumetopology.go) and its "Volume Topology Requirements" suite (pkg/controllers/provisioning/suite_test.go): a
 * bound PersistentVolume's node affinity and an unbound claim's StorageClass allowedTopologies decide the node's
 * zone; claims that cannot be used keep the pod off new nodes, and the other pods still schedule. The storage objects
 * and pods are read from manifests, so the decoders are exercised too.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "manifest/loader.h"
#include "sched_test_util.h"

/* The suite's storage class: WaitForFirstConsumer in z-b and z-c. */
static const char *const storage_class = "apiVersion: storage.k8s.io/v1\n"
                                         "kind: StorageClass\n"
                                         "metadata: {name: zonal}\n"
                                         "provisioner: ebs.csi.aws.com\n"
                                         "volumeBindingMode: WaitForFirstConsumer\n"
                                         "allowedTopologies:\n"
                                         "- matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [z-b]}]\n"
                                         "- matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [z-c]}]\n";

static void load(sched_env *e, const char *yaml)
{
    if (ns_manifest_load_string(e->c, "test.yaml", yaml, strlen(yaml)) != 0)
        ck_abort_msg("loading the manifest: %s", ns_error_message());
}

/* A pod of 1 cpu using claim `claim` (ephemeral: an ephemeral volume named `claim`), with an optional required
 * node-affinity expression (YAML flow mapping). */
static void load_pod(sched_env *e, const char *name, const char *claim, bool ephemeral, const char *expr)
{
    char yaml[2048], aff[512] = "", source[256];
    if (expr)
        snprintf(aff, sizeof(aff), "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                 "{nodeSelectorTerms: [{matchExpressions: [%s]}]}}}\n", expr);
    if (ephemeral)
        snprintf(source, sizeof(source), "ephemeral: {volumeClaimTemplate: {spec: {storageClassName: zonal}}}");
    else
        snprintf(source, sizeof(source), "persistentVolumeClaim: {claimName: %s}", claim);
    snprintf(yaml, sizeof(yaml),
             "apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n"
             "  containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n%s"
             "  volumes:\n  - name: %s\n    %s\n",
             name, aff, ephemeral ? claim : "data", source);
    load(e, yaml);
}

static void load_claim(sched_env *e, const char *name, const char *storage_class_name, const char *volume)
{
    char yaml[1024];
    snprintf(yaml, sizeof(yaml),
             "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: %s\n%s"
             "spec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 10Gi}}\n%s%s%s%s%s",
             name, volume ? "  annotations: {pv.kubernetes.io/bind-completed: 'yes'}\n" : "",
             storage_class_name ? "  storageClassName: '" : "", storage_class_name ? storage_class_name : "",
             storage_class_name ? "'\n" : "", volume ? "  volumeName: " : "", volume ? volume : "");
    load(e, yaml);
}

/* A PersistentVolume whose node affinity is one term with expression `expr`; source is "csi: {driver: x,
 * volumeHandle: y}", "local: {path: /mnt}" or the like. */
static void load_volume(sched_env *e, const char *name, const char *expr, const char *source)
{
    char yaml[1024];
    snprintf(yaml, sizeof(yaml),
             "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: %s}\nspec:\n  capacity: {storage: 10Gi}\n"
             "  accessModes: [ReadWriteOnce]\n  %s\n"
             "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [%s]}]}}\n",
             name, source, expr);
    load(e, yaml);
}

static void env(sched_env *e)
{
    sched_env_init(e, true);
    fx_pool(e->c, "default", 0, "");
    load(e, storage_class);
}

static void expect_zone(sched_env *e, const char *pod, const char *zone)
{
    const ns_sched_claim *c = fx_claim_of(e->c, &e->r, pod);
    ck_assert_msg(c, "pod %s was not placed: %s", pod, fx_reason(e->c, &e->r, pod));
    ck_assert_str_eq(fx_claim_zone(c), zone);
}

/* "should schedule to storage class zones if volume does not exist" (and its ephemeral-volume twin) */
START_TEST(storage_class_zones)
{
    sched_env e;
    env(&e);
    load_claim(&e, "claim", "zonal", NULL);
    load_pod(&e, "pod", "claim", false, "{key: topology.kubernetes.io/zone, operator: In, values: [z-a, z-c]}");
    load_pod(&e, "eph", "scratch", true, "{key: topology.kubernetes.io/zone, operator: In, values: [z-a, z-c]}");
    load_claim(&e, "eph-scratch", "zonal", NULL);
    load_pod(&e, "free", "claim", false, NULL);
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    expect_zone(&e, "pod", "z-c");
    expect_zone(&e, "eph", "z-c");
    /* z-a is the cheapest zone: without the class's topology the pod would go there */
    ck_assert_str_ne(fx_claim_zone(fx_claim_of(e.c, &e.r, "free")), "z-a");
    sched_env_free(&e);
}
END_TEST

/* "should schedule to volume zones if volume already bound", "should not schedule if volume zones are incompatible" */
START_TEST(bound_volume_zone)
{
    sched_env e;
    env(&e);
    load_volume(&e, "pv-c", "{key: topology.kubernetes.io/zone, operator: In, values: [z-c]}",
                "csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}");
    load_claim(&e, "claim", "zonal", "pv-c");
    load_pod(&e, "pod", "claim", false, NULL);
    load_pod(&e, "wrong-zone", "claim", false, "{key: topology.kubernetes.io/zone, operator: In, values: [z-a]}");
    sched_env_run(&e);
    expect_zone(&e, "pod", "z-c");
    ck_assert_ptr_null(fx_claim_of(e.c, &e.r, "wrong-zone"));
    ck_assert_uint_eq(e.r.n_unschedulable, 1);
    sched_env_free(&e);
}
END_TEST

/* "should not relax an added volume topology zone node-selector away": every required term keeps the volume's zone */
START_TEST(volume_zone_survives_relaxation)
{
    sched_env e;
    env(&e);
    load_volume(&e, "pv-c", "{key: topology.kubernetes.io/zone, operator: In, values: [z-c]}",
                "csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}");
    load_claim(&e, "claim", "zonal", "pv-c");
    load(&e, "apiVersion: v1\nkind: Pod\nmetadata: {name: pod}\nspec:\n"
             "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n"
             "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [\n"
             "    {matchExpressions: [{key: example.com/label, operator: In, values: [unsupported]}]},\n"
             "    {matchExpressions: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]}]}}}\n"
             "  volumes: [{name: data, persistentVolumeClaim: {claimName: claim}}]\n");
    sched_env_run(&e);
    expect_zone(&e, "pod", "z-c");
    sched_env_free(&e);
}
END_TEST

/* Local and hostPath volumes: their hostname term is dropped (a new node cannot take the name); a CSI volume's is
 * kept, and no new node can satisfy it. */
START_TEST(local_volume_hostname)
{
    sched_env e;
    env(&e);
    load_volume(&e, "pv-local", "{key: kubernetes.io/hostname, operator: In, values: [gone-node]}",
                "local: {path: /mnt/disk}");
    load_volume(&e, "pv-host", "{key: kubernetes.io/hostname, operator: In, values: [gone-node]}",
                "hostPath: {path: /data}");
    load_volume(&e, "pv-csi", "{key: kubernetes.io/hostname, operator: In, values: [gone-node]}",
                "csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}");
    load_claim(&e, "local", "zonal", "pv-local");
    load_claim(&e, "host", "zonal", "pv-host");
    load_claim(&e, "csi", "zonal", "pv-csi");
    load_pod(&e, "on-local", "local", false, NULL);
    load_pod(&e, "on-host", "host", false, NULL);
    load_pod(&e, "on-csi", "csi", false, NULL);
    sched_env_run(&e);
    ck_assert_ptr_nonnull(fx_claim_of(e.c, &e.r, "on-local"));
    ck_assert_ptr_nonnull(fx_claim_of(e.c, &e.r, "on-host"));
    ck_assert_ptr_null(fx_claim_of(e.c, &e.r, "on-csi"));
    sched_env_free(&e);
}
END_TEST

/* Karpenter's ValidatePersistentVolumeClaims: each of these keeps its pod off new nodes, and valid pods still
 * schedule; a bound claim needs no StorageClass. */
START_TEST(unusable_claims)
{
    sched_env e;
    env(&e);
    load(&e, "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: immediate}\n"
             "provisioner: ebs.csi.aws.com\nvolumeBindingMode: Immediate\n");
    load_volume(&e, "pv-a", "{key: topology.kubernetes.io/zone, operator: In, values: [z-b]}",
                "csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}");
    load_claim(&e, "no-class", "", NULL);
    load_claim(&e, "missing-class", "missing", NULL);
    load_claim(&e, "immediate", "immediate", NULL);
    load_claim(&e, "missing-volume", "zonal", "pv-missing");
    load_claim(&e, "bound-missing-class", "missing", "pv-a");
    load(&e, "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: not-bind-completed}\n"
             "spec: {storageClassName: zonal, volumeName: pv-a}\n");
    static const struct {
        const char *pod, *claim, *reason;
    } bad[] = {
        {"p-missing", "nope", "PersistentVolumeClaim default/nope not found"},
        {"p-no-class", "no-class", "names no StorageClass"},
        {"p-missing-class", "missing-class", "StorageClass missing of PersistentVolumeClaim default/missing-class"},
        {"p-immediate", "immediate", "binds Immediately"},
        {"p-missing-volume", "missing-volume", "PersistentVolume pv-missing of PersistentVolumeClaim"},
        {"p-not-bind-completed", "not-bind-completed", "pv.kubernetes.io/bind-completed"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        load_pod(&e, bad[i].pod, bad[i].claim, false, NULL);
    load_pod(&e, "valid", "bound-missing-class", false, NULL);
    sched_env_run(&e);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *why = fx_reason(e.c, &e.r, bad[i].pod);
        ck_assert_msg(why && strstr(why, bad[i].reason), "pod %s: reason %s, expected %s", bad[i].pod,
                      why ? why : "(placed)", bad[i].reason);
    }
    expect_zone(&e, "valid", "z-b");
    sched_env_free(&e);
}
END_TEST

/* Storage manifests are checked as every manifest kind: an unknown field is refused with its path. */
START_TEST(storage_manifest_errors)
{
    ns_cluster *c = ns_cluster_new();
    static const char bad[] = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: x}\n"
                              "spec: {storageClass: zonal}\n";
    ck_assert_int_eq(ns_manifest_load_string(c, "bad.yaml", bad, strlen(bad)), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "spec.storageClass"));
    static const char mode[] = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: x}\n"
                               "provisioner: p\nvolumeBindingMode: Later\n";
    ck_assert_int_eq(ns_manifest_load_string(c, "mode.yaml", mode, strlen(mode)), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "volumeBindingMode"));
    ck_assert_uint_eq(c->n_pvcs + c->n_storage_classes, 0);
    ns_cluster_free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-volumes");
    TCase *tc = tcase_create("volumes");
    tcase_add_test(tc, storage_class_zones);
    tcase_add_test(tc, bound_volume_zone);
    tcase_add_test(tc, volume_zone_survives_relaxation);
    tcase_add_test(tc, local_volume_hostname);
    tcase_add_test(tc, unusable_claims);
    tcase_add_test(tc, storage_manifest_errors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
