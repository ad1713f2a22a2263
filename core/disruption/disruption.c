/* The disruption controller: expiration, the pending command and its validation, the methods (see disruption.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "disruption/disruption_internal.h"
#include "errors/ns_error.h"
#include "model/hash.h"
#include "model/labels.h"

/* Karpenter recomputes consolidation at least this often even when nothing changed. */
#define RECONSIDER_MS INT64_C(300000)

typedef struct ns_disruption {
    ns_disruption_config cfg;
    ds_reports blocked;          /* DisruptionBlocked */
    ds_reports unconsolidatable; /* Unconsolidatable, as of the last consolidation pass */
    ds_command cmd;
    ds_pod_events pod_events;
    /* Consolidation found nothing for this cluster state (Karpenter's IsConsolidated). */
    uint64_t consolidated_state;
    int64_t consolidated_ms;
    bool consolidated;
} ns_disruption;

static void disruption_free(void *vctx)
{
    ns_disruption *d = vctx;
    if (!d)
        return;
    ds_command_clear(&d->cmd);
    ds_pod_events_free(&d->pod_events);
    ds_reports_free(&d->blocked);
    ds_reports_free(&d->unconsolidatable);
    free(d);
}

static char *join(char *const *v, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(v[i]) + 1;
    char *s = malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i)
            strcat(s, ",");
        strcat(s, v[i]);
    }
    return s;
}

/* Karpenter's command log values, for the decision's detail. Several replacements (cost packing): their instance
 * types and capacity types separated by ';', in the command's order. */
static void command_detail(const ds_command *cmd, char *buf, size_t len)
{
    char types[768] = "", capacity[128] = "";
    bool spot = false;
    for (size_t r = 0; r < cmd->n_repl; r++) {
        char *t = join(cmd->repl[r].types, cmd->repl[r].n_types);
        size_t used = strlen(types), cused = strlen(capacity);
        snprintf(types + used, sizeof(types) - used, "%s%s", r ? ";" : "", t ? t : "");
        snprintf(capacity + cused, sizeof(capacity) - cused, "%s%s", r ? ";" : "",
                 cmd->repl[r].spot_only ? "spot" : "any");
        spot = spot || cmd->repl[r].spot_only;
        free(t);
    }
    snprintf(buf, len,
             "decision=%s consolidation-type=%s disrupted-node-count=%zu replacement-node-count=%zu pod-count=%zu%s%s%s%s",
             cmd->decision == NS_CONSOL_REPLACE ? "replace" : "delete", cmd->consolidation_type, cmd->n_claims,
             cmd->n_replacements, cmd->pod_count, types[0] ? " replacement-instance-types=" : "", types,
             spot ? " replacement-capacity-type=" : "", !spot ? "" : cmd->n_repl == 1 ? "spot" : capacity);
}

static int record_command(ns_engine *e, const ds_command *cmd, const char *what)
{
    char detail[1024];
    command_detail(cmd, detail, sizeof(detail));
    char *claims = join(cmd->claims, cmd->n_claims);
    if (!claims)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording a disruption command");
    int rc = ns_engine_record(e, NS_DECISION_DISRUPTION_INFO, ds_method_name(cmd->method), what, NULL, claims, NULL,
                              detail);
    free(claims);
    return rc;
}

/* ---- Expiration: forceful, no budgets, no validation window. */

static int expire(ns_engine *e)
{
    ns_cluster *cl = e->cluster;
    int64_t now = ns_clock_now_ms();
    char **names = NULL;
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < cl->n_nodeclaims && rc == 0; i++) {
        const ns_nodeclaim *claim = cl->nodeclaims[i];
        if (!ns_claim_launched(claim) || ns_claim_deleting(claim) || claim->expire_after_ms <= 0 ||
            claim->meta.creation_ms <= 0 || now - claim->meta.creation_ms < claim->expire_after_ms ||
            ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_DISRUPTION_METHOD))
            continue;
        char **grown = realloc(names, (n + 1) * sizeof(*names));
        if (!grown || !(grown[n] = strdup(claim->meta.name))) {
            names = grown ? grown : names;
            rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory listing expired nodeclaims");
            break;
        }
        names = grown;
        n++;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *one[] = {names[i]};
        ns_disruption_request req = {.method = "expired", .reason = "Expired", .nodeclaims = one, .n_nodeclaims = 1,
                                     .forceful = true};
        rc = ns_engine_disrupt(e, &req, NULL);
        if (rc == NS_ERR_INVALID_ARGUMENT)
            rc = ns_engine_record(e, NS_DECISION_DISRUPTION_INFO, "expired", ns_error_message(), NULL, names[i], NULL,
                                  "expired nodeclaim not disrupted");
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

/* ---- Validation and execution of the pending command. */

static bool has_type(const ns_sched_claim *c, const char *name)
{
    for (size_t i = 0; i < c->n_options; i++)
        if (strcmp(c->options[i].type->name, name) == 0)
            return true;
    return false;
}

/* A replacement of the command from the fresh simulation's claim: its options narrowed to the replacement's instance
 * types (and to spot when it says so), with the requirements to match. */
static int build_replacement(const struct ds_replacement *cmd, const ns_sched_claim *fresh, ns_sched_claim *out)
{
    *out = *fresh;
    memset(&out->requirements, 0, sizeof(out->requirements));
    out->options = malloc((fresh->n_options ? fresh->n_options : 1) * sizeof(*out->options));
    if (!out->options)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory building a replacement");
    out->n_options = 0;
    for (size_t i = 0; i < fresh->n_options; i++) {
        const ns_sched_option *o = &fresh->options[i];
        bool wanted = false;
        for (size_t j = 0; j < cmd->n_types && !wanted; j++)
            wanted = strcmp(cmd->types[j], o->type->name) == 0;
        if (wanted && (!cmd->spot_only || strcmp(o->capacity_type, "spot") == 0))
            out->options[out->n_options++] = *o;
    }
    out->n_types = cmd->n_types;
    const char *const types[] = {"spot"};
    int rc = ns_requirements_copy(&fresh->requirements, &out->requirements);
    if (rc == 0 && cmd->spot_only)
        rc = ns_requirements_add_op(&out->requirements, NS_LABEL_CAPACITY_TYPE, NS_OP_IN, types, 1, 0);
    return rc;
}

static void free_replacement(ns_sched_claim *r)
{
    free(r->options);
    ns_requirements_free(&r->requirements);
}

/* Pairs each replacement of the command with a distinct claim of the fresh simulation that still offers all of its
 * instance types (Karpenter's instanceTypesAreSubset, per replacement): fresh_of[r] is an index into sim->needed.
 * False, naming the first replacement without one in why, when some has none. */
static bool match_replacements(const ds_command *cmd, const ds_sim *sim, size_t *fresh_of, char *why, size_t why_len)
{
    bool *taken = calloc(sim->n_needed ? sim->n_needed : 1, sizeof(*taken));
    if (!taken) {
        snprintf(why, why_len, "out of memory matching %zu replacement(s)", cmd->n_repl);
        return false;
    }
    bool ok = true;
    for (size_t r = 0; r < cmd->n_repl && ok; r++) {
        const char *missing = NULL;
        ok = false;
        for (size_t f = 0; f < sim->n_needed && !ok; f++) {
            if (taken[f])
                continue;
            const ns_sched_claim *fresh = &sim->plan.result.claims[sim->needed[f]];
            missing = NULL;
            for (size_t i = 0; i < cmd->repl[r].n_types && !missing; i++)
                if (!has_type(fresh, cmd->repl[r].types[i]))
                    missing = cmd->repl[r].types[i];
            if (!missing) {
                taken[f] = ok = true;
                fresh_of[r] = f;
            }
        }
        if (!ok)
            snprintf(why, why_len, "scheduling simulation produced new results (%s no longer fits)",
                     missing ? missing : "a replacement");
    }
    free(taken);
    return ok;
}

/* Re-checks the command now: candidates, budgets, and the simulation. On success *sim is the fresh simulation (the
 * caller frees it), valid[] the candidates still in the command (emptiness may drop some) and, for a consolidation
 * replacement, fresh_of[] the fresh claim of each replacement (match_replacements). why says what failed. */
static int validate(ns_engine *e, ds_command *cmd, ds_candidates *cands, ds_candidate **valid, size_t *n_valid,
                    ds_sim *sim, size_t *fresh_of, bool *ok, char *why, size_t why_len)
{
    int64_t *budgets = NULL;
    *ok = false;
    *n_valid = 0;
    int rc = ds_budgets(e, cmd->method, &budgets);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < cmd->n_claims; i++) {
        ds_candidate *c = ds_candidates_find(cands, cmd->claims[i]);
        const char *problem = NULL;
        if (!c || !ds_candidate_eligible(c, cmd->method))
            problem = "is no longer a candidate";
        else if (budgets[c->pool_index] <= 0)
            problem = "can no longer be disrupted without violating budgets";
        if (problem && cmd->method == DS_EMPTY)
            continue; /* Karpenter's emptiness validation keeps the candidates that are still fine */
        if (problem) {
            snprintf(why, why_len, "nodeclaim %s %s", cmd->claims[i], problem);
            free(budgets);
            return 0;
        }
        budgets[c->pool_index]--;
        valid[(*n_valid)++] = c;
    }
    free(budgets);
    if (*n_valid == 0) {
        snprintf(why, why_len, "%zu candidate(s) are no longer valid", cmd->n_claims);
        return 0;
    }
    bool needs_sim = cmd->method == DS_UNDERUTILIZED || (cmd->method == DS_DRIFTED && cmd->pod_count > 0);
    if (!needs_sim) {
        *ok = true;
        return 0;
    }
    if ((rc = ds_simulate(e, valid, *n_valid, cmd->method == DS_UNDERUTILIZED, sim)) < 0)
        return rc;
    if (!sim->all_scheduled) {
        snprintf(why, why_len, "%s", sim->reason);
        return 0;
    }
    if (cmd->method == DS_DRIFTED) {
        *ok = true;
        return 0;
    }
    /* Consolidation: the fresh simulation must ask for what the command planned (Karpenter's validateCommand). */
    if (sim->n_needed == 0 ? cmd->decision != NS_CONSOL_DELETE
                           : sim->n_needed != cmd->n_repl || cmd->decision != NS_CONSOL_REPLACE) {
        snprintf(why, why_len, "scheduling simulation produced new results (%zu new node(s) needed)", sim->n_needed);
        return 0;
    }
    *ok = cmd->decision != NS_CONSOL_REPLACE || match_replacements(cmd, sim, fresh_of, why, why_len);
    return 0;
}

/* Static drift's replacements: a claim of each candidate's pool template (Karpenter's NewNodeClaimTemplate), into
 * repl[i], from res[i] (the caller frees each). */
static int static_replacements(ns_engine *e, ds_candidate *const *valid, size_t n, ns_sched_result *res,
                               ns_sched_claim *repl)
{
    int rc = ns_engine_refresh_types(e);
    ns_sched_input in = {.cluster = e->cluster, .pool_types = e->types.pool_types,
                         .pool_errors = e->types.pool_errors, .min_values_policy = e->cfg.min_values_policy,
                         .preference_policy = e->cfg.preference_policy,
                         .default_spread = e->cfg.default_spread, .n_default_spread = e->cfg.n_default_spread};
    for (size_t i = 0; rc == NS_OK && i < n; i++)
        if ((rc = ns_sched_static_claims(&in, valid[i]->pool_index, 1, &res[i])) == NS_OK)
            repl[i] = res[i].claims[0];
    return rc;
}

static int execute(ns_engine *e, ds_command *cmd)
{
    ds_candidates cands = {0};
    ds_sim sim;
    memset(&sim, 0, sizeof(sim));
    ds_candidate **valid = calloc(cmd->n_claims ? cmd->n_claims : 1, sizeof(*valid));
    const char **names = calloc(cmd->n_claims ? cmd->n_claims : 1, sizeof(*names));
    size_t *fresh_of = calloc(cmd->n_repl ? cmd->n_repl : 1, sizeof(*fresh_of));
    ns_sched_claim *repl = NULL;
    ns_sched_result *static_res = NULL;
    size_t n_valid = 0, n_repl = 0;
    bool ok = false;
    char why[1200] = "";
    int rc;
    if (!valid || !names || !fresh_of) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory carrying out a disruption");
        goto done;
    }
    if ((rc = ds_candidates_build(e, &cands)) < 0 ||
        (rc = validate(e, cmd, &cands, valid, &n_valid, &sim, fresh_of, &ok, why, sizeof(why))) < 0)
        goto done;
    if (!ok) {
        rc = record_command(e, cmd, why);
        goto done;
    }
    for (size_t i = 0; i < n_valid; i++)
        names[i] = valid[i]->claim->meta.name;
    if (!(repl = calloc(sim.n_needed + n_valid, sizeof(*repl))) ||
        !(static_res = calloc(n_valid, sizeof(*static_res)))) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory carrying out a disruption");
        goto done;
    }
    if (cmd->method == DS_UNDERUTILIZED && cmd->decision == NS_CONSOL_REPLACE) {
        for (; n_repl < cmd->n_repl; n_repl++)
            if ((rc = build_replacement(&cmd->repl[n_repl], &sim.plan.result.claims[sim.needed[fresh_of[n_repl]]],
                                        &repl[n_repl])) < 0)
                goto done;
    } else if (cmd->method == DS_DRIFTED) {
        for (size_t i = 0; i < sim.n_needed; i++)
            repl[n_repl++] = sim.plan.result.claims[sim.needed[i]];
    } else if (cmd->method == DS_STATIC_DRIFTED) {
        if ((rc = static_replacements(e, valid, n_valid, static_res, repl)) == NS_ERR_INTERNAL)
            goto done;
        if (rc < 0) {
            rc = record_command(e, cmd, ns_error_message());
            goto done;
        }
        n_repl = n_valid;
    }
    ns_disruption_request req = {.method = ds_method_name(cmd->method),
                                 .reason = ds_method_reason(cmd->method),
                                 .nodeclaims = names,
                                 .n_nodeclaims = n_valid,
                                 .replacements = repl,
                                 .n_replacements = n_repl,
                                 .eventual = cmd->method == DS_DRIFTED || cmd->method == DS_STATIC_DRIFTED,
                                 .rollback = cmd->method == DS_UNDERUTILIZED};
    rc = ns_engine_disrupt(e, &req, NULL);
    if (rc == NS_ERR_INVALID_ARGUMENT)
        rc = record_command(e, cmd, ns_error_message());
done:
    /* a failed build_replacement leaves its own claim to free too */
    for (size_t i = 0; cmd->method == DS_UNDERUTILIZED && repl && i < n_repl + (rc < 0 && n_repl < cmd->n_repl); i++)
        free_replacement(&repl[i]);
    free(fresh_of);
    for (size_t i = 0; static_res && i < n_valid; i++)
        ns_sched_result_free(&static_res[i]);
    free(static_res);
    ds_sim_free(&sim);
    ds_candidates_free(&cands);
    free(repl);
    free(names);
    free(valid);
    return rc;
}

/* ---- Consolidation state: skip recomputing when nothing that matters changed (Karpenter's IsConsolidated). */

static uint64_t cluster_state(const ns_engine *e, const ds_candidates *cands)
{
    const ns_cluster *cl = e->cluster;
    uint64_t h = NS_HASH_SEED;
    for (size_t i = 0; i < cl->n_pods; i++)
        h = ns_hash_field(ns_hash_field(h, cl->pods[i]->meta.name), cl->pods[i]->node_name);
    for (size_t i = 0; i < cl->n_nodeclaims; i++)
        h = ns_hash_field(h, cl->nodeclaims[i]->meta.name);
    for (size_t i = 0; i < cl->n_nodepools; i++) {
        char hash[32];
        ns_nodepool_hash(cl->nodepools[i], hash, sizeof(hash));
        h = ns_hash_field(h, hash);
    }
    for (size_t i = 0; i < cands->n; i++)
        if (ds_candidate_eligible(&cands->items[i], DS_UNDERUTILIZED))
            h = ns_hash_field(h, cands->items[i].claim->meta.name);
    return h;
}

/* ---- The step. */

static const char *blocked_why(const ds_candidate *c)
{
    return c->blocked ? c->blocked_why : NULL;
}

static const char *blocked_pod(const ds_candidate *c)
{
    return c->blocked_pod;
}

static const char *unconsolidatable_why(const ds_candidate *c)
{
    return c->unconsolidatable;
}

static int decide(ns_engine *e, ns_disruption *d)
{
    ds_candidates cands = {0};
    int64_t *budgets = NULL;
    int rc = ds_candidates_build(e, &cands);
    if (rc == 0)
        rc = ds_report_once(e, &d->blocked, NS_DECISION_DISRUPTION_BLOCKED, &cands, blocked_why, blocked_pod);
    if (rc < 0) {
        ds_candidates_free(&cands);
        return rc;
    }
    static const ds_method methods[] = {DS_EMPTY, DS_STATIC_DRIFTED, DS_DRIFTED, DS_UNDERUTILIZED};
    bool constrained = false;
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]) && rc == 0 && !d->cmd.pending; i++) {
        int64_t now = ns_clock_now_ms();
        uint64_t state = 0;
        if (methods[i] == DS_UNDERUTILIZED) {
            state = cluster_state(e, &cands);
            if (d->consolidated && state == d->consolidated_state && now - d->consolidated_ms < RECONSIDER_MS)
                break; /* nothing changed: the reasons recorded at the last pass still hold */
            ds_mark_unconsolidatable(e, &cands);
        }
        if ((rc = ds_budgets(e, methods[i], &budgets)) < 0)
            break;
        if (methods[i] == DS_EMPTY)
            rc = ds_compute_emptiness(e, &cands, budgets, &d->cmd);
        else if (methods[i] == DS_DRIFTED)
            rc = ds_compute_drift(e, &cands, budgets, &d->cmd);
        else if (methods[i] == DS_STATIC_DRIFTED)
            rc = ds_compute_static_drift(e, &cands, budgets, &d->cmd);
        else
            rc = ds_compute_consolidation(e, &d->cfg, &cands, budgets, &d->cmd, &constrained);
        free(budgets);
        budgets = NULL;
        if (methods[i] == DS_UNDERUTILIZED && rc == 0)
            rc = ds_report_once(e, &d->unconsolidatable, NS_DECISION_UNCONSOLIDATABLE, &cands, unconsolidatable_why,
                                NULL);
        /* A pass a budget held back is not done: it is tried again at the next step, so it goes ahead as soon as the
         * budget allows (a node leaving, a schedule's window, a NodePool change, none of which the state hash sees). */
        if (methods[i] == DS_UNDERUTILIZED && rc == 0 && !d->cmd.pending && !constrained) {
            d->consolidated = true;
            d->consolidated_state = state;
            d->consolidated_ms = now;
        }
    }
    ds_candidates_free(&cands);
    if (rc < 0 || !d->cmd.pending)
        return rc;
    d->cmd.decided_ms = ns_clock_now_ms();
    d->consolidated = false;
    return record_command(e, &d->cmd, "awaiting validation");
}

static int step(ns_engine *e, void *vctx)
{
    ns_disruption *d = vctx;
    int rc;
    if ((rc = ds_pod_events_update(e, &d->pod_events)) < 0 || (rc = expire(e)) < 0 || (rc = ds_drift_update(e)) < 0)
        return rc;
    if (!d->cmd.pending && (rc = decide(e, d)) < 0)
        return rc;
    /* Karpenter waits out the window before validating; a decision made at this step is due 15 s later. */
    if (!d->cmd.pending || ns_clock_now_ms() - d->cmd.decided_ms < e->cfg.stabilization_ms)
        return 0;
    rc = execute(e, &d->cmd);
    ds_command_clear(&d->cmd);
    return rc;
}

/* Whether reconsidering consolidation could find anything: not without a candidate eligible for it (which only a
 * change in the cluster or a consolidateAfter window running out, both declared, can bring). */
static int may_consolidate(ns_engine *e, bool *out)
{
    ds_candidates cands = {0};
    int rc = ds_candidates_build(e, &cands);
    *out = false;
    for (size_t i = 0; rc == 0 && i < cands.n && !*out; i++)
        *out = ds_candidate_eligible(&cands.items[i], DS_UNDERUTILIZED);
    ds_candidates_free(&cands);
    return rc;
}

/* After each step, what the controller waits for: the pending command's validation once the stabilization window has
 * passed, a consolidated cluster's reconsideration, and what the cluster holds (ds_declare_due). */
static int step_and_declare(ns_engine *e, void *vctx)
{
    ns_disruption *d = vctx;
    bool reconsider = false;
    int rc = step(e, d);
    if (rc == 0 && d->consolidated && d->consolidated_ms + RECONSIDER_MS > ns_clock_now_ms())
        rc = may_consolidate(e, &reconsider);
    if (rc < 0)
        return rc;
    if (d->cmd.pending)
        ns_engine_due(e, d->cmd.decided_ms + e->cfg.stabilization_ms);
    if (reconsider)
        ns_engine_due(e, d->consolidated_ms + RECONSIDER_MS);
    ds_declare_due(e);
    return rc;
}

int ns_disruption_register(ns_engine *e, const ns_disruption_config *cfg)
{
    ns_disruption *d = calloc(1, sizeof(*d));
    if (!d)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating the disruption controller");
    if (cfg)
        d->cfg = *cfg;
    int rc = ns_engine_register_controller(e, "disruption", step_and_declare, d, disruption_free);
    if (rc < 0)
        disruption_free(d); /* the engine takes the state only when registration succeeds */
    return rc;
}
