/* Pods deferred for reserved capacity (Karpenter's ReservedOfferingError) over the sim provider, whose reservations
 * count the instances launched into them: the provisioner runs another round at once after a round that deferred pods
 * and launched claims, where the used-up reservation sends the deferred pod to on-demand (Karpenter's next Solve after
 * the pod's re-trigger); the rounds of one step are bounded, and a pod still deferred gets its claim the next step. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock/ns_clock.h"
#include "engine_fixture.h"
#include "errors/ns_error.h"
#include "model/labels.h"

/* A SimNodeClass and a pool taking on-demand and reserved capacity. */
static const char BASE[] = "apiVersion: nodesmith.io/v1\n"
                           "kind: SimNodeClass\n"
                           "metadata: {name: default}\n"
                           "spec: {}\n"
                           "---\n"
                           "apiVersion: karpenter.sh/v1\n"
                           "kind: NodePool\n"
                           "metadata: {name: default}\n"
                           "spec:\n"
                           "  template:\n"
                           "    spec:\n"
                           "      nodeClassRef: {group: nodesmith.io, kind: SimNodeClass, name: default}\n"
                           "      requirements:\n"
                           "        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand, reserved]}\n"
                           "  disruption:\n"
                           "    consolidateAfter: Never\n";

/* n pods that each need a 2-vCPU node of their own; selector: their nodeSelector's YAML map, or NULL. */
static char *pods(int n, const char *selector)
{
    static const char fmt[] = "apiVersion: apps/v1\n"
                              "kind: Deployment\n"
                              "metadata: {name: app}\n"
                              "spec:\n"
                              "  replicas: %d\n"
                              "  selector: {matchLabels: {app: app}}\n"
                              "  template:\n"
                              "    metadata: {labels: {app: app}}\n"
                              "    spec:\n"
                              "      nodeSelector: %s\n"
                              "      containers:\n"
                              "        - name: c\n"
                              "          resources: {requests: {cpu: 1500m, memory: 1Gi}}\n";
    size_t len = sizeof(fmt) + 16 + (selector ? strlen(selector) : 2);
    char *yaml = malloc(len);
    ck_assert_ptr_nonnull(yaml);
    snprintf(yaml, len, fmt, n, selector ? selector : "{}");
    return yaml;
}

/* Writes a sim catalog file; the caller unlinks path. */
static void write_catalog(char *path, const char *text)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_ge(fputs(text, f), 0);
    ck_assert_int_eq(fclose(f), 0);
}

static size_t claims_of(efx *x, const char *capacity_type)
{
    size_t n = 0;
    for (size_t i = 0; i < x->cluster->n_nodeclaims; i++) {
        const ns_nodeclaim *c = x->cluster->nodeclaims[i];
        const char *ct = ns_labels_get(&c->meta.labels, NS_LABEL_CAPACITY_TYPE);
        n += ns_claim_launched(c) && ct && strcmp(ct, capacity_type) == 0;
    }
    return n;
}

static bool all_bound(efx *x)
{
    return efx_pending(x) == 0;
}

/* One type whose reservation holds one instance: the first pod takes it, the second is deferred in the first round
 * and placed on on-demand by the second, in the same step. */
START_TEST(test_deferred_pod_gets_on_demand_in_second_round)
{
    char path[] = "/tmp/engine-reserved-XXXXXX";
    write_catalog(path, "[{\"name\": \"t1.large\", \"vcpu\": 2, \"memory_mib\": 8192, \"arch\": \"amd64\",\n"
                        "  \"offerings\": [\n"
                        "    {\"zone\": \"us-west-2a\", \"capacity_type\": \"on-demand\", \"price\": 0.10},\n"
                        "    {\"zone\": \"us-west-2a\", \"capacity_type\": \"reserved\", \"price\": 0.02,\n"
                        "     \"reservation_id\": \"cr-1\", \"reservation_capacity\": 1}]}]\n");
    char *yaml = pods(2, NULL);
    efx *x = efx_new_catalog(BASE, yaml, NULL, path);
    free(yaml);
    efx_step(x);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    ck_assert_uint_eq(claims_of(x, "reserved"), 1);
    ck_assert_uint_eq(claims_of(x, "on-demand"), 1);
    ck_assert_uint_eq(efx_instances(x), 2);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 2);
    /* Deferred is not unschedulable: no decision says so. */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNSCHEDULABLE_POD, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_OFFERING_UNAVAILABLE, NULL), 0);
    ck_assert(efx_run_until(x, all_bound, EFX_S(120)));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 2);
    efx_free(x);
    unlink(path);
}
END_TEST

/* Three types, each with a reservation of one, cheapest first: a round's first claim holds all three reservations
 * and launches into the cheapest, so each round places one pod on a reservation and defers the rest. The step stops
 * after NS_PROVISIONING_ROUNDS_MAX rounds with the fourth pod still deferred (no decision about it), and the next step
 * gives it an on-demand claim: the pod waits a step, it is not deferred forever. */
START_TEST(test_rounds_are_bounded_and_the_pod_placed_next_step)
{
    char path[] = "/tmp/engine-reserved-XXXXXX";
    char catalog[2048];
    size_t off = 0;
    off += (size_t)snprintf(catalog + off, sizeof(catalog) - off, "[\n");
    for (int i = 1; i <= 3; i++)
        off += (size_t)snprintf(catalog + off, sizeof(catalog) - off,
                                "%s{\"name\": \"r%d.large\", \"vcpu\": 2, \"memory_mib\": 8192, \"arch\": \"amd64\",\n"
                                "  \"offerings\": [\n"
                                "    {\"zone\": \"us-west-2a\", \"capacity_type\": \"on-demand\", \"price\": 0.1%d},\n"
                                "    {\"zone\": \"us-west-2a\", \"capacity_type\": \"reserved\", \"price\": 0.0%d,\n"
                                "     \"reservation_id\": \"cr-%d\", \"reservation_capacity\": 1}]}\n",
                                i > 1 ? "," : "", i, i, i, i);
    snprintf(catalog + off, sizeof(catalog) - off, "]\n");
    write_catalog(path, catalog);
    ck_assert_int_eq(NS_PROVISIONING_ROUNDS_MAX, 3); /* the scenario has one more pod than a step has rounds */
    char *yaml = pods(4, NULL);
    efx *x = efx_new_catalog(BASE, yaml, NULL, path);
    free(yaml);
    efx_step(x);
    ck_assert_uint_eq(claims_of(x, "reserved"), NS_PROVISIONING_ROUNDS_MAX);
    ck_assert_uint_eq(claims_of(x, "on-demand"), 0);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, NS_PROVISIONING_ROUNDS_MAX);
    for (int i = 1; i <= 3; i++) {
        char type[16];
        snprintf(type, sizeof(type), "r%d.large", i);
        bool found = false;
        for (size_t c = 0; c < x->cluster->n_nodeclaims; c++) {
            const char *t = ns_labels_get(&x->cluster->nodeclaims[c]->meta.labels, NS_LABEL_INSTANCE_TYPE);
            found = found || (t && strcmp(t, type) == 0);
        }
        ck_assert_msg(found, "no claim launched into reservation of %s", type);
    }
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNSCHEDULABLE_POD, NULL), 0);
    ck_assert_uint_eq(efx_pending(x), 4);

    ns_clock_advance(x->cfg.tick_ms);
    efx_step(x);
    ck_assert_uint_eq(claims_of(x, "reserved"), 3);
    ck_assert_uint_eq(claims_of(x, "on-demand"), 1);
    const char *ondemand_type = NULL;
    for (size_t c = 0; c < x->cluster->n_nodeclaims; c++) {
        const ns_nodeclaim *claim = x->cluster->nodeclaims[c];
        if (strcmp(ns_labels_get(&claim->meta.labels, NS_LABEL_CAPACITY_TYPE), "on-demand") == 0)
            ondemand_type = ns_labels_get(&claim->meta.labels, NS_LABEL_INSTANCE_TYPE);
    }
    ck_assert_str_eq(ondemand_type, "r1.large"); /* the cheapest on-demand offering */
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNSCHEDULABLE_POD, NULL), 0);
    ck_assert(efx_run_until(x, all_bound, EFX_S(120)));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 4);
    efx_free(x);
    unlink(path);
}
END_TEST

/* Pods that only a reserved offering can take: the second, deferred in the first round, finds the reservation used up
 * in the second and is unschedulable there; that is its first decision (the deferral made none), and it is not
 * repeated at later steps. */
START_TEST(test_deferred_then_unschedulable_is_reported_once)
{
    char path[] = "/tmp/engine-reserved-XXXXXX";
    write_catalog(path, "[{\"name\": \"t1.large\", \"vcpu\": 2, \"memory_mib\": 8192, \"arch\": \"amd64\",\n"
                        "  \"offerings\": [\n"
                        "    {\"zone\": \"us-west-2a\", \"capacity_type\": \"on-demand\", \"price\": 0.10},\n"
                        "    {\"zone\": \"us-west-2a\", \"capacity_type\": \"reserved\", \"price\": 0.02,\n"
                        "     \"reservation_id\": \"cr-1\", \"reservation_capacity\": 1}]}]\n");
    char *yaml = pods(2, "{karpenter.sh/capacity-type: reserved}");
    efx *x = efx_new_catalog(BASE, yaml, NULL, path);
    free(yaml);
    efx_step(x);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    ck_assert_uint_eq(claims_of(x, "reserved"), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNSCHEDULABLE_POD, NULL), 1);
    const ns_decision *d = efx_first(x, NS_DECISION_UNSCHEDULABLE_POD, NULL);
    const ns_decision *created = efx_first(x, NS_DECISION_CREATED_NODECLAIM, NULL);
    ck_assert_str_ne(d->pods, created->pods); /* the pod without the claim */
    efx_run_for(x, EFX_S(20));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNSCHEDULABLE_POD, NULL), 1);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    efx_free(x);
    unlink(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-reserved");
    TCase *tc = tcase_create("reserved");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_deferred_pod_gets_on_demand_in_second_round);
    tcase_add_test(tc, test_rounds_are_bounded_and_the_pod_placed_next_step);
    tcase_add_test(tc, test_deferred_then_unschedulable_is_reported_once);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
