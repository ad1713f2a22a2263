/*
 * Topology: spread constraints, pod affinity and pod anti-affinity, as Karpenter's topology groups; zone and hostname
 * here, other keys through requirements (sched_keyed.c). Each distinct (kind, key, selector, namespaces, maxSkew, minDomains, and for spread constraints the node
 * filter of nodeAffinityPolicy and nodeTaintsPolicy) is one sched_topo with pod counts per zone and per host; pod
 * groups point at the topologies they declare (constraints) and at those that count them. matchLabelKeys widen a
 * spread selector with the declaring pod's own label values.
 *
 * Domain choice follows Karpenter: a zonal spread picks the zone with the fewest matching pods among those within
 * maxSkew of the minimum over the domains its filter leaves (the minimum is 0 when fewer than minDomains such zones
 * exist; a hostname spread always has minimum 0, since a new node can always be made); affinity needs a domain that
 * already holds a matching pod, except for a self-selecting pod when no matching pod sits in a domain its own
 * requirements allow; anti-affinity needs a domain without one. Counts are recorded only
 * once a claim's zone is decided, except anti-affinity, which blocks every zone a claim might still use.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "sched/sched_domains.h"
#include "sched/sched_internal.h"
#include "sched/sched_signature.h"

static int sb_add(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s ? s : "~") + 1;
    if (*len + n + 1 > *cap) {
        size_t nc = *cap ? *cap * 2 : 128;
        while (*len + n + 1 > nc)
            nc *= 2;
        char *nb = realloc(*buf, nc);
        if (!nb)
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory describing a topology");
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, s ? s : "~", n - 1);
    (*buf)[*len + n - 1] = '\x1f';
    *len += n;
    (*buf)[*len] = '\0';
    return NS_OK;
}

typedef struct topo_spec {
    int kind;
    const char *key;
    int32_t max_skew, min_domains;
    const ns_label_selector *selector;
    const char *const *namespaces;
    size_t n_namespaces;
    bool all_namespaces;
    const char *own_namespace;
    /* Spread constraints: the node filter and a selector widened by matchLabelKeys, both owned until topo_get
     * moves them into a new topology (it leaves them zeroed then). */
    sched_domain_filter filter;
    ns_label_selector *owned_selector;
} topo_spec;

static void spec_release(topo_spec *spec)
{
    sched_domain_filter_free(&spec->filter);
    ns_label_selector_free(spec->owned_selector);
    free(spec->owned_selector);
    spec->owned_selector = NULL;
}

static char *topo_sig(const topo_spec *t)
{
    char *buf = NULL, num[64];
    size_t len = 0, cap = 0;
    snprintf(num, sizeof(num), "%d|%d|%d|%d|%zu", t->kind, t->max_skew, t->min_domains, t->all_namespaces,
             t->selector->n_exprs);
    int rc = sb_add(&buf, &len, &cap, num);
    rc = rc ? rc : sb_add(&buf, &len, &cap, t->key);
    rc = rc ? rc : sb_add(&buf, &len, &cap, t->selector->present ? "sel" : "nosel");
    for (size_t i = 0; rc == NS_OK && i < t->selector->match_labels.n; i++) {
        rc = sb_add(&buf, &len, &cap, t->selector->match_labels.items[i].key);
        rc = rc ? rc : sb_add(&buf, &len, &cap, t->selector->match_labels.items[i].value);
    }
    for (size_t i = 0; rc == NS_OK && i < t->selector->n_exprs; i++) {
        const ns_selector_req *e = &t->selector->exprs[i];
        rc = sb_add(&buf, &len, &cap, e->key);
        rc = rc ? rc : sb_add(&buf, &len, &cap, ns_req_op_name(e->op));
        for (size_t j = 0; rc == NS_OK && j < e->n_values; j++)
            rc = sb_add(&buf, &len, &cap, e->values[j]);
        rc = rc ? rc : sb_add(&buf, &len, &cap, "|");
    }
    rc = rc ? rc : sb_add(&buf, &len, &cap, t->n_namespaces ? "ns" : "own");
    for (size_t i = 0; rc == NS_OK && i < t->n_namespaces; i++)
        rc = sb_add(&buf, &len, &cap, t->namespaces[i]);
    if (rc == NS_OK && !t->n_namespaces && !t->all_namespaces)
        rc = sb_add(&buf, &len, &cap, t->own_namespace);
    if (rc == NS_OK)
        rc = sched_domain_filter_sig(&t->filter, &buf, &len, &cap);
    if (rc != NS_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

static long topo_find(const sched *s, const char *sig)
{
    for (size_t i = 0; i < s->n_topos; i++)
        if (strcmp(s->topos[i].sig, sig) == 0)
            return (long)i;
    return -1;
}

/* The topology for spec, added when new (taking spec's filter and owned selector). *out is its index. */
static int topo_get(sched *s, topo_spec *spec, uint32_t *out)
{
    char *sig = topo_sig(spec);
    if (!sig)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory describing a topology");
    long at = topo_find(s, sig);
    if (at >= 0) {
        free(sig);
        *out = (uint32_t)at;
        return NS_OK;
    }
    if (s->n_topos == s->cap_topos) {
        size_t nc = s->cap_topos ? s->cap_topos * 2 : 16;
        sched_topo *nt = realloc(s->topos, nc * sizeof(*nt));
        if (!nt) {
            free(sig);
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for %zu topologies", nc);
        }
        s->topos = nt;
        s->cap_topos = nc;
    }
    sched_topo *t = &s->topos[s->n_topos];
    memset(t, 0, sizeof(*t));
    t->kind = spec->kind;
    t->hostname = strcmp(spec->key, NS_LABEL_HOSTNAME) == 0;
    t->keyed = !t->hostname && strcmp(spec->key, NS_LABEL_ZONE) != 0;
    t->key = spec->key;
    t->max_skew = spec->max_skew;
    t->min_domains = spec->min_domains;
    t->selector = spec->selector;
    t->namespaces = spec->namespaces;
    t->n_namespaces = spec->n_namespaces;
    t->all_namespaces = spec->all_namespaces;
    t->own_namespace = spec->own_namespace;
    t->sig = sig;
    t->filter = spec->filter;
    t->owned_selector = spec->owned_selector;
    memset(&spec->filter, 0, sizeof(spec->filter));
    spec->owned_selector = NULL;
    s->n_topos++;
    if (t->kind == SCHED_TOPO_SPREAD && !t->hostname && !t->keyed)
        t->universe = sched_domain_zones(s, &t->filter);
    *out = (uint32_t)(s->n_topos - 1);
    return t->keyed ? sched_keyed_universe(s, t) : NS_OK;
}

bool sched_topo_matches(const sched_topo *t, const ns_pod *pod)
{
    const char *ns = pod->meta.namespace_ ? pod->meta.namespace_ : "default";
    bool in_ns = t->all_namespaces;
    for (size_t i = 0; !in_ns && i < t->n_namespaces; i++)
        in_ns = strcmp(t->namespaces[i], ns) == 0;
    if (!in_ns && !t->all_namespaces && !t->n_namespaces)
        in_ns = strcmp(t->own_namespace ? t->own_namespace : "default", ns) == 0;
    return in_ns && ns_label_selector_matches(t->selector, &pod->meta.labels);
}

static void term_spec(const ns_pod *pod, const ns_pod_affinity_term *term, int kind, topo_spec *spec)
{
    const ns_label_selector *nss = &term->namespace_selector;
    memset(spec, 0, sizeof(*spec));
    spec->kind = kind;
    spec->key = term->topology_key ? term->topology_key : "";
    spec->selector = &term->selector;
    spec->namespaces = (const char *const *)term->namespaces;
    spec->n_namespaces = term->n_namespaces;
    spec->all_namespaces = nss->present && nss->match_labels.n == 0 && nss->n_exprs == 0;
    spec->own_namespace = pod->meta.namespace_ ? pod->meta.namespace_ : "default";
}

static int add_con(sched *s, sched_group *g, topo_spec *spec, uint8_t src, int32_t weight, bool anyway)
{
    sched_constraint *nc = realloc(g->cons, (g->n_cons + 1) * sizeof(*nc));
    if (!nc)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for topology constraints");
    g->cons = nc;
    sched_constraint *c = &g->cons[g->n_cons];
    memset(c, 0, sizeof(*c));
    int rc = topo_get(s, spec, &c->topo);
    if (rc != NS_OK)
        return rc;
    c->src = src;
    c->active = true;
    c->schedule_anyway = anyway;
    c->weight = weight;
    c->key = spec->key;
    c->self = sched_topo_matches(&s->topos[c->topo], g->pod);
    /* Preferred terms are removed heaviest first; equal weights in declaration order. */
    for (size_t i = 0; i < g->n_cons; i++) {
        sched_constraint *o = &g->cons[i];
        if (o->src != src)
            continue;
        if (o->weight >= weight)
            c->order++;
        else
            o->order++;
    }
    g->n_cons++;
    return NS_OK;
}

/* The constraint's selector, with "key In [the pod's value]" added for each matchLabelKeys key the pod has a label
 * for (Kubernetes ignores the others), so pods of different revisions spread separately. */
static int spread_selector(const ns_pod *p, const ns_topology_spread *t, topo_spec *spec)
{
    spec->selector = &t->selector;
    if (t->n_match_label_keys == 0)
        return NS_OK;
    ns_label_selector *sel = calloc(1, sizeof(*sel));
    ns_selector_req *exprs = NULL;
    if (!sel || ns_label_selector_copy(&t->selector, sel) != NS_OK ||
        !(exprs = realloc(sel->exprs, (sel->n_exprs + t->n_match_label_keys) * sizeof(*exprs)))) {
        ns_label_selector_free(sel);
        free(sel);
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory applying matchLabelKeys of pod %s",
                       p->meta.name);
    }
    sel->exprs = exprs;
    spec->owned_selector = sel;
    spec->selector = sel;
    for (size_t i = 0; i < t->n_match_label_keys; i++) {
        const char *value = ns_labels_get(&p->meta.labels, t->match_label_keys[i]);
        if (!value)
            continue;
        ns_selector_req src = {.key = t->match_label_keys[i], .op = NS_OP_IN, .values = (char **)&value,
                               .n_values = 1};
        if (ns_selector_req_copy(&src, &sel->exprs[sel->n_exprs]) != NS_OK)
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory applying matchLabelKeys of pod %s",
                           p->meta.name);
        sel->n_exprs++;
    }
    return NS_OK;
}

/* One spread constraint of the pod; `deduced` (may be NULL) replaces its selector: a default constraint's. */
static int register_spread(sched *s, sched_group *g, const ns_topology_spread *t, const ns_label_selector *deduced)
{
    const ns_pod *p = g->pod;
    topo_spec spec;
    memset(&spec, 0, sizeof(spec));
    spec.kind = SCHED_TOPO_SPREAD;
    spec.key = t->topology_key ? t->topology_key : "";
    spec.max_skew = t->max_skew > 0 ? t->max_skew : 1;
    spec.min_domains = t->min_domains;
    spec.own_namespace = p->meta.namespace_ ? p->meta.namespace_ : "default";
    int rc = NS_OK;
    if (!deduced) {
        rc = spread_selector(p, t, &spec);
    } else if (!(spec.owned_selector = calloc(1, sizeof(*spec.owned_selector))) ||
               ns_label_selector_copy(deduced, spec.owned_selector) != NS_OK) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory applying the default topology spread to pod %s",
                     p->meta.name);
    } else {
        spec.selector = spec.owned_selector;
    }
    if (rc == NS_OK)
        rc = sched_domain_filter_init(&spec.filter, p, t);
    if (rc == NS_OK)
        rc = add_con(s, g, &spec, SCHED_SRC_SPREAD, 0, t->when_unsatisfiable == NS_SCHEDULE_ANYWAY);
    spec_release(&spec);
    return rc;
}

/* The default constraints (ns_sched_input.default_spread) for a pod that declares none, with its deduced selector. */
static int register_default_spread(sched *s, sched_group *g)
{
    const ns_pod *p = g->pod;
    if (p->n_spread > 0 || s->in->n_default_spread == 0)
        return NS_OK;
    ns_label_selector sel;
    bool found;
    int rc = sched_default_selector(s->in->cluster, p, &sel, &found);
    for (size_t i = 0; rc == NS_OK && found && i < s->in->n_default_spread; i++)
        rc = register_spread(s, g, &s->in->default_spread[i], &sel);
    ns_label_selector_free(&sel);
    return rc;
}

int sched_topo_register(sched *s, sched_group *g)
{
    const ns_pod *p = g->pod;
    const ns_affinity *a = &p->affinity;
    int rc = register_default_spread(s, g);
    topo_spec spec;
    for (size_t i = 0; rc == NS_OK && i < p->n_spread; i++)
        rc = register_spread(s, g, &p->spread[i], NULL);
    for (size_t i = 0; rc == NS_OK && i < a->n_pod_required; i++) {
        term_spec(p, &a->pod_required[i], SCHED_TOPO_AFFINITY, &spec);
        rc = add_con(s, g, &spec, SCHED_SRC_AFF_REQ, 0, false);
    }
    for (size_t i = 0; rc == NS_OK && i < a->n_pod_preferred; i++) {
        term_spec(p, &a->pod_preferred[i].term, SCHED_TOPO_AFFINITY, &spec);
        rc = add_con(s, g, &spec, SCHED_SRC_AFF_PREF, a->pod_preferred[i].weight, false);
    }
    for (size_t i = 0; rc == NS_OK && i < a->n_anti_required; i++) {
        term_spec(p, &a->anti_required[i], SCHED_TOPO_ANTI, &spec);
        rc = add_con(s, g, &spec, SCHED_SRC_ANTI_REQ, 0, false);
    }
    for (size_t i = 0; rc == NS_OK && i < a->n_anti_preferred; i++) {
        term_spec(p, &a->anti_preferred[i].term, SCHED_TOPO_ANTI, &spec);
        rc = add_con(s, g, &spec, SCHED_SRC_ANTI_PREF, a->anti_preferred[i].weight, false);
    }
    return rc;
}

int sched_topo_link(sched *s, sched_group *g)
{
    for (size_t i = 0; i < s->n_topos; i++) {
        if (!sched_topo_matches(&s->topos[i], g->pod))
            continue;
        uint32_t *nc = realloc(g->counted_by, (g->n_counted_by + 1) * sizeof(*nc));
        if (!nc)
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory linking topologies");
        g->counted_by = nc;
        g->counted_by[g->n_counted_by++] = (uint32_t)i;
        if (s->topos[i].kind != SCHED_TOPO_ANTI)
            continue;
        uint32_t *ni = realloc(g->inverse, (g->n_inverse + 1) * sizeof(*ni));
        if (!ni)
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory linking topologies");
        g->inverse = ni;
        g->inverse[g->n_inverse++] = (uint32_t)i;
    }
    return NS_OK;
}

static bool has_skips(const sched_topo *t)
{
    return t->hostname && (t->kind == SCHED_TOPO_SPREAD || t->kind == SCHED_TOPO_ANTI);
}

int sched_topo_hosts(sched *s, size_t n_hosts)
{
    for (size_t i = 0; i < s->n_topos; i++) {
        sched_topo *t = &s->topos[i];
        if (has_skips(t) && n_hosts > s->n_nodes)
            for (int k = 0; k < 2; k++)
                if (sched_skip_reserve(&t->skip[k], n_hosts - s->n_nodes) != NS_OK)
                    return NS_ERR_INTERNAL;
        if (!t->hostname || t->host_cap >= n_hosts)
            continue;
        size_t nc = t->host_cap ? t->host_cap : 64;
        while (nc < n_hosts)
            nc *= 2;
        int32_t *h = realloc(t->host, nc * sizeof(int32_t));
        if (h)
            t->host = h;
        int32_t *o = h ? realloc(t->owner_host, nc * sizeof(int32_t)) : NULL;
        if (o)
            t->owner_host = o;
        if (!h || !o)
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for %zu hosts", nc);
        memset(t->host + t->host_cap, 0, (nc - t->host_cap) * sizeof(int32_t));
        memset(t->owner_host + t->host_cap, 0, (nc - t->host_cap) * sizeof(int32_t));
        t->host_cap = nc;
    }
    return NS_OK;
}

/* Writes the reason only when the caller asked for one: the hot path passes NULL and skips the formatting. */
static void say(char *why, size_t len, const char *fmt, ...) NS_PRINTF(3, 4);
static void say(char *why, size_t len, const char *fmt, ...)
{
    if (!why || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

static uint32_t lowest_bit(uint32_t v)
{
    return v & (~v + 1);
}

static bool spread_zone(const sched *s, const sched_constraint *c, const sched_topo *t, uint32_t *zones,
                        int64_t *limit, char *why, size_t len)
{
    uint32_t universe = t->universe;
    int32_t min = INT32_MAX;
    for (size_t z = 0; z < s->n_zones; z++)
        if ((universe >> z) & 1u)
            min = t->zone[z] < min ? t->zone[z] : min;
    if (min == INT32_MAX || (t->min_domains > 0 && __builtin_popcount(universe) < t->min_domains))
        min = 0;
    int best = -1;
    for (size_t z = 0; z < s->n_zones; z++) {
        if (!((*zones & universe) >> z & 1u))
            continue;
        int32_t count = t->zone[z] + (c->self ? 1 : 0);
        if (count - min <= t->max_skew && (best < 0 || t->zone[z] < t->zone[best]))
            best = (int)z;
    }
    if (best < 0) {
        say(why, len, "topology spread on %s (maxSkew %d) would be exceeded in every zone the node could use",
                 c->key, t->max_skew);
        return false;
    }
    *zones = 1u << best;
    if (c->self) {
        int64_t room = (int64_t)t->max_skew + min - t->zone[best];
        *limit = room < *limit ? room : *limit;
    }
    return true;
}

static bool allow_one(const sched *s, const sched_group *g, const sched_constraint *c, uint32_t host, uint32_t *zones,
                      int64_t *limit, char *why, size_t len)
{
    const sched_topo *t = &s->topos[c->topo];
    if (t->keyed)
        return true; /* g->reqs already holds the domains it allows (sched_keyed_requirements) */
    if (t->kind == SCHED_TOPO_SPREAD && t->hostname) {
        int32_t count = t->host[host];
        if (count + (c->self ? 1 : 0) > t->max_skew) {
            say(why, len, "topology spread on %s (maxSkew %d) would be exceeded", c->key, t->max_skew);
            return false;
        }
        if (c->self)
            *limit = t->max_skew - count < *limit ? t->max_skew - count : *limit;
        return true;
    }
    if (t->kind == SCHED_TOPO_SPREAD)
        return spread_zone(s, c, t, zones, limit, why, len);
    if (t->kind == SCHED_TOPO_AFFINITY && t->hostname) {
        if (t->host[host] > 0 || (c->self && t->total == 0))
            return true;
        say(why, len, "pod affinity on %s: no matching pod runs on this node", c->key);
        return false;
    }
    if (t->kind == SCHED_TOPO_AFFINITY) {
        uint32_t with = 0;
        for (size_t z = 0; z < s->n_zones; z++)
            if (t->zone[z] > 0)
                with |= 1u << z;
        if (*zones & with) {
            *zones &= with;
            return true;
        }
        /* Karpenter's nextDomainAffinity: a self-selecting pod starts a domain when no matching pod sits in a
         * domain its own requirements allow (anyCompatiblePodDomain), not only when there is none at all. */
        if (c->self && !(with & g->pod_zones) && *zones) {
            *zones = lowest_bit(*zones);
            return true;
        }
        say(why, len, "pod affinity on %s: no zone this node could use runs a matching pod", c->key);
        return false;
    }
    if (t->hostname) {
        if (t->host[host] > 0) {
            say(why, len, "pod anti-affinity on %s: a matching pod runs on every candidate node", c->key);
            return false;
        }
    } else {
        for (size_t z = 0; z < s->n_zones; z++)
            if (t->zone[z] > 0)
                *zones &= ~(1u << z);
        if (!*zones) {
            say(why, len, "pod anti-affinity on %s: every zone the node could use runs a matching pod", c->key);
            return false;
        }
    }
    if (c->self)
        *limit = 1 < *limit ? 1 : *limit;
    return true;
}

static uint32_t zones_allowed_by(const sched *s, const sched_group *g, const sched_constraint *c,
                                 const sched_topo *t, uint32_t all)
{
    uint32_t with = 0, zones = 0;
    int32_t min = INT32_MAX;
    for (size_t z = 0; z < s->n_zones; z++) {
        with |= t->zone[z] > 0 ? 1u << z : 0;
        if ((t->universe >> z) & 1u)
            min = t->zone[z] < min ? t->zone[z] : min;
    }
    if (t->kind == SCHED_TOPO_AFFINITY)
        return with & g->pod_zones ? with : (c->self ? all : 0);
    if (t->kind == SCHED_TOPO_ANTI)
        return all & ~with;
    if (min == INT32_MAX || (t->min_domains > 0 && __builtin_popcount(t->universe) < t->min_domains))
        min = 0;
    for (size_t z = 0; z < s->n_zones; z++)
        if (((t->universe >> z) & 1u) && t->zone[z] + (c->self ? 1 : 0) - min <= t->max_skew)
            zones |= 1u << z;
    return zones;
}

uint32_t sched_topo_zones(const sched *s, const sched_group *g)
{
    uint32_t all = s->n_zones >= 32 ? UINT32_MAX : (1u << s->n_zones) - 1u, zones = all;
    for (size_t i = 0; i < g->n_cons; i++) {
        const sched_topo *t = &s->topos[g->cons[i].topo];
        if (g->cons[i].active && !t->hostname && !t->keyed)
            zones &= zones_allowed_by(s, g, &g->cons[i], t, all);
    }
    for (size_t i = 0; i < g->n_inverse; i++) {
        const sched_topo *t = &s->topos[g->inverse[i]];
        for (size_t z = 0; !t->hostname && !t->keyed && z < s->n_zones; z++)
            if (t->owner_zone[z] > 0)
                zones &= ~(1u << z);
    }
    return zones;
}

bool sched_topo_allow(const sched *s, const sched_group *g, uint32_t host, uint32_t *zones, int64_t *limit,
                      char *why, size_t len)
{
    for (size_t i = 0; i < g->n_cons; i++)
        if (g->cons[i].active && !allow_one(s, g, &g->cons[i], host, zones, limit, why, len))
            return false;
    for (size_t i = 0; i < g->n_inverse; i++) {
        const sched_topo *t = &s->topos[g->inverse[i]];
        if (t->hostname && t->owner_host[host] > 0) {
            say(why, len, "a pod already on the node has anti-affinity to this pod's labels on %s",
                     NS_LABEL_HOSTNAME);
            return false;
        }
        if (t->hostname || t->keyed)
            continue;
        for (size_t z = 0; z < s->n_zones; z++)
            if (t->owner_zone[z] > 0)
                *zones &= ~(1u << z);
        if (!*zones) {
            say(why, len, "pods in every candidate zone have anti-affinity to this pod's labels on %s",
                     NS_LABEL_ZONE);
            return false;
        }
    }
    return true;
}

static void record_zones(int32_t *counts, const sched *s, uint32_t zones, bool all, int64_t count)
{
    if (__builtin_popcount(zones) == 1) {
        counts[__builtin_ctz(zones)] += (int32_t)count;
        return;
    }
    for (size_t z = 0; all && z < s->n_zones; z++)
        if ((zones >> z) & 1u)
            counts[z] += (int32_t)count;
}

/* Closes a claim in the skip lists whose condition its new counts meet (see sched_topo.skip). */
static void block_claim(const sched *s, sched_topo *t, uint32_t host)
{
    if (!has_skips(t) || host < s->n_nodes)
        return;
    size_t claim = host - s->n_nodes;
    int32_t first = t->kind == SCHED_TOPO_SPREAD ? t->max_skew : 1;
    if (t->host[host] >= first)
        sched_skip_block(&t->skip[0], claim);
    if (t->kind == SCHED_TOPO_SPREAD ? t->host[host] > t->max_skew : t->owner_host[host] > 0)
        sched_skip_block(&t->skip[1], claim);
}

void sched_topo_record(sched *s, const sched_group *g, uint32_t host, uint32_t zones, int64_t count)
{
    for (size_t i = 0; i < g->n_counted_by; i++) {
        sched_topo *t = &s->topos[g->counted_by[i]];
        if (sched_domain_filter_active(&t->filter) && !sched_domain_host_counts(s, &t->filter, host))
            continue;
        t->total += count;
        if (t->keyed) {
            sched_keyed_record(s, t, host, count, false);
        } else if (t->hostname) {
            t->host[host] += (int32_t)count;
            block_claim(s, t, host);
        } else {
            record_zones(t->zone, s, zones, t->kind == SCHED_TOPO_ANTI, count);
        }
    }
    for (size_t i = 0; i < g->n_cons; i++) {
        const sched_constraint *c = &g->cons[i];
        sched_topo *t = &s->topos[c->topo];
        /* Only required terms bind other pods (kube-scheduler's symmetry); a preferred one may be relaxed away. */
        if (!c->active || c->src != SCHED_SRC_ANTI_REQ)
            continue;
        if (t->keyed) {
            sched_keyed_record(s, t, host, count, true);
        } else if (t->hostname) {
            t->owner_host[host] += (int32_t)count;
            block_claim(s, t, host);
        } else
            record_zones(t->owner_zone, s, zones, true, count);
    }
}

int sched_topo_register_bound(sched *s, const ns_pod *pod)
{
    for (size_t i = 0; i < pod->affinity.n_anti_required; i++) {
        topo_spec spec;
        uint32_t id;
        term_spec(pod, &pod->affinity.anti_required[i], SCHED_TOPO_ANTI, &spec);
        int rc = topo_get(s, &spec, &id);
        if (rc != NS_OK)
            return rc;
    }
    return NS_OK;
}

void sched_topo_record_pod(sched *s, const ns_pod *pod, uint32_t host, int zone)
{
    uint32_t zones = zone >= 0 ? 1u << zone : 0;
    for (size_t i = 0; i < s->n_topos; i++) {
        sched_topo *t = &s->topos[i];
        if (!sched_topo_matches(t, pod) ||
            (sched_domain_filter_active(&t->filter) && !sched_domain_host_counts(s, &t->filter, host)))
            continue;
        t->total++;
        if (t->keyed)
            sched_keyed_record(s, t, host, 1, false);
        else if (t->hostname)
            t->host[host]++;
        else if (zones)
            t->zone[zone]++;
    }
    for (size_t i = 0; i < pod->affinity.n_anti_required; i++) {
        topo_spec spec;
        term_spec(pod, &pod->affinity.anti_required[i], SCHED_TOPO_ANTI, &spec);
        char *sig = topo_sig(&spec);
        long at = sig ? topo_find(s, sig) : -1;
        free(sig);
        if (at < 0)
            continue;
        sched_topo *t = &s->topos[at];
        if (t->keyed)
            sched_keyed_record(s, t, host, 1, true);
        else if (t->hostname)
            t->owner_host[host]++;
        else if (zones)
            t->owner_zone[zone]++;
    }
}

int sched_topo_group_skips(const sched *s, sched_group *g)
{
    size_t n = 0;
    uint32_t *v = realloc(g->skips, (g->n_cons + g->n_inverse + 1) * sizeof(*v));
    if (!v)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory indexing a pod group's topologies");
    g->skips = v;
    for (size_t i = 0; i < g->n_cons; i++) {
        const sched_constraint *c = &g->cons[i];
        const sched_topo *t = &s->topos[c->topo];
        if (!c->active || !has_skips(t))
            continue;
        /* A spread pod the selector does not match only fails once the count is past maxSkew. */
        v[n++] = c->topo * 2 + (t->kind == SCHED_TOPO_SPREAD && !c->self ? 1 : 0);
    }
    for (size_t i = 0; i < g->n_inverse; i++)
        if (s->topos[g->inverse[i]].hostname)
            v[n++] = g->inverse[i] * 2 + 1;
    g->n_skips = n;
    return NS_OK;
}

void sched_topos_free(sched *s)
{
    for (size_t i = 0; s->topos && i < s->n_topos; i++) {
        sched_skip_free(&s->topos[i].skip[0]);
        sched_skip_free(&s->topos[i].skip[1]);
        sched_domain_filter_free(&s->topos[i].filter);
        sched_keyed_free(&s->topos[i].dom);
        ns_label_selector_free(s->topos[i].owned_selector);
        free(s->topos[i].owned_selector);
        free(s->topos[i].sig);
        free(s->topos[i].host);
        free(s->topos[i].owner_host);
    }
    free(s->topos);
}
