/*
 * Node classes (of the kinds the loaded providers declare, model/nodeclass_kinds.h): the provider-specific half of a
 * NodePool. The core keeps the spec as JSON for the provider and reads only the kubelet settings from it.
 *
 * The spec is a cJSON tree; the ABI's ns_json is the same object (the core's JSON upcalls wrap cJSON), so
 * def->abi.spec can be handed to a provider as is.
 */
#ifndef NS_NODECLASS_H
#define NS_NODECLASS_H

#include <cjson/cJSON.h>

#include "model/kubelet.h"
#include "model/meta.h"
#include "nodesmith/provider.h"

typedef struct ns_nodeclass_def {
    ns_meta meta;
    char *api_version; /* "karpenter.k8s.aws/v1", "nodesmith.io/v1", ... */
    char *kind;
    cJSON *spec;                /* owned; an empty object when the manifest had no spec */
    ns_kubelet_config kubelet;  /* spec.kubelet when its kind is declared NS_NODECLASS_KUBELET */
    ns_nodeclass abi;           /* view for providers; points into this struct, valid while it lives */
} ns_nodeclass_def;

/* Takes ownership of spec (NULL = empty object) and copies the strings; fills def->abi. NULL with the error recorded
 * on failure (spec is freed then too). */
ns_nodeclass_def *ns_nodeclass_def_new(const char *api_version, const char *kind, const char *name, cJSON *spec);
void ns_nodeclass_def_free(ns_nodeclass_def *def); /* accepts NULL */
/* The API group of an apiVersion ("karpenter.k8s.aws/v1" -> "karpenter.k8s.aws"; "v1" -> ""), into buf. */
const char *ns_api_group(const char *api_version, char *buf, size_t len);

#endif
