/* The registration TTL: a claim whose node never registers is deleted after 15 minutes (its instance terminated)
 * and its pods are re-planned; a slow but timely registration is kept. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine_fixture.h"

#define WEB2                                                                                                           \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n"                            \
    "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n" EFX_TOLERATE \
    "      containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n"

START_TEST(test_never_registers)
{
    ns_engine_config cfg;
    ns_engine_config_default(&cfg);
    cfg.registration_delay_ms = -1;
    efx *x = efx_new(EFX_BASE, WEB2, &cfg);
    efx_step(x);
    char a[128];
    snprintf(a, sizeof(a), "%s", efx_claim(x, 0)->meta.name);
    ck_assert_uint_eq(efx_instances(x), 1);
    efx_run_for(x, EFX_S(15 * 60) - 1000);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_REGISTRATION_TIMEOUT, NULL), 0);
    ck_assert_ptr_nonnull(ns_cluster_find_nodeclaim(x->cluster, a));
    efx_run_for(x, EFX_S(1));
    const ns_decision *d = efx_first(x, NS_DECISION_REGISTRATION_TIMEOUT, a);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->time_ms - EFX_T0, EFX_S(15 * 60));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TERMINATED_INSTANCE, a), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODECLAIM, a), 1);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    /* The pods were re-planned in the same step onto a new claim, with a new instance. */
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    ck_assert_str_ne(efx_claim(x, 0)->meta.name, a);
    ck_assert_uint_eq(efx_instances(x), 1);
    ck_assert_uint_eq(efx_pending(x), 2);
    efx_free(x);
}
END_TEST

START_TEST(test_slow_registration_within_ttl)
{
    ns_engine_config cfg;
    ns_engine_config_default(&cfg);
    cfg.registration_delay_ms = EFX_S(14 * 60);
    efx *x = efx_new(EFX_BASE, WEB2, &cfg);
    efx_run_for(x, EFX_S(15 * 60));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_REGISTRATION_TIMEOUT, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_REGISTERED_NODECLAIM, NULL), 1);
    ck_assert_uint_eq(efx_pending(x), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-registration");
    TCase *tc = tcase_create("registration");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_never_registers);
    tcase_add_test(tc, test_slow_registration_within_ttl);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
