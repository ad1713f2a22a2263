/*
 * No leaked instance and no double launch at a 20% fault rate. aws.so is loaded through the core's loader (the real
 * host: libcurl, the system clock, thread-safe upcalls) against the emulator, which answers one request in five with
 * throttling, a 5xx or a lost answer (the action takes effect, the answer comes after the client gave up), on every
 * action, and six CreateFleet answers are lost for certain. Four threads launch node claims (test/support/fault_rate),
 * each retrying its launch with its client token until it succeeds, as the core does. Afterwards the emulator holds
 * exactly one instance per token, each the one launch reported; then every instance list_instances finds is
 * terminated (still under faults) and none is left running.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_emulator.h"
#include "emulator_json.h"
#include "errors/ns_error.h"
#include "fault_rate.h"
#include "json/host_json.h"
#include "log/ns_log.h"

static emulator emu;
static fr_run run = {.cluster_name = "demo", .max_tries = 40, .pause_ms = 100};

static cJSON *emulator_state(void)
{
    return emulator_get_json(&emu, "/_emulator/state");
}

START_TEST(test_no_leak_no_double_launch)
{
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/faults",
                                      "{\"kind\":\"random\",\"rate\":0.2,\"kinds\":[\"throttle\",\"error5xx\","
                                      "\"timeout\"],\"delay_ms\":2500,\"seed\":7}",
                                      NULL),
                     200);
    /* and some CreateFleet answers are certainly lost, so that launches are certainly repeated with their tokens */
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/faults",
                                      "{\"kind\":\"timeout\",\"count\":6,\"delay_ms\":2500,\"actions\":"
                                      "[\"CreateFleet\"]}",
                                      NULL),
                     200);
    int retried = fr_launch_all(&run);

    /* exactly one instance per token, and it is the one the launch reported */
    cJSON *st = emulator_state();
    static const char *const KINDS[] = {"throttle", "error5xx", "timeout"};
    int total_faults = fr_faults_injected(cJSON_GetObjectItemCaseSensitive(st, "faults_injected"), KINDS, 3);
    const cJSON *lost = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "faults_by_action"), "CreateFleet"),
        "timeout");
    ck_assert_msg(cJSON_IsNumber(lost) && lost->valueint >= 6, "fewer than 6 CreateFleet answers were lost");
    int requests = fr_sum_counts(cJSON_GetObjectItemCaseSensitive(st, "requests"));
    fprintf(stderr, "fault rate: %d faults in %d requests; %d of %d launches needed more than one call\n",
            total_faults, requests, retried, FR_CLAIMS);
    ck_assert_msg((total_faults - 6) * 10 >= requests && (total_faults - 6) * 10 <= requests * 3,
                  "%d faults in %d requests is not about 20%%", total_faults, requests);
    int ours = 0;
    for (int i = 0; i < FR_CLAIMS; i++) {
        const fr_claim *c = &run.claims[i];
        int found = 0;
        const cJSON *inst;
        cJSON_ArrayForEach(inst, cJSON_GetObjectItemCaseSensitive(st, "instances")) {
            if (strcmp(fr_tag(inst, "tags", "karpenter.sh/nodeclaim"), c->token) != 0)
                continue;
            found++;
            const char *id = cJSON_GetObjectItemCaseSensitive(inst, "id")->valuestring;
            ck_assert_msg(strstr(c->result.provider_id, id), "%s: launch reported %s but EC2 holds %s", c->token,
                          c->result.provider_id, id);
        }
        ck_assert_msg(found == 1, "%s: %d instances for one client token", c->token, found);
        ours += found;
    }
    const cJSON *inst;
    int in_pool = 0;
    cJSON_ArrayForEach(inst, cJSON_GetObjectItemCaseSensitive(st, "instances"))
        in_pool += strcmp(fr_tag(inst, "tags", "karpenter.sh/nodepool"), FR_NODEPOOL) == 0;
    ck_assert_int_eq(in_pool, ours);
    cJSON_Delete(st);

    /* list_instances finds every one (nothing leaks past garbage collection); terminating them all leaves none */
    fr_listed l;
    fr_list_pool(&run, &l);
    ck_assert_int_eq(l.n, FR_CLAIMS);
    fr_terminate(&run, &l);
    fr_list_pool(&run, &l);
    ck_assert_int_eq(l.n, 0);
    st = emulator_state();
    cJSON_ArrayForEach(inst, cJSON_GetObjectItemCaseSensitive(st, "instances")) {
        if (strcmp(fr_tag(inst, "tags", "karpenter.sh/nodepool"), FR_NODEPOOL) != 0)
            continue;
        const char *state = cJSON_GetObjectItemCaseSensitive(inst, "state")->valuestring;
        ck_assert_msg(strcmp(state, "terminated") == 0 || strcmp(state, "shutting-down") == 0, "%s is still %s",
                      cJSON_GetObjectItemCaseSensitive(inst, "id")->valuestring, state);
    }
    cJSON_Delete(st);
}
END_TEST

int main(void)
{
    const char *plugin_path = getenv("AWS_PLUGIN");
    if (!plugin_path || emulator_start(&emu) != 0)
        return EXIT_FAILURE;
    emulator_export_env(&emu);
    ns_log_set_level(NS_LOG_ERROR);
    fr_name_claims(&run);
    ns_plugin_setting settings[] = {{"cluster_name", "demo"}, {"request_timeout", "2s"}, {"max_attempts", "3"}};
    ns_plugin_load_params params = {.settings = settings, .n_settings = 3};
    if (ns_plugin_load_file(plugin_path, &params, &run.plugin) != NS_OK) {
        fprintf(stderr, "cannot load %s: %s\n", plugin_path, ns_error_message());
        emulator_stop(&emu);
        return EXIT_FAILURE;
    }
    static const char SPEC[] = "{\"subnetSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}],"
                               "\"securityGroupSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}],"
                               "\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],"
                               "\"role\":\"KarpenterNodeRole-demo\"}";
    ns_json *spec_doc = ns_host_json_parse(SPEC, strlen(SPEC));
    ns_nodeclass nodeclass = {sizeof(nodeclass), "karpenter.k8s.aws/v1", "EC2NodeClass", "default", spec_doc};
    static const ns_launch_option OPTIONS[] = {
        {sizeof(ns_launch_option), "m5.large", "us-east-1a", NS_CAPACITY_SPOT, 0.04},
        {sizeof(ns_launch_option), "m5.large", "us-east-1b", NS_CAPACITY_SPOT, 0.041},
        {sizeof(ns_launch_option), "c5.large", "us-east-1a", NS_CAPACITY_SPOT, 0.035},
        {sizeof(ns_launch_option), "m5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.096},
    };
    run.nodeclass = &nodeclass;
    run.options = OPTIONS;
    run.n_options = 4;
    int failed = fr_run_test("aws_fault_rate", test_no_leak_no_double_launch);
    ns_plugin_unload(run.plugin);
    ns_host_json_free(spec_doc);
    emulator_stop(&emu);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
