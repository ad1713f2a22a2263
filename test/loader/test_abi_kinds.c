/*
 * Released ABIs and node-class kinds, with real shared objects: a plugin built against every released provider.h in
 * test/abi/ loads through this build's loader; the kinds a provider declares are exactly the node classes manifests
 * may hold (TinNodeClass, a kind the core has never heard of), each checked by the provider's validate_nodeclass.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloud/instance_types.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "manifest/loader.h"
#include "model/cluster.h"
#include "model/nodeclass_kinds.h"
#include "plugin/plugin_loader.h"
#include "plugin/plugin_status.h"

#define ck_assert_error_has(needle)                                                                                    \
    ck_assert_msg(strstr(ns_error_message(), (needle)) != NULL, "error '%s' lacks '%s'", ns_error_message(), (needle))

static ns_plugin *load(const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.so", TP_DIR, name);
    ns_plugin *p = NULL;
    ck_assert_msg(ns_plugin_load_file(path, NULL, &p) == NS_OK, "%s: %s", name, ns_error_message());
    return p;
}

static int load_refused(const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.so", TP_DIR, name);
    ns_plugin *p = NULL;
    int rc = ns_plugin_load_file(path, NULL, &p);
    ck_assert_ptr_null(p);
    return rc;
}

/* Every method of the table reached through the loader's copy: the fields sit where each released header put them. */
static void exercise(ns_plugin *p)
{
    ns_nodeclass nc = {.struct_size = sizeof(nc), .api_version = "tin.example.com/v1", .kind = "TinNodeClass",
                       .name = "tin"};
    ns_itype_set set;
    ck_assert_msg(ns_itype_set_load(p, &nc, &set) == NS_OK, "%s", ns_error_message());
    ck_assert_str_eq(set.items[0].name, "tp.small");
    ns_itype_set_free(&set);
    ns_instance inst;
    ck_assert_int_eq(ns_plugin_get_instance(p, "tp:///zone-a/i-9", &inst), NS_ERR_NOT_FOUND);
    ck_assert_error_has("instance tp:///zone-a/i-9 not found"); /* the provider's own get_instance */
    bool gone = false;
    ck_assert_int_eq(ns_plugin_terminate(p, "tp:///zone-a/i-1", &gone), NS_OK);
    ck_assert(gone);
}

START_TEST(released_abi_2_loads)
{
    ns_plugin *p = load("abi2");
    ck_assert_uint_eq(ns_plugin_abi_version(p), 2);
    ck_assert_ptr_null(ns_plugin_table(p)->drift_fields);
    ck_assert_ptr_nonnull(ns_plugin_table(p)->validate_nodeclass);
    exercise(p);
    ns_plugin_unload(p);
}
END_TEST

/* drift_fields was appended to ABI 2 in place: a table that has it is 136 bytes, one without 128. Both load, and the
 * field is read only when the table reaches it. */
START_TEST(released_abi_2_with_drift_fields_loads)
{
    ns_plugin *p = load("abi2_drift");
    ck_assert_uint_eq(ns_plugin_abi_version(p), 2);
    const char *const *fields = ns_plugin_table(p)->drift_fields;
    ck_assert_ptr_nonnull(fields);
    ck_assert_str_eq(fields[0], "TinNodeClass.gauge");
    ck_assert_ptr_null(fields[1]);
    exercise(p);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(released_abi_3_loads)
{
    ns_plugin *p = load("abi3");
    ck_assert_uint_eq(ns_plugin_abi_version(p), 3);
    ck_assert_uint_eq(ns_plugin_table(p)->n_nodeclass_kinds, 2);
    ck_assert_ptr_nonnull(ns_plugin_table(p)->drift_fields);
    exercise(p);
    ns_plugin_unload(p);
}
END_TEST

/* An ABI-3 provider has no nodeclass_status: the core says so, whatever its table held beyond 152 bytes. */
START_TEST(released_abi_3_has_no_status)
{
    ns_plugin *p = load("abi3");
    ck_assert_ptr_null(ns_plugin_table(p)->nodeclass_status);
    ns_nodeclass nc = {.struct_size = sizeof(nc), .api_version = "tin.example.com/v1", .kind = "TinNodeClass",
                       .name = "tin"};
    struct cJSON *status = NULL;
    ck_assert_int_eq(ns_plugin_nodeclass_status(p, &nc, &status), NS_ERR_UNSUPPORTED);
    ck_assert_ptr_null(status);
    ck_assert_error_has("provider abi3 (ABI 3) does not support nodeclass_status");
    ns_plugin_unload(p);
}
END_TEST

/* The later released headers: each plugin claims its header's version and answers through the loader's copy. */
START_TEST(released_abis_4_to_6_load)
{
    static const char *const names[] = {"abi4", "abi5", "abi6"};
    for (unsigned i = 0; i < 3; i++) {
        ns_plugin *p = load(names[i]);
        ck_assert_uint_eq(ns_plugin_abi_version(p), 4 + i);
        ck_assert_uint_eq(ns_plugin_table(p)->n_nodeclass_kinds, 2);
        exercise(p);
        ns_plugin_unload(p);
    }
}
END_TEST

START_TEST(minimum_sizes_per_version)
{
    ck_assert_uint_eq(ns_plugin_min_table_size(1), offsetof(ns_provider, get_instance));
    ck_assert_uint_eq(ns_plugin_min_table_size(2), offsetof(ns_provider, drift_fields));
    ck_assert_uint_eq(ns_plugin_min_table_size(3), offsetof(ns_provider, nodeclass_status));
    ck_assert_uint_eq(ns_plugin_min_table_size(4), offsetof(ns_provider, event_from_node_condition));
    ck_assert_uint_eq(ns_plugin_min_table_size(5), offsetof(ns_provider, v1alpha5_defaults));
    ck_assert_uint_eq(ns_plugin_min_table_size(6), sizeof(ns_provider));
    ck_assert_uint_eq(ns_plugin_min_table_size(7), sizeof(ns_provider)); /* ABI 7 added no method */
    ck_assert_uint_eq(ns_plugin_min_table_size(0), 0);
    ck_assert_uint_eq(ns_plugin_min_table_size(8), 0);
}
END_TEST

/* ABI 4, through a plugin the core never heard of: its status comes back checked, with the Ready condition the core
 * derives; each broken rule is refused naming the provider, the node class and the field. */
static int tin_status(ns_plugin *p, const char *spec, struct cJSON **status)
{
    struct cJSON *spec_json = cJSON_Parse(spec);
    ns_nodeclass nc = {.struct_size = sizeof(nc), .api_version = "tin.example.com/v1", .kind = "TinNodeClass",
                       .name = "tin", .spec = (const ns_json *)spec_json};
    int rc = ns_plugin_nodeclass_status(p, &nc, status);
    cJSON_Delete(spec_json);
    return rc;
}

START_TEST(node_class_status_is_checked_and_completed)
{
    ns_plugin *p = load("good");
    cJSON *st = NULL;
    const char *reason = NULL, *message = NULL;
    ck_assert_msg(tin_status(p, "{\"gauge\": 12}", &st) == NS_OK, "%s", ns_error_message());
    ck_assert_int_eq(cJSON_GetObjectItem(st, "gauge")->valueint, 12);
    ck_assert_str_eq(ns_nodeclass_status_condition(st, "Ready", &reason, NULL), "True");
    ck_assert_str_eq(reason, "Ready");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "conditions"), 0), "type")
                         ->valuestring, "Ready");
    ck_assert_str_eq(ns_nodeclass_status_condition(st, "GaugeReady", NULL, NULL), "True");
    cJSON_Delete(st);

    /* A resolution that fails is a status, not an error. */
    ck_assert_int_eq(tin_status(p, "{\"gauge\": 25}", &st), NS_OK);
    ck_assert_ptr_null(cJSON_GetObjectItem(st, "gauge"));
    ck_assert_str_eq(ns_nodeclass_status_condition(st, "Ready", &reason, &message), "False");
    ck_assert_str_eq(reason, "UnhealthyDependents");
    ck_assert_str_eq(message, "GaugeReady=False");
    ck_assert_str_eq(ns_nodeclass_status_condition(st, "GaugeReady", &reason, &message), "False");
    ck_assert_str_eq(reason, "GaugeNotFound");
    ck_assert_str_eq(message, "no wire of spec.gauge in stock (at most 20)");
    cJSON_Delete(st);

    static const struct {
        const char *bug;
        int rc;
        const char *error;
    } bugs[] = {
        {"throttled", NS_ERR_THROTTLED, "provider good: nodeclass_status tin: the stock service is busy"},
        {"no-status", NS_ERR_INTERNAL, "provider good: nodeclass_status tin: returned NS_OK without a status"},
        {"ready", NS_ERR_INTERNAL, "status.conditions[0] is \"Ready\", which the core derives"},
        {"reason", NS_ERR_INTERNAL, "status.conditions[0] (GaugeReady): reason \"gauge not found\" must be"},
        {"no-message", NS_ERR_INTERNAL, "status.conditions[0] (GaugeReady) is False without a message saying why"},
        {"timestamp", NS_ERR_INTERNAL, "status.conditions[0] (GaugeReady): unexpected field \"lastTransitionTime\""},
        {"no-conditions", NS_ERR_INTERNAL, "provider good: nodeclass_status tin: status.conditions must be a "
                                           "non-empty array"},
    };
    for (size_t i = 0; i < sizeof(bugs) / sizeof(bugs[0]); i++) {
        char spec[128];
        snprintf(spec, sizeof(spec), "{\"gauge\": 25, \"statusBug\": \"%s\"}", bugs[i].bug);
        st = NULL;
        ck_assert_int_eq(tin_status(p, spec, &st), bugs[i].rc);
        ck_assert_ptr_null(st);
        ck_assert_error_has(bugs[i].error);
    }
    ns_plugin_unload(p);
}
END_TEST

START_TEST(abi_3_without_kinds_is_refused)
{
    ck_assert_int_eq(load_refused("no_kinds"), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("no_kinds.so: provider good claims ABI 7 but declares no node-class kinds");
    ck_assert_int_eq(load_refused("bad_kind"), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("bad_kind.so: provider good: node-class kind TinNodeClass: group \"apps\" is not a custom "
                        "API group");
}
END_TEST

static const char tin_pool[] = "apiVersion: tin.example.com/v1\n"
                               "kind: TinNodeClass\n"
                               "metadata: {name: tin}\n"
                               "spec: {gauge: 12, kubelet: {maxPods: 20}}\n"
                               "---\n"
                               "apiVersion: karpenter.sh/v1\n"
                               "kind: NodePool\n"
                               "metadata: {name: tins}\n"
                               "spec:\n"
                               "  template:\n"
                               "    spec:\n"
                               "      nodeClassRef: {group: tin.example.com, kind: TinNodeClass, name: tin}\n"
                               "      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]\n";

/* The core has no list naming TinNodeClass: it loads because the loaded provider declares it. */
START_TEST(declared_kind_loads_from_manifests)
{
    ns_plugin *p = load("good");
    ns_nodeclass_kinds *k = ns_nodeclass_kinds_new();
    ck_assert_int_eq(ns_plugin_declare_kinds(p, k), NS_OK);
    ns_cluster *c = ns_cluster_new();
    ns_cluster_set_kinds(c, k);
    ck_assert_msg(ns_manifest_load_string(c, "tin.yaml", tin_pool, strlen(tin_pool)) == NS_OK, "%s",
                  ns_error_message());
    ck_assert_msg(ns_cluster_resolve(c) == NS_OK, "%s", ns_error_message());
    ck_assert_uint_eq(c->n_nodeclasses, 1);
    ck_assert_str_eq(c->nodeclasses[0]->abi.kind, "TinNodeClass");
    ck_assert(c->nodeclasses[0]->kubelet.present); /* declared with NS_NODECLASS_KUBELET */
    ck_assert(c->nodepools[0]->kubelet.present);   /* and given to the pool that uses it */
    ns_cluster_free(c);

    /* Without the provider's kinds the same manifests hold no node class, and the pool names a missing one. */
    c = ns_cluster_new();
    ck_assert_int_eq(ns_manifest_load_string(c, "tin.yaml", tin_pool, strlen(tin_pool)), NS_OK);
    ck_assert_uint_eq(c->n_nodeclasses, 0);
    ck_assert_int_eq(ns_cluster_resolve(c), NS_ERR_INVALID_CONFIG);
    ns_cluster_free(c);
    ns_nodeclass_kinds_free(k);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(bad_node_class_is_refused_with_the_providers_message)
{
    ns_plugin *p = load("good");
    ns_nodeclass_kinds *k = ns_nodeclass_kinds_new();
    ck_assert_int_eq(ns_plugin_declare_kinds(p, k), NS_OK);
    ns_cluster *c = ns_cluster_new();
    ns_cluster_set_kinds(c, k);
    const char *bad = "# a comment line\n"
                      "apiVersion: tin.example.com/v1\n"
                      "kind: TinNodeClass\n"
                      "metadata: {name: thick}\n"
                      "spec: {gauge: 99}\n";
    ck_assert_int_eq(ns_manifest_load_string(c, "bad.yaml", bad, strlen(bad)), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("bad.yaml:2: TinNodeClass thick: provider good: validate_nodeclass thick: TinNodeClass thick: "
                        "spec.gauge must be a number from 1 to 30");
    const char *version = "apiVersion: tin.example.com/v2\nkind: TinNodeClass\nmetadata: {name: t}\n";
    ck_assert_int_eq(ns_manifest_load_string(c, "v.yaml", version, strlen(version)), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("\"tin.example.com/v2\" is not supported for kind TinNodeClass (the loaded providers take "
                        "tin.example.com/v1, tin.example.com/v1alpha1)");
    ns_cluster_free(c);
    ns_nodeclass_kinds_free(k);
    ns_plugin_unload(p);
}
END_TEST

/* A karpenter.sh/v1beta1 nodeClassRef that names no kind means the kind the provider flags as that default. */
START_TEST(legacy_reference_takes_the_declared_default)
{
    ns_plugin *p = load("good");
    ns_nodeclass_kinds *k = ns_nodeclass_kinds_new();
    ck_assert_int_eq(ns_plugin_declare_kinds(p, k), NS_OK);
    const char *pool = "apiVersion: karpenter.sh/v1beta1\n"
                       "kind: NodePool\n"
                       "metadata: {name: old}\n"
                       "spec:\n"
                       "  template:\n"
                       "    spec:\n"
                       "      nodeClassRef: {name: tin}\n";
    ns_cluster *c = ns_cluster_new();
    ns_cluster_set_kinds(c, k);
    ck_assert_msg(ns_manifest_load_string(c, "old.yaml", pool, strlen(pool)) == NS_OK, "%s", ns_error_message());
    ck_assert_str_eq(c->nodepools[0]->nodeclass_ref.kind, "TinNodeClass");
    ck_assert_str_eq(c->nodepools[0]->nodeclass_ref.group, "tin.example.com");
    ns_cluster_free(c);
    /* A v1alpha5 Provisioner's providerRef has no default here: the error says why. */
    const char *prov = "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: p}\n"
                       "spec: {providerRef: {name: tin}}\n";
    c = ns_cluster_new();
    ns_cluster_set_kinds(c, k);
    ck_assert_int_eq(ns_manifest_load_string(c, "p.yaml", prov, strlen(prov)), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("spec.providerRef: names no kind, and no loaded provider declares the kind such a reference "
                        "means (loaded node-class kinds: TinNodeClass (tin.example.com/v1), TinNodeClass "
                        "(tin.example.com/v1alpha1))");
    ns_cluster_free(c);
    ns_nodeclass_kinds_free(k);
    ns_plugin_unload(p);
}
END_TEST

/* A provider of a released ABI before 3 declares no kinds: it takes any kind of a custom API group, validated by it. */
START_TEST(older_provider_takes_any_custom_kind)
{
    ns_plugin *p = load("abi2");
    ns_nodeclass_kinds *k = ns_nodeclass_kinds_new();
    ck_assert_int_eq(ns_plugin_declare_kinds(p, k), NS_OK);
    ns_cluster *c = ns_cluster_new();
    ns_cluster_set_kinds(c, k);
    const char *docs = "apiVersion: vendor.example.org/v7\nkind: VendorClass\nmetadata: {name: a}\nspec: {gauge: 3}\n"
                       "---\n"
                       "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n";
    ck_assert_msg(ns_manifest_load_string(c, "v.yaml", docs, strlen(docs)) == NS_OK, "%s", ns_error_message());
    ck_assert_uint_eq(c->n_nodeclasses, 1); /* the ClusterRole, of a Kubernetes group, is skipped */
    const char *bad = "apiVersion: vendor.example.org/v7\nkind: VendorClass\nmetadata: {name: b}\nspec: {gauge: 0}\n";
    ck_assert_int_eq(ns_manifest_load_string(c, "b.yaml", bad, strlen(bad)), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("provider abi2: validate_nodeclass b: VendorClass b: spec.gauge must be a number from 1 to 30");
    ns_cluster_free(c);
    /* Two such providers could not tell their node classes apart. */
    ns_plugin *q = load("abi2_drift");
    ck_assert_int_eq(ns_plugin_declare_kinds(q, k), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("providers abi2 and abi2_drift both declare no node-class kinds");
    ns_nodeclass_kinds_free(k);
    ns_plugin_unload(q);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(two_providers_cannot_declare_one_kind)
{
    ns_plugin *a = load("good"), *b = load("abi3");
    ns_nodeclass_kinds *k = ns_nodeclass_kinds_new();
    ck_assert_int_eq(ns_plugin_declare_kinds(a, k), NS_OK);
    ck_assert_int_eq(ns_plugin_declare_kinds(b, k), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("node-class kind TinNodeClass (tin.example.com/v1) is declared by both provider good and "
                        "provider abi3");
    ns_nodeclass_kinds_free(k);
    ns_plugin_unload(a);
    ns_plugin_unload(b);
}
END_TEST

/* provider.h's limits are the core's to keep: a request that breaks one never reaches the provider. */
START_TEST(launch_limits_are_enforced_before_the_provider)
{
    ns_plugin *p = load("good");
    ns_nodeclass nc = {.struct_size = sizeof(nc), .api_version = "tin.example.com/v1", .kind = "TinNodeClass",
                       .name = "tin"};
    ns_launch_option opt = {.struct_size = sizeof(opt), .instance_type = "tp.small", .zone = "zone-a",
                            .capacity_type = "on-demand", .price_per_hour = 0.5};
    char token[NS_CLIENT_TOKEN_MAX + 2];
    memset(token, 'a', NS_CLIENT_TOKEN_MAX);
    token[NS_CLIENT_TOKEN_MAX] = '\0';
    ns_launch_request req = {.struct_size = sizeof(req), .nodeclaim_name = "c-1", .nodepool_name = "pool",
                             .client_token = token, .nodeclass = &nc, .options = &opt, .n_options = 1};
    ns_launch_result res;
    /* 64 characters reach the provider (which answers with its own insufficient-capacity error). */
    ck_assert_int_eq(ns_plugin_launch(p, &req, &res), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert_error_has("no capacity for c-1");
    strcat(token, "b");
    ck_assert_int_eq(ns_plugin_launch(p, &req, &res), NS_ERR_INVALID_ARGUMENT);
    ck_assert_error_has("provider good: launch c-1: client token \"");
    ck_assert_error_has("is 65 characters, more than the 64 the provider ABI allows");
    token[3] = '\n';
    token[10] = '\0';
    ck_assert_int_eq(ns_plugin_launch(p, &req, &res), NS_ERR_INVALID_ARGUMENT);
    ck_assert_error_has("not printable ASCII at position 3");
    char pool[NS_NAME_MAX + 1];
    memset(pool, 'p', NS_NAME_MAX);
    pool[NS_NAME_MAX] = '\0';
    strcpy(token, "ok");
    req.nodepool_name = pool;
    ck_assert_int_eq(ns_plugin_launch(p, &req, &res), NS_ERR_INVALID_ARGUMENT);
    ck_assert_error_has("NodePool name \"pppp");
    ck_assert_error_has("is 128 characters; the provider ABI allows at most 127");
    ns_plugin_unload(p);
}
END_TEST

int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    Suite *s = suite_create("abi-kinds");
    TCase *tc = tcase_create("abi-kinds");
    tcase_add_test(tc, released_abi_2_loads);
    tcase_add_test(tc, released_abi_2_with_drift_fields_loads);
    tcase_add_test(tc, released_abi_3_loads);
    tcase_add_test(tc, released_abi_3_has_no_status);
    tcase_add_test(tc, released_abis_4_to_6_load);
    tcase_add_test(tc, minimum_sizes_per_version);
    tcase_add_test(tc, node_class_status_is_checked_and_completed);
    tcase_add_test(tc, abi_3_without_kinds_is_refused);
    tcase_add_test(tc, declared_kind_loads_from_manifests);
    tcase_add_test(tc, bad_node_class_is_refused_with_the_providers_message);
    tcase_add_test(tc, legacy_reference_takes_the_declared_default);
    tcase_add_test(tc, older_provider_takes_any_custom_kind);
    tcase_add_test(tc, two_providers_cannot_declare_one_kind);
    tcase_add_test(tc, launch_limits_are_enforced_before_the_provider);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
