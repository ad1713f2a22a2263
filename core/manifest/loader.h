/*
 * Loading Kubernetes manifests (multi-document YAML or JSON) into an ns_cluster.
 *
 * Kinds (apiVersion: kind):
 *   v1: Pod, Node, List (its items are loaded in order)
 *   apps/v1: Deployment, ReplicaSet, StatefulSet (expanded into their pods), DaemonSet (kept as a template)
 *   batch/v1: Job (expanded into the pods that run at once)
 *   policy/v1, policy/v1beta1: PodDisruptionBudget
 *   karpenter.sh/v1: NodePool, NodeClaim; karpenter.sh/v1beta1: NodePool (converted to v1)
 *   karpenter.sh/v1alpha5: Provisioner (converted to a v1 NodePool, logged at INFO)
 *   node classes: exactly the kinds the loaded providers declare (the cluster's kinds, ns_cluster_set_kinds), spec
 *   kept as JSON; each is checked by its provider's validate_nodeclass as it is loaded, so a bad node class fails
 *   here with the provider's message, before anything is launched with it.
 * Other kinds are skipped with a WARN log line naming the file, line and kind. A known kind with an unsupported
 * apiVersion, an unknown field, a value of the wrong type or an invalid value is an error
 * (NS_ERR_INVALID_CONFIG) whose message starts with "FILE:LINE: KIND NAME: " and names the field path.
 * docs/manifests.md lists every accepted field.
 *
 * Loading stops at the first error. Objects from earlier documents stay in the cluster; callers normally free the
 * cluster on error. After the last file, call ns_cluster_resolve to check cross-object references.
 */
#ifndef NS_MANIFEST_LOADER_H
#define NS_MANIFEST_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include "manifest/yaml_doc.h"
#include "model/cluster.h"

/* True for the kinds above that the core itself decodes (not node classes). */
bool ns_manifest_core_kind(const char *kind);

/* Every document of one file. NS_ERR_NOT_FOUND when the file does not exist. */
int ns_manifest_load_file(ns_cluster *c, const char *path);
/* Every document of an in-memory text; `name` stands for the file in messages. */
int ns_manifest_load_string(ns_cluster *c, const char *name, const char *text, size_t len);
/* A file, or each *.yaml, *.yml and *.json file directly inside a directory, in byte order of their names. */
int ns_manifest_load_path(ns_cluster *c, const char *path);
/* One object already in tree form (an API server object through manifest/json_tree.h); `source` stands for the
 * file in messages. */
int ns_manifest_load_tree(ns_cluster *c, const char *source, const ns_ynode *root);

#endif
