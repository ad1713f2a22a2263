/*
 * The core's own copy of a provider's instance types and offerings, made from list_instance_types callbacks. The
 * scheduler works only on this copy, so provider memory never outlives a call.
 */
#ifndef NS_INSTANCE_TYPES_H
#define NS_INSTANCE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/requirements.h"
#include "model/resources.h"
#include "nodesmith/provider.h"

/* The loaded plugin (plugin/plugin_loader.h); only the loader below needs it, so layers that use instance types
 * without a provider (the scheduler) do not include the plugin layer. */
struct ns_plugin;

typedef struct ns_itype_offering {
    char *zone;
    char *capacity_type;
    double price_per_hour;
    bool available;
    char *reservation_id; /* NULL when none */
    /* ns_offering.reservation_capacity (ABI 7): for a reserved offering, how many more instances its reservation
     * takes (0: full); NS_RESERVATION_CAPACITY_UNKNOWN when the provider did not say, and for other capacity types. */
    int64_t reservation_capacity;
    ns_label *labels;     /* the zone's labels (ns_offering.labels): owned key and value strings, sorted by key */
    size_t n_labels;
} ns_itype_offering;

typedef struct ns_itype {
    char *name;
    ns_label *labels; /* owned key and value strings, sorted by key */
    size_t n_labels;
    ns_res capacity;
    ns_res kube_reserved;
    ns_res system_reserved;
    ns_res eviction_threshold;
    ns_res allocatable; /* capacity minus the three reservations, floored at zero */
    ns_itype_offering *offerings;
    size_t n_offerings;
} ns_itype;

typedef struct ns_itype_set {
    ns_itype *items;
    size_t n;
} ns_itype_set;

/* Fills *out (zeroed by the call) from the plugin; on error *out is empty and nothing leaks. */
int ns_itype_set_load(struct ns_plugin *plugin, const ns_nodeclass *nodeclass, ns_itype_set *out);
/* Deep-copies one provider struct into dst (used by the loader's callback and by tests). */
int ns_itype_copy(const ns_instance_type *src, ns_itype *dst);
void ns_itype_free(ns_itype *t);        /* frees members; accepts NULL */
void ns_itype_set_free(ns_itype_set *s); /* accepts NULL */

const char *ns_itype_label(const ns_itype *t, const char *key); /* NULL when absent */
const ns_itype *ns_itype_set_find(const ns_itype_set *s, const char *name);
/* Cheapest available offering's price, or -1 when none is available. */
double ns_itype_min_price(const ns_itype *t);

/* Zone labels (ns_offering.labels, as topology.k8s.alibabacloud/zone-id), gathered once from the offerings of
 * `sets` (NULL entries skipped; the sets must outlive it). *out is NULL when no offering has any. */
typedef struct ns_zone_labels ns_zone_labels;
int ns_zone_labels_new(const ns_itype_set *const *sets, size_t n_sets, ns_zone_labels **out);
void ns_zone_labels_free(ns_zone_labels *z); /* accepts NULL */
/* A requirement of `reqs` on a zone label key becomes, in place, a requirement on topology.kubernetes.io/zone over
 * the zones it allows (a zone whose offerings lack the label is allowed by NotIn and DoesNotExist only), intersected
 * with any zone requirement there. Other keys are left alone; z NULL changes nothing. Not thread-safe on one z (it
 * has scratch space). NS_OK, or an error with *reqs unchanged. */
int ns_zone_labels_rewrite(ns_zone_labels *z, ns_requirements *reqs);
/* The labels of `zone`'s offerings of type t (its first offering in that zone that has any), or NULL with *n = 0. */
const ns_label *ns_itype_zone_labels(const ns_itype *t, const char *zone, size_t *n);

#endif
