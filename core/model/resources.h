/*
 * Resource lists on the ABI's ns_resources: cpu in millicores, memory and ephemeral-storage in bytes, pods as a
 * count, anything else ("nvidia.com/gpu", "hugepages-2Mi", ...) as an extended resource in its own unit (at most
 * NS_MAX_EXTENDED_RESOURCES distinct names per list).
 */
#ifndef NS_RESOURCES_H
#define NS_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodesmith/provider.h"

#define NS_RES_CPU "cpu"
#define NS_RES_MEMORY "memory"
#define NS_RES_PODS "pods"
#define NS_RES_EPHEMERAL_STORAGE "ephemeral-storage"

/* Parses `text` as a quantity for resource `name` and stores it (replacing a previous value). Extended resources
 * must be whole numbers, as Kubernetes requires. Returns 0 or NS_ERR_INVALID_CONFIG naming `field`. */
int ns_resources_set_text(ns_resources *r, const char *name, const char *text, const char *field);
/* Stores a value already in the resource's unit. NS_ERR_INVALID_CONFIG when a ninth extended name is added. */
int ns_resources_set(ns_resources *r, const char *name, int64_t value);
/* The value for name; 0 when absent. */
int64_t ns_resources_get(const ns_resources *r, const char *name);

/* dst += src. NS_ERR_INVALID_CONFIG when the union has too many extended names. */
int ns_resources_add(ns_resources *dst, const ns_resources *src);
/* dst -= src, per resource (may go negative). Same error as add. */
int ns_resources_sub(ns_resources *dst, const ns_resources *src);
/* dst = max(dst, src), per resource. Same error as add. */
int ns_resources_max(ns_resources *dst, const ns_resources *src);
/* True when every requested amount is <= the available one. On false, reason (may be NULL) names the first
 * resource that does not fit: "cpu: requested 2500m, available 2". */
bool ns_resources_fit(const ns_resources *requested, const ns_resources *available, char *reason, size_t reason_len);
/* True when every value is zero. */
bool ns_resources_is_zero(const ns_resources *r);
/* "cpu=1500m memory=1Gi pods=1 nvidia.com/gpu=1" (zero values left out). Returns buf. */
char *ns_resources_format(const ns_resources *r, char *buf, size_t len);

#endif
