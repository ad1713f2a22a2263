/* Model objects into API JSON. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "controller/kube_objects.h"
#include "errors/ns_error.h"
#include "model/duration.h"
#include "model/quantity.h"
#include "model/requirements.h"

static cJSON *oom(cJSON *partial, const char *what)
{
    cJSON_Delete(partial);
    NS_FAIL(NS_ERR_INTERNAL, "out of memory writing %s as JSON", what);
    return NULL;
}

cJSON *ns_kube_labels_json(const ns_labels *l)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; o && i < l->n; i++)
        if (!cJSON_AddStringToObject(o, l->items[i].key, l->items[i].value ? l->items[i].value : ""))
            return oom(o, "labels");
    return o ? o : oom(NULL, "labels");
}

cJSON *ns_kube_strings_json(char *const *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        if (!cJSON_AddItemToArray(a, cJSON_CreateString(v[i])))
            return oom(a, "a list");
    return a ? a : oom(NULL, "a list");
}

cJSON *ns_kube_taints_json(const ns_taint *t, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(a, o) || !cJSON_AddStringToObject(o, "key", t[i].key) ||
            (t[i].value && *t[i].value && !cJSON_AddStringToObject(o, "value", t[i].value)) ||
            !cJSON_AddStringToObject(o, "effect", t[i].effect ? t[i].effect : ""))
            return oom(a, "taints");
    }
    return a ? a : oom(NULL, "taints");
}

static bool add_quantity(cJSON *o, const char *name, int64_t v, int scale, bool binary)
{
    char q[48];
    return cJSON_AddStringToObject(o, name, ns_quantity_format(v, scale, binary, q, sizeof(q))) != NULL;
}

cJSON *ns_kube_resources_json(const ns_res *r)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    if (ok && r->cpu_milli)
        ok = add_quantity(o, NS_RES_CPU, r->cpu_milli, NS_QTY_MILLI, false);
    if (ok && r->memory_bytes)
        ok = add_quantity(o, NS_RES_MEMORY, r->memory_bytes, NS_QTY_UNITS, true);
    if (ok && r->pods)
        ok = add_quantity(o, NS_RES_PODS, r->pods, NS_QTY_UNITS, false);
    if (ok && r->ephemeral_storage_bytes)
        ok = add_quantity(o, NS_RES_EPHEMERAL_STORAGE, r->ephemeral_storage_bytes, NS_QTY_UNITS, true);
    for (uint32_t i = 0; ok && i < r->n_ext; i++)
        ok = add_quantity(o, r->ext[i].name, r->ext[i].value, NS_QTY_UNITS, false);
    return ok ? o : oom(o, "resources");
}

static cJSON *requirements_json(const ns_selector_req *r, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(a, o) || !cJSON_AddStringToObject(o, "key", r[i].key) ||
            !cJSON_AddStringToObject(o, "operator", ns_req_op_name(r[i].op)) ||
            (r[i].n_values && !cJSON_AddItemToObject(o, "values", ns_kube_strings_json(r[i].values, r[i].n_values))) ||
            (r[i].min_values && !cJSON_AddNumberToObject(o, "minValues", r[i].min_values)))
            return oom(a, "requirements");
    }
    return a ? a : oom(NULL, "requirements");
}

static cJSON *conditions_json(const ns_conditions *c)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < c->n; i++) {
        const ns_condition *k = &c->items[i];
        if (strcmp(k->type, "Ready") == 0)
            continue; /* the root condition is computed from the others (add_root_ready) */
        char when[64];
        ns_clock_format_rfc3339(k->last_transition_ms, when, sizeof(when));
        /* metav1.Condition requires a reason; Karpenter's True conditions carry their type as reason */
        const char *reason = k->reason && *k->reason ? k->reason : strcmp(k->status, "True") == 0 ? k->type
                                                                                                 : "Unknown";
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(a, o) || !cJSON_AddStringToObject(o, "type", k->type) ||
            !cJSON_AddStringToObject(o, "status", k->status) || !cJSON_AddStringToObject(o, "reason", reason) ||
            !cJSON_AddStringToObject(o, "message", k->message ? k->message : "") ||
            !cJSON_AddStringToObject(o, "lastTransitionTime", when))
            return oom(a, "conditions");
    }
    return a ? a : oom(NULL, "conditions");
}

cJSON *ns_kube_nodeclaim_json(const ns_nodeclaim *claim, const ns_kube_owner *pool)
{
    char gen[300], dur[64];
    snprintf(gen, sizeof(gen), "%s-", pool->name);
    cJSON *o = cJSON_CreateObject(), *meta = NULL, *spec = NULL, *owners = NULL, *owner = NULL, *ref = NULL;
    bool ok = o && cJSON_AddStringToObject(o, "apiVersion", "karpenter.sh/v1") &&
              cJSON_AddStringToObject(o, "kind", "NodeClaim") && (meta = cJSON_AddObjectToObject(o, "metadata")) &&
              cJSON_AddStringToObject(meta, "generateName", gen) &&
              cJSON_AddItemToObject(meta, "labels", ns_kube_labels_json(&claim->meta.labels)) &&
              cJSON_AddItemToObject(meta, "annotations", ns_kube_labels_json(&claim->meta.annotations)) &&
              cJSON_AddItemToObject(meta, "finalizers",
                                    ns_kube_strings_json(claim->meta.finalizers, claim->meta.n_finalizers)) &&
              (owners = cJSON_AddArrayToObject(meta, "ownerReferences")) && (owner = cJSON_CreateObject()) &&
              cJSON_AddItemToArray(owners, owner) && cJSON_AddStringToObject(owner, "apiVersion", pool->api_version) &&
              cJSON_AddStringToObject(owner, "kind", pool->kind) && cJSON_AddStringToObject(owner, "name", pool->name) &&
              cJSON_AddStringToObject(owner, "uid", pool->uid) && cJSON_AddTrueToObject(owner, "blockOwnerDeletion") &&
              (spec = cJSON_AddObjectToObject(o, "spec")) &&
              cJSON_AddItemToObject(spec, "requirements", requirements_json(claim->requirements, claim->n_requirements)) &&
              (ref = cJSON_AddObjectToObject(spec, "nodeClassRef")) &&
              cJSON_AddStringToObject(ref, "group", claim->nodeclass_ref.group ? claim->nodeclass_ref.group : "") &&
              cJSON_AddStringToObject(ref, "kind", claim->nodeclass_ref.kind ? claim->nodeclass_ref.kind : "") &&
              cJSON_AddStringToObject(ref, "name", claim->nodeclass_ref.name ? claim->nodeclass_ref.name : "");
    cJSON *res = NULL;
    if (ok && !ns_res_is_zero(&claim->requests))
        ok = (res = cJSON_AddObjectToObject(spec, "resources")) &&
             cJSON_AddItemToObject(res, "requests", ns_kube_resources_json(&claim->requests));
    if (ok && claim->n_taints)
        ok = cJSON_AddItemToObject(spec, "taints", ns_kube_taints_json(claim->taints, claim->n_taints));
    if (ok && claim->n_startup_taints)
        ok = cJSON_AddItemToObject(spec, "startupTaints",
                                   ns_kube_taints_json(claim->startup_taints, claim->n_startup_taints));
    if (ok)
        ok = cJSON_AddStringToObject(spec, "expireAfter", ns_duration_format(claim->expire_after_ms, dur, sizeof(dur)));
    if (ok && claim->termination_grace_period_ms >= 0)
        ok = cJSON_AddStringToObject(spec, "terminationGracePeriod",
                                     ns_duration_format(claim->termination_grace_period_ms, dur, sizeof(dur)));
    return ok ? o : oom(o, "a NodeClaim");
}

/* operatorpkg's root condition: Ready is True once Launched, Registered and Initialized are; otherwise False when one
 * of them is False, else Unknown, with that condition's reason. */
static bool add_root_ready(cJSON *list, const ns_conditions *c)
{
    static const char *const deps[] = {"Launched", "Registered", "Initialized"};
    const char *status = "True", *reason = "Ready";
    int64_t when = 0;
    for (size_t i = 0; i < 3; i++) {
        const ns_condition *k = ns_conditions_get(c, deps[i]);
        if (k && k->last_transition_ms > when)
            when = k->last_transition_ms;
        if (k && strcmp(k->status, "True") == 0)
            continue;
        bool is_false = k && strcmp(k->status, "False") == 0;
        if (strcmp(status, "True") == 0 || (is_false && strcmp(status, "False") != 0)) {
            status = is_false ? "False" : "Unknown";
            reason = k && k->reason && *k->reason ? k->reason : deps[i];
        }
    }
    char at[64];
    ns_clock_format_rfc3339(when ? when : ns_clock_now_ms(), at, sizeof(at));
    cJSON *o = cJSON_CreateObject();
    return o && cJSON_AddItemToArray(list, o) && cJSON_AddStringToObject(o, "type", "Ready") &&
           cJSON_AddStringToObject(o, "status", status) && cJSON_AddStringToObject(o, "reason", reason) &&
           cJSON_AddStringToObject(o, "message", "") && cJSON_AddStringToObject(o, "lastTransitionTime", at);
}

cJSON *ns_kube_nodeclaim_status_json(const ns_nodeclaim *claim)
{
    cJSON *o = cJSON_CreateObject(), *st = NULL, *conds = NULL;
    bool ok = o && (st = cJSON_AddObjectToObject(o, "status")) && (conds = conditions_json(&claim->conditions)) &&
              cJSON_AddItemToObject(st, "conditions", conds) && add_root_ready(conds, &claim->conditions);
    if (ok && claim->provider_id)
        ok = cJSON_AddStringToObject(st, "providerID", claim->provider_id);
    if (ok && claim->node_name)
        ok = cJSON_AddStringToObject(st, "nodeName", claim->node_name);
    if (ok && claim->image_id)
        ok = cJSON_AddStringToObject(st, "imageID", claim->image_id);
    if (ok && !ns_res_is_zero(&claim->capacity))
        ok = cJSON_AddItemToObject(st, "capacity", ns_kube_resources_json(&claim->capacity));
    if (ok && !ns_res_is_zero(&claim->allocatable))
        ok = cJSON_AddItemToObject(st, "allocatable", ns_kube_resources_json(&claim->allocatable));
    return ok ? o : oom(o, "a NodeClaim's status");
}

cJSON *ns_kube_node_json(const ns_node *node)
{
    cJSON *o = cJSON_CreateObject(), *meta = NULL, *spec = NULL;
    bool ok = o && cJSON_AddStringToObject(o, "apiVersion", "v1") && cJSON_AddStringToObject(o, "kind", "Node") &&
              (meta = cJSON_AddObjectToObject(o, "metadata")) &&
              cJSON_AddStringToObject(meta, "name", node->meta.name) &&
              cJSON_AddItemToObject(meta, "labels", ns_kube_labels_json(&node->meta.labels)) &&
              cJSON_AddItemToObject(meta, "annotations", ns_kube_labels_json(&node->meta.annotations)) &&
              (spec = cJSON_AddObjectToObject(o, "spec")) &&
              cJSON_AddItemToObject(spec, "taints", ns_kube_taints_json(node->taints, node->n_taints));
    if (ok && node->meta.n_finalizers)
        ok = cJSON_AddItemToObject(meta, "finalizers", ns_kube_strings_json(node->meta.finalizers,
                                                                            node->meta.n_finalizers));
    if (ok && node->provider_id)
        ok = cJSON_AddStringToObject(spec, "providerID", node->provider_id);
    if (ok && node->unschedulable)
        ok = cJSON_AddTrueToObject(spec, "unschedulable");
    return ok ? o : oom(o, "a Node");
}

cJSON *ns_kube_node_status_json(const ns_node *node, int64_t now_ms)
{
    char now[64], since[64];
    ns_clock_format_rfc3339(now_ms, now, sizeof(now));
    ns_clock_format_rfc3339(node->ready_since_ms ? node->ready_since_ms : now_ms, since, sizeof(since));
    cJSON *o = cJSON_CreateObject(), *st = NULL, *conds = NULL, *ready = NULL;
    bool ok = o && (st = cJSON_AddObjectToObject(o, "status")) &&
              cJSON_AddItemToObject(st, "capacity", ns_kube_resources_json(&node->capacity)) &&
              cJSON_AddItemToObject(st, "allocatable", ns_kube_resources_json(&node->allocatable)) &&
              (conds = cJSON_AddArrayToObject(st, "conditions")) && (ready = cJSON_CreateObject()) &&
              cJSON_AddItemToArray(conds, ready) && cJSON_AddStringToObject(ready, "type", "Ready") &&
              cJSON_AddStringToObject(ready, "status", node->ready ? "True" : "False") &&
              cJSON_AddStringToObject(ready, "reason", node->ready ? "KubeletReady" : "KubeletNotReady") &&
              cJSON_AddStringToObject(ready, "message", node->ready ? "kubelet is posting ready status"
                                                                    : "container runtime is starting") &&
              cJSON_AddStringToObject(ready, "lastHeartbeatTime", now) &&
              cJSON_AddStringToObject(ready, "lastTransitionTime", since);
    return ok ? o : oom(o, "a Node's status");
}
