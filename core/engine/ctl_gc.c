/*
 * Garbage collection (Karpenter's nodeclaim garbage collection): instances the provider lists that no NodeClaim owns
 * are terminated once older than the grace period; registered NodeClaims whose instance is gone are removed with their
 * Node (the pods come back pending through their controllers).
 *
 * As in Karpenter, a claim not registered yet is left to the registration TTL rather than to the provider's listing,
 * a claim already deleting to termination, and a claim whose Node is still Ready is left alone: its kubelet still
 * reports, so the instance is there whatever the listing says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/model_util.h"

typedef struct instances {
    ns_instance *items;
    size_t n, cap;
} instances;

static int collect(void *ctx, const ns_instance *inst)
{
    instances *v = ctx;
    if (ns_grow((void **)&v->items, &v->cap, v->n + 1, sizeof(*v->items)) < 0)
        return NS_ERR_INTERNAL;
    v->items[v->n++] = *inst;
    return 0;
}

/* Owned: a claim records its provider id, or (a launch whose result was not written yet, e.g. before a restart) a
 * claim of the instance's tagged name exists and will get it back through its client token. */
static bool owned(const ns_engine *e, const ns_instance *inst)
{
    for (size_t i = 0; i < e->cluster->n_nodeclaims; i++) {
        const ns_nodeclaim *c = e->cluster->nodeclaims[i];
        if (c->provider_id && strcmp(c->provider_id, inst->provider_id) == 0)
            return true;
        if (!ns_claim_launched(c) && inst->nodeclaim_name[0] && strcmp(c->meta.name, inst->nodeclaim_name) == 0)
            return true;
    }
    return false;
}

static bool listed(const instances *v, const char *pid)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->items[i].provider_id, pid) == 0)
            return true;
    return false;
}

static int orphans(ns_engine *e, const instances *v, int64_t now)
{
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < v->n; i++) {
        const ns_instance *inst = &v->items[i];
        if (owned(e, inst))
            continue;
        if (now - inst->launch_time_ms < e->cfg.orphan_gc_grace_ms) {
            ns_engine_due(e, inst->launch_time_ms + e->cfg.orphan_gc_grace_ms);
            continue;
        }
        bool already = false;
        ns_engine_busy(e);
        if (ns_plugin_terminate(e->plugin, inst->provider_id, &already) != NS_OK) {
            ns_log(NS_LOG_ERROR, "nodeclaim.garbagecollection", "failed terminating orphaned instance", "provider-id",
                   inst->provider_id, "error", ns_error_message(), NULL);
            continue;
        }
        char detail[1024];
        snprintf(detail, sizeof(detail), "%s %s/%s, tagged nodeclaim \"%s\"", inst->provider_id, inst->instance_type,
                 inst->zone, inst->nodeclaim_name);
        rc = ns_engine_record(e, NS_DECISION_GC_INSTANCE, "garbage collection", "no nodeclaim owns the instance", NULL,
                              NULL, NULL, detail);
    }
    return rc;
}

static int vanished(ns_engine *e, const char *name)
{
    ns_nodeclaim *claim = ns_cluster_find_nodeclaim(e->cluster, name);
    ns_node *n = claim ? ns_engine_node_of_claim(e, claim) : NULL;
    char node[NS_NAME_MAX] = "";
    int rc = NS_OK;
    if (n) {
        snprintf(node, sizeof(node), "%s", n->meta.name);
        rc = e->writes.ops->delete_node(e->writes.ctx, n);
    }
    claim = ns_cluster_find_nodeclaim(e->cluster, name);
    if (rc == NS_OK && claim)
        rc = ns_engine_delete_claim(e, claim, "garbage collection", "InstanceGone");
    claim = ns_cluster_find_nodeclaim(e->cluster, name);
    if (rc == NS_OK && claim)
        rc = e->writes.ops->remove_nodeclaim_finalizer(e->writes.ctx, claim, NS_FINALIZER_TERMINATION);
    return rc < 0 ? rc
                  : ns_engine_record(e, NS_DECISION_GC_NODECLAIM, "garbage collection",
                                     "its instance no longer exists", node[0] ? node : NULL, name, NULL, NULL);
}

static int lost_claims(ns_engine *e, const instances *v)
{
    size_t n = e->cluster->n_nodeclaims;
    char **names = calloc(n ? n : 1, sizeof(*names));
    if (!names)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory listing nodeclaims");
    size_t k = 0;
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < n; i++) {
        const ns_nodeclaim *c = e->cluster->nodeclaims[i];
        if (!ns_claim_launched(c) || !ns_claim_registered(c) || ns_claim_deleting(c) || listed(v, c->provider_id))
            continue;
        const ns_node *node = ns_engine_node_of_claim(e, c);
        if (node && node->ready)
            continue;
        /* Listing may lag a launch; ask for the instance itself before giving the claim up. */
        ns_instance inst;
        memset(&inst, 0, sizeof(inst));
        inst.struct_size = sizeof(inst);
        if (ns_plugin_get_instance(e->plugin, c->provider_id, &inst) != NS_ERR_NOT_FOUND) {
            ns_engine_busy(e); /* the listing lags: look again at the next step */
            continue;
        }
        if (!(names[k++] = ns_strdup(c->meta.name)))
            rc = NS_ERR_INTERNAL;
    }
    for (size_t i = 0; rc == NS_OK && i < k; i++)
        rc = vanished(e, names[i]);
    ns_strv_free(names, k);
    return rc;
}

int ns_ctl_gc(ns_engine *e)
{
    instances v = {0};
    int code = ns_plugin_list_instances(e->plugin, collect, &v);
    if (code != NS_OK) {
        ns_engine_busy(e); /* listed again at the next step */
        ns_log(NS_LOG_ERROR, "nodeclaim.garbagecollection", "failed listing instances", "error", ns_error_message(),
               NULL);
        free(v.items);
        return NS_OK;
    }
    int rc = orphans(e, &v, ns_clock_now_ms());
    if (rc == NS_OK)
        rc = lost_claims(e, &v);
    free(v.items);
    return rc;
}
