/* The table of shares: chained buckets keyed by the canonical text of the affinity and spread (model/pod_key.h). */
#include "model/pod_share.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/pod_key.h"

struct ns_pod_share {
    ns_pod_share *next; /* in its bucket */
    uint64_t hash;
    char *key;
    size_t refs;
    ns_affinity affinity;
    ns_topology_spread *spread;
    size_t n_spread;
};

/* Buckets at least as many as shares. */
static struct {
    pthread_mutex_t lock;
    ns_pod_share **buckets;
    size_t cap, n;
} table = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

static bool affinity_empty(const ns_affinity *a)
{
    return !a->has_node_required && !a->n_node_required && !a->n_node_preferred && !a->n_pod_required &&
           !a->n_pod_preferred && !a->n_anti_required && !a->n_anti_preferred;
}

static int grow(void)
{
    size_t cap = table.cap ? table.cap * 2 : 64;
    ns_pod_share **buckets = calloc(cap, sizeof(*buckets));
    if (!buckets)
        return -1;
    for (size_t i = 0; i < table.cap; i++)
        for (ns_pod_share *s = table.buckets[i], *next; s; s = next) {
            next = s->next;
            s->next = buckets[s->hash & (cap - 1)];
            buckets[s->hash & (cap - 1)] = s;
        }
    free(table.buckets);
    table.buckets = buckets;
    table.cap = cap;
    return 0;
}

static ns_pod_share *find(uint64_t hash, const char *key)
{
    for (ns_pod_share *s = table.cap ? table.buckets[hash & (table.cap - 1)] : NULL; s; s = s->next)
        if (s->hash == hash && strcmp(s->key, key) == 0)
            return s;
    return NULL;
}

/* The share equal to the pod's constraints, referenced once more; a new one takes the pod's constraints and the
 * key's buffer (*moved set). NULL when out of memory. */
static ns_pod_share *reference(ns_pod *pod, ns_key *key, bool *moved)
{
    uint64_t hash = ns_key_hash(key);
    ns_pod_share *s = find(hash, key->buf);
    if (s) {
        s->refs++;
        return s;
    }
    if (table.n + 1 > table.cap && grow() < 0)
        return NULL;
    if (!(s = calloc(1, sizeof(*s))))
        return NULL;
    *s = (ns_pod_share){.next = table.buckets[hash & (table.cap - 1)], .hash = hash, .key = key->buf, .refs = 1,
                        .affinity = pod->affinity, .spread = pod->spread, .n_spread = pod->n_spread};
    table.buckets[hash & (table.cap - 1)] = s;
    table.n++;
    key->buf = NULL;
    *moved = true;
    return s;
}

int ns_pod_share_take(ns_pod *pod)
{
    if (affinity_empty(&pod->affinity) && !pod->n_spread)
        return 0;
    ns_key key = {0};
    ns_key_affinity(&key, &pod->affinity);
    ns_key_spread(&key, pod->spread, pod->n_spread);
    bool moved = false;
    ns_pod_share *s = NULL;
    if (!key.failed) {
        pthread_mutex_lock(&table.lock);
        s = reference(pod, &key, &moved);
        pthread_mutex_unlock(&table.lock);
    }
    free(key.buf);
    if (!s)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory sharing the affinity and spread constraints of pod %s",
                       pod->meta.name ? pod->meta.name : "");
    if (!moved) {
        ns_affinity_free(&pod->affinity);
        for (size_t i = 0; i < pod->n_spread; i++)
            ns_topology_spread_free(&pod->spread[i]);
        free(pod->spread);
    }
    pod->affinity = s->affinity;
    pod->spread = s->spread;
    pod->n_spread = s->n_spread;
    pod->share = s;
    return 0;
}

static void unlink_share(ns_pod_share *share)
{
    ns_pod_share **at = &table.buckets[share->hash & (table.cap - 1)];
    while (*at != share)
        at = &(*at)->next;
    *at = share->next;
    table.n--;
}

void ns_pod_share_release(ns_pod_share *share)
{
    if (!share)
        return;
    pthread_mutex_lock(&table.lock);
    bool last = --share->refs == 0;
    if (last)
        unlink_share(share);
    pthread_mutex_unlock(&table.lock);
    if (!last)
        return;
    ns_affinity_free(&share->affinity);
    for (size_t i = 0; i < share->n_spread; i++)
        ns_topology_spread_free(&share->spread[i]);
    free(share->spread);
    free(share->key);
    free(share);
}
