/*
 * Cost packing (packing: cost), a pass over the greedy round's result. The round's new claims that hold only pods with
 * no host ports, no pod affinity or anti-affinity that counts or binds them, and no topology spread but on the zone,
 * are grouped into classes (one pool, groups allowing the same types and offerings, and one zone when a zonal spread
 * declares or counts a pod); each class is planned again by sched_cost_plan, and where the plan is cheaper its pods are
 * placed on new claims through the scheduler's own sched_new_claim and sched_try_claim, so requirements, taints,
 * minValues and daemon overhead are checked as for any claim. The greedy claims stay when the new ones would cost as
 * much or more. Constrained pods and existing nodes keep the greedy placement.
 *
 * Zonal spread: a zone-bound class's pods go back to its zone, so every zonal spread counts per zone what it counted
 * after the greedy round, and whatever skew that round reached holds unchanged; the spread is not checked again pod by
 * pod, since an order that keeps every step within maxSkew need not exist for the same final counts.
 * Limits (sched_cost_limits.c): a claim of a pool with limits counts as Karpenter's subtractMax counts it, the largest
 * capacity among the types it may launch when it is made. The pass gives back what the replaced claims took, makes
 * each new claim with only the types that hold its bin, and keeps a class only when its bins fit what is left.
 */
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "sched/sched_cost.h"
#include "sched/sched_cost_limits.h"

int ns_sched_packing_parse(const char *name, ns_sched_packing *out)
{
    if (name && strcmp(name, "karpenter") == 0)
        *out = NS_SCHED_PACKING_KARPENTER;
    else if (name && strcmp(name, "cost") == 0)
        *out = NS_SCHED_PACKING_COST;
    else
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "packing '%s' is not known: it is karpenter or cost",
                       name ? name : "(null)");
    return NS_OK;
}

const char *ns_sched_packing_name(ns_sched_packing p)
{
    return p == NS_SCHED_PACKING_COST ? "cost" : "karpenter";
}

typedef struct cost_pass {
    sched *s;
    size_t n_old; /* claims of the greedy round */
    size_t *pod_group;
    char **group_reqs; /* per group: its requirements as text, the part of its view that is not its size */
    size_t *claim_rep; /* per claim: the group of its first pod, SIZE_MAX when the claim cannot move */
    int *claim_zone;   /* per claim: its zone when it holds zone-bound pods, else -1 */
    cost_class *classes;
    size_t n_classes;
    size_t *saved_placement;
    size_t **saved_pods; /* per group: its pods' order before the pass, NULL when untouched */
    size_t *saved_done;
    int64_t *saved_remaining; /* n_pools x n_dims: the pools' remaining limits before the pass */
    int32_t *saved_zones;     /* n_topos x (zones, total): the topologies' zonal counts before the pass */
    int64_t *saved_total;     /* n_topos */
    uint64_t *mask;           /* scratch: a bitset of the largest pool */
    int64_t *charge;          /* scratch: 2 x n_dims */
    bool *gone; /* per claim */
} cost_pass;

enum { MOVE_NONE, MOVE_ANY, MOVE_IN_ZONE };

static bool zonal_spread(const sched_topo *t)
{
    return t->kind == SCHED_TOPO_SPREAD && !t->hostname && !t->keyed;
}

/* How the group's pods may move so that nothing another pod's placement was decided on changes: anywhere, within
 * their zone (a zonal spread declares or counts them: its per-zone counts stay), or not at all. */
static int group_move(const sched *s, const sched_group *g)
{
    if (g->vol_why || g->pod->n_host_ports || g->n_inverse || g->n_skips || g->n_cons > 64 /* place_pods' mask */)
        return MOVE_NONE;
    bool zonal = g->n_counted_by > 0;
    for (size_t i = 0; i < g->n_cons; i++) {
        if (!g->cons[i].active)
            continue;
        if (!zonal_spread(&s->topos[g->cons[i].topo]))
            return MOVE_NONE;
        zonal = true;
    }
    for (size_t i = 0; i < g->n_counted_by; i++)
        if (!zonal_spread(&s->topos[g->counted_by[i]]))
            return MOVE_NONE;
    return zonal ? MOVE_IN_ZONE : MOVE_ANY;
}

/* Same view of pool pi: the same requirements and offerings, so the types the two allow differ only by which hold
 * one pod, which the planner checks pod by pod. */
static bool same_view(const cost_pass *cp, const sched_group *a, const sched_group *b, size_t pi)
{
    return a == b || (a->pool_ok[pi] && b->pool_ok[pi] && a->pool_pairs[pi] == b->pool_pairs[pi] &&
                      strcmp(cp->group_reqs[a - cp->s->groups], cp->group_reqs[b - cp->s->groups]) == 0);
}

static double claim_price(const sched *s, const sched_claim *c)
{
    const sched_pool *p = &s->pools[c->pool];
    double best = -1;
    for (size_t i = sched_bits_first(c->types, p->words); i != SIZE_MAX; i = sched_bits_next(c->types, p->words, i)) {
        double x = sched_claim_type_price(p, c, i);
        if (x >= 0 && (best < 0 || x < best))
            best = x;
    }
    return best < 0 ? 0 : best;
}

static bool on_claim(const cost_pass *cp, size_t target)
{
    return target != NS_SCHED_NOT_PENDING && target != NS_SCHED_UNPLACED && target >= cp->s->n_nodes;
}

/* claim_rep: which claims may move, and the group that stands for each; claim_zone: the zone of those that must
 * stay in theirs. */
static void movable_claims(cost_pass *cp)
{
    sched *s = cp->s;
    bool *ok = (bool *)cp->gone; /* borrowed as scratch until the claims are chosen */
    for (size_t c = 0; c < cp->n_old; c++) {
        /* A claim that holds reservations keeps them: re-packing would spend instances the round no longer has. */
        ok[c] = !s->claims[c].n_held;
        cp->claim_rep[c] = SIZE_MAX;
        cp->claim_zone[c] = -1;
    }
    for (size_t i = 0; i < s->cl->n_pods; i++) {
        if (!on_claim(cp, s->placement[i]))
            continue;
        size_t c = s->placement[i] - s->n_nodes, gi = cp->pod_group[i];
        const sched_group *g = &s->groups[gi];
        if (!ok[c])
            continue;
        int move = group_move(s, g);
        uint32_t zones = sched_pairs_zones(s, s->claims[c].pairs);
        if (move == MOVE_IN_ZONE && __builtin_popcount(zones) == 1)
            cp->claim_zone[c] = __builtin_ctz(zones);
        if (move == MOVE_NONE || (move == MOVE_IN_ZONE && cp->claim_zone[c] < 0))
            ok[c] = false;
        else if (cp->claim_rep[c] == SIZE_MAX)
            cp->claim_rep[c] = gi;
        else if (!same_view(cp, &s->groups[cp->claim_rep[c]], g, s->claims[c].pool))
            ok[c] = false;
    }
    for (size_t c = 0; c < cp->n_old; c++) {
        if (!ok[c])
            cp->claim_rep[c] = SIZE_MAX;
        ok[c] = false;
    }
}

static int class_add_claim(cost_pass *cp, size_t c)
{
    sched *s = cp->s;
    size_t pi = s->claims[c].pool;
    sched_group *rep = &s->groups[cp->claim_rep[c]];
    cost_class *k = NULL;
    for (size_t i = 0; i < cp->n_classes && !k; i++)
        if (cp->classes[i].pool == pi && cp->classes[i].zone == cp->claim_zone[c] &&
            same_view(cp, cp->classes[i].rep, rep, pi))
            k = &cp->classes[i];
    if (!k) {
        k = &cp->classes[cp->n_classes++];
        *k = (cost_class){.pool = pi, .zone = cp->claim_zone[c], .rep = rep};
        k->pairs = s->pools[pi].pairs & rep->pool_pairs[pi];
        if (k->zone >= 0)
            k->pairs &= sched_zone_pairs(k->zone);
        if (!(k->claims = malloc(cp->n_old * sizeof(size_t))))
            return NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory listing claims");
    }
    k->claims[k->n_claims++] = c;
    k->greedy_price += claim_price(s, &s->claims[c]);
    return NS_OK;
}

/* The class's pods as items: per group, how many of its pods the class's claims hold. */
static int class_items(cost_pass *cp, cost_class *k, size_t *item_of)
{
    sched *s = cp->s;
    k->items = malloc((s->n_groups ? s->n_groups : 1) * sizeof(*k->items));
    if (!k->items)
        return NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory listing pod groups");
    for (size_t i = 0; i < k->n_claims; i++)
        cp->gone[k->claims[i]] = true;
    for (size_t i = 0; i < s->cl->n_pods; i++) {
        if (!on_claim(cp, s->placement[i]) || !cp->gone[s->placement[i] - s->n_nodes])
            continue;
        size_t gi = cp->pod_group[i];
        if (item_of[gi] == SIZE_MAX) {
            item_of[gi] = k->n_items;
            k->items[k->n_items++] = (cost_item){&s->groups[gi], 0, 0};
        }
        k->items[item_of[gi]].n++;
    }
    for (size_t i = 0; i < k->n_items; i++)
        item_of[k->items[i].g - s->groups] = SIZE_MAX;
    for (size_t i = 0; i < k->n_claims; i++)
        cp->gone[k->claims[i]] = false;
    return NS_OK;
}

static void class_free(cost_class *k)
{
    sched_cost_plan_free(&k->plan);
    free(k->items);
    free(k->claims);
    free(k->left);
    free(k->types);
}

/* Plans each class; a class whose plan is not cheaper than its greedy claims, or does not fit its pool's limits, is
 * dropped from the pass. */
static int plan_classes(cost_pass *cp)
{
    sched *s = cp->s;
    size_t n_groups = s->n_groups ? s->n_groups : 1;
    size_t *item_of = malloc(n_groups * sizeof(size_t));
    /* Per pool: what its limits have left with the kept classes' claims replaced by their bins. */
    int64_t *pool_avail = malloc((s->n_pools ? s->n_pools : 1) * s->n_dims * sizeof(int64_t));
    int64_t *avail = malloc(s->n_dims * sizeof(int64_t));
    sched_vec used;
    int rc = item_of && pool_avail && avail ? sched_vec_init(s, &used)
                                            : NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory for %zu groups",
                                                      s->n_groups);
    for (size_t i = 0; rc == NS_OK && i < s->n_groups; i++)
        item_of[i] = SIZE_MAX;
    for (size_t pi = 0; rc == NS_OK && pi < s->n_pools; pi++)
        memcpy(pool_avail + pi * s->n_dims, s->pools[pi].remaining.v, s->n_dims * sizeof(int64_t));
    size_t kept = 0;
    for (size_t i = 0; rc == NS_OK && i < cp->n_classes; i++) {
        cost_class *k = &cp->classes[i];
        const sched_pool *p = &s->pools[k->pool];
        int64_t *pa = pool_avail + k->pool * s->n_dims;
        rc = class_items(cp, k, item_of);
        if (rc == NS_OK && (!(k->types = calloc(p->words, sizeof(uint64_t))) ||
                            !(k->left = calloc(k->n_items ? k->n_items : 1, sizeof(int64_t)))))
            rc = NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory for a class of %zu pod groups", k->n_items);
        uint64_t *types = s->scratch;
        if (rc == NS_OK) {
            sched_cost_class_room(s, k, pa, avail, k->types);
            memset(types, 0, p->words * sizeof(uint64_t));
        }
        for (size_t j = 0; rc == NS_OK && j < k->n_items; j++)
            for (size_t w = 0; w < p->words; w++)
                types[w] |= k->items[j].g->pool_bits[k->pool * s->max_words + w] & k->types[w];
        if (rc == NS_OK)
            memcpy(k->types, types, p->words * sizeof(uint64_t));
        int planned = rc == NS_OK ? sched_cost_plan(s, k->pool, k->types, k->pairs, k->items, k->n_items, &k->plan)
                                  : rc;
        if (planned < 0)
            rc = planned;
        if (rc == NS_OK && planned == 0 && k->plan.price < k->greedy_price * (1 - 1e-9) &&
            (!p->has_limits || sched_cost_fits_limits(s, k, avail, &used, cp->mask, cp->charge))) {
            if (p->has_limits)
                memcpy(pa, avail, s->n_dims * sizeof(int64_t));
            cost_class moved = *k;
            *k = (cost_class){0};
            cp->classes[kept++] = moved;
            continue;
        }
        class_free(k);
        *k = (cost_class){0};
    }
    for (size_t i = kept; rc != NS_OK && i < cp->n_classes; i++)
        class_free(&cp->classes[i]); /* the classes not reached; those moved down or freed are zeroed */
    cp->n_classes = kept;
    free(item_of);
    free(pool_avail);
    free(avail);
    return rc;
}

/* Saves the pools' remaining limits and the topologies' zonal counts, then gives back to each pool with limits what
 * the chosen classes' claims took from them. */
static void save_counts(cost_pass *cp)
{
    sched *s = cp->s;
    for (size_t t = 0; t < s->n_topos; t++) {
        memcpy(cp->saved_zones + t * SCHED_MAX_ZONES, s->topos[t].zone, sizeof(s->topos[t].zone));
        cp->saved_total[t] = s->topos[t].total;
    }
    sched_cost_limits_give_back(s, cp->classes, cp->n_classes, cp->saved_remaining);
}

/* Puts back the topologies' zonal counts (the pods moved stay in their zones: the counts are those of the greedy
 * round) and, unless the new claims are kept, the pools' remaining limits. */
static void restore_counts(cost_pass *cp, bool limits)
{
    sched *s = cp->s;
    for (size_t t = 0; t < s->n_topos; t++) {
        memcpy(s->topos[t].zone, cp->saved_zones + t * SCHED_MAX_ZONES, sizeof(s->topos[t].zone));
        s->topos[t].total = cp->saved_total[t];
    }
    if (limits)
        sched_cost_limits_restore(s, cp->saved_remaining);
}

/* Takes the chosen classes' pods off their claims: each touched group lists its other pods first, and its `done`
 * stops before the pods to place again. Saves what restore() needs. */
static int unplace(cost_pass *cp)
{
    sched *s = cp->s;
    memcpy(cp->saved_placement, s->placement, s->cl->n_pods * sizeof(size_t));
    save_counts(cp);
    for (size_t i = 0; i < cp->n_classes; i++) {
        for (size_t c = 0; c < cp->classes[i].n_claims; c++)
            cp->gone[cp->classes[i].claims[c]] = true;
        for (size_t j = 0; j < cp->classes[i].n_items; j++)
            cp->classes[i].left[j] = cp->classes[i].items[j].n;
    }
    for (size_t i = 0; i < cp->n_classes; i++)
        for (size_t j = 0; j < cp->classes[i].n_items; j++) {
            sched_group *g = cp->classes[i].items[j].g;
            size_t gi = (size_t)(g - s->groups);
            if (cp->saved_pods[gi])
                continue;
            if (!(cp->saved_pods[gi] = malloc(g->n_pods * sizeof(size_t))))
                return NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory saving a group");
            memcpy(cp->saved_pods[gi], g->pods, g->n_pods * sizeof(size_t));
            cp->saved_done[gi] = g->done;
            size_t kept = 0;
            for (size_t a = 0; a < g->done; a++) {
                size_t pod = cp->saved_pods[gi][a], t = s->placement[pod];
                if (on_claim(cp, t) && t - s->n_nodes < cp->n_old && cp->gone[t - s->n_nodes])
                    s->placement[pod] = NS_SCHED_UNPLACED;
                else
                    g->pods[kept++] = pod;
            }
            for (size_t a = 0, m = kept; a < g->done; a++) {
                size_t pod = cp->saved_pods[gi][a];
                if (s->placement[pod] == NS_SCHED_UNPLACED)
                    g->pods[m++] = pod;
            }
            g->done = kept;
        }
    return NS_OK;
}

/* A new claim of pool pi (only) for up to want pods of g; how many it took, or -1. */
static int64_t new_claim_in(sched *s, sched_group *g, size_t pi, int64_t want, bool *saved_ok)
{
    memcpy(saved_ok, g->pool_ok, s->n_pools * sizeof(bool));
    for (size_t p = 0; p < s->n_pools; p++)
        g->pool_ok[p] = saved_ok[p] && p == pi;
    int64_t k = sched_new_claim(s, g, want);
    memcpy(g->pool_ok, saved_ok, s->n_pools * sizeof(bool));
    return k;
}

/* Up to want pods of g onto *claim, or when *claim is SIZE_MAX onto a new claim of the class's pool (*claim is then
 * set), made with only the types in `types` when not NULL and the pool has limits. The pods stay in the class's zone,
 * and the group's zonal spreads are set aside meanwhile: the pass keeps their per-zone counts. How many went, or -1. */
static int64_t place_pods(cost_pass *cp, const cost_class *k, sched_group *g, size_t *claim, int64_t want,
                          const uint64_t *types, bool *saved_ok)
{
    sched *s = cp->s;
    sched_pool *p = &s->pools[k->pool];
    uint64_t saved_pairs = g->pool_pairs[k->pool], active = 0;
    for (size_t i = 0; i < g->n_cons; i++)
        if (g->cons[i].active) {
            active |= UINT64_C(1) << i;
            g->cons[i].active = false;
        }
    if (k->zone >= 0)
        g->pool_pairs[k->pool] &= sched_zone_pairs(k->zone);
    int64_t got;
    if (*claim != SIZE_MAX) {
        got = sched_try_claim(s, g, *claim, want);
    } else {
        for (size_t w = 0; types && p->has_limits && w < p->words; w++)
            p->in_limits[w] &= types[w];
        got = new_claim_in(s, g, k->pool, want, saved_ok);
        if (p->has_limits)
            sched_pool_recompute_limits(s, p);
        if (got > 0)
            *claim = s->n_claims - 1;
    }
    g->pool_pairs[k->pool] = saved_pairs;
    for (size_t i = 0; i < g->n_cons; i++)
        if ((active >> i) & 1)
            g->cons[i].active = true;
    return got;
}

/* Places one bin on a new claim of its class's pool, never more of an item than the class has left to place. */
static int place_bin(cost_pass *cp, cost_class *k, const cost_bin *bin, sched_vec *used, bool *saved_ok)
{
    sched *s = cp->s;
    const uint64_t *types = NULL;
    if (s->pools[k->pool].has_limits) {
        sched_cost_bin_types(s, k, bin, used, cp->mask, NULL);
        types = cp->mask;
    }
    size_t claim = SIZE_MAX;
    for (size_t f = bin->first; f < bin->first + bin->n; f++) {
        size_t j = k->plan.fills[f].item;
        int64_t want = k->plan.fills[f].k < k->left[j] ? k->plan.fills[f].k : k->left[j];
        if (want <= 0)
            continue;
        int64_t got = place_pods(cp, k, k->items[j].g, &claim, want, types, saved_ok);
        if (got < 0)
            return -1;
        k->left[j] -= got;
    }
    return 0;
}

/* Places each bin on a new claim; pods a bin's claim refused (minValues on the merged requirements) then get new
 * claims of their own in the same pool and zone. 0, 1 when some pod found no claim, or -1. */
static int place_plan(cost_pass *cp, bool *saved_ok)
{
    sched *s = cp->s;
    sched_vec used;
    if (sched_vec_init(s, &used) != NS_OK)
        return -1;
    for (size_t i = 0; i < cp->n_classes; i++)
        for (size_t b = 0; b < cp->classes[i].plan.n_bins; b++)
            if (place_bin(cp, &cp->classes[i], &cp->classes[i].plan.bins[b], &used, saved_ok) < 0)
                return -1;
    for (size_t i = 0; i < cp->n_classes; i++) {
        cost_class *k = &cp->classes[i];
        for (size_t j = 0; j < k->n_items; j++)
            while (k->left[j] > 0) {
                size_t claim = SIZE_MAX;
                int64_t got = place_pods(cp, k, k->items[j].g, &claim, k->left[j], NULL, saved_ok);
                if (got <= 0)
                    return got < 0 ? -1 : 1;
                k->left[j] -= got;
            }
    }
    return 0;
}

/* Drops the claims marked gone, renumbering the others (and the placements that name them) in order. */
static int compact(cost_pass *cp)
{
    sched *s = cp->s;
    size_t *to = malloc((s->n_claims ? s->n_claims : 1) * sizeof(size_t)), j = 0;
    if (!to)
        return NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory renumbering %zu claims", s->n_claims);
    for (size_t i = 0; i < s->n_claims; i++) {
        if (cp->gone[i]) {
            sched_claim_release(&s->claims[i]);
            to[i] = SIZE_MAX;
            continue;
        }
        if (j != i) {
            int64_t *row = s->claim_used + j * s->n_dims;
            memcpy(row, s->claims[i].used.v, s->n_dims * sizeof(int64_t));
            s->claims[j] = s->claims[i];
            s->claims[j].used.v = row;
            s->claims[j].host = (uint32_t)(s->n_nodes + j);
        }
        to[i] = j++;
    }
    s->n_claims = j;
    for (size_t i = 0; i < s->cl->n_pods; i++)
        if (on_claim(cp, s->placement[i]))
            s->placement[i] = s->n_nodes + to[s->placement[i] - s->n_nodes];
    free(to);
    return NS_OK;
}

/* Keeps the new claims when they cost less than the greedy ones they replace; otherwise puts everything back. */
static int settle(cost_pass *cp, int placed)
{
    sched *s = cp->s;
    double old_price = 0, new_price = 0;
    for (size_t c = 0; c < cp->n_old; c++)
        old_price += cp->gone[c] ? claim_price(s, &s->claims[c]) : 0;
    for (size_t c = cp->n_old; c < s->n_claims; c++)
        new_price += claim_price(s, &s->claims[c]);
    bool keep = placed == 0 && new_price < old_price * (1 - 1e-9);
    restore_counts(cp, !keep);
    for (size_t c = 0; c < s->n_claims; c++)
        cp->gone[c] = c < cp->n_old ? cp->gone[c] && keep : !keep;
    if (!keep) {
        memcpy(s->placement, cp->saved_placement, s->cl->n_pods * sizeof(size_t));
        for (size_t gi = 0; gi < s->n_groups; gi++)
            if (cp->saved_pods[gi]) {
                memcpy(s->groups[gi].pods, cp->saved_pods[gi], s->groups[gi].n_pods * sizeof(size_t));
                s->groups[gi].done = cp->saved_done[gi];
            }
    }
    return compact(cp);
}

static void pass_free(cost_pass *cp)
{
    for (size_t i = 0; i < cp->n_classes; i++)
        class_free(&cp->classes[i]);
    for (size_t i = 0; cp->saved_pods && i < cp->s->n_groups; i++)
        free(cp->saved_pods[i]);
    free(cp->saved_pods);
    free(cp->saved_done);
    free(cp->saved_placement);
    free(cp->saved_remaining);
    free(cp->saved_zones);
    free(cp->saved_total);
    free(cp->mask);
    free(cp->charge);
    for (size_t i = 0; cp->group_reqs && i < cp->s->n_groups; i++)
        free(cp->group_reqs[i]);
    free(cp->group_reqs);
    free(cp->classes);
    free(cp->claim_rep);
    free(cp->claim_zone);
    free(cp->pod_group);
    free(cp->gone);
}

static int pass_alloc(cost_pass *cp)
{
    sched *s = cp->s;
    size_t n_pods = s->cl->n_pods ? s->cl->n_pods : 1, n_groups = s->n_groups ? s->n_groups : 1;
    cp->pod_group = malloc(n_pods * sizeof(size_t));
    cp->saved_placement = malloc(n_pods * sizeof(size_t));
    cp->claim_rep = malloc((cp->n_old ? cp->n_old : 1) * sizeof(size_t));
    cp->claim_zone = malloc((cp->n_old ? cp->n_old : 1) * sizeof(int));
    cp->saved_remaining = malloc((s->n_pools ? s->n_pools : 1) * s->n_dims * sizeof(int64_t));
    cp->saved_zones = malloc((s->n_topos ? s->n_topos : 1) * SCHED_MAX_ZONES * sizeof(int32_t));
    cp->saved_total = malloc((s->n_topos ? s->n_topos : 1) * sizeof(int64_t));
    cp->mask = malloc((s->max_words ? s->max_words : 1) * sizeof(uint64_t));
    cp->charge = malloc(2 * s->n_dims * sizeof(int64_t));
    cp->classes = calloc(cp->n_old ? cp->n_old : 1, sizeof(*cp->classes));
    cp->saved_pods = calloc(n_groups, sizeof(*cp->saved_pods));
    cp->saved_done = calloc(n_groups, sizeof(*cp->saved_done));
    cp->group_reqs = calloc(n_groups, sizeof(char *));
    for (size_t g = 0; cp->group_reqs && g < s->n_groups; g++) {
        char text[2048];
        if (!(cp->group_reqs[g] = strdup(ns_requirements_format(&s->groups[g].reqs, text, sizeof(text)))))
            break;
    }
    if (!cp->pod_group || !cp->saved_placement || !cp->claim_rep || !cp->claim_zone || !cp->saved_remaining ||
        !cp->saved_zones || !cp->saved_total || !cp->mask || !cp->charge || !cp->classes || !cp->saved_pods ||
        !cp->saved_done || !cp->group_reqs || (s->n_groups && !cp->group_reqs[s->n_groups - 1]))
        return NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory for %zu pods and %zu claims", s->cl->n_pods,
                       cp->n_old);
    for (size_t g = 0; g < s->n_groups; g++)
        for (size_t i = 0; i < s->groups[g].n_pods; i++)
            cp->pod_group[s->groups[g].pods[i]] = g;
    return NS_OK;
}

/* gone grows with the claims the pass adds: one flag per claim, the new ones included. */
static int gone_reserve(cost_pass *cp, size_t n)
{
    bool *g = realloc(cp->gone, (n ? n : 1) * sizeof(bool));
    if (!g)
        return NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory for %zu claim flags", n);
    cp->gone = g;
    return NS_OK;
}

int sched_cost_pack(sched *s)
{
    cost_pass cp = {.s = s, .n_old = s->n_claims};
    bool *saved_ok = malloc((s->n_pools ? s->n_pools : 1) * sizeof(bool));
    int rc = saved_ok ? pass_alloc(&cp) : NS_FAIL(NS_ERR_INTERNAL, "cost packing: out of memory");
    if (rc == NS_OK)
        rc = gone_reserve(&cp, cp.n_old);
    if (rc == NS_OK) {
        memset(cp.gone, 0, cp.n_old * sizeof(bool));
        movable_claims(&cp);
    }
    for (size_t c = 0; rc == NS_OK && c < cp.n_old; c++)
        if (cp.claim_rep[c] != SIZE_MAX)
            rc = class_add_claim(&cp, c);
    if (rc == NS_OK)
        rc = plan_classes(&cp);
    if (rc == NS_OK && cp.n_classes > 0) {
        rc = unplace(&cp);
        int placed = rc == NS_OK ? place_plan(&cp, saved_ok) : 0;
        if (placed < 0)
            rc = NS_ERR_INTERNAL;
        if (rc == NS_OK)
            rc = gone_reserve(&cp, s->n_claims);
        if (rc == NS_OK)
            rc = settle(&cp, placed);
    }
    free(saved_ok);
    pass_free(&cp);
    return rc;
}
