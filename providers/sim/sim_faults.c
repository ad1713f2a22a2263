/*
 * Fault injection, the sim's equivalent of SQLite's test_vfs: tests make the cloud misbehave on purpose.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_events.h"
#include "sim_faults.h"
#include "sim_state.h"

#define SIM_DEFAULT_RETRY_AFTER_MS 1000

static const char *const sim_methods[] = {
    "list_instance_types", "launch", "terminate", "list_instances", "poll_events", "get_instance",
    "check_drift", "validate_nodeclass", "list_repair_policies",
};

static bool sim_method_known(const char *method)
{
    for (size_t i = 0; i < sizeof(sim_methods) / sizeof(sim_methods[0]); i++)
        if (strcmp(sim_methods[i], method) == 0)
            return true;
    return false;
}

void sim_faults_free(sim_fault_store *f)
{
    if (!f)
        return;
    free(f->capacity);
    free(f->calls);
    memset(f, 0, sizeof(*f));
}

static bool sim_field_matches(const char *pattern, const char *value)
{
    return pattern[0] == '\0' || (value && strcmp(pattern, value) == 0);
}

bool sim_faults_capacity_exhausted(const sim_fault_store *f, const char *instance_type, const char *zone,
                                   const char *capacity_type)
{
    for (size_t i = 0; i < f->n_capacity; i++) {
        const sim_capacity_fault *c = &f->capacity[i];
        if (sim_field_matches(c->instance_type, instance_type) && sim_field_matches(c->zone, zone) &&
            sim_field_matches(c->capacity_type, capacity_type))
            return true;
    }
    return false;
}

/* Violations crash-in-launch and hang-in-get-instance: a provider that crashes or never returns, for the core's
 * watchdog and the conformance suite's reports of them. */
static void misbehave(const sim_state *s, const char *method)
{
    /* A signal raised, not a NULL store, which UBSan would halt on before the core's handler ran. */
    if (s->violation == SIM_VIOLATION_CRASH_IN_LAUNCH && strcmp(method, "launch") == 0)
        raise(SIGSEGV);
    if (s->violation == SIM_VIOLATION_HANG_IN_GET_INSTANCE && strcmp(method, "get_instance") == 0)
        for (;;)
            sleep(60);
}

int sim_fault_enter(sim_state *s, const char *method)
{
    int64_t delay_ms = 0;
    sim_call_fault hit = {0};
    bool failed = false;

    misbehave(s, method);
    pthread_mutex_lock(&s->lock);
    size_t kept = 0;
    for (size_t i = 0; i < s->faults.n_calls; i++) {
        sim_call_fault *c = &s->faults.calls[i];
        bool matches = sim_field_matches(c->method, method);
        if (matches && c->kind == NS_FAULT_DELAY) {
            delay_ms += c->delay_ms;
            c->remaining--;
        } else if (matches && !failed) {
            hit = *c;
            failed = true;
            c->remaining--;
        }
        if (c->remaining > 0)
            s->faults.calls[kept++] = *c;
    }
    s->faults.n_calls = kept;
    pthread_mutex_unlock(&s->lock);

    if (delay_ms > 0)
        s->host->sleep_ms(s->ctx, delay_ms);
    if (!failed)
        return NS_OK;
    if (s->violation == SIM_VIOLATION_SILENT_ERRORS)
        return hit.kind == NS_FAULT_THROTTLE ? NS_ERR_THROTTLED : (int)hit.error;
    if (hit.kind == NS_FAULT_THROTTLE) {
        int rc = SIM_FAIL(s, NS_ERR_THROTTLED, "%s: request rate exceeded in region %s (injected throttle fault)",
                          method, s->region);
        s->host->error_retry_after(s->ctx, hit.retry_after_ms);
        return rc;
    }
    return SIM_FAIL(s, hit.error, "%s: the simulated cloud failed the call (injected fault, category %d)", method,
                    (int)hit.error);
}

static int sim_add_capacity_fault(sim_state *s, const ns_fault *f)
{
    sim_capacity_fault c;
    memset(&c, 0, sizeof(c));
    if (!sim_copy_str(c.instance_type, sizeof(c.instance_type), f->instance_type ? f->instance_type : "") ||
        !sim_copy_str(c.zone, sizeof(c.zone), f->zone ? f->zone : "") ||
        !sim_copy_str(c.capacity_type, sizeof(c.capacity_type), f->capacity_type ? f->capacity_type : ""))
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT,
                        "test_inject_fault: insufficient-capacity fault has an over-long instance type, zone or "
                        "capacity type");
    if (f->instance_type && !sim_catalog_find(&s->catalog, f->instance_type))
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "test_inject_fault: instance type %s is not in the catalog",
                        f->instance_type);

    pthread_mutex_lock(&s->lock);
    sim_capacity_fault *grown = realloc(s->faults.capacity, (s->faults.n_capacity + 1) * sizeof(*grown));
    if (grown) {
        s->faults.capacity = grown;
        grown[s->faults.n_capacity++] = c;
    }
    pthread_mutex_unlock(&s->lock);
    if (!grown)
        return SIM_FAIL(s, NS_ERR_INTERNAL, "test_inject_fault: out of memory adding a capacity fault");
    sim_log(s, NS_LOG_INFO, "injected insufficient capacity", "instance-type", c.instance_type[0] ? c.instance_type : "*",
            "zone", c.zone[0] ? c.zone : "*", "capacity-type", c.capacity_type[0] ? c.capacity_type : "*", NULL);
    return NS_OK;
}

static int sim_add_call_fault(sim_state *s, const ns_fault *f)
{
    sim_call_fault c;
    memset(&c, 0, sizeof(c));
    c.kind = f->kind;
    if (f->method && !sim_method_known(f->method))
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "test_inject_fault: unknown method \"%s\"", f->method);
    sim_copy_str(c.method, sizeof(c.method), f->method ? f->method : "");
    if (f->count == 0)
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "test_inject_fault: count must be at least 1");
    c.remaining = f->count;
    if (f->kind == NS_FAULT_FAIL) {
        if (f->error >= NS_OK || f->error < NS_ERR_INVALID_ARGUMENT)
            return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "test_inject_fault: error %d is not an ns_err category",
                            (int)f->error);
        c.error = f->error;
    }
    if (f->kind == NS_FAULT_DELAY) {
        if (f->delay_ms <= 0)
            return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "test_inject_fault: delay_ms must be positive");
        c.delay_ms = f->delay_ms;
    }
    /* The fault struct has no retry-after field: a throttle's delay_ms is its retry-after hint. */
    if (f->kind == NS_FAULT_THROTTLE)
        c.retry_after_ms = f->delay_ms > 0 ? f->delay_ms : SIM_DEFAULT_RETRY_AFTER_MS;

    pthread_mutex_lock(&s->lock);
    sim_call_fault *grown = realloc(s->faults.calls, (s->faults.n_calls + 1) * sizeof(*grown));
    if (grown) {
        s->faults.calls = grown;
        grown[s->faults.n_calls++] = c;
    }
    pthread_mutex_unlock(&s->lock);
    if (!grown)
        return SIM_FAIL(s, NS_ERR_INTERNAL, "test_inject_fault: out of memory adding a call fault");
    sim_log(s, NS_LOG_INFO, "injected call fault", "method", c.method[0] ? c.method : "*", NULL);
    return NS_OK;
}

int sim_test_inject_fault(void *state, const ns_fault *fault_in)
{
    sim_state *s = state;
    if (!s->test_hooks)
        return SIM_FAIL(s, NS_ERR_UNSUPPORTED,
                        "test_inject_fault: test hooks are disabled for provider sim (set option test_hooks: true)");
    if (!fault_in)
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "test_inject_fault: fault is NULL");
    ns_fault f;
    SIM_COPY_IN(f, fault_in);

    switch (f.kind) {
    case NS_FAULT_INSUFFICIENT_CAPACITY:
        return sim_add_capacity_fault(s, &f);
    case NS_FAULT_THROTTLE:
    case NS_FAULT_FAIL:
    case NS_FAULT_DELAY:
        return sim_add_call_fault(s, &f);
    case NS_FAULT_INTERRUPT:
        return sim_events_inject(s, &f);
    case NS_FAULT_CLEAR:
        pthread_mutex_lock(&s->lock);
        sim_faults_free(&s->faults);
        pthread_mutex_unlock(&s->lock);
        sim_log(s, NS_LOG_INFO, "cleared injected faults", NULL);
        return NS_OK;
    }
    return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "test_inject_fault: unknown fault kind %d", (int)f.kind);
}
