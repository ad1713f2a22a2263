/* NodePool status: counts, resources and readiness, written when they change. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "controller/kube_objects.h"
#include "controller/nodepool_status.h"
#include "controller/status_table.h"
#include "engine/engine.h"
#include "errors/ns_error.h"
#include "kube/kube_writes.h"
#include "model/labels.h"

struct ns_nodepool_status {
    ns_status_table t; /* of ns_status_entry: the pool's name, the status last written */
    int64_t since_ms; /* the conditions' transition time: when this controller first judged them */
};

ns_nodepool_status *ns_nodepool_status_new(void)
{
    ns_nodepool_status *s = calloc(1, sizeof(*s));
    if (!s) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory keeping NodePool status");
    } else {
        s->since_ms = ns_clock_now_ms();
        ns_status_table_init(&s->t, sizeof(ns_status_entry), NULL);
    }
    return s;
}

void ns_nodepool_status_free(ns_nodepool_status *s)
{
    if (!s)
        return;
    ns_status_table_free(&s->t);
    free(s);
}

/* A True condition, its reason its type, observedGeneration the pool's generation: a spec edit changes what is written,
 * so the status is written again and tells readers that this generation was seen. */
static bool add_condition(cJSON *list, const char *type, const ns_nodepool *np, int64_t since_ms)
{
    return ns_kube_condition_add(list, type, "True", type, "", since_ms, np->meta.generation);
}

cJSON *ns_nodepool_status_json(const ns_nodepool *np, const ns_cluster *c, int64_t since_ms)
{
    ns_res total = {0};
    int64_t nodes = 0;
    for (size_t i = 0; i < c->n_nodeclaims; i++) {
        const ns_nodeclaim *claim = c->nodeclaims[i];
        const char *pool = ns_labels_get(&claim->meta.labels, NS_LABEL_NODEPOOL);
        if (!pool || strcmp(pool, np->meta.name) != 0 || claim->meta.deletion_ms)
            continue;
        nodes++;
        if (ns_res_add(&total, &claim->capacity) < 0) {
            ns_res_free(&total);
            return NULL;
        }
    }
    cJSON *o = cJSON_CreateObject(), *st = cJSON_AddObjectToObject(o, "status");
    cJSON *res = st ? ns_model_resources_json(&total) : NULL;
    ns_res_free(&total);
    cJSON *conds = NULL;
    char count[32];
    snprintf(count, sizeof(count), "%lld", (long long)nodes); /* resources.nodes is a quantity, as Karpenter writes it */
    bool ok = res && cJSON_AddStringToObject(res, "nodes", count) && cJSON_AddItemToObject(st, "resources", res) &&
              cJSON_AddNumberToObject(st, "nodes", (double)nodes) && (conds = cJSON_AddArrayToObject(st, "conditions")) &&
              add_condition(conds, "ValidationSucceeded", np, since_ms) &&
              add_condition(conds, "NodeClassReady", np, since_ms) && add_condition(conds, "Ready", np, since_ms);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int ns_nodepool_status_sync(ns_nodepool_status *s, ns_kube_client *client, ns_mirror *mirror, const ns_cluster *c)
{
    int first = 0;
    for (size_t i = 0; i < c->n_nodepools; i++) {
        const ns_nodepool *np = c->nodepools[i];
        if (np->converted_from_provisioner)
            continue; /* a Provisioner's status has none of a NodePool's fields, and there is no NodePool to write */
        cJSON *st = ns_nodepool_status_json(np, c, s->since_ms), *out = NULL;
        char *body = st ? cJSON_PrintUnformatted(st) : NULL;
        ns_status_entry *w = body ? ns_status_table_find(&s->t, np->meta.name) : NULL;
        int rc = w ? 0 : NS_FAIL(NS_ERR_INTERNAL, "out of memory writing NodePool %s's status", np->meta.name);
        if (rc == 0 && ns_status_changed(w, body)) {
            rc = ns_kube_patch(client, &NS_KUBE_NODEPOOLS, NULL, np->meta.name, "status", NS_KUBE_MERGE_PATCH, st,
                               NULL, NULL, &out);
            if (rc == 0) {
                const cJSON *rv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "metadata"),
                                                                   "resourceVersion");
                ns_mirror_floor(mirror, NS_MIRROR_NODEPOOL, NULL, np->meta.name,
                                cJSON_IsString(rv) ? rv->valuestring : NULL);
                ns_status_keep(w, &body);
            }
        }
        free(body);
        cJSON_Delete(st);
        cJSON_Delete(out);
        if (rc < 0 && first == 0)
            first = rc;
    }
    return first;
}
