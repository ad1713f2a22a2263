/* The state of the engine's cluster as the report document records it after each timeline step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/engine_internal.h"
#include "simulation/timeline_run.h"
#include "errors/ns_error.h"

/* Pending pods listed by name in a state; the count covers the rest. */
#define STATE_MAX_PENDING_NAMES 100

static double claim_price(const ns_nodeclaim *claim)
{
    const char *price = claim ? ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_PRICE) : NULL;
    return price ? strtod(price, NULL) : 0;
}

static const char *claim_phase(const ns_nodeclaim *c)
{
    if (ns_claim_deleting(c))
        return "Deleting";
    if (ns_claim_initialized(c))
        return "Initialized";
    if (ns_claim_registered(c))
        return "Registered";
    if (ns_claim_launched(c))
        return "Launched";
    return "Pending";
}

static bool has_taint(const ns_node *n, const char *key)
{
    for (size_t i = 0; i < n->n_taints; i++)
        if (strcmp(n->taints[i].key, key) == 0)
            return true;
    return false;
}

static const char *node_status(const ns_node *n, const ns_nodeclaim *claim)
{
    if (n->meta.deletion_ms || (claim && ns_claim_deleting(claim)))
        return "Deleting";
    if (has_taint(n, NS_TAINT_DISRUPTED_KEY))
        return "Disrupted";
    if (n->unschedulable)
        return "Cordoned";
    return n->ready && (!claim || ns_claim_initialized(claim)) ? "Ready" : "NotReady";
}

static bool add_string(cJSON *obj, const char *key, const char *value)
{
    return cJSON_AddStringToObject(obj, key, value ? value : "") != NULL;
}

static bool add_labels(cJSON *obj, const char *key, const ns_labels *l)
{
    cJSON *m = cJSON_AddObjectToObject(obj, key);
    for (size_t i = 0; m && i < l->n; i++)
        if (!cJSON_AddStringToObject(m, l->items[i].key, l->items[i].value))
            return false;
    return m != NULL;
}

/* One status condition: type, status, reason, message, last_transition (RFC 3339, "" when unknown). */
static bool add_condition(cJSON *list, const char *type, const char *status, const char *reason, const char *message,
                          int64_t since_ms)
{
    char when[32] = "";
    if (since_ms)
        ns_clock_format_rfc3339(since_ms, when, sizeof(when));
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(list, o)) {
        cJSON_Delete(o);
        return false;
    }
    return add_string(o, "type", type) && add_string(o, "status", status) && add_string(o, "reason", reason) &&
           add_string(o, "message", message) && add_string(o, "last_transition", when);
}

static bool add_conditions(cJSON *obj, const ns_conditions *c)
{
    cJSON *list = cJSON_AddArrayToObject(obj, "conditions");
    for (size_t i = 0; list && i < c->n; i++)
        if (!add_condition(list, c->items[i].type, c->items[i].status, c->items[i].reason, c->items[i].message,
                           c->items[i].last_transition_ms))
            return false;
    return list != NULL;
}

/* Taints as kubectl prints them: key=value:Effect, or key:Effect. */
static bool add_taints(cJSON *obj, const ns_node *n)
{
    cJSON *list = cJSON_AddArrayToObject(obj, "taints");
    for (size_t i = 0; list && i < n->n_taints; i++) {
        const ns_taint *t = &n->taints[i];
        char text[512];
        snprintf(text, sizeof(text), "%s%s%s:%s", t->key, t->value ? "=" : "", t->value ? t->value : "", t->effect);
        if (!cJSON_AddItemToArray(list, cJSON_CreateString(text)))
            return false;
    }
    return list != NULL;
}

/* The node's Ready condition first, then the others; its annotations and taints; the namespace/name of its pods other
 * than DaemonSet and mirror pods, in the cluster's order. */
static bool add_node_details(const ns_cluster *c, const ns_node *n, cJSON *o)
{
    int64_t since = 0;
    const char *ready = ns_node_condition_status(n, "Ready", &since);
    cJSON *list = cJSON_AddArrayToObject(o, "conditions"), *names;
    if (!list || !add_condition(list, "Ready", ready, NULL, NULL, since))
        return false;
    for (size_t i = 0; i < n->conditions.n; i++) {
        const ns_condition *k = &n->conditions.items[i];
        if (!add_condition(list, k->type, k->status, k->reason, k->message, k->last_transition_ms))
            return false;
    }
    if (!add_taints(o, n) || !add_labels(o, "annotations", &n->meta.annotations) ||
        !(names = cJSON_AddArrayToObject(o, "pod_names")))
        return false;
    for (size_t i = 0; i < c->n_pods; i++) {
        const ns_pod *p = c->pods[i];
        if (!p->node_name || strcmp(p->node_name, n->meta.name) != 0 || ns_engine_pod_is_daemon(p))
            continue;
        char ref[512];
        ns_engine_pod_ref(p, ref, sizeof(ref));
        if (!cJSON_AddItemToArray(names, cJSON_CreateString(ref)))
            return false;
    }
    return true;
}

static cJSON *node_json(ns_engine *e, const ns_node *n)
{
    const ns_cluster *c = ns_engine_cluster(e);
    const ns_nodeclaim *claim = ns_engine_claim_of_node(e, n);
    const ns_labels *l = &n->meta.labels;
    size_t pods = 0, daemon = 0;
    int64_t cpu = 0, mem = 0;
    for (size_t i = 0; i < c->n_pods; i++) {
        const ns_pod *p = c->pods[i];
        if (!p->node_name || strcmp(p->node_name, n->meta.name) != 0)
            continue;
        if (ns_engine_pod_is_daemon(p))
            daemon++;
        else
            pods++;
        cpu += p->requests.cpu_milli;
        mem += p->requests.memory_bytes;
    }
    cJSON *o = cJSON_CreateObject();
    if (!o || !add_string(o, "name", n->meta.name) || !add_string(o, "nodeclaim", claim ? claim->meta.name : "") ||
        !add_string(o, "nodepool", ns_labels_get(l, NS_LABEL_NODEPOOL)) ||
        !add_string(o, "instance_type", ns_labels_get(l, NS_LABEL_INSTANCE_TYPE)) ||
        !add_string(o, "zone", ns_labels_get(l, NS_LABEL_ZONE)) ||
        !add_string(o, "capacity_type", ns_labels_get(l, NS_LABEL_CAPACITY_TYPE)) ||
        !cJSON_AddNumberToObject(o, "price_per_hour", claim_price(claim)) ||
        !add_string(o, "status", node_status(n, claim)) || !cJSON_AddNumberToObject(o, "pods", (double)pods) ||
        !cJSON_AddNumberToObject(o, "daemon_pods", (double)daemon) ||
        !cJSON_AddNumberToObject(o, "cpu_requested_milli", (double)cpu) ||
        !cJSON_AddNumberToObject(o, "cpu_allocatable_milli", (double)n->allocatable.cpu_milli) ||
        !cJSON_AddNumberToObject(o, "memory_requested_bytes", (double)mem) ||
        !cJSON_AddNumberToObject(o, "memory_allocatable_bytes", (double)n->allocatable.memory_bytes) ||
        !add_labels(o, "labels", l) || !add_node_details(c, n, o)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The Drifted condition's reason when the claim has drifted, else "". */
static const char *drift_reason(const ns_nodeclaim *claim)
{
    const ns_condition *c = ns_conditions_get(&claim->conditions, NS_COND_DRIFTED);
    return c && strcmp(c->status, "True") == 0 && c->reason ? c->reason : "";
}

static cJSON *claim_json(const ns_nodeclaim *claim)
{
    const ns_labels *l = &claim->meta.labels;
    cJSON *o = cJSON_CreateObject();
    if (!o || !add_string(o, "name", claim->meta.name) ||
        !add_string(o, "nodepool", ns_labels_get(l, NS_LABEL_NODEPOOL)) ||
        !add_string(o, "phase", claim_phase(claim)) || !add_string(o, "node", claim->node_name) ||
        !add_string(o, "instance_type", ns_labels_get(l, NS_LABEL_INSTANCE_TYPE)) ||
        !add_string(o, "zone", ns_labels_get(l, NS_LABEL_ZONE)) ||
        !add_string(o, "capacity_type", ns_labels_get(l, NS_LABEL_CAPACITY_TYPE)) ||
        !cJSON_AddNumberToObject(o, "price_per_hour", claim_price(claim)) ||
        !add_string(o, "provider_id", claim->provider_id) ||
        !add_string(o, "disruption", ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD)) ||
        !add_string(o, "drifted", drift_reason(claim)) || !add_conditions(o, &claim->conditions) ||
        !add_labels(o, "annotations", &claim->meta.annotations)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Pods: totals and the names of the pending ones. */
static bool add_pods(cJSON *state, const ns_cluster *c)
{
    size_t total = 0, placed = 0, pending = 0;
    cJSON *names = cJSON_AddArrayToObject(state, "pending");
    if (!names)
        return false;
    for (size_t i = 0; i < c->n_pods; i++) {
        const ns_pod *p = c->pods[i];
        if (ns_engine_pod_is_daemon(p))
            continue;
        total++;
        if (ns_sched_pod_is_pending(p)) {
            char ref[512];
            ns_engine_pod_ref(p, ref, sizeof(ref));
            if (pending++ < STATE_MAX_PENDING_NAMES && !cJSON_AddItemToArray(names, cJSON_CreateString(ref)))
                return false;
        } else if (p->node_name) {
            placed++;
        }
    }
    return cJSON_AddNumberToObject(state, "pods_total", (double)total) &&
           cJSON_AddNumberToObject(state, "pods_placed", (double)placed) &&
           cJSON_AddNumberToObject(state, "pods_pending", (double)pending);
}

/* VolumeAttachments: name, node, persistent volume (empty for an inline volume). */
static bool add_volume_attachments(cJSON *state, const ns_cluster *c)
{
    cJSON *list = cJSON_AddArrayToObject(state, "volume_attachments");
    bool ok = list != NULL;
    for (size_t i = 0; ok && i < c->n_volume_attachments; i++) {
        const ns_volume_attachment *va = c->volume_attachments[i];
        cJSON *o = cJSON_CreateObject();
        ok = o && cJSON_AddItemToArray(list, o) && add_string(o, "name", va->meta.name) &&
             add_string(o, "node", va->node_name) && add_string(o, "persistent_volume", va->pv_name);
    }
    return ok;
}

/* Warm headroom, when a CapacityBuffer asks for chunks (engine.h's sample fields). */
static bool add_headroom(cJSON *state, const ns_engine_sample *s)
{
    if (!s->headroom_wanted)
        return true;
    cJSON *h = cJSON_AddObjectToObject(state, "headroom");
    return h && cJSON_AddNumberToObject(h, "wanted", (double)s->headroom_wanted) &&
           cJSON_AddNumberToObject(h, "placed", (double)s->headroom_placed) &&
           cJSON_AddNumberToObject(h, "ready", (double)s->headroom_ready) &&
           cJSON_AddNumberToObject(h, "cost_per_hour", s->headroom_cost_per_hour);
}

cJSON *ns_timeline_state(ns_engine *e, int64_t start_ms)
{
    const ns_cluster *c = ns_engine_cluster(e);
    int64_t now = ns_clock_now_ms();
    char when[32];
    ns_clock_format_rfc3339(now, when, sizeof(when));
    ns_engine_sample sample;
    ns_engine_sample_now(e, &sample);
    cJSON *state = cJSON_CreateObject(), *nodes, *claims;
    bool ok = state && cJSON_AddNumberToObject(state, "time_s", (double)(now - start_ms) / 1000.0) &&
              add_string(state, "time", when) && (nodes = cJSON_AddArrayToObject(state, "nodes")) &&
              (claims = cJSON_AddArrayToObject(state, "nodeclaims"));
    for (size_t i = 0; ok && i < c->n_nodes; i++) {
        cJSON *n = node_json(e, c->nodes[i]);
        ok = n && cJSON_AddItemToArray(nodes, n);
    }
    for (size_t i = 0; ok && i < c->n_nodeclaims; i++) {
        cJSON *cl = claim_json(c->nodeclaims[i]);
        ok = cl && cJSON_AddItemToArray(claims, cl);
    }
    ok = ok && add_pods(state, c) && add_volume_attachments(state, c) &&
         cJSON_AddNumberToObject(state, "cost_per_hour", sample.cost_per_hour) && add_headroom(state, &sample);
    if (!ok) {
        cJSON_Delete(state);
        NS_FAIL(NS_ERR_INTERNAL, "out of memory recording the state of the cluster");
        return NULL;
    }
    return state;
}
