/*
 * Shared by the engine tests: a cluster loaded from inline YAML, the sim provider loaded through the core's loader
 * (test hooks on), an engine over both with the invariant checker attached, on the simulated clock. Every helper
 * asserts with Check; stepping helpers check the invariants after each step.
 */
#ifndef ENGINE_FIXTURE_H
#define ENGINE_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/engine_internal.h"
#include "simulation/engine_sim.h"
#include "simulation/invariants.h"

#define EFX_T0 INT64_C(1790000000000) /* simulated start, unix ms */
#define EFX_S(x) ((int64_t)(x) * 1000)

/* A SimNodeClass "default" and an on-demand NodePool "default" (labels team=web, taint dedicated=web:NoSchedule
 * tolerated by EFX_TOLERATE, a startup taint example.com/agent-not-ready:NoSchedule) in EFX_BASE. */
extern const char EFX_BASE[];
/* The toleration pods need for the base pool's taint, as a YAML list item under spec.tolerations. */
#define EFX_TOLERATE "      tolerations: [{key: dedicated, operator: Equal, value: web, effect: NoSchedule}]\n"
/* The same for a bare Pod's spec. */
#define EFX_POD_TOLERATE "  tolerations: [{key: dedicated, operator: Equal, value: web, effect: NoSchedule}]\n"

typedef struct efx {
    ns_cluster *cluster;
    ns_plugin *plugin;
    ns_engine *engine;
    ns_invariants *inv;
    ns_engine_config cfg;
} efx;

/* Builds everything from YAML (the base plus `extra`, either may be NULL); cfg NULL: defaults. */
efx *efx_new(const char *base, const char *extra, const ns_engine_config *cfg);
/* The same with the sim's catalog read from the file at path catalog (NULL: the built-in catalog). */
efx *efx_new_catalog(const char *base, const char *extra, const ns_engine_config *cfg, const char *catalog);
/* Frees the engine and checker only (cluster and plugin stay), then builds a new engine over them: a restart. */
void efx_restart(efx *x);
void efx_free(efx *x);

void efx_step(efx *x);                 /* one step, then the invariants */
void efx_run_for(efx *x, int64_t ms);  /* a step every tick for ms, invariants after each step */
/* Steps until pred holds (checked after each step) or max_ms passes; returns whether it held. */
bool efx_run_until(efx *x, bool (*pred)(efx *), int64_t max_ms);
void efx_load(efx *x, const char *yaml); /* adds objects to the running cluster (new pods pending now) */

int64_t efx_now(void);
/* Decisions of a kind (where needle, if not NULL, occurs in nodes, nodeclaims, pods, method, reason or detail). */
size_t efx_count(efx *x, ns_decision_kind kind, const char *needle);
/* The first / last such decision, or NULL. */
const ns_decision *efx_first(efx *x, ns_decision_kind kind, const char *needle);
const ns_decision *efx_last(efx *x, ns_decision_kind kind, const char *needle);

size_t efx_pending(efx *x);   /* pods provisioning considers */
size_t efx_bound(efx *x);     /* non-daemon pods with a node */
size_t efx_instances(efx *x); /* instances the provider lists */
size_t efx_initialized(efx *x);
/* The n-th NodeClaim (cluster order) / its node; asserts it exists. */
ns_nodeclaim *efx_claim(efx *x, size_t i);
ns_node *efx_node_of(efx *x, const ns_nodeclaim *c);
/* Number of non-daemon pods bound to the node named. */
size_t efx_pods_on(efx *x, const char *node);

#endif
