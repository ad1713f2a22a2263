/*
 * `nodesmith controller`: the engine over a live cluster. Informers fill the engine's cluster (controller_mirror.h);
 * the engine's writes go to the API server (cluster_writes_kube.h); a Lease elects one leader among replicas (the
 * others keep warm caches and step nothing); SIGTERM/SIGINT stop it between two steps, releasing the Lease.
 *
 * Threading: ns_controller_run runs the engine on the calling thread; the informers and the Lease have threads of
 * their own, all joined before it returns.
 */
#ifndef NS_CONTROLLER_H
#define NS_CONTROLLER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "controller/controller_settings.h"
#include "model/nodeclass_kinds.h"
#include "plugin/plugin_loader.h"

typedef struct ns_controller_options {
    const ns_controller_settings *settings;
    ns_plugin *plugin;               /* loaded by the caller; outlives the run */
    const ns_nodeclass_kinds *kinds; /* the plugin's node-class kinds */
    /* Register each launched instance's Node and play its kubelet (Ready, pods Running): for the simulated provider,
     * whose instances run no kubelet. */
    bool simulate_kubelet;
    const char *identity;            /* the Lease holder's name; NULL: HOSTNAME_PID */
    int64_t tick_ms;                 /* time between engine steps; 0 = 500 ms */
    const volatile sig_atomic_t *stop; /* set by a signal handler: stop cleanly */
} ns_controller_options;

/* Runs until *stop is set (0: clean exit, Lease released) or a failure that ends the controller: the configuration
 * or the cache cannot be built, or the leader lost its Lease (NS_ERR_INTERNAL, "leader election lost", as Karpenter
 * exits then). */
int ns_controller_run(const ns_controller_options *o);

#endif
