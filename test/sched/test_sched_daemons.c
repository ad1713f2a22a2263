/*
 * DaemonSet overhead per instance type (issue 9 rule 2), case by case from Karpenter's provisioning suite
 * (pkg/controllers/provisioning/suite_test.go, Context "Daemonsets"), over the fake cloud provider's instance types:
 * a DaemonSet counts on a type only where it would run (Scheduler.buildDaemonOverheadGroups, isDaemonPodCompatible),
 * and its host ports are taken on those types (filterInstanceTypesByRequirements).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/labels.h"
#include "model/taints.h"
#include "sched_fixture.h"

#define ZONES "test-zone-1:spot:%s,test-zone-2:spot:%s,test-zone-1:on-demand:%s,test-zone-2:on-demand:%s," \
              "test-zone-3:on-demand:%s"

/* Karpenter's fake types: price grows with resources; 100m cpu and 10Mi kube-reserved come off each. */
static void fake_type(ns_itype_set *set, const char *name, int64_t cpu, int64_t gib, const char *labels,
                      const char *price)
{
    char offers[256];
    snprintf(offers, sizeof(offers), ZONES, price, price, price, price, price);
    ns_itype *t = fx_type(set, name, cpu * 1000, gib * FX_GI, 5, labels, offers);
    t->allocatable.cpu_milli -= 100;
    t->allocatable.memory_bytes -= 10 * FX_MI;
}

typedef struct env {
    ns_cluster *c;
    ns_itype_set set;
    ns_sched_result r;
    ns_nodepool *pool;
} env;

static void env_init(env *e)
{
    memset(e, 0, sizeof(*e));
    e->c = ns_cluster_new();
    ck_assert_ptr_nonnull(e->c);
    fake_type(&e->set, "small-instance-type", 2, 2, "kubernetes.io/arch=amd64,size=small", "0.2");
    fake_type(&e->set, "default-instance-type", 4, 4, "kubernetes.io/arch=amd64,size=small", "0.4");
    fake_type(&e->set, "arm-instance-type", 16, 128, "kubernetes.io/arch=arm64,size=large", "3.2");
    e->pool = fx_pool(e->c, "default", 0, "");
}

static void env_free(env *e)
{
    ns_sched_result_free(&e->r);
    ns_itype_set_free(&e->set);
    ns_cluster_free(e->c);
}

/* The pod of 1 cpu and 1Gi the Karpenter tests provision. */
static ns_pod *add_pod(env *e)
{
    return fx_pod(e->c, "pod", 1000, FX_GI, "");
}

/* Runs the round; the type the pod's claim launches first. */
static const char *launched(env *e)
{
    fx_run(e->c, &e->set, NULL, &e->r);
    const ns_sched_claim *cl = fx_claim_of(e->c, &e->r, "pod");
    ck_assert_msg(cl != NULL, "pod not scheduled: %s", fx_reason(e->c, &e->r, "pod"));
    return cl->options[0].type->name;
}

START_TEST(accounts_for_daemonsets)
{
    env e;
    env_init(&e);
    fx_daemonset(e.c, "ds", 2000, 2 * FX_GI);
    add_pod(&e);
    ck_assert_str_eq(launched(&e), "default-instance-type");
    env_free(&e);
}
END_TEST

START_TEST(daemonset_host_port_blocks_the_pod)
{
    env e;
    env_init(&e);
    fx_pod_host_port(fx_daemonset(e.c, "ds", 2000, 2 * FX_GI), 8080);
    ns_pod *pod = add_pod(&e);
    fx_pod_host_port(pod, 8080);
    fx_run(e.c, &e.set, NULL, &e.r);
    ck_assert_uint_eq(e.r.n_claims, 0);
    const char *why = fx_reason(e.c, &e.r, "pod");
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, "DaemonSet kube-system/ds takes TCP port 8080") && !strstr(why, "the most any type"),
                  "reason: %s", why);
    env_free(&e);
}
END_TEST

START_TEST(counts_daemonsets_despite_startup_taints)
{
    env e;
    env_init(&e);
    e.pool->startup_taints = calloc(1, sizeof(ns_taint));
    ck_assert_ptr_nonnull(e.pool->startup_taints);
    e.pool->startup_taints[0] = (ns_taint){strdup("foo.com/taint"), NULL, strdup(NS_EFFECT_NO_SCHEDULE)};
    e.pool->n_startup_taints = 1;
    fx_daemonset(e.c, "ds", 2000, 2 * FX_GI);
    add_pod(&e);
    ck_assert_str_eq(launched(&e), "default-instance-type");
    env_free(&e);
}
END_TEST

START_TEST(ignores_daemonsets_without_matching_tolerations)
{
    env e;
    env_init(&e);
    fx_pool_taint(e.pool, "foo", "bar", NS_EFFECT_NO_SCHEDULE);
    fx_daemonset(e.c, "ds", 2000, 2 * FX_GI);
    ns_pod *pod = add_pod(&e);
    fx_pod_tolerate(pod, "", NULL);
    ck_assert_str_eq(launched(&e), "small-instance-type");
    env_free(&e);
}
END_TEST

START_TEST(ignores_daemonsets_with_an_invalid_selector)
{
    env e;
    env_init(&e);
    fx_pod_selector(fx_daemonset(e.c, "ds", 2000, 2 * FX_GI), "node=invalid");
    add_pod(&e);
    ck_assert_str_eq(launched(&e), "small-instance-type");
    env_free(&e);
}
END_TEST

START_TEST(ignores_daemonsets_no_type_meets)
{
    env e;
    env_init(&e);
    fx_pod_required(fx_daemonset(e.c, "ds", 2000, 2 * FX_GI), "node.kubernetes.io/instance-type In non-existent");
    add_pod(&e);
    ck_assert_str_eq(launched(&e), "small-instance-type");
    env_free(&e);
}
END_TEST

START_TEST(counts_daemonsets_selecting_a_pool_label)
{
    env e;
    env_init(&e);
    ck_assert_int_eq(ns_labels_set(&e.pool->labels, "purpose", "monitoring"), 0);
    fx_pod_selector(fx_daemonset(e.c, "ds", 2000, 2 * FX_GI), "purpose=monitoring");
    add_pod(&e);
    ck_assert_str_eq(launched(&e), "default-instance-type");
    env_free(&e);
}
END_TEST

/* One pool, two overheads: 1 cpu on the small types, 10 on the large one. Counting both everywhere would leave only
 * the arm type; the claim's requests carry the least overhead among its types. */
START_TEST(filters_daemonsets_by_instance_type)
{
    env e;
    env_init(&e);
    fx_pod_required(fx_daemonset(e.c, "ds-small", 1000, 0), "size In small");
    fx_pod_required(fx_daemonset(e.c, "ds-large", 10000, 0), "size In large");
    add_pod(&e);
    ck_assert_str_eq(launched(&e), "default-instance-type");
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_int_eq(e.r.claims[0].daemon_overhead.cpu_milli, 1000);
    env_free(&e);
}
END_TEST

START_TEST(counts_daemonsets_notin_an_unknown_key)
{
    env e;
    env_init(&e);
    fx_pod_required(fx_daemonset(e.c, "ds", 2000, 2 * FX_GI), "foo NotIn bar");
    ns_pod *pod = add_pod(&e);
    fx_pod_required(pod, "topology.kubernetes.io/zone In test-zone-2");
    ck_assert_str_eq(launched(&e), "default-instance-type");
    env_free(&e);
}
END_TEST

START_TEST(counts_daemonsets_on_a_later_affinity_term)
{
    env e;
    env_init(&e);
    ck_assert_int_eq(ns_labels_set(&e.pool->labels, "foo", "bar"), 0);
    ns_pod *ds = fx_daemonset(e.c, "ds", 2000, 2 * FX_GI);
    fx_pod_required(ds, "foo In voo");
    fx_pod_required(ds, "foo In bar");
    add_pod(&e);
    ck_assert_str_eq(launched(&e), "default-instance-type");
    env_free(&e);
}
END_TEST

START_TEST(counts_daemonsets_with_an_incompatible_preference)
{
    env e;
    env_init(&e);
    fx_pod_preferred(fx_daemonset(e.c, "ds", 2000, 2 * FX_GI), 1, "node In invalid");
    add_pod(&e);
    ck_assert_str_eq(launched(&e), "default-instance-type");
    env_free(&e);
}
END_TEST

START_TEST(counts_daemonsets_despite_prefer_no_schedule)
{
    env e;
    env_init(&e);
    fx_pool_taint(e.pool, "test", NULL, NS_EFFECT_PREFER_NO_SCHEDULE);
    fx_daemonset(e.c, "ds", 2000, 2 * FX_GI);
    add_pod(&e);
    ck_assert_str_eq(launched(&e), "default-instance-type");
    env_free(&e);
}
END_TEST

/* The DaemonSet taking port 8080 runs on large types only; the pod asks for a small type and port 8080. */
START_TEST(host_ports_only_where_the_daemonset_runs)
{
    env e;
    env_init(&e);
    ns_pod *big = fx_daemonset(e.c, "ds-large", 4000, 4 * FX_GI);
    fx_pod_required(big, "size In large");
    fx_pod_host_port(big, 8080);
    ns_pod *small = fx_daemonset(e.c, "ds-small", 2000, 2 * FX_GI);
    fx_pod_required(small, "size In small");
    fx_pod_host_port(small, 8081);
    ns_pod *pod = add_pod(&e);
    fx_pod_required(pod, "size In small");
    fx_pod_host_port(pod, 8080);
    ck_assert_str_eq(launched(&e), "default-instance-type");
    env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-daemons");
    TCase *tc = tcase_create("overhead");
    tcase_add_test(tc, accounts_for_daemonsets);
    tcase_add_test(tc, daemonset_host_port_blocks_the_pod);
    tcase_add_test(tc, counts_daemonsets_despite_startup_taints);
    tcase_add_test(tc, ignores_daemonsets_without_matching_tolerations);
    tcase_add_test(tc, ignores_daemonsets_with_an_invalid_selector);
    tcase_add_test(tc, ignores_daemonsets_no_type_meets);
    tcase_add_test(tc, counts_daemonsets_selecting_a_pool_label);
    tcase_add_test(tc, filters_daemonsets_by_instance_type);
    tcase_add_test(tc, counts_daemonsets_notin_an_unknown_key);
    tcase_add_test(tc, counts_daemonsets_on_a_later_affinity_term);
    tcase_add_test(tc, counts_daemonsets_with_an_incompatible_preference);
    tcase_add_test(tc, counts_daemonsets_despite_prefer_no_schedule);
    tcase_add_test(tc, host_ports_only_where_the_daemonset_runs);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
