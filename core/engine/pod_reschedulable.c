/*
 * Which pods of a leaving node the scheduler plans capacity for (Karpenter's pdb.Limits.IsCurrentlyReschedulable,
 * pkg/utils/pdb and pkg/utils/pod): a pod that cannot leave its node now would only get a node that stays empty until
 * it can, so Karpenter leaves it out of both the provisioner's and disruption's scheduling simulations.
 */
#include <string.h>

#include "engine/engine_internal.h"

static bool terminal(const ns_pod *p)
{
    return p->phase && (strcmp(p->phase, "Succeeded") == 0 || strcmp(p->phase, "Failed") == 0);
}

/* Karpenter's IsActive: neither terminal nor terminating. */
static bool active(const ns_pod *p)
{
    return !terminal(p) && p->meta.deletion_ms == 0;
}

/* IsReschedulable: active, or a terminating StatefulSet pod (its replacement is created only once it is gone, so
 * Karpenter plans for it early); never a DaemonSet or mirror pod. */
static bool reschedulable(const ns_pod *p)
{
    bool terminating_set = !terminal(p) && p->meta.deletion_ms && ns_pod_owned_by(p, "StatefulSet");
    return (active(p) || terminating_set) && !ns_engine_pod_is_daemon(p);
}

/* A budget that never allows a voluntary eviction whatever the pod count: maxUnavailable 0 or "0%", or minAvailable
 * "100%" (Karpenter's isFullyBlocking; a count equal to the replicas is not recognised, as in Karpenter). */
static bool fully_blocking(const ns_pdb *pdb)
{
    const ns_int_or_percent *mu = &pdb->max_unavailable, *ma = &pdb->min_available;
    return (mu->set && mu->value == 0) || (ma->set && ma->percent && ma->value == 100);
}

/* The pod's Ready condition is False. The engine keeps no pod conditions: a pod bound to a node that is not Ready is
 * what the node lifecycle controller marks not Ready, and the only case the engine produces. */
static bool not_ready(const ns_cluster *c, const ns_pod *p)
{
    const ns_node *n = p->node_name ? ns_cluster_find_node(c, p->node_name) : NULL;
    return n && !n->ready;
}

/* Karpenter's isFullyBlocked: a pod eviction would be tried for (active, not staying on its node, not protected by
 * do-not-disrupt) and that more than one budget selects (the Eviction API refuses it for ever) or that a fully
 * blocking budget selects, unless that budget lets unhealthy pods go and this one is not Ready. */
static bool fully_blocked(const ns_cluster *c, const ns_pod *p, int64_t now_ms)
{
    if (!active(p) || ns_engine_pod_stays_on_node(p) || ns_pod_do_not_disrupt(p, now_ms))
        return false;
    const ns_pdb *only = NULL;
    for (size_t b = 0; b < c->n_pdbs; b++) {
        if (!ns_pdb_selects(c->pdbs[b], p))
            continue;
        if (only)
            return true;
        only = c->pdbs[b];
    }
    if (!only)
        return false;
    const char *policy = only->unhealthy_pod_eviction_policy;
    if (policy && strcmp(policy, "AlwaysAllow") == 0 && not_ready(c, p))
        return false;
    return fully_blocking(only);
}

bool ns_engine_pod_currently_reschedulable(const ns_engine *e, const ns_pod *pod, int64_t now_ms)
{
    bool disruptable = !active(pod) || !ns_pod_do_not_disrupt(pod, now_ms);
    return reschedulable(pod) && disruptable && !fully_blocked(e->cluster, pod, now_ms);
}
