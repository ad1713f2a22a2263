#include "prov_snapshot.h"

int prov_snapshot_acquire(prov_snapshot_cache *c, prov_snapshot **out)
{
    int64_t now_ms = c->host->now_ms(c->host_ctx);
    pthread_mutex_lock(c->lock);
    prov_snapshot *cur = c->current;
    if (cur && now_ms - cur->fetched_ms < c->ttl_ms) {
        cur->refs++;
        pthread_mutex_unlock(c->lock);
        *out = cur;
        return NS_OK;
    }
    pthread_mutex_unlock(c->lock);
    prov_snapshot *fresh = NULL;
    int rc = c->fetch(c->owner, &fresh);
    if (rc != NS_OK)
        return rc;
    fresh->fetched_ms = c->host->now_ms(c->host_ctx);
    fresh->refs = 1;
    fresh->retired = false;
    pthread_mutex_lock(c->lock);
    /* Another call may have replaced the copy meanwhile: whichever is current now is the one retired. */
    prov_snapshot *old = c->current;
    c->current = fresh;
    bool free_old = old && old->refs == 0;
    if (old)
        old->retired = true;
    pthread_mutex_unlock(c->lock);
    if (free_old)
        c->free(old);
    *out = fresh;
    return NS_OK;
}

void prov_snapshot_release(prov_snapshot_cache *c, prov_snapshot *snap)
{
    if (!snap)
        return;
    pthread_mutex_lock(c->lock);
    bool free_it = --snap->refs == 0 && snap->retired;
    pthread_mutex_unlock(c->lock);
    if (free_it)
        c->free(snap);
}

void prov_snapshot_expire(prov_snapshot_cache *c)
{
    pthread_mutex_lock(c->lock);
    if (c->current)
        c->current->fetched_ms = INT64_MIN / 2;
    pthread_mutex_unlock(c->lock);
}

void prov_snapshot_cache_clear(prov_snapshot_cache *c)
{
    if (c->current)
        c->free(c->current);
    c->current = NULL;
}
