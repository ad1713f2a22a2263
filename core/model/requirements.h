/*
 * Label requirements with Karpenter's semantics (sigs.k8s.io/karpenter pkg/scheduling requirement.go and
 * requirements.go).
 *
 * Two forms:
 *   - ns_selector_req: a requirement as written in a manifest (key, operator, values, minValues).
 *   - ns_requirement:  the normalised form the scheduler computes with. It is either a finite set of allowed values
 *     (In; DoesNotExist when empty) or the complement of a finite set of excluded values (NotIn; Exists when empty),
 *     optionally narrowed by inclusive integer bounds. Gt N becomes ">= N+1", Lt N becomes "<= N-1". Legacy label
 *     aliases are normalised (beta.kubernetes.io/arch -> kubernetes.io/arch, ...).
 * An ns_requirements is a set of ns_requirement keyed by label key; adding a requirement for a key already present
 * intersects the two, so a set is always the conjunction of everything added to it.
 *
 * Semantics worth knowing (where the naive answer is wrong):
 *   - A node without the label satisfies NotIn and DoesNotExist, but not In, Exists, Gt or Lt.
 *   - Gt/Lt/Gte/Lte only match values that parse as integers; bounds that cross make the requirement DoesNotExist.
 *   - Intersecting a bounded requirement with In values keeps only the values within the bounds and drops the bounds.
 *   - ns_requirements_intersects treats an empty intersection as compatible when both sides are NotIn or
 *     DoesNotExist (both can be met by leaving the label off the node), e.g. "zone DoesNotExist" vs "zone NotIn [a]".
 *   - ns_requirements_compatible additionally denies an incoming key the existing set does not define, unless the
 *     incoming operator is NotIn/DoesNotExist or the key is allowed undefined (well-known labels): a pod asking for
 *     "team In [a]" cannot land on a NodePool that says nothing about "team".
 *
 * Memory: every struct here owns its strings. Free functions accept NULL and leave the struct empty.
 */
#ifndef NS_REQUIREMENTS_H
#define NS_REQUIREMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodesmith/provider.h"

typedef enum ns_req_op {
    NS_OP_IN = 1,
    NS_OP_NOT_IN,
    NS_OP_EXISTS,
    NS_OP_DOES_NOT_EXIST,
    NS_OP_GT,
    NS_OP_LT,
    NS_OP_GTE, /* Karpenter extension (karpenter.sh/v1 NodePool requirements) */
    NS_OP_LTE, /* Karpenter extension */
} ns_req_op;

/* "In", "NotIn", ... */
const char *ns_req_op_name(ns_req_op op);
/* Parses an operator name; false when unknown. */
bool ns_req_op_parse(const char *name, ns_req_op *out);

/* The largest minValues Karpenter accepts. */
#define NS_MIN_VALUES_MAX 50

typedef struct ns_selector_req {
    char *key;
    ns_req_op op;
    char **values;
    size_t n_values;
    int32_t min_values; /* 0 = not set */
    /* free(values) releases everything the values own: their texts are in the same allocation, as
     * ns_selector_req_copy makes them, or interned (ns_selector_req_set_interned): a NodeClaim carries tens of
     * instance-type names per requirement. False: each value is its own. */
    bool values_block;
} ns_selector_req;

/* Checks the shape Kubernetes and Karpenter require: In and NotIn have at least one value; Exists and
 * DoesNotExist have none; Gt, Lt, Gte and Lte have exactly one integer value; minValues is 1..50 and, with In, at
 * most the number of values. Returns 0 or NS_ERR_INVALID_CONFIG with a message starting with `field`. */
int ns_selector_req_validate(const ns_selector_req *r, const char *field);
int ns_selector_req_copy(const ns_selector_req *src, ns_selector_req *dst); /* 0 or NS_ERR_INTERNAL */
/* Sets r's values to a copy of values[0..n) in one block (values_block), replacing what r had. 0 or NS_ERR_INTERNAL. */
int ns_selector_req_set_values(ns_selector_req *r, char *const *values, size_t n);
/* As ns_selector_req_set_values, for values from a bounded set (instance-type names, zones, capacity types): only the
 * array is allocated, its entries are interned (model/intern.h). 0 or NS_ERR_INTERNAL. */
int ns_selector_req_set_interned(ns_selector_req *r, char *const *values, size_t n);
void ns_selector_req_free(ns_selector_req *r);                               /* members only; accepts NULL */
/* Frees n requirements and the array. Accepts NULL. */
void ns_selector_reqs_free(ns_selector_req *v, size_t n);

typedef struct ns_requirement {
    char *key;
    bool complement; /* true: every value except `values` */
    char **values;   /* sorted, unique */
    size_t n_values;
    bool has_gte, has_lte;
    int64_t gte, lte;   /* inclusive integer bounds, when set */
    int32_t min_values; /* 0 = not set */
} ns_requirement;

/* Builds *out from one operator. Values of Gt/Lt/Gte/Lte must be one integer (NS_ERR_INVALID_ARGUMENT otherwise).
 * 0, or an error with *out left empty. */
int ns_requirement_init(ns_requirement *out, const char *key, ns_req_op op, const char *const *values, size_t n_values,
                        int32_t min_values);
int ns_requirement_copy(const ns_requirement *src, ns_requirement *dst);
void ns_requirement_free(ns_requirement *r); /* members only; accepts NULL */

/* Karpenter's Operator(): In, NotIn, Exists or DoesNotExist (a bounded requirement reports Exists or NotIn). */
ns_req_op ns_requirement_operator(const ns_requirement *r);
/* True when the requirement allows a node label with this value. */
bool ns_requirement_has(const ns_requirement *r, const char *value);
/* *out = a AND b (a's key). 0 or NS_ERR_INTERNAL. */
int ns_requirement_intersection(const ns_requirement *a, const ns_requirement *b, ns_requirement *out);
/* True when some value satisfies both (Karpenter's HasIntersection; no allocation). */
bool ns_requirement_has_intersection(const ns_requirement *a, const ns_requirement *b);
/* "key In [a b]", "key Exists >=5 <=9", "key DoesNotExist", with " minValues N" when set. Returns buf. */
char *ns_requirement_format(const ns_requirement *r, char *buf, size_t len);

typedef struct ns_requirements {
    ns_requirement *items; /* sorted by key, keys unique */
    size_t n;
    size_t cap;
} ns_requirements;

/* Adds a copy of r, intersecting with an existing requirement for the same key. 0 or NS_ERR_INTERNAL. */
int ns_requirements_add(ns_requirements *s, const ns_requirement *r);
/* ns_requirement_init + ns_requirements_add. */
int ns_requirements_add_op(ns_requirements *s, const char *key, ns_req_op op, const char *const *values, size_t n,
                           int32_t min_values);
/* Adds manifest requirements (ANDed). Errors as ns_requirement_init. */
int ns_requirements_add_selector(ns_requirements *s, const ns_selector_req *reqs, size_t n);
/* Adds "key In [value]" for each label (a nodeSelector, a NodePool's template labels). */
int ns_requirements_add_labels(ns_requirements *s, const ns_label *labels, size_t n);
/* Adds every requirement of other: the result is the intersection of both sets. */
int ns_requirements_add_all(ns_requirements *s, const ns_requirements *other);
/* The requirement for key (normalised), or NULL when the set does not constrain it. */
const ns_requirement *ns_requirements_get(const ns_requirements *s, const char *key);
int ns_requirements_copy(const ns_requirements *src, ns_requirements *dst); /* dst must be empty */
void ns_requirements_free(ns_requirements *s);                             /* accepts NULL */
bool ns_requirements_has_min_values(const ns_requirements *s);

/* Karpenter's Intersects: every key both sets define must have a common value (see the NotIn/DoesNotExist rule
 * above). On false, reason (may be NULL) receives "key K, <incoming> not in <existing>". */
bool ns_requirements_intersects(const ns_requirements *existing, const ns_requirements *incoming, char *reason,
                                size_t reason_len);

typedef struct ns_compat_opts {
    /* Keys that may be undefined in `existing` (Karpenter's AllowUndefinedWellKnownLabels). */
    bool allow_undefined_well_known;
    /* More keys treated like well-known ones, for example a provider's instance-type labels. */
    const char *const *extra_well_known;
    size_t n_extra_well_known;
} ns_compat_opts;

/* Karpenter's Compatible: incoming keys the existing set does not define are denied (unless NotIn/DoesNotExist or
 * allowed undefined by opts, which may be NULL), then ns_requirements_intersects. On false, reason receives the
 * first problem, e.g. "label \"team\" does not have known values". */
bool ns_requirements_compatible(const ns_requirements *existing, const ns_requirements *incoming,
                                const ns_compat_opts *opts, char *reason, size_t reason_len);

/* True when a node with these labels satisfies every requirement: a present label must be allowed; a missing label
 * only satisfies unbounded NotIn and DoesNotExist. On false, reason names the first failing requirement. */
bool ns_requirements_match_labels(const ns_requirements *s, const ns_label *labels, size_t n, char *reason,
                                  size_t reason_len);

/* Requirements joined by ", " in key order. Returns buf. */
char *ns_requirements_format(const ns_requirements *s, char *buf, size_t len);

#endif
