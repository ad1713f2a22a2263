/* The canonical text of a pod's scheduling fields: each field ends with \x1f, a NULL string is \x1e. */
#include "model/pod_key.h"

#include <stdlib.h>
#include <string.h>

#include "model/hash.h"

static void key_raw(ns_key *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 2 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->len + n + 2 > cap)
            cap *= 2;
        char *nb = realloc(b->buf, cap);
        if (!nb) {
            b->failed = true;
            return;
        }
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len++] = '\x1f';
    b->buf[b->len] = '\0';
}

void ns_key_str(ns_key *b, const char *s)
{
    key_raw(b, s ? s : "\x1e", s ? strlen(s) : 1);
}

/* Decimal, written by hand: keys are built for every pending pod and snprintf dominated their cost. */
void ns_key_int(ns_key *b, int64_t v)
{
    char tmp[24];
    size_t at = sizeof(tmp);
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--at] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[--at] = '-';
    key_raw(b, tmp + at, sizeof(tmp) - at);
}

void ns_key_labels(ns_key *b, const ns_labels *l)
{
    ns_key_int(b, (int64_t)l->n);
    for (size_t i = 0; i < l->n; i++) {
        ns_key_str(b, l->items[i].key);
        ns_key_str(b, l->items[i].value);
    }
}

static void key_reqs(ns_key *b, const ns_selector_req *r, size_t n)
{
    ns_key_int(b, (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        ns_key_str(b, r[i].key);
        ns_key_int(b, r[i].op);
        ns_key_int(b, r[i].min_values);
        ns_key_int(b, (int64_t)r[i].n_values);
        for (size_t j = 0; j < r[i].n_values; j++)
            ns_key_str(b, r[i].values[j]);
    }
}

static void key_selector(ns_key *b, const ns_label_selector *s)
{
    ns_key_int(b, s->present);
    ns_key_labels(b, &s->match_labels);
    key_reqs(b, s->exprs, s->n_exprs);
}

static void key_strv(ns_key *b, char *const *v, size_t n)
{
    ns_key_int(b, (int64_t)n);
    for (size_t i = 0; i < n; i++)
        ns_key_str(b, v[i]);
}

static void key_term(ns_key *b, const ns_node_selector_term *t)
{
    key_reqs(b, t->exprs, t->n_exprs);
    key_reqs(b, t->fields, t->n_fields);
}

static void key_pod_term(ns_key *b, const ns_pod_affinity_term *t)
{
    key_selector(b, &t->selector);
    key_strv(b, t->namespaces, t->n_namespaces);
    key_selector(b, &t->namespace_selector);
    ns_key_str(b, t->topology_key);
    key_strv(b, t->match_label_keys, t->n_match_label_keys);
    key_strv(b, t->mismatch_label_keys, t->n_mismatch_label_keys);
}

static void key_weighted(ns_key *b, const ns_weighted_pod_affinity_term *t, size_t n)
{
    ns_key_int(b, (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        ns_key_int(b, t[i].weight);
        key_pod_term(b, &t[i].term);
    }
}

void ns_key_affinity(ns_key *b, const ns_affinity *a)
{
    ns_key_int(b, a->has_node_required);
    ns_key_int(b, (int64_t)a->n_node_required);
    for (size_t i = 0; i < a->n_node_required; i++)
        key_term(b, &a->node_required[i]);
    ns_key_int(b, (int64_t)a->n_node_preferred);
    for (size_t i = 0; i < a->n_node_preferred; i++) {
        ns_key_int(b, a->node_preferred[i].weight);
        key_term(b, &a->node_preferred[i].term);
    }
    ns_key_int(b, (int64_t)a->n_pod_required);
    for (size_t i = 0; i < a->n_pod_required; i++)
        key_pod_term(b, &a->pod_required[i]);
    key_weighted(b, a->pod_preferred, a->n_pod_preferred);
    ns_key_int(b, (int64_t)a->n_anti_required);
    for (size_t i = 0; i < a->n_anti_required; i++)
        key_pod_term(b, &a->anti_required[i]);
    key_weighted(b, a->anti_preferred, a->n_anti_preferred);
}

void ns_key_spread(ns_key *b, const ns_topology_spread *s, size_t n)
{
    ns_key_int(b, (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        const ns_topology_spread *t = &s[i];
        ns_key_int(b, t->max_skew);
        ns_key_str(b, t->topology_key);
        ns_key_int(b, t->when_unsatisfiable);
        key_selector(b, &t->selector);
        ns_key_int(b, t->min_domains);
        ns_key_int(b, t->node_affinity_policy);
        ns_key_int(b, t->node_taints_policy);
        key_strv(b, t->match_label_keys, t->n_match_label_keys);
    }
}

uint64_t ns_key_hash(const ns_key *b)
{
    return ns_hash_bytes(NS_HASH_SEED, b->buf, b->len);
}
