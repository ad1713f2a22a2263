/* Drift detection: the Drifted condition on launched claims (see disruption.h). */
#include <stdio.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "disruption/disruption_internal.h"
#include "errors/ns_error.h"
#include "model/labels.h"

/* A claim whose NodePool hash was computed by another algorithm gets today's hash instead of a drift verdict (see
 * NS_ANNOTATION_NODEPOOL_HASH_VERSION); *restamped tells the caller to write the claim. */
static int restamp_hash(ns_nodeclaim *claim, const char *hash, bool *restamped)
{
    const char *version = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH_VERSION);
    if (version && strcmp(version, NS_NODEPOOL_HASH_VERSION) == 0)
        return 0;
    if (ns_labels_set(&claim->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH, hash) < 0 ||
        ns_labels_set(&claim->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH_VERSION, NS_NODEPOOL_HASH_VERSION) < 0)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory re-stamping the NodePool hash of nodeclaim %s",
                       claim->meta.name);
    *restamped = true;
    return 0;
}

/* Karpenter's order: static drift (hashes), then requirements, then the provider's own check. */
static int drift_reason(ns_engine *e, ns_nodeclaim *claim, char *why, size_t len, bool *restamped)
{
    why[0] = '\0';
    ns_cluster *cl = e->cluster;
    const char *pool_name = ns_labels_get(&claim->meta.labels, NS_LABEL_NODEPOOL);
    size_t p = 0;
    while (pool_name && p < cl->n_nodepools && strcmp(cl->nodepools[p]->meta.name, pool_name) != 0)
        p++;
    if (!pool_name || p == cl->n_nodepools)
        return 0; /* an orphan claim is not drifted: nothing to compare with */
    const ns_nodepool *np = cl->nodepools[p];

    char hash[32];
    const char *have = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH);
    ns_nodepool_hash(np, hash, sizeof(hash));
    int rc = restamp_hash(claim, hash, restamped);
    if (rc < 0)
        return rc;
    have = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH);
    if (have && strcmp(have, hash) != 0) {
        snprintf(why, len, "NodePoolDrifted");
        return 0;
    }
    const ns_nodeclass_def *def = ns_cluster_nodeclass_for(cl, &np->nodeclass_ref);
    have = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_NODECLASS_HASH);
    if (def && have) {
        ns_nodeclass_hash(def, ns_plugin_table(e->plugin)->drift_fields, hash, sizeof(hash));
        if (strcmp(have, hash) != 0) {
            snprintf(why, len, "NodeClassDrifted");
            return 0;
        }
    }

    /* The pool's spec requirements against the claim's labels (well-known labels the claim lacks are allowed). */
    ns_requirements pool_reqs = {0}, claim_reqs = {0};
    rc = ns_requirements_add_selector(&pool_reqs, np->requirements, np->n_requirements);
    if (rc == 0)
        rc = ns_requirements_add_labels(&claim_reqs, claim->meta.labels.items, claim->meta.labels.n);
    ns_compat_opts opts = {.allow_undefined_well_known = true};
    bool compatible = rc < 0 || ns_requirements_compatible(&claim_reqs, &pool_reqs, &opts, NULL, 0);
    ns_requirements_free(&pool_reqs);
    ns_requirements_free(&claim_reqs);
    if (rc < 0)
        return rc;
    if (!compatible) {
        snprintf(why, len, "RequirementsDrifted");
        return 0;
    }

    ns_engine_refresh_types(e);
    const ns_nodeclass *nc = p < e->types.n_pools ? e->types.pool_nodeclass[p] : NULL;
    ns_instance inst;
    memset(&inst, 0, sizeof(inst));
    inst.struct_size = sizeof(inst);
    if (!nc || ns_plugin_get_instance(e->plugin, claim->provider_id, &inst) < 0) {
        ns_error_clear(); /* gone or unreadable: garbage collection deals with it, not drift */
        return 0;
    }
    bool drifted = false;
    char reason[128] = "";
    if (ns_plugin_check_drift(e->plugin, &inst, nc, &drifted, reason, sizeof(reason)) < 0) {
        ns_error_clear(); /* providers without a drift check (unsupported) are never drifted */
        return 0;
    }
    if (drifted)
        snprintf(why, len, "%s", reason[0] ? reason : "CloudProviderDrifted");
    return 0;
}

int ds_drift_update(ns_engine *e)
{
    ns_cluster *cl = e->cluster;
    int64_t now = ns_clock_now_ms();
    for (size_t i = 0; i < cl->n_nodeclaims; i++) {
        ns_nodeclaim *claim = cl->nodeclaims[i];
        if (!ns_claim_launched(claim) || ns_claim_deleting(claim))
            continue;
        char why[128];
        bool restamped = false;
        int rc = drift_reason(e, claim, why, sizeof(why), &restamped);
        if (rc < 0)
            return rc;
        if (restamped && (rc = e->writes.ops->update_nodeclaim(e->writes.ctx, claim)) < 0)
            return rc;
        const ns_condition *cond = ns_conditions_get(&claim->conditions, NS_COND_DRIFTED);
        if (why[0]) {
            if (cond && strcmp(cond->status, "True") == 0 && cond->reason && strcmp(cond->reason, why) == 0)
                continue;
            if ((rc = ns_conditions_set(&claim->conditions, NS_COND_DRIFTED, "True", why, NULL, now)) < 0 ||
                (rc = e->writes.ops->update_nodeclaim(e->writes.ctx, claim)) < 0)
                return rc;
        } else if (cond) {
            ns_conditions_remove(&claim->conditions, NS_COND_DRIFTED);
            if ((rc = e->writes.ops->update_nodeclaim(e->writes.ctx, claim)) < 0)
                return rc;
        }
    }
    return 0;
}
