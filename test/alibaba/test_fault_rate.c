/*
 * No leaked instance and no double launch at a 20% fault rate. alibaba.so is loaded through the core's loader (the
 * real host: libcurl, the system clock, thread-safe upcalls) against the emulator, which meets one request in five
 * with throttling, a 5xx, a lost answer (the action takes effect, the answer comes after the client gave up) or, for
 * launches, no stock in the pool ECS would pick; and six CreateAutoProvisioningGroup answers are lost and three
 * meet no stock for certain.
 * Four threads launch node claims (test/support/fault_rate), each retrying with its client token until it succeeds,
 * as the core does.
 * Afterwards the emulator holds exactly one instance per claim, the one launch reported; then every instance
 * list_instances finds is terminated (still under faults) and none is left.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ali_emulator.h"
#include "emulator_json.h"
#include "errors/ns_error.h"
#include "fault_rate.h"
#include "json/host_json.h"
#include "log/ns_log.h"

#define Z1 "cn-hangzhou-h"
#define Z2 "cn-hangzhou-i"

static emulator emu;
static fr_run run = {.cluster_name = "c-demo", .max_tries = 60, .pause_ms = 100, .capacity_is_retryable = true};

static cJSON *emulator_state(void)
{
    return emulator_get_json(&emu, "/_emulator/state");
}

START_TEST(test_no_leak_no_double_launch)
{
    /* the catalog first, without faults: the launches below share it */
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/faults",
                                          "{\"kind\":\"random\",\"rate\":0.2,\"kinds\":[\"throttle\",\"error5xx\","
                                          "\"timeout\",\"nostock\"],\"delay_ms\":2500,\"seed\":7}",
                                          NULL),
                     200);
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/faults",
                                          "{\"kind\":\"timeout\",\"count\":6,\"delay_ms\":2500,\"actions\":"
                                          "[\"CreateAutoProvisioningGroup\"]}",
                                          NULL),
                     200);
    /* and three launches certainly meet no stock in the pool ECS would pick */
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/faults",
                                          "{\"kind\":\"transient_nostock\",\"count\":3,\"actions\":"
                                          "[\"CreateAutoProvisioningGroup\"]}",
                                          NULL),
                     200);
    int retried = fr_launch_all(&run);
    cJSON *st = emulator_state();
    static const char *const KINDS[] = {"throttle", "error5xx", "timeout", "nostock"};
    int total = fr_faults_injected(cJSON_GetObjectItemCaseSensitive(st, "faults_injected"), KINDS, 4);
    int requests = fr_sum_counts(cJSON_GetObjectItemCaseSensitive(st, "counts"));
    fprintf(stderr, "fault rate: %d faults in %d requests; %d of %d launches needed more than one call\n", total,
            requests, retried, FR_CLAIMS);
    ck_assert_msg((total - 9) * 10 >= requests && (total - 9) * 10 <= requests * 3,
                  "%d faults in %d requests is not about 20%%", total, requests);
    int ours = 0;
    for (int i = 0; i < FR_CLAIMS; i++) {
        const fr_claim *c = &run.claims[i];
        int found = 0;
        const cJSON *inst;
        cJSON_ArrayForEach(inst, cJSON_GetObjectItemCaseSensitive(st, "instances")) {
            if (strcmp(fr_tag(inst, "Tags", "karpenter.sh/nodeclaim"), c->token) != 0)
                continue;
            found++;
            const char *id = cJSON_GetObjectItemCaseSensitive(inst, "InstanceId")->valuestring;
            ck_assert_msg(strstr(c->result.provider_id, id), "%s: launch reported %s but ECS holds %s",
                          c->token, c->result.provider_id, id);
        }
        ck_assert_msg(found == 1, "%s: %d instances for one node claim", c->token, found);
        ours += found;
    }
    ck_assert_int_eq(ours, FR_CLAIMS);
    cJSON_Delete(st);

    fr_listed l;
    fr_list_pool(&run, &l);
    ck_assert_int_eq(l.n, FR_CLAIMS);
    fr_terminate(&run, &l);
    fr_list_pool(&run, &l);
    ck_assert_int_eq(l.n, 0);
    /* the emulator's record of every instance it ever launched: exactly the claims' ones, each deleted */
    st = emulator_state();
    const cJSON *inst;
    cJSON_ArrayForEach(inst, cJSON_GetObjectItemCaseSensitive(st, "instances"))
        ck_assert_msg(strcmp(fr_tag(inst, "Tags", "karpenter.sh/nodepool"), FR_NODEPOOL) != 0,
                      "%s is left after terminate-all",
                      cJSON_GetObjectItemCaseSensitive(inst, "InstanceId")->valuestring);
    int launched = 0;
    cJSON_ArrayForEach(inst, cJSON_GetObjectItemCaseSensitive(st, "history")) {
        if (strcmp(fr_tag(inst, "Tags", "karpenter.sh/nodepool"), FR_NODEPOOL) != 0)
            continue;
        launched++;
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(inst, "Status");
        ck_assert_msg(cJSON_IsString(status) && strcmp(status->valuestring, "Deleted") == 0,
                      "%s is %s after terminate-all", cJSON_GetObjectItemCaseSensitive(inst, "InstanceId")->valuestring,
                      cJSON_IsString(status) ? status->valuestring : "?");
    }
    ck_assert_msg(launched == FR_CLAIMS, "ECS launched %d instances for %d node claims", launched, FR_CLAIMS);
    cJSON_Delete(st);
}
END_TEST

int main(void)
{
    const char *plugin_path = getenv("ALIBABA_PLUGIN");
    if (!plugin_path || ali_emulator_start(&emu) != 0)
        return EXIT_FAILURE;
    setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", ALI_TEST_ACCESS_KEY, 1);
    setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", ALI_TEST_SECRET, 1);
    setenv("ALIBABA_CLOUD_REGION_ID", "cn-hangzhou", 1);
    unsetenv("ALIBABA_CLOUD_SECURITY_TOKEN");
    ns_log_set_level(NS_LOG_ERROR);
    fr_name_claims(&run);
    ns_plugin_setting settings[] = {{"cluster_id", "c-demo"}, {"endpoint_url", emu.url}, {"request_timeout", "2s"},
                                    {"max_attempts", "3"}};
    ns_plugin_load_params params = {.settings = settings, .n_settings = 4};
    if (ns_plugin_load_file(plugin_path, &params, &run.plugin) != NS_OK) {
        fprintf(stderr, "cannot load %s: %s\n", plugin_path, ns_error_message());
        emulator_stop(&emu);
        return EXIT_FAILURE;
    }
    static const char SPEC[] = "{\"vSwitchSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}],"
                               "\"securityGroupSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}],"
                               "\"imageSelectorTerms\":[{\"alias\":\"AlibabaCloudLinux3@latest\"}]}";
    ns_json *spec_doc = ns_host_json_parse(SPEC, strlen(SPEC));
    ns_nodeclass nodeclass = {sizeof(nodeclass), "karpenter.k8s.alibabacloud/v1alpha1", "ECSNodeClass", "default",
                              spec_doc};
    static const char *const TYPES[] = {"ecs.c7.large", "ecs.g7.large", "ecs.r7.large", "ecs.c8i.large",
                                        "ecs.g8i.large"};
    ns_launch_option options[20];
    size_t n = 0;
    for (int ct = 0; ct < 2; ct++)
        for (size_t t = 0; t < 5; t++)
            for (int z = 0; z < 2; z++)
                options[n++] = (ns_launch_option){sizeof(ns_launch_option), TYPES[t], z ? Z2 : Z1,
                                                  ct ? NS_CAPACITY_ON_DEMAND : NS_CAPACITY_SPOT,
                                                  (ct ? 0.5 : 0.1) + 0.01 * (double)(t * 2 + (size_t)z)};
    run.nodeclass = &nodeclass;
    run.options = options;
    run.n_options = n;
    int failed = fr_run_test("alibaba_fault_rate", test_no_leak_no_double_launch);
    ns_plugin_unload(run.plugin);
    ns_host_json_free(spec_doc);
    emulator_stop(&emu);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
