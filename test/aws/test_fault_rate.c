/*
 * No leaked instance and no double launch at a 20% fault rate. aws.so is loaded through the core's loader (the real
 * host: libcurl, the system clock, thread-safe upcalls) against the emulator, which answers one request in five with
 * throttling, a 5xx or a lost answer (the action takes effect, the answer comes after the client gave up), on every
 * action, and six CreateFleet answers are lost for certain. Four threads launch node claims, each retrying its launch with its client token until it succeeds, as the
 * core does. Afterwards the emulator holds exactly one instance per token, each the one launch reported; then every
 * instance list_instances finds is terminated (still under faults) and none is left running.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emulator_process.h"
#include "errors/ns_error.h"
#include "json/host_json.h"
#include "log/ns_log.h"
#include "plugin/plugin_loader.h"

#define THREADS 4
#define CLAIMS_PER_THREAD 3
#define CLAIMS (THREADS * CLAIMS_PER_THREAD)
#define MAX_TRIES 40

static emulator emu;
static ns_plugin *plugin;
static ns_nodeclass nodeclass;
static ns_json *spec_doc;
static unsigned run;

typedef struct claim {
    char token[64];
    ns_launch_result result;
    int tries;
    int bad_code; /* an error other than the retryable ones, 0 when none */
    char bad_message[512];
} claim;

static claim claims[CLAIMS];

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void *launch_thread(void *arg)
{
    int first = *(int *)arg;
    ns_launch_option options[] = {
        {sizeof(ns_launch_option), "m5.large", "us-east-1a", NS_CAPACITY_SPOT, 0.04},
        {sizeof(ns_launch_option), "m5.large", "us-east-1b", NS_CAPACITY_SPOT, 0.041},
        {sizeof(ns_launch_option), "c5.large", "us-east-1a", NS_CAPACITY_SPOT, 0.035},
        {sizeof(ns_launch_option), "m5.large", "us-east-1a", NS_CAPACITY_ON_DEMAND, 0.096},
    };
    for (int i = first; i < first + CLAIMS_PER_THREAD; i++) {
        claim *c = &claims[i];
        ns_launch_request req = {.struct_size = sizeof(req), .cluster_name = "demo", .nodeclaim_name = c->token,
                                 .nodepool_name = "faults", .client_token = c->token, .nodeclass = &nodeclass,
                                 .options = options, .n_options = 4};
        int rc;
        do {
            c->result = (ns_launch_result){.struct_size = sizeof(c->result)};
            rc = ns_plugin_launch(plugin, &req, &c->result);
            c->tries++;
            if (rc != NS_OK && rc != NS_ERR_THROTTLED && !c->bad_code) {
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
    if (strcmp(inst->nodepool_name, "faults") == 0 && strstr(inst->nodeclaim_name, "fault-") && l->n < 64)
        snprintf(l->ids[l->n++], NS_PROVIDER_ID_MAX, "%s", inst->provider_id);
    return 0;
}

/* list_instances, retried through throttling as the core's garbage collector would. */
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
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/state", NULL, &text), 200);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(doc);
    return doc;
}

static const char *tag(const cJSON *instance, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(instance, "tags"), key);
    return cJSON_IsString(v) ? v->valuestring : "";
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

    /* exactly one instance per token, and it is the one the launch reported */
    cJSON *st = emulator_state();
    const cJSON *injected = cJSON_GetObjectItemCaseSensitive(st, "faults_injected");
    const char *kinds[] = {"throttle", "error5xx", "timeout"};
    int total_faults = 0;
    for (int k = 0; k < 3; k++) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(injected, kinds[k]);
        ck_assert_msg(cJSON_IsNumber(n) && n->valueint > 0, "no %s fault was injected", kinds[k]);
        total_faults += n->valueint;
    }
    const cJSON *lost = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "faults_by_action"), "CreateFleet"),
        "timeout");
    ck_assert_msg(cJSON_IsNumber(lost) && lost->valueint >= 6, "fewer than 6 CreateFleet answers were lost");
    int requests = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(st, "requests"))
        requests += r->valueint;
    fprintf(stderr, "fault rate: %d faults in %d requests; %d of %d launches needed more than one call\n",
            total_faults, requests, retried, CLAIMS);
    ck_assert_msg((total_faults - 6) * 10 >= requests && (total_faults - 6) * 10 <= requests * 3,
                  "%d faults in %d requests is not about 20%%", total_faults, requests);
    int ours = 0;
    for (int i = 0; i < CLAIMS; i++) {
        int found = 0;
        const cJSON *inst;
        cJSON_ArrayForEach(inst, cJSON_GetObjectItemCaseSensitive(st, "instances")) {
            if (strcmp(tag(inst, "karpenter.sh/nodeclaim"), claims[i].token) != 0)
                continue;
            found++;
            const char *id = cJSON_GetObjectItemCaseSensitive(inst, "id")->valuestring;
            ck_assert_msg(strstr(claims[i].result.provider_id, id), "%s: launch reported %s but EC2 holds %s",
                          claims[i].token, claims[i].result.provider_id, id);
        }
        ck_assert_msg(found == 1, "%s: %d instances for one client token", claims[i].token, found);
        ours += found;
    }
    const cJSON *inst;
    int in_pool = 0;
    cJSON_ArrayForEach(inst, cJSON_GetObjectItemCaseSensitive(st, "instances"))
        in_pool += strcmp(tag(inst, "karpenter.sh/nodepool"), "faults") == 0;
    ck_assert_int_eq(in_pool, ours);
    cJSON_Delete(st);

    /* list_instances finds every one (nothing leaks past garbage collection); terminating them all leaves none */
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
    st = emulator_state();
    cJSON_ArrayForEach(inst, cJSON_GetObjectItemCaseSensitive(st, "instances")) {
        if (strcmp(tag(inst, "karpenter.sh/nodepool"), "faults") != 0)
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
    setenv("AWS_ENDPOINT_URL", emu.url, 1);
    setenv("AWS_ACCESS_KEY_ID", "AKIDEMULATOR", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "emulator/secret/key+EXAMPLE", 1);
    setenv("AWS_REGION", "us-east-1", 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    unsetenv("AWS_SESSION_TOKEN");
    unsetenv("AWS_ROLE_ARN");
    ns_log_set_level(NS_LOG_ERROR);
    run = (unsigned)time(NULL) ^ ((unsigned)getpid() << 12);
    for (int i = 0; i < CLAIMS; i++)
        snprintf(claims[i].token, sizeof(claims[i].token), "fault-%x-%d", run, i);
    ns_plugin_setting settings[] = {{"cluster_name", "demo"}, {"request_timeout", "2s"}, {"max_attempts", "3"}};
    ns_plugin_load_params params = {.settings = settings, .n_settings = 3};
    if (ns_plugin_load_file(plugin_path, &params, &plugin) != NS_OK) {
        fprintf(stderr, "cannot load %s: %s\n", plugin_path, ns_error_message());
        emulator_stop(&emu);
        return EXIT_FAILURE;
    }
    static const char SPEC[] = "{\"subnetSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}],"
                           "\"securityGroupSelectorTerms\":[{\"tags\":{\"karpenter.sh/discovery\":\"demo\"}}],"
                           "\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}],\"role\":\"KarpenterNodeRole-demo\"}";
    spec_doc = ns_host_json_parse(SPEC, strlen(SPEC));
    nodeclass = (ns_nodeclass){sizeof(nodeclass), "karpenter.k8s.aws/v1", "EC2NodeClass", "default",
                               spec_doc};
    Suite *s = suite_create("aws_fault_rate");
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
    emulator_stop(&emu);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
