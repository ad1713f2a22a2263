/* CapacityBuffer status: resolution, replicas and the Provisioning condition, written when they change. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "controller/buffer_status.h"
#include "controller/kube_objects.h"
#include "controller/status_table.h"
#include "errors/ns_error.h"
#include "kube/kube_writes.h"
#include "log/ns_log.h"

/* A condition as last judged: its status and since when it has had it. */
typedef struct judged {
    bool set, status;
    char reason[48];
    char message[160];
    int64_t since_ms;
} judged;

typedef struct written {
    ns_status_entry e; /* key "namespace/name", the status last written */
    judged ready, provisioning;
    bool seen; /* in this pass: a buffer deleted (and perhaps created again) starts over */
    bool warned; /* what its spec warns about was logged, for warned_generation */
    int64_t warned_generation;
} written;

struct ns_buffer_status {
    ns_status_table t;
};

ns_buffer_status *ns_buffer_status_new(void)
{
    ns_buffer_status *s = calloc(1, sizeof(*s));
    if (!s)
        NS_FAIL(NS_ERR_INTERNAL, "out of memory keeping CapacityBuffer status");
    else
        ns_status_table_init(&s->t, sizeof(written), NULL);
    return s;
}

void ns_buffer_status_free(ns_buffer_status *s)
{
    if (!s)
        return;
    ns_status_table_free(&s->t);
    free(s);
}

/* Judges a condition now; the transition time moves only when its status changes. */
static void judge(judged *j, bool status, const char *reason, const char *message, int64_t now)
{
    if (!j->set || j->status != status)
        j->since_ms = now;
    j->set = true;
    j->status = status;
    snprintf(j->reason, sizeof(j->reason), "%s", reason);
    snprintf(j->message, sizeof(j->message), "%s", message);
}

/* A condition as Karpenter's SetCondition writes it, observedGeneration the buffer's generation. */
static bool add_condition(cJSON *list, const char *type, const judged *j, int64_t generation)
{
    return ns_kube_condition_add(list, type, j->status ? "True" : "False", j->reason, j->message, j->since_ms,
                                 generation);
}

/* The Provisioning condition from the last round's placement of the buffer's chunks (unchanged when none). */
static void judge_provisioning(written *w, const ns_engine *e, const ns_buffer *b, bool ready, int64_t replicas,
                               int64_t now)
{
    char msg[160];
    ns_engine_buffer_chunks k;
    if (!ready) {
        judge(&w->provisioning, false, "NotReadyForProvisioning", "Buffer is not ReadyForProvisioning", now);
    } else if (replicas == 0) {
        judge(&w->provisioning, false, "BufferEmpty", "Buffer has zero desired replicas", now);
    } else if (ns_engine_buffer_placement(e, b->meta.namespace_, b->meta.name, &k)) {
        if (k.new_capacity || k.failed) {
            snprintf(msg, sizeof(msg), "%zu/%zu virtual pods required new capacity, %zu failed", k.new_capacity,
                     k.wanted, k.failed);
            judge(&w->provisioning, false, "RequiresNewCapacity", msg, now);
        } else if (k.existing == k.wanted && k.wanted) {
            snprintf(msg, sizeof(msg), "All %zu virtual pods fit on existing capacity", k.wanted);
            judge(&w->provisioning, true, "FitsExistingCapacity", msg, now);
        }
    }
}

/* Karpenter's message for the object a buffer names and the cluster has not: the API server's NotFound text. */
static void not_found(const ns_buffer *b, char *msg, size_t len)
{
    if (b->pod_template) {
        snprintf(msg, len, "podtemplates \"%s\" not found", b->pod_template);
        return;
    }
    char plural[32];
    size_t i = 0;
    for (; b->scalable_kind[i] && i + 2 < sizeof(plural); i++)
        plural[i] = (char)(b->scalable_kind[i] >= 'A' && b->scalable_kind[i] <= 'Z' ? b->scalable_kind[i] + 32
                                                                                    : b->scalable_kind[i]);
    plural[i] = '\0';
    snprintf(msg, len, "%ss.apps \"%s\" not found", plural, b->scalable_name);
}

/* A resolved buffer's template, as Karpenter records it: the PodTemplate's name and the generation of it resolved for a
 * podTemplateRef; for a scalableRef neither (null removes what a podTemplateRef the buffer had before left). */
static bool add_template(cJSON *st, const ns_cluster *c, const ns_buffer *b)
{
    if (!b->pod_template)
        return cJSON_AddNullToObject(st, "podTemplateRef") && cJSON_AddNullToObject(st, "podTemplateGeneration");
    const ns_pod_template *t = ns_cluster_find_pod_template(c, b->meta.namespace_, b->pod_template);
    cJSON *ref = cJSON_AddObjectToObject(st, "podTemplateRef");
    return t && ref && cJSON_AddStringToObject(ref, "name", b->pod_template) &&
           cJSON_AddNumberToObject(st, "podTemplateGeneration", (double)t->meta.generation);
}

/* {"status": {...}} for buffer b; ready: its PodTemplate (its scalableRef's workload) is in c. NULL on allocation
 * failure. */
static cJSON *status_of(written *w, const ns_engine *e, const ns_cluster *c, const ns_buffer *b, bool ready,
                        int64_t now)
{
    int32_t scalable_replicas = 0;
    const ns_pod *t = ready ? ns_cluster_buffer_shape(c, b, &scalable_replicas) : NULL;
    int64_t replicas = t ? ns_buffer_chunks(b, t, scalable_replicas) : 0;
    char msg[160];
    if (t) {
        judge(&w->ready, true, "Resolved", "Pod template resolved successfully", now);
    } else if (b->resolution_failed) {
        judge(&w->ready, false, "ResolutionFailed", b->resolution_failed, now);
    } else {
        not_found(b, msg, sizeof(msg));
        judge(&w->ready, false, b->pod_template ? "PodTemplateNotFound" : "ScalableRefNotFound", msg, now);
    }
    judge_provisioning(w, e, b, t != NULL, replicas, now);
    cJSON *o = cJSON_CreateObject(), *st = cJSON_AddObjectToObject(o, "status"), *conds = NULL;
    bool ok = st && cJSON_AddStringToObject(st, "provisioningStrategy", NS_BUFFER_ACTIVE_STRATEGY) &&
              (!t || (cJSON_AddNumberToObject(st, "replicas", (double)replicas) && add_template(st, c, b))) &&
              (conds = cJSON_AddArrayToObject(st, "conditions")) &&
              add_condition(conds, "ReadyForProvisioning", &w->ready, b->meta.generation) &&
              (!w->provisioning.set || add_condition(conds, "Provisioning", &w->provisioning, b->meta.generation));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

bool ns_buffer_warn_due(bool *warned, int64_t *generation, const ns_buffer *b)
{
    bool something = b->resolution_failed || (b->pod_template && b->has_percentage);
    if (!something || (*warned && *generation == b->meta.generation))
        return false;
    *warned = true;
    *generation = b->meta.generation;
    return true;
}

/* With Karpenter's reconciler's fields for the buffer (controller-runtime's): the resolver's error with its reason, or
 * the ignored percentage. */
static void warn_buffer(const ns_buffer *b)
{
    const char *ns = b->meta.namespace_ ? b->meta.namespace_ : "default";
    cJSON *f = cJSON_CreateObject();
    bool ok = f && cJSON_AddStringToObject(f, "controller", "capacitybuffer") &&
              cJSON_AddStringToObject(f, "controllerGroup", "autoscaling.x-k8s.io") &&
              cJSON_AddStringToObject(f, "controllerKind", "CapacityBuffer") &&
              cJSON_AddItemToObject(f, "CapacityBuffer", ns_log_ref(ns, b->meta.name)) &&
              cJSON_AddStringToObject(f, "namespace", ns) && cJSON_AddStringToObject(f, "name", b->meta.name) &&
              (!b->resolution_failed || (cJSON_AddStringToObject(f, "reason", "ResolutionFailed") &&
                                         cJSON_AddStringToObject(f, "error", b->resolution_failed)));
    if (ok)
        ns_log_json(NS_LOG_WARN, "controller",
                    b->resolution_failed ? NS_BUFFER_UNRESOLVABLE_MESSAGE : NS_BUFFER_PERCENTAGE_IGNORED_MESSAGE, f);
    else
        cJSON_Delete(f);
}

static int sync_one(ns_buffer_status *s, ns_kube_client *client, ns_mirror *mirror, const ns_engine *e,
                    const ns_cluster *c, const ns_buffer *b, bool ready, int64_t now)
{
    char key[2 * NS_NAME_MAX + 2];
    snprintf(key, sizeof(key), "%s/%s", b->meta.namespace_ ? b->meta.namespace_ : "default", b->meta.name);
    written *w = ns_status_table_find(&s->t, key);
    if (w)
        w->seen = true;
    if (w && ns_buffer_warn_due(&w->warned, &w->warned_generation, b))
        warn_buffer(b);
    cJSON *st = w ? status_of(w, e, c, b, ready, now) : NULL, *out = NULL;
    char *body = st ? cJSON_PrintUnformatted(st) : NULL;
    int rc = body ? 0 : NS_FAIL(NS_ERR_INTERNAL, "out of memory writing CapacityBuffer %s's status", key);
    if (rc == 0 && ns_status_changed(&w->e, body)) {
        rc = ns_kube_patch(client, &NS_KUBE_CAPACITYBUFFERS, b->meta.namespace_, b->meta.name, "status",
                           NS_KUBE_MERGE_PATCH, st, NULL, NULL, &out);
        if (rc == 0) {
            const cJSON *rv =
                cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "metadata"), "resourceVersion");
            ns_mirror_floor(mirror, NS_MIRROR_CAPACITYBUFFER, b->meta.namespace_, b->meta.name,
                            cJSON_IsString(rv) ? rv->valuestring : NULL);
            ns_status_keep(&w->e, &body);
        } else {
            rc = ns_error_prefix("writing CapacityBuffer %s's status: ", key);
        }
    }
    free(body);
    cJSON_Delete(st);
    cJSON_Delete(out);
    return rc;
}

int ns_buffer_status_sync(ns_buffer_status *s, ns_kube_client *client, ns_mirror *mirror, const ns_engine *e,
                          const ns_cluster *c)
{
    int64_t now = ns_clock_now_ms();
    int first = 0;
    for (size_t i = 0; i < s->t.n; i++)
        ((written *)ns_status_table_at(&s->t, i))->seen = false;
    size_t n_held = 0;
    ns_buffer *const *held = ns_mirror_held_buffers(mirror, &n_held);
    for (size_t i = 0; i < c->n_buffers + n_held; i++) {
        bool ready = i < c->n_buffers;
        int rc = sync_one(s, client, mirror, e, c, ready ? c->buffers[i] : held[i - c->n_buffers], ready, now);
        if (rc < 0 && first == 0)
            first = rc;
    }
    for (size_t i = s->t.n; i-- > 0;)
        if (!((written *)ns_status_table_at(&s->t, i))->seen)
            ns_status_table_remove(&s->t, i);
    return first;
}
