/* Turning the working state into the caller's result: named claims with launch options, placements, reasons. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "sched/sched_internal.h"

static const char *const ct_names[SCHED_N_CT] = {NS_CAPACITY_SPOT, NS_CAPACITY_ON_DEMAND, NS_CAPACITY_RESERVED};

/* Karpenter names claims <nodepool>-<5 random [a-z0-9]>; ours are derived from the pool and a sequence number so
 * the same inputs give the same names (and the same launch client tokens). */
static void claim_name(const char *pool, size_t seq, char *buf, size_t len)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    uint64_t h = UINT64_C(1469598103934665603);
    for (const char *p = pool; *p; p++)
        h = (h ^ (uint8_t)*p) * UINT64_C(1099511628211);
    for (size_t i = 0; i < sizeof(seq); i++)
        h = (h ^ ((seq >> (8 * i)) & 0xff)) * UINT64_C(1099511628211);
    char suffix[6];
    for (int i = 0; i < 5; i++) {
        suffix[i] = alphabet[h % (sizeof(alphabet) - 1)];
        h /= sizeof(alphabet) - 1;
    }
    suffix[5] = '\0';
    snprintf(buf, len, "%.56s-%s", pool, suffix);
}

typedef struct ranked {
    double price;
    size_t rank; /* the type's position in the pool (cheapest first) */
    size_t offering;
} ranked;

/* Launch order: price, then the pool's order of types, then the provider's order of offerings. */
static bool ranked_before(const ranked *x, const ranked *y)
{
    if (x->price != y->price)
        return x->price < y->price;
    if (x->rank != y->rank)
        return x->rank < y->rank;
    return x->offering < y->offering;
}

static bool offering_ok(const sched_pool *p, const sched_claim *c, size_t type, size_t offering)
{
    int pair = p->offer_pair[type][offering];
    return pair >= 0 && (c->pairs & (UINT64_C(1) << pair));
}

static double claim_price(const sched_pool *p, const sched_claim *c, size_t type)
{
    double best = -1;
    for (size_t o = 0; o < p->types[type]->n_offerings; o++)
        if (offering_ok(p, c, type, o) && (best < 0 || p->types[type]->offerings[o].price_per_hour < best))
            best = p->types[type]->offerings[o].price_per_hour;
    return best;
}

/* The NS_SCHED_MAX_LAUNCH_TYPES cheapest types of the claim with an allowed offering, sorted, into top; returns how
 * many types have one at all. A type's price within the claim is never below its price within the pool (the claim
 * allows a subset of the pool's offerings), so a type whose pool price cannot beat the last kept one is skipped
 * without looking at its offerings. */
static size_t cheapest_types(const sched_pool *p, const sched_claim *c, ranked *top, size_t *n_top)
{
    size_t n = 0, kept = 0;
    for (size_t i = sched_bits_first(c->types, p->words); i != SIZE_MAX; i = sched_bits_next(c->types, p->words, i)) {
        if (!(p->offers[i] & c->pairs))
            continue;
        n++;
        if (kept == NS_SCHED_MAX_LAUNCH_TYPES && p->price[i] >= top[kept - 1].price)
            continue;
        ranked r = {claim_price(p, c, i), i, 0};
        size_t at = kept < NS_SCHED_MAX_LAUNCH_TYPES ? kept : kept - 1;
        if (kept == NS_SCHED_MAX_LAUNCH_TYPES && !ranked_before(&r, &top[at]))
            continue;
        while (at > 0 && ranked_before(&r, &top[at - 1])) {
            top[at] = top[at - 1];
            at--;
        }
        top[at] = r;
        kept += kept < NS_SCHED_MAX_LAUNCH_TYPES;
    }
    *n_top = kept;
    return n;
}

/* A launch option as an integer sort key: the price's bits made order-preserving (negative prices, which providers
 * must not send, still sort first), then the type's rank in the pool, then the offering's index. */
typedef struct opt_key {
    uint64_t price;
    uint32_t rank;
    uint32_t offering;
} opt_key;

static uint64_t price_key(double price)
{
    uint64_t bits;
    price += 0.0; /* -0.0 becomes +0.0 */
    memcpy(&bits, &price, sizeof(bits));
    return (bits >> 63) ? ~bits : bits | (UINT64_C(1) << 63);
}

static bool key_before(const opt_key *x, const opt_key *y)
{
    if (x->price != y->price)
        return x->price < y->price;
    if (x->rank != y->rank)
        return x->rank < y->rank;
    return x->offering < y->offering;
}

/* Bottom-up merge sort of n keys using tmp (n entries); returns whichever buffer holds the result. */
static opt_key *sort_keys(opt_key *a, opt_key *tmp, size_t n)
{
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = key_before(&a[j], &a[i]) ? a[j++] : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        opt_key *t = a;
        a = tmp;
        tmp = t;
    }
    return a;
}

/* The claim's launch options: every offering the claim allows of its NS_SCHED_MAX_LAUNCH_TYPES cheapest types
 * (Karpenter truncates a launch to as many), cheapest first. */
static int claim_options(const sched *s, const sched_claim *c, ns_sched_claim *out)
{
    const sched_pool *p = &s->pools[c->pool];
    ranked top[NS_SCHED_MAX_LAUNCH_TYPES];
    size_t n_top = 0, n_opts = 0;
    out->n_types = cheapest_types(p, c, top, &n_top);
    for (size_t i = 0; i < n_top; i++)
        n_opts += p->types[top[i].rank]->n_offerings;
    opt_key *keys = malloc(2 * (n_opts ? n_opts : 1) * sizeof(*keys));
    out->options = calloc(n_opts ? n_opts : 1, sizeof(*out->options));
    if (!keys || !out->options) {
        free(keys);
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory listing launch options");
    }
    size_t n = 0;
    for (size_t i = 0; i < n_top; i++) {
        const ns_itype *t = p->types[top[i].rank];
        for (size_t o = 0; o < t->n_offerings; o++)
            if (offering_ok(p, c, top[i].rank, o))
                keys[n++] = (opt_key){price_key(t->offerings[o].price_per_hour), (uint32_t)top[i].rank,
                                      (uint32_t)o};
    }
    const opt_key *sorted = sort_keys(keys, keys + n, n);
    for (size_t k = 0; k < n; k++) {
        const ns_itype *t = p->types[sorted[k].rank];
        const ns_itype_offering *of = &t->offerings[sorted[k].offering];
        out->options[k] = (ns_sched_option){t, of->zone, of->capacity_type, of->price_per_hour};
    }
    out->n_options = n;
    free(keys);
    return NS_OK;
}

/* The claim's requirements with zone and capacity type narrowed to what its offerings allow. */
static int claim_requirements(const sched *s, const sched_claim *c, ns_requirements *out)
{
    const char *zones[SCHED_MAX_ZONES], *cts[SCHED_N_CT];
    size_t nz = 0, nc = 0;
    for (size_t z = 0; z < s->n_zones; z++)
        if (c->pairs & sched_zone_pairs((int)z))
            zones[nz++] = s->zones[z];
    for (int t = 0; t < SCHED_N_CT; t++) {
        bool any = false;
        for (size_t z = 0; z < s->n_zones && !any; z++)
            any = (c->pairs >> (z * SCHED_N_CT + (size_t)t)) & 1u;
        if (any)
            cts[nc++] = ct_names[t];
    }
    int rc = ns_requirements_copy(&c->reqs, out);
    if (rc == NS_OK)
        rc = ns_requirements_add_op(out, NS_LABEL_ZONE, NS_OP_IN, zones, nz, 0);
    if (rc == NS_OK)
        rc = ns_requirements_add_op(out, NS_LABEL_CAPACITY_TYPE, NS_OP_IN, cts, nc, 0);
    return rc;
}

int sched_result_fill(sched *s, ns_sched_result *out)
{
    const ns_cluster *cl = s->cl;
    size_t *seq = calloc(s->n_pools ? s->n_pools : 1, sizeof(size_t));
    out->placement = s->placement;
    out->n_placement = cl->n_pods;
    s->placement = NULL;
    out->claims = calloc(s->n_claims ? s->n_claims : 1, sizeof(*out->claims));
    if (!out->claims || !seq) {
        free(seq);
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for %zu node claims", s->n_claims);
    }
    out->n_claims = s->n_claims;
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < s->n_claims; i++) {
        const sched_claim *c = &s->claims[i];
        ns_sched_claim *oc = &out->claims[i];
        oc->nodepool = s->pools[c->pool].index;
        claim_name(s->pools[c->pool].np->meta.name, seq[c->pool]++, oc->name, sizeof(oc->name));
        sched_vec_to(s, &c->used, &oc->pod_requests);
        oc->daemon_overhead = s->pools[c->pool].ds_overhead;
        oc->pods = malloc((c->n_pods ? c->n_pods : 1) * sizeof(size_t));
        if (!oc->pods)
            rc = NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory listing a claim's pods");
        if (rc == NS_OK)
            rc = claim_requirements(s, c, &oc->requirements);
        if (rc == NS_OK)
            rc = claim_options(s, c, oc);
    }
    free(seq);
    for (size_t i = 0; rc == NS_OK && i < cl->n_pods; i++) {
        size_t at = out->placement[i];
        if (at == NS_SCHED_NOT_PENDING)
            continue;
        out->n_pending++;
        if (at == NS_SCHED_UNPLACED)
            out->n_unschedulable++;
        else if (at < s->n_nodes)
            out->n_on_existing++;
        else {
            ns_sched_claim *oc = &out->claims[at - s->n_nodes];
            oc->pods[oc->n_pods++] = i;
        }
    }
    if (rc == NS_OK && out->n_unschedulable) {
        out->unschedulable = calloc(out->n_unschedulable, sizeof(*out->unschedulable));
        if (!out->unschedulable)
            rc = NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory listing unschedulable pods");
        size_t n = 0;
        for (size_t g = 0; rc == NS_OK && g < s->n_groups; g++)
            for (size_t i = s->groups[g].done; rc == NS_OK && i < s->groups[g].n_pods; i++) {
                out->unschedulable[n].pod = s->groups[g].pods[i];
                if (!(out->unschedulable[n++].reason = strdup(s->groups[g].reason)))
                    rc = NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory recording a reason");
            }
    }
    if (rc != NS_OK)
        ns_sched_result_free(out);
    return rc;
}

void ns_sched_result_free(ns_sched_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; r->claims && i < r->n_claims; i++) {
        ns_requirements_free(&r->claims[i].requirements);
        free(r->claims[i].pods);
        free(r->claims[i].options);
    }
    free(r->claims);
    for (size_t i = 0; r->unschedulable && i < r->n_unschedulable; i++)
        free(r->unschedulable[i].reason);
    free(r->unschedulable);
    free(r->placement);
    memset(r, 0, sizeof(*r));
}
