/* The graceful disruption methods: emptiness, drift, multi-node and single-node consolidation (see disruption.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/disruption_cost.h"
#include "disruption/disruption_internal.h"
#include "errors/ns_error.h"

void ds_command_clear(ds_command *cmd)
{
    for (size_t i = 0; i < cmd->n_claims; i++)
        free(cmd->claims[i]);
    for (size_t r = 0; r < cmd->n_repl; r++) {
        for (size_t i = 0; i < cmd->repl[r].n_types; i++)
            free(cmd->repl[r].types[i]);
        free(cmd->repl[r].types);
    }
    free(cmd->claims);
    free(cmd->repl);
    memset(cmd, 0, sizeof(*cmd));
}

static int add_string(char ***v, size_t *n, const char *s)
{
    char **grown = realloc(*v, (*n + 1) * sizeof(**v));
    if (!grown)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory building a disruption command");
    *v = grown;
    if (!(grown[*n] = strdup(s)))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory building a disruption command");
    (*n)++;
    return 0;
}

static int command_start(ds_command *cmd, ds_method m, const char *type, ds_candidate *const *cands, size_t n)
{
    ds_command_clear(cmd);
    cmd->method = m;
    cmd->consolidation_type = type;
    cmd->decision = NS_CONSOL_DELETE;
    for (size_t i = 0; i < n; i++) {
        int rc = add_string(&cmd->claims, &cmd->n_claims, cands[i]->claim->meta.name);
        if (rc < 0) {
            ds_command_clear(cmd);
            return rc;
        }
        cmd->pod_count += cands[i]->n_reschedulable;
    }
    cmd->pending = true;
    return 0;
}

/* The eligible candidates in disruption-cost order (drift: in the order they drifted). *out is malloc'd. */
static int eligible_sorted(ds_candidates *cands, ds_method m, ds_candidate ***out, size_t *n)
{
    *n = 0;
    ns_disruption_rank *ranks = calloc(cands->n ? cands->n : 1, sizeof(*ranks));
    *out = calloc(cands->n ? cands->n : 1, sizeof(**out));
    if (!ranks || !*out) {
        free(ranks);
        free(*out);
        *out = NULL;
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory ordering disruption candidates");
    }
    size_t k = 0;
    for (size_t i = 0; i < cands->n; i++) {
        const ds_candidate *c = &cands->items[i];
        if (!ds_candidate_eligible(c, m))
            continue;
        ranks[k].cost = m == DS_DRIFTED || m == DS_STATIC_DRIFTED ? (double)c->drifted_ms : c->cost;
        ranks[k].name = c->claim->meta.name;
        ranks[k].index = i;
        k++;
    }
    ns_disruption_rank_sort(ranks, k);
    for (size_t i = 0; i < k; i++)
        (*out)[i] = &cands->items[ranks[i].index];
    *n = k;
    free(ranks);
    return 0;
}

int ds_compute_emptiness(ns_engine *e, ds_candidates *cands, int64_t *budgets, ds_command *cmd)
{
    (void)e;
    ds_candidate **order = NULL;
    size_t n = 0, taken = 0;
    int rc = eligible_sorted(cands, DS_EMPTY, &order, &n);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (budgets[order[i]->pool_index] <= 0)
            continue;
        budgets[order[i]->pool_index]--;
        order[taken++] = order[i];
    }
    if (taken)
        rc = command_start(cmd, DS_EMPTY, "empty", order, taken);
    free(order);
    return rc;
}

int ds_compute_drift(ns_engine *e, ds_candidates *cands, int64_t *budgets, ds_command *cmd)
{
    ds_candidate **order = NULL;
    size_t n = 0, empty = 0;
    int rc = eligible_sorted(cands, DS_DRIFTED, &order, &n);
    if (rc < 0)
        return rc;
    ds_candidate **batch = calloc(n ? n : 1, sizeof(*batch));
    if (!batch) {
        free(order);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory computing drift");
    }
    /* Empty drifted nodes need no simulation: all of them that the budgets allow, at once. */
    for (size_t i = 0; i < n; i++) {
        if (order[i]->n_reschedulable == 0 && budgets[order[i]->pool_index] > 0) {
            budgets[order[i]->pool_index]--;
            batch[empty++] = order[i];
        }
    }
    if (empty) {
        rc = command_start(cmd, DS_DRIFTED, "drift", batch, empty);
        goto done;
    }
    /* Otherwise one node at a time, the longest drifted first, when its pods have somewhere to go. */
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (budgets[order[i]->pool_index] <= 0)
            continue;
        ds_sim sim;
        if ((rc = ds_simulate(e, &order[i], 1, false, &sim)) < 0)
            break;
        bool ok = sim.all_scheduled;
        size_t replacements = sim.n_needed;
        ds_sim_free(&sim);
        if (!ok)
            continue;
        if ((rc = command_start(cmd, DS_DRIFTED, "drift", &order[i], 1)) == 0) {
            cmd->n_replacements = replacements;
            cmd->decision = replacements ? NS_CONSOL_REPLACE : NS_CONSOL_DELETE;
        }
        break;
    }
done:
    free(batch);
    free(order);
    return rc;
}

int ds_compute_static_drift(ns_engine *e, ds_candidates *cands, int64_t *budgets, ds_command *cmd)
{
    ds_candidate **order = NULL;
    size_t n = 0, taken = 0;
    int rc = eligible_sorted(cands, DS_STATIC_DRIFTED, &order, &n);
    if (rc < 0)
        return rc;
    size_t n_pools = e->cluster->n_nodepools;
    int64_t *room = calloc(n_pools ? n_pools : 1, sizeof(*room));
    if (!room) {
        free(order);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory computing static drift");
    }
    for (size_t p = 0; p < n_pools; p++) {
        const ns_nodepool *np = e->cluster->nodepools[p];
        ns_static_count count;
        ns_engine_static_count(e->cluster, np, &count);
        /* No drift replacement until a scale-down is through; then as many as the budget and limits.nodes allow
         * (every claim of the pool counts against the limit, the deleting ones too). */
        int64_t under_limit = ns_engine_nodes_limit(np) - (count.active + count.deleting + count.pending);
        room[p] = budgets[p] < under_limit ? budgets[p] : under_limit;
        if (!ns_nodepool_is_static(np) || count.active + count.pending > np->replicas)
            room[p] = 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (room[order[i]->pool_index] <= 0)
            continue;
        room[order[i]->pool_index]--;
        budgets[order[i]->pool_index]--;
        order[taken++] = order[i];
    }
    if (taken && (rc = command_start(cmd, DS_STATIC_DRIFTED, "static-drift", order, taken)) == 0) {
        cmd->n_replacements = taken;
        cmd->decision = NS_CONSOL_REPLACE;
    }
    free(room);
    free(order);
    return rc;
}

/* ---- Consolidation */

typedef struct consol_ctx {
    ns_engine *e;
    ds_candidate **cands;
    bool spot_to_spot;
} consol_ctx;

static void to_consol_candidates(ds_candidate *const *cands, size_t n, ns_consol_candidate *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (ns_consol_candidate){cands[i]->claim->meta.name, cands[i]->instance_type, cands[i]->capacity_type,
                                       cands[i]->price};
}

/* The result's options point at types of the simulation's priced sets (with commitments), which go with it: they are
 * pointed at the engine's own sets instead, which last the step. */
static void unprice(const ns_engine *e, const ds_sim *sim, ns_consol_result *r)
{
    for (size_t i = 0; i < r->n_options; i++)
        r->options[i].type = ns_engine_commit_unpriced(e, &sim->plan, r->options[i].type);
    for (size_t i = 0; i < r->n_parts; i++)
        unprice(e, sim, &r->parts[i]);
}

/* Simulates the first n candidates and decides; REPLACE results of several candidates also go through
 * filterOutSameType. */
static int consolidate_prefix(void *vctx, size_t n, ns_consol_result *out)
{
    consol_ctx *ctx = vctx;
    ns_consol_candidate *cc = calloc(n, sizeof(*cc));
    if (!cc)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory computing consolidation");
    to_consol_candidates(ctx->cands, n, cc);
    ds_sim sim;
    int rc = ds_simulate(ctx->e, ctx->cands, n, true, &sim);
    if (rc == 0) {
        ns_consol_sim cs;
        ds_sim_consol(&sim, &cs);
        cs.multi_claim = ns_engine_get_config(ctx->e)->packing == NS_SCHED_PACKING_COST;
        rc = ns_consol_compute(cc, n, &cs, ctx->spot_to_spot, out);
        if (rc == 0 && n > 1)
            ns_consol_filter_same_type(out, cc, n);
        unprice(ctx->e, &sim, out);
    }
    ds_sim_free(&sim);
    free(cc);
    return rc;
}

static int command_from_result(ds_command *cmd, const char *type, ds_candidate *const *cands, size_t n,
                               const ns_consol_result *r)
{
    int rc = command_start(cmd, DS_UNDERUTILIZED, type, cands, n);
    if (rc < 0)
        return rc;
    cmd->decision = r->decision;
    size_t k = ns_consol_n_replacements(r);
    if (k && !(cmd->repl = calloc(k, sizeof(*cmd->repl)))) {
        ds_command_clear(cmd);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory building a disruption command");
    }
    cmd->n_repl = cmd->n_replacements = k;
    for (size_t p = 0; p < k; p++) {
        const ns_consol_result *part = ns_consol_replacement(r, p);
        struct ds_replacement *d = &cmd->repl[p];
        d->spot_only = part->spot_only;
        for (size_t i = 0; i < part->n_options; i++) {
            bool seen = false;
            for (size_t j = 0; j < d->n_types && !seen; j++)
                seen = strcmp(d->types[j], part->options[i].type->name) == 0;
            if (!seen && (rc = add_string(&d->types, &d->n_types, part->options[i].type->name)) < 0) {
                ds_command_clear(cmd);
                return rc;
            }
        }
    }
    return 0;
}

int ds_compute_consolidation(ns_engine *e, const ns_disruption_config *cfg, ds_candidates *cands, int64_t *budgets,
                             ds_command *cmd, bool *constrained)
{
    *constrained = false;
    ds_candidate **order = NULL;
    size_t n = 0;
    int rc = eligible_sorted(cands, DS_UNDERUTILIZED, &order, &n);
    if (rc < 0)
        return rc;
    size_t n_pools = e->cluster->n_nodepools;
    int64_t *multi_budgets = malloc((n_pools ? n_pools : 1) * sizeof(*multi_budgets));
    ds_candidate **batch = calloc(n ? n : 1, sizeof(*batch));
    if (!multi_budgets || !batch) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory computing consolidation");
        goto done;
    }
    memcpy(multi_budgets, budgets, n_pools * sizeof(*budgets));

    /* Multi-node: the candidates the budgets allow, empty ones left to emptiness, in cost order. */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        /* the budget first, as Karpenter's multi-node filter: a candidate it holds back is a constraint */
        if (multi_budgets[order[i]->pool_index] <= 0)
            *constrained = true;
        if (multi_budgets[order[i]->pool_index] <= 0 || order[i]->n_reschedulable == 0)
            continue;
        multi_budgets[order[i]->pool_index]--;
        batch[k++] = order[i];
    }
    consol_ctx ctx = {e, batch, cfg->spot_to_spot};
    size_t chosen = 0;
    ns_consol_result r;
    if ((rc = ns_consol_first_n(k, consolidate_prefix, &ctx, &chosen, &r)) < 0)
        goto done;
    if (chosen >= 2) {
        rc = command_from_result(cmd, "multi", batch, chosen, &r);
        ns_consol_result_free(&r);
        goto done;
    }
    ns_consol_result_free(&r);

    /* Single-node: the first candidate, in cost order, that can be deleted or replaced by one cheaper node. */
    ctx.cands = order;
    for (size_t i = 0; i < n; i++) {
        if (budgets[order[i]->pool_index] <= 0)
            *constrained = true;
        if (budgets[order[i]->pool_index] <= 0 || order[i]->n_reschedulable == 0)
            continue;
        ctx.cands = &order[i];
        if ((rc = consolidate_prefix(&ctx, 1, &r)) < 0)
            goto done;
        if (r.decision != NS_CONSOL_NOOP) {
            rc = command_from_result(cmd, "single", &order[i], 1, &r);
            ns_consol_result_free(&r);
            goto done;
        }
        if (r.published)
            snprintf(order[i]->unconsolidatable, sizeof(order[i]->unconsolidatable), "%s", r.why);
        ns_consol_result_free(&r);
    }
done:
    free(batch);
    free(multi_budgets);
    free(order);
    return rc;
}
