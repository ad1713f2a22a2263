/* The AWS provider's table, options, init and destroy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_provider.h"
#include "ec2_v1alpha5_defaults.h"

static const ns_option OPTIONS[] = {
    {"region", NS_OPT_STRING, NULL,
     "AWS region; unset = AWS_REGION, then AWS_DEFAULT_REGION, then the instance's region from IMDS"},
    {"cluster_name", NS_OPT_STRING, NULL,
     "the cluster's name (required): launched instances are tagged with it and listed by it"},
    {"cluster_endpoint", NS_OPT_STRING, NULL,
     "the cluster's API server URL for the nodes' bootstrap; unset = asked from EKS (eks:DescribeCluster)"},
    {"cluster_ca_bundle", NS_OPT_STRING, NULL,
     "the cluster's CA bundle (base64 PEM) for the nodes' bootstrap; unset = from EKS when cluster_endpoint is unset"},
    {"cluster_cidr", NS_OPT_STRING, NULL,
     "the cluster's service CIDR for AL2023's NodeConfig; unset = from EKS when cluster_endpoint is unset"},
    {"interruption_queue", NS_OPT_STRING, NULL,
     "name of the SQS queue receiving EC2 interruption events from EventBridge; unset = no events"},
    {"kubernetes_version", NS_OPT_STRING, "1.30", "Kubernetes minor version, for the AMI aliases' SSM parameters"},
    {"catalog_ttl", NS_OPT_DURATION, "5m", "how long instance types, offerings and spot prices are cached"},
    {"pricing_ttl", NS_OPT_DURATION, "12h", "how long on-demand prices from the Pricing API are cached"},
    {"max_attempts", NS_OPT_INT, "3", "attempts per AWS API call (the SDKs' standard retry mode)"},
    {"request_timeout", NS_OPT_DURATION, "30s", "time limit of one attempt of an AWS API call"},
    {"test_hooks", NS_OPT_BOOL, "false",
     "tests only: accept test_inject_fault, injecting faults through the AWS emulator's control endpoint"},
    {"test_control_url", NS_OPT_STRING, NULL,
     "tests only: the AWS emulator's control endpoint, http://127.0.0.1:PORT/_emulator"},
    {NULL, 0, NULL, NULL},
};

bool aws_copy(char *dst, size_t dst_len, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= dst_len) {
        dst[0] = '\0';
        return false;
    }
    memcpy(dst, src ? src : "", n + 1);
    return true;
}

static void aws_destroy(void *state)
{
    aws_state *s = state;
    if (!s)
        return;
    prov_snapshot_cache_clear(&s->catalogs);
    aws_price_list_free(s->prices);
    free(s->templates);
    free(s->health);
    free(s->cluster_endpoint);
    free(s->cluster_ca);
    free(s->cluster_cidr);
    aws_client_free(s->client);
    aws_credentials_provider_free(s->credentials);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static int choose_region(aws_state *s)
{
    const char *region = s->host->option_string(s->ctx, "region");
    if (!region)
        region = aws_env_get(NULL, "AWS_REGION");
    if (!region)
        region = aws_env_get(NULL, "AWS_DEFAULT_REGION");
    if (region) {
        if (!aws_copy(s->region, sizeof(s->region), region))
            return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "aws option region: '%.80s' is too long",
                            region);
        return NS_OK;
    }
    /* The chain is built for us-east-1 to reach IMDS; it is rebuilt below for the real region. */
    int rc = aws_credentials_imds_metadata(s->credentials, "placement/region", s->region, sizeof(s->region));
    if (rc != NS_OK)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG,
                        "aws: no region: set the option region, AWS_REGION or AWS_DEFAULT_REGION (IMDS could not "
                        "tell it either)");
    return NS_OK;
}

static int aws_init(const ns_host *host, ns_host_ctx *ctx, void **state)
{
    aws_state *s = calloc(1, sizeof(*s));
    if (!s)
        return NS_ERROR(host, ctx, NS_ERR_INTERNAL, "out of memory creating the aws provider");
    *state = s; /* from here on, destroy releases whatever init built */
    s->host = host;
    s->ctx = ctx;
    pthread_mutex_init(&s->lock, NULL);
    aws_resource_settings_default(&s->resources);
    const char *cluster = host->option_string(ctx, "cluster_name");
    if (!cluster || !*cluster)
        return NS_ERROR(host, ctx, NS_ERR_INVALID_CONFIG,
                        "aws option cluster_name is required: instances are tagged and found by it");
    if (!aws_copy(s->cluster, sizeof(s->cluster), cluster))
        return NS_ERROR(host, ctx, NS_ERR_INVALID_CONFIG, "aws option cluster_name is longer than %zu bytes",
                        sizeof(s->cluster) - 1);
    const char *queue = host->option_string(ctx, "interruption_queue");
    if (queue && !aws_copy(s->queue_name, sizeof(s->queue_name), queue))
        return NS_ERROR(host, ctx, NS_ERR_INVALID_CONFIG, "aws option interruption_queue is too long");
    const char *version = host->option_string(ctx, "kubernetes_version");
    if (!aws_copy(s->kubernetes_version, sizeof(s->kubernetes_version), version ? version : "1.30"))
        return NS_ERROR(host, ctx, NS_ERR_INVALID_CONFIG, "aws option kubernetes_version is too long");
    aws_catalog_cache_init(s, host->option_duration_ms(ctx, "catalog_ttl"));
    s->pricing_ttl_ms = host->option_duration_ms(ctx, "pricing_ttl");
    s->max_attempts = (int)host->option_int(ctx, "max_attempts");
    int64_t timeout_ms = host->option_duration_ms(ctx, "request_timeout");
    if (s->max_attempts < 1 || s->max_attempts > 10)
        return NS_ERROR(host, ctx, NS_ERR_INVALID_CONFIG, "aws option max_attempts must be from 1 to 10, not %d",
                        s->max_attempts);
    /* interruption polls wait up to a second for messages: an attempt must outlast that wait */
    if (timeout_ms < 2000)
        return NS_ERROR(host, ctx, NS_ERR_INVALID_CONFIG, "aws option request_timeout must be at least 2s");
    s->test_hooks = host->option_bool(ctx, "test_hooks");
    const char *control = host->option_string(ctx, "test_control_url");
    if (control && !aws_copy(s->control_url, sizeof(s->control_url), control))
        return NS_ERROR(host, ctx, NS_ERR_INVALID_CONFIG, "aws option test_control_url is too long");

    aws_credentials_config cc = {host, ctx, NULL, "us-east-1", 0, 0, 0};
    int rc = aws_credentials_provider_new(&cc, &s->credentials);
    if (rc != NS_OK)
        return rc;
    if ((rc = choose_region(s)) != NS_OK)
        return rc;
    aws_credentials_provider_free(s->credentials);
    s->credentials = NULL;
    cc.region = s->region;
    if ((rc = aws_credentials_provider_new(&cc, &s->credentials)) != NS_OK)
        return rc;
    aws_client_config c = {host, ctx, s->credentials, NULL, s->region, s->max_attempts, timeout_ms};
    if ((rc = aws_client_new(&c, &s->client)) != NS_OK)
        return rc;
    ns_label fields[] = {{"region", s->region}, {"cluster", s->cluster}, {"ec2", aws_client_endpoint(s->client, "ec2")}};
    host->log(ctx, NS_LOG_INFO, "aws provider ready", fields, 3);
    return NS_OK;
}

/* What aws_check_drift compares with what the selectors resolve to now (AMIDrift, SubnetDrift, SecurityGroupDrift),
 * so the core leaves them out of its node class hash, as Karpenter's EC2NodeClass marks them hash:"ignore". */
static const char *const AWS_DRIFT_FIELDS[] = {
    "EC2NodeClass.amiSelectorTerms",   "EC2NodeClass.subnetSelectorTerms",   "EC2NodeClass.securityGroupSelectorTerms",
    "AWSNodeTemplate.amiSelector",     "AWSNodeTemplate.subnetSelector",     "AWSNodeTemplate.securityGroupSelector",
    NULL,
};

/* Karpenter's AWS node classes; a legacy reference without a kind means what Karpenter's AWS provider defaults it to. */
static const ns_nodeclass_kind AWS_KINDS[] = {
    {sizeof(ns_nodeclass_kind), "karpenter.k8s.aws", "v1", "EC2NodeClass", NS_NODECLASS_KUBELET},
    {sizeof(ns_nodeclass_kind), "karpenter.k8s.aws", "v1beta1", "EC2NodeClass", NS_NODECLASS_DEFAULT_V1BETA1_REF},
    {sizeof(ns_nodeclass_kind), "karpenter.k8s.aws", "v1alpha1", "AWSNodeTemplate", NS_NODECLASS_DEFAULT_V1ALPHA5_REF},
};

static const ns_provider AWS_PROVIDER = {
    .abi_version = NS_PROVIDER_ABI_VERSION,
    .struct_size = sizeof(ns_provider),
    .name = "aws",
    .version = "0.1.0",
    .options = OPTIONS,
    /* ABI 1 */
    .init = aws_init,
    .destroy = aws_destroy,
    .list_instance_types = aws_list_instance_types,
    .launch = aws_launch,
    .terminate = aws_terminate,
    .list_instances = aws_list_instances,
    .poll_events = aws_poll_events,
    /* ABI 2 */
    .get_instance = aws_get_instance,
    .check_drift = aws_check_drift,
    .validate_nodeclass = aws_validate_nodeclass,
    .list_repair_policies = aws_list_repair_policies,
    .test_inject_fault = aws_test_inject_fault,
    .drift_fields = AWS_DRIFT_FIELDS,
    /* ABI 3 */
    .nodeclass_kinds = AWS_KINDS,
    .n_nodeclass_kinds = sizeof(AWS_KINDS) / sizeof(AWS_KINDS[0]),
    /* ABI 4 */
    .nodeclass_status = aws_nodeclass_status,
    /* ABI 6 */
    .v1alpha5_defaults = ec2_v1alpha5_defaults,
};

NS_EXPORT const ns_provider *nodesmith_provider_entry(void);

NS_EXPORT const ns_provider *nodesmith_provider_entry(void)
{
    return &AWS_PROVIDER;
}
