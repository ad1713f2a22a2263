/*
 * Karpenter's SCHEDULER_CONFIG / --scheduler-config (kubernetes-sigs/karpenter SchedulerConfiguration, commit
 * 65fc69436): a YAML or JSON document, given as the setting's value itself, that mirrors the parts of the cluster's
 * kube-scheduler configuration Karpenter's simulation must follow; today only
 *
 *   podTopologySpread:
 *     defaultConstraints: [ {maxSkew, topologyKey, whenUnsatisfiable, minDomains, nodeAffinityPolicy,
 *                            nodeTaintsPolicy}, ... ]
 *
 * Decoded strictly (unknown fields are errors) and validated as kube-scheduler's ValidatePodTopologySpreadArgs does:
 * maxSkew above 0, a topologyKey that is a qualified name, whenUnsatisfiable DoNotSchedule or ScheduleAnyway, no
 * labelSelector (kube-scheduler deduces one per pod), no matchLabelKeys (inert on a default), and no two constraints
 * with the same topologyKey and whenUnsatisfiable. How the scheduler applies them: sched/sched_default_spread.c.
 *
 * Memory: the config owns its constraints; ns_scheduler_config_free frees them (accepts NULL members).
 */
#ifndef NS_SCHEDULER_CONFIG_H
#define NS_SCHEDULER_CONFIG_H

#include <stddef.h>

#include "model/pod.h"

typedef struct ns_scheduler_config {
    ns_topology_spread *default_spread; /* podTopologySpread.defaultConstraints, no selector */
    size_t n_default_spread;
} ns_scheduler_config;

/* Decodes text (an empty text or document: no defaults) into *out, which must be zeroed. source names the text in
 * messages ("SCHEDULER_CONFIG"). 0, or NS_ERR_INVALID_CONFIG "SOURCE:LINE: scheduler config: FIELD.PATH: why"
 * (out is then freed and zeroed), or NS_ERR_INTERNAL. */
int ns_scheduler_config_parse(const char *source, const char *text, ns_scheduler_config *out);
void ns_scheduler_config_free(ns_scheduler_config *cfg); /* members; accepts NULL */

#endif
