/*
 * ABI 6, v1alpha5_defaults, with real shared objects: the plugin built against the released ABI-5 header loads with
 * no defaults and a Provisioner read with its kinds gains nothing; the ABI-6 plugin's defaults are kept, checked, and
 * added to a Provisioner of its kind that lacks them (named in the conversion log line), never over a requirement
 * written on one of their keys, whether the Provisioner comes from a manifest or from the API server (the controller's
 * informer decoder); a plugin declaring a default v1alpha5 had no operator for is refused at load time.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "kube/kube_decode.h"
#include "log/ns_log.h"
#include "manifest/loader.h"
#include "model/cluster.h"
#include "model/nodeclass_kinds.h"
#include "model/nodepool.h"
#include "model/req_defaults.h"
#include "plugin/plugin_loader.h"

#define ck_assert_error_has(needle)                                                                                    \
    ck_assert_msg(strstr(ns_error_message(), (needle)) != NULL, "error '%s' lacks '%s'", ns_error_message(), (needle))

static char so_path[4096];

static const char *path_of(const char *name)
{
    snprintf(so_path, sizeof(so_path), "%s/%s.so", TP_DIR, name);
    return so_path;
}

static ns_plugin *load(const char *name)
{
    ns_plugin *p = NULL;
    ck_assert_msg(ns_plugin_load_file(path_of(name), NULL, &p) == NS_OK, "%s: %s", name, ns_error_message());
    return p;
}

static int never_called(void *ctx, const ns_requirement_default *def)
{
    (void)ctx;
    (void)def;
    ck_abort_msg("a provider without v1alpha5_defaults called back");
    return 0;
}

/* A Provisioner of TinNodeClass with `requirements` (YAML flow sequence), loaded into a cluster with the kinds of
 * `plugin`; returns its requirements as "key Op [values]" lines, and the conversion log line in *log_line. */
static char *convert(ns_plugin *plugin, const char *requirements, char **log_line)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: tin\nspec:\n"
             "  requirements: %s\n  providerRef:\n    apiVersion: tin.example.com/v1\n    kind: TinNodeClass\n"
             "    name: default\n",
             requirements);
    ns_nodeclass_kinds *kinds = ns_nodeclass_kinds_new();
    ns_cluster *c = ns_cluster_new();
    ck_assert(kinds && c);
    ck_assert_msg(ns_plugin_declare_kinds(plugin, kinds) == NS_OK, "%s", ns_error_message());
    ns_cluster_set_kinds(c, kinds);
    char *log_text = NULL;
    size_t log_len = 0;
    FILE *log = open_memstream(&log_text, &log_len);
    ck_assert_ptr_nonnull(log);
    ns_log_set_output(log);
    ns_log_set_level(NS_LOG_INFO);
    int rc = ns_manifest_load_string(c, "tin.yaml", yaml, strlen(yaml));
    ns_log_set_output(stderr);
    ns_log_set_level(NS_LOG_ERROR);
    fclose(log);
    ck_assert_msg(rc == NS_OK, "%s", ns_error_message());
    const ns_nodepool *np = ns_cluster_find_nodepool(c, "tin");
    ck_assert_ptr_nonnull(np);
    char *out = calloc(1, 4096);
    ck_assert_ptr_nonnull(out);
    for (size_t i = 0; i < np->n_requirements; i++) {
        const ns_selector_req *r = &np->requirements[i];
        size_t used = strlen(out);
        used += (size_t)snprintf(out + used, 4096 - used, "%s %s [", r->key, ns_req_op_name(r->op));
        for (size_t v = 0; v < r->n_values; v++)
            used += (size_t)snprintf(out + used, 4096 - used, "%s%s", v ? " " : "", r->values[v]);
        snprintf(out + used, 4096 - used, "]\n");
    }
    char *line = strstr(log_text, "converted a karpenter.sh/v1alpha5 Provisioner");
    ck_assert_msg(line != NULL, "no conversion line in: %s", log_text);
    *log_line = strndup(line, strcspn(line, "\n"));
    free(log_text);
    ns_cluster_free(c);
    ns_nodeclass_kinds_free(kinds);
    return out;
}

START_TEST(released_abi_5_declares_none)
{
    ns_plugin *p = load("abi5");
    ck_assert_uint_eq(ns_plugin_abi_version(p), 5);
    ck_assert_ptr_null(ns_plugin_v1alpha5_defaults_of(p));
    ck_assert_int_eq(ns_plugin_v1alpha5_defaults(p, never_called, NULL), NS_ERR_UNSUPPORTED);
    ck_assert_error_has("provider abi5 (ABI 5) does not support v1alpha5_defaults");
    char *line = NULL;
    char *reqs = convert(p, "[]", &line);
    ck_assert_str_eq(reqs, "");
    ck_assert_msg(strstr(line, "\"defaultedRequirements\":\"none\""), "%s", line);
    free(reqs);
    free(line);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(defaults_are_kept_checked)
{
    ns_plugin *p = load("good");
    ck_assert_uint_ge(ns_plugin_abi_version(p), 6);
    const ns_req_defaults *d = ns_plugin_v1alpha5_defaults_of(p);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(d->n, 2);
    ck_assert_str_eq(d->items[0].req.key, "tin.example.com/alloy");
    ck_assert_int_eq(d->items[0].req.op, NS_OP_IN);
    ck_assert_uint_eq(d->items[0].n_unless_keys, 2);
    ck_assert_str_eq(d->items[1].req.key, "tin.example.com/purity");
    ck_assert_int_eq(d->items[1].req.op, NS_OP_GT);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(missing_requirements_are_defaulted_and_named)
{
    ns_plugin *p = load("good");
    char *line = NULL;
    char *reqs = convert(p, "[{key: tin.example.com/shape, operator: In, values: [wire]}]", &line);
    ck_assert_str_eq(reqs, "tin.example.com/shape In [wire]\ntin.example.com/alloy In [bronze]\n"
                           "tin.example.com/purity Gt [90]\n");
    ck_assert_msg(strstr(line, "\"defaultedRequirements\":\"tin.example.com/alloy In [bronze]; "
                               "tin.example.com/purity Gt [90]\""),
                  "%s", line);
    free(reqs);
    free(line);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(written_requirements_are_kept)
{
    ns_plugin *p = load("good");
    char *line = NULL;
    /* a temper requirement is one of the alloy default's unless keys: the alloy is left open */
    char *reqs = convert(p, "[{key: tin.example.com/temper, operator: Exists}]", &line);
    ck_assert_str_eq(reqs, "tin.example.com/temper Exists []\ntin.example.com/purity Gt [90]\n");
    ck_assert_msg(strstr(line, "\"defaultedRequirements\":\"tin.example.com/purity Gt [90]\""), "%s", line);
    free(reqs);
    free(line);
    /* every key written, whatever the operator: nothing is added, nothing is narrowed */
    reqs = convert(p, "[{key: tin.example.com/alloy, operator: DoesNotExist}, {key: tin.example.com/purity, "
                      "operator: Lt, values: ['50']}]", &line);
    ck_assert_str_eq(reqs, "tin.example.com/alloy DoesNotExist []\ntin.example.com/purity Lt [50]\n");
    ck_assert_msg(strstr(line, "\"defaultedRequirements\":\"none\""), "%s", line);
    free(reqs);
    free(line);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(api_server_provisioners_are_defaulted)
{
    ns_plugin *p = load("good");
    ns_nodeclass_kinds *kinds = ns_nodeclass_kinds_new();
    ck_assert_ptr_nonnull(kinds);
    ck_assert_msg(ns_plugin_declare_kinds(p, kinds) == NS_OK, "%s", ns_error_message());
    cJSON *obj = cJSON_Parse("{\"apiVersion\":\"karpenter.sh/v1alpha5\",\"kind\":\"Provisioner\",\"metadata\":"
                             "{\"name\":\"tin\",\"uid\":\"u-1\",\"resourceVersion\":\"7\"},\"spec\":{\"requirements\":"
                             "[{\"key\":\"tin.example.com/purity\",\"operator\":\"Gt\",\"values\":[\"99\"]}],"
                             "\"providerRef\":{\"apiVersion\":\"tin.example.com/v1\",\"kind\":\"TinNodeClass\","
                             "\"name\":\"default\"}}}");
    ck_assert_ptr_nonnull(obj);
    void *typed = NULL;
    ck_assert_msg(NS_KUBE_DECODE_NODEPOOL.decode(obj, "Provisioner tin", kinds, &typed) == NS_OK, "%s",
                  ns_error_message());
    const ns_nodepool *np = typed;
    ck_assert_uint_eq(np->n_requirements, 2);
    ck_assert_str_eq(np->requirements[0].key, "tin.example.com/purity");
    ck_assert_str_eq(np->requirements[0].values[0], "99");
    ck_assert_str_eq(np->requirements[1].key, "tin.example.com/alloy");
    ck_assert_str_eq(np->requirements[1].values[0], "bronze");
    NS_KUBE_DECODE_NODEPOOL.free(typed);
    cJSON_Delete(obj);
    ns_nodeclass_kinds_free(kinds);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(a_malformed_default_is_refused)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(ns_plugin_load_file(path_of("bad_default"), NULL, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_null(p);
    ck_assert_error_has("bad_default.so: provider good: v1alpha5_defaults[1]: the default for tin.example.com/purity "
                        "has operator \"Gte\", not one of a v1alpha5 Provisioner's");
}
END_TEST

START_TEST(malformed_defaults_are_named)
{
    ns_req_defaults *d = ns_req_defaults_new();
    ck_assert_ptr_nonnull(d);
    const char *const one[] = {"1"}, *const two[] = {"1", "2"};
    const char *const arch[] = {"kubernetes.io/arch"}, *const os[] = {"kubernetes.io/os"}, *const empty[] = {""};
    ck_assert_int_eq(ns_req_defaults_add(d, "d[0]", "kubernetes.io/arch", "Gt", two, 2, arch, 1),
                     NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("d[0]: operator Gt needs exactly one integer value");
    ck_assert_int_eq(ns_req_defaults_add(d, "d[0]", "kubernetes.io/arch", "In", one, 1, NULL, 0),
                     NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("d[0]: the default for kubernetes.io/arch has no unless keys");
    ck_assert_int_eq(ns_req_defaults_add(d, "d[0]", "kubernetes.io/arch", "In", one, 1, os, 1),
                     NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("does not list kubernetes.io/arch among its unless keys");
    ck_assert_int_eq(ns_req_defaults_add(d, "d[0]", "kubernetes.io/arch", "In", one, 1, empty, 1),
                     NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("has an empty unless key");
    ck_assert_int_eq(ns_req_defaults_add(d, "d[0]", "kubernetes.io/arch", "In", one, 1, arch, 1), NS_OK);
    /* the legacy alias is the same key */
    ck_assert_int_eq(ns_req_defaults_add(d, "d[1]", "beta.kubernetes.io/arch", "In", one, 1, arch, 1),
                     NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("d[1]: a second default for beta.kubernetes.io/arch");
    ck_assert_uint_eq(d->n, 1);
    ns_req_defaults_free(d);
}
END_TEST

int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    Suite *s = suite_create("abi-v1alpha5-defaults");
    TCase *tc = tcase_create("abi-v1alpha5-defaults");
    tcase_add_test(tc, released_abi_5_declares_none);
    tcase_add_test(tc, defaults_are_kept_checked);
    tcase_add_test(tc, missing_requirements_are_defaulted_and_named);
    tcase_add_test(tc, written_requirements_are_kept);
    tcase_add_test(tc, api_server_provisioners_are_defaulted);
    tcase_add_test(tc, a_malformed_default_is_refused);
    tcase_add_test(tc, malformed_defaults_are_named);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
