/*
 * What the disruption controller waits for in the cluster, declared to the engine after each of its steps so an
 * event-driven run steps when it comes (engine.h, ns_engine_due): a claim's expiry, the end of a node's
 * consolidateAfter window, and the opening and closing of scheduled budgets.
 */
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "disruption/disruption_internal.h"
#include "errors/ns_error.h"
#include "model/cron.h"
#include "model/duration.h"
#include "model/checked.h"
#include "model/labels.h"
#include "model/model_util.h"

/* Scheduled budgets are looked ahead this far for their next opening; a schedule that fires less often than yearly
 * is looked at again when the horizon moves. */
#define BUDGET_HORIZON_MS (INT64_C(366) * 24 * 3600 * 1000)

static void later(ns_engine *e, int64_t now, int64_t at_ms)
{
    if (at_ms > now)
        ns_engine_due(e, at_ms);
}

static const ns_nodepool *pool_of(const ns_cluster *cl, const ns_nodeclaim *claim)
{
    const char *name = ns_labels_get(&claim->meta.labels, NS_LABEL_NODEPOOL);
    for (size_t p = 0; name && p < cl->n_nodepools; p++)
        if (strcmp(cl->nodepools[p]->meta.name, name) == 0)
            return cl->nodepools[p];
    return NULL;
}

/* consolidateAfter counts from the later of the last pod event and initialization (disruption_candidates.c). */
static void claim_times(ns_engine *e, const ns_nodeclaim *claim, int64_t now)
{
    if (!ns_claim_launched(claim) || ns_claim_deleting(claim))
        return;
    if (claim->expire_after_ms > 0 && claim->meta.creation_ms > 0)
        later(e, now, ns_saturating_add(claim->meta.creation_ms, claim->expire_after_ms));
    const ns_condition *init = ns_conditions_get(&claim->conditions, NS_COND_INITIALIZED);
    const ns_nodepool *pool = pool_of(e->cluster, claim);
    if (!init || !pool || pool->consolidate_after_ms == NS_DURATION_NEVER)
        return;
    const char *v = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_LAST_POD_EVENT);
    int64_t since = v ? strtoll(v, NULL, 10) : 0;
    if (init->last_transition_ms > since)
        since = init->last_transition_ms;
    later(e, now, ns_saturating_add(since, pool->consolidate_after_ms));
}

/* A scheduled budget is active from each hit for its duration: it changes at the next hit and at the end of the
 * window of the latest one. An invalid schedule never changes (the budget fails closed). */
static void budget_times(ns_engine *e, const ns_budget *b, int64_t now)
{
    ns_cron c;
    int64_t hit;
    if (!b->schedule)
        return;
    if (ns_cron_parse(b->schedule, &c) < 0) {
        ns_error_clear(); /* reported where the budget is evaluated (ds_budgets) */
        return;
    }
    if (ns_cron_next(&c, now, now + BUDGET_HORIZON_MS, &hit))
        later(e, now, hit);
    if (b->duration_ms > 0 && ns_cron_prev(&c, now, now - b->duration_ms + 1, &hit))
        later(e, now, hit + b->duration_ms);
}

void ds_declare_due(ns_engine *e)
{
    const ns_cluster *cl = e->cluster;
    int64_t now = ns_clock_now_ms();
    for (size_t i = 0; i < cl->n_nodeclaims; i++)
        claim_times(e, cl->nodeclaims[i], now);
    for (size_t p = 0; p < cl->n_nodepools; p++)
        for (size_t b = 0; b < cl->nodepools[p]->n_budgets; b++)
            budget_times(e, &cl->nodepools[p]->budgets[b], now);
}
