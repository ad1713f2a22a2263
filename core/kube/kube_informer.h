/*
 * An informer: the local, indexed copy of one resource kept current by list and watch, as client-go's reflector:
 *   - list in pages (limit/continue), a consistent read; entries gone from the list are deleted;
 *   - watch from the list's resourceVersion with allowWatchBookmarks; each event and bookmark moves the last seen
 *     resourceVersion; a watch that ends or drops resumes from it;
 *   - 410 Gone (an ERROR event with code 410, or an HTTP 410, or an expired continue token) relists;
 *   - each object is decoded into its model type by the resource's decoder; an object that does not decode is
 *     logged (naming the object and the field) and counted, and never stops the informer.
 *
 * Threading: the informer runs on its own thread between ns_kube_informer_start and ns_kube_informer_stop. Readers
 * take ns_kube_informer_rdlock around lookups in ns_kube_informer_store. Event handlers run on the informer's thread
 * with the write lock held: they must not call back into the informer.
 */
#ifndef NS_KUBE_INFORMER_H
#define NS_KUBE_INFORMER_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube/kube_client.h"
#include "kube/kube_resource.h"
#include "kube/kube_store.h"

/* Turns one API object into the model's type. `what` names the object ("Pod ns/name") for messages; ctx is the
 * informer's decoder_ctx (node classes: the loaded providers' ns_nodeclass_kinds). 0 with *typed set (the store owns
 * it then; NULL when the object is kept by identity only), or NS_ERR_INVALID_CONFIG with a message naming the object
 * and the field. */
typedef struct ns_kube_decoder {
    int (*decode)(const cJSON *obj, const char *what, const void *ctx, void **typed);
    void (*free)(void *typed);
    /* Optional: the typed object's namespace, name and spec.nodeName, which the cache entry then borrows instead of
     * copying (they equal the object's metadata; NULL where absent). */
    void (*names)(const void *typed, const char **namespace_, const char **name, const char **node_name);
} ns_kube_decoder;

typedef enum ns_kube_event {
    NS_KUBE_ADDED = 0,
    NS_KUBE_MODIFIED,
    NS_KUBE_DELETED,
} ns_kube_event;

/* For DELETED, obj is the last cached copy, freed after the call. */
typedef void (*ns_kube_handler_fn)(void *ud, ns_kube_event event, const ns_kube_obj *obj);

typedef struct ns_kube_informer_options {
    const ns_kube_resource *resource; /* copied */
    const char *namespace_;           /* NULL = every namespace */
    const char *label_selector;       /* NULL = none */
    const char *field_selector;
    int page_size;                    /* list limit; 0 = 500 */
    int watch_timeout_s;              /* 0 = a random 300..600 s per watch, as client-go */
    const ns_kube_decoder *decoder;   /* NULL: entries keep identity and indexes only */
    const void *decoder_ctx;          /* borrowed; outlives the informer */
    ns_kube_handler_fn on_event;      /* may be NULL */
    void *ud;
} ns_kube_informer_options;

typedef struct ns_kube_informer ns_kube_informer;

typedef struct ns_kube_informer_stats {
    uint64_t lists;          /* complete lists (the first one and every relist) */
    uint64_t pages;
    uint64_t relists_gone;   /* relists caused by 410 Gone */
    uint64_t watches;        /* watch requests started */
    uint64_t watch_resumes;  /* watches restarted from the last resourceVersion after an end or a drop */
    uint64_t events;         /* ADDED/MODIFIED/DELETED applied */
    uint64_t bookmarks;
    uint64_t decode_errors;
    char last_rv[32];
    char last_decode_error[512];
} ns_kube_informer_stats;

/* The client must outlive the informer. 0 or NS_ERR_INTERNAL / NS_ERR_INVALID_ARGUMENT. */
int ns_kube_informer_new(ns_kube_client *c, const ns_kube_informer_options *o, ns_kube_informer **out);
/* Starts the informer's thread. 0 or NS_ERR_INTERNAL. */
int ns_kube_informer_start(ns_kube_informer *inf);
/* Waits until the first list is in the cache; false after timeout_ms (the last error is recorded). */
bool ns_kube_informer_wait_synced(ns_kube_informer *inf, int64_t timeout_ms);
bool ns_kube_informer_synced(ns_kube_informer *inf);
/* Stops the thread (any watch in flight is cancelled) and waits for it. Accepts a stopped informer. */
void ns_kube_informer_stop(ns_kube_informer *inf);
void ns_kube_informer_free(ns_kube_informer *inf); /* stops it first; accepts NULL */

/* Lookups: hold the read lock while using the store and anything found in it. */
void ns_kube_informer_rdlock(ns_kube_informer *inf);
void ns_kube_informer_unlock(ns_kube_informer *inf);
const ns_kube_store *ns_kube_informer_store(const ns_kube_informer *inf);

void ns_kube_informer_get_stats(ns_kube_informer *inf, ns_kube_informer_stats *out);

/* Runs one complete list into the cache on the calling thread (what the informer's thread does first); for
 * benchmarks and for callers that only need a snapshot. 0 or the list's error. */
int ns_kube_informer_list_once(ns_kube_informer *inf);

#endif
