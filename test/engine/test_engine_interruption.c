/* Interruption: provider events (spot interruption, scheduled maintenance, instance stopping or terminated,
 * rebalance recommendation, instance unhealthy, capacity reservation interruption) and the actions they drive, over
 * simulated time. The actions are those of aws/karpenter-provider-aws pkg/controllers/interruption/utils.go
 * (actionForMessage, handleNodeClaim). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock/ns_clock.h"
#include "engine_fixture.h"
#include "errors/ns_error.h"
#include "model/labels.h"

#define WEB2                                                                                                           \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n"                            \
    "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n" EFX_TOLERATE \
    "      containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n"

static char *spot_base(void)
{
    char *s = strdup(EFX_BASE);
    char *at = strstr(s, "values: [on-demand]");
    ck_assert_ptr_nonnull(at);
    size_t len = strlen(s) + 8;
    char *out = malloc(len);
    snprintf(out, len, "%.*svalues: [spot]%s", (int)(at - s), s, at + strlen("values: [on-demand]"));
    free(s);
    return out;
}

/* A PodDisruptionBudget over web's pods: minAvailable 2 of 2 lets no eviction through. */
#define WEB_PDB_ALL                                                                                                    \
    "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec:\n  minAvailable: 2\n"       \
    "  selector: {matchLabels: {app: web}}\n"

static bool settled(efx *x)
{
    if (x->cluster->n_nodeclaims != 1 || efx_pending(x) || !efx_bound(x))
        return false;
    const ns_nodeclaim *c = x->cluster->nodeclaims[0];
    return ns_claim_initialized(c) && !ns_claim_deleting(c);
}

static efx *running_with(const char *base, const char *extra, const ns_engine_config *cfg, char *claim, size_t len)
{
    efx *x = efx_new(base, extra, cfg);
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    snprintf(claim, len, "%s", efx_claim(x, 0)->meta.name);
    return x;
}

static efx *running(const char *base, const ns_engine_config *cfg, char *claim, size_t len)
{
    return running_with(base, WEB2, cfg, claim, len);
}

static void offering_of(const ns_nodeclaim *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s/%s", ns_labels_get(&c->meta.labels, NS_LABEL_INSTANCE_TYPE),
             ns_labels_get(&c->meta.labels, NS_LABEL_ZONE), ns_labels_get(&c->meta.labels, NS_LABEL_CAPACITY_TYPE));
}

START_TEST(test_spot_interruption)
{
    char *base = spot_base(), a[128], offering[256], replacement[256];
    efx *x = running(base, NULL, a, sizeof(a));
    free(base);
    offering_of(efx_claim(x, 0), offering, sizeof(offering));
    ck_assert(strstr(offering, "/spot") != NULL);
    int64_t deadline = efx_now() + EFX_S(120);
    ck_assert_int_eq(ns_engine_inject_event(x->engine, a, NS_EVENT_SPOT_INTERRUPTION, deadline), NS_OK);
    efx_step(x);
    const ns_decision *ev = efx_first(x, NS_DECISION_INTERRUPTION, a);
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(ev->method, "SpotInterruption");
    ck_assert_uint_eq(efx_count(x, NS_DECISION_OFFERING_UNAVAILABLE, offering), 1);
    /* Deleted, tainted and drained within the step (nothing holds its two pods). */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TAINTED_NODE, a), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, a), 2);
    /* The drain starts with the notice; it does not wait for the replacement, which comes up on another offering. */
    int64_t noticed = ev->time_ms;
    ck_assert_int_eq(efx_first(x, NS_DECISION_EVICTED_POD, a)->time_ms, noticed);
    ck_assert(efx_run_until(x, settled, EFX_S(110)));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    offering_of(efx_claim(x, 0), replacement, sizeof(replacement));
    ck_assert_str_ne(offering, replacement);
    const ns_decision *created = efx_first(x, NS_DECISION_CREATED_NODECLAIM, efx_claim(x, 0)->meta.name);
    ck_assert_int_le(created->time_ms, noticed + EFX_S(1));
    ck_assert_int_gt(efx_first(x, NS_DECISION_INITIALIZED_NODECLAIM, efx_claim(x, 0)->meta.name)->time_ms, noticed);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODE, a), 1);
    ck_assert_uint_eq(efx_instances(x), 1);
    /* The cloud's own termination at the deadline finds nothing left to do. */
    efx_run_for(x, EFX_S(120));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_NODE_LOST, NULL), 0);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    efx_free(x);
}
END_TEST

START_TEST(test_interruption_drains_without_waiting_for_capacity)
{
    /* Karpenter drains an interrupted node as soon as the notice arrives: even when no replacement can register before
     * the deadline, the pods are evicted at once and wait pending for it rather than die with the instance. */
    char *base = spot_base(), a[128];
    efx *x = running(base, NULL, a, sizeof(a));
    free(base);
    x->engine->cfg.registration_delay_ms = EFX_S(600);
    int64_t noticed = efx_now(), deadline = noticed + EFX_S(120);
    ck_assert_int_eq(ns_engine_inject_event(x->engine, a, NS_EVENT_SPOT_INTERRUPTION, deadline), NS_OK);
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, a), 2);
    ck_assert_int_eq(efx_first(x, NS_DECISION_EVICTED_POD, a)->time_ms, efx_first(x, NS_DECISION_INTERRUPTION, a)->time_ms);
    efx_run_for(x, EFX_S(40));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    ck_assert_uint_eq(efx_pending(x), 2);
    efx_free(x);
}
END_TEST

START_TEST(test_scheduled_maintenance)
{
    char a[128], offering[256];
    efx *x = running(EFX_BASE, NULL, a, sizeof(a));
    offering_of(efx_claim(x, 0), offering, sizeof(offering));
    ck_assert_int_eq(ns_engine_inject_event(x->engine, a, NS_EVENT_SCHEDULED_MAINTENANCE, efx_now() + EFX_S(600)),
                     NS_OK);
    efx_step(x);
    ck_assert_str_eq(efx_first(x, NS_DECISION_INTERRUPTION, a)->method, "ScheduledChange");
    ck_assert_uint_eq(efx_count(x, NS_DECISION_OFFERING_UNAVAILABLE, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, a), 2);
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    efx_free(x);
}
END_TEST

static void lost(ns_event_kind kind, const char *method)
{
    char a[128];
    efx *x = running(EFX_BASE, NULL, a, sizeof(a));
    ck_assert_int_eq(ns_engine_inject_event(x->engine, a, kind, 0), NS_OK);
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_NODE_LOST, method), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_POD_RESCHEDULED, a), 2);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, NULL), 0);
    ck_assert_ptr_null(ns_cluster_find_node(x->cluster, a));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODECLAIM, a), 1);
    /* The pods came back pending; they are re-planned once the batch window closes. */
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 0);
    ck_assert_uint_eq(efx_pending(x), 2);
    efx_run_for(x, EFX_S(1));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    ck_assert_uint_eq(efx_instances(x), 1);
    efx_free(x);
}

START_TEST(test_instance_terminated)
{
    lost(NS_EVENT_INSTANCE_TERMINATED, "InstanceTerminated");
}
END_TEST

START_TEST(test_instance_stopping)
{
    lost(NS_EVENT_INSTANCE_STOPPING, "InstanceStopping");
}
END_TEST

START_TEST(test_rebalance_recorded_or_acted_on)
{
    char a[128];
    efx *x = running(EFX_BASE, NULL, a, sizeof(a));
    ck_assert_int_eq(ns_engine_inject_event(x->engine, a, NS_EVENT_REBALANCE_RECOMMENDATION, 0), NS_OK);
    efx_run_for(x, EFX_S(60));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_REBALANCE_RECORDED, a), 1);
    ns_nodeclaim *ca = ns_cluster_find_nodeclaim(x->cluster, a);
    ck_assert(!ns_claim_deleting(ca));
    ck_assert_ptr_nonnull(ns_labels_get(&ca->meta.annotations, NS_ANNOTATION_REBALANCE));
    efx_free(x);

    ns_engine_config cfg;
    ns_engine_config_default(&cfg);
    cfg.act_on_rebalance = true;
    x = running(EFX_BASE, &cfg, a, sizeof(a));
    ck_assert_int_eq(ns_engine_inject_event(x->engine, a, NS_EVENT_REBALANCE_RECOMMENDATION, 0), NS_OK);
    efx_step(x);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TAINTED_NODE, a), 1);
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    efx_free(x);
}
END_TEST

/* instance_status/system_status are ForcefulTermination: the termination timestamp annotation becomes now
 * (annotateTerminationTimestamp, RFC 3339) and the claim is deleted, so the drain is held neither by a
 * PodDisruptionBudget that lets nothing through nor by the pods' grace periods. */
START_TEST(test_instance_unhealthy_is_forceful)
{
    char a[128];
    efx *x = running_with(EFX_BASE, WEB2 WEB_PDB_ALL, NULL, a, sizeof(a));
    ck_assert_int_eq(ns_engine_inject_event(x->engine, a, NS_EVENT_INSTANCE_UNHEALTHY, 0), NS_OK);
    int64_t noticed = efx_now();
    efx_step(x);
    ck_assert_str_eq(efx_first(x, NS_DECISION_INTERRUPTION, a)->method, "InstanceUnhealthy");
    ns_nodeclaim *ca = ns_cluster_find_nodeclaim(x->cluster, a);
    ck_assert_ptr_nonnull(ca);
    ck_assert(ns_claim_deleting(ca));
    /* RFC 3339 to the second, as Go's time.RFC3339 writes it. */
    const char *stamp = ns_labels_get(&ca->meta.annotations, NS_ANNOTATION_TERMINATION_TIMESTAMP);
    int64_t stamp_ms = -1;
    ck_assert_ptr_nonnull(stamp);
    ck_assert_int_eq(strlen(stamp), strlen("2006-01-02T15:04:05Z"));
    ck_assert_int_eq(ns_clock_parse_rfc3339(stamp, &stamp_ms), 0);
    ck_assert_int_eq(stamp_ms, noticed / 1000 * 1000);
    /* No offering is marked: the instance is broken, not its capacity pool. */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_OFFERING_UNAVAILABLE, NULL), 0);
    /* The PDB blocks no eviction: the termination timestamp has passed, so both pods leave, and the node goes after
     * Karpenter's minimum drain time instead of waiting for a replacement. */
    efx_run_for(x, EFX_S(10));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTION_BLOCKED, a), 0);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TERMINATED_INSTANCE, a), 1);
    ck_assert_int_le(efx_first(x, NS_DECISION_TERMINATED_INSTANCE, a)->time_ms, noticed + EFX_S(10));
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    efx_free(x);
}
END_TEST

/* The same PodDisruptionBudget holds the drain of a node whose claim is deleted for a scheduled change: the contrast
 * that shows the forceful path above is what lets the pods go. */
START_TEST(test_cordon_and_drain_respects_pdb)
{
    char a[128];
    efx *x = running_with(EFX_BASE, WEB2 WEB_PDB_ALL, NULL, a, sizeof(a));
    ck_assert_int_eq(ns_engine_inject_event(x->engine, a, NS_EVENT_SCHEDULED_MAINTENANCE, efx_now() + EFX_S(3600)),
                     NS_OK);
    efx_run_for(x, EFX_S(10));
    ck_assert_ptr_nonnull(ns_cluster_find_nodeclaim(x->cluster, a));
    ck_assert_ptr_null(ns_labels_get(&ns_cluster_find_nodeclaim(x->cluster, a)->meta.annotations,
                                     NS_ANNOTATION_TERMINATION_TIMESTAMP));
    ck_assert_uint_ge(efx_count(x, NS_DECISION_EVICTION_BLOCKED, "disruption budget"), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TERMINATED_INSTANCE, a), 0);
    efx_free(x);
}
END_TEST

/* capacity_reservation_interrupted is CordonAndDrain: the node is tainted and drained at once, the replacement
 * launched, and the node gone before the reservation reclaims the instance at the deadline. No termination timestamp
 * is set, and an on-demand claim has no reservation to mark (Karpenter marks only a capacity-reservation-id label's),
 * so no offering is marked unavailable. */
START_TEST(test_capacity_reservation_interruption)
{
    char a[128];
    efx *x = running(EFX_BASE, NULL, a, sizeof(a));
    int64_t noticed = efx_now(), deadline = noticed + EFX_S(120);
    ck_assert_int_eq(ns_engine_inject_event(x->engine, a, NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION, deadline),
                     NS_OK);
    efx_step(x);
    const ns_decision *ev = efx_first(x, NS_DECISION_INTERRUPTION, a);
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(ev->method, "CapacityReservationInterruption");
    ns_nodeclaim *ca = ns_cluster_find_nodeclaim(x->cluster, a);
    ck_assert_ptr_nonnull(ca);
    ck_assert_ptr_null(ns_labels_get(&ca->meta.annotations, NS_ANNOTATION_TERMINATION_TIMESTAMP));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_OFFERING_UNAVAILABLE, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TAINTED_NODE, a), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_EVICTED_POD, a), 2);
    ck_assert_int_eq(efx_first(x, NS_DECISION_EVICTED_POD, a)->time_ms, ev->time_ms);
    ck_assert(efx_run_until(x, settled, EFX_S(110)));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    ck_assert_int_lt(efx_first(x, NS_DECISION_DELETED_NODE, a)->time_ms, deadline);
    ck_assert_uint_eq(efx_instances(x), 1);
    efx_free(x);
}
END_TEST

/* One 4-vCPU type in one zone, on-demand or in reservation cr-1 that holds two instances: web's two pods fit one node,
 * which goes into the reservation (the cheaper offering). */
static const char RESERVED_CATALOG[] =
    "[{\"name\": \"t1.xlarge\", \"vcpu\": 4, \"memory_mib\": 16384, \"arch\": \"amd64\",\n"
    "  \"offerings\": [{\"zone\": \"us-west-2a\", \"capacity_type\": \"on-demand\", \"price\": 0.20},\n"
    "                {\"zone\": \"us-west-2a\", \"capacity_type\": \"reserved\", \"price\": 0.02,\n"
    "                 \"reservation_id\": \"cr-1\", \"reservation_capacity\": 2}]}]\n";

/* The base pool taking reserved capacity besides on-demand. */
static char *reserved_base(void)
{
    const char *at = strstr(EFX_BASE, "values: [on-demand]");
    ck_assert_ptr_nonnull(at);
    size_t len = strlen(EFX_BASE) + 16;
    char *out = malloc(len);
    ck_assert_ptr_nonnull(out);
    snprintf(out, len, "%.*svalues: [on-demand, reserved]%s", (int)(at - EFX_BASE), EFX_BASE,
             at + strlen("values: [on-demand]"));
    return out;
}

/* A claim in reservation cr-1 receives `kind`: the offering its replacement launched into goes to replacement, the
 * number of times the event marked the reserved offering unavailable to *marked. */
static void replaced_in_reservation(ns_event_kind kind, char *replacement, size_t len, size_t *marked)
{
    char path[] = "/tmp/engine-interruption-XXXXXX", a[128], offering[256];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_ge(fputs(RESERVED_CATALOG, f), 0);
    ck_assert_int_eq(fclose(f), 0);
    char *base = reserved_base();
    efx *x = efx_new_catalog(base, WEB2, NULL, path);
    free(base);
    ck_assert(efx_run_until(x, settled, EFX_S(120)));
    snprintf(a, sizeof(a), "%s", efx_claim(x, 0)->meta.name);
    offering_of(efx_claim(x, 0), offering, sizeof(offering));
    ck_assert_str_eq(offering, "t1.xlarge/us-west-2a/reserved");
    ck_assert_int_eq(ns_engine_inject_event(x->engine, a, kind, efx_now() + EFX_S(120)), NS_OK);
    efx_step(x);
    *marked = efx_count(x, NS_DECISION_OFFERING_UNAVAILABLE, "t1.xlarge/us-west-2a/reserved");
    ck_assert(efx_run_until(x, settled, EFX_S(110)));
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    offering_of(efx_claim(x, 0), replacement, len);
    efx_free(x);
    unlink(path);
}

/* Karpenter's markUnavailableOfferings: a capacity reservation interruption marks the claim's reservation unavailable
 * (capacityReservationProvider.MarkUnavailable), so the replacement does not launch into it although it still has
 * room for one more instance; a scheduled change on the same claim marks nothing, and the replacement takes that
 * room. */
START_TEST(test_reservation_interruption_marks_the_reservation)
{
    char replacement[256];
    size_t marked;
    replaced_in_reservation(NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION, replacement, sizeof(replacement), &marked);
    ck_assert_uint_eq(marked, 1);
    ck_assert_str_eq(replacement, "t1.xlarge/us-west-2a/on-demand");
    replaced_in_reservation(NS_EVENT_SCHEDULED_MAINTENANCE, replacement, sizeof(replacement), &marked);
    ck_assert_uint_eq(marked, 0);
    ck_assert_str_eq(replacement, "t1.xlarge/us-west-2a/reserved");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-interruption");
    TCase *tc = tcase_create("interruption");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_spot_interruption);
    tcase_add_test(tc, test_interruption_drains_without_waiting_for_capacity);
    tcase_add_test(tc, test_scheduled_maintenance);
    tcase_add_test(tc, test_instance_terminated);
    tcase_add_test(tc, test_instance_stopping);
    tcase_add_test(tc, test_rebalance_recorded_or_acted_on);
    tcase_add_test(tc, test_instance_unhealthy_is_forceful);
    tcase_add_test(tc, test_cordon_and_drain_respects_pdb);
    tcase_add_test(tc, test_capacity_reservation_interruption);
    tcase_add_test(tc, test_reservation_interruption_marks_the_reservation);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
