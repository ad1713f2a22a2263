/*
 * Pods as the scheduler sees them, with Kubernetes' effective resource requests.
 *
 * Memory: an ns_pod and everything it points to is owned by the pod; ns_pod_free frees it all (accepts NULL).
 */
#ifndef NS_POD_H
#define NS_POD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/meta.h"
#include "model/requirements.h"
#include "model/resources.h"
#include "model/selector.h"
#include "model/taints.h"
#include "nodesmith/provider.h"

typedef struct ns_container {
    char *name;
    /* As written, after Kubernetes' defaulting: a resource with a limit and no request requests the limit. */
    ns_res requests;
    ns_res limits;
    bool sidecar; /* an init container with restartPolicy: Always (runs alongside the app containers) */
} ns_container;

typedef struct ns_host_port {
    char ip[64];      /* hostIP; "0.0.0.0" when unset (all addresses) */
    int32_t port;     /* hostPort */
    char protocol[8]; /* TCP (default), UDP or SCTP */
} ns_host_port;

/* One nodeSelectorTerm: its expressions and fields are ANDed. */
typedef struct ns_node_selector_term {
    ns_selector_req *exprs; /* matchExpressions (node labels) */
    size_t n_exprs;
    ns_selector_req *fields; /* matchFields; Kubernetes only allows metadata.name */
    size_t n_fields;
} ns_node_selector_term;

typedef struct ns_preferred_node_term {
    int32_t weight; /* 1..100 */
    ns_node_selector_term term;
} ns_preferred_node_term;

typedef struct ns_pod_affinity_term {
    ns_label_selector selector; /* labelSelector; absent selects no pods */
    char **namespaces;          /* empty with no namespace_selector = the pod's own namespace */
    size_t n_namespaces;
    ns_label_selector namespace_selector;
    char *topology_key;
    char **match_label_keys;
    size_t n_match_label_keys;
    char **mismatch_label_keys;
    size_t n_mismatch_label_keys;
} ns_pod_affinity_term;

typedef struct ns_weighted_pod_affinity_term {
    int32_t weight; /* 1..100 */
    ns_pod_affinity_term term;
} ns_weighted_pod_affinity_term;

typedef struct ns_affinity {
    /* Node affinity. Required terms are ORed; when has_node_required is set with zero terms nothing matches. */
    bool has_node_required;
    ns_node_selector_term *node_required;
    size_t n_node_required;
    ns_preferred_node_term *node_preferred;
    size_t n_node_preferred;
    /* Pod affinity and anti-affinity. */
    ns_pod_affinity_term *pod_required;
    size_t n_pod_required;
    ns_weighted_pod_affinity_term *pod_preferred;
    size_t n_pod_preferred;
    ns_pod_affinity_term *anti_required;
    size_t n_anti_required;
    ns_weighted_pod_affinity_term *anti_preferred;
    size_t n_anti_preferred;
} ns_affinity;

typedef enum ns_when_unsatisfiable {
    NS_DO_NOT_SCHEDULE = 0,
    NS_SCHEDULE_ANYWAY = 1,
} ns_when_unsatisfiable;

typedef enum ns_inclusion_policy {
    NS_POLICY_HONOR = 0,
    NS_POLICY_IGNORE = 1,
} ns_inclusion_policy;

typedef struct ns_topology_spread {
    int32_t max_skew; /* >= 1 */
    char *topology_key;
    ns_when_unsatisfiable when_unsatisfiable;
    ns_label_selector selector;
    int32_t min_domains;                      /* 0 = not set (Kubernetes treats it as 1) */
    ns_inclusion_policy node_affinity_policy; /* default Honor */
    ns_inclusion_policy node_taints_policy;   /* default Ignore */
    char **match_label_keys;
    size_t n_match_label_keys;
} ns_topology_spread;

/* What a pod's status says of its scheduling, for Karpenter's IsProvisionable. */
typedef enum ns_pod_sched_status {
    /* No conditions and no nominatedNodeName in its status (a hand-written manifest, a pod the simulation made or
     * returned to pending): an unbound pod is pending. */
    NS_POD_STATUS_NONE = 0,
    /* A PodScheduled condition with reason Unschedulable (FailedToSchedule) and no nominatedNodeName. */
    NS_POD_STATUS_UNSCHEDULABLE,
    /* Any other status: the kube-scheduler has not given up on the pod, or is preempting for it; not provisionable. */
    NS_POD_STATUS_OTHER,
} ns_pod_sched_status;

/* A volume backed by a PersistentVolumeClaim: spec.volumes[].persistentVolumeClaim.claimName, or for an ephemeral
 * volume the volume's name, whose claim Kubernetes names POD-VOLUME once the pod has its name (ns_pod_volume_claim). */
typedef struct ns_pod_volume {
    char *claim;
    bool ephemeral;
} ns_pod_volume;

typedef struct ns_pod_spec_resources {
    ns_res overhead; /* spec.overhead */
    /* Pod-level spec.resources (cpu and memory only); when set they replace the containers' aggregate. */
    bool has_requests;
    ns_res requests;
    bool has_limits;
    ns_res limits;
} ns_pod_spec_resources;

typedef struct ns_pod {
    ns_meta meta;
    ns_container *containers;
    size_t n_containers;
    ns_container *init_containers; /* in start order */
    size_t n_init_containers;
    /* spec.overhead and pod-level spec.resources, which few pods set: NULL when the pod sets none (kept out of line
     * so the informer's cache of many pods stays small). Owned. */
    ns_pod_spec_resources *spec_resources;
    /* Effective requests and limits, from ns_pod_compute_requests: max(max over init containers (each plus the
     * sidecars started before it), sum(containers) + sum(sidecars)) + overhead, with pods = 1 in requests. */
    ns_res requests;
    ns_res limits;
    ns_labels node_selector;
    ns_affinity affinity;
    ns_toleration *tolerations;
    size_t n_tolerations;
    ns_topology_spread *spread;
    size_t n_spread;
    ns_host_port *host_ports;
    size_t n_host_ports;
    ns_pod_volume *volumes; /* the volumes backed by claims, in spec order (volume topology) */
    size_t n_volumes;
    char *priority_class_name;
    bool has_priority;
    bool scheduling_gated; /* spec.schedulingGates is non-empty: not schedulable yet */
    uint8_t sched_status;  /* ns_pod_sched_status */
    /* Annotation karpenter.sh/do-not-disrupt: 0 when absent or invalid (Karpenter ignores an invalid value),
     * NS_DO_NOT_DISRUPT_ALWAYS for "true", else the duration (a Go duration > 0) it protects the pod for after it
     * started. Read it through ns_pod_do_not_disrupt. */
    int64_t do_not_disrupt_ms;
    /* Set by ns_pod_pack: the pod and its strings and arrays live in one block (affinity, spread and host ports
     * excepted), its names from bounded sets are interned; read-only but for its binding (ns_pod_set_binding), freed
     * by ns_pod_free. */
    bool packed;
    bool node_name_owned; /* packed pods: node_name was set by ns_pod_set_binding and is no longer in the block */
    /* Packed pods: the share (model/pod_share.h) that affinity and spread point into; NULL when the pod has neither
     * or is not packed. */
    struct ns_pod_share *share;
    int32_t priority;
    char *preemption_policy; /* NULL = PreemptLowerPriority */
    char *node_name;         /* spec.nodeName: bound to this node */
    char *scheduler_name;    /* NULL = default-scheduler */
    char *phase;             /* status.phase; NULL when absent */
    int64_t termination_grace_period_s; /* -1 = not set (Kubernetes default 30) */
    /* When the pod last became pending (PodScheduled=False lastTransitionTime), unix ms; 0 = before the engine ran
     * (loaded from manifests). Provisioning batches on it. */
    int64_t pending_since_ms;
    int64_t start_ms; /* status.startTime, unix ms (the kubelet's, or the simulated bind); 0 = unknown */
} ns_pod;

#define NS_DO_NOT_DISRUPT_ALWAYS INT64_MAX

/* Karpenter's IsDoNotDisruptActive: "true" protects always; a duration protects until start + duration, and for
 * ever while the start time is unknown (fail safe). */
bool ns_pod_do_not_disrupt(const ns_pod *pod, int64_t now_ms);

/* The PersistentVolumeClaim name of volume v into buf ("" when it does not fit); returns buf. */
const char *ns_pod_volume_claim(const ns_pod *pod, const ns_pod_volume *v, char *buf, size_t len);

/* A zeroed pod with termination_grace_period_s = -1; NULL with NS_ERR_INTERNAL recorded on allocation failure. */
ns_pod *ns_pod_new(void);
void ns_pod_free(ns_pod *pod); /* the pod and everything it owns; accepts NULL */
/* A deep copy of src (the caller's; free with ns_pod_free), or NULL with NS_ERR_INTERNAL recorded. */
ns_pod *ns_pod_copy(const ns_pod *src);
/* The pod's spec_resources, allocated zeroed on first use; NULL with NS_ERR_INTERNAL recorded when out of memory. */
ns_pod_spec_resources *ns_pod_spec_resources_get(ns_pod *pod);

/* A packed copy of *pod for models holding many pods (the informer's cache, simulate's cluster): one allocation
 * holds the pod, its arrays and its strings; strings from bounded sets (namespace, label and annotation keys, owner kind, container names,
 * tolerations, nodeSelector, finalizers, scheduler and priority class names, preemption policy, phase) are interned
 * (model/intern.h), the rest (name, label and annotation values, owner name, node name) are copied in. Affinity and
 * spread constraints are shared with the packed pods that have equal ones (model/pod_share.h); host ports and
 * spec_resources are moved from *pod, not copied. *pod is consumed (freed, also
 * on failure). A packed pod is read-only: copy it with ns_pod_copy to change it; ns_pod_free frees it. NULL with
 * NS_ERR_INTERNAL recorded when out of memory. */
ns_pod *ns_pod_pack(ns_pod *pod);

/* Sets spec.nodeName (NULL: unbound) and status.phase (NULL: absent) of a pod, packed or not: what a cluster's
 * writes change on a pod they bind, or return to pending (its sched_status then NONE: the status it was loaded with
 * no longer describes it). 0, or NS_ERR_INTERNAL naming the pod when out of memory
 * (the pod is unchanged then). */
int ns_pod_set_binding(ns_pod *pod, const char *node_name, const char *phase);

/* Computes pod->requests and pod->limits from the containers, overhead and pod-level resources (see above).
 * NS_ERR_INTERNAL when out of memory; NS_ERR_INVALID_CONFIG naming the resource when a sum does not fit in 64 bits
 * (the message does not name the pod: the caller does). */
int ns_pod_compute_requests(ns_pod *pod);

/* Scheduling requirements of the pod for provisioning, as Karpenter builds them: nodeSelector, plus required node
 * affinity term `required_term` (terms are ORed; the scheduler tries them one at a time, -1 = none), plus, when
 * `preferred_term` >= 0, the preferred term at that index of the weight-sorted order (ns_pod_preferred_order). */
int ns_pod_node_requirements(const ns_pod *pod, int required_term, int preferred_term, ns_requirements *out);
/* Indices of affinity.node_preferred sorted by weight, heaviest first (stable). *out has n_node_preferred entries,
 * allocated; free with free(). 0 or NS_ERR_INTERNAL. */
int ns_pod_preferred_order(const ns_pod *pod, size_t **out);

/* Kubernetes' node-affinity filter against an existing node: nodeSelector matches and, when required terms exist,
 * at least one term matches (matchFields compare metadata.name with node_name). On false, reason (may be NULL)
 * says what failed. */
bool ns_pod_matches_node(const ns_pod *pod, const ns_label *labels, size_t n_labels, const char *node_name,
                         char *reason, size_t reason_len);

/* ns_taints_tolerated with the pod's tolerations. */
bool ns_pod_tolerates(const ns_pod *pod, const ns_taint *taints, size_t n, const ns_taint *ignored, size_t n_ignored,
                      unsigned flags, char *reason, size_t reason_len);

/* True when the pod's controlling owner has this kind ("DaemonSet", "StatefulSet", "Node", ...). */
bool ns_pod_owned_by(const ns_pod *pod, const char *kind);

/* Members-only free helpers for the affinity parts (used by the manifest decoder on error paths). */
void ns_node_selector_term_free(ns_node_selector_term *t);
void ns_pod_affinity_term_free(ns_pod_affinity_term *t);
void ns_affinity_free(ns_affinity *a);
void ns_topology_spread_free(ns_topology_spread *s);
void ns_container_free(ns_container *c);
void ns_pod_spec_resources_free(ns_pod_spec_resources *r); /* and the struct; accepts NULL */

#endif
