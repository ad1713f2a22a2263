/* The mirror: informers decode into a queue; the engine's thread moves the queue into its cluster between steps. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock/ns_clock.h"
#include "controller/controller_mirror.h"
#include "errors/ns_error.h"
#include "kube/kube_decode.h"
#include "kube/kube_informer.h"
#include "log/ns_log.h"
#include "model/hash.h"
#include "model/model_util.h"
#include "sched/sched.h"

#define BUCKETS 4096
#define MAX_INFORMERS 26
/* The floor of an object we deleted: only its deletion is applied from then on. */
#define FLOOR_GONE UINT64_MAX

/* One queued object version, or a floor. */
typedef struct slot {
    char *key; /* "KIND/NS/NAME" (cluster-scoped: "KIND//NAME") */
    char *ns;  /* NULL for cluster-scoped */
    char *name;
    void *obj; /* the decoded model object; NULL for a deletion (queue) */
    uint64_t rv;
    struct slot *next;
} slot;

typedef struct table {
    slot *b[BUCKETS];
    size_t n;
} table;

typedef struct mirror_informer {
    ns_mirror *m;
    ns_mirror_kind kind;
    const ns_kube_decoder *inner;
    const void *inner_ctx;
    ns_kube_resource res;
    char resbuf[256];
    ns_kube_informer *inf;
} mirror_informer;

struct ns_mirror {
    ns_kube_client *client;
    mirror_informer infs[MAX_INFORMERS];
    size_t n_infs;
    pthread_mutex_t mu; /* the queue */
    table queue;
    table floors;       /* engine thread only (or the store's write jobs, under its lock, while it waits) */
    ns_nodepool **held_pools;
    size_t n_held_pools;
    ns_nodeclaim **held_claims;
    size_t n_held_claims;
    ns_nodepool **shadowed; /* converted Provisioners set aside for a NodePool of the same name */
    size_t n_shadowed;
    ns_buffer **held_buffers; /* CapacityBuffers whose PodTemplate (scalableRef's workload) is not in the cluster */
    size_t n_held_buffers;
};

static uint64_t rv_number(const char *rv)
{
    char *end = NULL;
    unsigned long long v = rv && *rv ? strtoull(rv, &end, 10) : 0;
    return end && !*end ? (uint64_t)v : 0;
}

static const char *kind_name(const mirror_informer *mi)
{
    return mi->res.kind;
}

static void make_key(char *buf, size_t len, const char *kind, const char *ns, const char *name)
{
    snprintf(buf, len, "%s/%s/%s", kind, ns ? ns : "", name);
}

/* The slot of key, with *prev_next pointing at the link to it (for unlinking). */
static slot **find_link(table *t, const char *key)
{
    slot **link = &t->b[ns_hash_str(NS_HASH_SEED, key) % BUCKETS];
    while (*link && strcmp((*link)->key, key) != 0)
        link = &(*link)->next;
    return link;
}

static void slot_free(slot *s, const ns_kube_decoder *dec)
{
    if (!s)
        return;
    if (s->obj && dec)
        dec->free(s->obj);
    free(s->key);
    free(s->ns);
    free(s->name);
    free(s);
}

static const ns_kube_decoder *decoder_of(ns_mirror_kind kind)
{
    switch (kind) {
    case NS_MIRROR_POD: return &NS_KUBE_DECODE_POD;
    case NS_MIRROR_NODE: return &NS_KUBE_DECODE_NODE;
    case NS_MIRROR_NODEPOOL:
    case NS_MIRROR_PROVISIONER: return &NS_KUBE_DECODE_NODEPOOL;
    case NS_MIRROR_NODECLAIM: return &NS_KUBE_DECODE_NODECLAIM;
    case NS_MIRROR_PDB: return &NS_KUBE_DECODE_PDB;
    case NS_MIRROR_DAEMONSET: return &NS_KUBE_DECODE_DAEMONSET;
    case NS_MIRROR_NODECLASS: return &NS_KUBE_DECODE_NODECLASS;
    case NS_MIRROR_STORAGECLASS: return &NS_KUBE_DECODE_STORAGECLASS;
    case NS_MIRROR_PV: return &NS_KUBE_DECODE_PV;
    case NS_MIRROR_PVC: return &NS_KUBE_DECODE_PVC;
    case NS_MIRROR_VOLUMEATTACHMENT: return &NS_KUBE_DECODE_VOLUMEATTACHMENT;
    case NS_MIRROR_SERVICE: return &NS_KUBE_DECODE_SERVICE;
    case NS_MIRROR_REPLICASET: return &NS_KUBE_DECODE_REPLICASET;
    case NS_MIRROR_STATEFULSET: return &NS_KUBE_DECODE_STATEFULSET;
    case NS_MIRROR_REPLICATIONCONTROLLER: return &NS_KUBE_DECODE_REPLICATIONCONTROLLER;
    case NS_MIRROR_CAPACITYBUFFER: return &NS_KUBE_DECODE_CAPACITYBUFFER;
    case NS_MIRROR_PODTEMPLATE: return &NS_KUBE_DECODE_PODTEMPLATE;
    case NS_MIRROR_DEPLOYMENT: return &NS_KUBE_DECODE_DEPLOYMENT;
    }
    return NULL;
}

/* Queues a version (obj NULL: a deletion), replacing a queued older one. Takes obj. */
static void enqueue(mirror_informer *mi, const char *ns, const char *name, const char *rv, void *obj)
{
    ns_mirror *m = mi->m;
    char key[700];
    make_key(key, sizeof(key), kind_name(mi), ns, name);
    pthread_mutex_lock(&m->mu);
    slot **link = find_link(&m->queue, key);
    slot *s = *link;
    if (!s) {
        s = calloc(1, sizeof(*s));
        if (!s || !(s->key = strdup(key)) || !(s->name = strdup(name)) || (ns && !(s->ns = strdup(ns)))) {
            slot_free(s, NULL);
            pthread_mutex_unlock(&m->mu);
            ns_log(NS_LOG_ERROR, "mirror", "out of memory queueing an object, dropping it", "object", key, NULL);
            if (obj)
                mi->inner->free(obj);
            return;
        }
        *link = s;
        m->queue.n++;
    } else if (s->obj) {
        mi->inner->free(s->obj);
    }
    s->obj = obj;
    s->rv = rv_number(rv);
    pthread_mutex_unlock(&m->mu);
}

static const char *str_at(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, a), b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The informer's decoder: decodes with the kind's own decoder, queues the result, and leaves the informer's store
 * with identity and indexes only (one decoded copy per object, the cluster's). */
static int mirror_decode(const cJSON *obj, const char *what, const void *ctx, void **typed)
{
    mirror_informer *mi = (mirror_informer *)ctx; /* the mirror's own, mutable: the informer passes it on as const */
    void *model = NULL;
    int rc = mi->inner->decode(obj, what, mi->inner_ctx, &model);
    if (rc < 0)
        return rc;
    enqueue(mi, mi->res.namespaced ? str_at(obj, "metadata", "namespace") : NULL, str_at(obj, "metadata", "name"),
            str_at(obj, "metadata", "resourceVersion"), model);
    *typed = NULL;
    return 0;
}

static void mirror_event(void *ud, ns_kube_event ev, const ns_kube_obj *o)
{
    if (ev == NS_KUBE_DELETED)
        enqueue(ud, o->namespace_, o->name, o->resource_version, NULL);
}

static const ns_kube_decoder mirror_decoder = {.decode = mirror_decode};

static int add_informer(ns_mirror *m, ns_mirror_kind kind, const ns_kube_resource *res, const void *inner_ctx)
{
    if (m->n_infs == MAX_INFORMERS)
        return NS_FAIL(NS_ERR_INTERNAL, "controller: more than %d informers", MAX_INFORMERS);
    mirror_informer *mi = &m->infs[m->n_infs];
    mi->m = m;
    mi->kind = kind;
    mi->inner = decoder_of(kind);
    mi->inner_ctx = inner_ctx;
    mi->res = *res;
    ns_kube_informer_options o = {
        .resource = &mi->res,
        .decoder = &mirror_decoder,
        .decoder_ctx = mi,
        .on_event = mirror_event,
        .ud = mi,
    };
    int rc = ns_kube_informer_new(m->client, &o, &mi->inf);
    if (rc == 0)
        m->n_infs++;
    return rc;
}

/* True when the API server serves the resource (its CRD is installed). */
/* Through discovery, which every authenticated user may read: listing the resource instead would answer 403 to a
 * user without list on it (authorization comes before the lookup), though the resource is not there at all. */
static int served(ns_kube_client *c, const ns_kube_resource *r, bool *out)
{
    char path[512], what[320];
    long status = 0;
    cJSON *doc = NULL;
    *out = false;
    if (r->group[0])
        snprintf(path, sizeof(path), "/apis/%s/%s", r->group, r->version);
    else
        snprintf(path, sizeof(path), "/api/%s", r->version);
    snprintf(what, sizeof(what), "checking whether the API server serves %s.%s/%s", r->resource, r->group,
             r->version);
    int rc = ns_kube_json(c, "GET", path, NULL, NULL, what, &status, &doc);
    if (rc < 0 && status == 404) {
        ns_error_clear();
        return 0;
    }
    if (rc < 0)
        return rc;
    const cJSON *res;
    cJSON_ArrayForEach(res, cJSON_GetObjectItemCaseSensitive(doc, "resources")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(res, "name");
        if (cJSON_IsString(name) && strcmp(name->valuestring, r->resource) == 0)
            *out = true;
    }
    cJSON_Delete(doc);
    return 0;
}

static int add_nodeclass_informers(ns_mirror *m, const ns_nodeclass_kinds *kinds)
{
    size_t n = ns_nodeclass_kinds_count(kinds);
    for (size_t i = 0; i < n; i++) {
        const ns_nodeclass_kind_info *k = ns_nodeclass_kinds_at(kinds, i);
        if (k->any_kind)
            continue;
        bool dup = false; /* one informer per group and kind: the server converts between versions */
        for (size_t j = 0; j < m->n_infs && !dup; j++)
            dup = m->infs[j].kind == NS_MIRROR_NODECLASS && strcmp(m->infs[j].res.kind, k->kind) == 0 &&
                  strcmp(m->infs[j].res.group, k->group) == 0;
        if (dup)
            continue;
        ns_kube_resource r;
        char buf[256];
        bool ok = false;
        int rc = ns_kube_resource_nodeclass(k->group, k->version, k->kind, buf, sizeof(buf), &r);
        if (rc == 0)
            rc = served(m->client, &r, &ok);
        if (rc < 0)
            return rc;
        if (!ok) {
            ns_log(NS_LOG_INFO, "controller", "node class kind not served by the API server, not watching it",
                   "kind", k->kind, "apiVersion", k->api_version, NULL);
            continue;
        }
        mirror_informer *mi = &m->infs[m->n_infs];
        memcpy(mi->resbuf, buf, sizeof(buf));
        /* the descriptor's strings point into buf: re-point them at the informer's own copy */
        rc = ns_kube_resource_nodeclass(k->group, k->version, k->kind, mi->resbuf, sizeof(mi->resbuf), &r);
        if (rc < 0 || (rc = add_informer(m, NS_MIRROR_NODECLASS, &r, kinds)) < 0)
            return rc;
    }
    return 0;
}

/* Provisioners only on clusters whose CRDs still serve karpenter.sh/v1alpha5; the kinds say what a providerRef that
 * names no kind means. */
static int add_provisioner_informer(ns_mirror *m, const ns_nodeclass_kinds *kinds)
{
    bool ok = false;
    int rc = served(m->client, &NS_KUBE_PROVISIONERS, &ok);
    if (rc < 0 || !ok)
        return rc;
    ns_log(NS_LOG_INFO, "controller", "karpenter.sh/v1alpha5 Provisioners are served, reading them as NodePools",
           NULL);
    return add_informer(m, NS_MIRROR_PROVISIONER, &NS_KUBE_PROVISIONERS, kinds);
}

/* Karpenter's CapacityBuffer feature: the buffers when their CRD is installed, and the templates and Deployments they
 * name. */
static int add_buffer_informers(ns_mirror *m, ns_mirror_buffers buffers)
{
    bool ok = false;
    int rc = served(m->client, &NS_KUBE_CAPACITYBUFFERS, &ok);
    if (rc < 0)
        return rc;
    if (!ok && buffers == NS_MIRROR_BUFFERS_IF_SERVED)
        return 0;
    if (!ok) {
        ns_log(NS_LOG_WARN, "controller", "the CapacityBuffer gate is on but the API server does not serve "
               "capacitybuffers.autoscaling.x-k8s.io/v1beta1 (install the CapacityBuffer CRD): no warm headroom", NULL);
        return 0;
    }
    if ((rc = add_informer(m, NS_MIRROR_PODTEMPLATE, &NS_KUBE_PODTEMPLATES, NULL)) < 0 ||
        (rc = add_informer(m, NS_MIRROR_DEPLOYMENT, &NS_KUBE_DEPLOYMENTS, NULL)) < 0)
        return rc;
    return add_informer(m, NS_MIRROR_CAPACITYBUFFER, &NS_KUBE_CAPACITYBUFFERS, NULL);
}

int ns_mirror_new(ns_kube_client *c, const ns_nodeclass_kinds *kinds, ns_mirror_buffers buffers, ns_mirror **out)
{
    *out = NULL;
    ns_mirror *m = calloc(1, sizeof(*m));
    if (!m)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory building the controller's cache");
    m->client = c;
    pthread_mutex_init(&m->mu, NULL);
    static const struct {
        ns_mirror_kind kind;
        const ns_kube_resource *res;
    } builtin[] = {
        {NS_MIRROR_NODECLASS, NULL}, /* first, so node classes are in the cluster before pools name them */
        {NS_MIRROR_NODEPOOL, &NS_KUBE_NODEPOOLS},
        {NS_MIRROR_PROVISIONER, NULL}, /* after NodePools: a NodePool of the same name is there first */
        {NS_MIRROR_NODECLAIM, &NS_KUBE_NODECLAIMS},
        {NS_MIRROR_NODE, &NS_KUBE_NODES},           {NS_MIRROR_POD, &NS_KUBE_PODS},
        {NS_MIRROR_PDB, &NS_KUBE_PDBS},             {NS_MIRROR_DAEMONSET, &NS_KUBE_DAEMONSETS},
        {NS_MIRROR_STORAGECLASS, &NS_KUBE_STORAGECLASSES},
        {NS_MIRROR_PV, &NS_KUBE_PVS},               {NS_MIRROR_PVC, &NS_KUBE_PVCS},
        {NS_MIRROR_VOLUMEATTACHMENT, &NS_KUBE_VOLUMEATTACHMENTS},
        {NS_MIRROR_SERVICE, &NS_KUBE_SERVICES},     {NS_MIRROR_REPLICASET, &NS_KUBE_REPLICASETS},
        {NS_MIRROR_STATEFULSET, &NS_KUBE_STATEFULSETS},
        {NS_MIRROR_REPLICATIONCONTROLLER, &NS_KUBE_REPLICATIONCONTROLLERS},
    };
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof(builtin) / sizeof(builtin[0]); i++)
        rc = builtin[i].res                                 ? add_informer(m, builtin[i].kind, builtin[i].res, NULL)
             : builtin[i].kind == NS_MIRROR_PROVISIONER ? add_provisioner_informer(m, kinds)
                                                        : add_nodeclass_informers(m, kinds);
    if (rc == 0 && buffers != NS_MIRROR_BUFFERS_OFF)
        rc = add_buffer_informers(m, buffers);
    if (rc < 0) {
        ns_mirror_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

static void table_clear(table *t, ns_mirror *m)
{
    for (size_t b = 0; b < BUCKETS; b++) {
        while (t->b[b]) {
            slot *s = t->b[b];
            t->b[b] = s->next;
            const ns_kube_decoder *dec = NULL;
            for (size_t i = 0; s->obj && i < m->n_infs && !dec; i++)
                if (strncmp(s->key, m->infs[i].res.kind, strlen(m->infs[i].res.kind)) == 0 &&
                    s->key[strlen(m->infs[i].res.kind)] == '/')
                    dec = m->infs[i].inner;
            slot_free(s, dec);
        }
    }
    t->n = 0;
}

void ns_mirror_free(ns_mirror *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_infs; i++)
        ns_kube_informer_free(m->infs[i].inf);
    table_clear(&m->queue, m);
    table_clear(&m->floors, m);
    for (size_t i = 0; i < m->n_held_pools; i++)
        ns_nodepool_free(m->held_pools[i]);
    for (size_t i = 0; i < m->n_held_claims; i++)
        ns_nodeclaim_free(m->held_claims[i]);
    for (size_t i = 0; i < m->n_shadowed; i++)
        ns_nodepool_free(m->shadowed[i]);
    free(m->held_pools);
    free(m->held_claims);
    free(m->shadowed);
    for (size_t i = 0; i < m->n_held_buffers; i++)
        ns_buffer_free(m->held_buffers[i]);
    free(m->held_buffers);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

int ns_mirror_start(ns_mirror *m)
{
    for (size_t i = 0; i < m->n_infs; i++) {
        int rc = ns_kube_informer_start(m->infs[i].inf);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int ns_mirror_list_once(ns_mirror *m)
{
    for (size_t i = 0; i < m->n_infs; i++) {
        int rc = ns_kube_informer_list_once(m->infs[i].inf);
        if (rc < 0) {
            char why[sizeof(ns_error_last()->message)];
            snprintf(why, sizeof(why), "%s", ns_error_last()->message);
            return NS_FAIL(rc, "listing %s from the cluster: %s", m->infs[i].res.resource, why);
        }
    }
    return 0;
}

bool ns_mirror_synced(ns_mirror *m)
{
    for (size_t i = 0; i < m->n_infs; i++)
        if (!ns_kube_informer_synced(m->infs[i].inf))
            return false;
    return true;
}

bool ns_mirror_wait_synced(ns_mirror *m, int64_t timeout_ms)
{
    int64_t deadline = ns_clock_now_ms() + timeout_ms;
    for (size_t i = 0; i < m->n_infs; i++) {
        int64_t left = deadline - ns_clock_now_ms();
        if (!ns_kube_informer_wait_synced(m->infs[i].inf, left > 0 ? left : 0))
            return false;
    }
    return true;
}

static void set_floor(ns_mirror *m, ns_mirror_kind kind, const char *ns, const char *name, uint64_t v);

void ns_mirror_floor(ns_mirror *m, ns_mirror_kind kind, const char *ns, const char *name, const char *rv)
{
    set_floor(m, kind, ns, name, rv_number(rv));
}

void ns_mirror_gone(ns_mirror *m, ns_mirror_kind kind, const char *ns, const char *name)
{
    set_floor(m, kind, ns, name, FLOOR_GONE);
}

static void set_floor(ns_mirror *m, ns_mirror_kind kind, const char *ns, const char *name, uint64_t v)
{
    const char *kn = NULL;
    for (size_t i = 0; i < m->n_infs && !kn; i++)
        if (m->infs[i].kind == kind)
            kn = m->infs[i].res.kind;
    if (!v || !kn || !name)
        return;
    char key[700];
    make_key(key, sizeof(key), kn, ns, name);
    slot **link = find_link(&m->floors, key);
    if (!*link) {
        slot *s = calloc(1, sizeof(*s));
        if (!s || !(s->key = strdup(key))) {
            free(s);
            return; /* without a floor a stale event may briefly show an older version: never a wrong write */
        }
        *link = s;
        m->floors.n++;
    }
    if ((*link)->rv < v)
        (*link)->rv = v;
}

int ns_mirror_uid(ns_mirror *m, ns_mirror_kind kind, const char *ns, const char *name, char *buf, size_t len)
{
    for (size_t i = 0; i < m->n_infs; i++) {
        if (m->infs[i].kind != kind)
            continue;
        ns_kube_informer_rdlock(m->infs[i].inf);
        const ns_kube_obj *o = ns_kube_store_get(ns_kube_informer_store(m->infs[i].inf), ns, name);
        bool found = o && o->uid;
        if (found)
            snprintf(buf, len, "%s", o->uid);
        ns_kube_informer_unlock(m->infs[i].inf);
        if (found)
            return 0;
    }
    return NS_FAIL(NS_ERR_NOT_FOUND, "%s %s%s%s is not in the controller's cache",
                   kind == NS_MIRROR_NODEPOOL ? "NodePool" : kind == NS_MIRROR_PROVISIONER ? "Provisioner" : "object",
                   ns ? ns : "", ns ? "/" : "", name);
}

ns_buffer *const *ns_mirror_held_buffers(const ns_mirror *m, size_t *n)
{
    *n = m->n_held_buffers;
    return m->held_buffers;
}

void ns_mirror_get_stats(ns_mirror *m, ns_mirror_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->informers = m->n_infs;
    out->held_aside = m->n_held_pools + m->n_held_claims + m->n_shadowed + m->n_held_buffers;
    for (size_t i = 0; i < m->n_infs; i++) {
        ns_kube_informer_stats st;
        ns_kube_informer_get_stats(m->infs[i].inf, &st);
        out->decode_errors += st.decode_errors;
    }
}

/* ---- applying the queue */

static int hold(void ***list, size_t *n, void *obj)
{
    void **grown = realloc(*list, (*n + 1) * sizeof(*grown));
    if (!grown)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory holding an object aside");
    grown[(*n)++] = obj;
    *list = grown;
    return 0;
}

static void *unhold(void **list, size_t *n, size_t i)
{
    void *obj = list[i];
    memmove(&list[i], &list[i + 1], (*n - i - 1) * sizeof(void *));
    (*n)--;
    return obj;
}

/* The pool of that name, in the cluster or held aside, when it is a NodePool (converted false) or a converted
 * Provisioner (true); taken out. */
static ns_nodepool *take_pool(ns_mirror *m, ns_cluster *c, const char *name, bool converted)
{
    ns_nodepool *np = ns_cluster_find_nodepool(c, name);
    if (np && np->converted_from_provisioner == converted && ns_cluster_take_nodepool(c, np) == 0)
        return np;
    for (size_t i = 0; i < m->n_held_pools; i++)
        if (strcmp(m->held_pools[i]->meta.name, name) == 0 && m->held_pools[i]->converted_from_provisioner == converted)
            return unhold((void **)m->held_pools, &m->n_held_pools, i);
    return NULL;
}

static ns_nodepool *take_shadowed(ns_mirror *m, const char *name)
{
    for (size_t i = 0; i < m->n_shadowed; i++)
        if (strcmp(m->shadowed[i]->meta.name, name) == 0)
            return unhold((void **)m->shadowed, &m->n_shadowed, i);
    return NULL;
}

static void warn_shadowed(const char *name)
{
    ns_log(NS_LOG_WARN, "controller", "a NodePool and a v1alpha5 Provisioner share a name, using the NodePool and "
           "ignoring the Provisioner until the NodePool is deleted", "NodePool", name, "Provisioner", name, NULL);
}

/* Holds a pool aside; frees it when that fails. */
static int hold_pool(ns_nodepool ***list, size_t *n, ns_nodepool *np)
{
    int rc = hold((void ***)list, n, np);
    if (rc < 0)
        ns_nodepool_free(np);
    return rc;
}

/* A NodePool version (obj) or deletion (NULL). It takes the place of a converted Provisioner of the same name, which
 * is set aside until the NodePool goes. */
static int apply_nodepool(ns_mirror *m, ns_cluster *c, const char *name, ns_nodepool *obj)
{
    ns_nodepool_free(take_pool(m, c, name, false));
    if (!obj) {
        ns_nodepool *prov = take_shadowed(m, name); /* the NodePool went: its Provisioner is the pool again */
        return prov ? hold_pool(&m->held_pools, &m->n_held_pools, prov) : 0;
    }
    ns_nodepool *prov = take_pool(m, c, name, true);
    int rc = 0;
    if (prov) {
        warn_shadowed(name);
        rc = hold_pool(&m->shadowed, &m->n_shadowed, prov);
    }
    if (rc < 0) {
        ns_nodepool_free(obj);
        return rc;
    }
    return hold_pool(&m->held_pools, &m->n_held_pools, obj);
}

/* A Provisioner version, converted into a NodePool (obj), or its deletion (NULL). */
static int apply_provisioner(ns_mirror *m, ns_cluster *c, const char *name, ns_nodepool *obj)
{
    ns_nodepool *old = take_pool(m, c, name, true);
    bool shadowed = !old && (old = take_shadowed(m, name)) != NULL, seen = old != NULL;
    ns_nodepool_free(old);
    if (!obj)
        return 0;
    const ns_nodepool *np = ns_cluster_find_nodepool(c, name);
    bool nodepool = np != NULL; /* the converted one of that name was taken out: what is left is a NodePool */
    for (size_t i = 0; i < m->n_held_pools && !nodepool; i++)
        nodepool = strcmp(m->held_pools[i]->meta.name, name) == 0;
    if (nodepool) {
        if (!shadowed)
            warn_shadowed(name);
        return hold_pool(&m->shadowed, &m->n_shadowed, obj);
    }
    if (!seen)
        ns_log(NS_LOG_WARN, "controller", "reading a karpenter.sh/v1alpha5 Provisioner as a karpenter.sh/v1 NodePool "
               "(Karpenter's v1alpha5 API is deprecated; migrate it to a NodePool of the same name)", "Provisioner",
               name, "nodeClassRef", obj->nodeclass_ref.name, NULL);
    return hold_pool(&m->held_pools, &m->n_held_pools, obj);
}

/* A node class seen for the first time whose kind is the one v1alpha5 Provisioners reference by default: read
 * through its provider like any node class, and said so, since that provider's current kind is the one to move to. */
static void warn_legacy_class(const ns_nodeclass_kinds *kinds, const ns_nodeclass_def *def)
{
    const ns_nodeclass_kind_info *k = ns_nodeclass_kinds_find(kinds, def->api_version, def->kind);
    if (k && (k->flags & NS_NODECLASS_DEFAULT_V1ALPHA5_REF))
        ns_log(NS_LOG_WARN, "controller", "reading a node class of Karpenter's v1alpha5 API through its provider's "
               "conversion (deprecated; migrate it to the provider's current node-class kind)", def->kind,
               def->meta.name, "apiVersion", def->api_version, "provider", k->provider, NULL);
}

static ns_nodeclaim *take_claim(ns_mirror *m, ns_cluster *c, const char *name)
{
    ns_nodeclaim *claim = ns_cluster_find_nodeclaim(c, name);
    if (claim && ns_cluster_take_nodeclaim(c, claim) == 0)
        return claim;
    for (size_t i = 0; i < m->n_held_claims; i++)
        if (strcmp(m->held_claims[i]->meta.name, name) == 0)
            return unhold((void **)m->held_claims, &m->n_held_claims, i);
    return NULL;
}

static ns_buffer *take_buffer(ns_mirror *m, ns_cluster *c, const char *ns, const char *name)
{
    ns_buffer *b = ns_cluster_find_buffer(c, ns, name);
    if (b && ns_cluster_take_buffer(c, b) == 0)
        return b;
    for (size_t i = 0; i < m->n_held_buffers; i++) {
        const ns_meta *h = &m->held_buffers[i]->meta;
        if (strcmp(h->name, name) == 0 && strcmp(h->namespace_ ? h->namespace_ : "", ns ? ns : "") == 0)
            return unhold((void **)m->held_buffers, &m->n_held_buffers, i);
    }
    return NULL;
}

static int apply_pod(ns_cluster *c, slot *s, int64_t now)
{
    ns_pod *old = ns_cluster_find_pod(c, s->ns, s->name), *pod = s->obj;
    int64_t since = old && ns_sched_pod_is_pending(old) ? old->pending_since_ms : now;
    if (old && ns_cluster_remove_pod(c, old) < 0)
        return NS_ERR_INTERNAL;
    if (!pod)
        return 0;
    s->obj = NULL;
    if (ns_sched_pod_is_pending(pod))
        pod->pending_since_ms = since;
    return ns_cluster_add_pod(c, pod);
}

/* Applies one queued version; the slot's object moves into the cluster (or is held aside). */
static int apply_slot(ns_mirror *m, ns_cluster *c, const mirror_informer *mi, slot *s, int64_t now)
{
    void *obj = s->obj;
    switch (mi->kind) {
    case NS_MIRROR_POD: return apply_pod(c, s, now);
    case NS_MIRROR_NODE: {
        ns_node *old = ns_cluster_find_node(c, s->name);
        if (old && ns_cluster_remove_node(c, old) < 0)
            return NS_ERR_INTERNAL;
        s->obj = NULL;
        return obj ? ns_cluster_add_node(c, obj) : 0;
    }
    case NS_MIRROR_NODEPOOL:
        s->obj = NULL;
        return apply_nodepool(m, c, s->name, obj);
    case NS_MIRROR_PROVISIONER:
        s->obj = NULL;
        return apply_provisioner(m, c, s->name, obj);
    case NS_MIRROR_NODECLAIM:
        ns_nodeclaim_free(take_claim(m, c, s->name));
        s->obj = NULL;
        return obj ? hold((void ***)&m->held_claims, &m->n_held_claims, obj) : 0;
    case NS_MIRROR_PDB: {
        ns_pdb *old = ns_cluster_find_pdb(c, s->ns, s->name);
        if (old && ns_cluster_remove_pdb(c, old) < 0)
            return NS_ERR_INTERNAL;
        s->obj = NULL;
        return obj ? ns_cluster_add_pdb(c, obj) : 0;
    }
    case NS_MIRROR_DAEMONSET: {
        ns_daemonset *old = ns_cluster_find_daemonset(c, s->ns, s->name);
        if (old && ns_cluster_remove_daemonset(c, old) < 0)
            return NS_ERR_INTERNAL;
        s->obj = NULL;
        return obj ? ns_cluster_add_daemonset(c, obj) : 0;
    }
    case NS_MIRROR_STORAGECLASS: {
        ns_storage_class *old = ns_cluster_find_storage_class(c, s->name);
        if (old && ns_cluster_remove_storage_class(c, old) < 0)
            return NS_ERR_INTERNAL;
        s->obj = NULL;
        return obj ? ns_cluster_add_storage_class(c, obj) : 0;
    }
    case NS_MIRROR_PV: {
        ns_pv *old = ns_cluster_find_pv(c, s->name);
        if (old && ns_cluster_remove_pv(c, old) < 0)
            return NS_ERR_INTERNAL;
        s->obj = NULL;
        return obj ? ns_cluster_add_pv(c, obj) : 0;
    }
    case NS_MIRROR_PVC: {
        ns_pvc *old = ns_cluster_find_pvc(c, s->ns, s->name);
        if (old && ns_cluster_remove_pvc(c, old) < 0)
            return NS_ERR_INTERNAL;
        s->obj = NULL;
        return obj ? ns_cluster_add_pvc(c, obj) : 0;
    }
    case NS_MIRROR_VOLUMEATTACHMENT: {
        ns_volume_attachment *old = ns_cluster_find_volume_attachment(c, s->name);
        if (old && ns_cluster_remove_volume_attachment(c, old) < 0)
            return NS_ERR_INTERNAL;
        s->obj = NULL;
        return obj ? ns_cluster_add_volume_attachment(c, obj) : 0;
    }
    case NS_MIRROR_SERVICE: {
        ns_service *old = ns_cluster_find_service(c, s->ns, s->name);
        if (old && ns_cluster_remove_service(c, old) < 0)
            return NS_ERR_INTERNAL;
        s->obj = NULL;
        return obj ? ns_cluster_add_service(c, obj) : 0;
    }
    case NS_MIRROR_REPLICASET:
    case NS_MIRROR_STATEFULSET:
    case NS_MIRROR_DEPLOYMENT:
    case NS_MIRROR_REPLICATIONCONTROLLER: {
        ns_workload *old = ns_cluster_find_pod_controller(c, mi->res.kind, s->ns, s->name);
        if (old && ns_cluster_remove_pod_controller(c, old) < 0)
            return NS_ERR_INTERNAL;
        s->obj = NULL;
        return obj ? ns_cluster_add_pod_controller(c, obj) : 0;
    }
    case NS_MIRROR_CAPACITYBUFFER: /* held aside until sort_by_class finds its template */
        ns_buffer_free(take_buffer(m, c, s->ns, s->name));
        s->obj = NULL;
        return obj ? hold((void ***)&m->held_buffers, &m->n_held_buffers, obj) : 0;
    case NS_MIRROR_PODTEMPLATE: {
        ns_pod_template *old = ns_cluster_find_pod_template(c, s->ns, s->name);
        if (old && ns_cluster_remove_pod_template(c, old) < 0)
            return NS_ERR_INTERNAL;
        s->obj = NULL;
        return obj ? ns_cluster_add_pod_template(c, obj) : 0;
    }
    case NS_MIRROR_NODECLASS: {
        const char *kn = s->key, *slash = strchr(kn, '/');
        char kind_buf[128];
        snprintf(kind_buf, sizeof(kind_buf), "%.*s", (int)(slash - kn), kn);
        ns_nodeclass_def *old = ns_cluster_find_nodeclass(c, kind_buf, s->name);
        if (old && ns_cluster_remove_nodeclass(c, old) < 0)
            return NS_ERR_INTERNAL;
        if (!old && obj)
            warn_legacy_class(mi->inner_ctx, obj);
        s->obj = NULL;
        return obj ? ns_cluster_add_nodeclass(c, obj) : 0;
    }
    }
    return NS_FAIL(NS_ERR_INTERNAL, "controller: unknown cached kind %d", (int)mi->kind);
}

static bool has_template(const ns_cluster *c, const ns_buffer *b)
{
    int32_t replicas;
    return ns_cluster_buffer_shape(c, b, &replicas) != NULL;
}

/* CapacityBuffers go into the cluster when their PodTemplate (their scalableRef's workload) is there, and aside when
 * it is not. */
static int sort_buffers(ns_mirror *m, ns_cluster *c)
{
    int rc = 0;
    for (size_t i = c->n_buffers; rc == 0 && i-- > 0;) {
        ns_buffer *b = c->buffers[i];
        if (has_template(c, b))
            continue;
        if ((rc = ns_cluster_take_buffer(c, b)) == 0)
            rc = hold((void ***)&m->held_buffers, &m->n_held_buffers, b);
    }
    for (size_t i = 0; rc == 0 && i < m->n_held_buffers;) {
        if (!has_template(c, m->held_buffers[i])) {
            i++;
            continue;
        }
        rc = ns_cluster_add_buffer(c, unhold((void **)m->held_buffers, &m->n_held_buffers, i));
    }
    return rc;
}

/* NodePools and NodeClaims go into the cluster when their node class is there, and aside when it is not. */
static int sort_by_class(ns_mirror *m, ns_cluster *c)
{
    int rc = 0;
    for (size_t i = c->n_nodepools; rc == 0 && i-- > 0;) {
        ns_nodepool *np = c->nodepools[i];
        if (ns_cluster_nodeclass_for(c, &np->nodeclass_ref))
            continue;
        ns_log(NS_LOG_WARN, "controller", "nodepool's node class is not in the cluster, ignoring the nodepool",
               "NodePool", np->meta.name, "nodeClassRef", np->nodeclass_ref.name, NULL);
        if ((rc = ns_cluster_take_nodepool(c, np)) == 0)
            rc = hold((void ***)&m->held_pools, &m->n_held_pools, np);
    }
    for (size_t i = c->n_nodeclaims; rc == 0 && i-- > 0;) {
        ns_nodeclaim *claim = c->nodeclaims[i];
        if (ns_cluster_nodeclass_for(c, &claim->nodeclass_ref))
            continue;
        if ((rc = ns_cluster_take_nodeclaim(c, claim)) == 0)
            rc = hold((void ***)&m->held_claims, &m->n_held_claims, claim);
    }
    for (size_t i = 0; rc == 0 && i < m->n_held_pools;) {
        if (!ns_cluster_nodeclass_for(c, &m->held_pools[i]->nodeclass_ref)) {
            i++;
            continue;
        }
        rc = ns_cluster_add_nodepool(c, unhold((void **)m->held_pools, &m->n_held_pools, i));
    }
    for (size_t i = 0; rc == 0 && i < m->n_held_claims;) {
        if (!ns_cluster_nodeclass_for(c, &m->held_claims[i]->nodeclass_ref)) {
            i++;
            continue;
        }
        rc = ns_cluster_add_nodeclaim(c, unhold((void **)m->held_claims, &m->n_held_claims, i));
    }
    return rc == 0 ? sort_buffers(m, c) : rc;
}

int ns_mirror_apply(ns_mirror *m, ns_cluster *c, size_t *changed)
{
    table taken;
    pthread_mutex_lock(&m->mu);
    taken = m->queue;
    memset(&m->queue, 0, sizeof(m->queue));
    pthread_mutex_unlock(&m->mu);
    int64_t now = ns_clock_now_ms();
    size_t n = 0;
    int rc = 0;
    /* node classes first, then the rest in informer order (pools before claims before nodes before pods) */
    for (size_t i = 0; i < m->n_infs; i++) {
        mirror_informer *mi = &m->infs[i];
        size_t klen = strlen(mi->res.kind);
        for (size_t b = 0; b < BUCKETS; b++) {
            for (slot **link = &taken.b[b]; *link;) {
                slot *s = *link;
                if (strncmp(s->key, mi->res.kind, klen) != 0 || s->key[klen] != '/') {
                    link = &s->next;
                    continue;
                }
                *link = s->next;
                slot **floor = find_link(&m->floors, s->key);
                if (*floor && (((*floor)->rv == FLOOR_GONE && s->obj) || (s->rv && s->rv < (*floor)->rv))) {
                    slot_free(s, mi->inner); /* older than our own write: stale */
                    continue;
                }
                if (*floor) {
                    slot *f = *floor;
                    *floor = f->next;
                    m->floors.n--;
                    slot_free(f, NULL);
                }
                if (rc == 0) {
                    rc = apply_slot(m, c, mi, s, now);
                    n++;
                }
                slot_free(s, mi->inner);
            }
        }
    }
    table_clear(&taken, m);
    if (rc == 0)
        rc = sort_by_class(m, c);
    if (rc == 0)
        rc = ns_cluster_resolve(c);
    if (changed)
        *changed = n;
    return rc;
}
