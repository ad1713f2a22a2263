#include "sched/sched_kubelet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/quantity.h"

#define MIB (INT64_C(1) << 20)
/* Karpenter's AWS kube-reserved memory: 11Mi per pod the node may run, plus 255Mi. */
#define KUBE_MEM_PER_POD (11 * MIB)
#define KUBE_MEM_BASE (255 * MIB)

static bool labels_equal(const ns_labels *a, const ns_labels *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->items[i].key, b->items[i].key) != 0 || strcmp(a->items[i].value, b->items[i].value) != 0)
            return false;
    return true;
}

/* The settings that change what fits are the same. */
static bool sizing_equal(const ns_kubelet_config *a, const ns_kubelet_config *b)
{
    return a->present == b->present && a->has_max_pods == b->has_max_pods &&
           (!a->has_max_pods || a->max_pods == b->max_pods) && a->has_pods_per_core == b->has_pods_per_core &&
           (!a->has_pods_per_core || a->pods_per_core == b->pods_per_core) &&
           a->has_kube_reserved == b->has_kube_reserved && ns_res_equal(&a->kube_reserved, &b->kube_reserved) &&
           a->has_system_reserved == b->has_system_reserved &&
           ns_res_equal(&a->system_reserved, &b->system_reserved) &&
           labels_equal(&a->eviction_hard, &b->eviction_hard) && labels_equal(&a->eviction_soft, &b->eviction_soft);
}

bool sched_kubelet_applies(const ns_cluster *cl, const ns_nodepool *np)
{
    if (!np->kubelet.present)
        return false;
    const ns_nodeclass_def *def = ns_cluster_nodeclass_for(cl, &np->nodeclass_ref);
    return !def || !def->kubelet.present || !sizing_equal(&np->kubelet, &def->kubelet);
}

/* One eviction signal as an amount: "100Mi", or a percentage of `total` (100% disables it). -1 when absent. */
static int64_t eviction_amount(const ns_labels *l, const char *signal, int64_t total)
{
    const char *text = ns_labels_get(l, signal);
    if (!text)
        return -1;
    size_t len = strlen(text);
    if (len > 1 && text[len - 1] == '%') {
        double pct = strtod(text, NULL);
        return pct >= 100 ? 0 : (int64_t)ceil((double)total * pct / 100.0);
    }
    int64_t v;
    return ns_quantity_parse(text, NS_QTY_UNITS, signal, &v, NULL) == 0 ? v : -1;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* Resources k names replace the type's (see the header on explicit zeros). */
static void override(ns_res *base, const ns_res *k)
{
    if (k->cpu_milli)
        base->cpu_milli = k->cpu_milli;
    if (k->memory_bytes)
        base->memory_bytes = k->memory_bytes;
    if (k->ephemeral_storage_bytes)
        base->ephemeral_storage_bytes = k->ephemeral_storage_bytes;
}

void sched_kubelet_resources(const sched *s, const ns_itype *t, const ns_kubelet_config *k, sched_vec *alloc,
                             sched_vec *capacity)
{
    sched_vec_from(s, &t->capacity, capacity);
    if (!k || !k->present) {
        sched_vec_from(s, &t->allocatable, alloc);
        return;
    }
    int64_t pods = k->has_max_pods ? k->max_pods : t->capacity.pods;
    if (k->has_pods_per_core && k->pods_per_core > 0) {
        int64_t per_core = (int64_t)k->pods_per_core * (t->capacity.cpu_milli / 1000);
        pods = per_core < pods ? per_core : pods;
    }
    ns_res kube = t->kube_reserved, sys = t->system_reserved, evict = t->eviction_threshold;
    if (pods != t->capacity.pods && kube.memory_bytes == KUBE_MEM_PER_POD * t->capacity.pods + KUBE_MEM_BASE)
        kube.memory_bytes = KUBE_MEM_PER_POD * pods + KUBE_MEM_BASE;
    if (k->has_kube_reserved)
        override(&kube, &k->kube_reserved);
    if (k->has_system_reserved)
        override(&sys, &k->system_reserved);
    int64_t mem = max64(eviction_amount(&k->eviction_hard, "memory.available", t->capacity.memory_bytes),
                        eviction_amount(&k->eviction_soft, "memory.available", t->capacity.memory_bytes));
    int64_t disk = max64(eviction_amount(&k->eviction_hard, "nodefs.available", t->capacity.ephemeral_storage_bytes),
                         eviction_amount(&k->eviction_soft, "nodefs.available", t->capacity.ephemeral_storage_bytes));
    if (mem >= 0)
        evict.memory_bytes = mem;
    if (disk >= 0)
        evict.ephemeral_storage_bytes = disk;
    /* The round's scratch storage: copies of the handles, so s stays const. */
    sched_vec r1 = s->kubelet_tmp[0], r2 = s->kubelet_tmp[1], r3 = s->kubelet_tmp[2];
    sched_vec_from(s, &kube, &r1);
    sched_vec_from(s, &sys, &r2);
    sched_vec_from(s, &evict, &r3);
    capacity->v[SCHED_PODS] = pods;
    for (size_t d = 0; d < s->n_dims; d++)
        alloc->v[d] = max64(capacity->v[d] - r1.v[d] - r2.v[d] - r3.v[d], 0);
}
