/*
 * Injected faults (test_inject_fault, refused unless option test_hooks is true): exhausted offerings, and per-method
 * throttling, failures and delays counted down call by call. Interruption events live in sim_events.
 */
#ifndef SIM_FAULTS_H
#define SIM_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodesmith/provider.h"

typedef struct sim_state sim_state;

/* An offering without capacity; an empty field matches anything. */
typedef struct sim_capacity_fault {
    char instance_type[NS_NAME_MAX];
    char zone[NS_ZONE_MAX];
    char capacity_type[NS_CAPACITY_TYPE_MAX];
} sim_capacity_fault;

/* THROTTLE, FAIL or DELAY for the next `remaining` calls of `method` (empty: every method). */
typedef struct sim_call_fault {
    ns_fault_kind kind;
    char method[32];
    uint32_t remaining;
    ns_err error;
    int64_t delay_ms;       /* DELAY */
    int64_t retry_after_ms; /* THROTTLE */
} sim_call_fault;

/* Guarded by sim_state.lock. */
typedef struct sim_fault_store {
    sim_capacity_fault *capacity;
    size_t n_capacity;
    sim_call_fault *calls;
    size_t n_calls;
} sim_fault_store;

/* Frees the arrays; accepts NULL. */
void sim_faults_free(sim_fault_store *f);

/* True when an injected fault exhausts the offering. Caller holds the lock. */
bool sim_faults_capacity_exhausted(const sim_fault_store *f, const char *instance_type, const char *zone,
                                   const char *capacity_type);

/* Runs at the start of every ABI method: sleeps for matching DELAY faults, then fails with the first matching
 * THROTTLE or FAIL fault, consuming one call of each. Takes the lock itself. NS_OK when the call may proceed. */
int sim_fault_enter(sim_state *s, const char *method);

/* The ABI method. */
int sim_test_inject_fault(void *state, const ns_fault *fault);

#endif
