/*
 * Building clusters and instance types in code for scheduler tests and the benchmark. Every helper aborts the test
 * program on allocation failure or malformed shorthand: fixtures are code, not input.
 *
 * Shorthands: labels "k=v,k2=v2"; requirements "key Op v1|v2;key2 Exists" (Op is In, NotIn, Exists, DoesNotExist,
 * Gt, Lt); offerings "zone:capacity-type:price,...".
 */
#ifndef SCHED_FIXTURE_H
#define SCHED_FIXTURE_H

#include <stdint.h>

#include "cloud/instance_types.h"
#include "model/cluster.h"
#include "sched/sched.h"

#define FX_GI (INT64_C(1) << 30)
#define FX_MI (INT64_C(1) << 20)

/* Appends a type with allocatable == capacity (no reservations). */
ns_itype *fx_type(ns_itype_set *set, const char *name, int64_t cpu_milli, int64_t mem_bytes, int64_t pods,
                  const char *labels, const char *offerings);
void fx_type_extended(ns_itype *t, const char *name, int64_t value); /* adds to capacity and allocatable */

ns_pod *fx_pod(ns_cluster *c, const char *name, int64_t cpu_milli, int64_t mem_bytes, const char *labels);
void fx_pod_extended(ns_pod *p, const char *name, int64_t value);
void fx_pod_selector(ns_pod *p, const char *labels);       /* nodeSelector */
void fx_pod_required(ns_pod *p, const char *reqs);         /* appends one required node affinity term */
void fx_pod_preferred(ns_pod *p, int32_t weight, const char *reqs);
void fx_pod_tolerate(ns_pod *p, const char *key, const char *effect); /* operator Exists */
void fx_pod_spread(ns_pod *p, const char *key, int32_t max_skew, bool schedule_anyway, const char *selector);
void fx_pod_affinity(ns_pod *p, const char *key, const char *selector, bool anti, int32_t preferred_weight);
void fx_pod_host_port(ns_pod *p, int32_t port);

ns_nodepool *fx_pool(ns_cluster *c, const char *name, int32_t weight, const char *reqs);
void fx_pool_taint(ns_nodepool *np, const char *key, const char *value, const char *effect);
ns_node *fx_node(ns_cluster *c, const char *name, int64_t cpu_milli, int64_t mem_bytes, int64_t pods,
                 const char *labels);
/* Adds a DaemonSet in kube-system; returns its template pod, to give it selectors, affinity or host ports. */
ns_pod *fx_daemonset(ns_cluster *c, const char *name, int64_t cpu_milli, int64_t mem_bytes);
/* A NodeClaim of the pool with status capacity (cpu, 16Gi, 110 pods) and provider ID; node_name may be NULL. */
ns_nodeclaim *fx_nodeclaim(ns_cluster *c, const char *name, const char *pool, int64_t cpu_milli,
                           const char *provider_id, const char *node_name);

/* Runs the scheduler with one set for every pool (sets == NULL: `set` for all). Aborts on an error. */
void fx_run(const ns_cluster *c, const ns_itype_set *set, const ns_itype_set *const *sets, ns_sched_result *r);
/* As fx_run with the given packing (fx_run: NS_SCHED_PACKING_KARPENTER). */
void fx_run_packing(const ns_cluster *c, const ns_itype_set *set, const ns_itype_set *const *sets,
                    ns_sched_packing packing, ns_sched_result *r);

long fx_pod_index(const ns_cluster *c, const char *name);
/* The claim a pod was placed on, or NULL. */
const ns_sched_claim *fx_claim_of(const ns_cluster *c, const ns_sched_result *r, const char *pod);
/* The unschedulable reason of a pod, or NULL. */
const char *fx_reason(const ns_cluster *c, const ns_sched_result *r, const char *pod);
/* The single zone a claim's requirements allow, or NULL. */
const char *fx_claim_zone(const ns_sched_claim *claim);

#endif
