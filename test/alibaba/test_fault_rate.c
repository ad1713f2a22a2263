/*
 * No leaked instance and no double launch at a 20% fault rate. alibaba.so is loaded through the core's loader (the
 * real host: libcurl, the system clock, thread-safe upcalls) against the emulator, which meets one request in five
 * with throttling, a 5xx, a lost answer (the action takes effect, the answer comes after the client gave up) or, for
 * launches, no stock in the pool ECS would pick; and six CreateAutoProvisioningGroup answers are lost and three
 * meet no stock for certain.
 * Four threads launch node claims, each retrying with its client token until it succeeds, as the core does.
 * Afterwards the emulator holds exactly one instance per claim, the one launch reported; then every instance
 * list_instances finds is terminated (still under faults) and none is left.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ali_emulator.h"
#include "errors/ns_error.h"
#include "json/host_json.h"
#include "log/ns_log.h"
#include "plugin/plugin_loader.h"

#define THREADS 4
#define CLAIMS_PER_THREAD 3
#define CLAIMS (THREADS * CLAIMS_PER_THREAD)
#define MAX_TRIES 60

static ali_emulator emu;
static ns_plugin *plugin;
static ns_nodeclass nodeclass;
static ns_json *spec_doc;

typedef struct claim {
    char token[64];
    ns_launch_result result;
    int tries;
    int bad_code;
    char bad_message[512];
} claim;

static claim claims[CLAIMS];

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#define Z1 "cn-hangzhou-h"
#define Z2 "cn-hangzhou-i"

static void *launch_thread(void *arg)
{
    int first = *(int *)arg;
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
    for (int i = first; i < first + CLAIMS_PER_THREAD; i++) {
        claim *c = &claims[i];
        ns_launch_request req = {.struct_size = sizeof(req), .cluster_name = "c-demo", .nodeclaim_name = c->token,
                                 .nodepool_name = "faults", .client_token = c->token, .nodeclass = &nodeclass,
                                 .options = options, .n_options = n};
        int rc;
        do {
            c->result = (ns_launch_result){.struct_size = sizeof(c->result)};
            rc = ns_plugin_launch(plugin, &req, &c->result);
            c->tries++;
            if (rc != NS_OK && rc != NS_ERR_THROTTLED && rc != NS_ERR_INSUFFICIENT_CAPACITY && !c->bad_code) {
                c->bad_code = rc;
                snprintf(c->bad_message, sizeof(c->bad_message), "%s", ns_error_message());
            }
            if (rc != NS_OK)
                pause_ms(100);
        } while (rc != NS_OK && c->tries < MAX_TRIES);
    }
    return NULL;
}

typedef struct listed {
    char ids[64][NS_PROVIDER_ID_MAX];
    int n;
} listed;

static int collect(void *ctx, const ns_instance *inst)
{
    listed *l = ctx;
    if (strcmp(inst->nodepool_name, "faults") == 0 && l->n < 64)
        snprintf(l->ids[l->n++], NS_PROVIDER_ID_MAX, "%s", inst->provider_id);
    return 0;
}

static void list_ours(listed *l)
{
    int rc, tries = 0;
    do {
        l->n = 0;
        rc = ns_plugin_list_instances(plugin, collect, l);
        ck_assert_msg(rc == NS_OK || rc == NS_ERR_THROTTLED, "list_instances: %s", ns_error_message());
    } while (rc != NS_OK && ++tries < MAX_TRIES);
    ck_assert_int_eq(rc, NS_OK);
}

static cJSON *emulator_state(void)
{
    char *text = NULL;
    ck_assert_int_eq(ali_emulator_control(&emu, "/_emulator/state", NULL, &text), 200);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(doc);
    return doc;
}

static const char *tag(const cJSON *instance, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(instance, "Tags"), key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static int count_of(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valueint : 0;
}

START_TEST(test_no_leak_no_double_launch)
{
    /* the catalog first, without faults: the launches below share it */
    ck_assert_int_eq(ali_emulator_control(&emu, "/_emulator/faults",
                                          "{\"kind\":\"random\",\"rate\":0.2,\"kinds\":[\"throttle\",\"error5xx\","
                                          "\"timeout\",\"nostock\"],\"delay_ms\":2500,\"seed\":7}",
                                          NULL),
                     200);
    ck_assert_int_eq(ali_emulator_control(&emu, "/_emulator/faults",
                                          "{\"kind\":\"timeout\",\"count\":6,\"delay_ms\":2500,\"actions\":"
                                          "[\"CreateAutoProvisioningGroup\"]}",
                                          NULL),
                     200);
    /* and three launches certainly meet no stock in the pool ECS would pick */
    ck_assert_int_eq(ali_emulator_control(&emu, "/_emulator/faults",
                                          "{\"kind\":\"transient_nostock\",\"count\":3,\"actions\":"
                                          "[\"CreateAutoProvisioningGroup\"]}",
                                          NULL),
                     200);
    pthread_t threads[THREADS];
    int firsts[THREADS];
    for (int t = 0; t < THREADS; t++) {
        firsts[t] = t * CLAIMS_PER_THREAD;
        ck_assert_int_eq(pthread_create(&threads[t], NULL, launch_thread, &firsts[t]), 0);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    int retried = 0;
    for (int i = 0; i < CLAIMS; i++) {
        ck_assert_msg(!claims[i].bad_code, "%s: a launch failed with %s, not a retryable error: %s", claims[i].token,
                      ns_err_name(claims[i].bad_code), claims[i].bad_message);
        ck_assert_msg(claims[i].result.provider_id[0], "%s never launched in %d tries", claims[i].token, MAX_TRIES);
        retried += claims[i].tries > 1;
    }
    cJSON *st = emulator_state();
    const cJSON *injected = cJSON_GetObjectItemCaseSensitive(st, "faults_injected");
    const char *kinds[] = {"throttle", "error5xx", "timeout", "nostock"};
    int total = 0;
    for (int k = 0; k < 4; k++) {
        ck_assert_msg(count_of(injected, kinds[k]) > 0, "no %s fault was injected", kinds[k]);
        total += count_of(injected, kinds[k]);
    }
    int requests = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(st, "counts"))
        requests += r->valueint;
    fprintf(stderr, "fault rate: %d faults in %d requests; %d of %d launches needed more than one call\n", total,
            requests, retried, CLAIMS);
    ck_assert_msg((total - 9) * 10 >= requests && (total - 9) * 10 <= requests * 3,
                  "%d faults in %d requests is not about 20%%", total, requests);
    int ours = 0;
    for (int i = 0; i < CLAIMS; i++) {
        int found = 0;
        const cJSON *inst;
        cJSON_ArrayForEach(inst, cJSON_GetObjectItemCaseSensitive(st, "instances")) {
            if (strcmp(tag(inst, "karpenter.sh/nodeclaim"), claims[i].token) != 0)
                continue;
            found++;
            const char *id = cJSON_GetObjectItemCaseSensitive(inst, "InstanceId")->valuestring;
            ck_assert_msg(strstr(claims[i].result.provider_id, id), "%s: launch reported %s but ECS holds %s",
                          claims[i].token, claims[i].result.provider_id, id);
        }
        ck_assert_msg(found == 1, "%s: %d instances for one node claim", claims[i].token, found);
        ours += found;
    }
    ck_assert_int_eq(ours, CLAIMS);
    cJSON_Delete(st);

    listed l;
    list_ours(&l);
    ck_assert_int_eq(l.n, CLAIMS);
    for (int i = 0; i < l.n; i++) {
        int rc, tries = 0;
        do {
            rc = ns_plugin_terminate(plugin, l.ids[i], NULL);
            ck_assert_msg(rc == NS_OK || rc == NS_ERR_THROTTLED, "terminate %s: %s", l.ids[i], ns_error_message());
        } while (rc != NS_OK && ++tries < MAX_TRIES);
        ck_assert_int_eq(rc, NS_OK);
    }
    list_ours(&l);
    ck_assert_int_eq(l.n, 0);
    /* the emulator's record of every instance it ever launched: exactly the claims' ones, each deleted */
    st = emulator_state();
    const cJSON *inst;
    cJSON_ArrayForEach(inst, cJSON_GetObjectItemCaseSensitive(st, "instances"))
        ck_assert_msg(strcmp(tag(inst, "karpenter.sh/nodepool"), "faults") != 0, "%s is left after terminate-all",
                      cJSON_GetObjectItemCaseSensitive(inst, "InstanceId")->valuestring);
    int launched = 0;
    cJSON_ArrayForEach(inst, cJSON_GetObjectItemCaseSensitive(st, "history")) {
        if (strcmp(tag(inst, "karpenter.sh/nodepool"), "faults") != 0)
            continue;
        launched++;
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(inst, "Status");
        ck_assert_msg(cJSON_IsString(status) && strcmp(status->valuestring, "Deleted") == 0, "%s is %s after terminate-all",
                      cJSON_GetObjectItemCaseSensitive(inst, "InstanceId")->valuestring,
                      cJSON_IsString(status) ? status->valuestring : "?");
    }
    ck_assert_msg(launched == CLAIMS, "ECS launched %d instances for %d node claims", launched, CLAIMS);
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
    unsigned run = (unsigned)time(NULL) ^ ((unsigned)getpid() << 12);
    for (int i = 0; i < CLAIMS; i++)
        snprintf(claims[i].token, sizeof(claims[i].token), "fault-%x-%d", run, i);
    ns_plugin_setting settings[] = {{"cluster_id", "c-demo"}, {"endpoint_url", emu.url}, {"request_timeout", "2s"},
                                    {"max_attempts", "3"}};
    ns_plugin_load_params params = {.settings = settings, .n_settings = 4};
    if (ns_plugin_load_file(plugin_path, &params, &plugin) != NS_OK) {
        fprintf(stderr, "cannot load %s: %s\n", plugin_path, ns_error_message());
        ali_emulator_stop(&emu);
        return EXIT_FAILURE;
    }
    static const char SPEC[] = "{\"vSwitchSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}],"
                               "\"securityGroupSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}],"
                               "\"imageSelectorTerms\":[{\"alias\":\"AlibabaCloudLinux3@latest\"}]}";
    spec_doc = ns_host_json_parse(SPEC, strlen(SPEC));
    nodeclass = (ns_nodeclass){sizeof(nodeclass), "karpenter.k8s.alibabacloud/v1alpha1", "ECSNodeClass", "default",
                               spec_doc};
    Suite *s = suite_create("alibaba_fault_rate");
    TCase *tc = tcase_create("faults");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_no_leak_no_double_launch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    ns_plugin_unload(plugin);
    ns_host_json_free(spec_doc);
    ali_emulator_stop(&emu);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
