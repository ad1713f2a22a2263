/*
 * Label maps (metadata.labels, nodeSelector, annotations) and the well-known node labels Karpenter knows.
 *
 * An ns_labels owns its keys and values (the ns_label fields are const only because the struct is shared with the
 * provider ABI) and keeps them sorted by key, so iteration order is deterministic.
 */
#ifndef NS_LABELS_H
#define NS_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#include "nodesmith/provider.h"

/* Well-known label keys. */
#define NS_LABEL_ZONE "topology.kubernetes.io/zone"
#define NS_LABEL_REGION "topology.kubernetes.io/region"
#define NS_LABEL_INSTANCE_TYPE "node.kubernetes.io/instance-type"
#define NS_LABEL_ARCH "kubernetes.io/arch"
#define NS_LABEL_OS "kubernetes.io/os"
#define NS_LABEL_HOSTNAME "kubernetes.io/hostname"
#define NS_LABEL_WINDOWS_BUILD "node.kubernetes.io/windows-build"
#define NS_LABEL_CAPACITY_TYPE "karpenter.sh/capacity-type"
#define NS_LABEL_NODEPOOL "karpenter.sh/nodepool"
#define NS_LABEL_INITIALIZED "karpenter.sh/initialized"
#define NS_LABEL_REGISTERED "karpenter.sh/registered"
#define NS_ANNOTATION_DO_NOT_DISRUPT "karpenter.sh/do-not-disrupt"

typedef struct ns_labels {
    ns_label *items; /* sorted by key; keys unique; strings owned */
    size_t n;
    size_t cap;
} ns_labels;

/* Sets key=value (copies both), replacing an existing value. 0 or NS_ERR_INTERNAL. */
int ns_labels_set(ns_labels *l, const char *key, const char *value);
/* The value for key, or NULL. */
const char *ns_labels_get(const ns_labels *l, const char *key);
/* Removes key if present. */
void ns_labels_remove(ns_labels *l, const char *key);
/* ns_labels_set, or ns_labels_remove when value is NULL (a merge patch's null). 0 or NS_ERR_INTERNAL. */
int ns_labels_assign(ns_labels *l, const char *key, const char *value);
/* Deep copy into *dst (which must be empty or zeroed). 0 or NS_ERR_INTERNAL; on failure *dst is empty. */
int ns_labels_copy(const ns_labels *src, ns_labels *dst);
/* Frees the members; accepts NULL. The struct is left empty and reusable. */
void ns_labels_free(ns_labels *l);

/* Lookup in any key/value array (sorted or not, for example an ns_itype's labels). NULL when absent. */
const char *ns_label_find(const ns_label *labels, size_t n, const char *key);

/* The stable key for a legacy alias (beta.kubernetes.io/arch -> kubernetes.io/arch,
 * failure-domain.beta.kubernetes.io/zone -> topology.kubernetes.io/zone, ...), or key itself. */
const char *ns_label_normalize(const char *key);

/* True for Karpenter's well-known labels: karpenter.sh/nodepool, zone, region, instance type, arch, os,
 * karpenter.sh/capacity-type and windows-build. */
bool ns_label_is_well_known(const char *key);
/* Karpenter 1.14's IsRestrictedLabel: a label that is not well-known may not appear in a NodePool's template labels
 * or requirements when it is in the karpenter.sh domain (or a sub-domain of it) or is kubernetes.io/hostname.
 * On true, *why explains in a static string. */
bool ns_label_is_restricted(const char *key, const char **why);

#endif
