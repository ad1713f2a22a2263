/*
 * Node-class status (provider ABI 4): the rules provider.h states for what nodeclass_status returns, in one place,
 * for the call wrapper (ns_plugin_nodeclass_status) and the conformance suite.
 */
#ifndef NS_PLUGIN_STATUS_H
#define NS_PLUGIN_STATUS_H

#include <stdbool.h>

struct cJSON;

/* Checks a provider's status object (an object with a non-empty "conditions" array of {type, status, reason,
 * message}, types CamelCase, unique and never "Ready", reasons as Kubernetes allows, a message for every condition
 * that is not True, no other condition fields) and inserts the root "Ready" condition first. NS_ERR_INTERNAL naming
 * the field when a rule is broken; the object is then unchanged or partly checked, and still the caller's. */
int ns_nodeclass_status_complete(struct cJSON *status);

/* The status ("True", "False", "Unknown") of condition `type`, with its reason and message when those are non-NULL;
 * NULL when the status has no such condition. Pointers are into `status`. */
const char *ns_nodeclass_status_condition(const struct cJSON *status, const char *type, const char **reason,
                                          const char **message);

#endif
