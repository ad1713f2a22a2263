/*
 * Capacity reservations, counted as Karpenter's ReservationManager counts them (pkg/controllers/provisioning/
 * scheduling/reservationmanager.go and NodeClaim.offeringsToReserve in nodeclaim.go).
 *
 * Each reservation starts the round with the least count any of its offerings states (several pools may list one
 * reservation, and the provider may have been asked at different times). A new claim holds, pessimistically, one
 * instance of every reservation whose offering it could still launch into: its kept types' available reserved
 * offerings within its pairs, taken only while the reservation has one left (or the claim already holds it). As pods
 * narrow the claim, reservations it can no longer use go back. At the end a claim that holds any launches only into
 * them (capacity type reserved, its launch options only their offerings), and a claim that holds none launches into
 * no counted reservation (on-demand or spot), where Karpenter leaves its capacity type open.
 *
 * Under NS_SCHED_RESERVED_STRICT (Karpenter's provisioner, DisableReservedCapacityFallback) a claim refuses a pod
 * when a compatible reserved offering exists but none can be held, or when the pod would take away every reservation
 * the claim holds; a new claim refused so ends the pool search for the pod (lower-weight pools are not tried), and
 * the pod is deferred to a later round without relaxing its preferences. Under FALLBACK (consolidation's simulations)
 * the claim takes the pod and holds what it can. OFF (the ReservedCapacity gate off) keeps no count.
 *
 * Offerings without a count (reservation_capacity -1: the provider does not say) are not counted here: any claim may
 * use them, as before providers could state a count.
 */
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "sched/sched_internal.h"

/* A reserved offering's reservation, or -1 when the offering is not counted. */
static long resv_find(const sched *s, const char *id)
{
    for (size_t i = 0; i < s->n_resv; i++)
        if (strcmp(s->resv[i].id, id) == 0)
            return (long)i;
    return -1;
}

static bool counted(const ns_itype_offering *of, int pair)
{
    return pair >= 0 && of->reservation_id && of->reservation_capacity >= 0 &&
           strcmp(of->capacity_type, NS_CAPACITY_RESERVED) == 0;
}

static int resv_add(sched *s, const ns_itype_offering *of)
{
    long r = resv_find(s, of->reservation_id);
    if (r >= 0) {
        if (of->reservation_capacity < s->resv[r].left)
            s->resv[r].left = of->reservation_capacity;
        return NS_OK;
    }
    sched_resv *grown = realloc(s->resv, (s->n_resv + 1) * sizeof(*grown));
    if (!grown)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory counting reservation %s", of->reservation_id);
    s->resv = grown;
    s->resv[s->n_resv++] = (sched_resv){of->reservation_id, of->reservation_capacity};
    return NS_OK;
}

/* Every counted reservation of the round's pools, then each offering's index among them. */
static int resv_index_pool(sched *s, sched_pool *p)
{
    p->offer_resv = calloc(p->n_types ? p->n_types : 1, sizeof(*p->offer_resv));
    if (!p->offer_resv)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory indexing NodePool %s's reservations",
                       p->np->meta.name);
    for (size_t i = 0; i < p->n_types; i++) {
        const ns_itype *t = p->types[i];
        if (!(p->offer_resv[i] = malloc((t->n_offerings ? t->n_offerings : 1) * sizeof(int32_t))))
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory indexing %s's reservations", t->name);
        for (size_t o = 0; o < t->n_offerings; o++)
            p->offer_resv[i][o] = counted(&t->offerings[o], p->offer_pair[i][o])
                                      ? (int32_t)resv_find(s, t->offerings[o].reservation_id)
                                      : -1;
    }
    return NS_OK;
}

int sched_resv_build(sched *s)
{
    if (s->in->reserved_mode == NS_SCHED_RESERVED_OFF)
        return NS_OK;
    int rc = NS_OK;
    for (size_t pi = 0; rc == NS_OK && pi < s->n_pools; pi++) {
        const sched_pool *p = &s->pools[pi];
        for (size_t i = 0; rc == NS_OK && i < p->n_types; i++)
            for (size_t o = 0; rc == NS_OK && o < p->types[i]->n_offerings; o++)
                if (counted(&p->types[i]->offerings[o], p->offer_pair[i][o]))
                    rc = resv_add(s, &p->types[i]->offerings[o]);
    }
    if (rc != NS_OK || s->n_resv == 0)
        return rc;
    s->resv_plan = malloc(s->n_resv * sizeof(*s->resv_plan));
    s->resv_mark = calloc(s->n_resv, sizeof(*s->resv_mark));
    if (!s->resv_plan || !s->resv_mark)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory for %zu reservations", s->n_resv);
    for (size_t pi = 0; rc == NS_OK && pi < s->n_pools; pi++)
        rc = resv_index_pool(s, &s->pools[pi]);
    return rc;
}

void sched_resv_free(sched *s)
{
    for (size_t pi = 0; pi < s->n_pools; pi++) {
        sched_pool *p = &s->pools[pi];
        for (size_t i = 0; p->offer_resv && i < p->n_types; i++)
            free(p->offer_resv[i]);
        free(p->offer_resv);
        p->offer_resv = NULL;
    }
    free(s->resv);
    free(s->resv_plan);
    free(s->resv_mark);
}

bool sched_resv_held(const sched_claim *c, uint32_t r)
{
    for (size_t i = 0; i < c->n_held; i++)
        if (c->held[i] == r)
            return true;
    return false;
}

int sched_resv_plan(sched *s, const sched_claim *c, const uint64_t *keep, uint64_t pairs)
{
    s->n_resv_plan = 0;
    if (!s->n_resv)
        return NS_OK;
    const sched_pool *p = &s->pools[c->pool];
    bool compatible = false;
    s->resv_epoch++;
    for (size_t i = sched_bits_first(keep, p->words); i != SIZE_MAX; i = sched_bits_next(keep, p->words, i))
        for (size_t o = 0; o < p->types[i]->n_offerings; o++) {
            int32_t r = p->offer_resv[i][o];
            if (r < 0 || !((pairs >> p->offer_pair[i][o]) & 1u))
                continue;
            compatible = true;
            if (s->resv_mark[r] == s->resv_epoch || (s->resv[r].left <= 0 && !sched_resv_held(c, (uint32_t)r)))
                continue;
            s->resv_mark[r] = s->resv_epoch;
            s->resv_plan[s->n_resv_plan++] = (uint32_t)r;
        }
    if (s->in->reserved_mode != NS_SCHED_RESERVED_STRICT || s->n_resv_plan)
        return NS_OK;
    if (compatible)
        return SCHED_RESV_REFUSED;
    return c->n_held ? SCHED_RESV_REFUSED : NS_OK;
}

int sched_resv_commit(sched *s, sched_claim *c)
{
    if (!s->n_resv)
        return NS_OK;
    for (size_t i = 0; i < s->n_resv_plan; i++)
        if (!sched_resv_held(c, s->resv_plan[i]))
            s->resv[s->resv_plan[i]].left--;
    for (size_t i = 0; i < c->n_held; i++) {
        bool kept = false;
        for (size_t k = 0; k < s->n_resv_plan && !kept; k++)
            kept = s->resv_plan[k] == c->held[i];
        if (!kept)
            s->resv[c->held[i]].left++;
    }
    if (s->n_resv_plan > c->n_held) {
        uint32_t *held = realloc(c->held, s->n_resv_plan * sizeof(*held));
        if (!held)
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory recording a node claim's reservations");
        c->held = held;
    }
    if (s->n_resv_plan)
        memcpy(c->held, s->resv_plan, s->n_resv_plan * sizeof(*c->held));
    c->n_held = s->n_resv_plan;
    return NS_OK;
}

bool sched_resv_offering_ok(const sched_pool *p, const sched_claim *c, size_t type, size_t offering)
{
    int32_t r = p->offer_resv ? p->offer_resv[type][offering] : -1;
    if (!c->n_held)
        return r < 0;
    return r >= 0 && sched_resv_held(c, (uint32_t)r);
}

/* The reserved pairs of c's kept types' offerings it may launch into. */
static uint64_t launchable_reserved(const sched *s, const sched_claim *c, int reserved_ct)
{
    const sched_pool *p = &s->pools[c->pool];
    uint64_t pairs = 0;
    for (size_t i = sched_bits_first(c->types, p->words); i != SIZE_MAX; i = sched_bits_next(c->types, p->words, i))
        for (size_t o = 0; o < p->types[i]->n_offerings; o++) {
            int pair = p->offer_pair[i][o];
            if (pair >= 0 && pair % SCHED_N_CT == reserved_ct && sched_resv_offering_ok(p, c, i, o))
                pairs |= UINT64_C(1) << pair;
        }
    return pairs;
}

void sched_resv_finish(sched *s)
{
    int ct = sched_ct_index(NS_CAPACITY_RESERVED);
    uint64_t reserved = sched_ct_pairs(s, ct);
    for (size_t i = 0; s->n_resv && i < s->n_claims; i++) {
        sched_claim *c = &s->claims[i];
        uint64_t keep = launchable_reserved(s, c, ct) | (c->n_held ? 0 : ~reserved);
        /* A FALLBACK claim whose types offer nothing but used-up reservations keeps them, as Karpenter leaves its
         * capacity type open; every other claim gives them up. */
        if (c->pairs & keep)
            c->pairs &= keep;
    }
}
