/*
 * The Windows bootstrap's Custom Script Extension as Microsoft's SDK sees it. azure.so (through the core's loader)
 * launches a Windows node, which PUTs the extension on its VM; while the VM lives, extension_sdk.cjs reads that
 * extension back through @azure/arm-compute's VirtualMachineExtensions and puts the same extension through the SDK,
 * so the body azure.so sent is checked against the SDK's own serialization of it. The node is then terminated and
 * neither VM nor NIC may be left.
 *
 * Usage (under with_emulator.py): test_azure_extension_sdk NODE SCRIPT   (AZURE_PLUGIN names azure.so)
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "azure_fixture.h"
#include "errors/ns_error.h"

static const char *node_exe;
static const char *sdk_script;

/* Runs the SDK script on the VM; its exit status (its output goes to the test's log). */
static int run_sdk(const char *vm_name)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        execl(node_exe, node_exe, sdk_script, vm_name, (char *)NULL);
        perror(node_exe);
        _exit(127);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

START_TEST(test_bootstrap_extension_through_sdk)
{
    const char *settings[] = {"kubelet_bootstrap_token", "abcdef.0123456789abcdef", "cluster_endpoint",
                              "demo-dns.hcp.southcentralus.azmk8s.io", NULL};
    ns_plugin *p = azf_load(settings);
    ns_nodeclass *nc = azf_nodeclass("karpenter.azure.com/v1beta1", "win", "{\"imageFamily\":\"Windows2022\"}");
    char claim[64], vm_name[80];
    snprintf(claim, sizeof(claim), "sdkwin-%ld", (long)getpid());
    snprintf(vm_name, sizeof(vm_name), "aks-%s", claim);
    ns_launch_result r;
    ck_assert_msg(azf_launch(p, nc, claim, "Standard_D4s_v3", "southcentralus-1", "on-demand", &r) == NS_OK, "%s",
                  ns_error_message());
    int status = run_sdk(vm_name);
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
    ck_assert_msg(status == 0, "%s %s %s exited %d (its output is above)", node_exe, sdk_script, vm_name, status);
    cJSON *st = azf_state();
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(st, "vms")), 0);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(st, "nics")), 0);
    cJSON_Delete(st);
    azf_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s NODE SCRIPT (under test/azure/with_emulator.py)\n", argv[0]);
        return 2;
    }
    node_exe = argv[1];
    sdk_script = argv[2];
    Suite *s = suite_create("azure_extension_sdk");
    TCase *tc = tcase_create("windows");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bootstrap_extension_through_sdk);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
