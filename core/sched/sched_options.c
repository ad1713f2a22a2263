/*
 * A claim's launch options: every offering the claim allows of its NS_SCHED_MAX_LAUNCH_TYPES cheapest types
 * (Karpenter truncates a launch to as many), cheapest first; ties go to the pool's order of types, then to the
 * provider's order of offerings. Claims of one pool with the same allowed pairs and the same cheapest types have
 * the same list, which is sorted once and shared.
 */
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/hash.h"
#include "sched/sched_internal.h"
#include "sched/sched_pool_index.h"

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
    return pair >= 0 && (c->pairs & (UINT64_C(1) << pair)) && sched_resv_offering_ok(p, c, type, offering);
}

double sched_claim_type_price(const sched_pool *p, const sched_claim *c, size_t type)
{
    double best = -1;
    for (size_t o = 0; o < p->types[type]->n_offerings; o++)
        if (offering_ok(p, c, type, o) && (best < 0 || p->types[type]->offerings[o].price_per_hour < best))
            best = p->types[type]->offerings[o].price_per_hour;
    return best;
}

/* The NS_SCHED_MAX_LAUNCH_TYPES cheapest types of the claim with an allowed offering, sorted, into top; returns how
 * many types have one at all. A type's price within the claim is never below its price within the pool (the claim
 * allows a subset of the pool's offerings), and the pool's types are in order of that price, so the scan stops at
 * the first type whose pool price cannot beat the last one kept. */
static size_t cheapest_types(const sched *s, const sched_pool *p, const sched_claim *c, ranked *top, size_t *n_top)
{
    uint64_t *types = s->pairs_scratch;
    memcpy(types, c->types, p->words * sizeof(uint64_t));
    sched_pool_index_offered(p, c->pairs, s->scratch, types);
    size_t kept = 0;
    for (size_t i = sched_bits_first(types, p->words); i != SIZE_MAX; i = sched_bits_next(types, p->words, i)) {
        if (kept == NS_SCHED_MAX_LAUNCH_TYPES && p->price[i] >= top[kept - 1].price)
            break;
        ranked r = {sched_claim_type_price(p, c, i), i, 0};
        /* Only a claim that holds reservations has types offered in its pairs with no offering it may launch. */
        if (r.price < 0) {
            sched_bits_clear(types, i);
            continue;
        }
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
    return sched_bits_count(types, p->words);
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

/* Sorts every offering the claim allows of its top types into out->options. */
static int claim_options(const sched *s, const sched_claim *c, const ranked *top, size_t n_top,
                         ns_sched_claim *out)
{
    const sched_pool *p = &s->pools[c->pool];
    size_t n_opts = 0;
    for (size_t i = 0; i < n_top; i++)
        n_opts += p->types[top[i].rank]->n_offerings;
    opt_key *keys = malloc(2 * (n_opts ? n_opts : 1) * sizeof(*keys));
    out->options = calloc(n_opts ? n_opts : 1, sizeof(*out->options));
    if (!keys || !out->options) {
        free(keys);
        free(out->options);
        out->options = NULL;
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

typedef struct option_set {
    uint64_t hash;
    uint64_t pairs;
    uint32_t pool;
    uint32_t n_top;
    uint32_t ranks[NS_SCHED_MAX_LAUNCH_TYPES];
    size_t claim; /* whose options to copy */
} option_set;

static uint64_t set_hash(const sched_claim *c, const ranked *top, size_t n_top)
{
    uint64_t h = ns_hash_step(NS_HASH_SEED ^ c->pairs, c->pool);
    for (size_t i = 0; i < n_top; i++)
        h = ns_hash_step(h, top[i].rank);
    for (size_t i = 0; i < c->n_held; i++)
        h = ns_hash_step(h, c->held[i]);
    return h;
}

static bool set_equal(const option_set *e, uint64_t hash, const sched_claim *c, const ranked *top, size_t n_top)
{
    if (e->hash != hash || e->pairs != c->pairs || e->pool != c->pool || e->n_top != n_top)
        return false;
    for (size_t i = 0; i < n_top; i++)
        if (e->ranks[i] != top[i].rank)
            return false;
    return true;
}

/* Claims that hold reservations launch only into them, so the held sets must match too. */
static bool same_held(const sched_claim *a, const sched_claim *b)
{
    return a->n_held == b->n_held && (!a->n_held || memcmp(a->held, b->held, a->n_held * sizeof(*a->held)) == 0);
}

int sched_claims_options(sched *s, ns_sched_result *res)
{
    ns_sched_claim *out = res->claims;
    size_t n_slots = 64;
    while (n_slots < 2 * s->n_claims)
        n_slots *= 2;
    option_set *sets = malloc((s->n_claims ? s->n_claims : 1) * sizeof(*sets));
    size_t *slots = calloc(n_slots, sizeof(*slots)), n_sets = 0; /* set index + 1; 0 = empty */
    res->option_lists = calloc(s->n_claims ? s->n_claims : 1, sizeof(*res->option_lists));
    int rc = sets && slots && res->option_lists
                 ? NS_OK
                 : NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory listing launch options");
    for (size_t i = 0; rc == NS_OK && i < s->n_claims; i++) {
        const sched_claim *c = &s->claims[i];
        ranked top[NS_SCHED_MAX_LAUNCH_TYPES];
        size_t n_top = 0;
        out[i].n_types = cheapest_types(s, &s->pools[c->pool], c, top, &n_top);
        uint64_t h = set_hash(c, top, n_top);
        size_t at = (size_t)h & (n_slots - 1);
        while (slots[at] && !(set_equal(&sets[slots[at] - 1], h, c, top, n_top) &&
                              same_held(&s->claims[sets[slots[at] - 1].claim], c)))
            at = (at + 1) & (n_slots - 1);
        if (slots[at]) {
            const ns_sched_claim *same = &out[sets[slots[at] - 1].claim];
            out[i].options = same->options;
            out[i].n_options = same->n_options;
            continue;
        }
        if ((rc = claim_options(s, c, top, n_top, &out[i])) != NS_OK)
            break;
        res->option_lists[res->n_option_lists++] = out[i].options;
        option_set *e = &sets[n_sets++];
        *e = (option_set){h, c->pairs, c->pool, (uint32_t)n_top, {0}, i};
        for (size_t k = 0; k < n_top; k++)
            e->ranks[k] = (uint32_t)top[k].rank;
        slots[at] = n_sets;
    }
    free(sets);
    free(slots);
    return rc;
}
