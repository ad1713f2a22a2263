/*
 * A decision's log line in the shapes Karpenter's controller-runtime (zap) logger writes: objects as
 * {"name": ..., "namespace": ...} (klog.KObj), counts as numbers, an error under "error", and for the two lines users
 * read most, the keys Karpenter's provisioner and lifecycle controller add ("created nodeclaim": NodePool, requests,
 * instance-types; "launched nodeclaim": provider-id, instance-type, zone, capacity-type, allocatable). The line is
 * the same whichever mode runs the engine (one round, a timeline, the controller).
 */
#include <stdio.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "log/ns_log.h"
#include "model/model_json.h"

/* One reference per name of a comma-separated list: an object for one, an array of objects for several. Pods are
 * "namespace/name". */
static bool add_refs(cJSON *o, const char *key, const char *list, bool namespaced)
{
    cJSON *many = strchr(list, ',') ? cJSON_AddArrayToObject(o, key) : NULL;
    if (strchr(list, ',') && !many)
        return false;
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        char item[640], *name = item;
        snprintf(item, sizeof(item), "%.*s", end ? (int)(end - p) : (int)strlen(p), p);
        char *slash = namespaced ? strchr(item, '/') : NULL;
        if (slash) {
            *slash = '\0';
            name = slash + 1;
        }
        cJSON *ref = ns_log_ref(slash ? item : NULL, name);
        if (!ref || !(many ? cJSON_AddItemToArray(many, ref) : cJSON_AddItemToObject(o, key, ref))) {
            cJSON_Delete(ref);
            return false;
        }
        p = end ? end + 1 : NULL;
    }
    return true;
}

/* Karpenter's instanceTypeList: the first five names, then "and N other(s)". */
static void type_list(const ns_nodeclaim *c, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t q = 0; q < c->n_requirements; q++) {
        const ns_selector_req *r = &c->requirements[q];
        if (strcmp(r->key, NS_LABEL_INSTANCE_TYPE) != 0 || r->op != NS_OP_IN)
            continue;
        for (size_t v = 0; v < r->n_values && off < len; v++) {
            int w = v > 4 ? snprintf(buf + off, len - off, " and %zu other(s)", r->n_values - v)
                          : snprintf(buf + off, len - off, "%s%s", v ? ", " : "", r->values[v]);
            off += w > 0 ? (size_t)w : len;
            if (v > 4)
                break;
        }
    }
}

static bool add_label(cJSON *o, const char *key, const ns_nodeclaim *c, const char *label)
{
    const char *v = ns_labels_get(&c->meta.labels, label);
    return cJSON_AddStringToObject(o, key, v ? v : "") != NULL;
}

/* The keys Karpenter adds to "created nodeclaim" and "launched nodeclaim", read from the claim. */
static bool add_claim_keys(const ns_engine *e, const ns_decision *d, cJSON *o)
{
    const ns_nodeclaim *c = ns_cluster_find_nodeclaim(e->cluster, d->nodeclaims);
    if (!c)
        return cJSON_AddStringToObject(o, "detail", d->detail) != NULL;
    if (d->kind == NS_DECISION_CREATED_NODECLAIM) {
        char types[1024];
        type_list(c, types, sizeof(types));
        return cJSON_AddItemToObject(o, "NodePool", ns_log_ref(NULL, ns_labels_get(&c->meta.labels, NS_LABEL_NODEPOOL))) &&
               cJSON_AddItemToObject(o, "requests", ns_model_resources_json(&c->requests)) &&
               cJSON_AddStringToObject(o, "instance-types", types);
    }
    return cJSON_AddStringToObject(o, "provider-id", c->provider_id ? c->provider_id : "") &&
           add_label(o, "instance-type", c, NS_LABEL_INSTANCE_TYPE) && add_label(o, "zone", c, NS_LABEL_ZONE) &&
           add_label(o, "capacity-type", c, NS_LABEL_CAPACITY_TYPE) &&
           cJSON_AddItemToObject(o, "allocatable", ns_model_resources_json(&c->allocatable));
}

/* Karpenter logs these with Error(err, ...): the reason is the error. */
static bool reason_is_error(ns_decision_kind kind)
{
    return kind == NS_DECISION_UNSCHEDULABLE_POD || kind == NS_DECISION_LAUNCH_FAILED;
}

void ns_engine_log_decision(const ns_engine *e, const ns_decision *d, ns_log_level level, const char *logger)
{
    cJSON *o = cJSON_CreateObject();
    bool claim_keys = d->kind == NS_DECISION_CREATED_NODECLAIM || d->kind == NS_DECISION_LAUNCHED_NODECLAIM;
    bool ok = o != NULL;
    if (ok && d->nodes[0])
        ok = add_refs(o, "Node", d->nodes, false);
    if (ok && d->nodeclaims[0])
        ok = add_refs(o, "NodeClaim", d->nodeclaims, false);
    /* A created claim's pods are the record of what it was made for; Karpenter's line does not list them. */
    if (ok && d->pods[0] && d->kind != NS_DECISION_CREATED_NODECLAIM)
        ok = add_refs(o, "Pod", d->pods, true);
    if (ok && d->method[0])
        ok = cJSON_AddStringToObject(o, "method", d->method) != NULL;
    if (ok && d->reason[0])
        ok = cJSON_AddStringToObject(o, reason_is_error(d->kind) ? "error" : "reason", d->reason) != NULL;
    if (ok && claim_keys)
        ok = add_claim_keys(e, d, o);
    else if (ok && d->detail[0])
        ok = cJSON_AddStringToObject(o, "detail", d->detail) != NULL;
    /* Out of memory: the line still says what was decided, without its fields. */
    if (!ok) {
        cJSON_Delete(o);
        o = NULL;
    }
    ns_log_json(level, logger, d->message, o);
}
