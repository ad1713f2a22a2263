/*
 * Running a timeline (simulation/timeline.h) over the lifecycle engine: the engine runs until each step's time, the
 * step's action is applied through the engine's timeline hooks, and the state after the step is recorded. The result
 * is the report document (docs/timeline.md, "The JSON document") that --output json prints and core/report renders.
 *
 * The caller builds the engine over the cluster loaded from the manifests, with the simulated clock set to the
 * timeline's start (ns_clock_use_simulated(t->start_ms)) and the engine configured by ns_timeline_engine_config.
 */
#ifndef NS_TIMELINE_RUN_H
#define NS_TIMELINE_RUN_H

#include <cjson/cJSON.h>

#include "engine/engine.h"
#include "simulation/timeline.h"
#include "simulation/timeline_sources.h"

/* Applies the timeline's `engine` settings over cfg (which holds the defaults or the caller's choices). */
void ns_timeline_engine_config(const ns_timeline *t, ns_engine_config *cfg);

/* Stepping every tick, a timeline needs an engine step per tick of its length, about a millisecond each with the
 * invariant checks: more than MAX ticks is then refused before anything runs (876000h, or an hour in ticks of 1ms).
 * More than LONG_RUN ticks is run with a warning and a progress line every tenth of the simulated time. */
#define NS_TIMELINE_MAX_ENGINE_STEPS INT64_C(1000000)
/* Event-driven, the bound is on ticks: about three years at 1 s (876000h, or a week in ticks of 1ms, is refused). */
#define NS_TIMELINE_MAX_TICKS INT64_C(100000000)
#define NS_TIMELINE_LONG_RUN_STEPS INT64_C(50000)

/* Runs every step. The engine is stepped at ticks of cfg.tick_ms, every tick or only those at which something is due
 * (ns_engine_next_step_ms; cfg.every_tick forces every tick), and after every engine step the invariant checker
 * (simulation/invariants.h, attached for the run) checks the state; each timeline step's state carries what the checks
 * since the previous timeline step found. On success *doc is the report document (the caller frees it with
 * cJSON_Delete). On failure the error names the step ("FILE:LINE: timeline step N: ...") and *doc still holds the
 * steps completed so far, so a report can show how far the simulation got (nothing when the length is refused). `sources` holds the manifests the
 * cluster was loaded from; add and patch steps update it. A violated invariant is reported, not an error. */
int ns_timeline_run(ns_engine *e, const ns_timeline *t, ns_tl_sources *sources, cJSON **doc);
/* The invariant violations the report document's steps record (`nodesmith simulate` exits non-zero when any). */
size_t ns_timeline_violations(const cJSON *doc);

/* The state of the engine's cluster now, as the report document's "state" objects: time, nodes (instance type,
 * zone, capacity type, price, pods, labels), node claims and their phase, pods placed and pending, and cost per
 * hour. NULL with NS_ERR_INTERNAL recorded on allocation failure. */
cJSON *ns_timeline_state(ns_engine *e, int64_t start_ms);

#endif
