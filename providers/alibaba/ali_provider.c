/* The Alibaba Cloud provider's table, options, init and destroy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ali_provider.h"

static const ns_option OPTIONS[] = {
    {"region", NS_OPT_STRING, NULL,
     "region ID (cn-hangzhou, ...); unset = ALIBABA_CLOUD_REGION_ID, then the instance's region from the metadata service"},
    {"cluster_id", NS_OPT_STRING, NULL,
     "the ACK cluster's ID (required): instances are tagged kubernetes.io/cluster/<id>=owned and listed by it"},
    {"cluster_mode", NS_OPT_STRING, "ack",
     "ack: nodes join with the cluster's attach script; custom: a non-ACK cluster, nodes join by the node class's "
     "userData alone"},
    {"interruption_queue", NS_OPT_STRING, NULL,
     "name of the MNS queue receiving ECS system events (preemptible interruption, maintenance, state changes)"},
    {"interruption_queue_endpoint", NS_OPT_STRING, NULL,
     "the MNS endpoint of that queue, https://<account-id>.mns.<region>.aliyuncs.com"},
    {"kubernetes_version", NS_OPT_STRING, "1.31", "Kubernetes version, for the images behind node class aliases"},
    {"vm_memory_overhead_percent", NS_OPT_STRING, "6.5",
     "memory the hypervisor keeps from each instance, in percent of its nominal memory"},
    {"catalog_ttl", NS_OPT_DURATION, "5m", "how long instance types, availability and spot prices are cached"},
    {"pricing_ttl", NS_OPT_DURATION, "12h", "how long on-demand prices from DescribePrice are cached"},
    {"operation_lock_interval", NS_OPT_DURATION, "30s",
     "how often poll_events looks for DescribeInstances operation locks (Recycling) on the cluster's instances"},
    {"max_attempts", NS_OPT_INT, "3", "attempts per API call (throttling, 5xx and lost answers are retried)"},
    {"request_timeout", NS_OPT_DURATION, "30s", "time limit of one attempt of an API call"},
    {"vpc_endpoints", NS_OPT_BOOL, "false", "use the products' VPC endpoints (ecs-vpc.<region>.aliyuncs.com, ...)"},
    {"endpoint_url", NS_OPT_STRING, NULL,
     "one URL every product is sent to (ECS, VPC, ACK, STS, MNS): a private gateway or the tests' emulator"},
    {"metadata_endpoint", NS_OPT_STRING, NULL,
     "the instance metadata service; unset = METADATA_ENDPOINT, else http://100.100.100.200"},
    {"test_hooks", NS_OPT_BOOL, "false", "tests only: accept test_inject_fault, through the emulator's control endpoint"},
    {"test_control_url", NS_OPT_STRING, NULL, "tests only: the emulator's control endpoint, http://127.0.0.1:PORT/_emulator"},
    {NULL, 0, NULL, NULL},
};

bool ali_copy(char *dst, size_t len, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= len) {
        dst[0] = '\0';
        return false;
    }
    memcpy(dst, src ? src : "", n + 1);
    return true;
}

static void ali_destroy(void *state)
{
    ali_state *s = state;
    if (!s)
        return;
    prov_snapshot_cache_clear(&s->catalogs);
    free(s->prices);
    free(s->attach_script);
    ali_client_free(s->client);
    ali_credentials_free(s->credentials);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->poll_lock);
    free(s);
}

static int string_option(ali_state *s, const char *key, char *dst, size_t len, bool required)
{
    const char *v = s->host->option_string(s->ctx, key);
    if (!v || !*v) {
        if (required)
            return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "alibaba option %s is required", key);
        dst[0] = '\0';
        return NS_OK;
    }
    if (!ali_copy(dst, len, v))
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "alibaba option %s is longer than %zu bytes", key,
                        len - 1);
    return NS_OK;
}

static int read_options(ali_state *s)
{
    const ns_host *h = s->host;
    int rc;
    if ((rc = string_option(s, "cluster_id", s->cluster_id, sizeof(s->cluster_id), true)) < 0 ||
        (rc = string_option(s, "region", s->region, sizeof(s->region), false)) < 0 ||
        (rc = string_option(s, "interruption_queue", s->queue, sizeof(s->queue), false)) < 0 ||
        (rc = string_option(s, "kubernetes_version", s->kubernetes_version, sizeof(s->kubernetes_version), true)) <
            0 ||
        (rc = string_option(s, "test_control_url", s->control_url, sizeof(s->control_url), false)) < 0)
        return rc;
    const char *mode = h->option_string(s->ctx, "cluster_mode");
    if (!mode || (strcmp(mode, "ack") != 0 && strcmp(mode, "custom") != 0))
        return NS_ERROR(h, s->ctx, NS_ERR_INVALID_CONFIG, "alibaba option cluster_mode must be ack or custom, not '%s'",
                        mode ? mode : "");
    s->ack = strcmp(mode, "ack") == 0;
    const char *ovh = h->option_string(s->ctx, "vm_memory_overhead_percent");
    char *end = NULL;
    s->vm_overhead = ovh ? strtod(ovh, &end) / 100.0 : 0.065;
    if (ovh && (end == ovh || *end || s->vm_overhead < 0 || s->vm_overhead >= 0.5))
        return NS_ERROR(h, s->ctx, NS_ERR_INVALID_CONFIG,
                        "alibaba option vm_memory_overhead_percent must be a number from 0 to 50, not '%s'", ovh);
    ali_catalog_cache_init(s, h->option_duration_ms(s->ctx, "catalog_ttl"));
    s->pricing_ttl_ms = h->option_duration_ms(s->ctx, "pricing_ttl");
    s->lock_poll_ms = h->option_duration_ms(s->ctx, "operation_lock_interval");
    s->max_attempts = (int)h->option_int(s->ctx, "max_attempts");
    if (s->max_attempts < 1 || s->max_attempts > 10)
        return NS_ERROR(h, s->ctx, NS_ERR_INVALID_CONFIG, "alibaba option max_attempts must be from 1 to 10, not %d",
                        s->max_attempts);
    s->test_hooks = h->option_bool(s->ctx, "test_hooks");
    return NS_OK;
}

static int choose_region(ali_state *s)
{
    if (s->region[0])
        return NS_OK;
    const char *env = getenv("ALIBABA_CLOUD_REGION_ID");
    if (env && *env) {
        if (!ali_copy(s->region, sizeof(s->region), env))
            return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "ALIBABA_CLOUD_REGION_ID is too long");
        return NS_OK;
    }
    if (ali_metadata_get(s->credentials, "region-id", s->region, sizeof(s->region)) < 0)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "alibaba: no region: set the option region or "
                        "ALIBABA_CLOUD_REGION_ID (the metadata service could not tell it either)");
    return NS_OK;
}

static int queue_url(ali_state *s, const char *endpoint)
{
    if (!s->queue[0])
        return NS_OK;
    const char *q = s->host->option_string(s->ctx, "interruption_queue_endpoint");
    if (!q || !*q)
        q = endpoint;
    if (!q)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "alibaba option interruption_queue needs "
                        "interruption_queue_endpoint, the MNS endpoint https://<account-id>.mns.%s.aliyuncs.com",
                        s->region);
    if (strncmp(q, "http", 4) != 0 ||
        (size_t)snprintf(s->queue_url, sizeof(s->queue_url), "%s/queues/%s", q, s->queue) >= sizeof(s->queue_url))
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "alibaba option interruption_queue_endpoint must be "
                        "an http(s) URL of reasonable length");
    return NS_OK;
}

static int ali_init(const ns_host *host, ns_host_ctx *ctx, void **state)
{
    ali_state *s = calloc(1, sizeof(*s));
    if (!s)
        return NS_ERROR(host, ctx, NS_ERR_INTERNAL, "out of memory creating the alibaba provider");
    *state = s;
    s->host = host;
    s->ctx = ctx;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->poll_lock, NULL);
    int rc = read_options(s);
    if (rc < 0)
        return rc;
    const char *endpoint = host->option_string(ctx, "endpoint_url");
    if (endpoint && !*endpoint)
        endpoint = NULL;
    ali_credentials_config cc = {host, ctx, s->region[0] ? s->region : NULL, endpoint,
                                 host->option_string(ctx, "metadata_endpoint")};
    if ((rc = ali_credentials_new(&cc, &s->credentials)) < 0 || (rc = choose_region(s)) < 0 ||
        (rc = queue_url(s, endpoint)) < 0)
        return rc;
    if (!cc.region) { /* the STS endpoint depends on the region, now known */
        ali_credentials_free(s->credentials);
        s->credentials = NULL;
        cc.region = s->region;
        if ((rc = ali_credentials_new(&cc, &s->credentials)) < 0)
            return rc;
    }
    int64_t timeout = host->option_duration_ms(ctx, "request_timeout");
    if (timeout < 1000)
        return NS_ERROR(host, ctx, NS_ERR_INVALID_CONFIG, "alibaba option request_timeout must be at least 1s");
    ali_client_config c = {host, ctx, s->credentials, s->region, endpoint, host->option_bool(ctx, "vpc_endpoints"),
                           s->max_attempts, timeout};
    if ((rc = ali_client_new(&c, &s->client)) < 0)
        return rc;
    ns_label fields[] = {{"region", s->region},
                         {"cluster", s->cluster_id},
                         {"mode", s->ack ? "ack" : "custom"},
                         {"auth-via", ali_credentials_source(s->credentials)},
                         {"ecs", ali_client_endpoint(s->client, ALI_ECS)}};
    host->log(ctx, NS_LOG_INFO, "alibaba provider ready", fields, 5);
    return NS_OK;
}

/* What ali_check_drift compares with what the selectors resolve to now (ImageDrift, VSwitchDrift,
 * SecurityGroupDrift): the reference port marks them hash:"ignore". */
static const char *const ALI_DRIFT_FIELDS[] = {
    "ECSNodeClass.imageSelectorTerms",
    "ECSNodeClass.vSwitchSelectorTerms",
    "ECSNodeClass.securityGroupSelectorTerms",
    NULL,
};

/* ABI 3: the node classes this provider accepts. Its kubelet settings are spec.kubeletConfiguration, its own schema,
 * which the core does not read. */
static const ns_nodeclass_kind ALI_KINDS[] = {
    {sizeof(ns_nodeclass_kind), "karpenter.k8s.alibabacloud", "v1alpha1", ALI_KIND, 0},
};

static const ns_provider ALI_PROVIDER = {
    .abi_version = NS_PROVIDER_ABI_VERSION,
    .struct_size = sizeof(ns_provider),
    .name = "alibaba",
    .version = "0.1.0",
    .options = OPTIONS,
    .init = ali_init,
    .destroy = ali_destroy,
    .list_instance_types = ali_list_instance_types,
    .launch = ali_launch,
    .terminate = ali_terminate,
    .list_instances = ali_list_instances,
    .poll_events = ali_poll_events,
    .get_instance = ali_get_instance,
    .check_drift = ali_check_drift,
    .validate_nodeclass = ali_validate_nodeclass,
    .list_repair_policies = ali_list_repair_policies,
    .test_inject_fault = ali_test_inject_fault,
    .drift_fields = ALI_DRIFT_FIELDS,
    /* ABI 3 */
    .nodeclass_kinds = ALI_KINDS,
    .n_nodeclass_kinds = sizeof(ALI_KINDS) / sizeof(ALI_KINDS[0]),
    /* ABI 4 */
    .nodeclass_status = ali_nodeclass_status,
};

NS_EXPORT const ns_provider *nodesmith_provider_entry(void);

NS_EXPORT const ns_provider *nodesmith_provider_entry(void)
{
    return &ALI_PROVIDER;
}
