#include "model/nodepool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "model/quantity.h"
#include "model/resources.h"

void ns_nodeclass_ref_free(ns_nodeclass_ref *r)
{
    if (!r)
        return;
    free(r->group);
    free(r->kind);
    free(r->name);
    memset(r, 0, sizeof(*r));
}

ns_nodepool *ns_nodepool_new(void)
{
    ns_nodepool *np = calloc(1, sizeof(*np));
    if (!np) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory allocating a NodePool");
        return NULL;
    }
    np->expire_after_ms = INT64_C(720) * 3600 * 1000;
    np->termination_grace_period_ms = -1;
    np->consolidation_policy = NS_CONSOLIDATE_WHEN_EMPTY_OR_UNDERUTILIZED;
    return np;
}

bool ns_nodepool_is_static(const ns_nodepool *np)
{
    return np->has_replicas;
}

void ns_nodepool_free(ns_nodepool *np)
{
    if (!np)
        return;
    ns_meta_free(&np->meta);
    free(np->api_version);
    ns_labels_free(&np->labels);
    ns_labels_free(&np->annotations);
    ns_taints_free(np->taints, np->n_taints);
    ns_taints_free(np->startup_taints, np->n_startup_taints);
    ns_selector_reqs_free(np->requirements, np->n_requirements);
    ns_nodeclass_ref_free(&np->nodeclass_ref);
    for (size_t i = 0; i < np->n_budgets; i++)
        free(np->budgets[i].schedule);
    free(np->budgets);
    ns_kubelet_config_free(&np->kubelet);
    ns_res_free(&np->limits.max);
    free(np);
}

int ns_nodepool_requirements(const ns_nodepool *np, ns_requirements *out)
{
    memset(out, 0, sizeof(*out));
    const char *name = np->meta.name ? np->meta.name : "";
    int rc = ns_requirements_add_selector(out, np->requirements, np->n_requirements);
    if (rc == 0)
        rc = ns_requirements_add_labels(out, np->labels.items, np->labels.n);
    if (rc == 0)
        rc = ns_requirements_add_op(out, NS_LABEL_NODEPOOL, NS_OP_IN, &name, 1, 0);
    if (rc < 0) {
        ns_requirements_free(out);
        return ns_error_prefix("NodePool %s: ", name);
    }
    return 0;
}

bool ns_nodepool_tolerates(const ns_nodepool *np, const ns_pod *pod, unsigned flags, char *reason, size_t reason_len)
{
    return ns_pod_tolerates(pod, np->taints, np->n_taints, np->startup_taints, np->n_startup_taints, flags, reason,
                            reason_len);
}

static bool over(const char *name, int64_t usage, int64_t limit, char *reason, size_t len)
{
    if (usage <= limit)
        return false;
    if (reason && len) {
        char a[48], b[48];
        bool cpu = strcmp(name, NS_RES_CPU) == 0;
        bool bytes = strcmp(name, NS_RES_MEMORY) == 0 || strcmp(name, NS_RES_EPHEMERAL_STORAGE) == 0;
        snprintf(reason, len, "%s resource usage of %s exceeds limit of %s", name,
                 ns_quantity_format(usage, cpu ? NS_QTY_MILLI : NS_QTY_UNITS, bytes, a, sizeof(a)),
                 ns_quantity_format(limit, cpu ? NS_QTY_MILLI : NS_QTY_UNITS, bytes, b, sizeof(b)));
    }
    return true;
}

bool ns_resource_limits_exceeded(const ns_resource_limits *l, const ns_res *usage, char *reason,
                                 size_t reason_len)
{
    if ((l->cpu && over(NS_RES_CPU, usage->cpu_milli, l->max.cpu_milli, reason, reason_len)) ||
        (l->memory && over(NS_RES_MEMORY, usage->memory_bytes, l->max.memory_bytes, reason, reason_len)) ||
        (l->pods && over(NS_RES_PODS, usage->pods, l->max.pods, reason, reason_len)) ||
        (l->ephemeral_storage && over(NS_RES_EPHEMERAL_STORAGE, usage->ephemeral_storage_bytes,
                                      l->max.ephemeral_storage_bytes, reason, reason_len)))
        return true;
    for (uint32_t i = 0; i < l->max.n_ext; i++) {
        const ns_res_ext *e = &l->max.ext[i];
        if (over(e->name, ns_res_get(usage, e->name), e->value, reason, reason_len))
            return true;
    }
    return false;
}

int ns_nodepool_cmp_priority(const void *a, const void *b)
{
    const ns_nodepool *x = *(const ns_nodepool *const *)a, *y = *(const ns_nodepool *const *)b;
    if (x->weight != y->weight)
        return x->weight > y->weight ? -1 : 1;
    return -strcmp(x->meta.name ? x->meta.name : "", y->meta.name ? y->meta.name : "");
}
