/*
 * Launch, terminate, list and get. The in-memory table stands in for the cloud: a real provider sends RunInstances
 * (or its cloud's equivalent) with the client token as the idempotency key, and lists by the cluster's tag.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skeleton.h"

static sk_instance *sk_find_locked(sk_state *st, const char *provider_id, const char *client_token)
{
    for (size_t i = 0; i < st->n_instances; i++) {
        sk_instance *inst = &st->instances[i];

        if (provider_id && strcmp(inst->provider_id, provider_id) == 0)
            return inst;
        if (client_token && strcmp(inst->client_token, client_token) == 0)
            return inst;
    }
    return NULL;
}

static size_t sk_live_count_locked(const sk_state *st)
{
    size_t n = 0;

    for (size_t i = 0; i < st->n_instances; i++)
        n += !st->instances[i].terminated;
    return n;
}

static bool sk_offering_has_capacity_locked(const sk_state *st, const ns_launch_option *opt)
{
    const sk_type *type = sk_catalog_find(st, opt->instance_type);

    if (!type || !sk_catalog_offering(type, opt->zone, opt->capacity_type))
        return false;
    if (sk_faults_offering_exhausted_locked(st, opt->instance_type, opt->zone, opt->capacity_type))
        return false;
    return sk_live_count_locked(st) < (size_t)st->max_instances;
}

/* Appends a new instance for `opt`. Returns it (valid until the next append) or NULL with *rc set and reported. */
static sk_instance *sk_append_locked(sk_state *st, const ns_launch_request *req, const ns_launch_option *opt, int *rc)
{
    sk_instance *inst;
    const char *nodeclass = req->nodeclass && req->nodeclass->name ? req->nodeclass->name : "";

    if (st->n_instances == st->cap_instances) {
        size_t cap = st->cap_instances ? st->cap_instances * 2 : 16;
        sk_instance *grown = realloc(st->instances, cap * sizeof(*grown));

        if (!grown) {
            *rc = NS_ERROR(st->host, st->ctx, NS_ERR_INTERNAL, "launch of nodeclaim %s: out of memory",
                           req->nodeclaim_name);
            return NULL;
        }
        st->instances = grown;
        st->cap_instances = cap;
    }
    inst = &st->instances[st->n_instances];
    memset(inst, 0, sizeof(*inst));
    snprintf(inst->provider_id, sizeof(inst->provider_id), "skeleton:///%s/sk-%016llx", opt->zone,
             (unsigned long long)++st->next_serial);
    if (!sk_copy(inst->client_token, sizeof(inst->client_token), req->client_token) ||
        !sk_copy(inst->instance_type, sizeof(inst->instance_type), opt->instance_type) ||
        !sk_copy(inst->zone, sizeof(inst->zone), opt->zone) ||
        !sk_copy(inst->capacity_type, sizeof(inst->capacity_type), opt->capacity_type) ||
        !sk_copy(inst->nodeclaim_name, sizeof(inst->nodeclaim_name), req->nodeclaim_name) ||
        !sk_copy(inst->nodepool_name, sizeof(inst->nodepool_name), req->nodepool_name) ||
        !sk_copy(inst->nodeclass_name, sizeof(inst->nodeclass_name), nodeclass)) {
        *rc = NS_ERROR(st->host, st->ctx, NS_ERR_INVALID_ARGUMENT,
                       "launch of nodeclaim %s: a name or the client token is longer than the ABI allows",
                       req->nodeclaim_name);
        return NULL;
    }
    inst->launch_time_ms = st->host->now_ms(st->ctx);
    inst->allocatable = sk_catalog_allocatable(sk_catalog_find(st, opt->instance_type));
    st->n_instances++;
    return inst;
}

/* The core orders options cheapest first; the skeleton takes the first with capacity. A real provider may apply its
 * cloud's allocation strategy (price-capacity-optimized for spot) among them. Returns the new instance, or NULL with
 * *rc set and reported. */
static sk_instance *sk_start_locked(sk_state *st, const ns_launch_request *req, int *rc)
{
    for (size_t i = 0; i < req->n_options; i++) {
        const ns_launch_option *opt = NS_AT(req->options, i);

        if (sk_offering_has_capacity_locked(st, opt))
            return sk_append_locked(st, req, opt, rc);
    }
    *rc = NS_ERROR(st->host, st->ctx, NS_ERR_INSUFFICIENT_CAPACITY,
                   "launch of nodeclaim %s: none of the %zu offerings requested has capacity", req->nodeclaim_name,
                   req->n_options);
    for (size_t i = 0; i < req->n_options; i++) {
        const ns_launch_option *opt = NS_AT(req->options, i);

        st->host->error_unavailable_offering(st->ctx, opt->instance_type, opt->zone, opt->capacity_type);
    }
    return NULL;
}

int sk_launch(void *state, const ns_launch_request *req, ns_launch_result *result)
{
    sk_state *st = state;
    sk_instance *inst;
    int rc = sk_faults_before_call(st, "launch");

    if (rc != NS_OK)
        return rc;
    if (!req->options || req->n_options == 0 || !req->client_token || !req->client_token[0])
        return NS_ERROR(st->host, st->ctx, NS_ERR_INVALID_ARGUMENT,
                        "launch of nodeclaim %s: the request needs at least one option and a client token",
                        req->nodeclaim_name ? req->nodeclaim_name : "(unnamed)");
    pthread_mutex_lock(&st->lock);
    /* The client token makes launch idempotent: a retry after a lost answer gets the same instance back. */
    inst = sk_find_locked(st, NULL, req->client_token);
    if (!inst)
        inst = sk_start_locked(st, req, &rc);
    if (inst) {
        memcpy(result->provider_id, inst->provider_id, sizeof(result->provider_id));
        memcpy(result->instance_type, inst->instance_type, sizeof(result->instance_type));
        memcpy(result->zone, inst->zone, sizeof(result->zone));
        memcpy(result->capacity_type, inst->capacity_type, sizeof(result->capacity_type));
        snprintf(result->image_id, sizeof(result->image_id), "sk-image-1");
        result->allocatable = inst->allocatable;
        result->launch_time_ms = inst->launch_time_ms;
    }
    pthread_mutex_unlock(&st->lock);
    if (inst)
        st->host->log(st->ctx, NS_LOG_INFO, "launched instance",
                      (const ns_label[]){{"provider-id", result->provider_id},
                                         {"instance-type", result->instance_type},
                                         {"zone", result->zone},
                                         {"capacity-type", result->capacity_type}},
                      4);
    return rc;
}

int sk_terminate(void *state, const char *provider_id, bool *already_gone)
{
    sk_state *st = state;
    sk_instance *inst;
    bool gone;
    int rc = sk_faults_before_call(st, "terminate");

    if (rc != NS_OK)
        return rc;
    pthread_mutex_lock(&st->lock);
    inst = sk_find_locked(st, provider_id, NULL);
    /* Unknown and already terminated are the same answer: the caller's goal (no such instance running) holds. */
    gone = !inst || inst->terminated;
    if (inst)
        inst->terminated = true;
    pthread_mutex_unlock(&st->lock);
    if (already_gone)
        *already_gone = gone;
    if (!gone)
        st->host->log(st->ctx, NS_LOG_INFO, "terminated instance", (const ns_label[]){{"provider-id", provider_id}},
                      1);
    return NS_OK;
}

static void sk_describe(const sk_instance *inst, ns_instance *out)
{
    memcpy(out->provider_id, inst->provider_id, sizeof(out->provider_id));
    memcpy(out->instance_type, inst->instance_type, sizeof(out->instance_type));
    memcpy(out->zone, inst->zone, sizeof(out->zone));
    memcpy(out->capacity_type, inst->capacity_type, sizeof(out->capacity_type));
    snprintf(out->image_id, sizeof(out->image_id), "sk-image-1");
    memcpy(out->nodeclaim_name, inst->nodeclaim_name, sizeof(out->nodeclaim_name));
    memcpy(out->nodepool_name, inst->nodepool_name, sizeof(out->nodepool_name));
    memcpy(out->nodeclass_name, inst->nodeclass_name, sizeof(out->nodeclass_name));
    out->state = NS_INSTANCE_RUNNING;
    out->launch_time_ms = inst->launch_time_ms;
}

int sk_list_instances(void *state, ns_instance_cb cb, void *cb_ctx)
{
    sk_state *st = state;
    ns_instance *snapshot = NULL;
    size_t n = 0;
    int rc = sk_faults_before_call(st, "list_instances");

    if (rc != NS_OK)
        return rc;
    /* Callbacks run on a snapshot, outside the lock, so a callback that calls back into the provider cannot
     * deadlock. */
    pthread_mutex_lock(&st->lock);
    snapshot = calloc(st->n_instances ? st->n_instances : 1, sizeof(*snapshot));
    for (size_t i = 0; snapshot && i < st->n_instances; i++) {
        if (st->instances[i].terminated)
            continue;
        snapshot[n].struct_size = sizeof(snapshot[n]);
        sk_describe(&st->instances[i], &snapshot[n]);
        n++;
    }
    pthread_mutex_unlock(&st->lock);
    if (!snapshot)
        return NS_ERROR(st->host, st->ctx, NS_ERR_INTERNAL, "listing instances: out of memory");
    for (size_t i = 0; rc == NS_OK && i < n; i++)
        rc = cb(cb_ctx, &snapshot[i]);
    free(snapshot);
    return rc;
}

int sk_get_instance(void *state, const char *provider_id, ns_instance *out)
{
    sk_state *st = state;
    sk_instance *inst;
    int rc = sk_faults_before_call(st, "get_instance");

    if (rc != NS_OK)
        return rc;
    pthread_mutex_lock(&st->lock);
    inst = sk_find_locked(st, provider_id, NULL);
    if (inst && !inst->terminated)
        sk_describe(inst, out);
    else
        rc = NS_ERROR(st->host, st->ctx, NS_ERR_NOT_FOUND, "instance %s: %s", provider_id,
                      inst ? "terminated" : "no such instance");
    pthread_mutex_unlock(&st->lock);
    return rc;
}

void sk_instances_free(sk_state *st)
{
    free(st->instances);
    st->instances = NULL;
    st->n_instances = st->cap_instances = 0;
}
