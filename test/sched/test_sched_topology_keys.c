/*
 * Topology on any key (issue 9 rule 5), from Karpenter's topology suite (pkg/controllers/provisioning/scheduling/
 * topology_test.go, contexts CapacityType and Pod Affinity/Anti-Affinity) and its TopologyGroup: spreads and pod
 * (anti-)affinity on capacity type, arch and a custom label count domains the pools' requirements, instance types
 * and existing nodes define; ScheduleAnyway spreads and preferred terms are relaxed away, never leaving a pod
 * unschedulable. Karpenter's two-round cases are written as one round with the first round's node already there.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/labels.h"
#include "sched_test_util.h"

#define CT NS_LABEL_CAPACITY_TYPE
#define ARCH "kubernetes.io/arch"
#define RACK "example.com/rack"

/* The value of key a claim launches with: its requirement's one value, else the one all its options share. */
static const char *claim_value(const ns_sched_claim *c, const char *key)
{
    const ns_requirement *r = ns_requirements_get(&c->requirements, key);
    if (r && !r->complement && r->n_values == 1)
        return r->values[0];
    const char *v = NULL;
    for (size_t i = 0; i < c->n_options; i++) {
        const char *o = strcmp(key, CT) == 0 ? c->options[i].capacity_type
                                             : ns_label_find(c->options[i].type->labels, c->options[i].type->n_labels,
                                                             key);
        if (!o || (v && strcmp(v, o) != 0))
            return NULL;
        v = o;
    }
    return v;
}

/* Pods labelled `label` (k=v) per value of key, on existing nodes and new claims, sorted ascending into counts;
 * returns how many values. A placed pod whose domain is not single-valued fails the test. */
static size_t skew(const sched_env *e, const char *key, const char *label, int counts[8])
{
    const char *values[8];
    size_t n = 0;
    char k[64];
    const char *eq = strchr(label, '=');
    snprintf(k, sizeof(k), "%.*s", (int)(eq - label), label);
    for (size_t p = 0; p < e->c->n_pods; p++) {
        const ns_pod *pod = e->c->pods[p];
        const char *lv = ns_labels_get(&pod->meta.labels, k);
        if (!lv || strcmp(lv, eq + 1) != 0)
            continue;
        const char *v = NULL;
        size_t at = e->r.placement[p];
        if (pod->node_name) {
            for (size_t i = 0; i < e->c->n_nodes; i++)
                if (strcmp(e->c->nodes[i]->meta.name, pod->node_name) == 0)
                    v = ns_labels_get(&e->c->nodes[i]->meta.labels, key);
        } else if (at == NS_SCHED_UNPLACED || at == NS_SCHED_NOT_PENDING) {
            continue;
        } else if (at < e->c->n_nodes) {
            v = ns_labels_get(&e->c->nodes[at]->meta.labels, key);
        } else {
            v = claim_value(&e->r.claims[at - e->c->n_nodes], key);
        }
        ck_assert_msg(v != NULL, "pod %s has no single %s", pod->meta.name, key);
        size_t i = 0;
        while (i < n && strcmp(values[i], v) != 0)
            i++;
        if (i == n) {
            ck_assert_uint_lt(n, 8);
            values[n] = v;
            counts[n++] = 0;
        }
        counts[i]++;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && counts[j - 1] > counts[j]; j--) {
            int t = counts[j];
            counts[j] = counts[j - 1];
            counts[j - 1] = t;
        }
    return n;
}

static void expect_skew(const sched_env *e, const char *key, const char *label, int a, int b)
{
    int counts[8];
    size_t n = skew(e, key, label, counts);
    ck_assert_uint_eq(n, b < 0 ? 1 : 2);
    ck_assert_int_eq(counts[0], a);
    if (b >= 0)
        ck_assert_int_eq(counts[1], b);
}

static void spread_pods(sched_env *e, int n, int64_t cpu, const char *key, bool anyway)
{
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        fx_pod_spread(fx_pod(e->c, name, cpu, FX_GI, "test=test"), key, 1, anyway, "test=test");
    }
}

/* A full node with one pod labelled test=test on it (Karpenter's first round). */
static void node_with_pod(sched_env *e, const char *labels)
{
    fx_node(e->c, "node-1", 1100, 16 * FX_GI, 20, labels);
    ns_pod *bound = fx_pod(e->c, "bound", 1100, FX_GI, "test=test");
    bound->node_name = strdup("node-1");
    ck_assert_ptr_nonnull(bound->node_name);
}

/* Arm64 twins of the standard types, for arch domains. */
static void arm_types(sched_env *e)
{
    fx_type(&e->set, "small-arm", 2000, 4 * FX_GI, 20, ARCH "=arm64,kubernetes.io/os=linux,family=m",
            "z-a:spot:0.03,z-a:on-demand:0.09,z-b:on-demand:0.091");
    fx_type(&e->set, "large-arm", 8000, 16 * FX_GI, 20, ARCH "=arm64,kubernetes.io/os=linux,family=m",
            "z-a:spot:0.12,z-a:on-demand:0.36,z-b:on-demand:0.361");
}

/* A scheduling environment with the arm64 types too when `arm`, and one pool "default" with `requirements`. */
static void default_pool_env(sched_env *e, bool arm, const char *requirements)
{
    sched_env_init(e, true);
    if (arm)
        arm_types(e);
    fx_pool(e->c, "default", 0, requirements);
}

/* spread_pods, then one scheduling round. */
static void spread_and_run(sched_env *e, int n, int64_t cpu, const char *key, bool anyway)
{
    spread_pods(e, n, cpu, key, anyway);
    sched_env_run(e);
}

/* n pods p0.. labelled security=s2, each with an anti-affinity to security=s2 on key (weight 0: required). */
static void self_anti_pods(sched_env *e, int n, int64_t cpu, const char *key, int weight)
{
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        fx_pod_affinity(fx_pod(e->c, name, cpu, FX_GI, "security=s2"), key, "security=s2", true, weight);
    }
}

/* "should balance pods across capacity types" */
START_TEST(capacity_type_spread_balances)
{
    sched_env e;
    default_pool_env(&e, false, CT " Exists");
    spread_and_run(&e, 4, 1000, CT, false);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    expect_skew(&e, CT, "test=test", 2, 2);
    sched_env_free(&e);
}
END_TEST

/* "should not violate max-skew when unsat = do not schedule (capacity type)": spot holds 1, the pool may only make
 * on-demand nodes; 2 go on-demand and the rest wait. */
START_TEST(capacity_type_spread_do_not_schedule)
{
    sched_env e;
    default_pool_env(&e, false, CT " In on-demand");
    node_with_pod(&e, CT "=spot,topology.kubernetes.io/zone=z-a,kubernetes.io/hostname=node-1");
    spread_and_run(&e, 5, 1100, CT, false);
    expect_skew(&e, CT, "test=test", 1, 2);
    ck_assert_uint_eq(e.r.n_unschedulable, 3);
    const char *why = e.r.unschedulable[0].reason;
    /* The spread leaves spot alone, which the pool does not offer (Karpenter: incompatible requirements). */
    ck_assert_msg(strstr(why, CT " In [spot]"), "reason: %s", why);
    sched_env_free(&e);
}
END_TEST

/* "should violate max-skew when unsat = schedule anyway (capacity type)" */
START_TEST(capacity_type_spread_schedule_anyway)
{
    sched_env e;
    default_pool_env(&e, false, CT " In on-demand");
    node_with_pod(&e, CT "=spot,topology.kubernetes.io/zone=z-a,kubernetes.io/hostname=node-1");
    spread_and_run(&e, 5, 1100, CT, true);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    expect_skew(&e, CT, "test=test", 1, 5);
    sched_env_free(&e);
}
END_TEST

/* "should balance pods across arch (no constraints)": the existing amd64 node counts; the pool makes arm64 only. */
START_TEST(arch_spread_counts_the_existing_node)
{
    sched_env e;
    default_pool_env(&e, true, ARCH " In arm64");
    node_with_pod(&e, ARCH "=amd64,topology.kubernetes.io/zone=z-a,kubernetes.io/hostname=node-1");
    spread_and_run(&e, 5, 2000, ARCH, false);
    expect_skew(&e, ARCH, "test=test", 1, 2);
    ck_assert_uint_eq(e.r.n_unschedulable, 3);
    sched_env_free(&e);
}
END_TEST

/* Both arches open: the pods split evenly, each claim one arch. */
START_TEST(arch_spread_balances)
{
    sched_env e;
    default_pool_env(&e, true, "");
    spread_and_run(&e, 6, 1000, ARCH, false);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    expect_skew(&e, ARCH, "test=test", 3, 3);
    sched_env_free(&e);
}
END_TEST

/* A custom label only the instance types define. */
START_TEST(custom_type_label_spread_balances)
{
    sched_env e;
    sched_env_init(&e, false);
    fx_type(&e.set, "r1-type", 4000, 16 * FX_GI, 20, RACK "=r1,kubernetes.io/arch=amd64", "z-a:on-demand:0.1");
    fx_type(&e.set, "r2-type", 4000, 16 * FX_GI, 20, RACK "=r2,kubernetes.io/arch=amd64", "z-a:on-demand:0.2");
    fx_pool(e.c, "default", 0, "");
    spread_and_run(&e, 4, 1000, RACK, false);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    expect_skew(&e, RACK, "test=test", 2, 2);
    sched_env_free(&e);
}
END_TEST

/* "should balance pods across a label when discovered from the nodepool": the domains are the pools' In values. */
START_TEST(custom_pool_label_spread_balances)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "rack-a", 0, RACK " In a");
    fx_pool(e.c, "rack-b", 0, RACK " In b");
    spread_and_run(&e, 4, 1000, RACK, false);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    expect_skew(&e, RACK, "test=test", 2, 2);
    sched_env_free(&e);
}
END_TEST

/* "should ignore unknown topology keys": a DoNotSchedule spread on a key nothing defines has no domain. */
START_TEST(unknown_key_do_not_schedule_waits)
{
    sched_env e;
    default_pool_env(&e, false, "");
    fx_pod_spread(fx_pod(e.c, "spread", 1000, FX_GI, "test=test"), "unknown", 1, false, "test=test");
    fx_pod(e.c, "plain", 1000, FX_GI, "");
    sched_env_run(&e);
    ck_assert_ptr_null(fx_claim_of(e.c, &e.r, "spread"));
    ck_assert_ptr_nonnull(fx_claim_of(e.c, &e.r, "plain"));
    ck_assert_msg(strstr(fx_reason(e.c, &e.r, "spread"), "unknown"), "reason: %s", fx_reason(e.c, &e.r, "spread"));
    sched_env_free(&e);
}
END_TEST

/* The same spread with ScheduleAnyway is relaxed away. */
START_TEST(unknown_key_schedule_anyway_is_relaxed)
{
    sched_env e;
    default_pool_env(&e, false, "");
    fx_pod_spread(fx_pod(e.c, "spread", 1000, FX_GI, "test=test"), "unknown", 1, true, "test=test");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_ptr_nonnull(fx_claim_of(e.c, &e.r, "spread"));
    sched_env_free(&e);
}
END_TEST

/* "should not violate pod anti-affinity (arch)": the second pod avoids the first one's arch. */
START_TEST(arch_anti_affinity)
{
    sched_env e;
    default_pool_env(&e, true, "");
    fx_pod_selector(fx_pod(e.c, "first", 2000, FX_GI, "security=s2"), ARCH "=arm64");
    fx_pod_affinity(fx_pod(e.c, "second", 1000, FX_GI, "security=s2"), ARCH, "security=s2", true, 0);
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    const ns_sched_claim *a = fx_claim_of(e.c, &e.r, "first"), *b = fx_claim_of(e.c, &e.r, "second");
    ck_assert_ptr_ne(a, b);
    ck_assert_str_eq(claim_value(a, ARCH), "arm64");
    ck_assert_str_eq(claim_value(b, ARCH), "amd64");
    sched_env_free(&e);
}
END_TEST

/* Anti-affinity on capacity type, declared by the pending pod and, inverted, by a pod already running. */
START_TEST(capacity_type_anti_affinity)
{
    sched_env e;
    default_pool_env(&e, false, "");
    fx_pod_selector(fx_pod(e.c, "first", 2000, FX_GI, "security=s2"), CT "=spot");
    fx_pod_affinity(fx_pod(e.c, "second", 1000, FX_GI, ""), CT, "security=s2", true, 0);
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_str_eq(claim_value(fx_claim_of(e.c, &e.r, "second"), CT), NS_CAPACITY_ON_DEMAND);
    sched_env_free(&e);
}
END_TEST

START_TEST(capacity_type_inverse_anti_affinity)
{
    sched_env e;
    default_pool_env(&e, false, "");
    fx_node(e.c, "node-1", 1000, 16 * FX_GI, 20, CT "=spot,topology.kubernetes.io/zone=z-a");
    ns_pod *bound = fx_pod(e.c, "bound", 1000, FX_GI, "");
    fx_pod_affinity(bound, CT, "app=x", true, 0);
    bound->node_name = strdup("node-1");
    ck_assert_ptr_nonnull(bound->node_name);
    fx_pod(e.c, "pending", 1000, FX_GI, "app=x");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_str_eq(claim_value(fx_claim_of(e.c, &e.r, "pending"), CT), NS_CAPACITY_ON_DEMAND);
    sched_env_free(&e);
}
END_TEST

/* Karpenter commits late: the first pod's claim may still be spot or on-demand, so its anti-affinity blocks both
 * ("should support pod anti-affinity with a zone topology", one pod per round). Required: one pod schedules. */
START_TEST(self_anti_affinity_required_blocks_every_open_domain)
{
    sched_env e;
    default_pool_env(&e, false, "");
    self_anti_pods(&e, 3, 1000, CT, 0);
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_uint_eq(e.r.n_unschedulable, 2);
    sched_env_free(&e);
}
END_TEST

/* Preferred: the others relax the term away and all schedule. */
START_TEST(self_anti_affinity_preferred_is_relaxed)
{
    sched_env e;
    default_pool_env(&e, false, "");
    self_anti_pods(&e, 3, 1000, CT, 10);
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    sched_env_free(&e);
}
END_TEST

/* The same on zone: five self-selecting pods with a preferred zone anti-affinity. The first claim may use any zone,
 * so it blocks all three; the other four relax the term and join it (Karpenter's Record of anti-affinity domains). */
START_TEST(zone_preferred_self_anti_affinity_is_relaxed)
{
    sched_env e;
    default_pool_env(&e, false, "");
    self_anti_pods(&e, 5, 500, NS_LABEL_ZONE, 10);
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_uint_eq(e.r.claims[0].n_pods, 5);
    sched_env_free(&e);
}
END_TEST

/* "should respect pod affinity (arch)": the pod joins the arch of the pod it selects; a preferred affinity to a pod
 * that exists nowhere is relaxed. */
START_TEST(arch_affinity_joins_and_preferred_relaxes)
{
    sched_env e;
    default_pool_env(&e, true, "");
    fx_pod_selector(fx_pod(e.c, "target", 2000, FX_GI, "security=s1"), ARCH "=arm64");
    fx_pod_affinity(fx_pod(e.c, "follower", 1000, FX_GI, ""), ARCH, "security=s1", false, 0);
    fx_pod_affinity(fx_pod(e.c, "hopeful", 900, FX_GI, ""), ARCH, "nothing=here", false, 10);
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_str_eq(claim_value(fx_claim_of(e.c, &e.r, "follower"), ARCH), "arm64");
    ck_assert_ptr_nonnull(fx_claim_of(e.c, &e.r, "hopeful"));
    sched_env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-topology-keys");
    TCase *spread = tcase_create("spread");
    tcase_add_test(spread, capacity_type_spread_balances);
    tcase_add_test(spread, capacity_type_spread_do_not_schedule);
    tcase_add_test(spread, capacity_type_spread_schedule_anyway);
    tcase_add_test(spread, arch_spread_counts_the_existing_node);
    tcase_add_test(spread, arch_spread_balances);
    tcase_add_test(spread, custom_type_label_spread_balances);
    tcase_add_test(spread, custom_pool_label_spread_balances);
    tcase_add_test(spread, unknown_key_do_not_schedule_waits);
    tcase_add_test(spread, unknown_key_schedule_anyway_is_relaxed);
    suite_add_tcase(s, spread);
    TCase *aff = tcase_create("affinity");
    tcase_add_test(aff, arch_anti_affinity);
    tcase_add_test(aff, capacity_type_anti_affinity);
    tcase_add_test(aff, capacity_type_inverse_anti_affinity);
    tcase_add_test(aff, self_anti_affinity_required_blocks_every_open_domain);
    tcase_add_test(aff, self_anti_affinity_preferred_is_relaxed);
    tcase_add_test(aff, zone_preferred_self_anti_affinity_is_relaxed);
    tcase_add_test(aff, arch_affinity_joins_and_preferred_relaxes);
    suite_add_tcase(s, aff);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
