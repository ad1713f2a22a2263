/*
 * Launching the node claims a scheduling round decided, through a provider plugin, with Karpenter's log lines
 * ("created nodeclaim", "launched nodeclaim").
 */
#ifndef NS_SCHED_LAUNCH_H
#define NS_SCHED_LAUNCH_H

#include "model/resources.h"
#include "plugin/plugin_loader.h"
#include "sched/sched.h"

/* One claim's launch, as the core keeps it (the provider's ns_launch_result is converted and dropped). */
typedef struct ns_sched_launch {
    int code;                /* NS_OK, or the launch's error category */
    char *error;             /* the provider's message when code != NS_OK (owned) */
    char *provider_id;       /* owned; NULL when the launch failed */
    const char *instance_type; /* interned (model/intern.h), as the provider reported them */
    const char *zone;
    const char *capacity_type;
    ns_res allocatable;
    double price_per_hour; /* of the offering launched, from the claim's options; -1 when unknown */
} ns_sched_launch;

/* Launches every claim of r (one launch each; out has r->n_claims entries, zeroed by the call). Options are the
 * claim's, cheapest first, cut to NS_SCHED_MAX_LAUNCH_TYPES instance types; the client token is
 * "<cluster_name>/<claim name>", so repeating a round launches nothing twice. pool_nodeclass is indexed like
 * cluster->nodepools. Launch failures are recorded per claim, not returned; the return value is an error only for
 * invalid arguments or allocation failure. */
/* Frees the members of n launches and the array; accepts NULL. */
void ns_sched_launches_free(ns_sched_launch *l, size_t n);

int ns_sched_launch_claims(ns_plugin *plugin, const ns_cluster *cl, const ns_nodeclass *const *pool_nodeclass,
                           const char *cluster_name, const ns_sched_result *r, ns_sched_launch *out);

#endif
