/* Consolidation with cost packing and with commitments, through the engine: cost mode replaces nodes by several
 * cheaper claims where Karpenter's rule (at most one new claim) does nothing; a failed replacement takes the others
 * launched with it away and leaves the candidates running; a node a commitment covers is priced at its effective
 * price, and the nodes a simulation removes free their commitments for the replacement. Catalogs are written by the
 * tests; what the replacements hold is checked with the tests' own arithmetic. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock/ns_clock.h"
#include "cost/commitments.h"
#include "disruption_fixture.h"
#include "errors/ns_error.h"
#include "model/labels.h"

/* general.2xl holds two pods of each shape; compute.2xl two cpu pods and one memory pod; memory.xl two memory pods
 * (or one of each). Karpenter's greedy packing puts two and two on a general.2xl; the cheapest set for the same
 * eight pods is two compute.2xl (2 cpu + 1 memory pods each) and one memory.xl (2 memory pods): 0.76 < 1.00. */
static const char MIXED_CATALOG[] =
    "[{\"name\": \"general.2xl\", \"vcpu\": 8, \"memory_mib\": 32768, \"arch\": \"amd64\",\n"
    "  \"offerings\": [{\"zone\": \"us-west-2a\", \"capacity_type\": \"on-demand\", \"price\": 0.50}]},\n"
    " {\"name\": \"compute.2xl\", \"vcpu\": 8, \"memory_mib\": 16384, \"arch\": \"amd64\",\n"
    "  \"offerings\": [{\"zone\": \"us-west-2a\", \"capacity_type\": \"on-demand\", \"price\": 0.28}]},\n"
    " {\"name\": \"memory.xl\", \"vcpu\": 4, \"memory_mib\": 32768, \"arch\": \"amd64\",\n"
    "  \"offerings\": [{\"zone\": \"us-west-2a\", \"capacity_type\": \"on-demand\", \"price\": 0.20}]}]\n";

static const char MIXED[] =
    DFX_CLASS("{}") DFX_POOL("", DFX_CAPACITY("on-demand"),
                             "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 30s\n"
                             "    budgets: [{nodes: '100%'}]\n") "---\n"
    DFX_DEPLOY("cpu", 4, "3", "1Gi", "") DFX_DEPLOY("mem", 4, "500m", "10Gi", "");

static char catalog_path[64];

static void write_catalog(const char *json)
{
    snprintf(catalog_path, sizeof(catalog_path), "/tmp/disruption-cost-XXXXXX");
    int fd = mkstemp(catalog_path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_ge(fputs(json, f), 0);
    ck_assert_int_eq(fclose(f), 0);
}

/* The engine over yaml and the catalog, with the disruption controller; commitments may be NULL. */
static efx *engine(const char *yaml, const char *catalog, ns_sched_packing packing, const ns_commitments *commitments)
{
    write_catalog(catalog);
    ns_engine_config cfg;
    ns_engine_config_default(&cfg);
    cfg.packing = packing;
    cfg.commitments = commitments;
    efx *x = efx_new_catalog(yaml, NULL, &cfg, catalog_path);
    ns_disruption_config dc = {.spot_to_spot = false};
    ck_assert_msg(ns_disruption_register(x->engine, &dc) == NS_OK, "registering disruption: %s", ns_error_message());
    return x;
}

static void done(efx *x)
{
    efx_free(x);
    unlink(catalog_path);
}

/* The controller restarted with another packing mode, as an operator switching PACKING would. */
static void restart_with(efx *x, ns_sched_packing packing)
{
    x->cfg.packing = packing;
    efx_restart(x);
    ns_disruption_config dc = {.spot_to_spot = false};
    ck_assert_msg(ns_disruption_register(x->engine, &dc) == NS_OK, "registering disruption: %s", ns_error_message());
}

static double claim_price(const ns_nodeclaim *c)
{
    const char *v = ns_labels_get(&c->meta.annotations, NS_ANNOTATION_PRICE);
    ck_assert_ptr_nonnull(v);
    return strtod(v, NULL);
}

/* Karpenter's packing of MIXED: two general.2xl with two pods of each deployment; their names into names. */
static efx *mixed_on_general(ns_sched_packing packing, char names[2][64])
{
    efx *x = engine(MIXED, MIXED_CATALOG, NS_SCHED_PACKING_KARPENTER, NULL);
    dfx_settle(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    for (size_t i = 0; i < 2; i++) {
        ck_assert_str_eq(dfx_label(efx_claim(x, i), NS_LABEL_INSTANCE_TYPE), "general.2xl");
        ck_assert_uint_eq(efx_pods_on(x, efx_claim(x, i)->meta.name), 4);
        snprintf(names[i], 64, "%s", efx_claim(x, i)->meta.name);
    }
    if (packing != NS_SCHED_PACKING_KARPENTER)
        restart_with(x, packing);
    return x;
}

START_TEST(test_karpenter_mode_keeps_the_general_nodes)
{
    char names[2][64];
    efx *x = mixed_on_general(NS_SCHED_PACKING_KARPENTER, names);
    efx_run_for(x, EFX_S(300));
    /* Alone, each node's pods need a general.2xl again (not cheaper); together they need two new claims. */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTION_INFO, NULL), 0);
    ck_assert_uint_ge(efx_count(x, NS_DECISION_UNCONSOLIDATABLE, "Can't replace with a cheaper node"), 1);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    ck_assert_str_eq(efx_claim(x, 0)->meta.name, names[0]);
    ck_assert_str_eq(efx_claim(x, 1)->meta.name, names[1]);
    done(x);
}
END_TEST

START_TEST(test_cost_mode_replaces_two_nodes_by_three_cheaper)
{
    char names[2][64];
    efx *x = mixed_on_general(NS_SCHED_PACKING_COST, names);
    efx_run_for(x, EFX_S(300));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 1);
    const ns_decision *d = dfx_nth_method(x, NS_DECISION_DISRUPTING, "underutilized", 0);
    char both[140];
    snprintf(both, sizeof(both), "%s,%s", names[0], names[1]);
    ck_assert_msg(dfx_same_names(d->nodeclaims, both), "disrupted %s", d->nodeclaims);
    const ns_decision *info = efx_first(x, NS_DECISION_DISRUPTION_INFO, "consolidation-type=multi");
    ck_assert_ptr_nonnull(info);
    ck_assert_msg(strstr(info->detail, "decision=replace") && strstr(info->detail, "replacement-node-count=3"), "%s",
                  info->detail);
    ck_assert(dfx_settled(x));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, names[0]));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, names[1]));
    /* Every pod moved to the new nodes, each node holds what runs on it, and the three cost less than the two. */
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 3);
    double total = 0;
    size_t pods = 0, compute = 0, memory = 0;
    for (size_t i = 0; i < x->cluster->n_nodeclaims; i++) {
        const ns_nodeclaim *c = efx_claim(x, i);
        const ns_node *n = efx_node_of(x, c);
        int64_t cpu = 0, mem = 0;
        for (size_t p = 0; p < x->cluster->n_pods; p++) {
            const ns_pod *pod = x->cluster->pods[p];
            if (!pod->node_name || strcmp(pod->node_name, n->meta.name) != 0)
                continue;
            cpu += pod->requests.cpu_milli;
            mem += pod->requests.memory_bytes;
            pods++;
        }
        ck_assert_int_le(cpu, n->allocatable.cpu_milli);
        ck_assert_int_le(mem, n->allocatable.memory_bytes);
        total += claim_price(c);
        const char *type = dfx_label(c, NS_LABEL_INSTANCE_TYPE);
        compute += strcmp(type, "compute.2xl") == 0;
        memory += strcmp(type, "memory.xl") == 0;
    }
    ck_assert_uint_eq(pods, 8);
    ck_assert_uint_eq(compute, 2);
    ck_assert_uint_eq(memory, 1);
    ck_assert_double_eq_tol(total, 2 * 0.28 + 0.20, 1e-9);
    ck_assert_double_lt(total, 2 * 0.50);
    /* The candidates were drained only once all three replacements were initialized. */
    const ns_decision *evict = efx_first(x, NS_DECISION_EVICTED_POD, NULL);
    ck_assert_ptr_nonnull(evict);
    for (size_t i = 0; i < 3; i++) {
        const ns_decision *init = efx_first(x, NS_DECISION_INITIALIZED_NODECLAIM, efx_claim(x, i)->meta.name);
        ck_assert_ptr_nonnull(init);
        ck_assert_int_le(init->time_ms, evict->time_ms);
    }
    done(x);
}
END_TEST

static bool decided(efx *x)
{
    return efx_count(x, NS_DECISION_DISRUPTION_INFO, "awaiting validation") > 0;
}

START_TEST(test_failed_replacement_takes_the_others_away)
{
    char names[2][64];
    efx *x = mixed_on_general(NS_SCHED_PACKING_COST, names);
    ck_assert(efx_run_until(x, decided, EFX_S(120)));
    const ns_decision *d = efx_first(x, NS_DECISION_DISRUPTION_INFO, "awaiting validation");
    /* The memory.xl replacement may launch as nothing else (its share of the saving is below compute.2xl's price). */
    ck_assert_msg(strstr(d->detail, ";memory.xl") || strstr(d->detail, "=memory.xl;"), "%s", d->detail);
    efx_run_for(x, d->time_ms + x->cfg.stabilization_ms - x->cfg.tick_ms - efx_now());
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    ns_clock_advance(x->cfg.tick_ms);
    ck_assert_int_eq(ns_engine_refresh_types(x->engine), NS_OK);
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_INSUFFICIENT_CAPACITY, .instance_type = "memory.xl"};
    ck_assert_int_eq(ns_plugin_inject_fault(x->plugin, &f), NS_OK);
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 1);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 4); /* the candidates and the two compute.2xl; memory.xl is gone */
    efx_step(x);
    /* Both candidates abandoned, untainted, still running their pods; the compute.2xl replacements are deleted. */
    for (size_t i = 0; i < 2; i++) {
        ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTION_ABORTED, names[i]), 1);
        const ns_nodeclaim *c = ns_cluster_find_nodeclaim(x->cluster, names[i]);
        ck_assert_ptr_nonnull(c);
        ck_assert(!ns_claim_deleting(c));
        ck_assert_ptr_null(ns_labels_get(&c->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD));
        ck_assert_ptr_null(ns_labels_get(&c->meta.annotations, NS_ANNOTATION_DISRUPTION_ROLLBACK));
        ck_assert(!dfx_tainted(efx_node_of(x, c)));
        ck_assert_uint_eq(efx_pods_on(x, names[i]), 4);
    }
    for (size_t i = 0; i < x->cluster->n_nodeclaims; i++) {
        const ns_nodeclaim *c = efx_claim(x, i);
        ck_assert(strcmp(c->meta.name, names[0]) == 0 || strcmp(c->meta.name, names[1]) == 0 || ns_claim_deleting(c));
    }
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, NULL), 0);
    /* Terminated: no orphan left behind. */
    efx_run_for(x, EFX_S(60));
    ck_assert_ptr_nonnull(ns_cluster_find_nodeclaim(x->cluster, names[0]));
    ck_assert_ptr_nonnull(ns_cluster_find_nodeclaim(x->cluster, names[1]));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 1);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    done(x);
}
END_TEST

/* ---- Commitments */

static const char ONE_POD_POOL[] =
    DFX_CLASS("{}") DFX_POOL("", DFX_CAPACITY("on-demand"),
                             "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 30s\n"
                             "    budgets: [{nodes: '100%'}]\n") "---\n" DFX_DEPLOY("a", 2, "1500m", "1Gi", "");

/* Two pods of 1.5 cpu need ri.xlarge, launched at `covered` (its price under the commitments of `text`, parsed into
 * *c); once one pod is gone, the node is replaceable by a 2-cpu type. Runs five minutes past that. */
static efx *one_pod_left(const char *catalog, const char *text, double covered, ns_commitments *c, char *name,
                         size_t len)
{
    ck_assert_msg(ns_commitments_parse("commitments.yaml", text, strlen(text), c) == NS_OK, "%s", ns_error_message());
    efx *x = engine(ONE_POD_POOL, catalog, NS_SCHED_PACKING_KARPENTER, c);
    dfx_settle(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    ck_assert_str_eq(dfx_label(efx_claim(x, 0), NS_LABEL_INSTANCE_TYPE), "ri.xlarge");
    ck_assert_double_eq_tol(claim_price(efx_claim(x, 0)), covered, 1e-9);
    snprintf(name, len, "%s", efx_claim(x, 0)->meta.name);
    dfx_scale(x, "a", 1);
    efx_run_for(x, EFX_S(300));
    return x;
}

START_TEST(test_covered_node_kept_against_cheaper_list_price)
{
    /* ri.xlarge lists at 0.20 but a reserved instance covers it at 0.05; od.large (0.12) is out of its scope. */
    static const char catalog[] =
        "[{\"name\": \"ri.xlarge\", \"vcpu\": 4, \"memory_mib\": 16384, \"arch\": \"amd64\",\n"
        "  \"offerings\": [{\"zone\": \"us-west-2a\", \"capacity_type\": \"on-demand\", \"price\": 0.20}]},\n"
        " {\"name\": \"od.large\", \"vcpu\": 2, \"memory_mib\": 8192, \"arch\": \"amd64\",\n"
        "  \"offerings\": [{\"zone\": \"us-west-2a\", \"capacity_type\": \"on-demand\", \"price\": 0.12}]}]\n";
    ns_commitments c = {0};
    char name[64];
    efx *x = one_pod_left(catalog,
                          "commitments:\n  - {name: ri-1, kind: instances, amount: 1, effectivePrice: 0.05, "
                          "instanceType: ri.xlarge}\n",
                          0.05, &c, name, sizeof(name));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    ck_assert_uint_ge(efx_count(x, NS_DECISION_UNCONSOLIDATABLE, "Can't replace with a cheaper node"), 1);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    ck_assert_str_eq(efx_claim(x, 0)->meta.name, name);
    done(x);
    ns_commitments_free(&c);
}
END_TEST

START_TEST(test_removed_node_frees_its_commitment)
{
    /* Half off every ri.* instance, one instance: ri.xlarge costs 0.10 covered. With the candidate's reservation
     * free, ri.large costs 0.05 covered, below 0.10; od.large (0.12) and ri.large's own 0.10 are not. */
    static const char catalog[] =
        "[{\"name\": \"ri.xlarge\", \"vcpu\": 4, \"memory_mib\": 16384, \"arch\": \"amd64\",\n"
        "  \"offerings\": [{\"zone\": \"us-west-2a\", \"capacity_type\": \"on-demand\", \"price\": 0.20}]},\n"
        " {\"name\": \"ri.large\", \"vcpu\": 2, \"memory_mib\": 8192, \"arch\": \"amd64\",\n"
        "  \"offerings\": [{\"zone\": \"us-west-2a\", \"capacity_type\": \"on-demand\", \"price\": 0.10}]},\n"
        " {\"name\": \"od.large\", \"vcpu\": 2, \"memory_mib\": 8192, \"arch\": \"amd64\",\n"
        "  \"offerings\": [{\"zone\": \"us-west-2a\", \"capacity_type\": \"on-demand\", \"price\": 0.12}]}]\n";
    ns_commitments c = {0};
    char name[64];
    efx *x = one_pod_left(catalog,
                          "commitments:\n  - {name: ri-any, kind: instances, amount: 1, discount: 0.5, "
                          "instanceType: 'ri.*'}\n",
                          0.10, &c, name, sizeof(name));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 1);
    const ns_decision *info = efx_first(x, NS_DECISION_DISRUPTION_INFO, "consolidation-type=single");
    ck_assert_ptr_nonnull(info);
    /* ri.large alone: od.large is not below the covered price, nor would ri.large be at its own */
    const char *types = strstr(info->detail, "replacement-instance-types=");
    ck_assert_msg(strstr(info->detail, "decision=replace") && types, "%s", info->detail);
    ck_assert_str_eq(types, "replacement-instance-types=ri.large");
    ck_assert(dfx_settled(x));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, name));
    ck_assert_str_eq(dfx_label(efx_claim(x, 0), NS_LABEL_INSTANCE_TYPE), "ri.large");
    /* The reserved instance now covers the replacement. */
    ns_commit_ledger *l = NULL;
    ck_assert_int_eq(ns_engine_commit_ledger(x->engine, &l), NS_OK);
    const ns_commit_usage *u = ns_commit_ledger_usage(l, 0);
    ck_assert_double_eq_tol(u->used, 1, 1e-9);
    ck_assert_uint_eq(u->nodes, 1);
    ns_commit_ledger_free(l);
    done(x);
    ns_commitments_free(&c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("disruption-cost");
    TCase *tc = tcase_create("cost");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_karpenter_mode_keeps_the_general_nodes);
    tcase_add_test(tc, test_cost_mode_replaces_two_nodes_by_three_cheaper);
    tcase_add_test(tc, test_failed_replacement_takes_the_others_away);
    tcase_add_test(tc, test_covered_node_kept_against_cheaper_list_price);
    tcase_add_test(tc, test_removed_node_frees_its_commitment);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
