/*
 * launch: validate the request, honour the client token, pick the cheapest option that has capacity, and record
 * the new instance.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_instances.h"
#include "sim_nodeclass.h"
#include "sim_state.h"

static size_t sim_token_hash(const char *token)
{
    size_t h = 1469598103934665603ull;
    for (const char *p = token; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    return h;
}

/* Items index of the instance launched with token, or SIZE_MAX. Caller holds the lock. */
static size_t sim_token_find(const sim_instance_store *st, const char *token)
{
    if (st->n_token_slots == 0)
        return SIZE_MAX;
    size_t mask = st->n_token_slots - 1;
    for (size_t i = sim_token_hash(token) & mask;; i = (i + 1) & mask) {
        size_t slot = st->token_slots[i];
        if (slot == 0)
            return SIZE_MAX;
        if (strcmp(st->items[slot - 1].client_token, token) == 0)
            return slot - 1;
    }
}

static void sim_token_put(size_t *slots, size_t n_slots, const sim_instance *items, size_t index)
{
    size_t mask = n_slots - 1;
    size_t i = sim_token_hash(items[index].client_token) & mask;
    while (slots[i] != 0)
        i = (i + 1) & mask;
    slots[i] = index + 1;
}

bool sim_token_index(sim_instance_store *st, size_t index)
{
    if ((st->n_tokens + 1) * 2 > st->n_token_slots) {
        size_t n_slots = st->n_token_slots ? st->n_token_slots * 2 : 64;
        size_t *slots = calloc(n_slots, sizeof(size_t));
        if (!slots)
            return false;
        for (size_t i = 0; i < st->n_token_slots; i++)
            if (st->token_slots[i])
                sim_token_put(slots, n_slots, st->items, st->token_slots[i] - 1);
        free(st->token_slots);
        st->token_slots = slots;
        st->n_token_slots = n_slots;
    }
    sim_token_put(st->token_slots, st->n_token_slots, st->items, index);
    st->n_tokens++;
    return true;
}

/* Every option must name an offering this provider has for the node class; the core only offers those. */
static int sim_check_options(sim_state *s, const ns_launch_request *req, const sim_nc *nc)
{
    for (size_t i = 0; i < req->n_options; i++) {
        const ns_launch_option *o = NS_AT(req->options, i);
        const sim_itype *t = sim_catalog_find(&s->catalog, o->instance_type);
        int z = o->zone ? sim_zone_index(s, o->zone) : -1;
        /* A type whose offerings the catalog file declares is offered only as declared. */
        bool declared = t && t->file && t->file->n_offers;
        bool ct_ok = o->capacity_type && (declared ? sim_itype_offer(t, o->zone, o->capacity_type) != NULL
                                                   : strcmp(o->capacity_type, NS_CAPACITY_SPOT) == 0 ||
                                                         strcmp(o->capacity_type, NS_CAPACITY_ON_DEMAND) == 0);
        if (!t)
            return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "launch of nodeclaim %s: option %zu names unknown instance "
                            "type %s", req->nodeclaim_name, i, o->instance_type ? o->instance_type : "(null)");
        if (z < 0 || !nc->zone_allowed[z])
            return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "launch of nodeclaim %s: option %zu names zone %s, which "
                            "the node class does not allow in region %s", req->nodeclaim_name, i,
                            o->zone ? o->zone : "(null)", s->region);
        if (!ct_ok)
            return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "launch of nodeclaim %s: option %zu has capacity type %s; "
                            "%s", req->nodeclaim_name, i, o->capacity_type ? o->capacity_type : "(null)",
                            declared ? "the catalog file declares no such offering of the type in that zone"
                                     : "the sim offers spot and on-demand");
        if (nc->os != SIM_OS_LINUX && !t->windows_capable)
            return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "launch of nodeclaim %s: instance type %s cannot run "
                            "Windows", req->nodeclaim_name, t->name);
    }
    return NS_OK;
}

static int sim_check_request(sim_state *s, const ns_launch_request *req)
{
    if (!req->nodeclaim_name || !req->options || req->n_options == 0)
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "launch of nodeclaim %s: %s",
                        req->nodeclaim_name ? req->nodeclaim_name : "(null)",
                        req->nodeclaim_name ? "no launch options" : "nodeclaim name is NULL");
    const char *names[] = {req->nodeclaim_name, req->nodepool_name,
                           req->nodeclass && req->nodeclass->name ? req->nodeclass->name : NULL};
    for (size_t i = 0; i < 3; i++)
        if (names[i] && strlen(names[i]) >= NS_NAME_MAX)
            return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "launch of nodeclaim %.64s...: name %.64s... is longer than "
                            "%d bytes", req->nodeclaim_name, names[i], NS_NAME_MAX - 1);
    return NS_OK;
}

static void sim_allocatable_pack(const ns_resources *r, sim_allocatable *out)
{
    *out = (sim_allocatable){r->cpu_milli, r->memory_bytes, r->pods, r->ephemeral_storage_bytes, "", 0};
    if (r->n_extended > 0) {
        sim_copy_str(out->gpu_resource, sizeof(out->gpu_resource), r->extended[0].name);
        out->gpus = r->extended[0].value;
    }
}

static void sim_allocatable_unpack(const sim_allocatable *a, ns_resources *out)
{
    memset(out, 0, sizeof(*out));
    out->cpu_milli = a->cpu_milli;
    out->memory_bytes = a->memory_bytes;
    out->pods = a->pods;
    out->ephemeral_storage_bytes = a->ephemeral_storage_bytes;
    if (a->gpu_resource[0]) {
        sim_copy_str(out->extended[0].name, sizeof(out->extended[0].name), a->gpu_resource);
        out->extended[0].value = a->gpus;
        out->n_extended = 1;
    }
}

static void sim_result_from(const sim_instance *inst, ns_launch_result *r)
{
    memset(r, 0, sizeof(*r));
    r->struct_size = sizeof(*r);
    sim_copy_str(r->provider_id, sizeof(r->provider_id), sim_instance_get(inst, SIM_NAME_PROVIDER_ID));
    sim_copy_str(r->instance_type, sizeof(r->instance_type), inst->instance_type);
    sim_copy_str(r->zone, sizeof(r->zone), sim_instance_get(inst, SIM_NAME_ZONE));
    sim_copy_str(r->capacity_type, sizeof(r->capacity_type), inst->capacity_type);
    sim_copy_str(r->image_id, sizeof(r->image_id), sim_instance_get(inst, SIM_NAME_IMAGE));
    sim_allocatable_unpack(&inst->allocatable, &r->allocatable);
    r->launch_time_ms = inst->launch_time_ms;
}

/* The zone a launch reports: the chosen one, or under violation ignore-zone a configured zone the options did not
 * pick (an invented one when the sim has a single zone). */
static const char *sim_launch_zone(const sim_state *s, const char *chosen, char *buf, size_t len)
{
    if (s->violation != SIM_VIOLATION_IGNORE_ZONE)
        return chosen;
    for (size_t z = 0; z < s->n_zones; z++)
        if (strcmp(s->zones[z], chosen) != 0)
            return s->zones[z];
    snprintf(buf, len, "%.48s-outside", s->region);
    return buf;
}

/* A static string: the instance record keeps the pointer. The options were checked to be offered. */
static const char *sim_reported_capacity_type(const sim_state *s, const char *chosen)
{
    if (strcmp(chosen, NS_CAPACITY_RESERVED) == 0)
        return NS_CAPACITY_RESERVED;
    bool spot = strcmp(chosen, NS_CAPACITY_SPOT) == 0;
    if (s->violation == SIM_VIOLATION_WRONG_CAPACITY_TYPE)
        spot = !spot;
    return spot ? NS_CAPACITY_SPOT : NS_CAPACITY_ON_DEMAND;
}

/* Appends the instance for option `o`. Caller holds the lock. NULL on allocation failure. */
static sim_instance *sim_instance_add(sim_state *s, const ns_launch_request *req, const sim_nc *nc,
                                      const ns_launch_option *o, int64_t now)
{
    sim_instance_store *st = &s->instances;
    if (st->n == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 64;
        sim_instance *items = realloc(st->items, cap * sizeof(*items));
        if (!items)
            return NULL;
        st->items = items;
        st->cap = cap;
    }
    sim_instance *inst = &st->items[st->n];
    memset(inst, 0, sizeof(*inst));
    inst->id = st->n + 1;

    char zone_buf[NS_ZONE_MAX], provider_id[NS_PROVIDER_ID_MAX];
    const char *zone = sim_launch_zone(s, o->zone, zone_buf, sizeof(zone_buf));
    snprintf(provider_id, sizeof(provider_id), "sim:///%s/i-%016" PRIx64, zone, inst->id);
    const sim_itype *t = sim_catalog_find(&s->catalog, o->instance_type);
    const char *names[SIM_NAME_COUNT] = {
        [SIM_NAME_PROVIDER_ID] = provider_id,
        [SIM_NAME_ZONE] = zone,
        [SIM_NAME_IMAGE] = nc->image_id,
        [SIM_NAME_NODECLAIM] = req->nodeclaim_name,
        [SIM_NAME_NODEPOOL] = req->nodepool_name ? req->nodepool_name : "",
        [SIM_NAME_NODECLASS] = req->nodeclass && req->nodeclass->name ? req->nodeclass->name : "",
    };
    if (!(inst->names = sim_instance_pack_names(names)))
        return NULL;
    if (req->client_token && req->client_token[0] && !(inst->client_token = strdup(req->client_token))) {
        free(inst->names);
        return NULL;
    }
    inst->instance_type = t->name;
    inst->capacity_type = sim_reported_capacity_type(s, o->capacity_type);
    inst->state = NS_INSTANCE_RUNNING;
    inst->launch_time_ms = now;
    ns_resources allocatable;
    sim_itype_allocatable(t, nc, &allocatable);
    sim_allocatable_pack(&allocatable, &inst->allocatable);

    if (inst->client_token && !sim_token_index(st, st->n)) {
        free(inst->client_token);
        free(inst->names);
        return NULL;
    }
    st->n++;
    return inst;
}

/* Reports NS_ERR_INSUFFICIENT_CAPACITY naming every option (all of them failed). */
static int sim_fail_no_capacity(sim_state *s, const ns_launch_request *req)
{
    int rc = SIM_FAIL(s, NS_ERR_INSUFFICIENT_CAPACITY, "launch of nodeclaim %s: none of the %zu offerings has "
                      "capacity in region %s", req->nodeclaim_name, req->n_options, s->region);
    if (s->violation == SIM_VIOLATION_ICE_WITHOUT_OFFERINGS)
        return rc;
    for (size_t i = 0; i < req->n_options; i++) {
        const ns_launch_option *o = NS_AT(req->options, i);
        s->host->error_unavailable_offering(s->ctx, o->instance_type, o->zone, o->capacity_type);
    }
    return rc;
}

int sim_launch(void *state, const ns_launch_request *req_in, ns_launch_result *result)
{
    sim_state *s = state;
    if (!req_in || !result)
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "launch: request or result is NULL");
    int rc = sim_fault_enter(s, "launch");
    if (rc != NS_OK)
        return rc;
    ns_launch_request req;
    SIM_COPY_IN(req, req_in);
    sim_nc nc;
    if ((rc = sim_check_request(s, &req)) != NS_OK || (rc = sim_nc_parse(s, req.nodeclass, &nc)) != NS_OK ||
        (rc = sim_check_options(s, &req, &nc)) != NS_OK)
        return rc;
    if (s->launch_latency_ms > 0)
        s->host->sleep_ms(s->ctx, s->launch_latency_ms);

    ns_launch_result r;
    bool reused = false, no_capacity = false;
    int64_t now = sim_world_lock(s);
    size_t existing = req.client_token && req.client_token[0] && s->violation != SIM_VIOLATION_DOUBLE_LAUNCH
                          ? sim_token_find(&s->instances, req.client_token)
                          : SIZE_MAX;
    sim_instance *inst = NULL;
    if (existing != SIZE_MAX) {
        inst = &s->instances.items[existing];
        reused = true;
    } else {
        const ns_launch_option *best = NULL;
        double best_price = 0;
        for (size_t i = 0; i < req.n_options; i++) {
            const ns_launch_option *o = NS_AT(req.options, i);
            const sim_itype *t = sim_catalog_find(&s->catalog, o->instance_type);
            const sim_offer *declared = sim_itype_offer(t, o->zone, o->capacity_type);
            if (sim_faults_capacity_exhausted(&s->faults, o->instance_type, o->zone, o->capacity_type) ||
                (declared && !sim_offer_has_capacity(s, t, declared)))
                continue;
            double price = sim_offering_price(t, &nc, o->zone, o->capacity_type);
            if (!best || price < best_price) {
                best = o;
                best_price = price;
            }
        }
        no_capacity = !best;
        if (best)
            inst = sim_instance_add(s, &req, &nc, best, now);
    }
    if (inst)
        sim_result_from(inst, &r);
    sim_world_unlock(s);

    if (no_capacity)
        return sim_fail_no_capacity(s, &req);
    if (!inst)
        return SIM_FAIL(s, NS_ERR_INTERNAL, "launch of nodeclaim %s: out of memory recording the instance",
                        req.nodeclaim_name);
    SIM_COPY_OUT(result, r);
    sim_log(s, NS_LOG_INFO, reused ? "returned instance for repeated client token" : "launched instance",
            "provider-id", r.provider_id, "instance-type", r.instance_type, "zone", r.zone, "capacity-type",
            r.capacity_type, "nodeclaim", req.nodeclaim_name, NULL);
    return NS_OK;
}
