/*
 * The instance store and the methods that read or end instances: terminate, list_instances, get_instance.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_instances.h"
#include "sim_shared.h"
#include "sim_state.h"

#define SIM_PROVIDER_ID_PREFIX "sim:///"

void sim_instances_free(sim_instance_store *store)
{
    if (!store)
        return;
    for (size_t i = 0; i < store->n; i++) {
        free(store->items[i].client_token);
        free(store->items[i].names);
    }
    free(store->items);
    free(store->token_slots);
    memset(store, 0, sizeof(*store));
}

char *sim_instance_pack_names(const char *const names[SIM_NAME_COUNT])
{
    size_t len = 0;
    for (int i = 0; i < SIM_NAME_COUNT; i++)
        len += strlen(names[i]) + 1;
    char *block = malloc(len), *p = block;
    for (int i = 0; block && i < SIM_NAME_COUNT; i++) {
        size_t n = strlen(names[i]) + 1;
        memcpy(p, names[i], n);
        p += n;
    }
    return block;
}

const char *sim_instance_get(const sim_instance *inst, sim_instance_name which)
{
    const char *p = inst->names;
    for (int i = 0; i < (int)which; i++)
        p += strlen(p) + 1;
    return p;
}

void sim_instance_info(const sim_instance *inst, ns_instance *out)
{
    /* Every string was checked to fit its buffer at launch. */
    memset(out, 0, sizeof(*out));
    out->struct_size = sizeof(*out);
    sim_copy_str(out->provider_id, sizeof(out->provider_id), sim_instance_get(inst, SIM_NAME_PROVIDER_ID));
    sim_copy_str(out->instance_type, sizeof(out->instance_type), inst->instance_type);
    sim_copy_str(out->zone, sizeof(out->zone), sim_instance_get(inst, SIM_NAME_ZONE));
    sim_copy_str(out->capacity_type, sizeof(out->capacity_type), inst->capacity_type);
    sim_copy_str(out->image_id, sizeof(out->image_id), sim_instance_get(inst, SIM_NAME_IMAGE));
    sim_copy_str(out->nodeclaim_name, sizeof(out->nodeclaim_name), sim_instance_get(inst, SIM_NAME_NODECLAIM));
    sim_copy_str(out->nodepool_name, sizeof(out->nodepool_name), sim_instance_get(inst, SIM_NAME_NODEPOOL));
    sim_copy_str(out->nodeclass_name, sizeof(out->nodeclass_name), sim_instance_get(inst, SIM_NAME_NODECLASS));
    out->state = inst->state;
    out->launch_time_ms = inst->launch_time_ms;
}

sim_instance *sim_instances_by_id(sim_instance_store *store, uint64_t id)
{
    if (id == 0 || id > store->n)
        return NULL;
    return &store->items[id - 1];
}

/* "sim:///<zone>/i-<16 hex digits>" -> the number; 0 when the text is not a sim provider ID. */
static uint64_t sim_parse_provider_id(const char *provider_id)
{
    if (!provider_id || strncmp(provider_id, SIM_PROVIDER_ID_PREFIX, strlen(SIM_PROVIDER_ID_PREFIX)) != 0)
        return 0;
    const char *slash = strrchr(provider_id, '/');
    if (strncmp(slash + 1, "i-", 2) != 0 || strlen(slash + 3) != 16)
        return 0;
    char *end = NULL;
    uint64_t id = strtoull(slash + 3, &end, 16);
    return *end == '\0' ? id : 0;
}

sim_instance *sim_instances_by_provider_id(sim_instance_store *store, const char *provider_id)
{
    sim_instance *inst = sim_instances_by_id(store, sim_parse_provider_id(provider_id));
    /* The number alone is not enough: "sim:///other-zone/i-..." names no instance. */
    if (!inst || strcmp(sim_instance_get(inst, SIM_NAME_PROVIDER_ID), provider_id) != 0)
        return NULL;
    return inst;
}

int64_t sim_world_lock(sim_state *s)
{
    int64_t now = s->host->now_ms(s->ctx);
    pthread_mutex_lock(&s->lock);
    sim_shared_enter(s);
    sim_events_advance(s, now);
    return now;
}

void sim_world_unlock(sim_state *s)
{
    sim_shared_leave(s);
    pthread_mutex_unlock(&s->lock);
}

static bool sim_visible(const sim_state *s, const sim_instance *inst)
{
    return inst->state != NS_INSTANCE_TERMINATED || s->violation == SIM_VIOLATION_LIST_TERMINATED;
}

int sim_terminate(void *state, const char *provider_id, bool *already_gone)
{
    sim_state *s = state;
    if (!provider_id)
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "terminate: provider ID is NULL");
    if (already_gone)
        *already_gone = false;
    int rc = sim_fault_enter(s, "terminate");
    if (rc != NS_OK)
        return rc;

    sim_world_lock(s);
    sim_instance *inst = sim_instances_by_provider_id(&s->instances, provider_id);
    bool gone = !inst || inst->state == NS_INSTANCE_TERMINATED;
    if (!gone)
        inst->state = NS_INSTANCE_TERMINATED;
    sim_world_unlock(s);

    if (gone && s->violation == SIM_VIOLATION_TERMINATE_NOT_IDEMPOTENT)
        return SIM_FAIL(s, NS_ERR_NOT_FOUND, "terminate: instance %s does not exist or is already terminated",
                        provider_id);
    if (gone) {
        if (already_gone)
            *already_gone = true;
        sim_log(s, NS_LOG_DEBUG, "instance already gone", "provider-id", provider_id, NULL);
        return NS_OK;
    }
    sim_log(s, NS_LOG_INFO, "terminated instance", "provider-id", provider_id, NULL);
    return NS_OK;
}

int sim_list_instances(void *state, ns_instance_cb cb, void *cb_ctx)
{
    sim_state *s = state;
    if (!cb)
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "list_instances: callback is NULL");
    int rc = sim_fault_enter(s, "list_instances");
    if (rc != NS_OK)
        return rc;

    /* Callbacks run on a snapshot of the compact records, without the lock, so they may call back into the
     * provider; an instance's names live until destroy, so the snapshot's pointers stay valid. */
    sim_world_lock(s);
    sim_instance *snapshot = malloc((s->instances.n ? s->instances.n : 1) * sizeof(*snapshot));
    size_t n = 0;
    for (size_t i = 0; snapshot && i < s->instances.n; i++)
        if (sim_visible(s, &s->instances.items[i]))
            snapshot[n++] = s->instances.items[i];
    size_t total = s->instances.n;
    sim_world_unlock(s);
    if (!snapshot)
        return SIM_FAIL(s, NS_ERR_INTERNAL, "list_instances: out of memory copying %zu instances", total);

    rc = NS_OK;
    for (size_t i = 0; i < n && rc == NS_OK; i++) {
        ns_instance info;
        sim_instance_info(&snapshot[i], &info);
        rc = cb(cb_ctx, &info);
    }
    free(snapshot);
    return rc;
}

int sim_get_instance(void *state, const char *provider_id, ns_instance *out)
{
    sim_state *s = state;
    if (!provider_id || !out)
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "get_instance: provider ID or output is NULL");
    int rc = sim_fault_enter(s, "get_instance");
    if (rc != NS_OK)
        return rc;

    ns_instance copy;
    sim_world_lock(s);
    sim_instance *inst = sim_instances_by_provider_id(&s->instances, provider_id);
    bool found = inst && sim_visible(s, inst);
    if (found)
        sim_instance_info(inst, &copy);
    sim_world_unlock(s);

    if (!found)
        return SIM_FAIL(s, NS_ERR_NOT_FOUND, "get_instance: instance %s does not exist or is terminated",
                        provider_id);
    SIM_COPY_OUT(out, copy);
    return NS_OK;
}
