/* The timeline's manifest registry and JSON merge patch (RFC 7386, with its appendix's examples). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "simulation/timeline_sources.h"
#include "errors/ns_error.h"

/* Applies patch to target (both JSON texts) and compares the result's compact form with want. */
static void merge_case(const char *target, const char *patch, const char *want)
{
    cJSON *t = cJSON_Parse(target), *p = cJSON_Parse(patch);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(ns_json_merge_patch(&t, p), 0);
    cJSON *w = cJSON_Parse(want);
    ck_assert_msg(cJSON_Compare(t, w, true), "%s + %s gave %s, want %s", target, patch, cJSON_PrintUnformatted(t),
                  want);
    cJSON_Delete(t);
    cJSON_Delete(p);
    cJSON_Delete(w);
}

START_TEST(merge_patch_rfc7386)
{
    merge_case("{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    merge_case("{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}");
    merge_case("{\"a\":\"b\"}", "{\"a\":null}", "{}");
    merge_case("{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}");
    merge_case("{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    merge_case("{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}");
    merge_case("{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}");
    merge_case("{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}");
    merge_case("[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]");
    merge_case("{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]");
    merge_case("{\"a\":\"foo\"}", "null", "null");
    merge_case("{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}");
    merge_case("[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}");
    merge_case("{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}");
}
END_TEST

static const char manifests[] = "apiVersion: apps/v1\n"
                                "kind: Deployment\n"
                                "metadata: {name: web, labels: {tier: front}}\n"
                                "spec: {replicas: 0, template: {spec: {containers: [{name: c, image: x}]}}}\n"
                                "---\n"
                                "apiVersion: v1\n"
                                "kind: List\n"
                                "items:\n"
                                "  - {apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, namespace: data}}\n"
                                "  - {apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: default}}\n"
                                "  - {apiVersion: v1, kind: Pod, metadata: {name: skipped}}\n"
                                "---\n"
                                "apiVersion: karpenter.k8s.aws/v1\n"
                                "kind: EC2NodeClass\n"
                                "metadata: {name: default}\n"
                                "spec: {role: r}\n"
                                "---\n"
                                "apiVersion: apps/v1\n"
                                "kind: Deployment\n"
                                "metadata: {name: api, labels: {tier: back}}\n";

static bool tier_front(const ns_labels *labels, const void *ctx)
{
    const char *v = ns_labels_get(labels, "tier");
    return v && strcmp(v, ctx) == 0;
}

START_TEST(registry)
{
    ns_tl_sources *s = ns_tl_sources_new();
    ck_assert_int_eq(ns_tl_sources_add_text(s, "m.yaml", manifests, strlen(manifests)), 0);
    const cJSON *web = ns_tl_sources_get(s, "Deployment", "default", "web");
    ck_assert_ptr_nonnull(web);
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(web, "spec"), "replicas")->valueint, 0);
    ck_assert_ptr_nonnull(ns_tl_sources_get(s, "StatefulSet", "data", "db"));
    ck_assert_ptr_null(ns_tl_sources_get(s, "StatefulSet", "default", "db"));
    ck_assert_ptr_nonnull(ns_tl_sources_get(s, "NodePool", NULL, "default"));
    ck_assert_ptr_nonnull(ns_tl_sources_get(s, "EC2NodeClass", NULL, "default"));
    ck_assert_ptr_null(ns_tl_sources_get(s, "Pod", "default", "skipped"));

    const char **names = NULL;
    size_t n = 0;
    ck_assert_int_eq(ns_tl_sources_select(s, "Deployment", "default", tier_front, "back", &names, &n), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(names[0], "api");
    free(names);

    /* A later document replaces the entry; replace and remove act on existing entries only. */
    const char *again = "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {replicas: 4}}";
    ck_assert_int_eq(ns_tl_sources_add_text(s, "n.yaml", again, strlen(again)), 0);
    web = ns_tl_sources_get(s, "Deployment", "default", "web");
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(web, "spec"), "replicas")->valueint, 4);
    ck_assert_int_eq(ns_tl_sources_replace(s, "NodePool", NULL, "default", cJSON_CreateObject()), 0);
    ck_assert_int_eq(cJSON_GetArraySize(ns_tl_sources_get(s, "NodePool", NULL, "default")), 0);
    ck_assert_int_eq(ns_tl_sources_replace(s, "NodePool", NULL, "other", cJSON_CreateObject()), NS_ERR_NOT_FOUND);
    ck_assert_str_eq(ns_error_message(), "NodePool other is not in the manifests");
    ns_tl_sources_remove(s, "Deployment", "default", "web");
    ck_assert_ptr_null(ns_tl_sources_get(s, "Deployment", "default", "web"));
    ns_tl_sources_remove(s, "Deployment", "default", "web");

    ck_assert_int_eq(ns_tl_sources_add_path(s, "/nonexistent/manifests.yaml"), NS_ERR_NOT_FOUND);
    ck_assert_int_eq(ns_tl_sources_add_text(s, "bad.yaml", "a: [", 4), NS_ERR_INVALID_CONFIG);
    ns_tl_sources_free(s);
    ns_tl_sources_free(NULL);
}
END_TEST

/* The files of a directory are read in name order, so deploy-b.yaml's Deployment replaces deploy-a.yaml's. */
START_TEST(directory_in_name_order)
{
    ns_tl_sources *s = ns_tl_sources_new();
    ck_assert_int_eq(ns_tl_sources_add_path(s, FIXTURE_DIR), 0);
    const cJSON *batch = ns_tl_sources_get(s, "Deployment", "default", "batch");
    ck_assert_ptr_nonnull(batch);
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(batch, "spec"), "replicas")->valueint, 2);
    ck_assert_ptr_null(ns_tl_sources_get(s, "Pod", "default", "extra"));
    ns_tl_sources_free(s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("timeline-sources");
    TCase *tc = tcase_create("sources");
    tcase_add_test(tc, merge_patch_rfc7386);
    tcase_add_test(tc, registry);
    tcase_add_test(tc, directory_in_name_order);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
