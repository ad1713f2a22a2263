/*
 * The manifests a timeline runs over, kept as JSON documents for the objects a timeline step may need to decode
 * again: workloads (to start pods of a workload that never had one) and NodePools and node classes (to patch them).
 * (v1alpha5 Provisioners count as NodePools here.) The cluster holds the decoded objects; this registry holds what they were decoded from.
 *
 * Memory: the registry owns its documents; ns_tl_sources_free frees them (accepts NULL). Returned documents belong to
 * the registry and stay valid until the entry is replaced or the registry freed.
 */
#ifndef NS_TIMELINE_SOURCES_H
#define NS_TIMELINE_SOURCES_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "model/labels.h"

typedef struct ns_tl_sources ns_tl_sources;

/* An empty registry; NULL with NS_ERR_INTERNAL recorded on allocation failure. */
ns_tl_sources *ns_tl_sources_new(void);
void ns_tl_sources_free(ns_tl_sources *s);

/* Records the workloads, NodePools and node classes of a manifest text (every document; List items too). A later
 * object of the same kind, namespace and name replaces the earlier one. `name` stands for the file in messages.
 * The text is expected to have loaded into the cluster already; its YAML errors are reported as the loader does. */
int ns_tl_sources_add_text(ns_tl_sources *s, const char *name, const char *text, size_t len);
/* The same for a file, or each *.yaml, *.yml and *.json file directly inside a directory, in byte order of their
 * names (as ns_manifest_load_path reads them). */
int ns_tl_sources_add_path(ns_tl_sources *s, const char *path);

/* The document of kind/namespace/name (namespace NULL for cluster-scoped kinds, "default" when a namespaced object
 * named none), or NULL. */
const cJSON *ns_tl_sources_get(const ns_tl_sources *s, const char *kind, const char *ns, const char *name);
/* Replaces the document (takes ownership of doc, even on failure). NS_ERR_NOT_FOUND when there is no such entry. */
int ns_tl_sources_replace(ns_tl_sources *s, const char *kind, const char *ns, const char *name, cJSON *doc);
/* Forgets an entry; no-op when absent. */
void ns_tl_sources_remove(ns_tl_sources *s, const char *kind, const char *ns, const char *name);
/* Names of the entries of kind in namespace ns whose metadata.labels satisfy `match` (called with each entry's
 * labels). *out is a malloc'd array of pointers into the registry (free the array only); valid until the registry
 * changes. */
int ns_tl_sources_select(const ns_tl_sources *s, const char *kind, const char *ns,
                         bool (*match)(const ns_labels *labels, const void *ctx), const void *ctx,
                         const char ***out, size_t *n);

/* Applies a JSON merge patch (RFC 7386) to *target, in place: objects merge key by key, null removes a key, any
 * other value replaces. 0 or NS_ERR_INTERNAL. */
int ns_json_merge_patch(cJSON **target, const cJSON *patch);

#endif
