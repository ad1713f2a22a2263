/*
 * Events and the state changes they announce. Changes are applied lazily: every method that reads instances first
 * applies the changes whose deadline has passed on the host clock (sim_world_lock), so a simulated clock drives
 * interruptions exactly.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_events.h"
#include "sim_instances.h"
#include "sim_state.h"

/* EC2 warns two minutes before reclaiming a spot instance. */
#define SIM_SPOT_WARNING_MS (2 * 60 * 1000)

void sim_events_free(sim_event_queue *q)
{
    if (!q)
        return;
    free(q->events);
    free(q->changes);
    memset(q, 0, sizeof(*q));
}

int sim_events_queue(sim_state *s, ns_event_kind kind, const char *provider_id, int64_t now_ms, int64_t deadline_ms,
                     const char *detail)
{
    sim_event_queue *q = &s->events;
    ns_event *grown = realloc(q->events, (q->n + 1) * sizeof(*grown));
    if (!grown)
        return SIM_FAIL(s, NS_ERR_INTERNAL, "queueing an event for %s: out of memory", provider_id);
    q->events = grown;
    ns_event *e = &grown[q->n++];
    memset(e, 0, sizeof(*e));
    e->struct_size = sizeof(*e);
    e->kind = kind;
    snprintf(e->id, sizeof(e->id), "sim-event-%016" PRIx64, ++q->last_id);
    sim_copy_str(e->provider_id, sizeof(e->provider_id), provider_id);
    e->time_ms = now_ms;
    e->deadline_ms = deadline_ms;
    snprintf(e->detail, sizeof(e->detail), "%s", detail);
    return NS_OK;
}

/* Caller holds the lock. announce 0: the change emits no event. */
static int sim_schedule(sim_state *s, uint64_t instance_id, ns_instance_state new_state, ns_event_kind announce,
                        int64_t deadline_ms, const char *detail)
{
    sim_event_queue *q = &s->events;
    sim_pending_change *grown = realloc(q->changes, (q->n_changes + 1) * sizeof(*grown));
    if (!grown)
        return SIM_FAIL(s, NS_ERR_INTERNAL, "scheduling a state change for instance %" PRIu64 ": out of memory",
                        instance_id);
    q->changes = grown;
    sim_pending_change *c = &grown[q->n_changes++];
    memset(c, 0, sizeof(*c));
    c->instance_id = instance_id;
    c->new_state = new_state;
    c->announce = announce;
    c->deadline_ms = deadline_ms;
    snprintf(c->detail, sizeof(c->detail), "%s", detail);
    return NS_OK;
}

void sim_events_advance(sim_state *s, int64_t now_ms)
{
    sim_event_queue *q = &s->events;
    size_t kept = 0;
    for (size_t i = 0; i < q->n_changes; i++) {
        sim_pending_change *c = &q->changes[i];
        sim_instance *inst = sim_instances_by_id(&s->instances, c->instance_id);
        bool due = c->deadline_ms <= now_ms;
        bool moot = !inst || inst->state == NS_INSTANCE_TERMINATED;
        /* A change whose event cannot be queued (out of memory) waits for the next pass, so the event and the
         * state change are never separated. */
        if (due && !moot && c->announce &&
            sim_events_queue(s, c->announce, sim_instance_get(inst, SIM_NAME_PROVIDER_ID), now_ms, 0, c->detail) != NS_OK)
            due = false;
        if (due && !moot)
            inst->state = c->new_state;
        if (!due && !moot)
            q->changes[kept++] = *c;
    }
    q->n_changes = kept;
}

static const char *sim_event_kind_name(ns_event_kind kind)
{
    switch (kind) {
    case NS_EVENT_SPOT_INTERRUPTION:
        return "spot interruption";
    case NS_EVENT_REBALANCE_RECOMMENDATION:
        return "rebalance recommendation";
    case NS_EVENT_SCHEDULED_MAINTENANCE:
        return "scheduled maintenance";
    case NS_EVENT_INSTANCE_STOPPING:
        return "instance stopping";
    case NS_EVENT_INSTANCE_TERMINATED:
        return "instance terminated";
    case NS_EVENT_INSTANCE_UNHEALTHY:
        return "instance unhealthy";
    case NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION:
        return "capacity reservation interruption";
    }
    return NULL;
}

/* A reclaim notice (spot, an interruptible reservation): the event now, and the instance terminated at the deadline,
 * two minutes away unless the fault names one. Caller holds the lock. */
static int notice_then_terminate(sim_state *s, sim_instance *inst, ns_event_kind kind, int64_t now, int64_t deadline,
                                 const char *notice, const char *terminated)
{
    if (deadline == 0)
        deadline = now + SIM_SPOT_WARNING_MS;
    int rc = sim_events_queue(s, kind, sim_instance_get(inst, SIM_NAME_PROVIDER_ID), now, deadline, notice);
    return rc != NS_OK ? rc : sim_schedule(s, inst->id, NS_INSTANCE_TERMINATED, NS_EVENT_INSTANCE_TERMINATED, deadline,
                                           terminated);
}

/* Queues the event and the changes it implies. Caller holds the lock. */
static int sim_inject_locked(sim_state *s, sim_instance *inst, ns_event_kind kind, int64_t now, int64_t deadline)
{
    const char *pid = sim_instance_get(inst, SIM_NAME_PROVIDER_ID);
    int rc;
    switch (kind) {
    case NS_EVENT_SPOT_INTERRUPTION:
        return notice_then_terminate(s, inst, kind, now, deadline, "spot capacity reclaimed; the instance terminates "
                                     "at the deadline", "instance terminated after spot interruption");
    case NS_EVENT_SCHEDULED_MAINTENANCE:
        rc = sim_events_queue(s, kind, pid, now, deadline, "scheduled maintenance stops the instance at the deadline");
        if (rc != NS_OK || deadline == 0)
            return rc;
        return sim_schedule(s, inst->id, NS_INSTANCE_STOPPED, NS_EVENT_INSTANCE_STOPPING, deadline,
                            "instance stopped for scheduled maintenance");
    case NS_EVENT_INSTANCE_STOPPING:
        rc = sim_events_queue(s, kind, pid, now, deadline, "instance is stopping");
        if (rc != NS_OK)
            return rc;
        inst->state = NS_INSTANCE_STOPPING;
        return sim_schedule(s, inst->id, NS_INSTANCE_STOPPED, 0, deadline ? deadline : now, "instance stopped");
    case NS_EVENT_INSTANCE_TERMINATED:
        rc = sim_events_queue(s, kind, pid, now, deadline, "instance terminated by the cloud");
        if (rc == NS_OK)
            inst->state = NS_INSTANCE_TERMINATED;
        return rc;
    case NS_EVENT_REBALANCE_RECOMMENDATION:
        return sim_events_queue(s, kind, pid, now, deadline, "elevated risk of spot interruption");
    case NS_EVENT_INSTANCE_UNHEALTHY:
        /* An impaired instance keeps running, broken, until someone terminates it: no change is scheduled. */
        return sim_events_queue(s, kind, pid, now, s->violation == SIM_VIOLATION_UNHEALTHY_DEADLINE ? deadline : 0,
                                "instance and system status checks failed: impaired");
    case NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION:
        /* An interruptible reservation reclaims its instances with the same two-minute notice as spot. */
        return notice_then_terminate(s, inst, kind, now, deadline, "capacity reservation reclaimed; the instance "
                                     "terminates at the deadline",
                                     "instance terminated after capacity reservation interruption");
    }
    return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "test_inject_fault: unknown event kind %d", (int)kind);
}

int sim_events_inject(sim_state *s, const ns_fault *f)
{
    if (!f->provider_id)
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "test_inject_fault: interrupt fault without a provider ID");
    const char *kind_name = sim_event_kind_name(f->event);
    if (!kind_name)
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "test_inject_fault: unknown event kind %d for %s", (int)f->event,
                        f->provider_id);

    int64_t now = sim_world_lock(s);
    sim_instance *inst = sim_instances_by_provider_id(&s->instances, f->provider_id);
    bool live = inst && inst->state != NS_INSTANCE_TERMINATED;
    int rc = live ? sim_inject_locked(s, inst, f->event, now, f->deadline_ms) : NS_OK;
    sim_world_unlock(s);

    if (!live)
        return SIM_FAIL(s, NS_ERR_NOT_FOUND, "test_inject_fault: cannot queue a %s for %s: no such running instance",
                        kind_name, f->provider_id);
    if (rc == NS_OK)
        sim_log(s, NS_LOG_INFO, "injected event", "provider-id", f->provider_id, "event", kind_name, NULL);
    return rc;
}

/* Puts undelivered events back in front of any that arrived during delivery. */
static int sim_requeue(sim_state *s, const ns_event *events, size_t n)
{
    pthread_mutex_lock(&s->lock);
    sim_event_queue *q = &s->events;
    ns_event *merged = malloc((n + q->n) * sizeof(*merged));
    if (merged) {
        memcpy(merged, events, n * sizeof(*merged));
        if (q->n)
            memcpy(merged + n, q->events, q->n * sizeof(*merged));
        free(q->events);
        q->events = merged;
        q->n += n;
    }
    pthread_mutex_unlock(&s->lock);
    if (!merged)
        return SIM_FAIL(s, NS_ERR_INTERNAL, "poll_events: out of memory keeping %zu undelivered events", n);
    return NS_OK;
}

int sim_poll_events(void *state, ns_event_cb cb, void *cb_ctx)
{
    sim_state *s = state;
    if (!cb)
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "poll_events: callback is NULL");
    int rc = sim_fault_enter(s, "poll_events");
    if (rc != NS_OK)
        return rc;

    bool repeat = s->violation == SIM_VIOLATION_REPEAT_EVENTS;
    sim_world_lock(s);
    size_t n = s->events.n;
    ns_event *events = s->events.events;
    if (repeat && n > 0) {
        events = malloc(n * sizeof(*events));
        if (events)
            memcpy(events, s->events.events, n * sizeof(*events));
    } else {
        s->events.events = NULL;
        s->events.n = 0;
    }
    sim_world_unlock(s);
    if (n > 0 && !events)
        return SIM_FAIL(s, NS_ERR_INTERNAL, "poll_events: out of memory copying %zu events", n);

    size_t i = 0;
    for (; i < n; i++) {
        rc = cb(cb_ctx, &events[i]);
        if (rc != 0)
            break;
    }
    if (i < n && !repeat) {
        int requeue_rc = sim_requeue(s, events + i, n - i);
        if (requeue_rc != NS_OK)
            rc = requeue_rc;
    }
    free(events);
    return rc;
}

int sim_list_repair_policies(void *state, ns_repair_policy_cb cb, void *cb_ctx)
{
    sim_state *s = state;
    if (!cb)
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "list_repair_policies: callback is NULL");
    int rc = sim_fault_enter(s, "list_repair_policies");
    if (rc != NS_OK)
        return rc;
    /* Karpenter's AWS policy: a node not Ready for 30 minutes is replaced. */
    static const char *const statuses[] = {"False", "Unknown"};
    for (size_t i = 0; i < 2; i++) {
        ns_repair_policy p;
        memset(&p, 0, sizeof(p));
        p.struct_size = sizeof(p);
        p.condition_type = "Ready";
        p.condition_status = statuses[i];
        p.toleration_ms = 30 * 60 * 1000;
        rc = cb(cb_ctx, &p);
        if (rc != 0)
            return rc;
    }
    return NS_OK;
}
