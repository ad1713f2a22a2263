/*
 * Topology spread details: matchLabelKeys, nodeTaintsPolicy, nodeAffinityPolicy and minDomains. Each case has a
 * naive answer that differs: one selector for every revision, every NodePool's zones as domains whatever the
 * policies say, pods on nodes the pod's affinity excludes counted anyway, minDomains ignored.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/labels.h"
#include "sched_test_util.h"

/* The constraint fx_pod_spread added last, for a setup function to adjust. */
static ns_topology_spread *last_spread(ns_pod *p)
{
    return &p->spread[p->n_spread - 1];
}

typedef void (*spread_setup)(ns_pod *p);

/* n pods named <prefix>0.. with `labels`, each spreading over zones with maxSkew 1 among pods matching `selector`,
 * then passed to setup (may be NULL). */
static void spread_pods(sched_env *e, const char *prefix, int n, const char *labels, const char *selector,
                        spread_setup setup)
{
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "%s%d", prefix, i);
        ns_pod *p = fx_pod(e->c, name, 500, FX_GI, labels);
        fx_pod_spread(p, NS_LABEL_ZONE, 1, false, selector);
        if (setup)
            setup(p);
    }
}

/* How many pods named <prefix>N (N < n) landed in zone, on claims or on existing nodes. */
static int in_zone(sched_env *e, const char *prefix, int n, const char *zone)
{
    int count = 0;
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "%s%d", prefix, i);
        long at = fx_pod_index(e->c, name);
        size_t where = e->r.placement[at];
        if (where == NS_SCHED_UNPLACED || where == NS_SCHED_NOT_PENDING)
            continue;
        const char *z = where < e->c->n_nodes ? ns_labels_get(&e->c->nodes[where]->meta.labels, NS_LABEL_ZONE)
                                              : fx_claim_zone(&e->r.claims[where - e->c->n_nodes]);
        count += z && strcmp(z, zone) == 0;
    }
    return count;
}

static void bind(ns_pod *p, const char *node)
{
    p->node_name = strdup(node);
    ck_assert_ptr_nonnull(p->node_name);
}

typedef void (*spread_cluster)(sched_env *e);

/* Schedules n pods s0.. labelled app=s and spreading over app=s (passed to setup, may be NULL) in the pools and
 * nodes `cluster` makes. */
static void run_spread(sched_env *e, spread_cluster cluster, int n, spread_setup setup)
{
    sched_env_init(e, true);
    cluster(e);
    spread_pods(e, "s", n, "app=s", "app=s", setup);
    sched_env_run(e);
}

static void default_pool(sched_env *e)
{
    fx_pool(e->c, "default", 0, "");
}

static void match_hash(ns_pod *p)
{
    ns_topology_spread *t = last_spread(p);
    t->match_label_keys = calloc(2, sizeof(char *));
    ck_assert_ptr_nonnull(t->match_label_keys);
    t->match_label_keys[0] = strdup("pod-template-hash");
    t->match_label_keys[1] = strdup("not-a-label-of-the-pod");
    t->n_match_label_keys = 2;
}

/* Schedules a rollout: the old revision's two pods (v1-N) fill a node in z-a, then three new ones (v2-N) come; every
 * pod spreads over app=web and is passed to setup (may be NULL). */
static void rollout(sched_env *e, spread_setup setup)
{
    sched_env_init(e, true);
    fx_pool(e->c, "default", 0, "");
    fx_node(e->c, "old", 1000, 2 * FX_GI, 2, "topology.kubernetes.io/zone=z-a,kubernetes.io/arch=amd64");
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), "v1-%d", i);
        ns_pod *p = fx_pod(e->c, name, 500, FX_GI, "app=web,pod-template-hash=v1");
        fx_pod_spread(p, NS_LABEL_ZONE, 1, false, "app=web");
        if (setup)
            setup(p);
        bind(p, "old");
    }
    spread_pods(e, "v2-", 3, "app=web,pod-template-hash=v2", "app=web", setup);
    sched_env_run(e);
}

START_TEST(match_label_keys_spread_each_revision_separately)
{
    sched_env e;
    rollout(&e, match_hash);
    /* Counting only v2 pods, each zone takes one. Counting v1 too, z-a (2 pods) would get none. */
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_int_eq(in_zone(&e, "v2-", 3, "z-a"), 1);
    ck_assert_int_eq(in_zone(&e, "v2-", 3, "z-b"), 1);
    ck_assert_int_eq(in_zone(&e, "v2-", 3, "z-c"), 1);
    sched_env_free(&e);
}
END_TEST

START_TEST(without_match_label_keys_revisions_count_together)
{
    sched_env e;
    rollout(&e, NULL);
    ck_assert_int_eq(in_zone(&e, "v2-", 3, "z-a"), 0);
    sched_env_free(&e);
}
END_TEST

/* "open" offers z-a and z-b; "tainted" offers z-c behind a taint the spread pods do not tolerate. */
static void tainted_pools(sched_env *e)
{
    fx_pool(e->c, "open", 0, "topology.kubernetes.io/zone In z-a|z-b");
    ns_nodepool *t = fx_pool(e->c, "tainted", 0, "topology.kubernetes.io/zone In z-c");
    fx_pool_taint(t, "dedicated", "x", NS_EFFECT_NO_SCHEDULE);
}

static void honor_taints(ns_pod *p)
{
    last_spread(p)->node_taints_policy = NS_POLICY_HONOR;
}

START_TEST(node_taints_policy_honor_leaves_untolerated_pools_out)
{
    sched_env e;
    run_spread(&e, tainted_pools, 4, honor_taints);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_int_eq(in_zone(&e, "s", 4, "z-a"), 2);
    ck_assert_int_eq(in_zone(&e, "s", 4, "z-b"), 2);
    sched_env_free(&e);
}
END_TEST

START_TEST(node_taints_policy_ignore_counts_untolerated_zones)
{
    sched_env e;
    run_spread(&e, tainted_pools, 4, NULL);
    /* z-c is a domain the pods cannot reach: it stays at 0, so z-a and z-b hold one each. */
    ck_assert_uint_eq(e.r.n_unschedulable, 2);
    ck_assert_int_eq(in_zone(&e, "s", 4, "z-a"), 1);
    ck_assert_int_eq(in_zone(&e, "s", 4, "z-b"), 1);
    const char *why = e.r.unschedulable[0].reason;
    ck_assert_msg(strstr(why, "topology spread on topology.kubernetes.io/zone") != NULL, "reason: %s", why);
    sched_env_free(&e);
}
END_TEST

static void zones_a_b(ns_pod *p)
{
    fx_pod_required(p, "topology.kubernetes.io/zone In z-a|z-b");
}

static void zones_a_b_ignored(ns_pod *p)
{
    zones_a_b(p);
    last_spread(p)->node_affinity_policy = NS_POLICY_IGNORE;
}

START_TEST(node_affinity_policy_honor_limits_domains_to_the_pods_zones)
{
    sched_env e;
    run_spread(&e, default_pool, 4, zones_a_b);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_int_eq(in_zone(&e, "s", 4, "z-a"), 2);
    ck_assert_int_eq(in_zone(&e, "s", 4, "z-b"), 2);
    sched_env_free(&e);
}
END_TEST

START_TEST(node_affinity_policy_ignore_counts_every_zone)
{
    sched_env e;
    run_spread(&e, default_pool, 4, zones_a_b_ignored);
    ck_assert_uint_eq(e.r.n_unschedulable, 2);
    sched_env_free(&e);
}
END_TEST

static void arm_types(sched_env *e)
{
    fx_type(&e->set, "arm", 4000, 8 * FX_GI, 20, "kubernetes.io/arch=arm64",
            "z-a:on-demand:0.15,z-b:on-demand:0.15,z-c:on-demand:0.15");
}

static void arm_only(ns_pod *p)
{
    fx_pod_selector(p, "kubernetes.io/arch=arm64");
}

static void arm_only_ignored(ns_pod *p)
{
    arm_only(p);
    last_spread(p)->node_affinity_policy = NS_POLICY_IGNORE;
}

/* Two matching pods run on an amd64 node in z-a; the new pods want arm64. */
static void amd_node_with_pods(sched_env *e)
{
    fx_node(e->c, "amd", 1000, 2 * FX_GI, 2, "topology.kubernetes.io/zone=z-a,kubernetes.io/arch=amd64");
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), "old%d", i);
        bind(fx_pod(e->c, name, 500, FX_GI, "app=s"), "amd");
    }
}

/* arm64 types in the default pool, and the amd64 node with its two pods. */
static void arm_pool_and_amd_node(sched_env *e)
{
    arm_types(e);
    default_pool(e);
    amd_node_with_pods(e);
}

START_TEST(node_affinity_policy_honor_ignores_pods_on_excluded_nodes)
{
    sched_env e;
    run_spread(&e, arm_pool_and_amd_node, 2, arm_only);
    /* The amd64 node is not a domain of arm64 pods, so its pods do not count: z-a is as empty as the others. */
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_int_eq(in_zone(&e, "s", 2, "z-a"), 1);
    sched_env_free(&e);
}
END_TEST

START_TEST(node_affinity_policy_ignore_counts_pods_on_every_node)
{
    sched_env e;
    run_spread(&e, arm_pool_and_amd_node, 2, arm_only_ignored);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_int_eq(in_zone(&e, "s", 2, "z-a"), 0);
    sched_env_free(&e);
}
END_TEST

static void min_domains_5(ns_pod *p)
{
    last_spread(p)->min_domains = 5;
}

static void min_domains_3(ns_pod *p)
{
    last_spread(p)->min_domains = 3;
}

static void min_domains_3_in_a_b(ns_pod *p)
{
    min_domains_3(p);
    zones_a_b(p);
}

START_TEST(min_domains_above_the_zone_count_holds_the_minimum_at_zero)
{
    sched_env e;
    run_spread(&e, default_pool, 6, min_domains_5);
    /* Three zones, fewer than 5: the global minimum counts as 0, so each zone takes maxSkew (1) pods. */
    ck_assert_uint_eq(e.r.n_unschedulable, 3);
    ck_assert_int_eq(in_zone(&e, "s", 6, "z-a"), 1);
    ck_assert_int_eq(in_zone(&e, "s", 6, "z-b"), 1);
    ck_assert_int_eq(in_zone(&e, "s", 6, "z-c"), 1);
    sched_env_free(&e);
}
END_TEST

START_TEST(min_domains_met_spreads_normally)
{
    sched_env e;
    run_spread(&e, default_pool, 6, min_domains_3);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_int_eq(in_zone(&e, "s", 6, "z-a"), 2);
    sched_env_free(&e);
}
END_TEST

START_TEST(min_domains_counts_only_domains_the_policies_leave)
{
    sched_env e;
    run_spread(&e, default_pool, 4, min_domains_3_in_a_b);
    /* The pool has three zones, but node affinity (Honor) leaves two domains: fewer than minDomains 3. */
    ck_assert_uint_eq(e.r.n_unschedulable, 2);
    sched_env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-spread");
    TCase *tc = tcase_create("spread");
    tcase_add_test(tc, match_label_keys_spread_each_revision_separately);
    tcase_add_test(tc, without_match_label_keys_revisions_count_together);
    tcase_add_test(tc, node_taints_policy_honor_leaves_untolerated_pools_out);
    tcase_add_test(tc, node_taints_policy_ignore_counts_untolerated_zones);
    tcase_add_test(tc, node_affinity_policy_honor_limits_domains_to_the_pods_zones);
    tcase_add_test(tc, node_affinity_policy_ignore_counts_every_zone);
    tcase_add_test(tc, node_affinity_policy_honor_ignores_pods_on_excluded_nodes);
    tcase_add_test(tc, node_affinity_policy_ignore_counts_pods_on_every_node);
    tcase_add_test(tc, min_domains_above_the_zone_count_holds_the_minimum_at_zero);
    tcase_add_test(tc, min_domains_met_spreads_normally);
    tcase_add_test(tc, min_domains_counts_only_domains_the_policies_leave);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
