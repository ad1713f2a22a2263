/*
 * Internal to the timeline runner: applying one step's action at the engine's current time, through the engine's
 * timeline hooks. `advance` is the runner's (it steps the engine); every other action changes the cluster or the
 * simulated cloud without stepping. Errors are prefixed with the step's file, line and number.
 */
#ifndef NS_TIMELINE_APPLY_H
#define NS_TIMELINE_APPLY_H

#include "engine/engine.h"
#include "simulation/timeline.h"
#include "simulation/timeline_sources.h"

int tl_apply(ns_engine *e, const ns_timeline *t, const ns_tl_step *s, ns_tl_sources *sources);

#endif
