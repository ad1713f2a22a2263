/*
 * A value a provider fetches from its cloud (the instance-type catalog) and shares between concurrent calls until it
 * is older than a TTL, then replaces whole. A call that acquired a copy reads it undisturbed until it releases it,
 * even when another call replaced it meanwhile: the last reader of a replaced copy frees it. The fetch runs without
 * the lock held, so a slow cloud call does not block readers of the current copy.
 *
 * The shared value embeds a prov_snapshot (any member) and the cache recovers the value with prov_snapshot_of.
 */
#ifndef NS_PROV_SNAPSHOT_H
#define NS_PROV_SNAPSHOT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nodesmith/provider.h>

typedef struct prov_snapshot {
    int64_t fetched_ms; /* the host's clock when the fetch returned; set by the cache */
    int refs;           /* calls reading it */
    bool retired;       /* replaced by a newer copy: the last reader frees it */
} prov_snapshot;

#define prov_snapshot_of(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Fetches a fresh value into *out (owned by the cache from then on); returns NS_OK or a negative NS_ERR_* with the
 * error already set on the host, and leaves *out NULL on failure. */
typedef int (*prov_snapshot_fetch_fn)(void *owner, prov_snapshot **out);
/* Frees a value the cache no longer shares. */
typedef void (*prov_snapshot_free_fn)(prov_snapshot *snap);

typedef struct prov_snapshot_cache {
    pthread_mutex_t *lock; /* the provider state's lock, borrowed; held only around the bookkeeping */
    prov_snapshot *current;
    int64_t ttl_ms;
    prov_snapshot_fetch_fn fetch;
    prov_snapshot_free_fn free;
    void *owner; /* passed to fetch */
    const ns_host *host; /* its clock ages the copies */
    void *host_ctx;
} prov_snapshot_cache;

/* The current copy when it is younger than the TTL, else a fresh one fetched now (the old one retired). On NS_OK *out
 * is the caller's until prov_snapshot_release; on failure the current copy is kept and *out untouched. */
int prov_snapshot_acquire(prov_snapshot_cache *c, prov_snapshot **out);
/* Ends a call's read of a copy acquired from c; NULL is ignored. */
void prov_snapshot_release(prov_snapshot_cache *c, prov_snapshot *snap);
/* Marks the current copy stale, so the next acquire fetches (a test hook's "expire the cache"). */
void prov_snapshot_expire(prov_snapshot_cache *c);
/* Frees the current copy at shutdown, when no call reads it any more. */
void prov_snapshot_cache_clear(prov_snapshot_cache *c);

#endif
