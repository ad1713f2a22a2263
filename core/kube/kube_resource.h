/*
 * The API resources nodesmith reads and writes, and the URL paths that name them.
 *
 * The built-in table covers what Karpenter watches (research §1.1): Pods, Nodes, NodePools, NodeClaims,
 * DaemonSets, PDBs, StorageClasses, PVs, PVCs, Leases, Deployments, ReplicaSets, StatefulSets, Events, and what
 * kube-scheduler deduces a default topology spread's selector from (Services, ReplicationControllers). Node classes
 * are not in it: the loaded providers declare their kinds, and ns_kube_resource_nodeclass builds a descriptor for
 * one (the core names no cloud).
 */
#ifndef NS_KUBE_RESOURCE_H
#define NS_KUBE_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ns_kube_resource {
    const char *group;    /* "" for the core group */
    const char *version;  /* "v1" */
    const char *resource; /* plural, lower case: "pods" */
    const char *kind;     /* "Pod" */
    bool namespaced;
} ns_kube_resource;

extern const ns_kube_resource NS_KUBE_PODS, NS_KUBE_NODES, NS_KUBE_NODEPOOLS, NS_KUBE_NODECLAIMS,
    NS_KUBE_DAEMONSETS, NS_KUBE_PDBS, NS_KUBE_STORAGECLASSES, NS_KUBE_PVS, NS_KUBE_PVCS, NS_KUBE_VOLUMEATTACHMENTS, NS_KUBE_LEASES,
    NS_KUBE_DEPLOYMENTS, NS_KUBE_REPLICASETS, NS_KUBE_STATEFULSETS, NS_KUBE_EVENTS, NS_KUBE_NAMESPACES,
    NS_KUBE_SERVICES, NS_KUBE_REPLICATIONCONTROLLERS, NS_KUBE_PODTEMPLATES;

/* Karpenter's v1alpha5 Provisioner, read (converted into a NodePool) only on clusters whose CRDs still serve it: not
 * in the built-in table, which lists what is always there. */
extern const ns_kube_resource NS_KUBE_PROVISIONERS;
/* CapacityBuffers (autoscaling.x-k8s.io/v1beta1, the CRD Karpenter ships), read only with the CapacityBuffer gate on
 * and when the API server serves them. */
extern const ns_kube_resource NS_KUBE_CAPACITYBUFFERS;

/* Every built-in resource above, NULL-ended. */
extern const ns_kube_resource *const ns_kube_builtin_resources[];

/* The built-in resource of `kind` (and apiVersion "group/version" or "v1" when not NULL), or NULL. */
const ns_kube_resource *ns_kube_resource_by_kind(const char *api_version, const char *kind);

/* A cluster-scoped custom resource for a node-class kind a provider declares: group, version and kind as the
 * provider gives them; the plural is Kubernetes' default (lower-case kind + "s", "es" after s/x/ch/sh, "ies" after
 * a consonant + y), which is what every Karpenter node-class CRD uses. Strings are copied into *out's own storage
 * (`buf`, kept alive by the caller, at least 256 bytes). 0 or NS_ERR_INVALID_ARGUMENT when they do not fit. */
int ns_kube_resource_nodeclass(const char *group, const char *version, const char *kind, char *buf, size_t len,
                               ns_kube_resource *out);

/* "/api/v1/namespaces/NS/pods/NAME/SUB" and the like into buf; namespace NULL for all namespaces (or a
 * cluster-scoped kind), name and sub may be NULL; query (may be NULL) is appended after '?'. Path segments are
 * percent-encoded. 0, or NS_ERR_INVALID_ARGUMENT when buf is too small. */
int ns_kube_path(char *buf, size_t len, const ns_kube_resource *r, const char *namespace_, const char *name,
                 const char *sub, const char *query);

/* "group/version" or "version" for the core group. */
void ns_kube_api_version(const ns_kube_resource *r, char *buf, size_t len);

#endif
