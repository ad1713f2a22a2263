/*
 * The skeleton provider's private state: an in-memory "cloud" with a fixed catalog, a table of instances, an event
 * queue and (when the operator enables test hooks) injected faults. A real provider keeps the same shape and swaps
 * the in-memory parts for calls to its cloud's API through host->http_request.
 */
#ifndef SKELETON_H
#define SKELETON_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nodesmith/provider.h>

#define SK_N_ZONES 3
#define SK_N_CAPACITY_TYPES 2
#define SK_N_OFFERINGS (SK_N_ZONES * SK_N_CAPACITY_TYPES)
#define SK_MAX_FAULTS 32

/* One catalog entry with the offerings built for the configured region. */
typedef struct sk_type {
    const char *name;
    const char *arch;
    int64_t vcpu;
    int64_t memory_mib;
    int64_t gpus;
    double on_demand_price;
    ns_label labels[4];
    ns_offering offerings[SK_N_OFFERINGS];
} sk_type;

typedef struct sk_instance {
    char provider_id[NS_PROVIDER_ID_MAX];
    char client_token[NS_NAME_MAX];
    char instance_type[NS_NAME_MAX];
    char zone[NS_ZONE_MAX];
    char capacity_type[NS_CAPACITY_TYPE_MAX];
    char nodeclaim_name[NS_NAME_MAX];
    char nodepool_name[NS_NAME_MAX];
    char nodeclass_name[NS_NAME_MAX];
    int64_t launch_time_ms;
    ns_resources allocatable;
    bool terminated;
} sk_instance;

/* An injected fault that applies to method calls (throttle, fail, delay); insufficient-capacity faults name an
 * offering instead. */
typedef struct sk_fault {
    ns_fault_kind kind;
    char method[32]; /* empty: every method */
    char instance_type[NS_NAME_MAX];
    char zone[NS_ZONE_MAX];
    char capacity_type[NS_CAPACITY_TYPE_MAX];
    uint32_t remaining;
    ns_err error;
    int64_t delay_ms;
} sk_fault;

typedef struct sk_event_node {
    ns_event event;
    struct sk_event_node *next;
} sk_event_node;

typedef struct sk_state {
    const ns_host *host;
    ns_host_ctx *ctx;

    /* Options, read once in init. */
    char region[NS_ZONE_MAX - 2];
    int64_t max_instances;
    bool test_hooks;

    char zones[SK_N_ZONES][NS_ZONE_MAX];
    sk_type *types;
    size_t n_types;

    /* Everything below is guarded by lock. */
    pthread_mutex_t lock;
    sk_instance *instances;
    size_t n_instances;
    size_t cap_instances;
    uint64_t next_serial;
    sk_event_node *events_head;
    sk_event_node *events_tail;
    sk_fault faults[SK_MAX_FAULTS];
    size_t n_faults;
} sk_state;

/* skeleton_catalog.c: builds st->types for st->region; 0 or NS_ERR_INTERNAL (reported). Freed by sk_catalog_free. */
int sk_catalog_build(sk_state *st);
void sk_catalog_free(sk_state *st);
const sk_type *sk_catalog_find(const sk_state *st, const char *name);
/* The offering of `type` in zone x capacity type, or NULL when the catalog has none. */
const ns_offering *sk_catalog_offering(const sk_type *type, const char *zone, const char *capacity_type);
/* Capacity minus the kubelet's reservations and eviction threshold. */
ns_resources sk_catalog_allocatable(const sk_type *type);
int sk_list_instance_types(void *state, const ns_nodeclass *nodeclass, ns_instance_type_cb cb, void *cb_ctx);

/* skeleton_instances.c */
int sk_launch(void *state, const ns_launch_request *req, ns_launch_result *result);
int sk_terminate(void *state, const char *provider_id, bool *already_gone);
int sk_list_instances(void *state, ns_instance_cb cb, void *cb_ctx);
int sk_get_instance(void *state, const char *provider_id, ns_instance *out);
void sk_instances_free(sk_state *st);

/* skeleton_events.c: the queue takes a copy of event. Call with st->lock held. 0 or NS_ERR_INTERNAL (reported). */
int sk_events_push_locked(sk_state *st, const ns_event *event);
int sk_poll_events(void *state, ns_event_cb cb, void *cb_ctx);
void sk_events_free(sk_state *st);

/* skeleton_faults.c */
int sk_test_inject_fault(void *state, const ns_fault *fault);
/* skeleton_nodeclass.c */
int sk_validate_nodeclass(void *state, const ns_nodeclass *nodeclass);
/* Called first by every method: NS_OK, or the error an injected throttle/fail fault asks for (reported). Sleeps for
 * an injected delay. */
int sk_faults_before_call(sk_state *st, const char *method);
/* True when an injected fault says the offering has no capacity. Call with st->lock held. */
bool sk_faults_offering_exhausted_locked(const sk_state *st, const char *type, const char *zone,
                                         const char *capacity_type);

/* Copies src into a fixed-size ABI buffer; false when it does not fit (the ABI forbids truncating identifiers). */
bool sk_copy(char *dst, size_t dst_size, const char *src);

#endif
