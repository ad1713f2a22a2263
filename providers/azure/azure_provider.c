/* The Azure provider's table, options, init and destroy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "azure_provider.h"

static const ns_option OPTIONS[] = {
    {"cluster_name", NS_OPT_STRING, NULL, "the cluster's name (required): VMs are tagged and found by it"},
    {"subscription_id", NS_OPT_STRING, NULL, "the subscription; unset = AZURE_SUBSCRIPTION_ID, then ARM_SUBSCRIPTION_ID"},
    {"location", NS_OPT_STRING, NULL, "the cluster's Azure region (southcentralus, ...); unset = LOCATION"},
    {"node_resource_group", NS_OPT_STRING, NULL,
     "the resource group nodes are created in (MC_...); unset = AZURE_NODE_RESOURCE_GROUP"},
    {"vnet_subnet_id", NS_OPT_STRING, NULL,
     "the default subnet (ARM ID) for node classes without spec.vnetSubnetID; unset = VNET_SUBNET_ID"},
    {"auth", NS_OPT_STRING, "auto",
     "auto | client-secret | workload-identity | managed-identity (auto: a client secret if AZURE_CLIENT_SECRET is "
     "set, else workload identity if a federated token file is, else managed identity through IMDS)"},
    {"tenant_id", NS_OPT_STRING, NULL, "the Entra ID tenant; unset = AZURE_TENANT_ID, then ARM_TENANT_ID"},
    {"client_id", NS_OPT_STRING, NULL,
     "the application or managed identity's client ID; unset = AZURE_CLIENT_ID (the secret is read from "
     "AZURE_CLIENT_SECRET only, never from this file)"},
    {"federated_token_file", NS_OPT_STRING, NULL,
     "workload identity's projected token; unset = AZURE_FEDERATED_TOKEN_FILE"},
    {"cloud", NS_OPT_STRING, "AzurePublicCloud",
     "AzurePublicCloud | AzureChinaCloud | AzureUSGovernmentCloud: the authority, ARM and prices hosts (ARM_CLOUD "
     "overrides)"},
    {"authority_host", NS_OPT_STRING, NULL, "Entra ID's host; unset = AZURE_AUTHORITY_HOST, else the cloud's"},
    {"arm_endpoint", NS_OPT_STRING, NULL, "ARM's URL; unset = the cloud's (https://management.azure.com)"},
    {"imds_endpoint", NS_OPT_STRING, NULL,
     "IMDS's URL for managed identity; unset = AZURE_POD_IDENTITY_AUTHORITY_HOST, else http://169.254.169.254"},
    {"prices_endpoint", NS_OPT_STRING, NULL,
     "the Retail Prices API's URL; unset = https://prices.azure.com in the public cloud, none elsewhere (the "
     "built-in prices)"},
    {"kubernetes_version", NS_OPT_STRING, "1.31.2", "the cluster's Kubernetes version, for bootstrap and drift"},
    {"node_image_version", NS_OPT_STRING, "202511.07.0", "the AKS node image version of the community galleries"},
    {"cluster_endpoint", NS_OPT_STRING, NULL, "the API server's host name for the nodes' bootstrap"},
    {"kubelet_bootstrap_token", NS_OPT_STRING, NULL, "the TLS bootstrap token nodes join with (kept out of logs)"},
    {"ssh_public_key", NS_OPT_STRING, NULL, "the SSH public key of azureuser on Linux nodes"},
    {"network_plugin", NS_OPT_STRING, "azure", "azure | kubenet | none"},
    {"network_plugin_mode", NS_OPT_STRING, "overlay", "overlay | \"\" (node subnet)"},
    {"network_dataplane", NS_OPT_STRING, "cilium", "cilium | azure"},
    {"kubelet_identity_client_id", NS_OPT_STRING, NULL, "the kubelet identity's client ID, for the bootstrap"},
    {"dns_service_ip", NS_OPT_STRING, "10.0.0.10", "the cluster DNS service IP, for the bootstrap"},
    {"windows_cse_scripts_url", NS_OPT_STRING,
     "https://packages.aks.azure.com/aks/windows/cse/aks-windows-cse-scripts-v0.0.52.zip",
     "AKS's Windows CSE scripts package, which Windows nodes' bootstrap fetches and runs"},
    {"catalog_ttl", NS_OPT_DURATION, "5m", "how long Resource SKUs are cached"},
    {"pricing_ttl", NS_OPT_DURATION, "12h", "how long Retail Prices are cached"},
    {"max_attempts", NS_OPT_INT, "3", "attempts per ARM call (429 after Retry-After, 5xx, lost answers)"},
    {"request_timeout", NS_OPT_DURATION, "30s", "time limit of one attempt of an ARM call"},
    {"test_hooks", NS_OPT_BOOL, "false",
     "tests only: accept test_inject_fault, injecting faults through the Azure emulator's control endpoint"},
    {"test_control_url", NS_OPT_STRING, NULL, "tests only: the emulator's control endpoint, https://127.0.0.1:PORT/_emulator"},
    {NULL, 0, NULL, NULL},
};

static const struct {
    const char *name;
    const char *authority;
    const char *arm;
    const char *resource;
    const char *prices;
} CLOUDS[] = {
    {"AzurePublicCloud", "https://login.microsoftonline.com", "https://management.azure.com",
     "https://management.azure.com/", "https://prices.azure.com"},
    {"AzureChinaCloud", "https://login.chinacloudapi.cn", "https://management.chinacloudapi.cn",
     "https://management.chinacloudapi.cn/", ""},
    {"AzureUSGovernmentCloud", "https://login.microsoftonline.us", "https://management.usgovcloudapi.net",
     "https://management.usgovcloudapi.net/", ""},
};

bool az_copy(char *dst, size_t len, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= len) {
        dst[0] = '\0';
        return false;
    }
    memcpy(dst, src ? src : "", n + 1);
    return true;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* The option, else the first set environment variable, else NULL. */
static const char *setting(az_state *s, const char *option, const char *env1, const char *env2)
{
    const char *v = s->host->option_string(s->ctx, option);
    if (v && *v)
        return v;
    v = env1 ? env(env1) : NULL;
    return v ? v : env2 ? env(env2) : NULL;
}

static int take(az_state *s, char *dst, size_t len, const char *option, const char *value, bool required)
{
    if (required && (!value || !*value))
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "azure option %s is required", option);
    if (!az_copy(dst, len, value ? value : ""))
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "azure option %s is longer than %zu characters",
                        option, len - 1);
    return NS_OK;
}

static void az_destroy(void *state)
{
    az_state *s = state;
    if (!s)
        return;
    prov_snapshot_cache_clear(&s->catalogs);
    az_price_list_free(s->price_list);
    az_auth_free(s->auth);
    memset(s->bootstrap_token, 0, sizeof(s->bootstrap_token));
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static int read_settings(az_state *s)
{
    const ns_host *h = s->host;
    int rc;
    const char *cluster = setting(s, "cluster_name", "CLUSTER_NAME", NULL);
    if (!cluster || !*cluster)
        return NS_ERROR(h, s->ctx, NS_ERR_INVALID_CONFIG,
                        "azure option cluster_name is required: VMs and NICs are tagged and found by it");
    if ((rc = take(s, s->cluster, sizeof(s->cluster), "cluster_name", cluster, true)) < 0 ||
        (rc = take(s, s->subscription, sizeof(s->subscription), "subscription_id",
                   setting(s, "subscription_id", "AZURE_SUBSCRIPTION_ID", "ARM_SUBSCRIPTION_ID"), true)) < 0 ||
        (rc = take(s, s->location, sizeof(s->location), "location", setting(s, "location", "LOCATION", NULL), true)) <
            0 ||
        (rc = take(s, s->node_rg, sizeof(s->node_rg), "node_resource_group",
                   setting(s, "node_resource_group", "AZURE_NODE_RESOURCE_GROUP", NULL), true)) < 0 ||
        (rc = take(s, s->default_subnet, sizeof(s->default_subnet), "vnet_subnet_id",
                   setting(s, "vnet_subnet_id", "VNET_SUBNET_ID", NULL), false)) < 0 ||
        (rc = take(s, s->tenant, sizeof(s->tenant), "tenant_id",
                   setting(s, "tenant_id", "AZURE_TENANT_ID", "ARM_TENANT_ID"), false)) < 0 ||
        (rc = take(s, s->kubernetes_version, sizeof(s->kubernetes_version), "kubernetes_version",
                   h->option_string(s->ctx, "kubernetes_version"), true)) < 0 ||
        (rc = take(s, s->image_version, sizeof(s->image_version), "node_image_version",
                   h->option_string(s->ctx, "node_image_version"), true)) < 0 ||
        (rc = take(s, s->cluster_endpoint, sizeof(s->cluster_endpoint), "cluster_endpoint",
                   setting(s, "cluster_endpoint", "CLUSTER_ENDPOINT", NULL), false)) < 0 ||
        (rc = take(s, s->bootstrap_token, sizeof(s->bootstrap_token), "kubelet_bootstrap_token",
                   setting(s, "kubelet_bootstrap_token", "KUBELET_BOOTSTRAP_TOKEN", NULL), false)) < 0 ||
        (rc = take(s, s->ssh_key, sizeof(s->ssh_key), "ssh_public_key",
                   setting(s, "ssh_public_key", "SSH_PUBLIC_KEY", NULL), false)) < 0 ||
        (rc = take(s, s->network_plugin, sizeof(s->network_plugin), "network_plugin",
                   h->option_string(s->ctx, "network_plugin"), false)) < 0 ||
        (rc = take(s, s->network_plugin_mode, sizeof(s->network_plugin_mode), "network_plugin_mode",
                   h->option_string(s->ctx, "network_plugin_mode"), false)) < 0 ||
        (rc = take(s, s->network_dataplane, sizeof(s->network_dataplane), "network_dataplane",
                   h->option_string(s->ctx, "network_dataplane"), false)) < 0 ||
        (rc = take(s, s->kubelet_client_id, sizeof(s->kubelet_client_id), "kubelet_identity_client_id",
                   setting(s, "kubelet_identity_client_id", "KUBELET_IDENTITY_CLIENT_ID", NULL), false)) < 0 ||
        (rc = take(s, s->dns_service_ip, sizeof(s->dns_service_ip), "dns_service_ip",
                   h->option_string(s->ctx, "dns_service_ip"), false)) < 0 ||
        (rc = take(s, s->windows_cse_package, sizeof(s->windows_cse_package), "windows_cse_scripts_url",
                   h->option_string(s->ctx, "windows_cse_scripts_url"), false)) < 0 ||
        (rc = take(s, s->control_url, sizeof(s->control_url), "test_control_url",
                   h->option_string(s->ctx, "test_control_url"), false)) < 0)
        return rc;
    if (s->default_subnet[0] && !az_subnet_id_valid(s->default_subnet))
        return NS_ERROR(h, s->ctx, NS_ERR_INVALID_CONFIG, "azure option vnet_subnet_id '%.200s' is not a subnet ID",
                        s->default_subnet);
    if (!s->ssh_key[0])
        az_copy(s->ssh_key, sizeof(s->ssh_key), "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
                                                "AAAAAAAAAAA nodesmith-no-key-configured");
    az_catalog_cache_init(s, h->option_duration_ms(s->ctx, "catalog_ttl"));
    s->pricing_ttl_ms = h->option_duration_ms(s->ctx, "pricing_ttl");
    s->timeout_ms = h->option_duration_ms(s->ctx, "request_timeout");
    s->max_attempts = (int)h->option_int(s->ctx, "max_attempts");
    s->test_hooks = h->option_bool(s->ctx, "test_hooks");
    if (s->max_attempts < 1 || s->max_attempts > 10)
        return NS_ERROR(h, s->ctx, NS_ERR_INVALID_CONFIG, "azure option max_attempts must be from 1 to 10, not %d",
                        s->max_attempts);
    if (s->timeout_ms < 1000)
        return NS_ERROR(h, s->ctx, NS_ERR_INVALID_CONFIG, "azure option request_timeout must be at least 1s");
    return NS_OK;
}

static int read_cloud(az_state *s, az_auth_config *ac)
{
    const ns_host *h = s->host;
    const char *cloud = env("ARM_CLOUD");
    if (!cloud)
        cloud = h->option_string(s->ctx, "cloud");
    size_t i = 0;
    while (i < 3 && strcmp(CLOUDS[i].name, cloud) != 0)
        i++;
    if (i == 3)
        return NS_ERROR(h, s->ctx, NS_ERR_INVALID_CONFIG, "azure option cloud: %s is not AzurePublicCloud, "
                        "AzureChinaCloud or AzureUSGovernmentCloud", cloud);
    const char *arm = h->option_string(s->ctx, "arm_endpoint");
    const char *prices = h->option_string(s->ctx, "prices_endpoint");
    if (!az_copy(s->arm, sizeof(s->arm), arm ? arm : CLOUDS[i].arm) ||
        !az_copy(s->prices, sizeof(s->prices), prices ? prices : CLOUDS[i].prices))
        return NS_ERROR(h, s->ctx, NS_ERR_INVALID_CONFIG, "azure option arm_endpoint or prices_endpoint is too long");
    size_t n = strlen(s->arm);
    if (n && s->arm[n - 1] == '/')
        s->arm[n - 1] = '\0';
    if (strncmp(s->arm, "https://", 8) != 0)
        return NS_ERROR(h, s->ctx, NS_ERR_INVALID_CONFIG, "azure option arm_endpoint must be an https URL (bearer "
                        "tokens never travel in clear), not %s", s->arm);
    const char *authority = setting(s, "authority_host", "AZURE_AUTHORITY_HOST", NULL);
    const char *imds = setting(s, "imds_endpoint", "AZURE_POD_IDENTITY_AUTHORITY_HOST", NULL);
    ac->authority = authority ? authority : CLOUDS[i].authority;
    ac->imds = imds ? imds : "http://169.254.169.254";
    ac->resource = CLOUDS[i].resource;
    return NS_OK;
}

static int az_init(const ns_host *host, ns_host_ctx *ctx, void **state)
{
    az_state *s = calloc(1, sizeof(*s));
    if (!s)
        return NS_ERROR(host, ctx, NS_ERR_INTERNAL, "out of memory creating the azure provider");
    *state = s;
    s->host = host;
    s->ctx = ctx;
    pthread_mutex_init(&s->lock, NULL);
    int rc = read_settings(s);
    az_auth_config ac = {.host = host, .ctx = ctx, .timeout_ms = s->timeout_ms, .max_attempts = s->max_attempts};
    if (rc < 0 || (rc = read_cloud(s, &ac)) < 0)
        return rc;
    int mode = az_auth_mode_parse(host->option_string(ctx, "auth"));
    if (mode < 0)
        return NS_ERROR(host, ctx, NS_ERR_INVALID_CONFIG, "azure option auth must be auto, client-secret, "
                        "workload-identity or managed-identity");
    ac.mode = (az_auth_mode)mode;
    ac.tenant = s->tenant;
    ac.client_id = setting(s, "client_id", "AZURE_CLIENT_ID", "ARM_CLIENT_ID");
    ac.client_secret = env("AZURE_CLIENT_SECRET");
    ac.token_file = setting(s, "federated_token_file", "AZURE_FEDERATED_TOKEN_FILE", NULL);
    if ((rc = az_auth_new(&ac, &s->auth)) < 0)
        return rc;
    ns_label fields[] = {{"location", s->location}, {"cluster", s->cluster}, {"arm", s->arm},
                         {"auth", az_auth_mode_name(s->auth)}};
    host->log(ctx, NS_LOG_INFO, "azure provider ready", fields, 4);
    return NS_OK;
}

/* Judged by az_check_drift (ImageDrift, SubnetDrift) or, for tags, not drift at all (the reference port's
 * hash-ignored fields), so the core leaves them out of its node class hash. */
static const char *const AZ_DRIFT_FIELDS[] = {
    "AKSNodeClass.vnetSubnetID", "AKSNodeClass.imageID", "AKSNodeClass.imageVersion", "AKSNodeClass.tags", NULL,
};

/* ABI 3: the node classes this provider accepts. Its spec.kubelet is AKS's own schema, which the core does not read. */
static const ns_nodeclass_kind AZ_KINDS[] = {
    {sizeof(ns_nodeclass_kind), "karpenter.azure.com", "v1beta1", "AKSNodeClass", 0},
    {sizeof(ns_nodeclass_kind), "karpenter.azure.com", "v1alpha2", "AKSNodeClass", 0},
};

static const ns_provider AZURE_PROVIDER = {
    .abi_version = NS_PROVIDER_ABI_VERSION,
    .struct_size = sizeof(ns_provider),
    .name = "azure",
    .version = "0.1.0",
    .options = OPTIONS,
    /* ABI 1 */
    .init = az_init,
    .destroy = az_destroy,
    .list_instance_types = az_list_instance_types,
    .launch = az_launch,
    .terminate = az_terminate,
    .list_instances = az_list_instances,
    .poll_events = az_poll_events,
    /* ABI 2 */
    .get_instance = az_get_instance,
    .check_drift = az_check_drift,
    .validate_nodeclass = az_validate_nodeclass,
    .list_repair_policies = az_list_repair_policies,
    .test_inject_fault = az_test_inject_fault,
    .drift_fields = AZ_DRIFT_FIELDS,
    /* ABI 3 */
    .nodeclass_kinds = AZ_KINDS,
    .n_nodeclass_kinds = sizeof(AZ_KINDS) / sizeof(AZ_KINDS[0]),
    /* ABI 4 */
    .nodeclass_status = az_nodeclass_status,
    /* ABI 5 */
    .event_from_node_condition = az_event_from_node_condition,
};

NS_EXPORT const ns_provider *nodesmith_provider_entry(void);

NS_EXPORT const ns_provider *nodesmith_provider_entry(void)
{
    return &AZURE_PROVIDER;
}
