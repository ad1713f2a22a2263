/* Node repair (rule 12), written from Karpenter's pkg/controllers/node/health and its suite: the sim provider's
 * policies (Ready False or Unknown for 30 minutes), a node deleted once its condition has held past the toleration
 * from the condition's last transition and not before, whatever the disruption budgets and do-not-disrupt pods say;
 * its pods forced out at once through the termination timestamp annotation, which overrides a later one from a
 * terminationGracePeriod and keeps an earlier one; the circuit breaker at 20% of a NodePool's nodes rounded up; and
 * nothing at all with the NodeRepair gate off. The invariants are checked after every step. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock/ns_clock.h"
#include "disruption_fixture.h"
#include "model/labels.h"

#define REQS DFX_CAPACITY("on-demand") DFX_TYPES("m5.xlarge")
#define TOLERATION EFX_S(30 * 60)

/* n nodes of the pool "default", one pod of "spread" each; budgets: lines under spec.disruption. */
static efx *nodes(size_t n, const char *budgets, bool gate)
{
    char yaml[4096], deploy[1024];
    snprintf(deploy, sizeof(deploy),
             "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: spread}\nspec:\n  replicas: %zu\n"
             "  selector: {matchLabels: {app: spread}}\n  template:\n    metadata: {labels: {app: spread}}\n"
             "    spec:\n%s      containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n",
             n, DFX_SPREAD("spread"));
    snprintf(yaml, sizeof(yaml), "%s%s%s---\n%s", DFX_CLASS("{}"),
             DFX_POOL("", REQS, "    consolidateAfter: Never\n"), budgets ? budgets : "", deploy);
    ns_engine_config cfg;
    ns_engine_config_default(&cfg);
    cfg.node_repair = gate;
    cfg.tick_ms = EFX_S(5); /* an hour of every-tick steps over ten nodes stays quick under the sanitizers */
    efx *x = dfx_new(yaml, &cfg, false);
    dfx_settle(x, EFX_S(180));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, n);
    return x;
}

/* The kubelet of the i-th claim's node stops: Ready turns Unknown now, as the node lifecycle controller reports. */
static char *stop_kubelet(efx *x, size_t i)
{
    ns_node *n = efx_node_of(x, efx_claim(x, i));
    n->ready = false;
    n->ready_unknown = true;
    n->ready_since_ms = efx_now();
    return strdup(efx_claim(x, i)->meta.name);
}

static ns_nodeclaim *claim_named(efx *x, const char *name)
{
    return ns_cluster_find_nodeclaim(x->cluster, name);
}

static bool deleting(efx *x, const char *name)
{
    const ns_nodeclaim *c = claim_named(x, name);
    return !c || ns_claim_deleting(c);
}

START_TEST(unhealthy_node_is_deleted_at_its_toleration_and_not_before)
{
    efx *x = nodes(1, NULL, true);
    int64_t stopped = efx_now();
    char *name = stop_kubelet(x, 0);
    /* Karpenter's "should not delete node when health duration is not reached" */
    efx_run_for(x, TOLERATION - EFX_S(60));
    ck_assert(!deleting(x, name));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNHEALTHY_NODE, NULL), 0);
    efx_run_for(x, EFX_S(61));
    const ns_decision *d = efx_first(x, NS_DECISION_UNHEALTHY_NODE, name);
    ck_assert_ptr_nonnull(d);
    /* deleted at the first tick at or after lastTransitionTime + toleration, event-driven as every tick */
    ck_assert_int_ge(d->time_ms, stopped + TOLERATION);
    ck_assert_int_lt(d->time_ms, stopped + TOLERATION + x->cfg.tick_ms);
    ck_assert_str_eq(d->method, "repair");
    ck_assert_ptr_nonnull(strstr(d->reason, "Ready has been Unknown"));
    /* a replacement comes through provisioning, the broken node goes */
    dfx_settle(x, EFX_S(300));
    ck_assert_ptr_null(claim_named(x, name));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    free(name);
    efx_free(x);
}
END_TEST

START_TEST(termination_timestamp_is_now_and_pods_are_forced_out)
{
    /* Karpenter's "should ignore node disruption budgets" and "should ignore do-not-disrupt": a budget of zero nodes
     * and a do-not-disrupt pod do not hold a repair. */
    efx *x = nodes(1, "    budgets: [{nodes: '0'}]\n", true);
    ns_pod *pod = NULL;
    for (size_t i = 0; i < x->cluster->n_pods && !pod; i++)
        if (x->cluster->pods[i]->node_name)
            pod = x->cluster->pods[i];
    ck_assert_ptr_nonnull(pod);
    pod->do_not_disrupt_ms = NS_DO_NOT_DISRUPT_ALWAYS;
    char *name = stop_kubelet(x, 0);
    efx_run_for(x, TOLERATION);
    ns_nodeclaim *c = claim_named(x, name);
    ck_assert_ptr_nonnull(c);
    ck_assert(ns_claim_deleting(c));
    char want[32];
    time_t secs = (time_t)(efx_first(x, NS_DECISION_UNHEALTHY_NODE, name)->time_ms / 1000);
    strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%SZ", gmtime(&secs));
    ck_assert_str_eq(ns_labels_get(&c->meta.annotations, NS_ANNOTATION_TERMINATION_TIMESTAMP), want);
    /* the do-not-disrupt pod is deleted, not waited for */
    efx_run_for(x, EFX_S(10));
    ck_assert_uint_ge(efx_count(x, NS_DECISION_EVICTED_POD, "forced deletion"), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTION_BLOCKED, name), 0);
    free(name);
    efx_free(x);
}
END_TEST

static const char *repairing;

/* The claim named `repairing` has just been deleted and is still there (termination drains for 5 s at least). */
static bool repair_started(efx *x)
{
    const ns_nodeclaim *c = claim_named(x, repairing);
    ck_assert_ptr_nonnull(c);
    return ns_claim_deleting(c);
}

START_TEST(a_later_termination_timestamp_is_brought_forward_an_earlier_one_kept)
{
    efx *x = nodes(2, NULL, true);
    char *later = stop_kubelet(x, 0), *earlier = stop_kubelet(x, 1);
    char future[32], past[32];
    time_t f = (time_t)((efx_now() + TOLERATION + EFX_S(2 * 3600)) / 1000), p = (time_t)(efx_now() / 1000);
    strftime(future, sizeof(future), "%Y-%m-%dT%H:%M:%SZ", gmtime(&f));
    strftime(past, sizeof(past), "%Y-%m-%dT%H:%M:%SZ", gmtime(&p));
    ck_assert_int_eq(ns_labels_set(&claim_named(x, later)->meta.annotations, NS_ANNOTATION_TERMINATION_TIMESTAMP,
                                   future), 0);
    ck_assert_int_eq(ns_labels_set(&claim_named(x, earlier)->meta.annotations, NS_ANNOTATION_TERMINATION_TIMESTAMP,
                                   past), 0);
    /* two of two nodes unhealthy is over the breaker's threshold (20% of 2, rounded up, is 1): bring one back */
    efx_run_for(x, TOLERATION);
    ck_assert(!deleting(x, later) && !deleting(x, earlier));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_REPAIR_BLOCKED, NULL), 2);
    ns_node *n = efx_node_of(x, claim_named(x, earlier));
    n->ready = true;
    n->ready_unknown = false;
    n->ready_since_ms = efx_now();
    efx_step(x);
    ck_assert(deleting(x, later));
    ck_assert(!deleting(x, earlier));
    const char *stamp = ns_labels_get(&claim_named(x, later)->meta.annotations, NS_ANNOTATION_TERMINATION_TIMESTAMP);
    ck_assert_str_ne(stamp, future);
    /* and the earlier one: its node turns Unknown again, and the repair keeps the stamp that has passed */
    efx_run_for(x, EFX_S(120));
    n = efx_node_of(x, claim_named(x, earlier));
    n->ready = false;
    n->ready_unknown = true;
    n->ready_since_ms = efx_now();
    repairing = earlier;
    ck_assert(efx_run_until(x, repair_started, TOLERATION + EFX_S(60)));
    ck_assert_str_eq(ns_labels_get(&claim_named(x, earlier)->meta.annotations, NS_ANNOTATION_TERMINATION_TIMESTAMP),
                     past);
    free(later);
    free(earlier);
    efx_free(x);
}
END_TEST

START_TEST(conditions_the_policies_do_not_name_are_left_alone)
{
    efx *x = nodes(1, NULL, true);
    ns_node *n = efx_node_of(x, efx_claim(x, 0));
    /* Karpenter's "unhealthy type does not match" and "health status does not match" */
    ck_assert_int_eq(ns_conditions_set(&n->conditions, "BadNode", "False", "Broken", "broken", efx_now()), 0);
    ck_assert_int_eq(ns_conditions_set(&n->conditions, "KernelReady", "False", "Broken", "broken", efx_now()), 0);
    efx_run_for(x, 2 * TOLERATION);
    ck_assert(!ns_claim_deleting(efx_claim(x, 0)));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNHEALTHY_NODE, NULL), 0);
    efx_free(x);
}
END_TEST

START_TEST(gate_off_repairs_nothing)
{
    efx *x = nodes(1, NULL, false);
    char *name = stop_kubelet(x, 0);
    efx_run_for(x, 2 * TOLERATION);
    ck_assert(!deleting(x, name));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNHEALTHY_NODE, NULL), 0);
    free(name);
    efx_free(x);
}
END_TEST

START_TEST(breaker_holds_repairs_over_twenty_percent_of_a_nodepool)
{
    /* Karpenter's "more then 20% of the nodes are unhealthy in a nodepool": 3 of 10 */
    efx *x = nodes(10, NULL, true);
    char *names[3];
    for (size_t i = 0; i < 3; i++)
        names[i] = stop_kubelet(x, i);
    efx_run_for(x, 2 * TOLERATION);
    for (size_t i = 0; i < 3; i++) {
        ck_assert(!deleting(x, names[i]));
        /* reported once per claim, not at every step */
        ck_assert_uint_eq(efx_count(x, NS_DECISION_REPAIR_BLOCKED, names[i]), 1);
    }
    const ns_decision *d = efx_first(x, NS_DECISION_REPAIR_BLOCKED, NULL);
    ck_assert_str_eq(d->reason, "more than 20% nodes are unhealthy in the nodepool");
    ck_assert_str_eq(d->detail, "default");
    /* one comes back: 2 of 10 is within 20%, the other two are repaired at once */
    ns_node *n = efx_node_of(x, claim_named(x, names[0]));
    n->ready = true;
    n->ready_unknown = false;
    n->ready_since_ms = efx_now();
    efx_step(x);
    ck_assert(!deleting(x, names[0]));
    ck_assert(deleting(x, names[1]) && deleting(x, names[2]));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNHEALTHY_NODE, NULL), 2);
    for (size_t i = 0; i < 3; i++)
        free(names[i]);
    efx_free(x);
}
END_TEST

START_TEST(breaker_rounds_up_on_small_pools)
{
    /* Karpenter's "should consider round up when there is a low number of nodes": 1 of 3 is 33%, within 20% of 3
     * rounded up (1) */
    efx *x = nodes(3, NULL, true);
    char *name = stop_kubelet(x, 0);
    efx_run_for(x, TOLERATION);
    ck_assert(deleting(x, name));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_REPAIR_BLOCKED, NULL), 0);
    free(name);
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-repair");
    TCase *tc = tcase_create("repair");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, unhealthy_node_is_deleted_at_its_toleration_and_not_before);
    tcase_add_test(tc, termination_timestamp_is_now_and_pods_are_forced_out);
    tcase_add_test(tc, a_later_termination_timestamp_is_brought_forward_an_earlier_one_kept);
    tcase_add_test(tc, conditions_the_policies_do_not_name_are_left_alone);
    tcase_add_test(tc, gate_off_repairs_nothing);
    tcase_add_test(tc, breaker_holds_repairs_over_twenty_percent_of_a_nodepool);
    tcase_add_test(tc, breaker_rounds_up_on_small_pools);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
