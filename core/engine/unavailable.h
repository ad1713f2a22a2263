/*
 * The unavailable-offerings cache (Karpenter's UnavailableOfferings): offerings a launch found without capacity, or
 * whose spot capacity was interrupted, are not offered again until their entry expires (3 minutes by default).
 *
 * The core owns it, not the providers: a provider reports the offerings a launch could not get (host
 * error_unavailable_offering) and forgets them; the engine marks them here, hides them from the instance types it
 * lists and from launch options, and expires them on its own clock. One cache for every provider, kept in memory
 * only, as Karpenter keeps it. See docs/architecture.md.
 */
#ifndef NS_UNAVAILABLE_H
#define NS_UNAVAILABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ns_unavailable_entry {
    char *instance_type;
    char *zone;
    char *capacity_type;
    int64_t until_ms;
} ns_unavailable_entry;

typedef struct ns_unavailable_cache {
    ns_unavailable_entry *items;
    size_t n, cap;
} ns_unavailable_cache;

/* Marks (type, zone, capacity type) unavailable until now + ttl (extending an existing entry). 0 or NS_ERR_INTERNAL. */
int ns_unavailable_add(ns_unavailable_cache *c, const char *type, const char *zone, const char *capacity_type,
                       int64_t until_ms);
bool ns_unavailable_has(const ns_unavailable_cache *c, const char *type, const char *zone, const char *capacity_type,
                        int64_t now_ms);
/* Drops entries that expired before now. */
void ns_unavailable_expire(ns_unavailable_cache *c, int64_t now_ms);
void ns_unavailable_free(ns_unavailable_cache *c);

#endif
