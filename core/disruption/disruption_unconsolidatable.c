/* Karpenter's Unconsolidatable reasons that need no simulation: consolidation.go's ShouldDisrupt, in its order and
 * words. What a single candidate's simulation finds is ns_consol_result's `why` (disruption_methods.c). */
#include <stdio.h>

#include "disruption/disruption_internal.h"
#include "model/duration.h"
#include "model/labels.h"

/* The instance type Karpenter resolves the candidate's label to, among its NodePool's types. */
static bool type_known(const ns_engine *e, const ds_candidate *c)
{
    const ns_engine_types *t = &e->types;
    return c->instance_type && c->pool_index < t->n_pools && t->pool_types[c->pool_index] &&
           ns_itype_set_find(t->pool_types[c->pool_index], c->instance_type);
}

static void why_not(const ns_engine *e, ds_candidate *c)
{
    char *why = c->unconsolidatable;
    size_t len = sizeof(c->unconsolidatable);
    const char *pool = c->pool->meta.name;
    if (!type_known(e, c))
        snprintf(why, len, "Instance Type \"%s\" not found", c->instance_type ? c->instance_type : "");
    else if (!c->capacity_type)
        snprintf(why, len, "Node does not have label \"%s\"", NS_LABEL_CAPACITY_TYPE);
    else if (!c->zone)
        snprintf(why, len, "Node does not have label \"%s\"", NS_LABEL_ZONE);
    else if (c->pool->consolidate_after_ms == NS_DURATION_NEVER)
        snprintf(why, len, "NodePool \"%s\" has consolidation disabled", pool);
    /* an empty node is emptiness's, and says nothing here */
    else if (c->n_reschedulable > 0 && c->pool->consolidation_policy == NS_CONSOLIDATE_WHEN_EMPTY)
        snprintf(why, len, "NodePool \"%s\" has consolidation policy WhenEmpty, but node is not empty", pool);
    /* Karpenter's emptiness publishes this for an empty node it leaves to its buffer pods */
    else if (c->n_reschedulable == 0 && c->holds_headroom)
        snprintf(why, len, "Node \"%s\" has buffer pods", c->node->meta.name);
}

void ds_mark_unconsolidatable(const ns_engine *e, ds_candidates *cands)
{
    /* blocked candidates are not candidates to Karpenter (their DisruptionBlocked says why); consolidation turns
     * static pools' nodes down before any check that would say why */
    for (size_t i = 0; i < cands->n; i++)
        if (!cands->items[i].blocked && !ns_nodepool_is_static(cands->items[i].pool))
            why_not(e, &cands->items[i]);
}
