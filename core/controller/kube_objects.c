/* Model objects into API JSON. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "controller/kube_objects.h"
#include "errors/ns_error.h"
#include "model/duration.h"
#include "model/model_json.h"

static cJSON *oom(cJSON *partial, const char *what)
{
    cJSON_Delete(partial);
    NS_FAIL(NS_ERR_INTERNAL, "out of memory writing %s as JSON", what);
    return NULL;
}

bool ns_kube_condition_add(cJSON *list, const char *type, const char *status, const char *reason, const char *message,
                           int64_t since_ms, int64_t generation)
{
    char when[64];
    ns_clock_format_rfc3339(since_ms, when, sizeof(when));
    cJSON *k = cJSON_CreateObject();
    return k && cJSON_AddItemToArray(list, k) && cJSON_AddStringToObject(k, "type", type) &&
           cJSON_AddStringToObject(k, "status", status) && cJSON_AddStringToObject(k, "reason", reason) &&
           cJSON_AddStringToObject(k, "message", message) && cJSON_AddStringToObject(k, "lastTransitionTime", when) &&
           (!generation || cJSON_AddNumberToObject(k, "observedGeneration", (double)generation));
}

static cJSON *conditions_json(const ns_conditions *c, int64_t generation)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < c->n; i++) {
        const ns_condition *k = &c->items[i];
        if (strcmp(k->type, "Ready") == 0)
            continue; /* the root condition is computed from the others (add_root_ready) */
        /* metav1.Condition requires a reason; Karpenter's True conditions carry their type as reason */
        const char *reason = k->reason && *k->reason ? k->reason : strcmp(k->status, "True") == 0 ? k->type
                                                                                                 : "Unknown";
        if (!ns_kube_condition_add(a, k->type, k->status, reason, k->message ? k->message : "", k->last_transition_ms,
                                   generation))
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
              cJSON_AddItemToObject(meta, "labels", ns_model_labels_json(&claim->meta.labels)) &&
              cJSON_AddItemToObject(meta, "annotations", ns_model_labels_json(&claim->meta.annotations)) &&
              cJSON_AddItemToObject(meta, "finalizers",
                                    ns_model_strings_json(claim->meta.finalizers, claim->meta.n_finalizers)) &&
              (owners = cJSON_AddArrayToObject(meta, "ownerReferences")) && (owner = cJSON_CreateObject()) &&
              cJSON_AddItemToArray(owners, owner) && cJSON_AddStringToObject(owner, "apiVersion", pool->api_version) &&
              cJSON_AddStringToObject(owner, "kind", pool->kind) && cJSON_AddStringToObject(owner, "name", pool->name) &&
              cJSON_AddStringToObject(owner, "uid", pool->uid) && cJSON_AddTrueToObject(owner, "blockOwnerDeletion") &&
              (spec = cJSON_AddObjectToObject(o, "spec")) &&
              cJSON_AddItemToObject(spec, "requirements", ns_model_requirements_json(claim->requirements, claim->n_requirements)) &&
              (ref = cJSON_AddObjectToObject(spec, "nodeClassRef")) &&
              cJSON_AddStringToObject(ref, "group", claim->nodeclass_ref.group ? claim->nodeclass_ref.group : "") &&
              cJSON_AddStringToObject(ref, "kind", claim->nodeclass_ref.kind ? claim->nodeclass_ref.kind : "") &&
              cJSON_AddStringToObject(ref, "name", claim->nodeclass_ref.name ? claim->nodeclass_ref.name : "");
    cJSON *res = NULL;
    if (ok && !ns_res_is_zero(&claim->requests))
        ok = (res = cJSON_AddObjectToObject(spec, "resources")) &&
             cJSON_AddItemToObject(res, "requests", ns_model_resources_json(&claim->requests));
    if (ok && claim->n_taints)
        ok = cJSON_AddItemToObject(spec, "taints", ns_model_taints_json(claim->taints, claim->n_taints));
    if (ok && claim->n_startup_taints)
        ok = cJSON_AddItemToObject(spec, "startupTaints",
                                   ns_model_taints_json(claim->startup_taints, claim->n_startup_taints));
    if (ok)
        ok = cJSON_AddStringToObject(spec, "expireAfter", ns_duration_format(claim->expire_after_ms, dur, sizeof(dur)));
    if (ok && claim->termination_grace_period_ms >= 0)
        ok = cJSON_AddStringToObject(spec, "terminationGracePeriod",
                                     ns_duration_format(claim->termination_grace_period_ms, dur, sizeof(dur)));
    return ok ? o : oom(o, "a NodeClaim");
}

/* operatorpkg's root condition: Ready is True once Launched, Registered and Initialized are; otherwise False when one
 * of them is False, else Unknown, with that condition's reason. */
static bool add_root_ready(cJSON *list, const ns_conditions *c, int64_t generation)
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
    return ns_kube_condition_add(list, "Ready", status, reason, "", when ? when : ns_clock_now_ms(), generation);
}

cJSON *ns_kube_nodeclaim_status_json(const ns_nodeclaim *claim)
{
    cJSON *o = cJSON_CreateObject(), *st = NULL, *conds = NULL;
    bool ok = o && (st = cJSON_AddObjectToObject(o, "status")) &&
              (conds = conditions_json(&claim->conditions, claim->meta.generation)) &&
              cJSON_AddItemToObject(st, "conditions", conds) &&
              add_root_ready(conds, &claim->conditions, claim->meta.generation);
    if (ok && claim->provider_id)
        ok = cJSON_AddStringToObject(st, "providerID", claim->provider_id);
    if (ok && claim->node_name)
        ok = cJSON_AddStringToObject(st, "nodeName", claim->node_name);
    if (ok && claim->image_id)
        ok = cJSON_AddStringToObject(st, "imageID", claim->image_id);
    if (ok && !ns_res_is_zero(&claim->capacity))
        ok = cJSON_AddItemToObject(st, "capacity", ns_model_resources_json(&claim->capacity));
    if (ok && !ns_res_is_zero(&claim->allocatable))
        ok = cJSON_AddItemToObject(st, "allocatable", ns_model_resources_json(&claim->allocatable));
    return ok ? o : oom(o, "a NodeClaim's status");
}

cJSON *ns_kube_node_json(const ns_node *node)
{
    cJSON *o = cJSON_CreateObject(), *meta = NULL, *spec = NULL;
    bool ok = o && cJSON_AddStringToObject(o, "apiVersion", "v1") && cJSON_AddStringToObject(o, "kind", "Node") &&
              (meta = cJSON_AddObjectToObject(o, "metadata")) &&
              cJSON_AddStringToObject(meta, "name", node->meta.name) &&
              cJSON_AddItemToObject(meta, "labels", ns_model_labels_json(&node->meta.labels)) &&
              cJSON_AddItemToObject(meta, "annotations", ns_model_labels_json(&node->meta.annotations)) &&
              (spec = cJSON_AddObjectToObject(o, "spec")) &&
              cJSON_AddItemToObject(spec, "taints", ns_model_taints_json(node->taints, node->n_taints));
    if (ok && node->meta.n_finalizers)
        ok = cJSON_AddItemToObject(meta, "finalizers", ns_model_strings_json(node->meta.finalizers,
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
              cJSON_AddItemToObject(st, "capacity", ns_model_resources_json(&node->capacity)) &&
              cJSON_AddItemToObject(st, "allocatable", ns_model_resources_json(&node->allocatable)) &&
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
