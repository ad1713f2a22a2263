/*
 * Topology spread and pod (anti-)affinity on a key other than zone and hostname (capacity type, arch, a custom
 * label), as Karpenter's topology groups handle every key. A topology's domains are the values the pools and existing
 * nodes give the key (sched_domain_values, Karpenter's buildDomainGroups and countDomains). At each pod, a constraint
 * becomes "key In [allowed]" in the group's requirements (Karpenter's Topology.AddRequirements):
 *   - spread: the domains within maxSkew of the minimum over the domains the pod's own requirements allow (0 when
 *     fewer than minDomains are), then on the claim the one of them with the fewest matching pods
 *     (nextDomainTopologySpread);
 *   - affinity: the domains that hold a matching pod the pod's requirements allow; a self-selecting pod with none
 *     starts one (nextDomainAffinity);
 *   - anti-affinity, own and other pods' required terms: the domains without one (nextDomainAntiAffinity).
 * Counts are recorded from an existing node's label or a claim's requirement for the key: one value for spread and
 * affinity, every value for anti-affinity (Karpenter's Topology.Record).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "sched/sched_internal.h"

static long find(const sched_keyed *k, const char *value)
{
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->values[i], value) == 0)
            return (long)i;
    return -1;
}

long sched_keyed_add(sched_keyed *k, const char *value)
{
    long at = find(k, value);
    if (at >= 0)
        return at;
    if (k->n == k->cap) {
        size_t nc = k->cap ? k->cap * 2 : 8;
        char **v = realloc(k->values, nc * sizeof(*v));
        if (v)
            k->values = v;
        int32_t *c = v ? realloc(k->count, nc * sizeof(*c)) : NULL;
        if (c)
            k->count = c;
        int32_t *o = c ? realloc(k->owner, nc * sizeof(*o)) : NULL;
        if (!o)
            return -1;
        k->owner = o;
        k->cap = nc;
    }
    if (!(k->values[k->n] = strdup(value)))
        return -1;
    k->count[k->n] = k->owner[k->n] = 0;
    return (long)k->n++;
}

void sched_keyed_free(sched_keyed *k)
{
    for (size_t i = 0; k && i < k->n; i++)
        free(k->values[i]);
    free(k->values);
    free(k->count);
    free(k->owner);
}

int sched_keyed_universe(sched *s, sched_topo *t)
{
    return sched_domain_values(s, &t->filter, t->key, &t->dom);
}

bool sched_keyed_group(const sched *s, const sched_group *g)
{
    for (size_t i = 0; i < g->n_cons; i++)
        if (g->cons[i].active && s->topos[g->cons[i].topo].keyed)
            return true;
    for (size_t i = 0; i < g->n_inverse; i++)
        if (s->topos[g->inverse[i]].keyed)
            return true;
    return false;
}

/* Domains of t that a constraint of kind `kind` allows to a pod whose own requirements allow `pod` (NULL: any);
 * own: the constraint is the pod's (else another pod's required anti-affinity, counted by owners). n_allowed and
 * allowed[] (borrowed strings). */
static size_t allowed_domains(const sched_topo *t, const sched_constraint *c, const ns_requirement *pod, bool own,
                              const char **allowed)
{
    size_t n = 0;
    const sched_keyed *k = &t->dom;
    if (!own || t->kind == SCHED_TOPO_ANTI) {
        for (size_t d = 0; d < k->n; d++)
            if ((own ? k->count[d] : k->owner[d]) == 0 && (!pod || ns_requirement_has(pod, k->values[d])))
                allowed[n++] = k->values[d];
        return n;
    }
    if (t->kind == SCHED_TOPO_AFFINITY) {
        for (size_t d = 0; d < k->n; d++)
            if (k->count[d] > 0 && (!pod || ns_requirement_has(pod, k->values[d])))
                allowed[n++] = k->values[d];
        /* anyCompatiblePodDomain: a self-selecting pod with no matching pod in its own domains starts one. */
        for (size_t d = 0; n == 0 && c->self && d < k->n; d++)
            if (!pod || ns_requirement_has(pod, k->values[d]))
                allowed[n++] = k->values[d];
        return n;
    }
    int32_t min = INT32_MAX, in_pod = 0;
    for (size_t d = 0; d < k->n; d++)
        if (!pod || ns_requirement_has(pod, k->values[d])) {
            in_pod++;
            min = k->count[d] < min ? k->count[d] : min;
        }
    if (min == INT32_MAX || (t->min_domains > 0 && in_pod < t->min_domains))
        min = 0;
    for (size_t d = 0; d < k->n; d++)
        if ((!pod || ns_requirement_has(pod, k->values[d])) && k->count[d] + (c->self ? 1 : 0) - min <= t->max_skew)
            allowed[n++] = k->values[d];
    return n;
}

static const char *kind_name(int kind)
{
    return kind == SCHED_TOPO_SPREAD ? "topology spread" : kind == SCHED_TOPO_AFFINITY ? "pod affinity"
                                                                                         : "pod anti-affinity";
}

/* Adds "key In [allowed]" for topology t to g->reqs, or fills g->keyed_why when no domain is allowed. */
static int add_topology(sched_group *g, const sched_topo *t, const sched_constraint *c, bool own)
{
    const char **allowed = malloc((t->dom.n ? t->dom.n : 1) * sizeof(*allowed));
    if (!allowed)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory choosing the domains of %s", t->key);
    size_t n = allowed_domains(t, c, ns_requirements_get(&g->reqs, t->key), own, allowed);
    int rc = NS_OK;
    if (n == 0 && !own)
        snprintf(g->keyed_why, sizeof(g->keyed_why), "pods in every domain of %s have anti-affinity to this pod's "
                 "labels", t->key);
    else if (n == 0 && t->kind == SCHED_TOPO_SPREAD)
        snprintf(g->keyed_why, sizeof(g->keyed_why), "topology spread on %s (maxSkew %d) would be exceeded in every "
                 "domain the pod could use (%zu known)", t->key, t->max_skew, t->dom.n);
    else if (n == 0)
        snprintf(g->keyed_why, sizeof(g->keyed_why), "%s on %s: no domain the pod could use %s (%zu known)",
                 kind_name(t->kind), t->key, t->kind == SCHED_TOPO_ANTI ? "is free of matching pods"
                                                                         : "runs a matching pod", t->dom.n);
    else
        rc = ns_requirements_add_op(&g->reqs, t->key, NS_OP_IN, allowed, n, 0);
    free(allowed);
    return rc;
}

int sched_keyed_requirements(sched *s, sched_group *g)
{
    g->keyed_why[0] = '\0';
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && !g->keyed_why[0] && i < g->n_cons; i++)
        if (g->cons[i].active && s->topos[g->cons[i].topo].keyed)
            rc = add_topology(g, &s->topos[g->cons[i].topo], &g->cons[i], true);
    for (size_t i = 0; rc == NS_OK && !g->keyed_why[0] && i < g->n_inverse; i++)
        if (s->topos[g->inverse[i]].keyed)
            rc = add_topology(g, &s->topos[g->inverse[i]], NULL, false);
    if (rc != NS_OK)
        return ns_error_prefix("pod %s/%s: topology: ", g->pod->meta.namespace_, g->pod->meta.name);
    return NS_OK;
}

/* Some type the claim keeps offers `value` for key. Keys no type defines (template labels) are left to the claim's
 * requirements, which already allow the value. */
static bool claim_offers(const sched *s, const sched_pool *p, const sched_claim *c, const char *key,
                         const char *value)
{
    bool ct = strcmp(key, NS_LABEL_CAPACITY_TYPE) == 0, type_key = ct;
    for (size_t i = 0; !type_key && i < p->n_keys; i++)
        type_key = strcmp(p->keys[i], key) == 0;
    if (!type_key)
        return true;
    uint64_t pairs = ct ? c->pairs & sched_ct_pairs(s, sched_ct_index(value)) : 0;
    for (size_t i = sched_bits_first(c->types, p->words); i != SIZE_MAX; i = sched_bits_next(c->types, p->words, i)) {
        const char *v = ns_label_find(p->types[i]->labels, p->types[i]->n_labels, key);
        if (!v && strcmp(key, NS_LABEL_INSTANCE_TYPE) == 0)
            v = p->types[i]->name;
        if (ct ? (p->offers[i] & pairs) != 0 : (v && strcmp(v, value) == 0))
            return true;
    }
    return false;
}

/* The claim keeps the types (and for capacity type the offerings) that offer value. */
static void keep_only(const sched *s, const sched_pool *p, sched_claim *c, const char *key, const char *value)
{
    bool ct = strcmp(key, NS_LABEL_CAPACITY_TYPE) == 0, type_key = false;
    for (size_t i = 0; !ct && !type_key && i < p->n_keys; i++)
        type_key = strcmp(p->keys[i], key) == 0;
    if (ct)
        c->pairs &= sched_ct_pairs(s, sched_ct_index(value));
    for (size_t i = sched_bits_first(c->types, p->words); (ct || type_key) && i != SIZE_MAX;
         i = sched_bits_next(c->types, p->words, i)) {
        const char *v = ns_label_find(p->types[i]->labels, p->types[i]->n_labels, key);
        if (!v && strcmp(key, NS_LABEL_INSTANCE_TYPE) == 0)
            v = p->types[i]->name;
        if (ct ? !(p->offers[i] & c->pairs) : !v || strcmp(v, value) != 0)
            sched_bits_clear(c->types, i);
    }
    sched_room_of(p, c->types, &c->room);
    c->pairs &= c->room.offered;
}

static int narrow_one(sched *s, const sched_topo *t, sched_claim *c)
{
    const ns_requirement *r = ns_requirements_get(&c->reqs, t->key);
    if (!r || r->complement || r->n_values < 2)
        return NS_OK;
    const sched_pool *p = &s->pools[c->pool];
    long best = -1;
    bool any_pod = false;
    for (size_t i = 0; i < r->n_values; i++) {
        long d = find(&t->dom, r->values[i]);
        if (d < 0 || !claim_offers(s, p, c, t->key, r->values[i]))
            continue;
        any_pod = any_pod || t->dom.count[d] > 0;
        if (best < 0 || t->dom.count[d] < t->dom.count[best])
            best = d;
    }
    /* An affinity that joins matching pods keeps every domain holding one; only one that starts a domain picks. */
    if (best < 0 || (t->kind == SCHED_TOPO_AFFINITY && any_pod))
        return NS_OK;
    const char *value = t->dom.values[best];
    if (ns_requirements_add_op(&c->reqs, t->key, NS_OP_IN, &value, 1, 0) != NS_OK)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory narrowing a node claim to %s=%s", t->key, value);
    keep_only(s, p, c, t->key, value);
    return NS_OK;
}

int sched_keyed_narrow(sched *s, const sched_group *g, sched_claim *c)
{
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < g->n_cons; i++) {
        const sched_topo *t = &s->topos[g->cons[i].topo];
        if (g->cons[i].active && t->keyed && t->kind != SCHED_TOPO_ANTI)
            rc = narrow_one(s, t, c);
    }
    return rc;
}

void sched_keyed_record(sched *s, sched_topo *t, uint32_t host, int64_t count, bool owner)
{
    int32_t *to = owner ? t->dom.owner : t->dom.count;
    if (host < s->n_nodes) {
        const char *v = ns_labels_get(&s->nodes[host].node->meta.labels, t->key);
        long d = v ? find(&t->dom, v) : -1;
        if (d >= 0)
            to[d] += (int32_t)count;
        return;
    }
    const ns_requirement *r = ns_requirements_get(&s->claims[host - s->n_nodes].reqs, t->key);
    /* A spread or affinity counts a claim once it has one domain; anti-affinity blocks every domain it may get. */
    if (!r || r->complement || (!owner && t->kind != SCHED_TOPO_ANTI && r->n_values != 1))
        return;
    for (size_t i = 0; i < r->n_values; i++) {
        long d = find(&t->dom, r->values[i]);
        if (d >= 0)
            to[d] += (int32_t)count;
    }
}
