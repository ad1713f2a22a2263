/* Disruption budget arithmetic (see budget.h). */
#include "disruption/budget.h"

#include "model/cron.h"
#include "errors/ns_error.h"
#include "model/pdb.h"

static const ns_budget default_budget = {.nodes_percent = true, .nodes = 10};

const char *ns_budget_reason_name(unsigned reason)
{
    switch (reason) {
    case NS_REASON_EMPTY:
        return "Empty";
    case NS_REASON_UNDERUTILIZED:
        return "Underutilized";
    case NS_REASON_DRIFTED:
        return "Drifted";
    default:
        return "unknown";
    }
}

int64_t ns_budget_nodes(const ns_budget *b, int64_t n_nodes)
{
    /* Kubernetes' GetScaledValueFromIntOrPercent with rounding up, as for PDBs. */
    ns_int_or_percent v = {.set = true, .percent = b->nodes_percent, .value = b->nodes};
    return ns_int_or_percent_scaled(&v, n_nodes);
}

int ns_budget_allowed(const ns_budget *budgets, size_t n_budgets, int64_t n_nodes, unsigned reason, int64_t now_ms,
                      int64_t *out)
{
    if (n_budgets == 0) {
        budgets = &default_budget;
        n_budgets = 1;
    }
    int64_t allowed = NS_BUDGET_UNLIMITED;
    for (size_t i = 0; i < n_budgets; i++) {
        const ns_budget *b = &budgets[i];
        bool active;
        int rc = ns_cron_active(b->schedule, b->duration_ms, now_ms, &active);
        if (rc < 0) {
            *out = 0;
            return ns_error_prefix("budget %zu: ", i);
        }
        if (!active || (b->reasons && !(b->reasons & reason)))
            continue;
        int64_t nodes = ns_budget_nodes(b, n_nodes);
        if (nodes < allowed)
            allowed = nodes;
    }
    *out = allowed;
    return 0;
}

int ns_budget_remaining(const ns_nodepool *np, int64_t n_nodes, int64_t n_disrupting, unsigned reason, int64_t now_ms,
                        int64_t *out)
{
    int64_t allowed;
    int rc = ns_budget_allowed(np->budgets, np->n_budgets, n_nodes, reason, now_ms, &allowed);
    if (rc < 0) {
        *out = 0;
        return ns_error_prefix("NodePool %s: ", np->meta.name ? np->meta.name : "(unnamed)");
    }
    *out = allowed > n_disrupting ? allowed - n_disrupting : 0;
    return 0;
}
