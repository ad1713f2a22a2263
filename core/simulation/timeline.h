/*
 * Simulation timelines (docs/timeline.md): steps at simulated times, each with one action on the simulated cluster
 * or cloud. This header holds the parsed form; timeline_run.h applies it to a running engine.
 *
 * Times are milliseconds from the start of the simulation. A step's action applies at at_ms; the step ends at
 * end_ms (at_ms, or the end of the clock advance an `advance` step asks for). `after:` is relative to the previous
 * step's end, and a step may not start before it.
 *
 * Errors: NS_ERR_INVALID_CONFIG with "FILE:LINE: timeline step N: PATH: what is wrong" (the loader's format), for
 * unknown actions and fields as well as malformed values. Inline and file manifests of `add` steps are decoded at
 * load time too, so their errors surface before any simulated time passes, naming their own file and line.
 *
 * Memory: ns_timeline_free frees the timeline and everything its steps own (accepts NULL).
 */
#ifndef NS_TIMELINE_H
#define NS_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "model/selector.h"
#include "model/taints.h"
#include "nodesmith/provider.h"

typedef enum ns_tl_action {
    NS_TL_SCALE = 1,      /* set a workload's replicas */
    NS_TL_ADD,            /* add the objects of a manifest (inline or file) */
    NS_TL_DELETE,         /* delete objects by kind and name, or by label selector */
    NS_TL_PATCH,          /* merge-patch a NodePool, node class, CapacityBuffer or PodTemplate; labels, annotations
                             (and taints) of objects */
    NS_TL_INTERRUPT,      /* queue a cloud event for a node or a NodePool's nodes */
    NS_TL_LAUNCH_FAILURE, /* an offering runs out of capacity (or every such fault is cleared) */
    NS_TL_ADVANCE,        /* run the engine until end_ms */
    NS_TL_NODE_CONDITION, /* set a condition on a node or a NodePool's nodes (a kubelet stops: Ready Unknown) */
    NS_TL_POD_STATUS,     /* a pod's phase (Succeeded, Failed) or start time, as its kubelet reports them */
    NS_TL_LAUNCH_ERROR,   /* the next launches fail with an error other than insufficient capacity */
    NS_TL_LAUNCH_TIMEOUT, /* the next launches hang until the provider call's deadline */
} ns_tl_action;

/* kind, namespace and name of an object; namespace is "default" for namespaced kinds that named none and NULL for
 * cluster-scoped ones. */
typedef struct ns_tl_ref {
    char *kind;
    char *namespace_;
    char *name; /* NULL when a selector picks the objects (delete only) */
} ns_tl_ref;

/* A label or annotation a patch sets, or removes (value NULL, a merge patch's null). */
typedef struct ns_tl_kv {
    char *key;
    char *value;
} ns_tl_kv;

typedef struct ns_tl_step {
    size_t index; /* 0-based position in the file */
    int line;     /* the step's first line */
    char *name;   /* the step's `name`, or NULL */
    int64_t at_ms;
    int64_t end_ms;
    ns_tl_action action;
    int action_line; /* the line of the action's key */

    ns_tl_ref target; /* SCALE, DELETE, PATCH */
    int32_t replicas; /* SCALE */
    ns_label_selector selector; /* DELETE, PATCH of Pods and POD_STATUS by selector (selector.present) */
    int64_t grace_ms;           /* DELETE of Pods: how long they stay Terminating on their nodes (0: gone at once) */

    /* POD_STATUS: status.phase ("Succeeded", "Failed") or NULL; status.startTime (unix ms) or 0 */
    char *phase;
    int64_t start_time_ms;

    /* ADD: the manifest text, padded with newlines so the loader's line numbers are those of `source`. */
    char *manifest_source; /* the file the text came from (the timeline itself for inline manifests) */
    char *manifest_text;
    size_t manifest_len;

    cJSON *patch; /* PATCH of a NodePool, node class, CapacityBuffer or PodTemplate: a JSON merge patch (RFC 7386)
                     of the object; owned */
    /* PATCH of a Node, NodeClaim or Pod (timeline_object_patch.c): the objects are target.name, or a NodePool's
     * Nodes or NodeClaims (nodepool, count), or the Pods `selector` picks in target.namespace_. */
    ns_tl_kv *labels;
    size_t n_labels;
    ns_tl_kv *annotations;
    size_t n_annotations;
    bool set_taints;  /* a Node's spec.taints, replaced whole */
    ns_taint *taints;
    size_t n_taints;
    int unschedulable; /* a Node's spec.unschedulable: 1 true, -1 false, 0 unchanged */

    /* INTERRUPT, NODE_CONDITION, PATCH of Nodes and NodeClaims */
    ns_event_kind event;
    char *node;        /* a node by name, or NULL */
    char *nodepool;    /* every node of this NodePool (the first `count` by name when count > 0), or NULL */
    int32_t count;     /* 0 = all; LAUNCH_ERROR, LAUNCH_TIMEOUT: how many launches fail */
    int64_t deadline_ms; /* relative to the step; 0 = the provider's default */

    /* NODE_CONDITION: the condition set (reason and message may be NULL) */
    char *cond_type;
    char *cond_status;
    char *cond_reason;
    char *cond_message;

    /* LAUNCH_ERROR: the next `count` launches fail with this ns_err category */
    int launch_error;

    /* LAUNCH_FAILURE: NULL matches any value */
    bool clear;
    char *instance_type;
    char *zone;
    char *capacity_type;
} ns_tl_step;

/* Engine settings a timeline may override (docs/timeline.md, "engine"); -1 (or, for act_on_rebalance, 0) = keep
 * the engine's default. Durations in milliseconds. */
typedef struct ns_tl_engine_settings {
    int64_t tick_ms;
    int64_t registration_delay_ms;
    int64_t initialization_delay_ms;
    int64_t registration_ttl_ms;
    int64_t batch_idle_ms;
    int64_t batch_max_ms;
    int64_t stabilization_ms;
    int64_t orphan_gc_grace_ms;
    int64_t unavailable_offering_ttl_ms;
    int act_on_rebalance; /* 1 true, -1 false, 0 default */
    /* Karpenter's feature gates (top-level featureGates, or engine.spotToSpotConsolidation), as act_on_rebalance */
    int spot_to_spot;     /* SpotToSpotConsolidation: the disruption controller's */
    int node_repair;      /* NodeRepair: the engine's node repair */
    int min_values_policy; /* Karpenter's MIN_VALUES_POLICY (an ns_sched_min_values_policy), -1 = keep */
    int static_capacity;  /* StaticCapacity: NodePools with replicas kept at that many nodes */
    int64_t volume_detach_delay_ms; /* the attach-detach stand-in's detach delay */
    int capacity_buffer;  /* CapacityBuffer: the CapacityBuffers' chunks kept provisioned (warm headroom) */
} ns_tl_engine_settings;

/* The simulated clock's start when a timeline names none: 2026-01-01T00:00:00Z. */
#define NS_TIMELINE_DEFAULT_START_MS INT64_C(1767225600000)

typedef struct ns_timeline {
    char *path;        /* as given */
    char *description; /* or NULL */
    int64_t start_ms;  /* unix ms of simulated time 0 (`start`, RFC 3339) */
    ns_tl_engine_settings engine;
    ns_tl_step *steps;
    size_t n_steps;
    int64_t end_ms; /* the last step's end */
} ns_timeline;

struct ns_nodeclass_kinds;
/* Parses a timeline file; relative `file:` paths of add steps are taken from the timeline's directory. `kinds` are
 * the loaded providers' node-class kinds, which add and patch steps may name (borrowed). *out is owned by the
 * caller. */
int ns_timeline_load_file(const char *path, const struct ns_nodeclass_kinds *kinds, ns_timeline **out);
/* The same for an in-memory text; `name` stands for the file in messages and relative paths are taken from the
 * current directory. */
int ns_timeline_load_string(const char *name, const char *text, size_t len, const struct ns_nodeclass_kinds *kinds,
                            ns_timeline **out);
void ns_timeline_free(ns_timeline *t); /* accepts NULL */

/* "scale", "add", "delete", "patch", "interrupt", "launchFailure", "advance", "nodeCondition", "podStatus",
 * "launchError", "launchTimeout": the key each action is written as. */
const char *ns_tl_action_name(ns_tl_action a);
/* The event's name as timelines write it ("SpotInterruption", ...). */
const char *ns_tl_event_name(ns_event_kind e);
/* One line for logs and reports: "scale Deployment default/inflate to 10 replicas". Always NUL-terminates. */
void ns_tl_step_describe(const ns_tl_step *s, char *buf, size_t len);

#endif
