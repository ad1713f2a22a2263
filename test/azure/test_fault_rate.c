/*
 * One VM per node claim and none left behind at a 20 % fault rate. azure.so is loaded through the core's loader (the
 * real host: libcurl, TLS against the emulator's generated CA, thread-safe upcalls). The emulator answers one
 * request in five, on every operation including the token endpoint, with a 429 (Retry-After), a 5xx, a lost answer
 * (the operation takes effect, the answer never arrives) or, for VM creation, an allocation failure in the
 * long-running operation; three VM creations certainly fail for capacity and three answers to them are lost. Four threads launch node claims, each retrying its launch until it succeeds, as the core
 * does. Afterwards the emulator holds exactly one VM per claim, the one the launch reported; every VM
 * list_instances finds is terminated (still under faults) and neither VM nor NIC of the pool is left.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "azure_fixture.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"

#define THREADS 4
#define CLAIMS_PER_THREAD 3
#define CLAIMS (THREADS * CLAIMS_PER_THREAD)
#define MAX_TRIES 60

static ns_plugin *plugin;
static ns_nodeclass *nodeclass;

typedef struct claim {
    char name[64];
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

static void *launch_thread(void *arg)
{
    int first = *(int *)arg;
    static const char *const TYPES[] = {"Standard_D2s_v3", "Standard_D2_v5", "Standard_D4s_v3", "Standard_E4d_v5"};
    static const char *const ZONES[] = {"southcentralus-1", "southcentralus-2", "southcentralus-3"};
    ns_launch_option options[24];
    size_t n = 0;
    for (int cap = 0; cap < 2; cap++)
        for (int t = 0; t < 4; t++)
            for (int z = 0; z < 3; z++)
                options[n++] = (ns_launch_option){sizeof(ns_launch_option), TYPES[t], ZONES[z],
                                                  cap ? "on-demand" : "spot", 0.1 * (t + 1) + cap};
    for (int i = first; i < first + CLAIMS_PER_THREAD; i++) {
        claim *c = &claims[i];
        ns_launch_request req = {.struct_size = sizeof(req), .cluster_name = "demo", .nodeclaim_name = c->name,
                                 .nodepool_name = "faults", .client_token = c->name, .nodeclass = nodeclass,
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
                pause_ms(200);
        } while (rc != NS_OK && c->tries < MAX_TRIES);
    }
    return NULL;
}

typedef struct listed {
    char ids[64][NS_PROVIDER_ID_MAX];
    int n;
} listed;

static int collect(void *ctx, const ns_instance *in)
{
    listed *l = ctx;
    if (strcmp(in->nodepool_name, "faults") == 0 && l->n < 64)
        snprintf(l->ids[l->n++], NS_PROVIDER_ID_MAX, "%s", in->provider_id);
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

static const char *tag(const cJSON *resource, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(resource, "tags"), key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

START_TEST(test_one_vm_per_claim_none_left)
{
    const char *settings[] = {"request_timeout", "3s", "max_attempts", "3", NULL};
    plugin = azf_load(settings);
    nodeclass = azf_nodeclass("karpenter.azure.com/v1beta1", "default", "{}");
    ck_assert_int_eq(azf_control("faults", "{\"kind\":\"random\",\"rate\":0.2,\"kinds\":[\"throttle\",\"error5xx\","
                                 "\"lost\",\"allocation\"],\"retry_after\":0,\"seed\":7}", NULL), 200);
    /* and, whatever the threads' interleaving gives the random draws, some VM creations certainly fail for capacity
     * and some of their answers are certainly lost */
    ck_assert_int_eq(azf_control("faults", "{\"kind\":\"allocation\",\"count\":3,\"ops\":[\"vm.put\"]}", NULL), 200);
    ck_assert_int_eq(azf_control("faults", "{\"kind\":\"lost\",\"count\":3,\"ops\":[\"vm.put\"]}", NULL), 200);
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
        ck_assert_msg(!claims[i].bad_code, "%s: a launch failed with %s, not a retryable error: %s", claims[i].name,
                      ns_err_name(claims[i].bad_code), claims[i].bad_message);
        ck_assert_msg(claims[i].result.provider_id[0], "%s never launched in %d tries", claims[i].name, MAX_TRIES);
        retried += claims[i].tries > 1;
    }
    cJSON *st = azf_state();
    const cJSON *injected = cJSON_GetObjectItemCaseSensitive(st, "faults_injected");
    int total = 0;
    static const char *const KINDS[] = {"throttle", "error5xx", "lost", "allocation"};
    for (int k = 0; k < 4; k++) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(injected, KINDS[k]);
        ck_assert_msg(cJSON_IsNumber(n) && n->valueint > 0, "no %s fault was injected", KINDS[k]);
        total += n->valueint;
    }
    int requests = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(st, "requests"))
        requests += r->valueint;
    fprintf(stderr, "fault rate: %d faults in %d requests; %d of %d launches needed more than one call\n", total,
            requests, retried, CLAIMS);
    ck_assert_msg((total - 6) * 10 >= requests && (total - 6) * 100 <= requests * 35,
                  "%d random faults in %d requests is not about 20%%", total - 6, requests);
    int in_pool = 0;
    const cJSON *vm;
    cJSON_ArrayForEach(vm, cJSON_GetObjectItemCaseSensitive(st, "vms"))
        in_pool += strcmp(tag(vm, "karpenter.sh_nodepool"), "faults") == 0;
    for (int i = 0; i < CLAIMS; i++) {
        int found = 0;
        cJSON_ArrayForEach(vm, cJSON_GetObjectItemCaseSensitive(st, "vms")) {
            if (strcmp(tag(vm, "karpenter.sh_nodeclaim"), claims[i].name) != 0)
                continue;
            found++;
            const char *id = cJSON_GetObjectItemCaseSensitive(vm, "id")->valuestring;
            ck_assert_msg(strstr(claims[i].result.provider_id, id), "%s: launch reported %s but ARM holds %s",
                          claims[i].name, claims[i].result.provider_id, id);
        }
        ck_assert_msg(found == 1, "%s: %d VMs for one node claim", claims[i].name, found);
    }
    ck_assert_int_eq(in_pool, CLAIMS);
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
    list_ours(&l); /* also collects NICs a failed launch left */
    ck_assert_int_eq(l.n, 0);
    ck_assert_int_eq(azf_control("clear", "{}", NULL), 200);
    list_ours(&l);
    st = azf_state();
    cJSON_ArrayForEach(vm, cJSON_GetObjectItemCaseSensitive(st, "vms"))
        ck_assert_msg(strcmp(tag(vm, "karpenter.sh_nodepool"), "faults") != 0, "VM %s is left",
                      cJSON_GetObjectItemCaseSensitive(vm, "name")->valuestring);
    const cJSON *nic;
    cJSON_ArrayForEach(nic, cJSON_GetObjectItemCaseSensitive(st, "nics"))
        ck_assert_msg(strcmp(tag(nic, "karpenter.sh_nodepool"), "faults") != 0, "NIC %s is left",
                      cJSON_GetObjectItemCaseSensitive(nic, "name")->valuestring);
    cJSON_Delete(st);
}
END_TEST

int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    unsigned run = (unsigned)time(NULL) ^ ((unsigned)getpid() << 12);
    for (int i = 0; i < CLAIMS; i++)
        snprintf(claims[i].name, sizeof(claims[i].name), "fault-%x-%d", run, i);
    Suite *s = suite_create("azure_fault_rate");
    TCase *tc = tcase_create("faults");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_one_vm_per_claim_none_left);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    ns_plugin_unload(plugin);
    azf_nodeclass_free(nodeclass);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
