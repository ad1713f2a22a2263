/*
 * Self-selecting pod affinity (issue 9 rule 6), from Karpenter's TopologyGroup.nextDomainAffinity and its topology
 * suite (pkg/controllers/provisioning/scheduling/topology_test.go): a pod whose required affinity selects its own
 * labels starts a new domain when no matching pod sits in a domain its own requirements allow
 * (anyCompatiblePodDomain over the pod's domains), not only when no matching pod exists at all.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_test_util.h"

static ns_pod *self_affine(sched_env *e, const char *name, const char *key, const char *zones)
{
    ns_pod *p = fx_pod(e->c, name, 500, FX_GI, "security=s1");
    fx_pod_affinity(p, key, "security=s1", false, 0);
    if (zones)
        fx_pod_required(p, zones);
    return p;
}

/* A matching pod already runs in z-a; pods that may only use z-b start their own domain there, all together. */
static void matching_pod_in_z_a(sched_env *e)
{
    fx_node(e->c, "node-a", 8000, 16 * FX_GI, 20,
            "topology.kubernetes.io/zone=z-a,kubernetes.io/hostname=node-a");
    ns_pod *bound = fx_pod(e->c, "bound", 100, FX_MI, "security=s1");
    bound->node_name = strdup("node-a");
    ck_assert_ptr_nonnull(bound->node_name);
}

/* "should allow two nodes to be created when two pods with matching affinities have incompatible selectors" */
START_TEST(incompatible_selectors_make_two_domains)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    self_affine(&e, "pod-b", "topology.kubernetes.io/zone", "topology.kubernetes.io/zone In z-b");
    self_affine(&e, "pod-c", "topology.kubernetes.io/zone", "topology.kubernetes.io/zone In z-c");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_uint_eq(e.r.n_claims, 2);
    ck_assert_str_eq(fx_claim_zone(fx_claim_of(e.c, &e.r, "pod-b")), "z-b");
    ck_assert_str_eq(fx_claim_zone(fx_claim_of(e.c, &e.r, "pod-c")), "z-c");
    sched_env_free(&e);
}
END_TEST

START_TEST(matching_pod_outside_the_pods_zones_starts_a_domain)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    matching_pod_in_z_a(&e);
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "pod-%d", i);
        self_affine(&e, name, "topology.kubernetes.io/zone", "topology.kubernetes.io/zone In z-b");
    }
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_uint_eq(e.r.claims[0].n_pods, 3);
    ck_assert_str_eq(fx_claim_zone(&e.r.claims[0]), "z-b");
    sched_env_free(&e);
}
END_TEST

/* Pods that may use z-a join the matching pod's zone instead of starting one. */
START_TEST(matching_pod_inside_the_pods_zones_is_joined)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    matching_pod_in_z_a(&e);
    e.c->nodes[0]->allocatable.cpu_milli = e.c->nodes[0]->capacity.cpu_milli = 100; /* full: a claim must join z-a */
    self_affine(&e, "pod", "topology.kubernetes.io/zone", "topology.kubernetes.io/zone In z-a|z-b");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_str_eq(fx_claim_zone(&e.r.claims[0]), "z-a");
    sched_env_free(&e);
}
END_TEST

/* "should respect self pod affinity for first empty topology domain only (hostname/constrained zones)": on hostname
 * the pod's own domains are every host, so the matching pod on node-a keeps new nodes from starting one. */
START_TEST(hostname_matching_pod_elsewhere_blocks)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    matching_pod_in_z_a(&e);
    for (int i = 0; i < 10; i++) {
        char name[16];
        snprintf(name, sizeof(name), "pod-%d", i);
        self_affine(&e, name, "kubernetes.io/hostname", "topology.kubernetes.io/zone In z-b|z-c");
    }
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 0);
    ck_assert_uint_eq(e.r.n_unschedulable, 10);
    sched_env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-self-affinity");
    TCase *tc = tcase_create("self");
    tcase_add_test(tc, incompatible_selectors_make_two_domains);
    tcase_add_test(tc, matching_pod_outside_the_pods_zones_starts_a_domain);
    tcase_add_test(tc, matching_pod_inside_the_pods_zones_is_joined);
    tcase_add_test(tc, hostname_matching_pod_elsewhere_blocks);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
