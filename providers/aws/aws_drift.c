/* check_drift (what only EC2 knows: the instance's AMI, subnet and security groups against what the node class
 * resolves to now), validate_nodeclass, and list_repair_policies (Karpenter's AWS policies). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_provider.h"
#include "aws_query.h"

/* Karpenter's AWS cloud provider: the kubelet's Ready condition, and the conditions of the EKS node monitoring
 * agent. */
static const ns_repair_policy REPAIR_POLICIES[] = {
    {sizeof(ns_repair_policy), "Ready", "False", 30 * 60 * 1000},
    {sizeof(ns_repair_policy), "Ready", "Unknown", 30 * 60 * 1000},
    {sizeof(ns_repair_policy), "AcceleratedHardwareReady", "False", 10 * 60 * 1000},
    {sizeof(ns_repair_policy), "StorageReady", "False", 30 * 60 * 1000},
    {sizeof(ns_repair_policy), "NetworkingReady", "False", 30 * 60 * 1000},
    {sizeof(ns_repair_policy), "KernelReady", "False", 30 * 60 * 1000},
    {sizeof(ns_repair_policy), "ContainerRuntimeReady", "False", 30 * 60 * 1000},
};

int aws_list_repair_policies(void *state, ns_repair_policy_cb cb, void *cb_ctx)
{
    for (size_t i = 0; i < sizeof(REPAIR_POLICIES) / sizeof(REPAIR_POLICIES[0]); i++) {
        int rc = cb(cb_ctx, &REPAIR_POLICIES[i]);
        if (rc != 0)
            return rc;
    }
    return NS_OK;
}

int aws_validate_nodeclass(void *state, const ns_nodeclass *nodeclass)
{
    aws_state *s = state;
    aws_nodeclass_spec *spec = malloc(sizeof(*spec));
    if (!spec)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory validating node class %s", nodeclass->name);
    int rc = aws_nodeclass_parse(s, nodeclass, spec);
    free(spec);
    return rc;
}

static bool listed(const char (*ids)[32], size_t n, const char *id)
{
    for (size_t i = 0; id && i < n; i++)
        if (strcmp(ids[i], id) == 0)
            return true;
    return false;
}

/* The drift reason, or NULL: Karpenter's order is AMI, subnet, security groups. */
static const char *drift_reason(const aws_nodeclass_view *v, const aws_ec2_instance *in)
{
    bool image_ok = false;
    for (size_t i = 0; i < v->n_images && !image_ok; i++)
        image_ok = in->image_id && strcmp(v->images[i].id, in->image_id) == 0;
    if (!image_ok)
        return "AMIDrift";
    if (!listed(v->subnet_ids, v->n_subnet_ids, in->subnet_id))
        return "SubnetDrift";
    size_t n = aws_ec2_group_count(in->groups);
    if (n != v->n_security_groups)
        return "SecurityGroupDrift";
    for (size_t i = 0; i < n; i++)
        if (!listed(v->security_groups, v->n_security_groups, aws_ec2_group_at(in->groups, i)))
            return "SecurityGroupDrift";
    return NULL;
}

int aws_check_drift(void *state, const ns_instance *instance, const ns_nodeclass *nodeclass, bool *drifted,
                    char *reason, size_t reason_len)
{
    aws_state *s = state;
    const char *id = aws_instance_id_of(instance->provider_id);
    if (!id)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT, "check_drift: '%s' is not an aws:///zone/i-... ID",
                        instance->provider_id);
    aws_nodeclass_view *v = malloc(sizeof(*v));
    if (!v)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory checking drift of %s", id);
    int rc = aws_nodeclass_resolve(s, nodeclass, true, v);
    aws_query q;
    aws_query_init(&q, "DescribeInstances", AWS_EC2_VERSION);
    aws_query_add(&q, "InstanceId.1", id);
    ns_http_response *resp = NULL;
    if (rc == NS_OK)
        rc = aws_client_query(s->client, "ec2", "DescribeInstances", aws_query_body(&q), aws_query_len(&q), &resp,
                              NULL);
    aws_query_free(&q);
    aws_ec2_instance_page page = {0};
    char err[256];
    if (rc == NS_OK) {
        rc = aws_ec2_parse_instances(resp->body, resp->body_len, &page, err, sizeof(err));
        s->host->http_response_free(resp);
        if (rc != NS_OK)
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeInstances %s: unexpected answer: %s", id, err);
        else if (page.n == 0 || page.items[0].state_code == 48)
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_NOT_FOUND, "ec2 instance %s %s", id,
                          page.n ? "is terminated" : "does not exist");
    }
    if (rc == NS_OK) {
        const char *why = drift_reason(v, &page.items[0]);
        *drifted = why != NULL;
        snprintf(reason, reason_len, "%s", why ? why : "");
        if (why) {
            ns_label fields[] = {{"instance", id}, {"reason", why}, {"nodeclass", v->spec.name}};
            s->host->log(s->ctx, NS_LOG_INFO, "aws instance drifted", fields, 3);
        }
    }
    aws_ec2_instance_page_free(&page);
    free(v);
    return rc;
}
