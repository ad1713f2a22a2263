/* Taints and tolerations, startup taints, pod effective requests, NodePool helpers and the cluster container. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/cluster.h"
#include "model/intern.h"
#include "model/model_util.h"
#include "model/resources.h"
#include "model/taints.h"

static ns_toleration tol(const char *key, bool exists, const char *value, const char *effect)
{
    return (ns_toleration){.key = (char *)key, .exists = exists, .value = (char *)value, .effect = (char *)effect};
}

START_TEST(test_toleration_rules)
{
    ns_taint t = {"dedicated", "gpu", "NoSchedule"};
    ns_toleration a;
    a = tol("dedicated", false, "gpu", "NoSchedule");
    ck_assert(ns_toleration_tolerates(&a, &t)); /* Equal, same value, same effect */
    a = tol("dedicated", false, "cpu", "NoSchedule");
    ck_assert(!ns_toleration_tolerates(&a, &t)); /* Equal, other value */
    a = tol("dedicated", true, NULL, "NoSchedule");
    ck_assert(ns_toleration_tolerates(&a, &t)); /* Exists ignores the value */
    a = tol("dedicated", false, "gpu", NULL);
    ck_assert(ns_toleration_tolerates(&a, &t)); /* empty effect matches every effect */
    a = tol("dedicated", false, "gpu", "NoExecute");
    ck_assert(!ns_toleration_tolerates(&a, &t)); /* other effect */
    a = tol(NULL, true, NULL, NULL);
    ck_assert(ns_toleration_tolerates(&a, &t)); /* empty key + Exists tolerates everything */
    a = tol(NULL, true, NULL, "NoExecute");
    ck_assert(!ns_toleration_tolerates(&a, &t)); /* ...of its effect */
    a = tol("other", true, NULL, NULL);
    ck_assert(!ns_toleration_tolerates(&a, &t));
    ns_taint no_value = {"spot", NULL, "NoSchedule"};
    a = tol("spot", false, NULL, NULL);
    ck_assert(ns_toleration_tolerates(&a, &no_value)); /* missing value equals "" */
    a = tol("spot", false, "", "NoSchedule");
    ck_assert(ns_toleration_tolerates(&a, &no_value));
}
END_TEST

START_TEST(test_taints_tolerated_reason_and_flags)
{
    ns_taint taints[] = {{"a", "1", "NoSchedule"}, {"b", NULL, "PreferNoSchedule"}, {"c", "x", "NoExecute"}};
    ns_toleration tols[] = {tol("a", true, NULL, NULL)};
    char reason[128];
    ck_assert(!ns_taints_tolerated(taints, 3, NULL, 0, tols, 1, 0, reason, sizeof(reason)));
    ck_assert_str_eq(reason, "did not tolerate taint b:PreferNoSchedule");
    ck_assert(!ns_taints_tolerated(taints, 3, NULL, 0, tols, 1, NS_TAINTS_IGNORE_PREFER_NO_SCHEDULE, reason,
                                   sizeof(reason)));
    ck_assert_str_eq(reason, "did not tolerate taint c=x:NoExecute");
    ns_taint ignored[] = {{"c", "other-value", "NoExecute"}}; /* matched by key and effect */
    ck_assert(ns_taints_tolerated(taints, 3, ignored, 1, tols, 1, NS_TAINTS_IGNORE_PREFER_NO_SCHEDULE, NULL, 0));
    ns_taint ephemeral[] = {{"node.kubernetes.io/not-ready", NULL, "NoSchedule"},
                            {"node.cloudprovider.kubernetes.io/uninitialized", "true", "NoSchedule"},
                            {"karpenter.sh/unregistered", NULL, "NoExecute"}};
    for (size_t i = 0; i < 3; i++)
        ck_assert(ns_taint_is_known_ephemeral(&ephemeral[i]));
    /* Karpenter compares them as MatchTaint does (key and effect, any value), adds not-ready:NoExecute and every key
     * under readiness.k8s.io/ (KnownEphemeralTaintKeyPrefixes). */
    ns_taint also[] = {{"node.cloudprovider.kubernetes.io/uninitialized", "false", "NoSchedule"},
                       {"node.kubernetes.io/not-ready", NULL, "NoExecute"},
                       {"readiness.k8s.io/network-ready", "pending", "NoSchedule"}};
    for (size_t i = 0; i < 3; i++)
        ck_assert(ns_taint_is_known_ephemeral(&also[i]));
    ns_taint not_ephemeral[] = {{"node.kubernetes.io/unreachable", NULL, "NoExecute"},
                                {"node.kubernetes.io/not-readyx", NULL, "NoSchedule"},
                                {"example.com/readiness.k8s.io/x", NULL, "NoSchedule"}};
    for (size_t i = 0; i < 3; i++)
        ck_assert(!ns_taint_is_known_ephemeral(&not_ephemeral[i]));
    ck_assert(ns_taint_effect_valid("NoExecute"));
    ck_assert(!ns_taint_effect_valid("NoScheduleX"));
    ck_assert(!ns_taint_effect_valid(NULL));
}
END_TEST

static ns_pod *pod_with(const char *name)
{
    ns_pod *p = ns_pod_new();
    p->meta.name = ns_strdup(name);
    p->meta.namespace_ = ns_strdup("default");
    return p;
}

static void container(ns_container *c, const char *cpu, const char *mem, bool sidecar)
{
    memset(c, 0, sizeof(*c));
    ck_assert_int_eq(ns_res_set_text(&c->requests, "cpu", cpu, "cpu"), 0);
    ck_assert_int_eq(ns_res_set_text(&c->requests, "memory", mem, "memory"), 0);
    c->sidecar = sidecar;
}

START_TEST(test_pod_effective_requests)
{
    ns_pod *p = pod_with("web");
    p->n_containers = 2;
    p->containers = calloc(2, sizeof(ns_container));
    container(&p->containers[0], "500m", "256Mi", false);
    container(&p->containers[1], "250m", "128Mi", false);
    p->n_init_containers = 1;
    p->init_containers = calloc(1, sizeof(ns_container));
    container(&p->init_containers[0], "2", "64Mi", false);
    ck_assert_int_eq(ns_res_set_text(&ns_pod_spec_resources_get(p)->overhead, "cpu", "100m", "o"), 0);
    ck_assert_int_eq(ns_pod_compute_requests(p), 0);
    /* max(max(init) = 2 cpu, sum = 750m) + 100m overhead; memory max(64Mi, 384Mi). */
    ck_assert_int_eq(p->requests.cpu_milli, 2100);
    ck_assert_int_eq(p->requests.memory_bytes, 384 * 1024 * 1024);
    ck_assert_int_eq(p->requests.pods, 1);
    ns_pod_free(p);

    /* Sidecars (init containers with restartPolicy Always) run alongside: they add to the app containers and to
     * every later init container. */
    p = pod_with("sidecar");
    p->n_containers = 1;
    p->containers = calloc(1, sizeof(ns_container));
    container(&p->containers[0], "1", "1Gi", false);
    p->n_init_containers = 2;
    p->init_containers = calloc(2, sizeof(ns_container));
    container(&p->init_containers[0], "500m", "100Mi", true);
    container(&p->init_containers[1], "3", "10Mi", false);
    ck_assert_int_eq(ns_pod_compute_requests(p), 0);
    ck_assert_int_eq(p->requests.cpu_milli, 3500);                                     /* 3 + 500m sidecar */
    ck_assert_int_eq(p->requests.memory_bytes, INT64_C(1073741824) + 100 * 1024 * 1024); /* 1Gi + 100Mi */
    ns_pod_free(p);
    ns_pod_free(NULL);
}
END_TEST

START_TEST(test_pod_node_requirements_and_matching)
{
    ns_pod *p = pod_with("p");
    ns_labels_set(&p->node_selector, "kubernetes.io/arch", "amd64");
    p->affinity.has_node_required = true;
    p->affinity.n_node_required = 2;
    p->affinity.node_required = calloc(2, sizeof(ns_node_selector_term));
    char **z1 = calloc(1, sizeof(char *)), **z2 = calloc(1, sizeof(char *));
    z1[0] = ns_strdup("zone-a");
    z2[0] = ns_strdup("zone-b");
    p->affinity.node_required[0].exprs = calloc(1, sizeof(ns_selector_req));
    p->affinity.node_required[0].exprs[0] = (ns_selector_req){.key = ns_strdup(NS_LABEL_ZONE), .op = NS_OP_IN, .values = z1, .n_values = 1};
    p->affinity.node_required[0].n_exprs = 1;
    p->affinity.node_required[1].exprs = calloc(1, sizeof(ns_selector_req));
    p->affinity.node_required[1].exprs[0] = (ns_selector_req){.key = ns_strdup(NS_LABEL_ZONE), .op = NS_OP_IN, .values = z2, .n_values = 1};
    p->affinity.node_required[1].n_exprs = 1;

    ns_requirements r;
    ck_assert_int_eq(ns_pod_node_requirements(p, 1, -1, &r), 0);
    char buf[256];
    ck_assert_str_eq(ns_requirements_format(&r, buf, sizeof(buf)),
                     "kubernetes.io/arch In [amd64], topology.kubernetes.io/zone In [zone-b]");
    ns_requirements_free(&r);

    ns_label node_b[] = {{"kubernetes.io/arch", "amd64"}, {NS_LABEL_ZONE, "zone-b"}};
    ns_label node_c[] = {{"kubernetes.io/arch", "amd64"}, {NS_LABEL_ZONE, "zone-c"}};
    ns_label node_arm[] = {{"kubernetes.io/arch", "arm64"}, {NS_LABEL_ZONE, "zone-a"}};
    ck_assert(ns_pod_matches_node(p, node_b, 2, "n1", NULL, 0)); /* terms are ORed */
    ck_assert(!ns_pod_matches_node(p, node_c, 2, "n1", buf, sizeof(buf)));
    ck_assert_str_eq(buf, "none of the 2 required node affinity terms match");
    ck_assert(!ns_pod_matches_node(p, node_arm, 2, "n1", buf, sizeof(buf)));
    ck_assert_str_eq(buf, "node selector kubernetes.io/arch=amd64 does not match (node has arm64)");
    ns_pod_free(p);
}
END_TEST

START_TEST(test_nodepool_startup_taints_do_not_block)
{
    ns_nodepool *np = ns_nodepool_new();
    np->meta.name = ns_strdup("default");
    ns_taint t[] = {{"dedicated", "gpu", "NoSchedule"}};
    ns_taint st[] = {{"node.cilium.io/agent-not-ready", "true", "NoExecute"}};
    ck_assert_int_eq(ns_taints_copy(t, 1, &np->taints), 0);
    np->n_taints = 1;
    ck_assert_int_eq(ns_taints_copy(st, 1, &np->startup_taints), 0);
    np->n_startup_taints = 1;
    ns_pod *p = pod_with("p");
    char reason[128];
    ck_assert(!ns_nodepool_tolerates(np, p, 0, reason, sizeof(reason)));
    ck_assert_str_eq(reason, "did not tolerate taint dedicated=gpu:NoSchedule");
    p->n_tolerations = 1;
    p->tolerations = calloc(1, sizeof(ns_toleration));
    p->tolerations[0].key = ns_strdup("dedicated");
    p->tolerations[0].exists = true;
    ck_assert(ns_nodepool_tolerates(np, p, 0, NULL, 0)); /* the startup taint is not tolerated, and need not be */

    ns_labels_set(&np->labels, "team", "ml");
    ns_requirements r;
    ck_assert_int_eq(ns_nodepool_requirements(np, &r), 0);
    ck_assert_str_eq(ns_requirements_format(&r, reason, sizeof(reason)), "karpenter.sh/nodepool In [default], team In [ml]");
    ns_requirements_free(&r);

    np->limits.cpu = true;
    np->limits.max.cpu_milli = 10000;
    ns_res usage = {.cpu_milli = 12000, .memory_bytes = INT64_C(1) << 40};
    ck_assert(ns_resource_limits_exceeded(&np->limits, &usage, reason, sizeof(reason)));
    ck_assert_str_eq(reason, "cpu resource usage of 12 exceeds limit of 10");
    usage.cpu_milli = 10000;
    ck_assert(!ns_resource_limits_exceeded(&np->limits, &usage, NULL, 0)); /* memory is unlimited */
    ns_pod_free(p);
    ns_nodepool_free(np);
}
END_TEST

START_TEST(test_cluster_order_lookup_duplicates)
{
    ns_cluster *c = ns_cluster_new();
    for (int i = 0; i < 200; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%03d", i);
        ck_assert_int_eq(ns_cluster_add_pod(c, pod_with(name)), 0);
    }
    ck_assert_uint_eq(c->n_pods, 200);
    ck_assert_str_eq(c->pods[0]->meta.name, "p000");
    ck_assert_str_eq(c->pods[199]->meta.name, "p199");
    ck_assert_ptr_eq(ns_cluster_find_pod(c, NULL, "p150"), c->pods[150]);
    ck_assert_ptr_null(ns_cluster_find_pod(c, "other", "p150"));
    ns_pod *dup = pod_with("p007");
    dup->meta.source_file = ns_intern("b.yaml");
    dup->meta.source_line = 9;
    ck_assert_int_eq(ns_cluster_add_pod(c, dup), NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(), "b.yaml:9: Pod default/p007 is defined twice (first at :0)");
    ns_nodepool *a = ns_nodepool_new(), *b = ns_nodepool_new(), *z = ns_nodepool_new();
    a->meta.name = ns_strdup("a");
    b->meta.name = ns_strdup("b");
    z->meta.name = ns_strdup("z");
    b->weight = 50;
    ck_assert_int_eq(ns_cluster_add_nodepool(c, a), 0);
    ck_assert_int_eq(ns_cluster_add_nodepool(c, b), 0);
    ck_assert_int_eq(ns_cluster_add_nodepool(c, z), 0);
    qsort(c->nodepools, c->n_nodepools, sizeof(ns_nodepool *), ns_nodepool_cmp_priority);
    ck_assert_str_eq(c->nodepools[0]->meta.name, "b"); /* heaviest first */
    ck_assert_str_eq(c->nodepools[1]->meta.name, "z"); /* then name descending, as Karpenter */
    ck_assert_str_eq(c->nodepools[2]->meta.name, "a");
    ns_cluster_free(c);
    ns_cluster_free(NULL);
}
END_TEST

/* The edits both cluster-writes stores and the simulated kubelet make to a Node's taints: one taint per key and
 * effect (a second add sets the value), removal by key and effect, and append for a new node's list. */
START_TEST(test_taint_list_edits)
{
    ns_taint *v = NULL;
    size_t n = 0;
    ns_taint gpu = {"dedicated", "gpu", "NoSchedule"}, cpu = {"dedicated", "cpu", "NoSchedule"};
    ns_taint exec = {"dedicated", NULL, "NoExecute"}, bare = {"spot", NULL, NULL};
    ck_assert_int_eq(ns_taints_put(&v, &n, &gpu), 0);
    ck_assert_int_eq(ns_taints_put(&v, &n, &exec), 0); /* same key, other effect: a second taint */
    ck_assert_int_eq(ns_taints_put(&v, &n, &cpu), 0);  /* same key and effect: the value changes */
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(v[0].value, "cpu");
    ck_assert_ptr_ne(v[0].value, cpu.value); /* owned copies */
    ck_assert_ptr_null(v[1].value);
    ns_taint cleared = {"dedicated", NULL, "NoSchedule"};
    ck_assert_int_eq(ns_taints_put(&v, &n, &cleared), 0);
    ck_assert_ptr_null(v[0].value);
    ck_assert_int_eq(ns_taints_append(&v, &n, &bare), 0);
    ck_assert_int_eq(ns_taints_append(&v, &n, &bare), 0); /* append keeps duplicates */
    ck_assert_uint_eq(n, 4);
    ns_taints_remove(v, &n, "dedicated", "NoSchedule");
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(v[0].effect, "NoExecute");
    ns_taints_remove(v, &n, "dedicated", "NoSchedule"); /* gone already: no change */
    ns_taints_remove(v, &n, "spot", "NoSchedule");      /* the effect must match too */
    ck_assert_uint_eq(n, 3);
    ns_taints_remove(v, &n, "spot", ""); /* an empty effect matches a NULL one, one taint at a time */
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(v[1].key, "spot");
    ns_taints_free(v, n);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model-taints");
    TCase *tc = tcase_create("taints");
    tcase_add_test(tc, test_toleration_rules);
    tcase_add_test(tc, test_taints_tolerated_reason_and_flags);
    tcase_add_test(tc, test_pod_effective_requests);
    tcase_add_test(tc, test_pod_node_requirements_and_matching);
    tcase_add_test(tc, test_nodepool_startup_taints_do_not_block);
    tcase_add_test(tc, test_cluster_order_lookup_duplicates);
    tcase_add_test(tc, test_taint_list_edits);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
