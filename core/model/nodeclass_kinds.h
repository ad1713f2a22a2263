/*
 * The node-class kinds the core accepts: exactly those the loaded providers declare (ABI 3's nodeclass_kinds). The
 * core itself names no cloud's kind; whoever loads providers builds one of these from them (ns_plugin_declare_kinds)
 * and gives it to the cluster the manifests are loaded into (ns_cluster_set_kinds).
 *
 * Each kind remembers the provider that declared it and a validator (the provider's validate_nodeclass, through the
 * core's wrapper), which the manifest loader calls on every node class it loads or reloads after a patch, so a bad
 * node class is refused with the provider's message before anything is launched with it.
 *
 * A provider of an older ABI declares no kinds: it is registered as taking any kind of a custom API group (not a
 * Kubernetes group, *.k8s.io or *.kubernetes.io) that no ABI-3 provider declares.
 *
 * Not thread-safe to modify; read-only use from several threads is safe once built.
 */
#ifndef NS_NODECLASS_KINDS_H
#define NS_NODECLASS_KINDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodesmith/provider.h"

/* Checks one node class; NS_OK or an error recorded with the thread's error record. */
typedef int (*ns_nodeclass_validate_fn)(void *owner, const ns_nodeclass *nodeclass);

struct ns_req_defaults;

typedef struct ns_nodeclass_kind_info {
    char *provider;    /* the declaring provider's name */
    char *group;       /* NULL for an any-kind entry */
    char *version;
    char *kind;
    char *api_version; /* group "/" version */
    uint32_t flags;    /* NS_NODECLASS_* */
    bool any_kind;     /* a pre-ABI-3 provider's entry */
    void *owner;
    ns_nodeclass_validate_fn validate; /* may be NULL (the provider has no validate_nodeclass) */
    /* The declaring provider's requirement defaults for v1alpha5 Provisioners (ABI 6), borrowed from whoever set
     * them (ns_nodeclass_kinds_set_v1alpha5_defaults); NULL = none. */
    const struct ns_req_defaults *v1alpha5_defaults;
} ns_nodeclass_kind_info;

typedef struct ns_nodeclass_kinds ns_nodeclass_kinds;

/* NULL with NS_ERR_INTERNAL recorded on allocation failure. Free with ns_nodeclass_kinds_free (accepts NULL). */
ns_nodeclass_kinds *ns_nodeclass_kinds_new(void);
void ns_nodeclass_kinds_free(ns_nodeclass_kinds *k);

/* Adds one declared kind. NS_ERR_INVALID_CONFIG naming the provider when the declaration is malformed (group,
 * version or kind empty or not a Kubernetes name, a group of Kubernetes' own, unknown flag bits) or when another
 * provider already declared the same group, version and kind, or the same default-reference flag. */
int ns_nodeclass_kinds_add(ns_nodeclass_kinds *k, const char *provider, const ns_nodeclass_kind *decl, void *owner,
                           ns_nodeclass_validate_fn validate);
/* Registers a provider that declares no kinds (ABI 1 or 2). At most one; a second is NS_ERR_INVALID_CONFIG. */
int ns_nodeclass_kinds_add_any(ns_nodeclass_kinds *k, const char *provider, void *owner,
                               ns_nodeclass_validate_fn validate);

/* Gives every entry of `provider` its requirement defaults for v1alpha5 Provisioners (borrowed: d must outlive the
 * registry). */
void ns_nodeclass_kinds_set_v1alpha5_defaults(ns_nodeclass_kinds *k, const char *provider,
                                              const struct ns_req_defaults *d);
/* The v1alpha5 requirement defaults of the provider declaring `kind` (of `group` when not NULL, any version); NULL
 * when no provider declares it or its provider declares none. */
const struct ns_req_defaults *ns_nodeclass_kinds_v1alpha5_defaults(const ns_nodeclass_kinds *k, const char *group,
                                                                   const char *kind);

/* The entry for apiVersion + kind: a declared kind, else the any-kind provider's entry when the group is a custom
 * one and no provider declares the kind under another version; NULL otherwise. k may be NULL (nothing accepted). */
const ns_nodeclass_kind_info *ns_nodeclass_kinds_find(const ns_nodeclass_kinds *k, const char *api_version,
                                                      const char *kind);
/* True when some provider declares `kind` under any version. */
bool ns_nodeclass_kinds_knows(const ns_nodeclass_kinds *k, const char *kind);
/* The apiVersions declared for `kind`, ", "-separated, into buf. */
const char *ns_nodeclass_kinds_versions(const ns_nodeclass_kinds *k, const char *kind, char *buf, size_t len);
/* Every declared kind, "Kind (apiVersion)" ", "-separated, into buf ("none" when empty). */
const char *ns_nodeclass_kinds_describe(const ns_nodeclass_kinds *k, char *buf, size_t len);
/* The kind declared with `flag` (NS_NODECLASS_DEFAULT_V1BETA1_REF or NS_NODECLASS_DEFAULT_V1ALPHA5_REF); NULL when
 * no provider declares one. */
const ns_nodeclass_kind_info *ns_nodeclass_kinds_default(const ns_nodeclass_kinds *k, uint32_t flag);
/* Entries in declaration order, for listing (`nodesmith plugins`). */
size_t ns_nodeclass_kinds_count(const ns_nodeclass_kinds *k);
const ns_nodeclass_kind_info *ns_nodeclass_kinds_at(const ns_nodeclass_kinds *k, size_t i);

#endif
