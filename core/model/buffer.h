/*
 * Warm headroom: the CapacityBuffer API (autoscaling.x-k8s.io, as Karpenter's CapacityBuffer feature and the
 * Cluster Autoscaler read it) and the PodTemplates a buffer names. A buffer asks for `chunks` placeholder pods of a
 * template's shape; provisioning places them as virtual pods (never bound, never written), so spare capacity of that
 * shape stays ready (core/engine/engine_headroom.c, docs/cost.md "Warm headroom").
 *
 * Memory: the cluster owns buffers and templates added to it (ns_cluster_add_buffer, ns_cluster_add_pod_template take
 * ownership even on failure); the free functions accept NULL.
 */
#ifndef NS_BUFFER_H
#define NS_BUFFER_H

#include <stdbool.h>
#include <stdint.h>

#include "model/meta.h"
#include "model/pod.h"
#include "model/resources.h"

/* The only provisioning strategy Karpenter implements (and the API's default). */
#define NS_BUFFER_ACTIVE_STRATEGY "buffer.x-k8s.io/active-capacity"

/* The WARN lines of a buffer kept with resolution_failed, and of one whose percentage is ignored (has_percentage with a
 * pod_template): simulate's loader and the controller log the same words. */
#define NS_BUFFER_UNRESOLVABLE_MESSAGE "CapacityBuffer is not ReadyForProvisioning: no chunk is provisioned for it"
#define NS_BUFFER_PERCENTAGE_IGNORED_MESSAGE "ignoring spec.percentage: it applies to a scalableRef only"

/* Which base resources spec.limits lists (a listed 0 caps at 0 chunks; an absent resource caps nothing). */
enum { NS_BUFFER_LIMIT_CPU = 1, NS_BUFFER_LIMIT_MEMORY = 2, NS_BUFFER_LIMIT_PODS = 4, NS_BUFFER_LIMIT_STORAGE = 8 };

typedef struct ns_buffer {
    ns_meta meta;          /* namespaced */
    char *pod_template;    /* spec.podTemplateRef.name: a PodTemplate in the buffer's namespace; or NULL and: */
    const char *scalable_kind; /* spec.scalableRef.kind (static: "Deployment", "StatefulSet" or "ReplicaSet", of
                                  group apps, the kinds Karpenter resolves); NULL when resolution_failed */
    char *scalable_name;   /* spec.scalableRef.name: that workload in the buffer's namespace */
    /* Karpenter's resolver's error for a scalableRef to a group or kind it does not read (`unsupported kind "Job"`,
     * `unsupported scalableRef API group "batch"`), or NULL. Such a buffer is kept, with no scalable_kind and no
     * chunks: Karpenter writes it ReadyForProvisioning False, ResolutionFailed, with this message. */
    char *resolution_failed;
    bool has_replicas;
    int32_t replicas;      /* spec.replicas */
    bool has_percentage;
    int32_t percentage;    /* spec.percentage: of the scalableRef's replicas (ignored with a podTemplateRef) */
    bool has_limits;
    ns_res limits;         /* spec.limits; base resources listed in limits_set, extended ones in limits.ext */
    unsigned limits_set;
} ns_buffer;

/* A core/v1 PodTemplate: its template as a pod (no name, the template's labels, annotations and spec). */
typedef struct ns_pod_template {
    ns_meta meta;
    ns_pod *pod; /* owned */
} ns_pod_template;

ns_buffer *ns_buffer_new(void); /* NULL on allocation failure */
void ns_buffer_free(ns_buffer *b);
ns_pod_template *ns_pod_template_new(void);
void ns_pod_template_free(ns_pod_template *t);

/* How many chunks of `tmpl` the buffer asks for, as Karpenter's computeReplicas does: the larger of the replicas
 * and, for a scalableRef whose workload asks for `scalable_replicas` > 0, the percentage of them
 * (ceil(scalable_replicas * percentage / 100), at least 1 when the percentage is > 0), capped by the limits (for each
 * limited resource the template requests, floor(limit/request), the least of them); limits alone give as many chunks
 * as they hold. Limits naming no resource the template requests cap nothing. */
int64_t ns_buffer_chunks(const ns_buffer *b, const ns_pod *tmpl, int32_t scalable_replicas);

#endif
