/*
 * One VM per node claim and none left behind at a 20 % fault rate. azure.so is loaded through the core's loader (the
 * real host: libcurl, TLS against the emulator's generated CA, thread-safe upcalls). The emulator answers one
 * request in five, on every operation including the token endpoint, with a 429 (Retry-After), a 5xx, a lost answer
 * (the operation takes effect, the answer never arrives) or, for VM creation, an allocation failure in the
 * long-running operation; three VM creations certainly fail for capacity and three answers to them are lost. Four
 * threads launch node claims (test/support/fault_rate), each retrying its launch until it succeeds, as the core does.
 * Afterwards the emulator holds exactly one VM per claim, the one the launch reported; every VM
 * list_instances finds is terminated (still under faults) and neither VM nor NIC of the pool is left.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "azure_fixture.h"
#include "errors/ns_error.h"
#include "fault_rate.h"
#include "log/ns_log.h"

static ns_nodeclass *nodeclass;
static fr_run run = {.cluster_name = "demo", .max_tries = 60, .pause_ms = 200, .capacity_is_retryable = true};

START_TEST(test_one_vm_per_claim_none_left)
{
    const char *settings[] = {"request_timeout", "3s", "max_attempts", "3", NULL};
    run.plugin = azf_load(settings);
    nodeclass = azf_nodeclass("karpenter.azure.com/v1beta1", "default", "{}");
    run.nodeclass = nodeclass;
    ck_assert_int_eq(azf_control("faults", "{\"kind\":\"random\",\"rate\":0.2,\"kinds\":[\"throttle\",\"error5xx\","
                                 "\"lost\",\"allocation\"],\"retry_after\":0,\"seed\":7}", NULL), 200);
    /* and, whatever the threads' interleaving gives the random draws, some VM creations certainly fail for capacity
     * and some of their answers are certainly lost */
    ck_assert_int_eq(azf_control("faults", "{\"kind\":\"allocation\",\"count\":3,\"ops\":[\"vm.put\"]}", NULL), 200);
    ck_assert_int_eq(azf_control("faults", "{\"kind\":\"lost\",\"count\":3,\"ops\":[\"vm.put\"]}", NULL), 200);
    int retried = fr_launch_all(&run);
    cJSON *st = azf_state();
    static const char *const KINDS[] = {"throttle", "error5xx", "lost", "allocation"};
    int total = fr_faults_injected(cJSON_GetObjectItemCaseSensitive(st, "faults_injected"), KINDS, 4);
    int requests = fr_sum_counts(cJSON_GetObjectItemCaseSensitive(st, "requests"));
    fprintf(stderr, "fault rate: %d faults in %d requests; %d of %d launches needed more than one call\n", total,
            requests, retried, FR_CLAIMS);
    ck_assert_msg((total - 6) * 10 >= requests && (total - 6) * 100 <= requests * 35,
                  "%d random faults in %d requests is not about 20%%", total - 6, requests);
    int in_pool = 0;
    const cJSON *vm;
    cJSON_ArrayForEach(vm, cJSON_GetObjectItemCaseSensitive(st, "vms"))
        in_pool += strcmp(fr_tag(vm, "tags", "karpenter.sh_nodepool"), FR_NODEPOOL) == 0;
    for (int i = 0; i < FR_CLAIMS; i++) {
        const fr_claim *c = &run.claims[i];
        int found = 0;
        cJSON_ArrayForEach(vm, cJSON_GetObjectItemCaseSensitive(st, "vms")) {
            if (strcmp(fr_tag(vm, "tags", "karpenter.sh_nodeclaim"), c->token) != 0)
                continue;
            found++;
            const char *id = cJSON_GetObjectItemCaseSensitive(vm, "id")->valuestring;
            ck_assert_msg(strstr(c->result.provider_id, id), "%s: launch reported %s but ARM holds %s",
                          c->token, c->result.provider_id, id);
        }
        ck_assert_msg(found == 1, "%s: %d VMs for one node claim", c->token, found);
    }
    ck_assert_int_eq(in_pool, FR_CLAIMS);
    cJSON_Delete(st);

    fr_listed l;
    fr_list_pool(&run, &l);
    ck_assert_int_eq(l.n, FR_CLAIMS);
    fr_terminate(&run, &l);
    fr_list_pool(&run, &l); /* also collects NICs a failed launch left */
    ck_assert_int_eq(l.n, 0);
    ck_assert_int_eq(azf_control("clear", "{}", NULL), 200);
    fr_list_pool(&run, &l);
    st = azf_state();
    cJSON_ArrayForEach(vm, cJSON_GetObjectItemCaseSensitive(st, "vms"))
        ck_assert_msg(strcmp(fr_tag(vm, "tags", "karpenter.sh_nodepool"), FR_NODEPOOL) != 0, "VM %s is left",
                      cJSON_GetObjectItemCaseSensitive(vm, "name")->valuestring);
    const cJSON *nic;
    cJSON_ArrayForEach(nic, cJSON_GetObjectItemCaseSensitive(st, "nics"))
        ck_assert_msg(strcmp(fr_tag(nic, "tags", "karpenter.sh_nodepool"), FR_NODEPOOL) != 0, "NIC %s is left",
                      cJSON_GetObjectItemCaseSensitive(nic, "name")->valuestring);
    cJSON_Delete(st);
}
END_TEST

int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    fr_name_claims(&run);
    static const char *const TYPES[] = {"Standard_D2s_v3", "Standard_D2_v5", "Standard_D4s_v3", "Standard_E4d_v5"};
    static const char *const ZONES[] = {"southcentralus-1", "southcentralus-2", "southcentralus-3"};
    ns_launch_option options[24];
    size_t n = 0;
    for (int cap = 0; cap < 2; cap++)
        for (int t = 0; t < 4; t++)
            for (int z = 0; z < 3; z++)
                options[n++] = (ns_launch_option){sizeof(ns_launch_option), TYPES[t], ZONES[z],
                                                  cap ? "on-demand" : "spot", 0.1 * (t + 1) + cap};
    run.options = options;
    run.n_options = n;
    int failed = fr_run_test("azure_fault_rate", test_one_vm_per_claim_none_left);
    ns_plugin_unload(run.plugin);
    azf_nodeclass_free(nodeclass);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
