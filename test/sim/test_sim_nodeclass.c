/* Node classes (validation of SimNodeClass, acceptance of AWS kinds), their status (ABI 4), drift, and repair
 * policies. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <cjson/cJSON.h>

#include "errors/ns_error.h"
#include "plugin/plugin_status.h"
#include "sim_fixture.h"

static void assert_invalid(ns_plugin *p, const char *api_version, const char *kind, const char *spec,
                           const char *needle)
{
    sim_fx_nodeclass *nc = sim_fx_nodeclass_new(api_version, kind, spec);
    int rc = ns_plugin_validate_nodeclass(p, &nc->abi);
    ck_assert_msg(rc == NS_ERR_INVALID_CONFIG, "%s %s accepted (%d)", kind, spec, rc);
    sim_fx_assert_error_has(needle);
    /* list_instance_types refuses the same node class with the same reason. */
    ns_itype_set set;
    ck_assert_int_eq(ns_itype_set_load(p, &nc->abi, &set), NS_ERR_INVALID_CONFIG);
    sim_fx_assert_error_has(needle);
    sim_fx_nodeclass_free(nc);
}

static void assert_valid(ns_plugin *p, const char *api_version, const char *kind, const char *spec)
{
    sim_fx_nodeclass *nc = sim_fx_nodeclass_new(api_version, kind, spec);
    int rc = ns_plugin_validate_nodeclass(p, &nc->abi);
    ck_assert_msg(rc == NS_OK, "%s %s refused: %s", kind, spec, ns_error_message());
    sim_fx_nodeclass_free(nc);
}

START_TEST(sim_node_class_fields_are_validated)
{
    ns_plugin *p = sim_fx_load(NULL);
    const char *v1 = "nodesmith.io/v1";
    assert_valid(p, v1, "SimNodeClass", "{}");
    assert_valid(p, v1, "SimNodeClass",
                 "{\"imageFamily\": \"Windows2022\", \"imageVersion\": \"v3\", \"zones\": [\"us-west-2a\"], "
                 "\"ephemeralStorage\": \"40Gi\", \"tags\": {\"team\": \"a\"}, \"userData\": \"#!/bin/sh\", "
                 "\"kubelet\": {\"maxPods\": 20}}");
    assert_invalid(p, v1, "SimNodeClass", "{\"imageVersoin\": \"v2\"}", "unknown field spec.imageVersoin");
    assert_invalid(p, v1, "SimNodeClass", "{\"imageVersion\": 2}", "spec.imageVersion must be a string");
    assert_invalid(p, v1, "SimNodeClass", "{\"imageVersion\": \"\"}", "spec.imageVersion must be 1 to 64");
    assert_invalid(p, v1, "SimNodeClass", "{\"imageFamily\": \"Plan9\"}", "spec.imageFamily \"Plan9\"");
    assert_invalid(p, v1, "SimNodeClass", "{\"zones\": [\"mars-1a\"]}", "spec.zones[0] \"mars-1a\"");
    assert_invalid(p, v1, "SimNodeClass", "{\"zones\": []}", "spec.zones must be a non-empty array");
    assert_invalid(p, v1, "SimNodeClass", "{\"ephemeralStorage\": \"1Gi\"}", "at least 2Gi");
    assert_invalid(p, v1, "SimNodeClass", "{\"ephemeralStorage\": \"lots\"}", "spec.ephemeralStorage \"lots\"");
    assert_invalid(p, v1, "SimNodeClass", "{\"tags\": {\"team\": 1}}", "spec.tags.team must be a string");
    assert_invalid(p, v1, "SimNodeClass", "{\"kubelet\": 3}", "spec.kubelet must be an object");
    assert_invalid(p, "nodesmith.io/v2", "SimNodeClass", "{}", "is not supported by provider sim");
    assert_invalid(p, "example.com/v1", "GCENodeClass", "{}", "kind GCENodeClass (apiVersion example.com/v1)");
    ns_plugin_unload(p);
}
END_TEST

START_TEST(aws_node_classes_run_unchanged)
{
    ns_plugin *p = sim_fx_load(NULL);
    assert_valid(p, "karpenter.k8s.aws/v1", "EC2NodeClass",
                 "{\"role\": \"KarpenterNodeRole\", \"amiSelectorTerms\": [{\"alias\": \"al2023@latest\"}], "
                 "\"subnetSelectorTerms\": [{\"tags\": {\"karpenter.sh/discovery\": \"c\"}}], "
                 "\"securityGroupSelectorTerms\": [{\"tags\": {\"karpenter.sh/discovery\": \"c\"}}], "
                 "\"kubelet\": {\"maxPods\": 110}}");
    assert_valid(p, "karpenter.k8s.aws/v1beta1", "EC2NodeClass", "{\"amiFamily\": \"Bottlerocket\"}");
    assert_valid(p, "karpenter.k8s.aws/v1alpha1", "AWSNodeTemplate",
                 "{\"subnetSelector\": {\"karpenter.sh/discovery\": \"c\"}, \"amiFamily\": \"AL2\"}");
    assert_invalid(p, "karpenter.k8s.aws/v1", "EC2NodeClass", "{\"amiFamily\": \"Windows2012\"}",
                   "spec.amiFamily \"Windows2012\"");
    assert_invalid(p, "karpenter.k8s.aws/v1", "EC2NodeClass", "{\"amiSelectorTerms\": [{\"alias\": \"al2023\"}]}",
                   "must be family@version");
    assert_invalid(p, "karpenter.k8s.aws/v1", "EC2NodeClass",
                   "{\"blockDeviceMappings\": [{\"ebs\": {\"volumeSize\": 20}}]}", "volumeSize must be a string");
    ns_plugin_unload(p);
}
END_TEST

static void drift(ns_plugin *p, const ns_launch_result *r, const sim_fx_nodeclass *nc, bool *drifted, char *reason)
{
    ns_instance inst;
    ck_assert_int_eq(ns_plugin_get_instance(p, r->provider_id, &inst), NS_OK);
    int rc = ns_plugin_check_drift(p, &inst, &nc->abi, drifted, reason, 64);
    ck_assert_msg(rc == NS_OK, "check_drift failed: %s", ns_error_message());
}

START_TEST(changed_image_or_zone_is_drift)
{
    ns_plugin *p = sim_fx_load(NULL);
    sim_fx_nodeclass *v1 = sim_fx_sim_nodeclass("{\"imageVersion\": \"v1\"}");
    sim_fx_option opt = {"m5.large", "us-west-2b", "on-demand"};
    ns_launch_result r;
    ck_assert_int_eq(sim_fx_launch(p, &v1->abi, "claim", NULL, &opt, 1, &r), NS_OK);

    bool drifted = true;
    char reason[64];
    drift(p, &r, v1, &drifted, reason);
    ck_assert(!drifted);
    ck_assert_str_eq(reason, "");

    sim_fx_nodeclass *v2 = sim_fx_sim_nodeclass("{\"imageVersion\": \"v2\"}");
    drift(p, &r, v2, &drifted, reason);
    ck_assert(drifted);
    ck_assert_str_eq(reason, "ImageDrift");

    sim_fx_nodeclass *moved = sim_fx_sim_nodeclass("{\"zones\": [\"us-west-2a\", \"us-west-2c\"]}");
    drift(p, &r, moved, &drifted, reason);
    ck_assert(drifted);
    ck_assert_str_eq(reason, "ZoneDrift");

    sim_fx_nodeclass *ec2 =
        sim_fx_nodeclass_new("karpenter.k8s.aws/v1", "EC2NodeClass", "{\"amiSelectorTerms\": [{\"alias\": \"al2023@v1\"}]}");
    ck_assert_int_eq(sim_fx_launch(p, &ec2->abi, "claim-aws", NULL, &opt, 1, &r), NS_OK);
    ck_assert_str_eq(r.image_id, "al2023@v1");
    drift(p, &r, ec2, &drifted, reason);
    ck_assert(!drifted);
    sim_fx_nodeclass *ec2_new =
        sim_fx_nodeclass_new("karpenter.k8s.aws/v1", "EC2NodeClass", "{\"amiSelectorTerms\": [{\"alias\": \"al2023@v2\"}]}");
    drift(p, &r, ec2_new, &drifted, reason);
    ck_assert(drifted);
    ck_assert_str_eq(reason, "AMIDrift");

    sim_fx_nodeclass_free(v1);
    sim_fx_nodeclass_free(v2);
    sim_fx_nodeclass_free(moved);
    sim_fx_nodeclass_free(ec2);
    sim_fx_nodeclass_free(ec2_new);
    ns_plugin_unload(p);
}
END_TEST

typedef struct policies {
    ns_repair_policy items[4];
    size_t n;
} policies;

static int collect_policy(void *ctx, const ns_repair_policy *policy)
{
    policies *ps = ctx;
    if (ps->n < 4)
        ps->items[ps->n] = *policy;
    ps->n++;
    return 0;
}

START_TEST(repair_policies_replace_nodes_not_ready_for_30_minutes)
{
    ns_plugin *p = sim_fx_load(NULL);
    policies ps = {.n = 0};
    ck_assert_int_eq(ns_plugin_list_repair_policies(p, collect_policy, &ps), NS_OK);
    ck_assert_uint_eq(ps.n, 2);
    ck_assert_str_eq(ps.items[0].condition_type, "Ready");
    ck_assert_str_eq(ps.items[0].condition_status, "False");
    ck_assert_str_eq(ps.items[1].condition_type, "Ready");
    ck_assert_str_eq(ps.items[1].condition_status, "Unknown");
    ck_assert_int_eq(ps.items[0].toleration_ms, 30 * 60 * 1000);
    ck_assert_int_eq(ps.items[1].toleration_ms, 30 * 60 * 1000);
    ns_plugin_unload(p);
}
END_TEST

static cJSON *status_of(ns_plugin *p, const char *api_version, const char *kind, const char *spec)
{
    sim_fx_nodeclass *nc = sim_fx_nodeclass_new(api_version, kind, spec);
    cJSON *st = NULL;
    ck_assert_msg(ns_plugin_nodeclass_status(p, &nc->abi, &st) == NS_OK, "%s", ns_error_message());
    sim_fx_nodeclass_free(nc);
    return st;
}

static const char *first_id(const cJSON *st, const char *list)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(st, list), 0), "id"));
}

/* What the sim resolves, in Karpenter's shape: images (amis for the AWS kinds) and zones, with their conditions; a
 * resolution that fails is a False condition naming why, and an invalid node class is ValidationSucceeded False. */
START_TEST(node_class_status_reports_what_was_resolved)
{
    ns_plugin *p = sim_fx_load(NULL);
    const char *reason = NULL, *message = NULL;
    cJSON *st = status_of(p, "nodesmith.io/v1", "SimNodeClass",
                          "{\"imageFamily\": \"Windows2022\", \"imageVersion\": \"v7\", \"zones\": [\"us-west-2b\"]}");
    ck_assert_str_eq(ns_nodeclass_status_condition(st, "Ready", NULL, NULL), "True");
    ck_assert_str_eq(ns_nodeclass_status_condition(st, "ImagesReady", NULL, NULL), "True");
    ck_assert_str_eq(first_id(st, "images"), "sim-windows2022-v7");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(st, "zones")), 1);
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "zones"), 0)->valuestring, "us-west-2b");
    cJSON_Delete(st);

    st = status_of(p, "karpenter.k8s.aws/v1", "EC2NodeClass", "{\"amiSelectorTerms\": [{\"id\": \"ami-0abc\"}]}");
    ck_assert_str_eq(first_id(st, "amis"), "ami-0abc");
    /* one entry per architecture of the catalog, each with the requirement Karpenter's CRD requires */
    const cJSON *amis = cJSON_GetObjectItem(st, "amis");
    ck_assert_int_eq(cJSON_GetArraySize(amis), 2);
    const char *archs[2];
    for (int i = 0; i < 2; i++) {
        const cJSON *req = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(amis, i), "requirements"), 0);
        ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(req, "key")), "kubernetes.io/arch");
        ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(req, "operator")), "In");
        archs[i] = cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(req, "values"), 0));
    }
    ck_assert_msg((strcmp(archs[0], "amd64") == 0 && strcmp(archs[1], "arm64") == 0) ||
                  (strcmp(archs[0], "arm64") == 0 && strcmp(archs[1], "amd64") == 0), "%s %s", archs[0], archs[1]);
    ck_assert_str_eq(ns_nodeclass_status_condition(st, "AMIsReady", NULL, NULL), "True");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(st, "zones")), 3);
    cJSON_Delete(st);

    st = status_of(p, "nodesmith.io/v1", "SimNodeClass", "{\"zones\": [\"mars-1a\"]}");
    ck_assert_str_eq(ns_nodeclass_status_condition(st, "Ready", &reason, &message), "False");
    ck_assert_str_eq(reason, "UnhealthyDependents");
    ck_assert_str_eq(message, "ValidationSucceeded=False");
    ck_assert_str_eq(ns_nodeclass_status_condition(st, "ValidationSucceeded", &reason, &message), "False");
    ck_assert_str_eq(reason, "ValidationFailed");
    ck_assert_msg(strstr(message, "spec.zones[0] \"mars-1a\" is not one of the provider's zones"), "%s", message);
    ck_assert_ptr_null(cJSON_GetObjectItem(st, "images"));
    cJSON_Delete(st);
    ns_plugin_unload(p);

    /* A Windows image on a catalog without a Windows-capable type resolves to nothing. */
    char *path = sim_fx_write_temp("[{\"name\": \"m6g.large\", \"vcpu\": 2, \"memory_mib\": 8192, \"arch\": \"arm64\"}]");
    char *prices = sim_fx_write_temp("{\"m6g.large\": 0.077}");
    p = sim_fx_load("catalog", path, "prices", prices, NULL);
    st = status_of(p, "karpenter.k8s.aws/v1", "EC2NodeClass", "{\"amiFamily\": \"Windows2019\"}");
    ck_assert_str_eq(ns_nodeclass_status_condition(st, "Ready", NULL, &message), "False");
    ck_assert_str_eq(message, "AMIsReady=False");
    ck_assert_str_eq(ns_nodeclass_status_condition(st, "AMIsReady", &reason, &message), "False");
    ck_assert_str_eq(reason, "AMINotFound");
    ck_assert_str_eq(message, "image windows2019@latest is a windows image and no instance type of the catalog can "
                              "run it (none is Windows-capable)");
    ck_assert_ptr_null(cJSON_GetObjectItem(st, "amis"));
    ck_assert_str_eq(ns_nodeclass_status_condition(st, "ZonesReady", NULL, NULL), "True");
    cJSON_Delete(st);
    ns_plugin_unload(p);
    unlink(path);
    unlink(prices);
    free(path);
    free(prices);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim-nodeclass");
    TCase *tc = tcase_create("nodeclass");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, sim_node_class_fields_are_validated);
    tcase_add_test(tc, aws_node_classes_run_unchanged);
    tcase_add_test(tc, changed_image_or_zone_is_drift);
    tcase_add_test(tc, node_class_status_reports_what_was_resolved);
    tcase_add_test(tc, repair_policies_replace_nodes_not_ready_for_30_minutes);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
