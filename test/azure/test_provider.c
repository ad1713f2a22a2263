/*
 * azure.so through the core's loader against the ARM emulator (run under with_emulator.py): authentication (client
 * secret, workload identity, managed identity, a refused token refreshed, national cloud scopes, nothing secret in
 * the logs), node class validation, the catalog (restrictions, labels, prices, reservations) and the node class status.
 * Launches, terminate, drift and events are in test_launch.c.
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
#define SECRET "emulator~client~secret"
#define FEDERATED "eyJhbGciOiJSUzI1NiJ9.emulator.projected"

/* ---- authentication ---- */

START_TEST(test_auth_client_secret_and_logs)
{
    char path[] = "/tmp/nodesmith-azure-log-XXXXXX";
    int fd = mkstemp(path);
    FILE *log = fdopen(fd, "w+");
    ns_log_set_output(log);
    ns_log_set_level(NS_LOG_DEBUG);
    ns_plugin *p = azf_load(NULL);
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "default", "{}");
    ns_launch_result r;
    ck_assert_int_gt(azf_list_count(p, nc), 10);
    ck_assert_msg(azf_launch(p, nc, azf_fresh_claim("auth"), "Standard_D2s_v3", ZONE1, "on-demand", &r) == NS_OK,
                  "launch: %s", ns_error_message());
    ck_assert_int_eq(ns_plugin_terminate(p, r.provider_id, NULL), NS_OK);
    ns_plugin_unload(p);
    fflush(log);
    rewind(log);
    char line[8192];
    int lines = 0;
    while (fgets(line, sizeof(line), log)) {
        lines++;
        ck_assert_msg(!strstr(line, SECRET), "the client secret is in a log line: %s", line);
        ck_assert_msg(!strstr(line, "emu."), "an access token is in a log line: %s", line);
        ck_assert_msg(!strstr(line, "KUBELET_BOOTSTRAP"), "the bootstrap is in a log line: %s", line);
    }
    ck_assert_int_gt(lines, 2);
    fclose(log);
    unlink(path);
    azf_nodeclass_free(nc);
}
END_TEST

START_TEST(test_auth_workload_identity)
{
    char file[] = "/tmp/nodesmith-azure-token-XXXXXX";
    int fd = mkstemp(file);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, FEDERATED "\n", strlen(FEDERATED) + 1), (ssize_t)strlen(FEDERATED) + 1);
    close(fd);
    unsetenv("AZURE_CLIENT_SECRET");
    const char *settings[] = {"federated_token_file", file, NULL};
    ns_plugin *p = azf_load(settings);
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "default", "{}");
    ck_assert_int_gt(azf_list_count(p, nc), 10);
    ns_plugin_unload(p);
    /* a projected token Entra ID does not federate: refused, named */
    FILE *f = fopen(file, "w");
    fputs("not-the-projected-token", f);
    fclose(f);
    const char *forced[] = {"federated_token_file", file, "auth", "workload-identity", NULL};
    p = azf_load(forced);
    int rc = azf_list_count(p, nc);
    ck_assert_int_eq(rc, NS_ERR_UNAUTHORIZED);
    ck_assert_msg(strstr(ns_error_message(), "AADSTS700211") && strstr(ns_error_message(), "workload-identity"),
                  "message: %s", ns_error_message());
    ns_plugin_unload(p);
    unlink(file);
    azf_nodeclass_free(nc);
}
END_TEST

START_TEST(test_auth_managed_identity)
{
    unsetenv("AZURE_CLIENT_SECRET");
    const char *settings[] = {"auth", "managed-identity", "imds_endpoint", getenv("AZURE_EMULATOR_IMDS"), NULL};
    ns_plugin *p = azf_load(settings);
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "default", "{}");
    ck_assert_int_gt(azf_list_count(p, nc), 10);
    cJSON *st = azf_state();
    ck_assert_int_ge(azf_requests(st, "imds.token"), 1);
    cJSON_Delete(st);
    ns_plugin_unload(p);
    /* a secret asked for but missing: refused at load, naming the variable */
    char msg[512];
    const char *secret[] = {"auth", "client-secret", NULL};
    ck_assert_int_eq(azf_load_fails(secret, msg, sizeof(msg)), NS_ERR_INVALID_CONFIG);
    ck_assert_msg(strstr(msg, "AZURE_CLIENT_SECRET"), "message: %s", msg);
    azf_nodeclass_free(nc);
}
END_TEST

START_TEST(test_token_refreshed_when_refused)
{
    ns_plugin *p = azf_load(NULL);
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "default", "{}");
    ck_assert_int_gt(azf_list_count(p, nc), 10);
    cJSON *before = azf_state();
    ck_assert_int_eq(azf_control("tokens", "{\"expire_all\":true}", NULL), 200);
    const char *pid = "azure:///subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/"
                      "MC_demo_demo_southcentralus/providers/Microsoft.Compute/virtualMachines/aks-none";
    ns_instance in = {.struct_size = sizeof(in)};
    ck_assert_int_eq(ns_plugin_get_instance(p, pid, &in), NS_ERR_NOT_FOUND); /* a 404 after a fresh token */
    cJSON *after = azf_state();
    int tokens_before = cJSON_GetObjectItem(before, "tokens_issued")->valueint;
    ck_assert_int_gt(cJSON_GetObjectItem(after, "tokens_issued")->valueint, tokens_before);
    ck_assert_int_ge(cJSON_GetObjectItem(after, "auth_failures")->valueint, 1);
    cJSON_Delete(before);
    cJSON_Delete(after);
    /* a short-lived token is fetched again before it expires, without a refusal */
    ck_assert_int_eq(azf_control("tokens", "{\"lifetime_s\":2}", NULL), 200);
    ns_plugin_unload(p);
    p = azf_load(NULL);
    ck_assert_int_gt(azf_list_count(p, nc), 10);
    sleep(2);
    before = azf_state();
    ck_assert_int_eq(ns_plugin_get_instance(p, pid, &in), NS_ERR_NOT_FOUND);
    after = azf_state();
    ck_assert_int_eq(cJSON_GetObjectItem(after, "auth_failures")->valueint,
                     cJSON_GetObjectItem(before, "auth_failures")->valueint);
    ck_assert_int_gt(cJSON_GetObjectItem(after, "tokens_issued")->valueint,
                     cJSON_GetObjectItem(before, "tokens_issued")->valueint);
    cJSON_Delete(before);
    cJSON_Delete(after);
    azf_control("tokens", "{\"lifetime_s\":3600}", NULL);
    ns_plugin_unload(p);
    azf_nodeclass_free(nc);
}
END_TEST

START_TEST(test_national_cloud_and_tls)
{
    const char *china[] = {"cloud", "AzureChinaCloud", NULL};
    ns_plugin *p = azf_load(china); /* the token's scope is management.chinacloudapi.cn; the emulator accepts it */
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "default", "{}");
    ck_assert_int_gt(azf_list_count(p, nc), 10);
    ns_plugin_unload(p);
    char msg[512];
    const char *bad[] = {"cloud", "AzureGermanCloud", NULL};
    ck_assert_int_eq(azf_load_fails(bad, msg, sizeof(msg)), NS_ERR_INVALID_CONFIG);
    ck_assert_msg(strstr(msg, "cloud") && strstr(msg, "AzureGermanCloud"), "message: %s", msg);
    /* without the emulator's CA the certificate is refused, as a configuration error, not retried as a timeout */
    const char *ca = getenv("NODESMITH_CA_BUNDLE");
    char saved[512];
    snprintf(saved, sizeof(saved), "%s", ca);
    p = azf_load(NULL);
    unsetenv("NODESMITH_CA_BUNDLE");
    int rc = azf_list_count(p, nc);
    ck_assert_msg(rc == NS_ERR_INVALID_CONFIG, "untrusted CA: %d %s", rc, ns_error_message());
    ns_plugin_unload(p);
    setenv("NODESMITH_CA_BUNDLE", saved, 1);
    azf_nodeclass_free(nc);
}
END_TEST

/* ---- node class validation ---- */

static const struct {
    const char *api_version;
    const char *spec;
    const char *words; /* expected in the message */
} BAD_CLASSES[] = {
    {V1BETA1, "{\"osDiskSizeGB\": 20}", "spec.osDiskSizeGB must be from 30 to 2048"},
    {V1BETA1, "{\"osDiskSizeGB\": \"big\"}", "spec.osDiskSizeGB must be an integer"},
    {V1BETA1, "{\"imageFamily\": \"Debian\"}", "spec.imageFamily must be"},
    {V1BETA1, "{\"maxPods\": 5}", "spec.maxPods must be from 10 to 250"},
    {V1BETA1, "{\"vnetSubnetID\": \"subnet-1\"}", "spec.vnetSubnetID 'subnet-1' is not a subnet ID"},
    {V1BETA1, "{\"fipsMode\": \"On\"}", "spec.fipsMode must be FIPS or Disabled"},
    {V1BETA1, "{\"fipsMode\": \"FIPS\", \"imageFamily\": \"Windows2022\"}", "spec.fipsMode FIPS"},
    {V1BETA1, "{\"tags\": {\"a/b\": \"x\"}}", "spec.tags key 'a/b'"},
    {V1BETA1, "{\"tags\": {\"karpenter.sh_nodepool\": \"x\"}}", "reserved"},
    {V1BETA1, "{\"tags\": {\"team\": 3}}", "spec.tags.team must be a string"},
    {V1BETA1, "{\"kubelet\": {\"cpuManagerPolicy\": \"dynamic\"}}", "spec.kubelet.cpuManagerPolicy"},
    {V1BETA1, "{\"kubelet\": {\"imageGCHighThresholdPercent\": 50, \"imageGCLowThresholdPercent\": 60}}",
     "imageGCLowThresholdPercent (60) must be below"},
    {V1BETA1, "{\"kubelet\": {\"cpuCFSQuotaPeriod\": \"fast\"}}", "spec.kubelet.cpuCFSQuotaPeriod"},
    {V1BETA1, "{\"kubelet\": {\"containerLogMaxFiles\": 1}}", "spec.kubelet.containerLogMaxFiles"},
    {V1BETA1, "{\"kubelet\": {\"containerLogMaxSize\": \"lots\"}}", "spec.kubelet.containerLogMaxSize"},
    {V1BETA1, "{\"kubelet\": {\"topologyManagerPolicy\": \"any\"}}", "spec.kubelet.topologyManagerPolicy"},
    {V1BETA1, "{\"kubelet\": {\"allowedUnsafeSysctls\": [\"a b\"]}}", "spec.kubelet.allowedUnsafeSysctls[0]"},
    {V1BETA1, "{\"kubelet\": {\"maxPods\": 10}}", "spec.kubelet.maxPods is not a field"},
    {V1BETA1, "{\"security\": {\"encryptionAtHost\": \"yes\"}}", "spec.security.encryptionAtHost must be true or"},
    {V1BETA1, "{\"localDNS\": {\"mode\": \"Sometimes\"}}", "spec.localDNS.mode"},
    {V1BETA1, "{\"imageID\": \"ubuntu-latest\"}", "spec.imageID 'ubuntu-latest' must be an ARM image ID"},
    {V1BETA1, "{\"userData\": 7}", "spec.userData must be a string"},
    {V1BETA1, "{\"imageVersion\": \"1\"}", "spec.imageVersion is not a field of karpenter.azure.com/v1beta1"},
    {"karpenter.azure.com/v1alpha2", "{\"fipsMode\": \"FIPS\"}", "spec.fipsMode is not a field of "
                                                              "karpenter.azure.com/v1alpha2"},
    {"karpenter.azure.com/v1alpha2", "{\"imageVersion\": \"latest\"}", "spec.imageVersion must look like"},
    {"karpenter.azure.com/v1", "{}", "apiVersion karpenter.azure.com/v1 is not served"},
};

START_TEST(test_nodeclass_validation)
{
    ns_plugin *p = azf_load(NULL);
    for (size_t i = 0; i < sizeof(BAD_CLASSES) / sizeof(BAD_CLASSES[0]); i++) {
        ns_nodeclass *nc = azf_nodeclass(BAD_CLASSES[i].api_version, "bad", BAD_CLASSES[i].spec);
        int rc = ns_plugin_validate_nodeclass(p, nc);
        ck_assert_msg(rc == NS_ERR_INVALID_CONFIG, "%s accepted (%d)", BAD_CLASSES[i].spec, rc);
        ck_assert_msg(strstr(ns_error_message(), BAD_CLASSES[i].words) && strstr(ns_error_message(), "bad"),
                      "%s: message '%s' lacks '%s'", BAD_CLASSES[i].spec, ns_error_message(), BAD_CLASSES[i].words);
        azf_nodeclass_free(nc);
    }
    ns_nodeclass *good = azf_nodeclass(V1BETA1, "good",
                                       "{\"imageFamily\":\"AzureLinux\",\"osDiskSizeGB\":100,\"maxPods\":50,"
                                       "\"fipsMode\":\"FIPS\",\"tags\":{\"team\":\"a\"},\"security\":"
                                       "{\"encryptionAtHost\":true},\"localDNS\":{\"mode\":\"Preferred\"},"
                                       "\"kubelet\":{\"cpuManagerPolicy\":\"static\",\"cpuCFSQuota\":true,"
                                       "\"cpuCFSQuotaPeriod\":\"100ms\",\"imageGCHighThresholdPercent\":85,"
                                       "\"imageGCLowThresholdPercent\":80,\"containerLogMaxSize\":\"50Mi\","
                                       "\"containerLogMaxFiles\":5,\"podPidsLimit\":4096,\"allowedUnsafeSysctls\":"
                                       "[\"net.core.somaxconn\"],\"topologyManagerPolicy\":\"best-effort\"}}");
    ck_assert_msg(ns_plugin_validate_nodeclass(p, good) == NS_OK, "good class refused: %s", ns_error_message());
    azf_nodeclass_free(good);
    good = azf_nodeclass("karpenter.azure.com/v1alpha2", "old", "{\"imageVersion\":\"202510.01.0\"}");
    ck_assert_msg(ns_plugin_validate_nodeclass(p, good) == NS_OK, "v1alpha2 refused: %s", ns_error_message());
    azf_nodeclass_free(good);
    ns_plugin_unload(p);
}
END_TEST

/* ---- catalog ---- */

typedef struct found {
    char name[64];
    ns_instance_type copy;
    char labels[32][2][128];
    size_t n_labels;
    char zones[18][64];
    char caps[18][16];
    double prices[18];
    bool available[18];
    size_t n_offerings;
    bool seen;
} found;

static int find_type(void *ctx, const ns_instance_type *t)
{
    found *f = ctx;
    if (strcmp(t->name, f->name) != 0)
        return 0;
    f->seen = true;
    f->copy = *t;
    f->n_labels = t->n_labels < 32 ? t->n_labels : 32;
    for (size_t i = 0; i < f->n_labels; i++) {
        snprintf(f->labels[i][0], 128, "%s", t->labels[i].key);
        snprintf(f->labels[i][1], 128, "%s", t->labels[i].value);
    }
    f->n_offerings = t->n_offerings < 18 ? t->n_offerings : 18;
    for (size_t i = 0; i < f->n_offerings; i++) {
        const ns_offering *o = NS_AT(t->offerings, i);
        snprintf(f->zones[i], 64, "%s", o->zone);
        snprintf(f->caps[i], 16, "%s", o->capacity_type);
        f->prices[i] = o->price_per_hour;
        f->available[i] = o->available;
    }
    return 0;
}

static found lookup(ns_plugin *p, const ns_nodeclass *nc, const char *name)
{
    found f = {.seen = false};
    snprintf(f.name, sizeof(f.name), "%s", name);
    ck_assert_msg(ns_plugin_list_instance_types(p, nc, find_type, &f) == NS_OK, "list: %s", ns_error_message());
    return f;
}

static const char *label_of(const found *f, const char *key)
{
    for (size_t i = 0; i < f->n_labels; i++)
        if (strcmp(f->labels[i][0], key) == 0)
            return f->labels[i][1];
    return NULL;
}

static int offering(const found *f, const char *zone, const char *cap)
{
    for (size_t i = 0; i < f->n_offerings; i++)
        if (strcmp(f->zones[i], zone) == 0 && strcmp(f->caps[i], cap) == 0)
            return (int)i;
    return -1;
}

START_TEST(test_catalog)
{
    ns_plugin *p = azf_load(NULL);
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "default", "{\"osDiskSizeGB\": 100}");
    ck_assert(!lookup(p, nc, "Standard_A0").seen);  /* restricted in the location for the subscription */
    ck_assert(!lookup(p, nc, "Standard_B1s").seen); /* AKS's reservations leave no memory */
    found d2v2 = lookup(p, nc, "Standard_D2_v2");
    ck_assert(d2v2.seen);
    ck_assert_int_ge(offering(&d2v2, ZONE1, "on-demand"), 0);
    ck_assert_int_lt(offering(&d2v2, "southcentralus-3", "on-demand"), 0); /* zone 3 restricted */
    found nc6 = lookup(p, nc, "Standard_NC6s_v3");
    ck_assert_int_ge(offering(&nc6, "0", "spot"), 0); /* no zones there: regional */
    ck_assert_str_eq(label_of(&nc6, "karpenter.azure.com/sku-gpu-manufacturer"), "nvidia");
    ck_assert_str_eq(label_of(&nc6, "karpenter.azure.com/sku-gpu-name"), "V100");
    ck_assert_str_eq(label_of(&nc6, "karpenter.azure.com/sku-gpu-count"), "1");
    ck_assert_int_eq(nc6.copy.capacity.n_extended, 1);
    found d2s = lookup(p, nc, "Standard_D2s_v3");
    ck_assert_str_eq(label_of(&d2s, "karpenter.azure.com/sku-family"), "D");
    ck_assert_str_eq(label_of(&d2s, "karpenter.azure.com/sku-series"), "Ds_v3");
    ck_assert_str_eq(label_of(&d2s, "karpenter.azure.com/sku-version"), "3");
    ck_assert_str_eq(label_of(&d2s, "karpenter.azure.com/sku-cpu"), "2");
    ck_assert_str_eq(label_of(&d2s, "karpenter.azure.com/sku-memory"), "8192");
    ck_assert_str_eq(label_of(&d2s, "kubernetes.io/os"), "linux");
    ck_assert_str_eq(label_of(&d2s, "kubernetes.azure.com/cluster"), "MC_demo_demo_southcentralus");
    int od = offering(&d2s, ZONE1, "on-demand"), spot = offering(&d2s, ZONE1, "spot");
    ck_assert_int_ge(od, 0);
    ck_assert_int_ge(spot, 0);
    ck_assert_double_eq_tol(d2s.prices[od], 0.11, 1e-9); /* the Retail Prices API's, not the built-in 0.096 */
    ck_assert(d2s.prices[spot] > 0 && d2s.prices[spot] < d2s.prices[od] * 0.35);
    /* 2 vCPUs: 100m reserved; 8 GiB less 7.5 % overhead; 25 % of 4 GiB + 20 % of 4 GiB reserved; 750Mi evicted */
    ck_assert_int_eq(d2s.copy.capacity.cpu_milli, 2000);
    ck_assert_int_eq(d2s.copy.kube_reserved.cpu_milli, 100);
    ck_assert_int_eq(d2s.copy.capacity.memory_bytes, (int64_t)(8.0 * 1073741824.0 * 0.925));
    ck_assert_int_eq(d2s.copy.kube_reserved.memory_bytes, (int64_t)(1.8 * 1073741824.0));
    ck_assert_int_eq(d2s.copy.eviction_threshold.memory_bytes, 750LL * 1048576);
    ck_assert_int_eq(d2s.copy.capacity.pods, 250); /* Azure CNI overlay */
    ck_assert_int_eq(d2s.copy.capacity.ephemeral_storage_bytes, 100LL * 1073741824);
    found arm = lookup(p, nc, "Standard_D16plds_v5");
    ck_assert_str_eq(label_of(&arm, "kubernetes.io/arch"), "arm64");
    azf_nodeclass_free(nc);
    /* Windows Server images: no Arm64 sizes, os windows */
    nc = azf_nodeclass(V1BETA1, "win", "{\"imageFamily\": \"Windows2022\"}");
    ck_assert(!lookup(p, nc, "Standard_D16plds_v5").seen);
    found win = lookup(p, nc, "Standard_D4s_v3");
    ck_assert_str_eq(label_of(&win, "kubernetes.io/os"), "windows");
    azf_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(test_builtin_prices_when_api_unreachable)
{
    const char *settings[] = {"prices_endpoint", "https://127.0.0.1:1", NULL};
    ns_plugin *p = azf_load(settings);
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "default", "{}");
    found d2s = lookup(p, nc, "Standard_D2s_v3");
    int od = offering(&d2s, ZONE1, "on-demand");
    ck_assert_double_eq_tol(d2s.prices[od], 0.096, 1e-9);
    azf_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

/* ---- node class status (ABI 4) ---- */

static cJSON *status_of(ns_plugin *p, const char *api_version, const char *spec)
{
    ns_nodeclass *nc = azf_nodeclass(api_version, "st", spec);
    cJSON *status = NULL;
    ck_assert_msg(ns_plugin_nodeclass_status(p, nc, &status) == NS_OK, "%s: %s", spec, ns_error_message());
    azf_nodeclass_free(nc);
    return status;
}

static void expect_condition(const cJSON *status, const char *type, const char *want, const char *reason,
                             const char *words)
{
    const char *r = NULL, *m = NULL;
    const char *got = ns_nodeclass_status_condition(status, type, &r, &m);
    ck_assert_msg(got && strcmp(got, want) == 0, "%s is %s, not %s", type, got ? got : "absent", want);
    ck_assert_msg(strcmp(r, reason) == 0, "%s: reason %s, not %s", type, r, reason);
    ck_assert_msg(!words || strstr(m, words), "%s: message '%s' lacks '%s'", type, m, words);
}

START_TEST(test_nodeclass_status)
{
    ns_plugin *p = azf_load(NULL);
    cJSON *st = azf_state();
    int gets = azf_requests(st, "gallery.version.get"), subnet_gets = azf_requests(st, "subnet.get");
    cJSON_Delete(st);
    /* the default Ubuntu 22.04 class: the gallery's three definitions at the pinned version, the subnet found */
    cJSON *status = status_of(p, V1BETA1, "{}");
    expect_condition(status, "Ready", "True", "Ready", NULL);
    expect_condition(status, "ValidationSucceeded", "True", "ValidationSucceeded", NULL);
    expect_condition(status, "ImagesReady", "True", "ImagesReady", NULL);
    expect_condition(status, "SubnetsReady", "True", "SubnetsReady", NULL);
    expect_condition(status, "KubernetesVersionReady", "True", "KubernetesVersionReady", NULL);
    expect_condition(status, "LocalDNSReady", "True", "LocalDNSReady", NULL);
    ck_assert_str_eq(cJSON_GetObjectItem(status, "kubernetesVersion")->valuestring, "1.31.2");
    ck_assert_str_eq(cJSON_GetObjectItem(status, "localDNSState")->valuestring, "Disabled");
    const cJSON *images = cJSON_GetObjectItem(status, "images");
    ck_assert_int_eq(cJSON_GetArraySize(images), 3);
    const cJSON *first = cJSON_GetArrayItem(images, 0), *arm = cJSON_GetArrayItem(images, 2);
    ck_assert_str_eq(cJSON_GetObjectItem(first, "id")->valuestring, "/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-"
                                                                     "a8d4-09b6d4220bd2/images/2204gen2containerd/"
                                                                     "versions/202511.07.0");
    const cJSON *req = cJSON_GetArrayItem(cJSON_GetObjectItem(arm, "requirements"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(req, "key")->valuestring, "kubernetes.io/arch");
    ck_assert_str_eq(cJSON_GetObjectItem(req, "operator")->valuestring, "In");
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(req, "values"), 0)->valuestring, "arm64");
    req = cJSON_GetArrayItem(cJSON_GetObjectItem(first, "requirements"), 1);
    ck_assert_str_eq(cJSON_GetObjectItem(req, "key")->valuestring, "karpenter.azure.com/sku-hyperv-generation");
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(req, "values"), 0)->valuestring, "2");
    cJSON_Delete(status);
    st = azf_state();
    ck_assert_int_eq(azf_requests(st, "gallery.version.get"), gets + 3);
    ck_assert_int_eq(azf_requests(st, "subnet.get"), subnet_gets + 1);
    int vm_puts = azf_requests(st, "vm.put"), nic_puts = azf_requests(st, "nic.put");
    cJSON_Delete(st);
    /* what ARM does not have: a subnet, an image version; FIPS (shared gallery only); a refused spec */
    status = status_of(p, V1BETA1, "{\"vnetSubnetID\":\"/subscriptions/00000000-1111-2222-3333-444444444444/"
                                   "resourceGroups/demo-network/providers/Microsoft.Network/virtualNetworks/demo-vnet/"
                                   "subnets/missing\"}");
    expect_condition(status, "SubnetsReady", "False", "SubnetNotFound", "subnets/missing");
    expect_condition(status, "Ready", "False", "UnhealthyDependents", "SubnetsReady=False");
    cJSON_Delete(status);
    status = status_of(p, "karpenter.azure.com/v1alpha2", "{\"imageFamily\":\"AzureLinux\",\"imageVersion\":"
                                                         "\"209901.01.0\"}");
    expect_condition(status, "ImagesReady", "False", "ImagesNotFound", "209901.01.0");
    ck_assert_ptr_null(cJSON_GetObjectItem(status, "images"));
    ck_assert_ptr_null(ns_nodeclass_status_condition(status, "LocalDNSReady", NULL, NULL)); /* v1beta1 only */
    cJSON_Delete(status);
    status = status_of(p, "karpenter.azure.com/v1alpha2", "{\"imageFamily\":\"AzureLinux\",\"imageVersion\":"
                                                         "\"202510.01.0\"}");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(status, "images"), 1), "id")
                         ->valuestring,
                     "/CommunityGalleries/AKSAzureLinux-f7c7cda5-1c9a-4bdc-a222-9614c968580b/images/V2/versions/"
                     "202510.01.0");
    cJSON_Delete(status);
    status = status_of(p, V1BETA1, "{\"fipsMode\":\"FIPS\"}");
    expect_condition(status, "ImagesReady", "False", "SIGRequiredForFIPS", "spec.imageID");
    cJSON_Delete(status);
    status = status_of(p, V1BETA1, "{\"osDiskSizeGB\":20}");
    expect_condition(status, "ValidationSucceeded", "False", "ValidationFailed", "spec.osDiskSizeGB");
    ck_assert_ptr_null(ns_nodeclass_status_condition(status, "ImagesReady", NULL, NULL));
    cJSON_Delete(status);
    /* extensions: Windows' marketplace image, an image of one's own; localDNS Required */
    status = status_of(p, V1BETA1, "{\"imageFamily\":\"Windows2022\",\"localDNS\":{\"mode\":\"Required\"}}");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(status, "images"), 0), "id")
                         ->valuestring,
                     "MicrosoftWindowsServer:WindowsServer:2022-datacenter-core-smalldisk-g2:latest");
    ck_assert_str_eq(cJSON_GetObjectItem(status, "localDNSState")->valuestring, "Enabled");
    cJSON_Delete(status);
    status = status_of(p, V1BETA1, "{\"imageID\":\"/SharedGalleries/mine/images/x/versions/1.0.0\"}");
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(status, "images"), 0), "id")
                         ->valuestring, "/SharedGalleries/mine/images/x/versions/1.0.0");
    expect_condition(status, "Ready", "True", "Ready", NULL);
    cJSON_Delete(status);
    /* read only: nothing was created */
    st = azf_state();
    ck_assert_int_eq(azf_requests(st, "vm.put"), vm_puts);
    ck_assert_int_eq(azf_requests(st, "nic.put"), nic_puts);
    cJSON_Delete(st);
    /* ARM throttling past every attempt: the status is unknown, the call fails and says why */
    ck_assert_int_eq(azf_control("faults", "{\"kind\":\"throttle\",\"count\":9,\"retry_after\":0,\"ops\":"
                                           "[\"gallery.version.get\"]}", NULL), 200);
    ns_nodeclass *nc = azf_nodeclass(V1BETA1, "st", "{}");
    status = NULL;
    ck_assert_int_eq(ns_plugin_nodeclass_status(p, nc, &status), NS_ERR_THROTTLED);
    ck_assert_ptr_null(status);
    ck_assert_msg(strstr(ns_error_message(), "community gallery image"), "%s", ns_error_message());
    ck_assert_int_eq(azf_control("clear", "{}", NULL), 200);
    azf_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST


int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    Suite *s = suite_create("azure_provider");
    TCase *tc = tcase_create("provider");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_auth_client_secret_and_logs);
    tcase_add_test(tc, test_auth_workload_identity);
    tcase_add_test(tc, test_auth_managed_identity);
    tcase_add_test(tc, test_token_refreshed_when_refused);
    tcase_add_test(tc, test_national_cloud_and_tls);
    tcase_add_test(tc, test_nodeclass_validation);
    tcase_add_test(tc, test_catalog);
    tcase_add_test(tc, test_builtin_prices_when_api_unreachable);
    tcase_add_test(tc, test_nodeclass_status);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
