/* Commitments' utilisation into metrics and log lines (commitment_report.h). */
#include <stdlib.h>
#include <string.h>

#include "controller/commitment_report.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"

/* What the last log line of one commitment said. */
typedef struct logged {
    double used, spilled_per_hour;
    size_t nodes, spilled_nodes;
    bool once;
} logged;

struct ns_commitment_report {
    ns_metrics *m;
    logged *last;
    size_t n;
};

static const char *const gauges[] = {"nodesmith_commitment_amount", "nodesmith_commitment_used",
                                     "nodesmith_commitment_utilisation", "nodesmith_commitment_nodes",
                                     "nodesmith_commitment_spilled_nodes", "nodesmith_commitment_spilled_per_hour"};
#define N_GAUGES (sizeof(gauges) / sizeof(gauges[0]))

int ns_commitment_report_new(ns_metrics *m, ns_commitment_report **out)
{
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory for the commitments' report");
    (*out)->m = m;
    return NS_OK;
}

void ns_commitment_report_free(ns_commitment_report *r)
{
    if (!r)
        return;
    free(r->last);
    free(r);
}

static int set_gauges(ns_commitment_report *r, const ns_commit_usage *u)
{
    char labels[512];
    const char *kv[] = {"commitment", u->c->name, "kind", ns_commit_kind_name(u->c->kind)};
    ns_metrics_labels(labels, sizeof(labels), 2, kv);
    const double v[N_GAUGES] = {u->c->amount, u->used, u->used / u->c->amount, (double)u->nodes,
                                (double)u->spilled_nodes, u->spilled_per_hour};
    int rc = NS_OK;
    for (size_t g = 0; rc == NS_OK && g < N_GAUGES; g++)
        rc = ns_metrics_set(r->m, gauges[g], labels, v[g]);
    return rc;
}

static void log_change(logged *last, const ns_commit_usage *u)
{
    if (last->once && last->used == u->used && last->nodes == u->nodes && last->spilled_nodes == u->spilled_nodes &&
        last->spilled_per_hour == u->spilled_per_hour)
        return;
    *last = (logged){.used = u->used, .nodes = u->nodes, .spilled_nodes = u->spilled_nodes,
                     .spilled_per_hour = u->spilled_per_hour, .once = true};
    /* The object simulate's JSON report gives per commitment: one writer of the figures, numbers as numbers. */
    ns_log_json(NS_LOG_INFO, "commitments", "commitment utilisation", ns_commit_usage_json(u));
}

int ns_commitment_report_update(ns_commitment_report *r, const ns_commit_ledger *l)
{
    size_t n = ns_commit_ledger_count(l);
    if (n > r->n) {
        logged *grown = realloc(r->last, n * sizeof(*grown));
        if (!grown)
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory reporting %zu commitments", n);
        memset(grown + r->n, 0, (n - r->n) * sizeof(*grown));
        r->last = grown;
        r->n = n;
    }
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < n; i++) {
        const ns_commit_usage *u = ns_commit_ledger_usage(l, i);
        rc = set_gauges(r, u);
        log_change(&r->last[i], u);
    }
    return rc;
}
