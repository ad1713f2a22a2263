/*
 * Which nodes and claims a topology spread constraint counts, from its nodeAffinityPolicy and nodeTaintsPolicy
 * (Kubernetes' PodTopologySpread inclusion policies, as Karpenter's topology groups apply them):
 *   - nodeAffinityPolicy Honor (the default): only nodes and claims the declaring pod's nodeSelector and required
 *     node affinity allow (any one of its terms) are domains, and only pods on them are counted. Ignore: all are.
 *   - nodeTaintsPolicy Honor: nodes and NodePools with a NoSchedule or NoExecute taint the pod does not tolerate are
 *     not domains, and pods on them are not counted. Ignore (the default): taints do not matter.
 * The filter is part of a spread topology's identity: two pods with the same selector but different filters count
 * different pods.
 */
#ifndef NS_SCHED_DOMAINS_H
#define NS_SCHED_DOMAINS_H

#include <stdbool.h>
#include <stddef.h>

#include "model/pod.h"
#include "model/requirements.h"

struct sched;
struct sched_claim;

typedef struct sched_domain_filter {
    bool affinity;           /* Honor with node requirements to honour */
    ns_requirements *terms;  /* ORed; owned */
    size_t n_terms;
    bool taints;             /* Honor */
    const ns_pod *tolerator; /* whose tolerations decide (borrowed) */
} sched_domain_filter;

/* The filter of spread constraint t declared by pod (nothing to filter leaves both flags false). 0 or an error. */
int sched_domain_filter_init(sched_domain_filter *f, const ns_pod *pod, const ns_topology_spread *t);
void sched_domain_filter_free(sched_domain_filter *f); /* members; accepts NULL */
bool sched_domain_filter_active(const sched_domain_filter *f);
/* Appends the filter to a topology signature (its terms and tolerations), or nothing when inactive. 0 or
 * NS_ERR_INTERNAL. */
int sched_domain_filter_sig(const sched_domain_filter *f, char **buf, size_t *len, size_t *cap);
/* Host h (existing nodes first, then claims) is a domain the filter counts. */
bool sched_domain_host_counts(const struct sched *s, const sched_domain_filter *f, size_t host);
/* Zones (bit per zone) the filter leaves as domains: those of NodePools and existing nodes that pass it. */
uint32_t sched_domain_zones(const struct sched *s, const sched_domain_filter *f);
struct sched_keyed;
/* The same for another key: the values of key that the NodePools passing the filter offer (their In requirements,
 * their types' labels, for capacity type their offerings) and that existing nodes passing it carry, added to out.
 * 0 or NS_ERR_INTERNAL. */
int sched_domain_values(const struct sched *s, const sched_domain_filter *f, const char *key, struct sched_keyed *out);

#endif
