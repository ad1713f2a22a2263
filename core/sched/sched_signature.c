/*
 * A pod's scheduling signature: every field that decides where it may go (namespace, labels, requests, node
 * selector, affinity, tolerations, spread constraints, host ports), serialised so that pods with equal signatures
 * can be placed as one group.
 */
#include "sched/sched_signature.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"

static void sb_raw(sched_sb *b, const char *s, size_t n)
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

static void sb_str(sched_sb *b, const char *s)
{
    sb_raw(b, s ? s : "\x1e", s ? strlen(s) : 1);
}

/* Decimal, written by hand: signatures are built for every pending pod and snprintf dominated their cost. */
static void sb_int(sched_sb *b, int64_t v)
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
    sb_raw(b, tmp + at, sizeof(tmp) - at);
}

static void sb_labels(sched_sb *b, const ns_labels *l)
{
    sb_int(b, (int64_t)l->n);
    for (size_t i = 0; i < l->n; i++) {
        sb_str(b, l->items[i].key);
        sb_str(b, l->items[i].value);
    }
}

static void sb_reqs(sched_sb *b, const ns_selector_req *r, size_t n)
{
    sb_int(b, (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        sb_str(b, r[i].key);
        sb_int(b, r[i].op);
        sb_int(b, r[i].min_values);
        sb_int(b, (int64_t)r[i].n_values);
        for (size_t j = 0; j < r[i].n_values; j++)
            sb_str(b, r[i].values[j]);
    }
}

static void sb_selector(sched_sb *b, const ns_label_selector *s)
{
    sb_int(b, s->present);
    sb_labels(b, &s->match_labels);
    sb_reqs(b, s->exprs, s->n_exprs);
}

static void sb_strv(sched_sb *b, char *const *v, size_t n)
{
    sb_int(b, (int64_t)n);
    for (size_t i = 0; i < n; i++)
        sb_str(b, v[i]);
}

static void sb_term(sched_sb *b, const ns_node_selector_term *t)
{
    sb_reqs(b, t->exprs, t->n_exprs);
    sb_reqs(b, t->fields, t->n_fields);
}

static void sb_pod_term(sched_sb *b, const ns_pod_affinity_term *t)
{
    sb_selector(b, &t->selector);
    sb_strv(b, t->namespaces, t->n_namespaces);
    sb_selector(b, &t->namespace_selector);
    sb_str(b, t->topology_key);
    sb_strv(b, t->match_label_keys, t->n_match_label_keys);
    sb_strv(b, t->mismatch_label_keys, t->n_mismatch_label_keys);
}

static void sb_affinity(sched_sb *b, const ns_affinity *a)
{
    sb_int(b, a->has_node_required);
    sb_int(b, (int64_t)a->n_node_required);
    for (size_t i = 0; i < a->n_node_required; i++)
        sb_term(b, &a->node_required[i]);
    sb_int(b, (int64_t)a->n_node_preferred);
    for (size_t i = 0; i < a->n_node_preferred; i++) {
        sb_int(b, a->node_preferred[i].weight);
        sb_term(b, &a->node_preferred[i].term);
    }
    sb_int(b, (int64_t)a->n_pod_required);
    for (size_t i = 0; i < a->n_pod_required; i++)
        sb_pod_term(b, &a->pod_required[i]);
    sb_int(b, (int64_t)a->n_pod_preferred);
    for (size_t i = 0; i < a->n_pod_preferred; i++) {
        sb_int(b, a->pod_preferred[i].weight);
        sb_pod_term(b, &a->pod_preferred[i].term);
    }
    sb_int(b, (int64_t)a->n_anti_required);
    for (size_t i = 0; i < a->n_anti_required; i++)
        sb_pod_term(b, &a->anti_required[i]);
    sb_int(b, (int64_t)a->n_anti_preferred);
    for (size_t i = 0; i < a->n_anti_preferred; i++) {
        sb_int(b, a->anti_preferred[i].weight);
        sb_pod_term(b, &a->anti_preferred[i].term);
    }
}

static void sb_resources(sched_sb *b, const ns_res *r)
{
    sb_int(b, r->cpu_milli);
    sb_int(b, r->memory_bytes);
    sb_int(b, r->ephemeral_storage_bytes);
    sb_int(b, r->pods);
    sb_int(b, r->n_ext);
    for (uint32_t i = 0; i < r->n_ext; i++) {
        sb_str(b, r->ext[i].name);
        sb_int(b, r->ext[i].value);
    }
}

int sched_signature(const ns_pod *p, sched_sb *b)
{
    b->len = 0;
    b->failed = false;
    sb_str(b, p->meta.namespace_);
    sb_labels(b, &p->meta.labels);
    sb_resources(b, &p->requests);
    sb_labels(b, &p->node_selector);
    sb_affinity(b, &p->affinity);
    sb_int(b, (int64_t)p->n_tolerations);
    for (size_t i = 0; i < p->n_tolerations; i++) {
        const ns_toleration *t = &p->tolerations[i];
        sb_str(b, t->key);
        sb_int(b, t->exists);
        sb_str(b, t->value);
        sb_str(b, t->effect);
    }
    sb_int(b, (int64_t)p->n_spread);
    for (size_t i = 0; i < p->n_spread; i++) {
        const ns_topology_spread *t = &p->spread[i];
        sb_int(b, t->max_skew);
        sb_str(b, t->topology_key);
        sb_int(b, t->when_unsatisfiable);
        sb_selector(b, &t->selector);
        sb_int(b, t->min_domains);
        sb_int(b, t->node_affinity_policy);
        sb_int(b, t->node_taints_policy);
        sb_strv(b, t->match_label_keys, t->n_match_label_keys);
    }
    sb_int(b, (int64_t)p->n_host_ports);
    for (size_t i = 0; i < p->n_host_ports; i++) {
        sb_str(b, p->host_ports[i].ip);
        sb_int(b, p->host_ports[i].port);
        sb_str(b, p->host_ports[i].protocol);
    }
    if (b->failed)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory describing pod %s", p->meta.name);
    return NS_OK;
}

uint64_t sched_sb_hash(const sched_sb *b)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < b->len; i++)
        h = (h ^ (uint8_t)b->buf[i]) * UINT64_C(1099511628211);
    return h;
}
