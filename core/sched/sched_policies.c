/*
 * Karpenter's scheduling policies (MIN_VALUES_POLICY, PREFERENCE_POLICY): their names, and what each changes in a
 * round that is not a single test at the place it applies.
 */
#include <string.h>

#include "errors/ns_error.h"
#include "sched/sched_internal.h"

int ns_sched_min_values_policy_parse(const char *name, ns_sched_min_values_policy *out)
{
    if (name && strcmp(name, "Strict") == 0)
        *out = NS_SCHED_MIN_VALUES_STRICT;
    else if (name && strcmp(name, "BestEffort") == 0)
        *out = NS_SCHED_MIN_VALUES_BEST_EFFORT;
    else
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "min values policy '%s' is not known: it is Strict or BestEffort",
                       name ? name : "(null)");
    return NS_OK;
}

int ns_sched_preference_policy_parse(const char *name, ns_sched_preference_policy *out)
{
    if (name && strcmp(name, "Respect") == 0)
        *out = NS_SCHED_PREFERENCES_RESPECT;
    else if (name && strcmp(name, "Ignore") == 0)
        *out = NS_SCHED_PREFERENCES_IGNORE;
    else
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "preference policy '%s' is not known: it is Respect or Ignore",
                       name ? name : "(null)");
    return NS_OK;
}

const char *ns_sched_min_values_policy_name(ns_sched_min_values_policy p)
{
    return p == NS_SCHED_MIN_VALUES_BEST_EFFORT ? "BestEffort" : "Strict";
}

const char *ns_sched_preference_policy_name(ns_sched_preference_policy p)
{
    return p == NS_SCHED_PREFERENCES_IGNORE ? "Ignore" : "Respect";
}

void sched_ignore_preferences(sched *s, sched_group *g)
{
    if (s->in->preference_policy != NS_SCHED_PREFERENCES_IGNORE)
        return;
    g->pref_node = -1;
    for (size_t i = 0; i < g->n_cons; i++) {
        sched_constraint *c = &g->cons[i];
        if (c->src == SCHED_SRC_AFF_PREF || c->src == SCHED_SRC_ANTI_PREF ||
            (c->src == SCHED_SRC_SPREAD && c->schedule_anyway))
            c->active = false;
    }
}

bool sched_relax_min_values(const sched *s, const sched_claim *c, ns_requirements *reqs)
{
    if (s->in->min_values_policy != NS_SCHED_MIN_VALUES_BEST_EFFORT)
        return false;
    bool relaxed = false;
    for (size_t i = 0; i < reqs->n; i++) {
        ns_requirement *r = &reqs->items[i];
        if (r->min_values <= 0)
            continue;
        size_t left = sched_min_values_count(s, &s->pools[c->pool], c->types, c->pairs, r);
        if (left < (size_t)r->min_values) {
            r->min_values = (int32_t)left;
            relaxed = true;
        }
    }
    return relaxed;
}
