/* The Eviction API's PodDisruptionBudget check (k8s.io/kubernetes pkg/registry/core/pod/storage/eviction.go and the
 * disruption controller's arithmetic), over the in-memory cluster. */
#include <string.h>

#include "engine/cluster_writes.h"
#include "errors/ns_error.h"

static bool terminal(const ns_pod *p)
{
    return p->phase && (strcmp(p->phase, "Succeeded") == 0 || strcmp(p->phase, "Failed") == 0);
}

/* Running on a Ready node: what the disruption controller counts as healthy. */
static bool healthy(const ns_cluster *c, const ns_pod *p)
{
    if (!p->node_name || terminal(p) || p->meta.deletion_ms)
        return false;
    const ns_node *n = ns_cluster_find_node(c, p->node_name);
    return n && n->ready;
}

/* The Eviction API refuses a pod more than one budget selects, whatever the budgets allow (a 500 that Karpenter, like
 * nodesmith's Kubernetes client, treats as a refusal to retry). A pod that is not running is deleted without a look at
 * the budgets, as the API does. */
static int multiple_budgets(const ns_cluster *c, const ns_pod *pod)
{
    if (!pod->node_name || terminal(pod) || pod->meta.deletion_ms)
        return NS_OK;
    const ns_pdb *first = NULL;
    for (size_t b = 0; b < c->n_pdbs; b++) {
        if (!ns_pdb_selects(c->pdbs[b], pod))
            continue;
        if (first)
            return NS_FAIL(NS_ERR_THROTTLED,
                           "Cannot evict pod %s/%s: This pod has more than one PodDisruptionBudget (%s, %s), which the "
                           "eviction subresource does not support.",
                           pod->meta.namespace_ ? pod->meta.namespace_ : "default", pod->meta.name ? pod->meta.name : "",
                           first->meta.name ? first->meta.name : "", c->pdbs[b]->meta.name ? c->pdbs[b]->meta.name : "");
        first = c->pdbs[b];
    }
    return NS_OK;
}

int ns_pdb_check_eviction(const ns_cluster *c, const ns_pod *pod)
{
    if (multiple_budgets(c, pod) < 0)
        return NS_ERR_THROTTLED;
    bool pod_healthy = healthy(c, pod);
    for (size_t b = 0; b < c->n_pdbs; b++) {
        const ns_pdb *pdb = c->pdbs[b];
        if (!ns_pdb_selects(pdb, pod))
            continue;
        int64_t expected = 0, current = 0;
        for (size_t i = 0; i < c->n_pods; i++) {
            const ns_pod *p = c->pods[i];
            if (terminal(p) || !ns_pdb_selects(pdb, p))
                continue;
            expected++;
            current += healthy(c, p);
        }
        int64_t desired = pdb->min_available.set ? ns_int_or_percent_scaled(&pdb->min_available, expected)
                          : pdb->max_unavailable.set
                              ? expected - ns_int_or_percent_scaled(&pdb->max_unavailable, expected)
                              : expected;
        int64_t allowed = current - desired;
        const char *ns = pdb->meta.namespace_ ? pdb->meta.namespace_ : "default";
        if (!pod_healthy) {
            /* An unhealthy pod leaves the healthy count alone: IfHealthyBudget lets it go while the budget holds. */
            bool always = pdb->unhealthy_pod_eviction_policy &&
                          strcmp(pdb->unhealthy_pod_eviction_policy, "AlwaysAllow") == 0;
            if (always || allowed >= 0)
                continue;
        } else if (allowed >= 1) {
            continue;
        }
        return NS_FAIL(NS_ERR_THROTTLED,
                       "Cannot evict pod %s/%s as it would violate the pod's disruption budget %s/%s: %lld healthy, "
                       "%lld needed",
                       pod->meta.namespace_ ? pod->meta.namespace_ : "default", pod->meta.name ? pod->meta.name : "",
                       ns, pdb->meta.name ? pdb->meta.name : "", (long long)current, (long long)desired);
    }
    return NS_OK;
}
