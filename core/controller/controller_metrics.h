/*
 * What the controller counts into Karpenter's metrics (metrics.h) after each tick: counters from the engine's new
 * decisions (nodeclaims created and terminated, nodes created and terminated, eviction requests by answer code), and
 * gauges from the cluster (nodes in cluster state, cache synced, each NodePool's usage and limits, and the disruptions
 * each NodePool's budgets allow for each reason, as the disruption controller evaluates them), plus build info.
 */
#ifndef NS_CONTROLLER_METRICS_H
#define NS_CONTROLLER_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "controller/metrics.h"
#include "engine/engine.h"

typedef struct ns_controller_metrics ns_controller_metrics;

/* m is borrowed. NULL with NS_ERR_INTERNAL recorded. */
ns_controller_metrics *ns_controller_metrics_new(ns_metrics *m);
void ns_controller_metrics_free(ns_controller_metrics *cm); /* accepts NULL */

/* Counts the engine's decisions since the last call (e may be NULL before the engine exists) and sets the gauges
 * from c. 0 or NS_ERR_INTERNAL. */
int ns_controller_metrics_update(ns_controller_metrics *cm, ns_engine *e, const ns_cluster *c, bool synced);

#endif
