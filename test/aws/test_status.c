/*
 * nodeclass_status (ABI 4) of aws.so, loaded through the core's loader against the emulator: the EC2NodeClass status
 * Karpenter writes (subnets, securityGroups, amis with their requirements, instanceProfile, capacityReservations),
 * each selector resolved on its own, with the conditions checked by the core (which adds Ready); an invalid node
 * class, a selector that selects nothing, and a cloud that cannot be asked; nothing launched or created.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_emulator.h"
#include "errors/ns_error.h"
#include "json/host_json.h"
#include "log/ns_log.h"
#include "nodeclass_condition.h"
#include "plugin/plugin_loader.h"

#define SUBNETS "\"subnetSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}]"
#define GROUPS "\"securityGroupSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}]"
#define ALIAS "\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}]"
#define ROLE "\"role\":\"KarpenterNodeRole-demo\""

static emulator emu;
static ns_plugin *plugin;

static const cJSON *field(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = field(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The status of a node class named `name` with `spec`; NS_OK expected. The caller frees it. */
static cJSON *status_of(const char *name, const char *spec, int want_rc)
{
    ns_json *doc = ns_host_json_parse(spec, strlen(spec));
    ck_assert_ptr_nonnull(doc);
    ns_nodeclass nc = {sizeof(nc), "karpenter.k8s.aws/v1", "EC2NodeClass", name, doc};
    cJSON *status = NULL;
    int rc = ns_plugin_nodeclass_status(plugin, &nc, &status);
    ck_assert_msg(rc == want_rc, "nodeclass_status %s: %s (%s)", name, ns_err_name(rc), ns_error_message());
    ns_host_json_free(doc);
    return status;
}

static int requests(const char *action)
{
    char *text = NULL;
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/state", NULL, &text), 200);
    cJSON *st = cJSON_Parse(text);
    free(text);
    const cJSON *n = field(field(st, "requests"), action);
    int count = cJSON_IsNumber(n) ? n->valueint : 0;
    cJSON_Delete(st);
    return count;
}

/* The requirement of `key` in an AMI's requirements, or NULL. */
static const cJSON *requirement(const cJSON *ami, const char *key)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, field(ami, "requirements"))
        if (strcmp(str(r, "key"), key) == 0)
            return r;
    return NULL;
}

START_TEST(test_status_as_karpenter_writes_it)
{
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/capacity_reservations",
                                      "{\"id\":\"cr-0d00000000000001\",\"instance_type\":\"m5.large\",\"zone\":"
                                      "\"us-east-1b\",\"count\":4,\"available\":3,\"tags\":{\"team\":\"status\"},"
                                      "\"end_date\":\"2031-06-01T12:00:00.000Z\"}", NULL), 200);
    int fleets = requests("CreateFleet"), templates = requests("CreateLaunchTemplate");
    cJSON *status = status_of("default", "{" SUBNETS "," GROUPS "," ALIAS "," ROLE ",\"capacityReservationSelectorTerms\":"
                                         "[{\"tags\":{\"team\":\"status\"}}]}", NS_OK);
    /* every selected subnet, with its zone and zone ID */
    const cJSON *subnets = field(status, "subnets");
    ck_assert_int_eq(cJSON_GetArraySize(subnets), 3);
    const cJSON *sn;
    int zones = 0;
    cJSON_ArrayForEach(sn, subnets) {
        ck_assert_msg(strncmp(str(sn, "id"), "subnet-0e", 9) == 0, "%s", str(sn, "id"));
        zones += strcmp(str(sn, "zone"), "us-east-1b") == 0 && strcmp(str(sn, "zoneID"), "ue1-az2") == 0;
    }
    ck_assert_int_eq(zones, 1);
    const cJSON *groups = field(status, "securityGroups");
    ck_assert_int_eq(cJSON_GetArraySize(groups), 1);
    ck_assert_str_eq(str(cJSON_GetArrayItem(groups, 0), "id"), "sg-0e000000000000001");
    ck_assert_str_eq(str(cJSON_GetArrayItem(groups, 0), "name"), "demo-node");
    /* the alias's four EKS-optimized images, each with its architecture and Karpenter's variant requirements */
    const cJSON *amis = field(status, "amis"), *ami;
    ck_assert_int_eq(cJSON_GetArraySize(amis), 4);
    cJSON_ArrayForEach(ami, amis) {
        const cJSON *arch = requirement(ami, "kubernetes.io/arch");
        ck_assert_ptr_nonnull(arch);
        ck_assert_str_eq(str(arch, "operator"), "In");
        const char *a = cJSON_GetArrayItem(field(arch, "values"), 0)->valuestring;
        const cJSON *gpu = requirement(ami, "karpenter.k8s.aws/instance-gpu-count");
        ck_assert_ptr_nonnull(gpu);
        if (strcmp(str(ami, "id"), "ami-0e000000000000a64") == 0) {
            ck_assert_str_eq(a, "amd64");
            ck_assert_str_eq(str(gpu, "operator"), "DoesNotExist");
            ck_assert_ptr_nonnull(requirement(ami, "karpenter.k8s.aws/instance-accelerator-count"));
        } else if (strcmp(str(ami, "id"), "ami-0e0000000000nv32") == 0) {
            ck_assert_str_eq(a, "arm64");
            ck_assert_str_eq(str(gpu, "operator"), "Exists");
        }
    }
    ck_assert_str_eq(str(status, "instanceProfile"), "KarpenterNodeRole-demo");
    const cJSON *crs = field(status, "capacityReservations");
    ck_assert_int_eq(cJSON_GetArraySize(crs), 1);
    const cJSON *cr = cJSON_GetArrayItem(crs, 0);
    ck_assert_str_eq(str(cr, "id"), "cr-0d00000000000001");
    ck_assert_str_eq(str(cr, "instanceType"), "m5.large");
    ck_assert_str_eq(str(cr, "availabilityZone"), "us-east-1b");
    ck_assert_str_eq(str(cr, "ownerID"), "111122223333");
    ck_assert_str_eq(str(cr, "instanceMatchCriteria"), "targeted");
    ck_assert_str_eq(str(cr, "reservationType"), "default");
    ck_assert_str_eq(str(cr, "state"), "active");
    ck_assert_str_eq(str(cr, "endTime"), "2031-06-01T12:00:00Z");
    ck_assert(cJSON_IsFalse(field(cr, "interruptible")));
    const char *types[] = {"SubnetsReady", "SecurityGroupsReady", "AMIsReady", "InstanceProfileReady",
                           "CapacityReservationsReady", "ValidationSucceeded", "Ready"};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        assert_condition(status, types[i], "True", types[i], "");
    cJSON_Delete(status);
    /* read only */
    ck_assert_int_eq(requests("CreateFleet"), fleets);
    ck_assert_int_eq(requests("CreateLaunchTemplate"), templates);
}
END_TEST

START_TEST(test_each_selector_on_its_own)
{
    /* subnets that do not exist: SubnetsReady False naming the selector; the rest resolved */
    cJSON *status = status_of("nosubnet", "{\"subnetSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"nowhere\"}}],"
                                          GROUPS "," ALIAS "," ROLE "}", NS_OK);
    ck_assert_ptr_null(field(status, "subnets"));
    ck_assert_ptr_null(field(status, "capacityReservations"));
    ck_assert_int_eq(cJSON_GetArraySize(field(status, "securityGroups")), 1);
    ck_assert_int_eq(cJSON_GetArraySize(field(status, "amis")), 4);
    assert_condition(status, "SubnetsReady", "False", "SubnetsNotFound", "spec.subnetSelectorTerms");
    assert_condition(status, "SecurityGroupsReady", "True", "SecurityGroupsReady", "");
    assert_condition(status, "Ready", "False", "UnhealthyDependents", "SubnetsReady=False");
    cJSON_Delete(status);
    /* a security group nobody has and an image that does not exist */
    status = status_of("noimage", "{" SUBNETS ",\"securityGroupSelectorTerms\":[{\"name\":\"nobody\"}],"
                                  "\"amiFamily\":\"AL2023\",\"amiSelectorTerms\":[{\"id\":\"ami-0e0000000000dead\"}],"
                                  ROLE "}", NS_OK);
    ck_assert_int_eq(cJSON_GetArraySize(field(status, "subnets")), 3);
    ck_assert_ptr_null(field(status, "securityGroups"));
    ck_assert_ptr_null(field(status, "amis"));
    assert_condition(status, "SecurityGroupsReady", "False", "SecurityGroupsNotFound",
                     "spec.securityGroupSelectorTerms");
    assert_condition(status, "AMIsReady", "False", "AMINotFound", "spec.amiSelectorTerms");
    cJSON_Delete(status);
    /* an image selected by owner and name carries its name and architecture only */
    status = status_of("golden", "{" SUBNETS "," GROUPS ",\"amiFamily\":\"AL2023\",\"amiSelectorTerms\":[{\"name\":"
                                 "\"team-golden-*\",\"owner\":\"self\"}],\"instanceProfile\":\"KarpenterNodeInstanceProfile-demo\"}",
                       NS_OK);
    const cJSON *ami = cJSON_GetArrayItem(field(status, "amis"), 0);
    ck_assert_str_eq(str(ami, "name"), "team-golden-al2023-x86_64");
    ck_assert_int_eq(cJSON_GetArraySize(field(ami, "requirements")), 1);
    ck_assert_str_eq(str(status, "instanceProfile"), "KarpenterNodeInstanceProfile-demo");
    assert_condition(status, "Ready", "True", "Ready", "");
    cJSON_Delete(status);
}
END_TEST

START_TEST(test_invalid_or_unreachable)
{
    /* a node class Karpenter's CRD refuses: ValidationSucceeded False with the refusal naming the field */
    cJSON *status = status_of("invalid", "{" SUBNETS "," GROUPS "," ALIAS "," ROLE ",\"capacityReservationSelectorTerms\":"
                                         "[{\"id\":\"reservation-1\"}]}", NS_OK);
    assert_condition(status, "ValidationSucceeded", "False", "NodeClassInvalid",
                     "spec.capacityReservationSelectorTerms[0].id");
    assert_condition(status, "Ready", "False", "UnhealthyDependents", "ValidationSucceeded=False");
    ck_assert_ptr_null(field(status, "subnets"));
    cJSON_Delete(status);
    /* EC2 cannot be asked: an error and no status */
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/faults", "{\"kind\":\"throttle\",\"count\":20,\"actions\":"
                                      "[\"DescribeSecurityGroups\"]}", NULL), 200);
    status = status_of("default", "{" SUBNETS "," GROUPS "," ALIAS "," ROLE "}", NS_ERR_THROTTLED);
    ck_assert_ptr_null(status);
    ck_assert_msg(strstr(ns_error_message(), "DescribeSecurityGroups"), "%s", ns_error_message());
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/clear", "{}", NULL), 200);
}
END_TEST

int main(void)
{
    const char *plugin_path = getenv("AWS_PLUGIN");
    if (!plugin_path || emulator_start(&emu) != 0)
        return EXIT_FAILURE;
    emulator_export_env(&emu);
    ns_log_set_level(NS_LOG_ERROR);
    ns_plugin_setting settings[] = {{"cluster_name", "demo"}, {"max_attempts", "2"}};
    ns_plugin_load_params params = {.settings = settings, .n_settings = 2};
    if (ns_plugin_load_file(plugin_path, &params, &plugin) != NS_OK) {
        fprintf(stderr, "cannot load %s: %s\n", plugin_path, ns_error_message());
        emulator_stop(&emu);
        return EXIT_FAILURE;
    }
    Suite *s = suite_create("aws_status");
    TCase *tc = tcase_create("status");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_status_as_karpenter_writes_it);
    tcase_add_test(tc, test_each_selector_on_its_own);
    tcase_add_test(tc, test_invalid_or_unreachable);
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
