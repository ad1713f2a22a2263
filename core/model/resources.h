/*
 * Resource lists as the core keeps them (ns_res): cpu in millicores, memory and ephemeral-storage in bytes, pods as a
 * count, and any number of extended resources ("nvidia.com/gpu", "hugepages-2Mi", ...) in their own unit. The ABI's
 * frozen ns_resources (8 slots of 128-byte names, 1128 bytes) is only for crossing the plugin boundary:
 * core/plugin/plugin_resources.h converts.
 *
 * Memory: an ns_res owns its extended list (names are interned, model/intern.h). Copy with ns_res_copy, never by
 * assignment once it may hold extended resources; free with ns_res_free. A zeroed ns_res is empty and valid.
 */
#ifndef NS_RESOURCES_H
#define NS_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NS_RES_CPU "cpu"
#define NS_RES_MEMORY "memory"
#define NS_RES_PODS "pods"
#define NS_RES_EPHEMERAL_STORAGE "ephemeral-storage"

/* The longest resource name Kubernetes accepts: a DNS-subdomain prefix (253), "/", a name (63). */
#define NS_RES_NAME_MAX (253 + 1 + 63)

typedef struct ns_res_ext {
    const char *name; /* interned */
    int64_t value;
} ns_res_ext;

typedef struct ns_res {
    int64_t cpu_milli;
    int64_t memory_bytes;
    int64_t pods;
    int64_t ephemeral_storage_bytes;
    ns_res_ext *ext; /* owned; in order of first appearance */
    uint32_t n_ext;
    uint32_t cap_ext;
} ns_res;

/* Parses `text` as a quantity for resource `name` and stores it (replacing a previous value). Extended resources
 * must be whole numbers, as Kubernetes requires. Returns 0 or NS_ERR_INVALID_CONFIG naming `field`. */
int ns_res_set_text(ns_res *r, const char *name, const char *text, const char *field);
/* Stores a value already in the resource's unit. NS_ERR_INVALID_CONFIG, quoting the name, for one that is not a
 * Kubernetes qualified name (an optional DNS-subdomain prefix of at most 253 characters and '/', then a name of at
 * most 63: model/names.h); NS_ERR_INTERNAL when out of memory. */
int ns_res_set(ns_res *r, const char *name, int64_t value);
/* The value for name; 0 when absent. */
int64_t ns_res_get(const ns_res *r, const char *name);

/* dst += src. NS_ERR_INTERNAL when out of memory; NS_ERR_INVALID_CONFIG naming the resource when a sum does not fit
 * in 64 bits (dst is then partly updated: callers drop it). */
int ns_res_add(ns_res *dst, const ns_res *src);
/* dst -= src, per resource (may go negative). Same errors as add. */
int ns_res_sub(ns_res *dst, const ns_res *src);
/* dst = max(dst, src), per resource. Same error as add. */
int ns_res_max(ns_res *dst, const ns_res *src);
/* *dst = a copy of src (dst's previous extended list is freed; dst == src is a no-op). 0 or NS_ERR_INTERNAL, with
 * *dst empty on failure. */
int ns_res_copy(ns_res *dst, const ns_res *src);
/* Frees the extended list; *r is left empty and reusable. Accepts NULL. */
void ns_res_free(ns_res *r);
/* True when both hold the same values (a resource absent on one side equals 0 on the other). */
bool ns_res_equal(const ns_res *a, const ns_res *b);

/* True when every requested amount is <= the available one. On false, reason (may be NULL) names the first
 * resource that does not fit: "cpu: requested 2500m, available 2". */
bool ns_res_fit(const ns_res *requested, const ns_res *available, char *reason, size_t reason_len);
/* True when every value is zero. */
bool ns_res_is_zero(const ns_res *r);
/* "cpu=1500m memory=1Gi pods=1 nvidia.com/gpu=1" (zero values left out). Returns buf. */
char *ns_res_format(const ns_res *r, char *buf, size_t len);

#endif
