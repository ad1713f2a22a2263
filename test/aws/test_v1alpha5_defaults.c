/*
 * aws.so's v1alpha5_defaults (ABI 6), loaded through the core's loader: a karpenter.sh/v1alpha5 Provisioner read
 * with aws.so's kinds gets what Karpenter's AWS webhook added (aws/karpenter-provider-aws v0.31 pkg/apis/v1alpha5
 * Provisioner.SetDefaults and its suite_test.go): kubernetes.io/os In [linux], kubernetes.io/arch In [amd64],
 * karpenter.sh/capacity-type In [on-demand], and instance-category In [c, m, r] with instance-generation Gt 2 unless an
 * instance type, family, category or generation requirement is written; a written requirement is kept as written,
 * and the conversion log line names each default added.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_emulator.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "manifest/loader.h"
#include "model/cluster.h"
#include "model/nodeclass_kinds.h"
#include "model/nodepool.h"
#include "plugin/plugin_loader.h"

static emulator emu;
static ns_plugin *plugin;

#define OS "kubernetes.io/os In [linux]"
#define ARCH "kubernetes.io/arch In [amd64]"
#define ON_DEMAND "karpenter.sh/capacity-type In [on-demand]"
#define CMR "karpenter.k8s.aws/instance-category In [c m r]"
#define GEN "karpenter.k8s.aws/instance-generation Gt [2]"

/* The requirements of a Provisioner with `requirements` (a YAML flow sequence) read with aws.so's kinds, one
 * "key Op [values]" line each; the conversion log line goes to *log_line. Both the caller's. */
static char *convert(const char *requirements, char **log_line)
{
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: default\nspec:\n"
             "  requirements: %s\n  providerRef:\n    name: default\n",
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
    int rc = ns_manifest_load_string(c, "provisioner.yaml", yaml, strlen(yaml));
    ns_log_set_output(stderr);
    ns_log_set_level(NS_LOG_ERROR);
    fclose(log);
    ck_assert_msg(rc == NS_OK, "%s", ns_error_message());
    const ns_nodepool *np = ns_cluster_find_nodepool(c, "default");
    ck_assert_ptr_nonnull(np);
    /* the providerRef without a kind means AWSNodeTemplate, aws.so's v1alpha5 reference */
    ck_assert_str_eq(np->nodeclass_ref.kind, "AWSNodeTemplate");
    char *out = calloc(1, 4096);
    ck_assert_ptr_nonnull(out);
    for (size_t i = 0; i < np->n_requirements; i++) {
        const ns_selector_req *r = &np->requirements[i];
        size_t used = strlen(out);
        used += (size_t)snprintf(out + used, 4096 - used, "%s%s %s [", used ? "\n" : "", r->key,
                                 ns_req_op_name(r->op));
        for (size_t v = 0; v < r->n_values; v++)
            used += (size_t)snprintf(out + used, 4096 - used, "%s%s", v ? " " : "", r->values[v]);
        snprintf(out + used, 4096 - used, "]");
    }
    char *line = strstr(log_text, "converted a karpenter.sh/v1alpha5 Provisioner");
    ck_assert_msg(line != NULL, "no conversion line in: %s", log_text);
    *log_line = strndup(line, strcspn(line, "\n"));
    free(log_text);
    ns_cluster_free(c);
    ns_nodeclass_kinds_free(kinds);
    return out;
}

START_TEST(test_no_requirements_get_the_webhooks_defaults)
{
    char *line = NULL, *reqs = convert("[]", &line);
    ck_assert_str_eq(reqs, OS "\n" ARCH "\n" ON_DEMAND "\n" CMR "\n" GEN);
    ck_assert_msg(strstr(line, "\"defaultedRequirements\":\"kubernetes.io/os In [linux]; kubernetes.io/arch In "
                               "[amd64]; karpenter.sh/capacity-type In [on-demand]; karpenter.k8s.aws/instance-category "
                               "In [c, m, r]; karpenter.k8s.aws/instance-generation Gt [2]\""),
                  "%s", line);
    free(reqs);
    free(line);
}
END_TEST

START_TEST(test_written_requirements_are_kept)
{
    char *line = NULL;
    /* Karpenter's "should not default ... if set": DoesNotExist counts as set */
    char *reqs = convert("[{key: kubernetes.io/os, operator: DoesNotExist}, {key: kubernetes.io/arch, operator: In, "
                         "values: [arm64]}, {key: karpenter.sh/capacity-type, operator: In, values: [spot]}]",
                         &line);
    ck_assert_str_eq(reqs, "kubernetes.io/os DoesNotExist []\nkubernetes.io/arch In [arm64]\n"
                           "karpenter.sh/capacity-type In [spot]\n" CMR "\n" GEN);
    ck_assert_msg(strstr(line, "\"defaultedRequirements\":\"karpenter.k8s.aws/instance-category In [c, m, r]; "
                               "karpenter.k8s.aws/instance-generation Gt [2]\""),
                  "%s", line);
    free(reqs);
    free(line);
    /* the legacy arch label is the arch: no amd64 default beside it */
    reqs = convert("[{key: beta.kubernetes.io/arch, operator: In, values: [arm64]}]", &line);
    ck_assert_str_eq(reqs, "beta.kubernetes.io/arch In [arm64]\n" OS "\n" ON_DEMAND "\n" CMR "\n" GEN);
    free(reqs);
    free(line);
}
END_TEST

START_TEST(test_any_instance_requirement_leaves_categories_open)
{
    static const char *const keys[] = {"node.kubernetes.io/instance-type", "karpenter.k8s.aws/instance-family",
                                       "karpenter.k8s.aws/instance-category", "karpenter.k8s.aws/instance-generation"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char written[256], want[512];
        snprintf(written, sizeof(written), "[{key: %s, operator: Exists}]", keys[i]);
        snprintf(want, sizeof(want), "%s Exists []\n" OS "\n" ARCH "\n" ON_DEMAND, keys[i]);
        char *line = NULL, *reqs = convert(written, &line);
        ck_assert_str_eq(reqs, want);
        ck_assert_msg(strstr(line, "\"defaultedRequirements\":\"kubernetes.io/os In [linux]; kubernetes.io/arch In "
                                   "[amd64]; karpenter.sh/capacity-type In [on-demand]\""),
                      "%s", line);
        free(reqs);
        free(line);
    }
}
END_TEST

int main(void)
{
    const char *plugin_path = getenv("AWS_PLUGIN");
    if (!plugin_path || emulator_start(&emu) != 0)
        return EXIT_FAILURE;
    emulator_export_env(&emu);
    ns_log_set_level(NS_LOG_ERROR);
    ns_plugin_setting settings[] = {{"cluster_name", "demo"}};
    ns_plugin_load_params params = {.settings = settings, .n_settings = 1};
    if (ns_plugin_load_file(plugin_path, &params, &plugin) != NS_OK) {
        fprintf(stderr, "cannot load %s: %s\n", plugin_path, ns_error_message());
        emulator_stop(&emu);
        return EXIT_FAILURE;
    }
    Suite *s = suite_create("aws_v1alpha5_defaults");
    TCase *tc = tcase_create("defaults");
    tcase_add_test(tc, test_no_requirements_get_the_webhooks_defaults);
    tcase_add_test(tc, test_written_requirements_are_kept);
    tcase_add_test(tc, test_any_instance_requirement_leaves_categories_open);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    ns_plugin_unload(plugin);
    emulator_stop(&emu);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
