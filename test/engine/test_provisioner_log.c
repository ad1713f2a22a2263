/* The provisioner's "found provisionable pod(s)" line is written when a round computes new decisions (new claims, a
 * pod newly found unschedulable), as Karpenter logs it, not at every step while pods wait for a claim that is already
 * launching. Counted over runs of the engine, log lines captured from the log API. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"
#include "log/ns_log.h"

#define WEB(name, replicas, cpu)                                                                                       \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " name "}\nspec:\n  replicas: " #replicas "\n"           \
    "  selector: {matchLabels: {app: " name "}}\n  template:\n    metadata: {labels: {app: " name "}}\n    spec:\n"  \
    EFX_TOLERATE "      containers: [{name: c, resources: {requests: {cpu: '" cpu "', memory: 1Gi}}}]\n"

static FILE *captured;

static void capture(void)
{
    captured = tmpfile();
    ck_assert_ptr_nonnull(captured);
    ns_log_set_output(captured);
    ns_log_set_level(NS_LOG_INFO);
}

static void release(void)
{
    ns_log_set_output(stderr);
    ns_log_set_level(NS_LOG_ERROR);
    fclose(captured);
}

/* Lines of the captured log holding `message` as the message. */
static size_t lines_with(const char *message)
{
    char needle[256], line[8192];
    snprintf(needle, sizeof(needle), "\"message\":\"%s\"", message);
    fflush(captured);
    rewind(captured);
    size_t n = 0;
    while (fgets(line, sizeof(line), captured))
        n += strstr(line, needle) != NULL;
    fseek(captured, 0, SEEK_END);
    return n;
}

static bool all_bound(efx *x)
{
    return efx_pending(x) == 0 && efx_initialized(x) == x->cluster->n_nodeclaims;
}

START_TEST(test_logged_when_claims_are_computed)
{
    efx *x = efx_new(EFX_BASE, WEB("web", 4, "500m"), NULL);
    capture();
    /* The batch becomes one claim; the pods then wait about 45 s for it. */
    ck_assert(efx_run_until(x, all_bound, EFX_S(120)));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    ck_assert_uint_eq(lines_with("found provisionable pod(s)"), 1);
    ck_assert_uint_eq(lines_with("computed new nodeclaim(s) to fit pod(s)"), 1);
    efx_run_for(x, EFX_S(60));
    ck_assert_uint_eq(lines_with("found provisionable pod(s)"), 1);

    /* Pods that fit the node are bound there: no new claim, nothing computed. */
    efx_load(x, WEB("small", 2, "100m"));
    efx_run_for(x, EFX_S(5));
    ck_assert_uint_eq(efx_pending(x), 0);
    ck_assert_uint_eq(lines_with("found provisionable pod(s)"), 1);

    /* Pods that need another node: one more line, however long its launch takes. */
    efx_load(x, WEB("big", 2, "3"));
    ck_assert(efx_run_until(x, all_bound, EFX_S(120)));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 2);
    ck_assert_uint_eq(lines_with("found provisionable pod(s)"), 2);
    release();
    efx_free(x);
}
END_TEST

START_TEST(test_unschedulable_pod_logged_once)
{
    efx *x = efx_new(EFX_BASE, WEB("huge", 1, "1000"), NULL);
    capture();
    efx_run_for(x, EFX_S(300));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_UNSCHEDULABLE_POD, NULL), 1);
    ck_assert_uint_eq(lines_with("could not schedule pod"), 1);
    ck_assert_uint_eq(lines_with("found provisionable pod(s)"), 1);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 0);
    release();
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-provisioner-log");
    TCase *tc = tcase_create("provisioner-log");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_logged_when_claims_are_computed);
    tcase_add_test(tc, test_unschedulable_pod_logged_once);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
