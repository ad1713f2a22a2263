/*
 * The simulated provider's state: configuration read once at init, an immutable catalog, and the mutable world
 * (instances, injected faults, queued events) behind one mutex.
 *
 * Locking: `lock` guards `instances`, `faults` and `events`. Callbacks into the core and host->sleep_ms never run
 * with the lock held, so a callback may call back into the provider.
 */
#ifndef SIM_STATE_H
#define SIM_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nodesmith/provider.h"

#include "sim_catalog.h"
#include "sim_events.h"
#include "sim_faults.h"
#include "sim_instances.h"

/* The v1 test module is built as sim_v1.so and names itself to match (the loader checks the name). */
#ifndef SIM_PROVIDER_NAME
#define SIM_PROVIDER_NAME "sim"
#endif
#define SIM_PROVIDER_VERSION "1.0.0"

/* Deliberate contract breaks, so the conformance suite can be shown to catch each one (option `violation`). */
typedef enum sim_violation {
    SIM_VIOLATION_NONE = 0,
    SIM_VIOLATION_DOUBLE_LAUNCH,            /* launch ignores client_token */
    SIM_VIOLATION_MISSING_LABEL,            /* instance types lack kubernetes.io/arch */
    SIM_VIOLATION_NEGATIVE_PRICE,           /* spot offerings have negative prices */
    SIM_VIOLATION_IGNORE_ZONE,              /* launch picks a zone the options did not name */
    SIM_VIOLATION_TERMINATE_NOT_IDEMPOTENT, /* terminating a gone instance is NS_ERR_NOT_FOUND */
    SIM_VIOLATION_LIST_TERMINATED,          /* list_instances and get_instance still show terminated instances */
    SIM_VIOLATION_REPEAT_EVENTS,            /* poll_events never removes an event */
    SIM_VIOLATION_ICE_WITHOUT_OFFERINGS,    /* insufficient capacity without naming the unavailable offerings */
    SIM_VIOLATION_WRONG_CAPACITY_TYPE,      /* launch reports the other capacity type than it chose */
    SIM_VIOLATION_STATUS_READY,             /* nodeclass_status reports "Ready", which is the core's */
    SIM_VIOLATION_SILENT_ERRORS,            /* injected failures are returned without host->error */
    SIM_VIOLATION_CRASH_IN_LAUNCH,          /* launch dereferences NULL */
    SIM_VIOLATION_HANG_IN_GET_INSTANCE,     /* get_instance never returns */
    SIM_VIOLATION_UNHEALTHY_DEADLINE,       /* an unhealthy-instance event carries the injected deadline */
} sim_violation;

typedef struct sim_state {
    const ns_host *host;
    ns_host_ctx *ctx;

    char region[NS_ZONE_MAX];
    char zones[SIM_MAX_ZONES][NS_ZONE_MAX];
    size_t n_zones;
    bool test_hooks;
    sim_violation violation;
    int64_t launch_latency_ms;

    sim_catalog catalog; /* immutable after init */

    pthread_mutex_t lock;
    int shared_fd; /* option state_file (sim_shared.h), or -1 */
    sim_instance_store instances;
    sim_fault_store faults;
    sim_event_queue events;
} sim_state;

/* Reports an error through the host and returns its code. */
/* Reports an error through the host and returns its code; the calling thread's last message stays readable with
 * sim_last_error (nodeclass_status turns a validation failure into a condition's message). */
#define SIM_FAIL(s, code, ...) sim_fail((s), (code), __FILE__, __LINE__, __VA_ARGS__)
int sim_fail(const sim_state *s, int code, const char *file, int line, const char *fmt, ...) NS_PRINTF(5, 6);
const char *sim_last_error(void);

/* Copies a struct received from the core into a zeroed local of the provider's size, so fields beyond what the core
 * sent read as zero/NULL (the ABI's growth rule). */
#define SIM_COPY_IN(dst, src)                                                                                          \
    do {                                                                                                               \
        memset(&(dst), 0, sizeof(dst));                                                                                \
        size_t sim_n_ = (src)->struct_size < sizeof(dst) ? (src)->struct_size : sizeof(dst);                           \
        memcpy(&(dst), (src), sim_n_);                                                                                 \
    } while (0)

/* Copies a filled local out-struct into the core's, writing only what the core's struct_size covers and keeping
 * its struct_size. */
#define SIM_COPY_OUT(dst, src)                                                                                         \
    do {                                                                                                               \
        uint32_t sim_size_ = (dst)->struct_size;                                                                       \
        size_t sim_n_ = sim_size_ < sizeof(src) ? sim_size_ : sizeof(src);                                             \
        memcpy((dst), &(src), sim_n_);                                                                                 \
        (dst)->struct_size = sim_size_;                                                                                \
    } while (0)

/* Index of zone in s->zones, or -1. */
int sim_zone_index(const sim_state *s, const char *zone);

/* One structured log line through the host; fields are key/value const char * pairs ending with NULL. */
void sim_log(const sim_state *s, ns_log_level level, const char *message, ...);

/* ABI 4 method (sim_status.c). */
int sim_nodeclass_status(void *state, const ns_nodeclass *nodeclass, ns_json **status);

/* Copies src into a fixed buffer; false (and nothing written past dst) when it does not fit. */
bool sim_copy_str(char *dst, size_t dst_len, const char *src);

#endif
