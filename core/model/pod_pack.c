/* Packed pods (ns_pod_pack): one allocation per pod for caches of many pods. The same walk runs twice: once to
 * measure the block (base NULL), once to fill it; the fill cannot run out of room because it takes exactly what the
 * measure counted. */
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/intern.h"
#include "model/pod.h"
#include "model/pod_share.h"

typedef struct arena {
    char *base; /* NULL while measuring */
    size_t used;
    bool failed; /* interning ran out of memory */
} arena;

/* Every packed array holds pointers, int64_t or structs of them: 8-byte alignment is theirs. */
#define PACK_ALIGN (alignof(int64_t) > alignof(void *) ? alignof(int64_t) : alignof(void *))

static void *take(arena *a, size_t size)
{
    size_t at = (a->used + PACK_ALIGN - 1) & ~(PACK_ALIGN - 1);
    a->used = at + size;
    return a->base ? a->base + at : NULL;
}

/* A copy in the block (strings that differ from pod to pod). */
static char *own(arena *a, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = a->base ? a->base + a->used : NULL;
    a->used += n;
    if (p)
        memcpy(p, s, n);
    return p;
}

/* The interned copy (strings from a bounded set); nothing in the block. */
static char *shared(arena *a, const char *s)
{
    if (!s || !a->base)
        return NULL;
    const char *p = ns_intern(s);
    if (!p)
        a->failed = true;
    return (char *)p;
}

static void pack_labels(arena *a, const ns_labels *src, ns_labels *dst, bool intern_values)
{
    ns_label *items = src->n ? take(a, src->n * sizeof(*items)) : NULL;
    for (size_t i = 0; i < src->n; i++) {
        const char *k = shared(a, src->items[i].key);
        const char *v = intern_values ? shared(a, src->items[i].value) : own(a, src->items[i].value);
        if (items)
            items[i] = (ns_label){k, v};
    }
    if (a->base)
        *dst = (ns_labels){items, src->n, src->n};
}

static void pack_res(arena *a, const ns_res *src, ns_res *dst)
{
    ns_res_ext *ext = src->n_ext ? take(a, src->n_ext * sizeof(*ext)) : NULL;
    if (!a->base)
        return;
    *dst = *src;
    dst->ext = ext;
    dst->cap_ext = src->n_ext;
    if (ext)
        memcpy(ext, src->ext, src->n_ext * sizeof(*ext)); /* names are interned already */
}

static ns_container *pack_containers(arena *a, const ns_container *src, size_t n)
{
    ns_container *v = n ? take(a, n * sizeof(*v)) : NULL;
    for (size_t i = 0; i < n; i++) {
        ns_container c = {.name = shared(a, src[i].name), .sidecar = src[i].sidecar};
        pack_res(a, &src[i].requests, &c.requests);
        pack_res(a, &src[i].limits, &c.limits);
        if (v)
            v[i] = c;
    }
    return v;
}

static void pack_meta(arena *a, const ns_meta *src, ns_meta *dst)
{
    ns_meta m = *src;
    m.name = own(a, src->name);
    m.namespace_ = shared(a, src->namespace_);
    m.owner_kind = shared(a, src->owner_kind);
    m.owner_name = own(a, src->owner_name);
    pack_labels(a, &src->labels, &m.labels, false);
    pack_labels(a, &src->annotations, &m.annotations, false);
    m.finalizers = src->n_finalizers ? take(a, src->n_finalizers * sizeof(char *)) : NULL;
    for (size_t i = 0; i < src->n_finalizers; i++) {
        char *f = shared(a, src->finalizers[i]);
        if (m.finalizers)
            m.finalizers[i] = f;
    }
    if (a->base)
        *dst = m;
}

static ns_toleration *pack_tolerations(arena *a, const ns_toleration *src, size_t n)
{
    ns_toleration *v = n ? take(a, n * sizeof(*v)) : NULL;
    for (size_t i = 0; v && i < n; i++) {
        v[i] = src[i];
        v[i].key = shared(a, src[i].key);
        v[i].value = shared(a, src[i].value);
        v[i].effect = shared(a, src[i].effect);
    }
    return v;
}

static ns_pod_volume *pack_volumes(arena *a, const ns_pod_volume *src, size_t n)
{
    ns_pod_volume *v = n ? take(a, n * sizeof(*v)) : NULL;
    for (size_t i = 0; i < n; i++) {
        char *claim = own(a, src[i].claim);
        if (v)
            v[i] = (ns_pod_volume){.claim = claim, .ephemeral = src[i].ephemeral};
    }
    return v;
}

/* Builds (or, with a->base NULL, measures) the packed pod; returns the pod in the block. */
static ns_pod *pack(arena *a, const ns_pod *src)
{
    ns_pod *p = take(a, sizeof(*p));
    ns_pod v = *src;
    pack_meta(a, &src->meta, &v.meta);
    v.containers = pack_containers(a, src->containers, src->n_containers);
    v.init_containers = pack_containers(a, src->init_containers, src->n_init_containers);
    pack_res(a, &src->requests, &v.requests);
    pack_res(a, &src->limits, &v.limits);
    pack_labels(a, &src->node_selector, &v.node_selector, true);
    v.tolerations = pack_tolerations(a, src->tolerations, src->n_tolerations);
    v.volumes = pack_volumes(a, src->volumes, src->n_volumes);
    v.priority_class_name = shared(a, src->priority_class_name);
    v.preemption_policy = shared(a, src->preemption_policy);
    v.scheduler_name = shared(a, src->scheduler_name);
    v.phase = shared(a, src->phase);
    v.node_name = own(a, src->node_name);
    v.packed = true;
    v.node_name_owned = false;
    if (p)
        *p = v;
    return p;
}

ns_pod *ns_pod_pack(ns_pod *pod)
{
    if (pod->packed)
        return pod;
    arena a = {0};
    pack(&a, pod);
    a.base = malloc(a.used);
    if (!a.base) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory packing pod %s", pod->meta.name ? pod->meta.name : "");
        ns_pod_free(pod);
        return NULL;
    }
    size_t measured = a.used;
    a.used = 0;
    ns_pod *p = pack(&a, pod);
    if (a.failed || a.used != measured) {
        if (!a.failed)
            NS_FAIL(NS_ERR_INTERNAL, "packing pod %s: the block measured %zu bytes, the fill took %zu",
                    pod->meta.name ? pod->meta.name : "", measured, a.used);
        free(a.base);
        ns_pod_free(pod);
        return NULL;
    }
    /* Moved, not copied: the pod's out-of-line parts now belong to the packed pod. */
    memset(&pod->affinity, 0, sizeof(pod->affinity));
    pod->spread = NULL;
    pod->n_spread = 0;
    pod->host_ports = NULL;
    pod->n_host_ports = 0;
    pod->spec_resources = NULL;
    ns_pod_free(pod);
    if (ns_pod_share_take(p) < 0) {
        ns_pod_free(p);
        return NULL;
    }
    return p;
}
