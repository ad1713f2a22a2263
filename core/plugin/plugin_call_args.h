/*
 * One provider call as the watchdog runs it (plugin_watchdog.h): its arguments, copied so that a call the watchdog
 * abandons never reads the caller's memory; its results, which the call owns until the caller reads them; and the
 * callbacks through which the provider reaches the caller, refused once the call was abandoned.
 */
#ifndef NS_PLUGIN_CALL_ARGS_H
#define NS_PLUGIN_CALL_ARGS_H

#include <stdbool.h>
#include <string.h>

#include "plugin/plugin_copies.h"
#include "plugin/plugin_internal.h"
#include "plugin/plugin_watchdog.h"

/* An event kind this core knows how to act on (provider.h's ns_event_kind, up to ABI 7's). */
static inline bool ns_event_kind_known(ns_event_kind k)
{
    return k >= NS_EVENT_SPOT_INTERRUPTION && k <= NS_EVENT_CAPACITY_RESERVATION_INTERRUPTION;
}

/* Copies a provider struct of possibly different size into a zeroed full-size one. */
#define COPY_VERSIONED(dst, src)                                                                                       \
    do {                                                                                                               \
        memset(&(dst), 0, sizeof(dst));                                                                                \
        size_t n_ = (src)->struct_size < sizeof(dst) ? (src)->struct_size : sizeof(dst);                               \
        memcpy(&(dst), (src), n_);                                                                                     \
        (dst).struct_size = sizeof(dst);                                                                               \
    } while (0)

/* Carries the caller's callback through the provider. A non-zero value the caller's callback returns is the
 * caller's to interpret (its own error, or "stop"), so it passes back untouched rather than through finish(). */
typedef struct trampoline {
    ns_plugin *p;
    union {
        ns_instance_type_cb instance_type;
        ns_instance_cb instance;
        ns_event_cb event;
        ns_repair_policy_cb repair_policy;
        ns_requirement_default_cb requirement_default;
    } cb;
    void *cb_ctx;
    int stopped_with;
} trampoline;

/* get_instance over list_instances (ABI 1 has no get_instance): the ID sought and where the match goes. */
typedef struct find_ctx {
    const char *provider_id;
    ns_instance *out;
    bool found;
} find_ctx;

typedef enum method_id {
    M_INIT,
    M_DESTROY,
    M_LIST_INSTANCE_TYPES,
    M_LAUNCH,
    M_TERMINATE,
    M_LIST_INSTANCES,
    M_GET_INSTANCE,
    M_POLL_EVENTS,
    M_CHECK_DRIFT,
    M_VALIDATE_NODECLASS,
    M_LIST_REPAIR_POLICIES,
    M_TEST_INJECT_FAULT,
    M_NODECLASS_STATUS,
    M_EVENT_FROM_NODE_CONDITION,
    M_V1ALPHA5_DEFAULTS,
} method_id;

/* One call's arguments and results, owned by the call (freed by the watchdog when both sides are done). */
typedef struct call_args {
    method_id method;
    ns_provider table; /* the plugin's table as the loader copied it */
    void *state;
    ns_host_ctx *host_ctx;
    ns_copies copies;
    trampoline t;
    ns_nodeclass nodeclass;
    ns_launch_request request;
    ns_fault fault;
    ns_instance instance;
    const char *provider_id;
    ns_node_condition condition;
    /* results */
    void *new_state;
    ns_launch_result result;
    ns_instance out;
    bool flag;
    char reason[NS_DETAIL_MAX];
    ns_json *status; /* nodeclass_status's document, freed with the call unless the caller took it */
    ns_event event;  /* event_from_node_condition's answer (flag: whether it is one) */
    find_ctx find; /* get_instance's fallback over list_instances */
} call_args;

/* A call_args for `method` on plugin p, with the plugin's table, state and host context; NULL when out of memory
 * (recorded). Free with ns_call_args_free (accepts NULL) only while no call holds it. */
call_args *ns_call_args_new(ns_plugin *p, method_id method);
void ns_call_args_free(void *args);

/* Runs the call under the watchdog with the plugin's deadline. *h is the caller's reference to the call (read a's
 * results, then ns_call_release); when *h is NULL the call did not start and a is already freed. A call the
 * watchdog abandoned marks the plugin, so its state is never destroyed under it. */
int ns_call_args_run(ns_plugin *p, call_args *a, ns_call **h);

#endif
