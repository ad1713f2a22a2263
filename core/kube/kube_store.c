#include "kube/kube_store.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"

/* One chained hash table per index (the primary one by namespace/name, unique; the others may hold several entries
 * under one key). A node is 24 bytes; buckets double when the load passes 1. */
typedef struct hnode {
    struct hnode *next;
    ns_kube_obj *obj;
    uint64_t hash;
} hnode;

typedef struct htable {
    hnode **buckets;
    size_t n_buckets;
    size_t n;
} htable;

struct ns_kube_store {
    ns_kube_free_fn free_typed;
    htable primary;
    htable index[NS_KUBE_N_INDEXES];
    uint32_t generation;
};

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; s && *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

static uint64_t primary_hash(const char *ns, const char *name)
{
    return hash_str(hash_str(14695981039346656037ull, ns) ^ 0x2f, name);
}

static bool str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static const char *index_key(const ns_kube_obj *o, int which)
{
    switch (which) {
    case NS_KUBE_BY_NAMESPACE:
        return o->namespace_;
    case NS_KUBE_BY_NODE_NAME:
        return o->node_name;
    default:
        return o->provider_id;
    }
}

static int table_grow(htable *t)
{
    size_t n = t->n_buckets ? t->n_buckets * 2 : 64;
    hnode **b = calloc(n, sizeof(*b));
    if (!b)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory growing an informer cache");
    for (size_t i = 0; i < t->n_buckets; i++) {
        for (hnode *h = t->buckets[i], *next; h; h = next) {
            next = h->next;
            h->next = b[h->hash & (n - 1)];
            b[h->hash & (n - 1)] = h;
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->n_buckets = n;
    return 0;
}

static int table_add(htable *t, ns_kube_obj *obj, uint64_t hash)
{
    if (t->n >= t->n_buckets && table_grow(t) < 0)
        return NS_ERR_INTERNAL;
    hnode *h = malloc(sizeof(*h));
    if (!h)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory adding to an informer cache");
    *h = (hnode){t->buckets[hash & (t->n_buckets - 1)], obj, hash};
    t->buckets[hash & (t->n_buckets - 1)] = h;
    t->n++;
    return 0;
}

static void table_remove(htable *t, const ns_kube_obj *obj, uint64_t hash)
{
    if (!t->n_buckets)
        return;
    for (hnode **p = &t->buckets[hash & (t->n_buckets - 1)]; *p; p = &(*p)->next) {
        if ((*p)->obj == obj) {
            hnode *h = *p;
            *p = h->next;
            free(h);
            t->n--;
            return;
        }
    }
}

static void table_free(htable *t)
{
    for (size_t i = 0; i < t->n_buckets; i++) {
        for (hnode *h = t->buckets[i], *next; h; h = next) {
            next = h->next;
            free(h);
        }
    }
    free(t->buckets);
    memset(t, 0, sizeof(*t));
}

ns_kube_store *ns_kube_store_new(ns_kube_free_fn free_typed)
{
    ns_kube_store *s = calloc(1, sizeof(*s));
    if (!s) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory creating an informer cache");
        return NULL;
    }
    s->free_typed = free_typed;
    return s;
}

void ns_kube_obj_free(ns_kube_store *s, ns_kube_obj *o)
{
    if (!o)
        return;
    if (o->typed && s && s->free_typed)
        s->free_typed(o->typed);
    free(o);
}

void ns_kube_store_free(ns_kube_store *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->primary.n_buckets; i++) {
        for (hnode *h = s->primary.buckets[i]; h; h = h->next)
            ns_kube_obj_free(s, h->obj);
    }
    table_free(&s->primary);
    for (int i = 0; i < NS_KUBE_N_INDEXES; i++)
        table_free(&s->index[i]);
    free(s);
}

ns_kube_obj *ns_kube_obj_new(const char *namespace_, const char *name, const char *uid, const char *rv,
                             const char *node_name, const char *provider_id, void *typed)
{
    const char *src[] = {namespace_, name, uid, rv, node_name, provider_id};
    size_t total = sizeof(ns_kube_obj);
    for (size_t i = 0; i < 6; i++)
        total += src[i] ? strlen(src[i]) + 1 : 0;
    ns_kube_obj *o = malloc(total);
    if (!o) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory caching %s", name);
        return NULL;
    }
    char *p = (char *)(o + 1);
    const char **dst[] = {&o->namespace_, &o->name, &o->uid, &o->resource_version, &o->node_name, &o->provider_id};
    for (size_t i = 0; i < 6; i++) {
        *dst[i] = NULL;
        if (src[i]) {
            size_t n = strlen(src[i]) + 1;
            memcpy(p, src[i], n);
            *dst[i] = p;
            p += n;
        }
    }
    o->typed = typed;
    o->generation = 0;
    return o;
}

static void unlink_obj(ns_kube_store *s, ns_kube_obj *o)
{
    table_remove(&s->primary, o, primary_hash(o->namespace_, o->name));
    for (int i = 0; i < NS_KUBE_N_INDEXES; i++) {
        const char *k = index_key(o, i);
        if (k)
            table_remove(&s->index[i], o, hash_str(14695981039346656037ull, k));
    }
}

static ns_kube_obj *find(const ns_kube_store *s, const char *ns, const char *name)
{
    if (!s->primary.n_buckets)
        return NULL;
    uint64_t h = primary_hash(ns, name);
    for (hnode *n = s->primary.buckets[h & (s->primary.n_buckets - 1)]; n; n = n->next) {
        if (n->hash == h && str_eq(n->obj->name, name) && str_eq(n->obj->namespace_, ns))
            return n->obj;
    }
    return NULL;
}

int ns_kube_store_put(ns_kube_store *s, ns_kube_obj *obj, ns_kube_obj **old)
{
    ns_kube_obj *prev = find(s, obj->namespace_, obj->name);
    if (old)
        *old = NULL;
    if (prev) {
        unlink_obj(s, prev);
        if (old)
            *old = prev;
        else
            ns_kube_obj_free(s, prev);
    }
    obj->generation = s->generation;
    int rc = table_add(&s->primary, obj, primary_hash(obj->namespace_, obj->name));
    for (int i = 0; rc == 0 && i < NS_KUBE_N_INDEXES; i++) {
        const char *k = index_key(obj, i);
        if (k)
            rc = table_add(&s->index[i], obj, hash_str(14695981039346656037ull, k));
    }
    if (rc < 0) {
        unlink_obj(s, obj);
        ns_kube_obj_free(s, obj);
    }
    return rc;
}

ns_kube_obj *ns_kube_store_take(ns_kube_store *s, const char *namespace_, const char *name)
{
    ns_kube_obj *o = find(s, namespace_, name);
    if (o)
        unlink_obj(s, o);
    return o;
}

const ns_kube_obj *ns_kube_store_get(const ns_kube_store *s, const char *namespace_, const char *name)
{
    return find(s, namespace_, name);
}

size_t ns_kube_store_len(const ns_kube_store *s)
{
    return s->primary.n;
}

size_t ns_kube_store_each(const ns_kube_store *s, ns_kube_index index, const char *key, ns_kube_obj_fn fn, void *ud)
{
    size_t seen = 0;
    if (index == NS_KUBE_N_INDEXES) {
        for (size_t i = 0; i < s->primary.n_buckets; i++) {
            for (hnode *h = s->primary.buckets[i]; h; h = h->next) {
                seen++;
                if (!fn(ud, h->obj))
                    return seen;
            }
        }
        return seen;
    }
    const htable *t = &s->index[index];
    if (!key || !t->n_buckets)
        return 0;
    uint64_t hash = hash_str(14695981039346656037ull, key);
    for (hnode *h = t->buckets[hash & (t->n_buckets - 1)]; h; h = h->next) {
        if (h->hash == hash && str_eq(index_key(h->obj, index), key)) {
            seen++;
            if (!fn(ud, h->obj))
                return seen;
        }
    }
    return seen;
}

void ns_kube_store_begin_relist(ns_kube_store *s)
{
    s->generation++;
}

void ns_kube_store_mark_seen(ns_kube_store *s, ns_kube_obj *obj)
{
    obj->generation = s->generation;
}

ns_kube_obj *ns_kube_store_take_unseen(ns_kube_store *s)
{
    for (size_t i = 0; i < s->primary.n_buckets; i++) {
        for (hnode *h = s->primary.buckets[i]; h; h = h->next) {
            if (h->obj->generation != s->generation) {
                ns_kube_obj *o = h->obj;
                unlink_obj(s, o);
                return o;
            }
        }
    }
    return NULL;
}
