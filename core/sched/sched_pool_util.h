/*
 * Instance types against requirements, the way Karpenter compares a node claim's requirements with an instance
 * type's: a label the type has must be allowed; a label key the node class's types define but this type lacks only
 * satisfies NotIn and DoesNotExist; keys no type defines (template labels, karpenter.sh/nodepool) are left to the
 * NodePool-level check. Zone and capacity type are offerings, compared through pair masks instead.
 */
#ifndef NS_SCHED_POOL_UTIL_H
#define NS_SCHED_POOL_UTIL_H

#include <stdbool.h>

#include "sched/sched_internal.h"

/* Fills p->keys from every type of the set (NULL: none). 0 or NS_ERR_INTERNAL. */
int sched_pool_keys(sched_pool *p, const ns_itype_set *set);
bool sched_type_satisfies(const sched_pool *p, const ns_itype *t, const ns_requirements *reqs);

#endif
