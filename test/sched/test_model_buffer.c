/* CapacityBuffer chunks from manifests (ns_buffer_chunks): Karpenter's computeReplicas table for a podTemplateRef
 * (pkg/controllers/capacitybuffer suite_test.go, "should resolve buffer replicas from replicas, percentage, and
 * limits"), and its calculateLimitReplicas rules (a limit on a resource the template does not request caps nothing;
 * the least of several limits wins). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"
#include "manifest/loader.h"
#include "model/cluster.h"

/* A 1-cpu, 1Gi template and one buffer with the given spec lines; the chunks it asks for. */
static int64_t chunks(const char *spec)
{
    char doc[2048];
    snprintf(doc, sizeof(doc),
             "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: pt}\ntemplate:\n  spec:\n    containers:\n"
             "      - {name: c, image: i, resources: {requests: {cpu: \"1\", memory: 1Gi}}}\n---\n"
             "apiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\nmetadata: {name: cb}\n"
             "spec:\n  podTemplateRef: {name: pt}\n%s",
             spec);
    ns_cluster *c = ns_cluster_new();
    ck_assert_msg(ns_manifest_load_string(c, "t.yaml", doc, strlen(doc)) == 0, "%s", ns_error_message());
    ck_assert_msg(ns_cluster_resolve(c) == 0, "%s", ns_error_message());
    ck_assert_uint_eq(c->n_buffers, 1);
    const ns_pod_template *t = ns_cluster_find_pod_template(c, "default", c->buffers[0]->pod_template);
    ck_assert_ptr_nonnull(t);
    int64_t n = ns_buffer_chunks(c->buffers[0], t->pod);
    ns_cluster_free(c);
    return n;
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

int main(void)
{
    Suite *s = suite_create("model-buffer");
    TCase *tc = tcase_create("chunks");
    tcase_add_test(tc, test_karpenter_table);
    tcase_add_test(tc, test_limit_rules);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
