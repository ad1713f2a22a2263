/* Scheduler constraints, each with a case where the naive answer is wrong. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/labels.h"
#include "sched_test_util.h"

START_TEST(packs_pods_and_lists_types_cheapest_first)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    fx_pod(e.c, "p0", 1000, FX_GI, "app=web");
    fx_pod(e.c, "p1", 1000, FX_GI, "app=web");
    fx_pod(e.c, "p2", 1000, FX_GI, "app=web");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 1);
    const ns_sched_claim *cl = &e.r.claims[0];
    ck_assert_uint_eq(cl->n_pods, 3);
    /* small (2 cpu) cannot hold three 1-cpu pods: the cheapest option is medium spot in the cheapest zone. */
    ck_assert_str_eq(cl->options[0].type->name, "medium");
    ck_assert_str_eq(cl->options[0].capacity_type, NS_CAPACITY_SPOT);
    ck_assert_str_eq(cl->options[0].zone, "z-a");
    for (size_t i = 1; i < cl->n_options; i++)
        ck_assert(cl->options[i - 1].price_per_hour <= cl->options[i].price_per_hour);
    for (size_t i = 0; i < cl->n_options; i++)
        ck_assert_str_ne(cl->options[i].type->name, "small");
    ck_assert_int_eq(cl->pod_requests.cpu_milli, 3000);
    sched_env_free(&e);
}
END_TEST

START_TEST(existing_node_used_before_a_new_claim)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    fx_node(e.c, "node-1", 4000, 8 * FX_GI, 20, "topology.kubernetes.io/zone=z-b");
    fx_pod(e.c, "a", 1000, FX_GI, "");
    fx_pod(e.c, "b", 1000, FX_GI, "");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 0);
    ck_assert_uint_eq(e.r.n_on_existing, 2);
    sched_env_free(&e);
}
END_TEST

START_TEST(bound_pods_use_node_capacity)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    fx_node(e.c, "node-1", 2000, 8 * FX_GI, 20, "topology.kubernetes.io/zone=z-b");
    ns_pod *bound = fx_pod(e.c, "running", 1500, FX_GI, "");
    bound->node_name = strdup("node-1");
    fx_pod(e.c, "new", 1000, FX_GI, "");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_on_existing, 0);
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_uint_eq(e.r.n_pending, 1);
    sched_env_free(&e);
}
END_TEST

START_TEST(hostname_anti_affinity_forces_separate_nodes)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    const char *names[] = {"w0", "w1", "w2"};
    for (int i = 0; i < 3; i++) {
        ns_pod *p = fx_pod(e.c, names[i], 100, 128 * FX_MI, "app=web");
        fx_pod_affinity(p, NS_LABEL_HOSTNAME, "app=web", true, 0);
    }
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 3);
    for (size_t i = 0; i < 3; i++) {
        ck_assert_uint_eq(e.r.claims[i].n_pods, 1);
        ck_assert_str_eq(e.r.claims[i].options[0].type->name, "small");
    }
    sched_env_free(&e);
}
END_TEST

START_TEST(anti_affinity_is_symmetric_for_pods_without_the_term)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    ns_pod *guard = fx_pod(e.c, "guard", 1500, FX_GI, "role=guard");
    fx_pod_affinity(guard, NS_LABEL_HOSTNAME, "app=noisy", true, 0);
    fx_pod(e.c, "noisy", 100, FX_GI, "app=noisy");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 2);
    ck_assert_ptr_ne(fx_claim_of(e.c, &e.r, "guard"), fx_claim_of(e.c, &e.r, "noisy"));
    sched_env_free(&e);
}
END_TEST

START_TEST(zone_spread_balances_three_zones)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    for (int i = 0; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof(name), "s%d", i);
        ns_pod *p = fx_pod(e.c, name, 500, FX_GI, "app=spread");
        fx_pod_spread(p, NS_LABEL_ZONE, 1, false, "app=spread");
    }
    sched_env_run(&e);
    int per_zone[3] = {0};
    for (size_t i = 0; i < e.r.n_claims; i++) {
        const char *z = fx_claim_zone(&e.r.claims[i]);
        ck_assert_ptr_nonnull(z);
        per_zone[z[2] - 'a'] += (int)e.r.claims[i].n_pods;
    }
    /* The naive answer puts all six in the cheapest zone z-a. */
    ck_assert_int_eq(per_zone[0], 2);
    ck_assert_int_eq(per_zone[1], 2);
    ck_assert_int_eq(per_zone[2], 2);
    sched_env_free(&e);
}
END_TEST

START_TEST(hostname_spread_caps_pods_per_node)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof(name), "h%d", i);
        ns_pod *p = fx_pod(e.c, name, 100, FX_GI, "app=h");
        fx_pod_spread(p, NS_LABEL_HOSTNAME, 2, false, "app=h");
    }
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 2);
    ck_assert_uint_eq(e.r.claims[0].n_pods, 2);
    ck_assert_uint_eq(e.r.claims[1].n_pods, 2);
    sched_env_free(&e);
}
END_TEST

START_TEST(zonal_self_affinity_keeps_one_zone)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof(name), "a%d", i);
        ns_pod *p = fx_pod(e.c, name, 3000, FX_GI, "app=db");
        fx_pod_affinity(p, NS_LABEL_ZONE, "app=db", false, 0);
    }
    sched_env_run(&e);
    ck_assert_uint_ge(e.r.n_claims, 2);
    const char *zone = fx_claim_zone(&e.r.claims[0]);
    ck_assert_ptr_nonnull(zone);
    for (size_t i = 0; i < e.r.n_claims; i++)
        ck_assert_str_eq(fx_claim_zone(&e.r.claims[i]), zone);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    sched_env_free(&e);
}
END_TEST

START_TEST(min_values_keeps_enough_types)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "node.kubernetes.io/instance-type Exists minValues=2");
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof(name), "m%d", i);
        fx_pod(e.c, name, 1000, 512 * FX_MI, "app=m");
    }
    sched_env_run(&e);
    /* Without minValues one claim would hold all five, leaving only "large". */
    ck_assert_uint_eq(e.r.n_claims, 2);
    for (size_t c = 0; c < e.r.n_claims; c++) {
        int distinct = 0;
        const char *seen[8];
        for (size_t i = 0; i < e.r.claims[c].n_options; i++) {
            const char *n = e.r.claims[c].options[i].type->name;
            bool dup = false;
            for (int j = 0; j < distinct; j++)
                dup = dup || strcmp(seen[j], n) == 0;
            if (!dup)
                seen[distinct++] = n;
        }
        ck_assert_int_ge(distinct, 2);
    }
    sched_env_free(&e);
}
END_TEST

START_TEST(limits_stop_a_pool_then_the_next_weight_takes_over)
{
    sched_env e;
    sched_env_init(&e, true);
    ns_nodepool *a = fx_pool(e.c, "a", 10, "");
    a->limits.cpu = true;
    a->limits.max.cpu_milli = 8000;
    fx_pool(e.c, "b", 1, "");
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "l%d", i);
        fx_pod(e.c, name, 3000, FX_GI, "app=l");
    }
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 2);
    ck_assert_str_eq(e.c->nodepools[e.r.claims[0].nodepool]->meta.name, "a");
    ck_assert_uint_eq(e.r.claims[0].n_pods, 2);
    ck_assert_str_eq(e.c->nodepools[e.r.claims[1].nodepool]->meta.name, "b");
    sched_env_free(&e);
}
END_TEST

START_TEST(limits_reason_names_the_limit)
{
    sched_env e;
    sched_env_init(&e, true);
    ns_nodepool *a = fx_pool(e.c, "a", 10, "");
    a->limits.cpu = true;
    a->limits.max.cpu_milli = 4000;
    fx_pod(e.c, "big", 6000, FX_GI, "");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_unschedulable, 1);
    const char *why = fx_reason(e.c, &e.r, "big");
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, "limits") && strstr(why, "cpu"), "reason: %s", why);
    sched_env_free(&e);
}
END_TEST

START_TEST(daemonset_overhead_makes_a_type_too_small)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    fx_daemonset(e.c, "agent", 1000, 256 * FX_MI);
    fx_pod(e.c, "p", 1500, FX_GI, "");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 1);
    /* small has 2 cpu, enough for the pod alone but not with the agent's 1 cpu. */
    ck_assert_str_eq(e.r.claims[0].options[0].type->name, "medium");
    ck_assert_int_eq(e.r.claims[0].daemon_overhead.cpu_milli, 1000);
    sched_env_free(&e);
}
END_TEST

/* Karpenter ignores the known ephemeral taints only on a managed node not initialized yet (StateNode.Taints); the
 * engine's view drops them there, so a node the scheduler sees still carrying one (unmanaged, or initialized) keeps
 * pods that do not tolerate it off. */
START_TEST(ephemeral_taints_apply_on_nodes_the_view_keeps)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    ns_node *n = fx_node(e.c, "node-1", 4000, 8 * FX_GI, 20, "topology.kubernetes.io/zone=z-b");
    n->taints = calloc(1, sizeof(ns_taint));
    ck_assert_ptr_nonnull(n->taints);
    n->taints[0] = (ns_taint){strdup("node.cloudprovider.kubernetes.io/uninitialized"), strdup("true"),
                              strdup("NoSchedule")};
    n->n_taints = 1;
    fx_pod(e.c, "p", 500, FX_GI, "");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_on_existing, 0);
    ck_assert_ptr_nonnull(fx_claim_of(e.c, &e.r, "p"));
    sched_env_free(&e);
}
END_TEST

START_TEST(host_port_conflict_needs_two_nodes)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    fx_pod_host_port(fx_pod(e.c, "p1", 100, FX_MI, "app=x"), 8080);
    fx_pod_host_port(fx_pod(e.c, "p2", 100, FX_MI, "app=x"), 8080);
    fx_pod_host_port(fx_pod(e.c, "p3", 100, FX_MI, "app=y"), 9090);
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 2);
    ck_assert_ptr_ne(fx_claim_of(e.c, &e.r, "p1"), fx_claim_of(e.c, &e.r, "p2"));
    sched_env_free(&e);
}
END_TEST

START_TEST(taints_route_pods_by_toleration)
{
    sched_env e;
    sched_env_init(&e, true);
    ns_nodepool *gpu = fx_pool(e.c, "dedicated", 100, "");
    fx_pool_taint(gpu, "dedicated", "team-a", NS_EFFECT_NO_SCHEDULE);
    fx_pool(e.c, "general", 0, "");
    fx_pod(e.c, "plain", 500, FX_GI, "");
    fx_pod_tolerate(fx_pod(e.c, "tolerant", 600, FX_GI, ""), "dedicated", NULL);
    sched_env_run(&e);
    ck_assert_str_eq(e.c->nodepools[fx_claim_of(e.c, &e.r, "plain")->nodepool]->meta.name, "general");
    ck_assert_str_eq(e.c->nodepools[fx_claim_of(e.c, &e.r, "tolerant")->nodepool]->meta.name, "dedicated");
    sched_env_free(&e);
}
END_TEST

START_TEST(untolerated_taint_is_the_reason)
{
    sched_env e;
    sched_env_init(&e, true);
    ns_nodepool *np = fx_pool(e.c, "only", 0, "");
    fx_pool_taint(np, "dedicated", "ml", NS_EFFECT_NO_SCHEDULE);
    fx_pod(e.c, "p", 500, FX_GI, "");
    sched_env_run(&e);
    const char *why = fx_reason(e.c, &e.r, "p");
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, "dedicated=ml:NoSchedule") != NULL, "reason: %s", why);
    sched_env_free(&e);
}
END_TEST

START_TEST(gpu_pods_get_gpu_types_only)
{
    sched_env e;
    sched_env_init(&e, true);
    ns_itype *g = fx_type(&e.set, "gpu1", 4000, 16 * FX_GI, 20, "kubernetes.io/arch=amd64", "z-a:on-demand:1.0");
    fx_type_extended(g, "nvidia.com/gpu", 1);
    fx_pool(e.c, "default", 0, "");
    fx_pod_extended(fx_pod(e.c, "train", 1000, FX_GI, ""), "nvidia.com/gpu", 1);
    /* Karpenter offers the GPU pod to the web pod's claim (the only planned one) when a GPU type can hold both;
     * 3500m + 1000m does not fit the 4-cpu GPU type, so the two claims stay apart. */
    fx_pod(e.c, "web", 3500, FX_GI, "");
    sched_env_run(&e);
    const ns_sched_claim *t = fx_claim_of(e.c, &e.r, "train");
    ck_assert_ptr_nonnull(t);
    for (size_t i = 0; i < t->n_options; i++)
        ck_assert_str_eq(t->options[i].type->name, "gpu1");
    const ns_sched_claim *w = fx_claim_of(e.c, &e.r, "web");
    ck_assert_ptr_nonnull(w);
    ck_assert_str_ne(w->options[0].type->name, "gpu1");
    sched_env_free(&e);
}
END_TEST

START_TEST(capacity_type_requirement_excludes_spot)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "od", 0, "karpenter.sh/capacity-type In on-demand");
    fx_pod(e.c, "p", 500, FX_GI, "");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 1);
    for (size_t i = 0; i < e.r.claims[0].n_options; i++)
        ck_assert_str_eq(e.r.claims[0].options[i].capacity_type, NS_CAPACITY_ON_DEMAND);
    sched_env_free(&e);
}
END_TEST

START_TEST(max_pods_from_kubelet_settings)
{
    sched_env e;
    sched_env_init(&e, true);
    ns_nodepool *np = fx_pool(e.c, "default", 0, "");
    np->kubelet.present = true;
    np->kubelet.has_max_pods = true;
    np->kubelet.max_pods = 2;
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "t%d", i);
        fx_pod(e.c, name, 10, FX_MI, "app=t");
    }
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 2);
    sched_env_free(&e);
}
END_TEST

START_TEST(windows_pods_land_on_their_build)
{
    sched_env e;
    sched_env_init(&e, true);
    ns_itype_set w2019 = {0}, w2022 = {0};
    fx_type(&w2019, "m5.large", 2000, 8 * FX_GI, 20,
            "kubernetes.io/os=windows,kubernetes.io/arch=amd64,node.kubernetes.io/windows-build=10.0.17763",
            "z-a:on-demand:0.2");
    fx_type(&w2022, "m5.large", 2000, 8 * FX_GI, 20,
            "kubernetes.io/os=windows,kubernetes.io/arch=amd64,node.kubernetes.io/windows-build=10.0.20348",
            "z-a:on-demand:0.2");
    fx_pool(e.c, "windows2019", 0, "kubernetes.io/os In windows;karpenter.sh/capacity-type In on-demand");
    fx_pool(e.c, "windows2022", 0, "kubernetes.io/os In windows;karpenter.sh/capacity-type In on-demand");
    fx_pod_selector(fx_pod(e.c, "iis-2022", 500, FX_GI, ""),
                    "kubernetes.io/os=windows,node.kubernetes.io/windows-build=10.0.20348");
    fx_pod_selector(fx_pod(e.c, "iis-2019", 400, FX_GI, ""),
                    "kubernetes.io/os=windows,node.kubernetes.io/windows-build=10.0.17763");
    const ns_itype_set *sets[] = {&w2019, &w2022};
    fx_run(e.c, NULL, sets, &e.r);
    ck_assert_str_eq(e.c->nodepools[fx_claim_of(e.c, &e.r, "iis-2022")->nodepool]->meta.name, "windows2022");
    ck_assert_str_eq(e.c->nodepools[fx_claim_of(e.c, &e.r, "iis-2019")->nodepool]->meta.name, "windows2019");
    ns_itype_set_free(&w2019);
    ns_itype_set_free(&w2022);
    sched_env_free(&e);
}
END_TEST

START_TEST(unsatisfiable_requirement_is_named)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    fx_pod_selector(fx_pod(e.c, "arm", 500, FX_GI, ""), "kubernetes.io/arch=arm64");
    sched_env_run(&e);
    const char *why = fx_reason(e.c, &e.r, "arm");
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, "kubernetes.io/arch") != NULL, "reason: %s", why);
    sched_env_free(&e);
}
END_TEST

START_TEST(oversized_pod_reason_names_the_resource)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    fx_pod(e.c, "huge", 2000, 64 * FX_GI, "");
    sched_env_run(&e);
    const char *why = fx_reason(e.c, &e.r, "huge");
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, "memory") != NULL, "reason: %s", why);
    sched_env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-constraints");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, packs_pods_and_lists_types_cheapest_first);
    tcase_add_test(tc, existing_node_used_before_a_new_claim);
    tcase_add_test(tc, bound_pods_use_node_capacity);
    tcase_add_test(tc, hostname_anti_affinity_forces_separate_nodes);
    tcase_add_test(tc, anti_affinity_is_symmetric_for_pods_without_the_term);
    tcase_add_test(tc, zone_spread_balances_three_zones);
    tcase_add_test(tc, hostname_spread_caps_pods_per_node);
    tcase_add_test(tc, zonal_self_affinity_keeps_one_zone);
    tcase_add_test(tc, min_values_keeps_enough_types);
    tcase_add_test(tc, limits_stop_a_pool_then_the_next_weight_takes_over);
    tcase_add_test(tc, limits_reason_names_the_limit);
    tcase_add_test(tc, daemonset_overhead_makes_a_type_too_small);
    tcase_add_test(tc, ephemeral_taints_apply_on_nodes_the_view_keeps);
    tcase_add_test(tc, host_port_conflict_needs_two_nodes);
    tcase_add_test(tc, taints_route_pods_by_toleration);
    tcase_add_test(tc, untolerated_taint_is_the_reason);
    tcase_add_test(tc, gpu_pods_get_gpu_types_only);
    tcase_add_test(tc, capacity_type_requirement_excludes_spot);
    tcase_add_test(tc, max_pods_from_kubelet_settings);
    tcase_add_test(tc, windows_pods_land_on_their_build);
    tcase_add_test(tc, unsatisfiable_requirement_is_named);
    tcase_add_test(tc, oversized_pod_reason_names_the_resource);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
