#include "kube/kube_store.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/hash.h"

/* One chained hash table per index: the primary one by namespace/name (unique; chain link next[0]) and one per
 * index (several entries may share a key; chain link next[1 + index]). The chains run through the entries, so an
 * index costs a pointer per entry; buckets double when the load passes 2. */
typedef struct htable {
    ns_kube_obj **buckets;
    size_t n_buckets;
    size_t n;
    int link; /* which of an entry's next[] chains this table */
} htable;

_Static_assert(sizeof(((ns_kube_obj *)0)->next) / sizeof(ns_kube_obj *) == 1 + NS_KUBE_N_INDEXES,
               "an entry has a chain link for the primary table and for each index");
_Static_assert(sizeof(((ns_kube_obj *)0)->pprev) == sizeof(((ns_kube_obj *)0)->next),
               "an entry has a back link for each chain link");

struct ns_kube_store {
    ns_kube_free_fn free_typed;
    htable primary;
    htable index[NS_KUBE_N_INDEXES];
    uint32_t generation;
    size_t unseen_from; /* relist: primary buckets before this one hold no unseen entry */
};


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

/* The hash an entry is filed under in table t. */
static uint64_t obj_hash(const htable *t, const ns_kube_obj *o)
{
    if (t->link == 0)
        return ns_hash_str(ns_hash_str(NS_HASH_FNV_BASIS, o->namespace_) ^ 0x2f, o->name);
    return ns_hash_str(NS_HASH_FNV_BASIS, index_key(o, t->link - 1));
}

/* Puts o at the head of the chain *head (the table's link). */
static void chain_push(ns_kube_obj **head, int link, ns_kube_obj *o)
{
    o->next[link] = *head;
    if (*head)
        (*head)->pprev[link] = &o->next[link];
    o->pprev[link] = head;
    *head = o;
}

static int table_grow(htable *t)
{
    size_t n = t->n_buckets ? t->n_buckets * 2 : 64;
    ns_kube_obj **b = calloc(n, sizeof(*b));
    if (!b)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory growing an informer cache");
    for (size_t i = 0; i < t->n_buckets; i++) {
        for (ns_kube_obj *o = t->buckets[i], *next; o; o = next) {
            next = o->next[t->link];
            chain_push(&b[obj_hash(t, o) & (n - 1)], t->link, o);
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->n_buckets = n;
    return 0;
}

static int table_add(htable *t, ns_kube_obj *obj)
{
    if (t->n >= 2 * t->n_buckets && table_grow(t) < 0)
        return NS_ERR_INTERNAL;
    chain_push(&t->buckets[obj_hash(t, obj) & (t->n_buckets - 1)], t->link, obj);
    t->n++;
    return 0;
}

/* Takes obj out of t's chain if it is in it (pprev set by chain_push, cleared here). */
static void table_remove(htable *t, ns_kube_obj *obj)
{
    ns_kube_obj **pprev = obj->pprev[t->link];
    if (!pprev)
        return;
    ns_kube_obj *next = obj->next[t->link];
    *pprev = next;
    if (next)
        next->pprev[t->link] = pprev;
    obj->next[t->link] = NULL;
    obj->pprev[t->link] = NULL;
    t->n--;
}

static void table_free(htable *t)
{
    free(t->buckets);
    t->buckets = NULL;
    t->n_buckets = t->n = 0;
}

ns_kube_store *ns_kube_store_new(ns_kube_free_fn free_typed)
{
    ns_kube_store *s = calloc(1, sizeof(*s));
    if (!s) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory creating an informer cache");
        return NULL;
    }
    s->free_typed = free_typed;
    s->primary.link = 0;
    for (int i = 0; i < NS_KUBE_N_INDEXES; i++)
        s->index[i].link = 1 + i;
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
        for (ns_kube_obj *o = s->primary.buckets[i], *next; o; o = next) {
            next = o->next[0];
            ns_kube_obj_free(s, o);
        }
    }
    table_free(&s->primary);
    for (int i = 0; i < NS_KUBE_N_INDEXES; i++)
        table_free(&s->index[i]);
    free(s);
}

/* Copies the strings of src[] not in `borrowed` (a bit per string, in ns_kube_obj's order) into the entry's block. */
static ns_kube_obj *obj_new(const char *const src[6], unsigned borrowed, void *typed)
{
    size_t total = sizeof(ns_kube_obj);
    for (size_t i = 0; i < 6; i++)
        total += src[i] && !(borrowed & (1u << i)) ? strlen(src[i]) + 1 : 0;
    ns_kube_obj *o = malloc(total);
    if (!o) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory caching %s", src[1]);
        return NULL;
    }
    char *p = (char *)(o + 1);
    const char **dst[] = {&o->namespace_, &o->name, &o->uid, &o->resource_version, &o->node_name, &o->provider_id};
    for (size_t i = 0; i < 6; i++) {
        *dst[i] = src[i];
        if (src[i] && !(borrowed & (1u << i))) {
            size_t n = strlen(src[i]) + 1;
            memcpy(p, src[i], n);
            *dst[i] = p;
            p += n;
        }
    }
    o->typed = typed;
    o->generation = 0;
    memset(o->next, 0, sizeof(o->next));
    memset(o->pprev, 0, sizeof(o->pprev));
    return o;
}

ns_kube_obj *ns_kube_obj_new(const char *namespace_, const char *name, const char *uid, const char *rv,
                             const char *node_name, const char *provider_id, void *typed)
{
    const char *src[] = {namespace_, name, uid, rv, node_name, provider_id};
    return obj_new(src, 0, typed);
}

ns_kube_obj *ns_kube_obj_new_typed(const char *uid, const char *rv, const char *provider_id, void *typed,
                                   const char *typed_namespace, const char *typed_name, const char *typed_node_name)
{
    const char *src[] = {typed_namespace, typed_name, uid, rv, typed_node_name, provider_id};
    return obj_new(src, 1u << 0 | 1u << 1 | 1u << 4, typed);
}

static void unlink_obj(ns_kube_store *s, ns_kube_obj *o)
{
    table_remove(&s->primary, o);
    for (int i = 0; i < NS_KUBE_N_INDEXES; i++) {
        if (index_key(o, i))
            table_remove(&s->index[i], o);
    }
}

static ns_kube_obj *find(const ns_kube_store *s, const char *ns, const char *name)
{
    if (!s->primary.n_buckets)
        return NULL;
    ns_kube_obj key = {.namespace_ = ns, .name = name};
    for (ns_kube_obj *o = s->primary.buckets[obj_hash(&s->primary, &key) & (s->primary.n_buckets - 1)]; o;
         o = o->next[0]) {
        if (str_eq(o->name, name) && str_eq(o->namespace_, ns))
            return o;
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
    s->unseen_from = 0;
    int rc = table_add(&s->primary, obj);
    int added = 0;
    for (; rc == 0 && added < NS_KUBE_N_INDEXES; added++) {
        if (index_key(obj, added))
            rc = table_add(&s->index[added], obj);
    }
    if (rc < 0) {
        /* out of the tables it went into (an index that failed to grow never took it) */
        table_remove(&s->primary, obj);
        for (int i = 0; i < added - 1; i++) {
            if (index_key(obj, i))
                table_remove(&s->index[i], obj);
        }
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
            for (const ns_kube_obj *o = s->primary.buckets[i]; o; o = o->next[0]) {
                seen++;
                if (!fn(ud, o))
                    return seen;
            }
        }
        return seen;
    }
    const htable *t = &s->index[index];
    if (!key || !t->n_buckets)
        return 0;
    uint64_t hash = ns_hash_str(NS_HASH_FNV_BASIS, key);
    for (const ns_kube_obj *o = t->buckets[hash & (t->n_buckets - 1)]; o; o = o->next[t->link]) {
        if (str_eq(index_key(o, index), key)) {
            seen++;
            if (!fn(ud, o))
                return seen;
        }
    }
    return seen;
}

void ns_kube_store_begin_relist(ns_kube_store *s)
{
    s->generation++;
    s->unseen_from = 0;
}

void ns_kube_store_mark_seen(ns_kube_store *s, ns_kube_obj *obj)
{
    obj->generation = s->generation;
}

ns_kube_obj *ns_kube_store_take_unseen(ns_kube_store *s)
{
    /* Resumes where the last call stopped, so taking k of n entries is O(n), not O(k n); a put (which may grow the
     * table) starts the scan over. */
    for (size_t i = s->unseen_from; i < s->primary.n_buckets; i++) {
        for (ns_kube_obj *o = s->primary.buckets[i]; o; o = o->next[0]) {
            if (o->generation != s->generation) {
                s->unseen_from = i;
                unlink_obj(s, o);
                return o;
            }
        }
    }
    s->unseen_from = s->primary.n_buckets;
    return NULL;
}
