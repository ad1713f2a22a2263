/*
 * Requirement defaults a provider declares for karpenter.sh/v1alpha5 Provisioners (provider ABI 6's
 * v1alpha5_defaults). Each adds one requirement to a Provisioner that has no requirement on any of its "unless" keys,
 * as the cloud's Karpenter admission webhook did until v1beta1 dropped the defaulting. The core keeps one set per
 * provider (model/nodeclass_kinds.h); the manifest decoder applies the set of the provider whose node-class kind the
 * Provisioner's providerRef names.
 *
 * Memory: a set owns copies of everything added to it. Free functions accept NULL.
 */
#ifndef NS_REQ_DEFAULTS_H
#define NS_REQ_DEFAULTS_H

#include <stddef.h>

#include "model/requirements.h"

typedef struct ns_req_default {
    ns_selector_req req;
    char **unless_keys; /* normalised (ns_label_normalize), `req.key` among them */
    size_t n_unless_keys;
} ns_req_default;

typedef struct ns_req_defaults {
    ns_req_default *items; /* in the order the provider declared them */
    size_t n;
} ns_req_defaults;

/* NULL with NS_ERR_INTERNAL recorded on allocation failure. */
ns_req_defaults *ns_req_defaults_new(void);
void ns_req_defaults_free(ns_req_defaults *d);

/* Adds a copy of one default. NS_ERR_INVALID_CONFIG, with a message starting with `what`, when it is malformed: an
 * operator that is not one of a v1alpha5 Provisioner's (In, NotIn, Exists, DoesNotExist, Gt, Lt), values that do not
 * fit it, no unless keys or an empty one, its own key not among them, or a second default for the same key. */
int ns_req_defaults_add(ns_req_defaults *d, const char *what, const char *key, const char *op,
                        const char *const *values, size_t n_values, const char *const *unless, size_t n_unless);

/* Appends to the caller's reqs[0..*n) (the array is grown) a copy of each default none of whose unless keys the
 * requirements as written name (label aliases normalised, any operator counting), judged before any default is
 * added, as the webhook did. Writes "key Op [v, ...]" of each added, "; "-separated, into applied ("" when none).
 * d may be NULL (no defaults). 0 or NS_ERR_INTERNAL. */
int ns_req_defaults_apply(const ns_req_defaults *d, ns_selector_req **reqs, size_t *n, char *applied, size_t len);

#endif
