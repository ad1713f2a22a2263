/* test_inject_fault (provider ABI 2) for a provider tested against a cloud emulator: a fault is injected where the
 * cloud would produce it, in the emulator, through its control endpoint (the provider's test_control_url option):
 * POST /faults, /events, /instance_status and /clear with a JSON body. Refused unless the provider's test_hooks option is true.
 *
 * A method's faults apply to the cloud calls that method makes (the dialect's table); throttles are injected once per
 * attempt the provider's client makes, so they outlast its retries. What differs between clouds, how the emulator
 * names calls and errors, how an insufficient-capacity fault and an interruption are written, is the dialect's.
 * Compiled into each provider .so that has an emulator (providers/common). */
#ifndef NS_PROVIDERS_EMULATOR_HOOKS_H
#define NS_PROVIDERS_EMULATOR_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

#include "nodesmith/provider.h"

typedef struct emulator_method {
    const char *method; /* a provider method: "launch", "terminate", ... */
    const char *calls;  /* the emulator's names of the calls it makes, a JSON array */
} emulator_method;

/* The cloud's error code for a category, with the HTTP status the cloud answers it with. */
typedef struct emulator_error {
    ns_err category;
    const char *code;
    int status;
} emulator_error;

/* Writes into body (len bytes) the JSON of an insufficient-capacity fault or of an interruption; NS_OK, or the
 * provider's error (through the host) naming what is wrong with the fault. */
typedef int (*emulator_body_fn)(void *state, const ns_fault *f, char *body, size_t len);

typedef struct emulator_dialect {
    const char *provider;   /* "aws": the option-error messages */
    const char *cloud;      /* "AWS": the other messages */
    const char *calls_key;  /* the emulator's field for the calls a fault applies to: "actions", "ops" */
    const char *throttle_extra; /* more fields of a throttle fault ("\"retry_after\":0"), or "" */
    const emulator_method *methods;
    size_t n_methods;
    const emulator_error *errors;
    size_t n_errors;
    emulator_body_fn capacity; /* the /faults body of NS_FAULT_INSUFFICIENT_CAPACITY (fields checked already) */
    emulator_body_fn interrupt; /* the /events body of NS_FAULT_INTERRUPT */
    /* May be NULL: the /instance_status body of an NS_FAULT_INTERRUPT of kind NS_EVENT_INSTANCE_UNHEALTHY, for a cloud
     * that reports an impaired instance through a status call the provider polls rather than through its event
     * channel: the hook impairs the instance and the provider's own poll finds it. */
    emulator_body_fn impair;
    void (*before_call_fault)(void *state); /* may be NULL: drops what would hide a method's calls (a cache) */
} emulator_dialect;

/* What the provider was configured with: borrowed for the call. */
typedef struct emulator_hooks {
    const ns_host *host;
    void *ctx;               /* the provider's host context */
    void *state;             /* handed to the dialect's functions */
    bool enabled;            /* the test_hooks option */
    const char *control_url; /* the test_control_url option, "" when unset */
    unsigned max_attempts;   /* attempts the provider's client makes per call */
    const emulator_dialect *dialect;
} emulator_hooks;

/* The whole of test_inject_fault. NS_ERR_UNSUPPORTED when hooks are off, NS_ERR_INVALID_CONFIG without a control URL,
 * NS_ERR_INVALID_ARGUMENT for a fault the dialect cannot express, NS_ERR_INTERNAL when the emulator refused it. */
int emulator_inject_fault(const emulator_hooks *e, const ns_fault *f);

#endif
