/*
 * Cloud events (poll_events) and the instance state changes some of them announce: a spot interruption reclaims
 * the instance at its deadline, scheduled maintenance stops it, an injected stop or termination acts at once.
 */
#ifndef SIM_EVENTS_H
#define SIM_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodesmith/provider.h"

typedef struct sim_state sim_state;

/* A state change due at deadline_ms for one instance. */
typedef struct sim_pending_change {
    uint64_t instance_id;
    ns_instance_state new_state;
    ns_event_kind announce; /* the event queued when the change happens */
    int64_t deadline_ms;
    char detail[NS_DETAIL_MAX];
} sim_pending_change;

/* Guarded by sim_state.lock. */
typedef struct sim_event_queue {
    ns_event *events; /* oldest first */
    size_t n;
    sim_pending_change *changes;
    size_t n_changes;
    uint64_t last_id;
} sim_event_queue;

void sim_events_free(sim_event_queue *q); /* accepts NULL */

/* Queues one event. Caller holds the lock. NS_OK or NS_ERR_INTERNAL (reported). */
int sim_events_queue(sim_state *s, ns_event_kind kind, const char *provider_id, int64_t now_ms, int64_t deadline_ms,
                     const char *detail);

/* Applies every change due at now_ms and queues its event. Caller holds the lock. */
void sim_events_advance(sim_state *s, int64_t now_ms);

/* NS_FAULT_INTERRUPT: queues an event for fault->provider_id and schedules the change it announces. */
int sim_events_inject(sim_state *s, const ns_fault *fault);

/* ABI methods. */
int sim_poll_events(void *state, ns_event_cb cb, void *cb_ctx);
int sim_list_repair_policies(void *state, ns_repair_policy_cb cb, void *cb_ctx);
/* ABI 5 (sim_node_events.c): the sim's node agent's SimInterruptionScheduled condition. */
int sim_event_from_node_condition(void *state, const ns_node_condition *condition, ns_event *event, bool *is_event);

#endif
