/* CapacityBuffer chunks from manifests (ns_buffer_chunks, ns_cluster_buffer_shape): Karpenter's computeReplicas table
 * for a podTemplateRef and for a scalableRef's percentage
 * (pkg/controllers/capacitybuffer suite_test.go, "should resolve buffer replicas from replicas, percentage, and
 * limits"), and its calculateLimitReplicas rules (a limit on a resource the template does not request caps nothing;
 * the least of several limits wins). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"
#include "manifest/loader.h"
#include "model/cluster.h"

/* The chunks a buffer of the given spec lines asks for, after the manifests `objects` (which end with "---"). */
static int64_t chunks_of(const char *objects, const char *spec)
{
    char doc[4096];
    snprintf(doc, sizeof(doc),
             "%s\napiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\nmetadata: {name: cb}\nspec:\n%s",
             objects, spec);
    ns_cluster *c = ns_cluster_new();
    ck_assert_msg(ns_manifest_load_string(c, "t.yaml", doc, strlen(doc)) == 0, "%s", ns_error_message());
    ck_assert_msg(ns_cluster_resolve(c) == 0, "%s", ns_error_message());
    ck_assert_uint_eq(c->n_buffers, 1);
    int32_t replicas = -1;
    const ns_pod *shape = ns_cluster_buffer_shape(c, c->buffers[0], &replicas);
    ck_assert_ptr_nonnull(shape);
    ck_assert_int_eq(ns_res_get(&shape->requests, "cpu"), 1000);
    int64_t n = ns_buffer_chunks(c->buffers[0], shape, replicas);
    ns_cluster_free(c);
    return n;
}

#define CONTAINER "      - {name: c, image: i, resources: {requests: {cpu: \"1\", memory: 1Gi}}}\n"

/* A 1-cpu, 1Gi template and one buffer naming it with the given spec lines. */
static int64_t chunks(const char *spec)
{
    char lines[1024];
    snprintf(lines, sizeof(lines), "  podTemplateRef: {name: pt}\n%s", spec);
    return chunks_of("apiVersion: v1\nkind: PodTemplate\nmetadata: {name: pt}\ntemplate:\n  spec:\n    containers:\n"
                     CONTAINER "---",
                     lines);
}

/* A workload of `kind` with `replicas` 1-cpu pods and one buffer whose scalableRef names it, with the spec lines. */
static int64_t scaled(const char *kind, int replicas, const char *spec)
{
    char objects[1024], lines[1024];
    snprintf(objects, sizeof(objects),
             "apiVersion: apps/v1\nkind: %s\nmetadata: {name: web}\nspec:\n  replicas: %d\n"
             "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n"
             "      containers:\n  " CONTAINER "---",
             kind, replicas);
    snprintf(lines, sizeof(lines), "  scalableRef: {apiGroup: apps, kind: %s, name: web}\n%s", kind, spec);
    return chunks_of(objects, lines);
}

START_TEST(test_karpenter_table)
{
    ck_assert_int_eq(chunks("  replicas: 7\n"), 7);                          /* fixed replicas only */
    ck_assert_int_eq(chunks("  replicas: 10\n  limits: {cpu: \"3\"}\n"), 3); /* replicas capped by binding limit */
    ck_assert_int_eq(chunks("  replicas: 3\n  limits: {cpu: \"10\"}\n"), 3); /* non-binding limit does not reduce */
    ck_assert_int_eq(chunks("  limits: {cpu: \"5\"}\n"), 5);                 /* limits only */
}
END_TEST

START_TEST(test_limit_rules)
{
    /* floor(limit / request), the least over the limited resources the template requests */
    ck_assert_int_eq(chunks("  limits: {cpu: 3500m, memory: 2Gi}\n"), 2);
    ck_assert_int_eq(chunks("  replicas: 4\n  limits: {cpu: \"0\"}\n"), 0); /* a listed 0 caps at 0 */
    /* a resource the template does not request caps nothing: the replicas stand, and without them no chunk */
    ck_assert_int_eq(chunks("  replicas: 4\n  limits: {nvidia.com/gpu: \"1\"}\n"), 4);
    ck_assert_int_eq(chunks("  limits: {nvidia.com/gpu: \"1\"}\n"), 0);
    /* every pod requests one pod slot, so a pods limit counts chunks */
    ck_assert_int_eq(chunks("  limits: {pods: \"6\", cpu: \"9\"}\n"), 6);
}
END_TEST

/* Karpenter's computeReplicas with a scalableRef: max(replicas, ceil(percentage of the workload's replicas)), at least
 * one chunk for a positive percentage of a running workload, capped by the limits. */
START_TEST(test_scalable_ref)
{
    ck_assert_int_eq(scaled("Deployment", 10, "  percentage: 20\n"), 2);
    ck_assert_int_eq(scaled("StatefulSet", 7, "  percentage: 50\n"), 4);             /* ceil(3.5) */
    ck_assert_int_eq(scaled("ReplicaSet", 3, "  percentage: 10\n"), 1);              /* at least one */
    ck_assert_int_eq(scaled("Deployment", 10, "  percentage: 20\n  replicas: 5\n"), 5); /* the larger */
    ck_assert_int_eq(scaled("Deployment", 10, "  percentage: 80\n  replicas: 5\n"), 8);
    ck_assert_int_eq(scaled("Deployment", 10, "  percentage: 80\n  limits: {cpu: \"3\"}\n"), 3); /* capped */
    ck_assert_int_eq(scaled("Deployment", 0, "  percentage: 50\n  replicas: 2\n"), 2);  /* none running */
    ck_assert_int_eq(scaled("Deployment", 0, "  percentage: 50\n"), 0);
    ck_assert_int_eq(scaled("Deployment", 4, "  limits: {cpu: \"2\"}\n"), 2); /* limits alone */
    /* the percentage applies to a scalableRef only */
    ck_assert_int_eq(chunks("  replicas: 1\n  percentage: 500\n"), 1);
}
END_TEST

/* The buffer of a scalableRef Karpenter's ResolveScalableRef cannot read: it loads (Karpenter's controller keeps it and
 * writes ReadyForProvisioning False, ResolutionFailed), with the resolver's error and no shape, so no chunk. */
static void unresolvable(const char *ref, const char *error)
{
    char doc[1024];
    snprintf(doc, sizeof(doc),
             "apiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\nmetadata: {name: cb}\nspec:\n"
             "  scalableRef: %s\n  replicas: 2\n",
             ref);
    ns_cluster *c = ns_cluster_new();
    ck_assert_msg(ns_manifest_load_string(c, "t.yaml", doc, strlen(doc)) == 0, "%s: %s", ref, ns_error_message());
    ck_assert_msg(ns_cluster_resolve(c) == 0, "%s: %s", ref, ns_error_message());
    ck_assert_uint_eq(c->n_buffers, 1);
    ck_assert_pstr_eq(c->buffers[0]->resolution_failed, error);
    int32_t replicas = -1;
    ck_assert_ptr_null(ns_cluster_buffer_shape(c, c->buffers[0], &replicas));
    ns_cluster_free(c);
}

START_TEST(test_resolution_failed)
{
    unresolvable("{kind: Job, name: web}", "unsupported kind \"Job\"");
    unresolvable("{apiGroup: apps, kind: CronJob, name: web}", "unsupported kind \"CronJob\"");
    /* the group is checked first, as Karpenter does */
    unresolvable("{apiGroup: batch, kind: Job, name: web}", "unsupported scalableRef API group \"batch\"");
    unresolvable("{apiGroup: batch, kind: Deployment, name: web}", "unsupported scalableRef API group \"batch\"");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model-buffer");
    TCase *tc = tcase_create("chunks");
    tcase_add_test(tc, test_karpenter_table);
    tcase_add_test(tc, test_limit_rules);
    tcase_add_test(tc, test_scalable_ref);
    tcase_add_test(tc, test_resolution_failed);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
