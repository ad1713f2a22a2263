/*
 * The core-side fault layer (SQLite's test VFS, which wraps any real VFS): faults the core can produce itself,
 * applied in the call wrappers in front of any provider, whatever its test hooks. Used by simulation timelines
 * (launchFailure) and tests; nothing in a provider's options or the controller's configuration reaches it.
 *
 *   NS_FAULT_INSUFFICIENT_CAPACITY  the offering (type, zone, capacity type; each NULL = any) reads as unavailable in
 *                                   list_instance_types, and launch drops it from the request's options; a launch
 *                                   left with none fails with NS_ERR_INSUFFICIENT_CAPACITY naming each dropped
 *                                   offering, without calling the provider.
 *   NS_FAULT_THROTTLE / NS_FAULT_FAIL  the next `count` calls of `method` (NULL = any method) fail before the provider
 *                                   is called, with NS_ERR_THROTTLED (retry hint 0) / the fault's `error`.
 *   NS_FAULT_DELAY                  the next `count` calls of `method` first sleep `delay_ms` on the core's clock.
 *   a hang (ns_fault_layer_add_hang, core-only: no provider produces it) the next `count` calls of `method` sleep
 *                                   until the call's deadline on the core's clock and fail as the watchdog fails a
 *                                   call that did not return by then (NS_ERR_THROTTLED), the provider not called.
 *   NS_FAULT_CLEAR                  removes every fault of this layer.
 * Interruption events (NS_FAULT_INTERRUPT) are the provider's alone: ns_plugin_inject_fault passes them, and CLEAR,
 * to its test_inject_fault. Thread-safe.
 */
#ifndef NS_PLUGIN_FAULTS_H
#define NS_PLUGIN_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodesmith/provider.h"

typedef struct ns_fault_layer ns_fault_layer;

ns_fault_layer *ns_fault_layer_new(void); /* NULL with NS_ERR_INTERNAL recorded */
void ns_fault_layer_free(ns_fault_layer *l); /* accepts NULL */

/* Records a core-side fault (any kind but NS_FAULT_INTERRUPT). NS_ERR_INVALID_ARGUMENT for a malformed fault. */
int ns_fault_layer_add(ns_fault_layer *l, const ns_fault *f);
void ns_fault_layer_clear(ns_fault_layer *l);
/* Records a hang of the next `count` calls of `method` (NULL = any) for deadline_ms (> 0). NS_ERR_INVALID_ARGUMENT
 * for a zero count or deadline, NS_ERR_INTERNAL when out of memory. */
int ns_fault_layer_add_hang(ns_fault_layer *l, const char *method, uint32_t count, int64_t deadline_ms);

/* At the start of a wrapper: NS_OK, or the injected error (recorded, naming `method`). Sleeps for a DELAY. */
int ns_fault_layer_enter(ns_fault_layer *l, const char *method);
/* True when the offering is made unavailable by an injected insufficient-capacity fault. */
bool ns_fault_layer_no_capacity(ns_fault_layer *l, const char *instance_type, const char *zone,
                                const char *capacity_type);
/* True when the layer holds any insufficient-capacity fault (so wrappers copy only then). */
bool ns_fault_layer_has_capacity_faults(ns_fault_layer *l);

#endif
