/* The AWS provider's table, options, init and destroy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_provider.h"

static const ns_option OPTIONS[] = {
    {"region", NS_OPT_STRING, NULL,
     "AWS region; unset = AWS_REGION, then AWS_DEFAULT_REGION, then the instance's region from IMDS"},
    {"cluster_name", NS_OPT_STRING, NULL,
     "the cluster's name (required): launched instances are tagged with it and listed by it"},
    {"interruption_queue", NS_OPT_STRING, NULL,
     "name of the SQS queue receiving EC2 interruption events from EventBridge; unset = no events"},
    {"kubernetes_version", NS_OPT_STRING, "1.30", "Kubernetes minor version, for the al2023@latest AMI alias"},
    {"catalog_ttl", NS_OPT_DURATION, "5m", "how long instance types, offerings and prices are cached"},
    {"max_attempts", NS_OPT_INT, "3", "attempts per AWS API call (the SDKs' standard retry mode)"},
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
    aws_catalog_free(s->catalog);
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
    s->catalog_ttl_ms = host->option_duration_ms(ctx, "catalog_ttl");

    aws_credentials_config cc = {host, ctx, NULL, "us-east-1", 0, 0};
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
    aws_client_config c = {host, ctx, s->credentials, NULL, s->region, (int)host->option_int(ctx, "max_attempts"), 0};
    if ((rc = aws_client_new(&c, &s->client)) != NS_OK)
        return rc;
    ns_label fields[] = {{"region", s->region}, {"cluster", s->cluster}, {"ec2", aws_client_endpoint(s->client, "ec2")}};
    host->log(ctx, NS_LOG_INFO, "aws provider ready", fields, 3);
    return NS_OK;
}

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
};

NS_EXPORT const ns_provider *nodesmith_provider_entry(void);

NS_EXPORT const ns_provider *nodesmith_provider_entry(void)
{
    return &AWS_PROVIDER;
}
