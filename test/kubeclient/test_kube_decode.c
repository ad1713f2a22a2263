/* API objects as the API server sends them (with managedFields, status, defaulted fields) decode into the engine's
 * model through the manifest decoders; bad or unexpected fields are errors naming the object and the field. The
 * informer-level behaviour (a bad object skipped, the others cached) is tested against the real API server. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "kube/kube_decode.h"
#include "kube/kube_resource.h"
#include "model/node.h"
#include "model/nodeclass.h"
#include "model/nodeclass_kinds.h"
#include "model/pod.h"

static cJSON *load(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", NS_TEST_DATA, name);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON *j = cJSON_Parse(buf);
    ck_assert_ptr_nonnull(j);
    return j;
}

START_TEST(pod_from_api_server_decodes)
{
    cJSON *j = load("pod.json");
    void *typed = NULL;
    ck_assert_msg(NS_KUBE_DECODE_POD.decode(j, "Pod shop/web", NULL, &typed) == 0, "%s", ns_error_message());
    ns_pod *pod = typed;
    ck_assert_str_eq(pod->meta.name, "web-5d8f7c9b4-x2x7q");
    ck_assert_str_eq(pod->meta.namespace_, "shop");
    ck_assert_str_eq(pod->meta.owner_kind, "ReplicaSet");
    ck_assert_str_eq(pod->node_name, "node-a");
    ck_assert_str_eq(pod->phase, "Running");
    ck_assert_uint_eq(pod->n_containers, 1);
    ck_assert_uint_eq(pod->n_tolerations, 2);
    ck_assert_int_eq(pod->termination_grace_period_s, 30);
    NS_KUBE_DECODE_POD.free(pod);
    cJSON_Delete(j);
}
END_TEST

START_TEST(node_from_api_server_decodes)
{
    cJSON *j = load("node.json");
    void *typed = NULL;
    ck_assert_msg(NS_KUBE_DECODE_NODE.decode(j, "Node node-a", NULL, &typed) == 0, "%s", ns_error_message());
    ns_node *node = typed;
    ck_assert_str_eq(node->provider_id, "aws:///eu-west-1a/i-0123456789abcdef0");
    ck_assert_uint_eq(node->n_taints, 1);
    ck_assert(node->ready);
    ck_assert_uint_eq(node->meta.n_finalizers, 1);
    NS_KUBE_DECODE_NODE.free(node);
    cJSON_Delete(j);
}
END_TEST

static void expect_error(const char *file, const ns_kube_decoder *dec, const char *path, const char *value_json,
                         const char *needle)
{
    cJSON *j = load(file);
    /* path: "spec.containers.0.resources.requests.cpu"-like dotted walk; the last segment is set to value */
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    cJSON *at = j;
    char *save = NULL, *seg = strtok_r(buf, ".", &save), *next;
    for (; (next = strtok_r(NULL, ".", &save)); seg = next)
        at = cJSON_IsArray(at) ? cJSON_GetArrayItem(at, atoi(seg)) : cJSON_GetObjectItemCaseSensitive(at, seg);
    ck_assert_ptr_nonnull(at);
    cJSON_DeleteItemFromObjectCaseSensitive(at, seg);
    cJSON_AddItemToObject(at, seg, cJSON_Parse(value_json));
    void *typed = NULL;
    ck_assert_int_eq(dec->decode(j, "x", NULL, &typed), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_null(typed);
    ck_assert_msg(strstr(ns_error_message(), needle), "\"%s\" lacks \"%s\"", ns_error_message(), needle);
    cJSON_Delete(j);
}

START_TEST(bad_fields_name_object_and_field)
{
    expect_error("pod.json", &NS_KUBE_DECODE_POD, "spec.containers.0.resources.requests.cpu", "\"lots\"",
                 "API server: Pod shop/web-5d8f7c9b4-x2x7q: spec.containers[0].resources.requests.cpu");
    expect_error("pod.json", &NS_KUBE_DECODE_POD, "spec.bogusField", "1",
                 "API server: Pod shop/web-5d8f7c9b4-x2x7q: unknown field \"spec.bogusField\"");
    expect_error("pod.json", &NS_KUBE_DECODE_POD, "spec.terminationGracePeriodSeconds", "\"thirty\"",
                 "spec.terminationGracePeriodSeconds: expected an integer");
    expect_error("node.json", &NS_KUBE_DECODE_NODE, "spec.taints.0.effect", "\"Sometimes\"",
                 "API server: Node node-a: spec.taints[0]: effect \"Sometimes\"");
}
END_TEST

START_TEST(nodeclass_decoded_with_the_providers_kinds)
{
    ns_nodeclass_kinds *kinds = ns_nodeclass_kinds_new();
    ns_nodeclass_kind decl = {sizeof(decl), "example.cloud.io", "v1", "ExampleNodeClass", 0};
    ck_assert_int_eq(ns_nodeclass_kinds_add(kinds, "example", &decl, NULL, NULL), 0);
    cJSON *j = cJSON_Parse("{\"apiVersion\":\"example.cloud.io/v1\",\"kind\":\"ExampleNodeClass\","
                           "\"metadata\":{\"name\":\"default\",\"resourceVersion\":\"7\"},"
                           "\"spec\":{\"image\":\"img-1\"},\"status\":{\"conditions\":[]}}");
    void *typed = NULL;
    ck_assert_msg(NS_KUBE_DECODE_NODECLASS.decode(j, "ExampleNodeClass default", kinds, &typed) == 0, "%s",
                  ns_error_message());
    ns_nodeclass_def *def = typed;
    ck_assert_str_eq(def->kind, "ExampleNodeClass");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(def->spec, "image")->valuestring, "img-1");
    NS_KUBE_DECODE_NODECLASS.free(def);
    /* a kind no loaded provider declares does not decode */
    ck_assert_int_eq(NS_KUBE_DECODE_NODECLASS.decode(j, "ExampleNodeClass default", NULL, &typed),
                     NS_ERR_INVALID_CONFIG);
    cJSON_Delete(j);
    ns_nodeclass_kinds_free(kinds);
}
END_TEST

START_TEST(decoders_by_resource)
{
    ck_assert_ptr_eq(ns_kube_decoder_for(&NS_KUBE_PODS), &NS_KUBE_DECODE_POD);
    ck_assert_ptr_eq(ns_kube_decoder_for(&NS_KUBE_NODECLAIMS), &NS_KUBE_DECODE_NODECLAIM);
    ck_assert_ptr_null(ns_kube_decoder_for(&NS_KUBE_LEASES));
    char buf[256];
    ns_kube_resource r;
    ck_assert_int_eq(ns_kube_resource_nodeclass("karpenter.k8s.aws", "v1", "EC2NodeClass", buf, sizeof(buf), &r), 0);
    ck_assert_str_eq(r.resource, "ec2nodeclasses");
    ck_assert_ptr_null(ns_kube_decoder_for(&r));
    ck_assert_int_eq(ns_kube_resource_nodeclass("x.io", "v1", "Policy", buf, sizeof(buf), &r), 0);
    ck_assert_str_eq(r.resource, "policies");
    char path[256];
    ck_assert_int_eq(ns_kube_path(path, sizeof(path), &NS_KUBE_PODS, "a b", "n/1", "eviction", NULL), 0);
    ck_assert_str_eq(path, "/api/v1/namespaces/a%20b/pods/n%2F1/eviction");
    ck_assert_int_eq(ns_kube_path(path, sizeof(path), &NS_KUBE_NODECLAIMS, "ignored", NULL, NULL, "limit=5"), 0);
    ck_assert_str_eq(path, "/apis/karpenter.sh/v1/nodeclaims?limit=5");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube-decode");
    TCase *t = tcase_create("decode");
    tcase_add_test(t, pod_from_api_server_decodes);
    tcase_add_test(t, node_from_api_server_decodes);
    tcase_add_test(t, bad_fields_name_object_and_field);
    tcase_add_test(t, nodeclass_decoded_with_the_providers_kinds);
    tcase_add_test(t, decoders_by_resource);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
