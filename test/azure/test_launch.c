/*
 * azure.so's launches against the ARM emulator (run under with_emulator.py): the VM and NIC of a spot launch and of a
 * Windows node, idempotency, capacity and quota errors, a stale VM of the claim, Retry-After, terminate and leaked
 * NICs, drift, and interruption events with their deadlines.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "azure_fixture.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "plugin/plugin_status.h"

static int count_instance(void *ctx, const ns_instance *in)
{
    (void)in;
    (*(int *)ctx)++;
    return 0;
}
/* ---- launch ---- */

static const cJSON *get_path(const cJSON *o, const char *const *keys)
{
    for (size_t i = 0; o && keys[i]; i++)
        o = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, atoi(keys[i])) : cJSON_GetObjectItemCaseSensitive(o, keys[i]);
    return o;
}

static const char *str_at(const cJSON *o, const char *const *keys)
{
    const cJSON *v = get_path(o, keys);
    return cJSON_IsString(v) ? v->valuestring : "";
}

START_TEST(test_launch_spot_vm_and_nic)
{
    ns_plugin *p = azf_load(NULL);
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "default", "{\"tags\":{\"team\":\"a\"},\"osDiskSizeGB\":64}");
    const char *claim = azf_fresh_claim("spot");
    ns_launch_result r;
    ck_assert_msg(azf_launch(p, nc, claim, "Standard_D4s_v3", ZONE2, "spot", &r) == NS_OK, "%s", ns_error_message());
    ck_assert_str_eq(r.zone, ZONE2);
    ck_assert_str_eq(r.capacity_type, "spot");
    ck_assert_str_eq(r.instance_type, "Standard_D4s_v3");
    ck_assert_ptr_nonnull(strstr(r.provider_id, "azure:///subscriptions/"));
    ck_assert_ptr_nonnull(strstr(r.image_id, "/CommunityGalleries/AKSUbuntu-"));
    ck_assert_ptr_nonnull(strstr(r.image_id, "2204gen2containerd/versions/202511.07.0"));
    ck_assert(r.allocatable.cpu_milli > 0 && r.allocatable.cpu_milli < 4000);
    cJSON *st = azf_state();
    char vm_name[80];
    snprintf(vm_name, sizeof(vm_name), "aks-%s", claim);
    const cJSON *vm = azf_vm(st, vm_name);
    ck_assert_ptr_nonnull(vm);
    ck_assert_str_eq(str_at(vm, (const char *[]){"properties", "priority", NULL}), "Spot");
    ck_assert_str_eq(str_at(vm, (const char *[]){"properties", "evictionPolicy", NULL}), "Delete");
    ck_assert_double_eq(get_path(vm, (const char *[]){"properties", "billingProfile", "maxPrice", NULL})->valuedouble,
                        -1);
    ck_assert_str_eq(str_at(vm, (const char *[]){"zones", "0", NULL}), "2");
    ck_assert_str_eq(str_at(vm, (const char *[]){"properties", "storageProfile", "osDisk", "deleteOption", NULL}),
                     "Delete");
    ck_assert_int_eq(get_path(vm, (const char *[]){"properties", "storageProfile", "osDisk", "diskSizeGB", NULL})
                         ->valueint, 64);
    ck_assert_str_eq(str_at(vm, (const char *[]){"properties", "networkProfile", "networkInterfaces", "0",
                                                 "properties", "deleteOption", NULL}), "Delete");
    ck_assert_str_eq(str_at(vm, (const char *[]){"tags", "karpenter.azure.com_cluster", NULL}), "demo");
    ck_assert_str_eq(str_at(vm, (const char *[]){"tags", "karpenter.sh_nodepool", NULL}), "default");
    ck_assert_str_eq(str_at(vm, (const char *[]){"tags", "karpenter.sh_nodeclaim", NULL}), claim);
    ck_assert_str_eq(str_at(vm, (const char *[]){"tags", "team", NULL}), "a");
    ck_assert_str_eq(str_at(vm, (const char *[]){"tags", "compute.aks.billing", NULL}), "linux");
    /* customData: the AKS bootstrap, with the node's labels and taints and the kubelet's max pods */
    const char *custom = str_at(vm, (const char *[]){"custom_data", NULL});
    unsigned char script[16384];
    int n = EVP_DecodeBlock(script, (const unsigned char *)custom, (int)strlen(custom));
    ck_assert_int_gt(n, 100);
    script[n] = '\0';
    ck_assert_ptr_nonnull(strstr((char *)script, "KUBELET_NODE_LABELS='team=a'"));
    ck_assert_ptr_nonnull(strstr((char *)script, "KUBELET_REGISTER_WITH_TAINTS='dedicated=gpu:NoSchedule'"));
    ck_assert_ptr_nonnull(strstr((char *)script, "--max-pods=250"));
    ck_assert_ptr_nonnull(strstr((char *)script, "/opt/azure/containers/provision.sh"));
    ck_assert_ptr_nonnull(strstr((char *)script, "LOCATION='southcentralus'"));
    /* the NIC is in the default subnet, tagged, attached */
    const cJSON *nic;
    int nics = 0;
    cJSON_ArrayForEach(nic, cJSON_GetObjectItem(st, "nics")) {
        if (strcmp(str_at(nic, (const char *[]){"name", NULL}), vm_name) != 0)
            continue;
        nics++;
        ck_assert_ptr_nonnull(strstr(str_at(nic, (const char *[]){"properties", "ipConfigurations", "0", "properties",
                                                                  "subnet", "id", NULL}), "/subnets/nodes"));
        ck_assert_str_eq(str_at(nic, (const char *[]){"tags", "karpenter.azure.com_cluster", NULL}), "demo");
    }
    ck_assert_int_eq(nics, 1);
    cJSON_Delete(st);
    /* the same claim again: the same VM, no second PUT */
    ns_launch_result again;
    ck_assert_int_eq(azf_launch(p, nc, claim, "Standard_D4s_v3", ZONE2, "spot", &again), NS_OK);
    ck_assert_str_eq(again.provider_id, r.provider_id);
    st = azf_state();
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(st, "vm_puts"), vm_name)->valueint, 1);
    cJSON_Delete(st);
    /* get, list, terminate: VM and NIC gone; a second terminate finds it gone */
    ns_instance in = {.struct_size = sizeof(in)};
    ck_assert_int_eq(ns_plugin_get_instance(p, r.provider_id, &in), NS_OK);
    ck_assert_str_eq(in.nodeclaim_name, claim);
    ck_assert_str_eq(in.capacity_type, "spot");
    bool gone = true;
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, &gone), NS_OK);
    ck_assert(!gone);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, &gone), NS_OK);
    ck_assert(gone);
    ck_assert_int_eq(ns_plugin_get_instance(p, r.provider_id, &in), NS_ERR_NOT_FOUND);
    st = azf_state();
    ck_assert_ptr_null(azf_vm(st, vm_name));
    cJSON_ArrayForEach(nic, cJSON_GetObjectItem(st, "nics"))
        ck_assert_str_ne(str_at(nic, (const char *[]){"name", NULL}), vm_name);
    cJSON_Delete(st);
    azf_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

/* Windows (extension): the VM as AKS creates Windows nodes — a computer name of at most 15 characters, a password
 * ARM accepts, the PowerShell setup script as customData, and the Custom Script Extension that runs it. */
START_TEST(test_windows_node)
{
    const char *settings[] = {"kubelet_bootstrap_token", "abcdef.0123456789abcdef", "cluster_endpoint",
                              "demo-dns.hcp.southcentralus.azmk8s.io", NULL};
    ns_plugin *p = azf_load(settings);
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "win", "{\"imageFamily\":\"Windows2022\",\"maxPods\":40}");
    const char *claim = azf_fresh_claim("win");
    ns_launch_result r;
    ck_assert_msg(azf_launch(p, nc, claim, "Standard_D4s_v3", ZONE1, "on-demand", &r) == NS_OK, "%s",
                  ns_error_message());
    char vm_name[80];
    snprintf(vm_name, sizeof(vm_name), "aks-%s", claim);
    cJSON *st = azf_state();
    const cJSON *vm = azf_vm(st, vm_name);
    ck_assert_ptr_nonnull(vm);
    const char *computer = str_at(vm, (const char *[]){"properties", "osProfile", "computerName", NULL});
    ck_assert_msg(strlen(computer) <= 15 && strncmp(computer, "aks", 3) == 0, "computer name %s", computer);
    ck_assert_ptr_null(get_path(vm, (const char *[]){"properties", "osProfile", "linuxConfiguration", NULL}));
    ck_assert(cJSON_IsTrue(get_path(vm, (const char *[]){"properties", "osProfile", "windowsConfiguration",
                                                         "provisionVMAgent", NULL})));
    ck_assert_str_eq(str_at(vm, (const char *[]){"properties", "storageProfile", "osDisk", "osType", NULL}), "Windows");
    ck_assert_str_eq(str_at(vm, (const char *[]){"tags", "compute.aks.billing", NULL}), "windows");
    const char *custom = str_at(vm, (const char *[]){"custom_data", NULL});
    static unsigned char script[32768];
    int n = EVP_DecodeBlock(script, (const unsigned char *)custom, (int)strlen(custom));
    ck_assert_int_gt(n, 100);
    script[n] = '\0';
    const char *words[] = {"param([Parameter(Mandatory=$true)][string]$CSEResultFilePath)",
                           "$global:MasterIP='demo-dns.hcp.southcentralus.azmk8s.io'",
                           "$global:TLSBootstrapToken='abcdef.0123456789abcdef'", "$global:KubeletNodeLabels='",
                           "$global:KubeletRegisterWithTaints='dedicated=gpu:NoSchedule'",
                           "$global:KubeletConfigArgs=@( '--max-pods=40' )", "$global:KubeBinariesVersion='1.31.2'",
                           "aks-windows-cse-scripts-v0.0.52.zip", "Write-BootstrapKubeConfig",
                           "Set-Content -Path $CSEResultFilePath -Value '0'", NULL};
    for (size_t i = 0; words[i]; i++)
        ck_assert_msg(strstr((char *)script, words[i]), "the Windows setup script lacks %s:\n%s", words[i], script);
    const cJSON *exts = cJSON_GetObjectItem(vm, "extensions");
    ck_assert_int_eq(cJSON_GetArraySize(exts), 1);
    const cJSON *ext = cJSON_GetArrayItem(exts, 0);
    ck_assert_str_eq(str_at(ext, (const char *[]){"name", NULL}), "windows-cse-agent-karpenter");
    ck_assert_str_eq(str_at(ext, (const char *[]){"properties", "publisher", NULL}), "Microsoft.Compute");
    ck_assert_str_eq(str_at(ext, (const char *[]){"properties", "type", NULL}), "CustomScriptExtension");
    ck_assert_str_eq(str_at(ext, (const char *[]){"properties", "typeHandlerVersion", NULL}), "1.10");
    ck_assert_ptr_null(get_path(ext, (const char *[]){"properties", "protectedSettings", NULL}));
    const char *command = str_at(ext, (const char *[]){"protected_settings", "commandToExecute", NULL});
    ck_assert_msg(strstr(command, "\\AzureData\\CustomData.bin") && strstr(command, "-CSEResultFilePath") &&
                      strstr(command, "provision.complete"), "command: %s", command);
    int ext_puts = azf_requests(st, "vmext.put");
    cJSON_Delete(st);
    /* a retried launch finds the VM and puts the extension again (ARM: no change); one VM */
    ns_launch_result again;
    ck_assert_int_eq(azf_launch(p, nc, claim, "Standard_D4s_v3", ZONE1, "on-demand", &again), NS_OK);
    ck_assert_str_eq(again.provider_id, r.provider_id);
    st = azf_state();
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(st, "vm_puts"), vm_name)->valueint, 1);
    ck_assert_int_eq(azf_requests(st, "vmext.put"), ext_puts + 1);
    cJSON_Delete(st);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
    azf_nodeclass_free(nc);
    /* userData of one's own replaces the bootstrap: no extension runs it */
    nc = azf_nodeclass(V1BETA1, "win", "{\"imageFamily\":\"Windows2019\",\"userData\":\"Write-Output hello\"}");
    claim = azf_fresh_claim("winud");
    ck_assert_msg(azf_launch(p, nc, claim, "Standard_D4s_v3", ZONE1, "on-demand", &r) == NS_OK, "%s",
                  ns_error_message());
    snprintf(vm_name, sizeof(vm_name), "aks-%s", claim);
    st = azf_state();
    vm = azf_vm(st, vm_name);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(vm, "extensions")), 0);
    ck_assert_str_eq(str_at(vm, (const char *[]){"properties", "storageProfile", "imageReference", "sku", NULL}),
                     "2019-datacenter-core-smalldisk-g2");
    cJSON_Delete(st);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
    azf_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

/* Each capacity or quota refusal marks exactly the refused offering; the next option is launched; no failed VM is
 * left behind. */
START_TEST(test_capacity_errors)
{
    static const char *const CODES[] = {"ZonalAllocationFailed", "AllocationFailed", "SkuNotAvailable",
                                        "OverconstrainedAllocationRequest", "QuotaExceeded", "OperationNotAllowed"};
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "default", "{}");
    for (size_t c = 0; c < sizeof(CODES) / sizeof(CODES[0]); c++) {
        ns_plugin *p = azf_load(NULL);
        char fault[300];
        snprintf(fault, sizeof(fault), "{\"kind\":\"capacity\",\"sku\":\"Standard_D2s_v3\",\"zone\":\"1\","
                 "\"capacity_type\":\"on-demand\",\"code\":\"%s\"}", CODES[c]);
        ck_assert_int_eq(azf_control("faults", fault, NULL), 200);
        ns_launch_option opts[] = {{sizeof(ns_launch_option), "Standard_D2s_v3", ZONE1, "on-demand", 0.11},
                                   {sizeof(ns_launch_option), "Standard_D4s_v3", ZONE1, "on-demand", 0.22}};
        const char *claim = azf_fresh_claim("cap");
        ns_launch_request req = {.struct_size = sizeof(req), .cluster_name = "demo", .nodeclaim_name = claim,
                                 .nodepool_name = "default", .client_token = claim, .nodeclass = nc, .options = opts,
                                 .n_options = 2};
        ns_launch_result r = {.struct_size = sizeof(r)};
        ck_assert_msg(ns_plugin_launch(p, &req, &r) == NS_OK, "%s: %s", CODES[c], ns_error_message());
        ck_assert_str_eq(r.instance_type, "Standard_D4s_v3");
        /* the launch succeeded and still named the one refused offering, for the core's cache */
        const ns_error_record *e = ns_error_last();
        ck_assert_msg(e->n_unavailable == 1, "%s: %zu offerings named", CODES[c], e->n_unavailable);
        ck_assert_str_eq(e->unavailable[0].instance_type, "Standard_D2s_v3");
        ck_assert_str_eq(e->unavailable[0].zone, ZONE1);
        ck_assert_str_eq(e->unavailable[0].capacity_type, "on-demand");
        cJSON *st = azf_state();
        int vms = 0;
        const cJSON *vm;
        cJSON_ArrayForEach(vm, cJSON_GetObjectItem(st, "vms"))
            vms += strcmp(str_at(vm, (const char *[]){"tags", "karpenter.sh_nodeclaim", NULL}), claim) == 0;
        ck_assert_int_eq(vms, 1);
        cJSON_Delete(st);
        ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
        /* only the refused offering: both sizes refused -> capacity error naming each */
        snprintf(fault, sizeof(fault), "{\"kind\":\"capacity\",\"sku\":\"Standard_D4s_v3\",\"zone\":\"1\","
                 "\"capacity_type\":\"on-demand\",\"code\":\"%s\"}", CODES[c]);
        ck_assert_int_eq(azf_control("faults", fault, NULL), 200);
        claim = azf_fresh_claim("cap");
        req.nodeclaim_name = req.client_token = claim;
        ck_assert_int_eq(ns_plugin_launch(p, &req, &r), NS_ERR_INSUFFICIENT_CAPACITY);
        e = ns_error_last();
        ck_assert_int_eq(e->n_unavailable, 2);
        ck_assert_str_eq(e->unavailable[0].instance_type, "Standard_D2s_v3");
        ck_assert_str_eq(e->unavailable[1].instance_type, "Standard_D4s_v3");
        /* a size the node class cannot run is no capacity failure: not named */
        ns_launch_option arm[] = {{sizeof(ns_launch_option), "Standard_D16plds_v5", ZONE1, "on-demand", 0.8}};
        ns_nodeclass *win = azf_nodeclass(V1BETA1, "win", "{\"imageFamily\":\"Windows2022\"}");
        claim = azf_fresh_claim("cap");
        ns_launch_request wreq = {.struct_size = sizeof(req), .cluster_name = "demo", .nodeclaim_name = claim,
                                  .nodepool_name = "default", .client_token = claim, .nodeclass = win, .options = arm,
                                  .n_options = 1};
        ck_assert_int_eq(ns_plugin_launch(p, &wreq, &r), NS_ERR_INVALID_ARGUMENT);
        ck_assert_int_eq(ns_error_last()->n_unavailable, 0);
        azf_nodeclass_free(win);
        ck_assert_int_eq(azf_control("clear", "{}", NULL), 200);
        ns_plugin_unload(p);
    }
    azf_nodeclass_free(nc);
}
END_TEST

/* A VM of the claim's name left by an earlier option (refused for capacity, its delete answered never) holds another
 * zone: ARM refuses the next option's PUT with PropertyChangeNotAllowed. That is no invalid request: the stale VM is
 * removed and the launch fails retryably, and the next launch gives the claim exactly one VM. */
START_TEST(test_stale_vm_of_claim_removed)
{
    const char *settings[] = {"request_timeout", "2s", "max_attempts", "3", NULL};
    ns_plugin *p = azf_load(settings);
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "default", "{}");
    ck_assert_int_eq(azf_control("faults", "{\"kind\":\"allocation\",\"count\":1,\"ops\":[\"vm.put\"]}", NULL), 200);
    ck_assert_int_eq(azf_control("faults", "{\"kind\":\"lost\",\"count\":4,\"ops\":[\"vm.delete\"]}", NULL), 200);
    ns_launch_option opts[] = {{sizeof(ns_launch_option), "Standard_D2s_v3", ZONE1, "spot", 0.05},
                               {sizeof(ns_launch_option), "Standard_D2s_v3", ZONE2, "spot", 0.06}};
    const char *claim = azf_fresh_claim("stale");
    ns_launch_request req = {.struct_size = sizeof(req), .cluster_name = "demo", .nodeclaim_name = claim,
                             .nodepool_name = "default", .client_token = claim, .nodeclass = nc, .options = opts,
                             .n_options = 2};
    ns_launch_result r = {.struct_size = sizeof(r)};
    int rc = ns_plugin_launch(p, &req, &r);
    ck_assert_msg(rc == NS_ERR_THROTTLED, "first launch: %s: %s", ns_err_name(rc), ns_error_message());
    ck_assert_msg(strstr(ns_error_message(), "from an earlier attempt was in the way"), "%s", ns_error_message());
    r = (ns_launch_result){.struct_size = sizeof(r)};
    ck_assert_msg(ns_plugin_launch(p, &req, &r) == NS_OK, "second launch: %s", ns_error_message());
    cJSON *st = azf_state();
    int vms = 0;
    const cJSON *vm;
    cJSON_ArrayForEach(vm, cJSON_GetObjectItem(st, "vms"))
        vms += strcmp(str_at(vm, (const char *[]){"tags", "karpenter.sh_nodeclaim", NULL}), claim) == 0;
    ck_assert_int_eq(vms, 1);
    cJSON_Delete(st);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
    ck_assert_int_eq(azf_control("clear", "{}", NULL), 200);
    azf_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(test_retry_after_honoured)
{
    ns_plugin *p = azf_load(NULL);
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "default", "{}");
    ck_assert_int_gt(azf_list_count(p, nc), 10);
    ck_assert_int_eq(azf_control("faults", "{\"kind\":\"throttle\",\"count\":2,\"retry_after\":1,\"ops\":[\"vm.list\"]}",
                                 NULL), 200);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int n = 0;
    ck_assert_msg(ns_plugin_list_instances(p, count_instance, &n) == NS_OK, "%s", ns_error_message());
    clock_gettime(CLOCK_MONOTONIC, &b);
    double waited = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    ck_assert_msg(waited >= 2.0, "two 429s with Retry-After: 1 were retried after %.2fs", waited);
    cJSON *st = azf_state();
    ck_assert_int_eq(azf_requests(st, "vm.list"), 3);
    cJSON_Delete(st);
    /* more throttles than attempts: THROTTLED with the hint */
    ck_assert_int_eq(azf_control("faults", "{\"kind\":\"throttle\",\"count\":3,\"retry_after\":0,\"ops\":[\"vm.list\"]}",
                                 NULL), 200);
    ck_assert_int_eq(ns_plugin_list_instances(p, count_instance, &n), NS_ERR_THROTTLED);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "TooManyRequests"));
    azf_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(test_leaked_nic_collected)
{
    ns_plugin *p = azf_load(NULL);
    char body[1024];
    snprintf(body, sizeof(body), "{\"name\":\"aks-leaked-%d\",\"body\":{\"location\":\"southcentralus\",\"tags\":"
             "{\"karpenter.azure.com_cluster\":\"demo\"},\"properties\":{\"ipConfigurations\":[{\"name\":\"ipconfig1\","
             "\"properties\":{\"subnet\":{\"id\":\"%s\"}}}]}}}", (int)getpid(), getenv("VNET_SUBNET_ID"));
    ck_assert_int_eq(azf_control("nics", body, NULL) / 100, 2);
    snprintf(body, sizeof(body), "{\"name\":\"other-%d\",\"body\":{\"location\":\"southcentralus\",\"tags\":"
             "{\"karpenter.azure.com_cluster\":\"another\"},\"properties\":{\"ipConfigurations\":[{\"name\":\"ip\","
             "\"properties\":{\"subnet\":{\"id\":\"%s\"}}}]}}}", (int)getpid(), getenv("VNET_SUBNET_ID"));
    ck_assert_int_eq(azf_control("nics", body, NULL) / 100, 2);
    int n = 0;
    ck_assert_int_eq(ns_plugin_list_instances(p, count_instance, &n), NS_OK);
    cJSON *st = azf_state();
    char leaked[64], other[64];
    snprintf(leaked, sizeof(leaked), "aks-leaked-%d", (int)getpid());
    snprintf(other, sizeof(other), "other-%d", (int)getpid());
    bool leaked_left = false, other_left = false;
    const cJSON *nic;
    cJSON_ArrayForEach(nic, cJSON_GetObjectItem(st, "nics")) {
        leaked_left |= strcmp(str_at(nic, (const char *[]){"name", NULL}), leaked) == 0;
        other_left |= strcmp(str_at(nic, (const char *[]){"name", NULL}), other) == 0;
    }
    ck_assert_msg(!leaked_left, "the cluster's unattached NIC was not collected");
    ck_assert_msg(other_left, "another cluster's NIC was deleted");
    cJSON_Delete(st);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(test_drift)
{
    ns_plugin *p = azf_load(NULL);
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "default", "{}");
    ns_launch_result r;
    ck_assert_int_eq(azf_launch(p, nc, azf_fresh_claim("drift"), "Standard_D2s_v3", ZONE1, "on-demand", &r), NS_OK);
    ns_instance in = {.struct_size = sizeof(in)};
    ck_assert_int_eq(ns_plugin_get_instance(p, r.provider_id, &in), NS_OK);
    bool drifted = true;
    char reason[64] = "";
    ck_assert_msg(ns_plugin_check_drift(p, &in, nc, &drifted, reason, sizeof(reason)) == NS_OK, "%s",
                  ns_error_message());
    ck_assert_msg(!drifted, "drifted at once: %s", reason);
    ns_nodeclass *image = azf_nodeclass(V1BETA1, "default", "{\"imageFamily\":\"Ubuntu2404\"}");
    ck_assert_int_eq(ns_plugin_check_drift(p, &in, image, &drifted, reason, sizeof(reason)), NS_OK);
    ck_assert(drifted);
    ck_assert_str_eq(reason, "ImageDrift");
    char spec[600];
    snprintf(spec, sizeof(spec), "{\"vnetSubnetID\":\"%.*s/other\"}",
             (int)(strrchr(getenv("VNET_SUBNET_ID"), '/') - getenv("VNET_SUBNET_ID")), getenv("VNET_SUBNET_ID"));
    ns_nodeclass *subnet = azf_nodeclass(V1BETA1, "default", spec);
    ck_assert_int_eq(ns_plugin_check_drift(p, &in, subnet, &drifted, reason, sizeof(reason)), NS_OK);
    ck_assert(drifted);
    ck_assert_str_eq(reason, "SubnetDrift");
    const char *newer[] = {"kubernetes_version", "1.32.0", NULL};
    ns_plugin *upgraded = azf_load(newer);
    ck_assert_int_eq(ns_plugin_check_drift(upgraded, &in, nc, &drifted, reason, sizeof(reason)), NS_OK);
    ck_assert(drifted);
    ck_assert_str_eq(reason, "K8sVersionDrift");
    ns_plugin_unload(upgraded);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
    azf_nodeclass_free(image);
    azf_nodeclass_free(subnet);
    azf_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

typedef struct events {
    ns_event got[16];
    int n;
} events;

static int on_event(void *ctx, const ns_event *ev)
{
    events *e = ctx;
    if (e->n < 16)
        e->got[e->n++] = *ev;
    return 0;
}

static const ns_event *event_of(const events *e, const char *pid, ns_event_kind kind)
{
    for (int i = 0; i < e->n; i++)
        if (e->got[i].kind == kind && strcmp(e->got[i].provider_id, pid) == 0)
            return &e->got[i];
    return NULL;
}

START_TEST(test_events_with_deadlines)
{
    ns_plugin *p = azf_load(NULL);
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "default", "{}");
    const char *claim = azf_fresh_claim("evict");
    ns_launch_result r;
    ck_assert_int_eq(azf_launch(p, nc, claim, "Standard_D2s_v3", ZONE1, "spot", &r), NS_OK);
    long long deadline = ((long long)time(NULL) + 25) * 1000;
    char body[300];
    snprintf(body, sizeof(body), "{\"kind\":\"preempt\",\"vm\":\"aks-%s\",\"deadline_ms\":%lld}", claim, deadline);
    ck_assert_int_eq(azf_control("events", body, NULL), 200);
    long long window = ((long long)time(NULL) + 3600) * 1000;
    snprintf(body, sizeof(body), "{\"kind\":\"maintenance\",\"vm\":\"aks-%s\",\"deadline_ms\":%lld}", claim, window);
    ck_assert_int_eq(azf_control("events", body, NULL), 200);
    events e = {.n = 0};
    ck_assert_int_eq(ns_plugin_poll_events(p, on_event, &e), NS_OK);
    const ns_event *spot = event_of(&e, r.provider_id, NS_EVENT_SPOT_INTERRUPTION);
    const ns_event *maint = event_of(&e, r.provider_id, NS_EVENT_SCHEDULED_MAINTENANCE);
    ck_assert_ptr_nonnull(spot);
    ck_assert_ptr_nonnull(maint);
    ck_assert_int_eq(spot->deadline_ms, deadline);
    ck_assert_int_eq(maint->deadline_ms, window);
    events later = {.n = 0};
    ck_assert_int_eq(ns_plugin_poll_events(p, on_event, &later), NS_OK);
    ck_assert_int_eq(later.n, 0);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
    azf_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST


int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    Suite *s = suite_create("azure_launch");
    TCase *tc = tcase_create("launch");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_launch_spot_vm_and_nic);
    tcase_add_test(tc, test_capacity_errors);
    tcase_add_test(tc, test_stale_vm_of_claim_removed);
    tcase_add_test(tc, test_retry_after_honoured);
    tcase_add_test(tc, test_leaked_nic_collected);
    tcase_add_test(tc, test_drift);
    tcase_add_test(tc, test_events_with_deadlines);
    tcase_add_test(tc, test_windows_node);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
