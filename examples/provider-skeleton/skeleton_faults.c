/*
 * The optional test hook. The conformance suite injects faults through it to check that errors come back in the
 * documented categories. It is refused unless the operator set `test_hooks: true`, so a production configuration
 * can never be made to fail on purpose.
 */
#include <stdio.h>
#include <string.h>

#include "skeleton.h"

static const char *sk_str(const char *s)
{
    return s ? s : "";
}

/* The methods sk_faults_before_call guards, by their ns_provider field names. */
static const char *const sk_methods[] = {"list_instance_types", "launch",      "terminate",
                                         "list_instances",      "get_instance", "poll_events"};

static bool sk_method_known(const char *method)
{
    for (size_t i = 0; i < sizeof(sk_methods) / sizeof(sk_methods[0]); i++)
        if (strcmp(sk_methods[i], method) == 0)
            return true;
    return false;
}

static int sk_add_locked(sk_state *st, const sk_fault *fault)
{
    if (st->n_faults == SK_MAX_FAULTS)
        return NS_ERROR(st->host, st->ctx, NS_ERR_INTERNAL, "injecting a fault: all %d fault slots are in use",
                        SK_MAX_FAULTS);
    st->faults[st->n_faults++] = *fault;
    return NS_OK;
}

/* Turns a fault request into a table entry, checking what the kind needs. */
static int sk_parse(sk_state *st, const ns_fault *in, sk_fault *out)
{
    memset(out, 0, sizeof(*out));
    out->kind = in->kind;
    switch (in->kind) {
    case NS_FAULT_INSUFFICIENT_CAPACITY:
        if (!in->instance_type || !in->zone || !in->capacity_type ||
            !sk_copy(out->instance_type, sizeof(out->instance_type), in->instance_type) ||
            !sk_copy(out->zone, sizeof(out->zone), in->zone) ||
            !sk_copy(out->capacity_type, sizeof(out->capacity_type), in->capacity_type))
            return NS_ERROR(st->host, st->ctx, NS_ERR_INVALID_ARGUMENT,
                            "insufficient-capacity fault: instance type, zone and capacity type are all required");
        return NS_OK;
    case NS_FAULT_FAIL:
        if (in->error >= NS_OK || in->error < NS_ERR_INVALID_ARGUMENT)
            return NS_ERROR(st->host, st->ctx, NS_ERR_INVALID_ARGUMENT, "fail fault: %d is not an error category",
                            (int)in->error);
        out->error = in->error;
        break;
    case NS_FAULT_DELAY:
        if (in->delay_ms < 0)
            return NS_ERROR(st->host, st->ctx, NS_ERR_INVALID_ARGUMENT, "delay fault: negative delay %lld ms",
                            (long long)in->delay_ms);
        out->delay_ms = in->delay_ms;
        break;
    case NS_FAULT_THROTTLE:
        break;
    default:
        return NS_ERROR(st->host, st->ctx, NS_ERR_INVALID_ARGUMENT, "fault kind %d is not known to this provider",
                        (int)in->kind);
    }
    if (in->count == 0 || (in->method && !sk_method_known(in->method)) ||
        !sk_copy(out->method, sizeof(out->method), sk_str(in->method)))
        return NS_ERROR(st->host, st->ctx, NS_ERR_INVALID_ARGUMENT,
                        "fault on method \"%s\": needs a positive count and a known method name (or none for all)",
                        sk_str(in->method));
    out->remaining = in->count;
    return NS_OK;
}

static int sk_interrupt_locked(sk_state *st, const ns_fault *fault)
{
    ns_event ev = {0};

    if (!fault->provider_id || !fault->provider_id[0] || fault->event < NS_EVENT_SPOT_INTERRUPTION ||
        fault->event > NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION || fault->deadline_ms < 0)
        return NS_ERROR(st->host, st->ctx, NS_ERR_INVALID_ARGUMENT,
                        "interrupt fault: needs a provider ID, an event kind and a non-negative deadline");
    ev.struct_size = sizeof(ev);
    ev.kind = fault->event;
    snprintf(ev.id, sizeof(ev.id), "sk-event-%016llx", (unsigned long long)++st->next_serial);
    if (!sk_copy(ev.provider_id, sizeof(ev.provider_id), fault->provider_id))
        return NS_ERROR(st->host, st->ctx, NS_ERR_INVALID_ARGUMENT, "interrupt fault: provider ID too long");
    ev.time_ms = st->host->now_ms(st->ctx);
    /* An unhealthy instance is terminated at once: provider.h gives its event no deadline. */
    ev.deadline_ms = fault->event == NS_EVENT_INSTANCE_UNHEALTHY ? 0 : fault->deadline_ms;
    snprintf(ev.detail, sizeof(ev.detail), "injected by the test hook");
    return sk_events_push_locked(st, &ev);
}

int sk_test_inject_fault(void *state, const ns_fault *fault)
{
    sk_state *st = state;
    sk_fault parsed;
    int rc;

    if (!st->test_hooks)
        return NS_ERROR(st->host, st->ctx, NS_ERR_UNSUPPORTED,
                        "test_inject_fault: test hooks are off (set test_hooks: true in the provider's options)");
    pthread_mutex_lock(&st->lock);
    if (fault->kind == NS_FAULT_CLEAR) {
        st->n_faults = 0;
        rc = NS_OK;
    } else if (fault->kind == NS_FAULT_INTERRUPT) {
        rc = sk_interrupt_locked(st, fault);
    } else {
        rc = sk_parse(st, fault, &parsed);
        if (rc == NS_OK)
            rc = sk_add_locked(st, &parsed);
    }
    pthread_mutex_unlock(&st->lock);
    return rc;
}

int sk_faults_before_call(sk_state *st, const char *method)
{
    sk_fault hit = {0};

    if (!st->test_hooks)
        return NS_OK;
    pthread_mutex_lock(&st->lock);
    for (size_t i = 0; i < st->n_faults; i++) {
        sk_fault *f = &st->faults[i];

        if (f->kind == NS_FAULT_INSUFFICIENT_CAPACITY || f->remaining == 0)
            continue;
        if (f->method[0] && strcmp(f->method, method) != 0)
            continue;
        f->remaining--;
        hit = *f;
        break;
    }
    pthread_mutex_unlock(&st->lock);
    switch (hit.kind) {
    case NS_FAULT_THROTTLE:
        NS_ERROR(st->host, st->ctx, NS_ERR_THROTTLED, "%s: rate limited (injected fault)", method);
        st->host->error_retry_after(st->ctx, 1000);
        return NS_ERR_THROTTLED;
    case NS_FAULT_FAIL:
        return NS_ERROR(st->host, st->ctx, hit.error, "%s: failed (injected fault)", method);
    case NS_FAULT_DELAY:
        st->host->sleep_ms(st->ctx, hit.delay_ms);
        return NS_OK;
    default:
        return NS_OK;
    }
}

bool sk_faults_offering_exhausted_locked(const sk_state *st, const char *type, const char *zone,
                                         const char *capacity_type)
{
    for (size_t i = 0; i < st->n_faults; i++) {
        const sk_fault *f = &st->faults[i];

        if (f->kind == NS_FAULT_INSUFFICIENT_CAPACITY && strcmp(f->instance_type, type) == 0 &&
            strcmp(f->zone, zone) == 0 && strcmp(f->capacity_type, capacity_type) == 0)
            return true;
    }
    return false;
}
