/* terminate (DeleteInstance, forced), list_instances (DescribeInstances by the cluster's tag) and get_instance. The
 * provider ID is ACK's: "<region>.<instance-id>". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ali_json.h"
#include "ali_provider.h"

const char *ali_instance_id_of(const ali_state *s, const char *provider_id)
{
    size_t n = strlen(s->region);
    if (!provider_id || strncmp(provider_id, s->region, n) != 0 || provider_id[n] != '.' ||
        strncmp(provider_id + n + 1, "i-", 2) != 0)
        return NULL;
    return provider_id + n + 1;
}

static ns_instance_state state_of(const char *status)
{
    if (!status)
        return NS_INSTANCE_PENDING;
    if (strcmp(status, "Running") == 0)
        return NS_INSTANCE_RUNNING;
    if (strcmp(status, "Stopping") == 0)
        return NS_INSTANCE_STOPPING;
    if (strcmp(status, "Stopped") == 0)
        return NS_INSTANCE_STOPPED;
    return NS_INSTANCE_PENDING; /* Pending, Starting */
}

static const char *tag(const ns_host *h, const ns_json *inst, const char *key)
{
    const ns_json *tags = ali_json_list(h, inst, "Tags", "Tag");
    for (size_t i = 0; i < h->json_size(tags); i++) {
        const ns_json *t = h->json_at(tags, i);
        const char *k = ali_json_str(h, t, "TagKey");
        if (k && strcmp(k, key) == 0)
            return ali_json_str(h, t, "TagValue");
    }
    return NULL;
}

int ali_instance_from_json(ali_state *s, const ns_json *in, ns_instance *out)
{
    const ns_host *h = s->host;
    const char *id = ali_json_str(h, in, "InstanceId");
    const char *spot = ali_json_str(h, in, "SpotStrategy");
    const char *type = ali_json_str(h, in, "InstanceType"), *zone = ali_json_str(h, in, "ZoneId"),
               *image = ali_json_str(h, in, "ImageId");
    memset(out, 0, sizeof(*out));
    out->struct_size = sizeof(*out);
    char pid[NS_PROVIDER_ID_MAX];
    const char *claim = tag(h, in, ALI_TAG_NODECLAIM), *pool = tag(h, in, ALI_TAG_NODEPOOL),
               *nc = tag(h, in, ALI_TAG_NODECLASS);
    if (!id || (size_t)snprintf(pid, sizeof(pid), "%s.%s", s->region, id) >= sizeof(pid) ||
        !ali_copy(out->provider_id, sizeof(out->provider_id), pid) ||
        !ali_copy(out->instance_type, sizeof(out->instance_type), type ? type : "") ||
        !ali_copy(out->zone, sizeof(out->zone), zone ? zone : "") ||
        !ali_copy(out->capacity_type, sizeof(out->capacity_type),
                  spot && strcmp(spot, "NoSpot") != 0 ? NS_CAPACITY_SPOT : NS_CAPACITY_ON_DEMAND) ||
        !ali_copy(out->image_id, sizeof(out->image_id), image ? image : "") ||
        !ali_copy(out->nodeclaim_name, sizeof(out->nodeclaim_name), claim ? claim : "") ||
        !ali_copy(out->nodepool_name, sizeof(out->nodepool_name), pool ? pool : "") ||
        !ali_copy(out->nodeclass_name, sizeof(out->nodeclass_name), nc ? nc : ""))
        return NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "ecs DescribeInstances: instance %s has a field that does not fit",
                        id ? id : "(without InstanceId)");
    out->state = state_of(ali_json_str(h, in, "Status"));
    int64_t created = ali_parse_iso8601_ms(ali_json_str(h, in, "CreationTime"));
    out->launch_time_ms = created > 0 ? created : 0;
    return NS_OK;
}

int ali_describe_instance(ali_state *s, const char *instance_id, ns_json **doc, const ns_json **inst)
{
    const ns_host *h = s->host;
    ali_params p = {0};
    char ids[96];
    snprintf(ids, sizeof(ids), "[\"%s\"]", instance_id);
    ali_params_add(&p, "InstanceIds", ids);
    int rc = ali_rpc(s->client, ALI_ECS, "DescribeInstances", &p, doc, NULL);
    ali_params_free(&p);
    if (rc < 0)
        return rc;
    const ns_json *list = ali_json_list(h, *doc, "Instances", "Instance");
    *inst = h->json_size(list) ? h->json_at(list, 0) : NULL;
    if (!*inst) {
        h->json_free(*doc);
        *doc = NULL;
        return NS_ERROR(h, s->ctx, NS_ERR_NOT_FOUND, "instance %s not found", instance_id);
    }
    return NS_OK;
}

int ali_get_instance(void *state, const char *provider_id, ns_instance *out)
{
    ali_state *s = state;
    const char *id = ali_instance_id_of(s, provider_id);
    if (!id)
        return NS_ERROR(s->host, s->ctx, NS_ERR_NOT_FOUND, "%s is not an alibaba provider ID of region %s (%s.i-...)",
                        provider_id ? provider_id : "(null)", s->region, s->region);
    ns_json *doc = NULL;
    const ns_json *inst = NULL;
    int rc = ali_describe_instance(s, id, &doc, &inst);
    if (rc < 0)
        return rc;
    rc = ali_instance_from_json(s, inst, out);
    s->host->json_free(doc);
    return rc;
}

int ali_terminate(void *state, const char *provider_id, bool *already_gone)
{
    ali_state *s = state;
    if (already_gone)
        *already_gone = false;
    const char *id = ali_instance_id_of(s, provider_id);
    if (!id) {
        if (already_gone)
            *already_gone = true;
        return NS_OK; /* not an instance this provider could have launched: nothing to delete */
    }
    ali_params p = {0};
    ali_params_add(&p, "InstanceId", id);
    ali_params_add(&p, "Force", "true");
    ali_params_add(&p, "TerminateSubscription", "false");
    ns_json *doc = NULL;
    ali_api_error err;
    int rc = ali_rpc(s->client, ALI_ECS, "DeleteInstance", &p, &doc, &err);
    ali_params_free(&p);
    s->host->json_free(doc);
    if (rc == NS_ERR_NOT_FOUND && strcmp(err.code, "InvalidInstanceId.NotFound") == 0) {
        if (already_gone)
            *already_gone = true;
        return NS_OK;
    }
    if (rc == NS_OK) {
        ns_label f[] = {{"provider-id", provider_id}};
        s->host->log(s->ctx, NS_LOG_INFO, "deleted instance", f, 1);
    }
    return rc;
}

int ali_each_owned_instance(ali_state *s, const char *lock_reason, ali_instance_fn fn, void *ctx)
{
    const ns_host *h = s->host;
    char token[512] = "", key[200];
    snprintf(key, sizeof(key), "%s%s", ALI_TAG_CLUSTER_PREFIX, s->cluster_id);
    int rc;
    do {
        ali_params p = {0};
        ali_params_add(&p, "Tag.1.Key", key);
        ali_params_add(&p, "Tag.1.Value", "owned");
        if (lock_reason)
            ali_params_add(&p, "LockReason", lock_reason);
        ali_params_add(&p, "MaxResults", "100");
        if (token[0])
            ali_params_add(&p, "NextToken", token);
        ns_json *doc = NULL;
        rc = ali_rpc(s->client, ALI_ECS, "DescribeInstances", &p, &doc, NULL);
        ali_params_free(&p);
        if (rc < 0)
            return rc;
        const ns_json *list = ali_json_list(h, doc, "Instances", "Instance");
        for (size_t i = 0; rc == 0 && i < h->json_size(list); i++)
            rc = fn(s, h->json_at(list, i), ctx);
        const char *next = ali_json_str(h, doc, "NextToken");
        ali_copy(token, sizeof(token), next ? next : "");
        h->json_free(doc);
    } while (rc == 0 && token[0]);
    return rc;
}

typedef struct list_ctx {
    ns_instance_cb cb;
    void *cb_ctx;
} list_ctx;

static int list_one(ali_state *s, const ns_json *in, void *ctx)
{
    list_ctx *lc = ctx;
    ns_instance inst;
    int rc = ali_instance_from_json(s, in, &inst);
    return rc == NS_OK ? lc->cb(lc->cb_ctx, &inst) : rc;
}

int ali_list_instances(void *state, ns_instance_cb cb, void *cb_ctx)
{
    list_ctx lc = {cb, cb_ctx};
    return ali_each_owned_instance(state, NULL, list_one, &lc);
}
