/* Node classes' /status from the provider's nodeclass_status. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "controller/nodeclass_status.h"
#include "controller/status_table.h"
#include "errors/ns_error.h"
#include "kube/kube_resource.h"
#include "kube/kube_writes.h"
#include "log/ns_log.h"
#include "model/nodeclass.h"

typedef struct known {
    ns_status_entry e; /* key "KIND/NAME", the status last written without times */
    char *spec;        /* the spec last resolved */
    int64_t resolved_ms;
    bool unsupported;
    cJSON *times; /* {"TYPE": ["STATUS", "TIME"]} of the conditions last written; NULL before the first */
} known;

struct ns_nodeclass_status {
    ns_status_table t;
};

static void clear_known(void *entry)
{
    known *k = entry;
    free(k->spec);
    cJSON_Delete(k->times);
}

ns_nodeclass_status *ns_nodeclass_status_new(void)
{
    ns_nodeclass_status *s = calloc(1, sizeof(*s));
    if (!s)
        NS_FAIL(NS_ERR_INTERNAL, "out of memory keeping node-class status");
    else
        ns_status_table_init(&s->t, sizeof(known), clear_known);
    return s;
}

void ns_nodeclass_status_free(ns_nodeclass_status *s)
{
    if (!s)
        return;
    ns_status_table_free(&s->t);
    free(s);
}

/* Each condition's observedGeneration is the class's generation (none at 0, as omitempty does); set before the status
 * is compared with the last one written, so that a new generation is written even when nothing else changed. */
static int observe(cJSON *status, const ns_nodeclass_def *def)
{
    cJSON *cond;
    cJSON_ArrayForEach(cond, cJSON_GetObjectItemCaseSensitive(status, "conditions")) {
        if (def->meta.generation &&
            !cJSON_AddNumberToObject(cond, "observedGeneration", (double)def->meta.generation))
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory writing %s %s's conditions", def->kind, def->meta.name);
    }
    return 0;
}

/* Stamps each condition's lastTransitionTime (kept while its status is unchanged) and records the stamps. */
static int stamp(known *k, cJSON *status, int64_t now_ms)
{
    char now[64];
    ns_clock_format_rfc3339(now_ms, now, sizeof(now));
    cJSON *times = cJSON_CreateObject(), *cond;
    if (!times)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory stamping node-class conditions");
    cJSON_ArrayForEach(cond, cJSON_GetObjectItemCaseSensitive(status, "conditions")) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(cond, "type");
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(cond, "status");
        if (!cJSON_IsString(type) || !cJSON_IsString(st))
            continue;
        const cJSON *prev = cJSON_GetObjectItemCaseSensitive(k->times, type->valuestring);
        const cJSON *ps = cJSON_GetArrayItem(prev, 0), *pt = cJSON_GetArrayItem(prev, 1);
        const char *when = cJSON_IsString(ps) && cJSON_IsString(pt) && strcmp(ps->valuestring, st->valuestring) == 0
                               ? pt->valuestring : now;
        cJSON *pair = cJSON_CreateArray();
        if (!pair || !cJSON_AddItemToObject(times, type->valuestring, pair) ||
            !cJSON_AddItemToArray(pair, cJSON_CreateString(st->valuestring)) ||
            !cJSON_AddItemToArray(pair, cJSON_CreateString(when)) ||
            !cJSON_AddStringToObject(cond, "lastTransitionTime", when)) {
            cJSON_Delete(times);
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory stamping node-class conditions");
        }
    }
    cJSON_Delete(k->times);
    k->times = times;
    return 0;
}

static int write_status(ns_kube_client *client, const ns_nodeclass_def *def, cJSON *status)
{
    char group[128], buf[256];
    const char *slash = strchr(def->api_version, '/');
    ns_kube_resource r;
    int rc = ns_kube_resource_nodeclass(ns_api_group(def->api_version, group, sizeof(group)),
                                        slash ? slash + 1 : def->api_version, def->kind, buf, sizeof(buf), &r);
    cJSON *patch = rc == 0 ? cJSON_CreateObject() : NULL;
    if (rc == 0 && (!patch || !cJSON_AddItemReferenceToObject(patch, "status", status)))
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory writing %s %s's status", def->kind, def->meta.name);
    if (rc == 0)
        rc = ns_kube_patch(client, &r, NULL, def->meta.name, "status", NS_KUBE_MERGE_PATCH, patch, NULL, NULL, NULL);
    cJSON_Delete(patch);
    return rc;
}

/* Resolves one class when due and writes its status when it changed. */
static int sync_one(ns_nodeclass_status *s, ns_plugin *plugin, ns_kube_client *client, const ns_nodeclass_def *def,
                    int64_t now)
{
    char key[400];
    snprintf(key, sizeof(key), "%s/%s", def->kind, def->meta.name);
    char *spec = cJSON_PrintUnformatted(def->spec);
    known *k = spec ? ns_status_table_find(&s->t, key) : NULL;
    if (!k) {
        free(spec);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory keeping %s's status", key);
    }
    bool changed = !k->spec || strcmp(k->spec, spec) != 0;
    if (!changed && (k->unsupported || now - k->resolved_ms < NS_NODECLASS_STATUS_REFRESH_MS)) {
        free(spec);
        return 0;
    }
    free(k->spec);
    k->spec = spec;
    k->resolved_ms = now;
    cJSON *status = NULL;
    int rc = ns_plugin_nodeclass_status(plugin, &def->abi, &status);
    k->unsupported = rc == NS_ERR_UNSUPPORTED;
    if (rc == NS_ERR_UNSUPPORTED) {
        ns_error_clear();
        return 0;
    }
    if (rc == 0)
        rc = observe(status, def);
    char *body = rc == 0 ? cJSON_PrintUnformatted(status) : NULL;
    if (rc == 0 && !body)
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory writing %s's status", key);
    if (rc == 0 && ns_status_changed(&k->e, body) && (rc = stamp(k, status, now)) == 0 &&
        (rc = write_status(client, def, status)) == 0)
        ns_status_keep(&k->e, &body);
    if (rc < 0)
        k->resolved_ms = 0; /* try again at the next pass */
    free(body);
    cJSON_Delete(status);
    return rc;
}

int ns_nodeclass_status_sync(ns_nodeclass_status *s, ns_plugin *plugin, ns_kube_client *client, const ns_cluster *c)
{
    int first = 0;
    int64_t now = ns_clock_now_ms();
    for (size_t i = 0; i < c->n_nodeclasses; i++) {
        int rc = sync_one(s, plugin, client, c->nodeclasses[i], now);
        if (rc < 0 && first == 0) {
            first = rc;
            ns_log(NS_LOG_ERROR, "nodeclass.status", "failed resolving node class status, keeping the old one",
                   "kind", c->nodeclasses[i]->kind, "name", c->nodeclasses[i]->meta.name, "error", ns_error_message(),
                   NULL);
        }
    }
    return first;
}
