#include "sched/sched_domains.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "model/nodepool.h"
#include "model/taints.h"
#include "sched/sched_internal.h"

int sched_domain_filter_init(sched_domain_filter *f, const ns_pod *pod, const ns_topology_spread *t)
{
    memset(f, 0, sizeof(*f));
    f->taints = t->node_taints_policy == NS_POLICY_HONOR;
    f->tolerator = pod;
    const ns_affinity *a = &pod->affinity;
    if (t->node_affinity_policy != NS_POLICY_HONOR || (pod->node_selector.n == 0 && !a->has_node_required))
        return NS_OK;
    size_t n = a->n_node_required ? a->n_node_required : 1;
    f->terms = calloc(n, sizeof(*f->terms));
    if (!f->terms)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for a spread constraint's node filter");
    f->affinity = true;
    for (size_t i = 0; i < n; i++) {
        int rc = ns_pod_node_requirements(pod, a->n_node_required ? (int)i : -1, -1, &f->terms[i]);
        if (rc != NS_OK) {
            sched_domain_filter_free(f);
            return rc;
        }
        f->n_terms++;
    }
    return NS_OK;
}

void sched_domain_filter_free(sched_domain_filter *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n_terms; i++)
        ns_requirements_free(&f->terms[i]);
    free(f->terms);
    memset(f, 0, sizeof(*f));
}

bool sched_domain_filter_active(const sched_domain_filter *f)
{
    return f->affinity || f->taints;
}

static int append(char **buf, size_t *len, size_t *cap, const char *text)
{
    size_t n = strlen(text);
    if (*len + n + 2 > *cap) {
        size_t nc = *cap ? *cap : 128;
        while (*len + n + 2 > nc)
            nc *= 2;
        char *nb = realloc(*buf, nc);
        if (!nb)
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory describing a topology");
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, text, n);
    *len += n;
    (*buf)[(*len)++] = '\x1f';
    (*buf)[*len] = '\0';
    return NS_OK;
}

int sched_domain_filter_sig(const sched_domain_filter *f, char **buf, size_t *len, size_t *cap)
{
    int rc = NS_OK;
    char text[2048];
    for (size_t i = 0; rc == NS_OK && f->affinity && i < f->n_terms; i++)
        rc = append(buf, len, cap, ns_requirements_format(&f->terms[i], text, sizeof(text)));
    if (rc != NS_OK || !f->taints)
        return rc;
    rc = append(buf, len, cap, "honor-taints");
    for (size_t i = 0; rc == NS_OK && i < f->tolerator->n_tolerations; i++) {
        const ns_toleration *t = &f->tolerator->tolerations[i];
        snprintf(text, sizeof(text), "%s|%d|%s|%s", t->key ? t->key : "", t->exists, t->value ? t->value : "",
                 t->effect ? t->effect : "");
        rc = append(buf, len, cap, text);
    }
    return rc;
}

/* Kubernetes' Honor filter looks at NoSchedule and NoExecute taints only. */
static bool tolerated(const sched_domain_filter *f, const ns_taint *taints, size_t n)
{
    return !f->taints || ns_pod_tolerates(f->tolerator, taints, n, NULL, 0, NS_TAINTS_IGNORE_PREFER_NO_SCHEDULE,
                                          NULL, 0);
}

static bool node_counts(const sched_domain_filter *f, const ns_node *n)
{
    if (!tolerated(f, n->taints, n->n_taints))
        return false;
    for (size_t i = 0; f->affinity && i < f->n_terms; i++)
        if (ns_requirements_match_labels(&f->terms[i], n->meta.labels.items, n->meta.labels.n, NULL, 0))
            return true;
    return !f->affinity;
}

bool sched_domain_host_counts(const sched *s, const sched_domain_filter *f, size_t host)
{
    if (host < s->n_nodes)
        return node_counts(f, s->nodes[host].node);
    const sched_claim *c = &s->claims[host - s->n_nodes];
    const ns_nodepool *np = s->pools[c->pool].np;
    if (!tolerated(f, np->taints, np->n_taints))
        return false;
    for (size_t i = 0; f->affinity && i < f->n_terms; i++)
        if (ns_requirements_intersects(&c->reqs, &f->terms[i], NULL, 0))
            return true;
    return !f->affinity;
}

uint32_t sched_domain_zones(const sched *s, const sched_domain_filter *f)
{
    uint32_t zones = 0;
    for (size_t pi = 0; pi < s->n_pools; pi++) {
        const sched_pool *p = &s->pools[pi];
        if (p->unusable || ns_nodepool_is_static(p->np) || p->n_types == 0 ||
            !tolerated(f, p->np->taints, p->np->n_taints))
            continue;
        if (!f->affinity) {
            zones |= sched_pairs_zones(s, p->pairs);
            continue;
        }
        ns_compat_opts opts = {.allow_undefined_well_known = true, .extra_well_known = p->keys,
                               .n_extra_well_known = p->n_keys};
        for (size_t i = 0; i < f->n_terms; i++)
            if (ns_requirements_compatible(&p->reqs, &f->terms[i], &opts, NULL, 0))
                zones |= sched_pairs_zones(s, p->pairs & sched_pairs_for(s, &f->terms[i]));
    }
    for (size_t n = 0; n < s->n_nodes; n++)
        if (s->nodes[n].zone >= 0 && node_counts(f, s->nodes[n].node))
            zones |= 1u << s->nodes[n].zone;
    return zones;
}

/* The values pool p offers for key, within what requirement r allows (NULL: anything). */
static int pool_values(const sched *s, const sched_pool *p, const char *key, const ns_requirement *r,
                       sched_keyed *out)
{
    if (strcmp(key, NS_LABEL_CAPACITY_TYPE) == 0) {
        uint64_t offered = 0;
        for (size_t i = 0; i < p->n_types; i++)
            offered |= p->offers[i] & p->pairs;
        for (int ct = 0; ct < SCHED_N_CT; ct++)
            for (size_t z = 0; z < s->n_zones; z++)
                if ((offered >> (z * SCHED_N_CT + (size_t)ct)) & 1u) {
                    const char *v = sched_ct_name(ct);
                    if ((!r || ns_requirement_has(r, v)) && sched_keyed_add(out, v) < 0)
                        return NS_ERR_INTERNAL;
                    break;
                }
        return NS_OK;
    }
    /* Karpenter's domain groups: the pool's In values, and each type's label where the pool allows it. */
    const ns_requirement *own = ns_requirements_get(&p->reqs, key);
    for (size_t i = 0; own && !own->complement && i < own->n_values; i++)
        if ((!r || ns_requirement_has(r, own->values[i])) && sched_keyed_add(out, own->values[i]) < 0)
            return NS_ERR_INTERNAL;
    for (size_t i = 0; i < p->n_types; i++) {
        const char *v = ns_label_find(p->types[i]->labels, p->types[i]->n_labels, key);
        if (!v && strcmp(key, NS_LABEL_INSTANCE_TYPE) == 0)
            v = p->types[i]->name;
        if (v && (!own || ns_requirement_has(own, v)) && (!r || ns_requirement_has(r, v)) &&
            sched_keyed_add(out, v) < 0)
            return NS_ERR_INTERNAL;
    }
    return NS_OK;
}

int sched_domain_values(const sched *s, const sched_domain_filter *f, const char *key, sched_keyed *out)
{
    for (size_t pi = 0; pi < s->n_pools; pi++) {
        const sched_pool *p = &s->pools[pi];
        if (p->unusable || ns_nodepool_is_static(p->np) || p->n_types == 0 ||
            !tolerated(f, p->np->taints, p->np->n_taints))
            continue;
        ns_compat_opts opts = {.allow_undefined_well_known = true, .extra_well_known = p->keys,
                               .n_extra_well_known = p->n_keys};
        for (size_t i = 0; i < (f->affinity ? f->n_terms : 1); i++) {
            if (f->affinity && !ns_requirements_compatible(&p->reqs, &f->terms[i], &opts, NULL, 0))
                continue;
            if (pool_values(s, p, key, f->affinity ? ns_requirements_get(&f->terms[i], key) : NULL, out) != NS_OK)
                return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory listing the domains of %s", key);
        }
    }
    for (size_t n = 0; n < s->n_nodes; n++) {
        const ns_labels *l = &s->nodes[n].node->meta.labels;
        const char *v = ns_labels_get(l, key);
        if (v && node_counts(f, s->nodes[n].node) && sched_keyed_add(out, v) < 0)
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory listing the domains of %s", key);
    }
    return NS_OK;
}
