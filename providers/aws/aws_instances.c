/* terminate, list_instances and get_instance, over TerminateInstances and DescribeInstances. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_provider.h"
#include "aws_query.h"
#include "prov_log.h"

const char *aws_instance_id_of(const char *provider_id)
{
    if (!provider_id || strncmp(provider_id, "aws://", 6) != 0)
        return NULL;
    const char *id = strrchr(provider_id, '/');
    return id && strncmp(id + 1, "i-", 2) == 0 && id[3] ? id + 1 : NULL;
}

static ns_instance_state state_of(int code)
{
    switch (code & 0xff) {
    case 0:
        return NS_INSTANCE_PENDING;
    case 16:
        return NS_INSTANCE_RUNNING;
    case 32:
        return NS_INSTANCE_SHUTTING_DOWN;
    case 64:
        return NS_INSTANCE_STOPPING;
    case 80:
        return NS_INSTANCE_STOPPED;
    default:
        return NS_INSTANCE_TERMINATED;
    }
}

int aws_instance_from_ec2(aws_state *s, const aws_ec2_instance *in, ns_instance *out)
{
    uint32_t size = out->struct_size ? out->struct_size : sizeof(*out);
    memset(out, 0, sizeof(*out));
    out->struct_size = size;
    /* Karpenter's rule: reserved only when launched into a reservation targeted alone; an on-demand launch that an
     * open reservation happened to match is on-demand */
    bool reserved = in->capacity_reservation_id && in->capacity_reservation_preference &&
                    strcmp(in->capacity_reservation_preference, "capacity-reservations-only") == 0;
    const char *capacity = in->lifecycle && strcmp(in->lifecycle, "spot") == 0 ? NS_CAPACITY_SPOT
                           : reserved                                         ? NS_CAPACITY_RESERVED
                                                                              : NS_CAPACITY_ON_DEMAND;
    char provider_id[NS_PROVIDER_ID_MAX + 1];
    int n = snprintf(provider_id, sizeof(provider_id), "aws:///%s/%s", in->zone ? in->zone : "",
                     in->instance_id ? in->instance_id : "");
    const char *nodeclaim = aws_ec2_tag(in->tags, AWS_TAG_NODECLAIM);
    const char *nodepool = aws_ec2_tag(in->tags, AWS_TAG_NODEPOOL);
    const char *nodeclass = aws_ec2_tag(in->tags, AWS_TAG_NODECLASS);
    if (!in->instance_id || !in->zone || n < 0 || (size_t)n >= NS_PROVIDER_ID_MAX ||
        !aws_copy(out->provider_id, sizeof(out->provider_id), provider_id) ||
        !aws_copy(out->instance_type, sizeof(out->instance_type), in->instance_type) ||
        !aws_copy(out->zone, sizeof(out->zone), in->zone) ||
        !aws_copy(out->capacity_type, sizeof(out->capacity_type), capacity) ||
        !aws_copy(out->image_id, sizeof(out->image_id), in->image_id) ||
        !aws_copy(out->nodeclaim_name, sizeof(out->nodeclaim_name), nodeclaim) ||
        !aws_copy(out->nodepool_name, sizeof(out->nodepool_name), nodepool) ||
        !aws_copy(out->nodeclass_name, sizeof(out->nodeclass_name), nodeclass))
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL,
                        "ec2 instance %s: an identifier is missing or does not fit nodesmith's buffers",
                        in->instance_id ? in->instance_id : "(no ID)");
    out->state = state_of(in->state_code);
    out->launch_time_ms = in->launch_ms;
    return NS_OK;
}

/* One DescribeInstances page. On NS_OK the caller frees *page. */
static int describe(aws_state *s, aws_query *q, aws_ec2_instance_page *page, aws_api_error *e)
{
    ns_http_response *resp = NULL;
    int rc = aws_client_query(s->client, "ec2", "DescribeInstances", aws_query_body(q), aws_query_len(q), &resp, e);
    aws_query_free(q);
    if (rc != NS_OK)
        return rc;
    char err[256];
    rc = aws_ec2_parse_instances(resp->body, resp->body_len, page, err, sizeof(err));
    s->host->http_response_free(resp);
    if (rc != NS_OK) {
        aws_ec2_instance_page_free(page);
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeInstances: unexpected answer: %s", err);
    }
    return NS_OK;
}

int aws_terminate(void *state, const char *provider_id, bool *already_gone)
{
    aws_state *s = state;
    const char *id = aws_instance_id_of(provider_id);
    if (!id)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "terminate: '%s' is not an aws:///zone/i-... ID",
                        provider_id ? provider_id : "(null)");
    aws_query q;
    aws_query_init(&q, "TerminateInstances", AWS_EC2_VERSION);
    aws_query_add(&q, "InstanceId.1", id);
    ns_http_response *resp = NULL;
    aws_api_error e;
    int rc = aws_client_query(s->client, "ec2", "TerminateInstances", aws_query_body(&q), aws_query_len(&q), &resp, &e);
    aws_query_free(&q);
    if (rc == NS_ERR_NOT_FOUND && strcmp(e.code, "InvalidInstanceID.NotFound") == 0) {
        if (already_gone)
            *already_gone = true;
        return NS_OK;
    }
    if (rc != NS_OK)
        return rc;
    aws_ec2_state_change_page page;
    char err[256];
    rc = aws_ec2_parse_terminate(resp->body, resp->body_len, &page, err, sizeof(err));
    s->host->http_response_free(resp);
    if (rc != NS_OK) {
        aws_ec2_state_change_page_free(&page);
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 TerminateInstances %s: unexpected answer: %s", id, err);
    }
    bool gone = page.n == 1 && page.items[0].previous_state &&
                (strcmp(page.items[0].previous_state, "terminated") == 0 ||
                 strcmp(page.items[0].previous_state, "shutting-down") == 0);
    aws_ec2_state_change_page_free(&page);
    if (already_gone)
        *already_gone = gone;
    ns_log_field fields[] = {prov_log_str("instance", id), prov_log_bool("already_gone", gone)};
    prov_log(s->host, s->ctx, NS_LOG_INFO, "aws instance terminated", fields, 2);
    return NS_OK;
}

void aws_query_cluster_instances(aws_query *q, const aws_state *s)
{
    aws_query_add(q, "Filter.1.Name", "tag:" AWS_TAG_MANAGED_BY);
    aws_query_add(q, "Filter.1.Value.1", s->cluster);
    aws_query_add(q, "Filter.2.Name", "tag-key");
    aws_query_add(q, "Filter.2.Value.1", AWS_TAG_NODEPOOL);
}

int aws_list_instances(void *state, ns_instance_cb cb, void *cb_ctx)
{
    aws_state *s = state;
    static const char *const LIVE[] = {"pending", "running", "shutting-down", "stopping", "stopped"};
    char *token = NULL;
    int rc = NS_OK;
    do {
        aws_query q;
        aws_query_init(&q, "DescribeInstances", AWS_EC2_VERSION);
        aws_query_cluster_instances(&q, s);
        aws_query_add(&q, "Filter.3.Name", "instance-state-name");
        for (size_t i = 0; i < sizeof(LIVE) / sizeof(LIVE[0]); i++)
            aws_query_addf(&q, LIVE[i], "Filter.3.Value.%zu", i + 1);
        aws_query_add(&q, "MaxResults", "1000");
        if (token)
            aws_query_add(&q, "NextToken", token);
        aws_ec2_instance_page page;
        if ((rc = describe(s, &q, &page, NULL)) != NS_OK)
            break;
        for (size_t i = 0; i < page.n && rc == NS_OK; i++) {
            ns_instance inst = {.struct_size = sizeof(inst)};
            if (page.items[i].state_code == 48)
                continue;
            rc = aws_instance_from_ec2(s, &page.items[i], &inst);
            if (rc == NS_OK)
                rc = cb(cb_ctx, &inst);
        }
        free(token);
        token = rc == NS_OK && page.next_token ? strdup(page.next_token) : NULL;
        aws_ec2_instance_page_free(&page);
    } while (token);
    free(token);
    /* The core's garbage collection lists instances periodically: the janitor of unused launch templates runs with
     * it, after a listing that succeeded so that its own failures cannot replace the listing's error. */
    if (rc == NS_OK)
        aws_template_sweep(s);
    return rc;
}

int aws_get_instance(void *state, const char *provider_id, ns_instance *out)
{
    aws_state *s = state;
    const char *id = aws_instance_id_of(provider_id);
    if (!id)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "get_instance: '%s' is not an aws:///zone/i-... ID",
                        provider_id ? provider_id : "(null)");
    aws_query q;
    aws_query_init(&q, "DescribeInstances", AWS_EC2_VERSION);
    aws_query_add(&q, "InstanceId.1", id);
    aws_ec2_instance_page page;
    aws_api_error e;
    int rc = describe(s, &q, &page, &e);
    if (rc != NS_OK)
        return rc;
    if (page.n == 0 || page.items[0].state_code == 48)
        rc = NS_ERROR(s->host, s->ctx, NS_ERR_NOT_FOUND, "ec2 instance %s %s", id,
                      page.n ? "is terminated" : "does not exist");
    else
        rc = aws_instance_from_ec2(s, &page.items[0], out);
    aws_ec2_instance_page_free(&page);
    return rc;
}
