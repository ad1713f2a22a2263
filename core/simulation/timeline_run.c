/* The timeline loop and the report document. */
#include <stdio.h>
#include <string.h>

#include "clock/ns_clock.h"
#include "simulation/engine_sim.h"
#include "simulation/invariants.h"
#include "simulation/timeline_apply.h"
#include "simulation/timeline_run.h"
#include "context/ns_ctx.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/duration.h"

/* One run: the engine, the checker watching it, and what the checks found since the last timeline step. */
typedef struct tl_runner {
    ns_engine *e;
    const ns_timeline *t;
    ns_tl_sources *sources;
    ns_invariants *inv;
    cJSON *violations; /* strings, "at 2m31s: ..." */
    size_t checks;     /* engine steps checked since the last timeline step */
    int64_t progress_every; /* a progress line every this much simulated time; 0 on short runs */
    int64_t progress_next;  /* simulated time (from the start) of the next progress line */
} tl_runner;

void ns_timeline_engine_config(const ns_timeline *t, ns_engine_config *cfg)
{
    const ns_tl_engine_settings *s = &t->engine;
    struct {
        int64_t value;
        int64_t *into;
    } d[] = {
        {s->tick_ms, &cfg->tick_ms},
        {s->registration_delay_ms, &cfg->registration_delay_ms},
        {s->initialization_delay_ms, &cfg->initialization_delay_ms},
        {s->registration_ttl_ms, &cfg->registration_ttl_ms},
        {s->batch_idle_ms, &cfg->batch_idle_ms},
        {s->batch_max_ms, &cfg->batch_max_ms},
        {s->stabilization_ms, &cfg->stabilization_ms},
        {s->orphan_gc_grace_ms, &cfg->orphan_gc_grace_ms},
        {s->unavailable_offering_ttl_ms, &cfg->unavailable_offering_ttl_ms},
        {s->volume_detach_delay_ms, &cfg->volume_detach_delay_ms},
    };
    for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
        if (d[i].value >= 0)
            *d[i].into = d[i].value;
    if (s->act_on_rebalance)
        cfg->act_on_rebalance = s->act_on_rebalance > 0;
    if (s->node_repair)
        cfg->node_repair = s->node_repair > 0;
    if (s->min_values_policy >= 0)
        cfg->min_values_policy = (ns_sched_min_values_policy)s->min_values_policy;
    if (s->static_capacity)
        cfg->static_capacity = s->static_capacity > 0;
    if (s->capacity_buffer)
        cfg->capacity_buffer = s->capacity_buffer > 0;
}

static double seconds(int64_t ms)
{
    return (double)ms / 1000.0;
}

/* The report's skeleton: what the timeline is, before any step ran. */
static cJSON *new_doc(const ns_timeline *t)
{
    char start[32];
    ns_clock_format_rfc3339(t->start_ms, start, sizeof(start));
    cJSON *doc = cJSON_CreateObject();
    if (!doc || !cJSON_AddStringToObject(doc, "timeline", t->path) ||
        !cJSON_AddStringToObject(doc, "description", t->description ? t->description : "") ||
        !cJSON_AddStringToObject(doc, "start_time", start) || !cJSON_AddNumberToObject(doc, "end_s", 0) ||
        !cJSON_AddArrayToObject(doc, "steps")) {
        cJSON_Delete(doc);
        NS_FAIL(NS_ERR_INTERNAL, "out of memory for the report document");
        return NULL;
    }
    return doc;
}

static int add_step(cJSON *doc, const ns_tl_step *s, cJSON *state)
{
    char desc[1024];
    ns_tl_step_describe(s, desc, sizeof(desc));
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddNumberToObject(o, "index", (double)(s->index + 1)) ||
        !cJSON_AddStringToObject(o, "name", s->name ? s->name : "") ||
        !cJSON_AddNumberToObject(o, "line", s->line) ||
        !cJSON_AddStringToObject(o, "action", ns_tl_action_name(s->action)) ||
        !cJSON_AddStringToObject(o, "description", desc) || !cJSON_AddNumberToObject(o, "time_s", seconds(s->at_ms)) ||
        !cJSON_AddNumberToObject(o, "end_s", seconds(s->end_ms)) || !cJSON_AddItemToObject(o, "state", state)) {
        cJSON_Delete(o);
        cJSON_Delete(state);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording timeline step %zu", s->index + 1);
    }
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(doc, "steps"), o);
    cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(doc, "end_s"), seconds(s->end_ms));
    return 0;
}

static bool same_sample(const ns_engine_sample *a, const ns_engine_sample *b)
{
    return a->nodes == b->nodes && a->nodes_ready == b->nodes_ready && a->nodeclaims == b->nodeclaims &&
           a->pods_bound == b->pods_bound && a->pods_pending == b->pods_pending &&
           a->cost_per_hour == b->cost_per_hour && a->headroom_placed == b->headroom_placed &&
           a->headroom_ready == b->headroom_ready && a->headroom_cost_per_hour == b->headroom_cost_per_hour;
}

static bool add_sample(cJSON *series, const ns_engine_sample *s, int64_t start_ms)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddNumberToObject(o, "time_s", seconds(s->time_ms - start_ms)) ||
        !cJSON_AddNumberToObject(o, "nodes", (double)s->nodes) ||
        !cJSON_AddNumberToObject(o, "nodes_ready", (double)s->nodes_ready) ||
        !cJSON_AddNumberToObject(o, "nodeclaims", (double)s->nodeclaims) ||
        !cJSON_AddNumberToObject(o, "pods_bound", (double)s->pods_bound) ||
        !cJSON_AddNumberToObject(o, "pods_pending", (double)s->pods_pending) ||
        !cJSON_AddNumberToObject(o, "cost_per_hour", s->cost_per_hour) ||
        (s->headroom_wanted && (!cJSON_AddNumberToObject(o, "headroom_ready", (double)s->headroom_ready) ||
                                !cJSON_AddNumberToObject(o, "headroom_cost_per_hour", s->headroom_cost_per_hour)))) {
        cJSON_Delete(o);
        return false;
    }
    return cJSON_AddItemToArray(series, o);
}

/* The engine's per-step history, keeping only the samples where something changed (and the last one): both curves
 * are constant between changes, so the step chart drawn from these is exact. */
static int add_series(cJSON *doc, const ns_engine *e, int64_t start_ms)
{
    size_t n = 0;
    const ns_engine_sample *h = ns_engine_history(e, &n);
    cJSON *series = cJSON_AddArrayToObject(doc, "cost_over_time");
    bool ok = series != NULL;
    for (size_t i = 0; ok && i < n; i++)
        if (i == 0 || i + 1 == n || !same_sample(&h[i], &h[i - 1]))
            ok = add_sample(series, &h[i], start_ms);
    return ok ? 0 : NS_FAIL(NS_ERR_INTERNAL, "out of memory recording the cost over time");
}

static int add_decisions(cJSON *doc, const ns_engine *e, int64_t start_ms)
{
    size_t n = 0;
    const ns_decision *d = ns_engine_decisions(e, &n);
    cJSON *list = cJSON_AddArrayToObject(doc, "decisions");
    bool ok = list != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        ok = o && cJSON_AddItemToArray(list, o) && cJSON_AddNumberToObject(o, "time_s", seconds(d[i].time_ms - start_ms)) &&
             cJSON_AddStringToObject(o, "message", d[i].message) &&
             cJSON_AddStringToObject(o, "method", d[i].method ? d[i].method : "") &&
             cJSON_AddStringToObject(o, "reason", d[i].reason ? d[i].reason : "") &&
             cJSON_AddStringToObject(o, "nodes", d[i].nodes ? d[i].nodes : "") &&
             cJSON_AddStringToObject(o, "nodeclaims", d[i].nodeclaims ? d[i].nodeclaims : "") &&
             cJSON_AddStringToObject(o, "pods", d[i].pods ? d[i].pods : "") &&
             cJSON_AddStringToObject(o, "detail", d[i].detail ? d[i].detail : "");
    }
    return ok ? 0 : NS_FAIL(NS_ERR_INTERNAL, "out of memory recording the decision log");
}

/* The step and its file line as numbers, as counts are in every log line. */
static void log_step(const ns_timeline *t, const ns_tl_step *s)
{
    char desc[1024], at[32];
    ns_tl_step_describe(s, desc, sizeof(desc));
    ns_clock_format_rfc3339(t->start_ms + s->at_ms, at, sizeof(at));
    cJSON *f = cJSON_CreateObject();
    if (f && (!cJSON_AddNumberToObject(f, "step", (double)(s->index + 1)) ||
              !cJSON_AddNumberToObject(f, "line", s->line) || !cJSON_AddStringToObject(f, "at", at) ||
              !cJSON_AddStringToObject(f, "action", desc) || (s->name && !cJSON_AddStringToObject(f, "name", s->name)))) {
        cJSON_Delete(f);
        f = NULL;
    }
    ns_log_json(NS_LOG_INFO, "timeline", "applying timeline step", f);
}

/* Checks the invariants after an engine step; each violation becomes one line of the current timeline step. */
static int check(tl_runner *r)
{
    char report[8192], when[32];
    int found = ns_invariants_check(r->inv, report, sizeof(report));
    if (found < 0)
        return ns_error_prefix("checking the invariants: ");
    r->checks++;
    ns_duration_format(ns_clock_now_ms() - r->t->start_ms, when, sizeof(when));
    for (char *line = found ? report : NULL, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char text[8300];
        snprintf(text, sizeof(text), "at %s: %s", when, line);
        ns_log(NS_LOG_ERROR, "timeline", "invariant violated", "time", when, "violation", line, NULL);
        if (!cJSON_AddItemToArray(r->violations, cJSON_CreateString(text)))
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording an invariant violation");
    }
    return 0;
}

/* One engine step and its checks; on long runs, a progress line every tenth of the simulated time. */
static int step_checked(tl_runner *r)
{
    int rc = ns_engine_step(r->e);
    if (rc == 0)
        rc = check(r);
    int64_t elapsed = ns_clock_now_ms() - r->t->start_ms;
    if (r->progress_every && elapsed >= r->progress_next) {
        char at[32], end[32], done[24];
        snprintf(done, sizeof(done), "%d%%", (int)(elapsed / r->progress_every * 10));
        ns_log(NS_LOG_INFO, "timeline", "simulated time progress", "simulated",
               ns_duration_format(elapsed, at, sizeof(at)), "end", ns_duration_format(r->t->end_ms, end, sizeof(end)),
               "done", done, NULL);
        r->progress_next = (elapsed / r->progress_every + 1) * r->progress_every;
    }
    return rc;
}

/* ns_engine_run_until, checking after every engine step: the engine steps at the next tick, or later when nothing
 * is due sooner (ns_engine_next_step_ms); the checker declares what it waits for too. */
static int run_until(tl_runner *r, int64_t until_ms)
{
    int rc = step_checked(r);
    while (rc == 0 && ns_clock_now_ms() < until_ms && (rc = ns_engine_check_stop(r->e)) == 0) {
        ns_clock_advance(ns_engine_next_step_ms(r->e, until_ms) - ns_clock_now_ms());
        rc = step_checked(r);
    }
    return rc;
}

/* Stepping every tick costs an engine step per tick: a timeline of 876000h, or of an hour in ticks of 1ms, would run
 * for days without a word. Refuse what cannot finish in reasonable time that way; an event-driven run steps only when
 * something is due, but a busy cluster can still need a step per tick, so its bound is higher, not absent. Warn about
 * long runs and report progress. */
static int check_length(tl_runner *r)
{
    const ns_timeline *t = r->t;
    int64_t tick = ns_engine_get_config(r->e)->tick_ms;
    int64_t steps = t->end_ms / (tick > 0 ? tick : 1) + (int64_t)t->n_steps;
    char len[32], tk[32], n[24];
    ns_duration_format(t->end_ms, len, sizeof(len));
    ns_duration_format(tick, tk, sizeof(tk));
    if (steps > NS_TIMELINE_MAX_ENGINE_STEPS && ns_engine_get_config(r->e)->every_tick)
        return NS_FAIL(NS_ERR_INVALID_CONFIG,
                       "%s: the timeline lasts %s in ticks of %s, %lld engine steps; at most %lld are allowed when "
                       "stepping every tick (make engine.tick longer or the timeline shorter)",
                       t->path, len, tk, (long long)steps, (long long)NS_TIMELINE_MAX_ENGINE_STEPS);
    if (steps > NS_TIMELINE_MAX_TICKS)
        return NS_FAIL(NS_ERR_INVALID_CONFIG,
                       "%s: the timeline lasts %s in ticks of %s, %lld ticks; at most %lld are allowed "
                       "(make engine.tick longer or the timeline shorter)",
                       t->path, len, tk, (long long)steps, (long long)NS_TIMELINE_MAX_TICKS);
    if (steps > NS_TIMELINE_LONG_RUN_STEPS) {
        snprintf(n, sizeof(n), "%lld", (long long)steps);
        ns_log(NS_LOG_WARN, "timeline", "long simulated run: progress is logged every tenth", "timeline", t->path,
               "duration", len, "tick", tk, "ticks", n, NULL);
        r->progress_every = t->end_ms / 10 > 0 ? t->end_ms / 10 : 1;
        r->progress_next = r->progress_every;
    }
    return 0;
}

/* The state after a step, with the invariants checked since the previous one (and once more now, so a step that
 * did not run the engine is checked too). */
static cJSON *step_state(tl_runner *r)
{
    cJSON *state = NULL, *inv = NULL;
    if (check(r) < 0 || !(state = ns_timeline_state(r->e, r->t->start_ms)))
        return NULL;
    if (!(inv = cJSON_AddObjectToObject(state, "invariants")) ||
        !cJSON_AddBoolToObject(inv, "ok", cJSON_GetArraySize(r->violations) == 0) ||
        !cJSON_AddNumberToObject(inv, "checks", (double)r->checks)) {
        cJSON_Delete(state);
        NS_FAIL(NS_ERR_INTERNAL, "out of memory recording the invariants");
        return NULL;
    }
    cJSON_AddItemToObject(inv, "violations", r->violations);
    r->violations = cJSON_CreateArray();
    r->checks = 0;
    if (!r->violations) {
        cJSON_Delete(state);
        NS_FAIL(NS_ERR_INTERNAL, "out of memory recording the invariants");
        return NULL;
    }
    return state;
}

static int run_steps(tl_runner *r, cJSON *doc)
{
    const ns_timeline *t = r->t;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < t->n_steps; i++) {
        const ns_tl_step *s = &t->steps[i];
        /* The engine has already stepped at the current time unless something changed since; stepping again at
         * the same instant would only repeat it. */
        if (ns_clock_now_ms() < t->start_ms + s->at_ms && (rc = run_until(r, t->start_ms + s->at_ms)) < 0) {
            ns_error_prefix("%s:%d: timeline step %zu: running the engine until the step: ", t->path, s->line,
                            s->index + 1);
            break;
        }
        log_step(t, s);
        if ((rc = tl_apply(r->e, t, s, r->sources)) < 0)
            break;
        ns_invariants_outside_change(r->inv);
        if (s->action == NS_TL_ADVANCE && (rc = run_until(r, t->start_ms + s->end_ms)) < 0) {
            ns_error_prefix("%s:%d: timeline step %zu: advance: ", t->path, s->action_line, s->index + 1);
            break;
        }
        cJSON *state = step_state(r);
        rc = state ? add_step(doc, s, state) : NS_ERR_INTERNAL;
    }
    return rc;
}

static int timeline_run(ns_engine *e, const ns_timeline *t, ns_tl_sources *sources, cJSON **doc_out)
{
    tl_runner r = {.e = e, .t = t, .sources = sources, .violations = cJSON_CreateArray()};
    cJSON *doc = new_doc(t);
    *doc_out = doc;
    int rc = doc && r.violations ? check_length(&r) : NS_ERR_INTERNAL;
    if (rc == 0)
        rc = ns_engine_back_manifest_claims(e);
    if (rc == 0)
        rc = ns_invariants_attach(e, &r.inv);
    if (rc == 0)
        rc = run_steps(&r, doc);
    ns_invariants_free(r.inv);
    cJSON_Delete(r.violations);
    if (!doc)
        return rc;
    int rc2 = add_series(doc, e, t->start_ms);
    if (rc2 == 0)
        rc2 = add_decisions(doc, e, t->start_ms);
    if (rc2 == 0 && !cJSON_AddNumberToObject(doc, "engine_steps", (double)ns_engine_steps(e)))
        rc2 = NS_FAIL(NS_ERR_INTERNAL, "out of memory recording the engine steps");
    return rc < 0 ? rc : rc2;
}

size_t ns_timeline_violations(const cJSON *doc)
{
    size_t n = 0;
    const cJSON *step;
    cJSON_ArrayForEach(step, cJSON_GetObjectItemCaseSensitive(doc, "steps"))
    {
        const cJSON *inv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(step, "state"), "invariants");
        n += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(inv, "violations"));
    }
    return n;
}

int ns_timeline_run(ns_engine *e, const ns_timeline *t, ns_tl_sources *sources, cJSON **doc_out)
{
    ns_ctx *previous = ns_ctx_enter(ns_plugin_ctx(ns_engine_plugin(e)));
    int rc = timeline_run(e, t, sources, doc_out);
    ns_ctx_leave(previous);
    return rc;
}
