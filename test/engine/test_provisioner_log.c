/* The provisioner's "found provisionable pod(s)" line is written when a round computes new NodeClaims, as Karpenter's
 * Schedule logs it (len(results.NewNodeClaims) > 0), not at every step while pods wait for a claim that is already
 * launching nor for a round that only finds pods unschedulable. The lines' fields have the shapes Karpenter's zap
 * logger gives them: object references, numbers, an "error". Counted and parsed over runs of the engine, log lines
 * captured from the log API. */
#include <check.h>
#include <cjson/cJSON.h>
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

/* The first captured line whose message is `message`, parsed; NULL when there is none. */
static cJSON *first_line(const char *message)
{
    char line[8192];
    fflush(captured);
    rewind(captured);
    cJSON *found = NULL;
    while (!found && fgets(line, sizeof(line), captured)) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "message");
        if (cJSON_IsString(m) && strcmp(m->valuestring, message) == 0)
            found = o;
        else
            cJSON_Delete(o);
    }
    fseek(captured, 0, SEEK_END);
    return found;
}

/* o[key] is {"name": name} with "namespace": ns when ns is given, and nothing else. */
static void assert_ref(const cJSON *o, const char *key, const char *ns, const char *name_prefix)
{
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(cJSON_IsObject(ref), "%s is not an object", key);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(ref, "name");
    ck_assert(cJSON_IsString(name) && strncmp(name->valuestring, name_prefix, strlen(name_prefix)) == 0);
    const cJSON *space = cJSON_GetObjectItemCaseSensitive(ref, "namespace");
    if (ns)
        ck_assert(cJSON_IsString(space) && strcmp(space->valuestring, ns) == 0);
    ck_assert_int_eq(cJSON_GetArraySize(ref), ns ? 2 : 1);
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(cJSON_IsString(v), "%s is not a string", key);
    return v->valuestring;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(cJSON_IsNumber(v), "%s is not a number", key);
    return v->valuedouble;
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
    /* No claim computed: Karpenter's Schedule writes no "found provisionable pod(s)". */
    ck_assert_uint_eq(lines_with("found provisionable pod(s)"), 0);
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 0);
    cJSON *l = first_line("could not schedule pod");
    ck_assert_ptr_nonnull(l);
    assert_ref(l, "Pod", "default", "huge-");
    ck_assert(strstr(str(l, "error"), "cpu") != NULL);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(l, "reason"));
    cJSON_Delete(l);
    release();
    efx_free(x);
}
END_TEST

/* The lines of one provisioning, field by field, as Karpenter's provisioner and lifecycle controller write them. */
START_TEST(test_field_shapes)
{
    efx *x = efx_new(EFX_BASE, WEB("web", 3, "500m"), NULL);
    capture();
    ck_assert(efx_run_until(x, all_bound, EFX_S(120)));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    const ns_nodeclaim *c = x->cluster->nodeclaims[0];

    cJSON *found = first_line("found provisionable pod(s)");
    ck_assert_ptr_nonnull(found);
    ck_assert(strncmp(str(found, "Pods"), "default/web-", 12) == 0);
    cJSON_Delete(found);

    cJSON *computed = first_line("computed new nodeclaim(s) to fit pod(s)");
    ck_assert_ptr_nonnull(computed);
    ck_assert(num(computed, "nodeclaims") == 1 && num(computed, "pods") == 3);
    cJSON_Delete(computed);

    cJSON *created = first_line("created nodeclaim");
    ck_assert_ptr_nonnull(created);
    assert_ref(created, "NodeClaim", NULL, c->meta.name);
    assert_ref(created, "NodePool", NULL, ns_labels_get(&c->meta.labels, NS_LABEL_NODEPOOL));
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(created, "requests");
    ck_assert(cJSON_IsObject(req) && strcmp(str(req, "pods"), "3") == 0);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(created, "Pod"));
    /* the first of the claim's instance types, as Karpenter's instanceTypeList starts */
    const ns_selector_req *types = NULL;
    for (size_t i = 0; i < c->n_requirements; i++)
        if (strcmp(c->requirements[i].key, NS_LABEL_INSTANCE_TYPE) == 0)
            types = &c->requirements[i];
    ck_assert_ptr_nonnull(types);
    ck_assert(strncmp(str(created, "instance-types"), types->values[0], strlen(types->values[0])) == 0);
    ck_assert((types->n_values > 5) == (strstr(str(created, "instance-types"), " other(s)") != NULL));
    cJSON_Delete(created);

    cJSON *launched = first_line("launched nodeclaim");
    ck_assert_ptr_nonnull(launched);
    assert_ref(launched, "NodeClaim", NULL, c->meta.name);
    ck_assert_str_eq(str(launched, "provider-id"), c->provider_id);
    ck_assert_str_eq(str(launched, "instance-type"), ns_labels_get(&c->meta.labels, NS_LABEL_INSTANCE_TYPE));
    ck_assert_str_eq(str(launched, "zone"), ns_labels_get(&c->meta.labels, NS_LABEL_ZONE));
    ck_assert_str_eq(str(launched, "capacity-type"), ns_labels_get(&c->meta.labels, NS_LABEL_CAPACITY_TYPE));
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(launched, "allocatable"), "cpu")));
    cJSON_Delete(launched);
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
    tcase_add_test(tc, test_field_shapes);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
