/*
 * Karpenter's default topology spread (SCHEDULER_CONFIG podTopologySpread.defaultConstraints, kubernetes-sigs/karpenter
 * DefaultTopologySpreadInjector): a pending pod that declares no topologySpreadConstraints is given the default
 * constraints, with the label selector kube-scheduler deduces for it (helper.DefaultSelector), so that nodesmith
 * counts the same pods kube-scheduler will:
 *   - every Service of the pod's namespace whose selector matches the pod adds its selector as equality labels (a key
 *     two Services set takes the later one's value, as labels.Merge does; a Service with no selector adds nothing);
 *   - the pod's controlling ReplicationController then overwrites those labels with its selector, while a controlling
 *     ReplicaSet or StatefulSet adds its selector as expressions (each matchLabels entry an In of one value);
 *   - a pod nothing selects (no such Service, no such controller, or one nodesmith does not know) gets no default:
 *     an empty selector would count every pod of the namespace.
 * The constraints exist only inside the round (the pod is not changed).
 */
#include "sched/sched_internal.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"

static int oom(const ns_pod *p)
{
    return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory deducing the default topology spread selector of pod %s",
                   p->meta.name);
}

static int add_expr(ns_label_selector *sel, const ns_selector_req *src)
{
    ns_selector_req *exprs = realloc(sel->exprs, (sel->n_exprs + 1) * sizeof(*exprs));
    if (!exprs)
        return NS_ERR_INTERNAL;
    sel->exprs = exprs;
    memset(&sel->exprs[sel->n_exprs], 0, sizeof(*sel->exprs));
    if (ns_selector_req_copy(src, &sel->exprs[sel->n_exprs]) != NS_OK)
        return NS_ERR_INTERNAL;
    sel->n_exprs++;
    return NS_OK;
}

/* What the pod's controller adds: a ReplicationController's labels overwrite, a ReplicaSet's or StatefulSet's
 * selector is ANDed on as expressions (requirementsFrom: matchLabels first, then matchExpressions). */
static int add_owner(const ns_cluster *c, const ns_pod *p, const char *ns, ns_label_selector *sel)
{
    const char *kind = p->meta.owner_kind;
    if (!kind || !p->meta.owner_name ||
        (strcmp(kind, "ReplicationController") != 0 && strcmp(kind, "ReplicaSet") != 0 &&
         strcmp(kind, "StatefulSet") != 0))
        return NS_OK;
    const ns_workload *w = ns_cluster_find_pod_controller(c, kind, ns, p->meta.owner_name);
    if (!w || !w->selector.present) /* kube-scheduler goes on without an owner it cannot get */
        return NS_OK;
    const ns_labels *ml = &w->selector.match_labels;
    if (strcmp(kind, "ReplicationController") == 0) {
        for (size_t i = 0; i < ml->n; i++)
            if (ns_labels_set(&sel->match_labels, ml->items[i].key, ml->items[i].value) != NS_OK)
                return NS_ERR_INTERNAL;
        return NS_OK;
    }
    for (size_t i = 0; i < ml->n; i++) {
        const char *value = ml->items[i].value;
        ns_selector_req in = {.key = (char *)ml->items[i].key, .op = NS_OP_IN, .values = (char **)&value, .n_values = 1};
        if (add_expr(sel, &in) != NS_OK)
            return NS_ERR_INTERNAL;
    }
    for (size_t i = 0; i < w->selector.n_exprs; i++)
        if (add_expr(sel, &w->selector.exprs[i]) != NS_OK)
            return NS_ERR_INTERNAL;
    return NS_OK;
}

int sched_default_selector(const ns_cluster *c, const ns_pod *p, ns_label_selector *out, bool *found)
{
    const char *ns = p->meta.namespace_ ? p->meta.namespace_ : "default";
    memset(out, 0, sizeof(*out));
    *found = false;
    for (size_t i = 0; i < c->n_services; i++) {
        const ns_service *svc = c->services[i];
        const char *sns = svc->meta.namespace_ ? svc->meta.namespace_ : "default";
        if (strcmp(sns, ns) != 0 || !ns_service_selects(svc, &p->meta.labels))
            continue;
        for (size_t k = 0; k < svc->selector.n; k++)
            if (ns_labels_set(&out->match_labels, svc->selector.items[k].key, svc->selector.items[k].value) != NS_OK)
                goto fail;
    }
    if (add_owner(c, p, ns, out) != NS_OK)
        goto fail;
    out->present = true;
    *found = out->match_labels.n > 0 || out->n_exprs > 0;
    return NS_OK;
fail:
    ns_label_selector_free(out);
    return oom(p);
}
