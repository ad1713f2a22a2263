#include "kube/kube_informer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/rand.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "http/http_client.h"
#include "log/ns_log.h"
#include "model/model_util.h"

#define DEFAULT_PAGE 500
#define MAX_LINE (64u << 20)
#define PATH_MAX_LEN 4096

struct ns_kube_informer {
    ns_kube_client *client;
    ns_kube_informer_options o;
    ns_kube_resource res;
    char *namespace_, *label_selector, *field_selector;
    ns_kube_store *store;
    pthread_rwlock_t lock;
    pthread_mutex_t state_lock; /* guards synced, stats, and the stop wait */
    pthread_cond_t state_cond;
    pthread_t thread;
    bool running;
    atomic_bool stop;
    bool synced;
    char rv[32];
    ns_kube_informer_stats stats;
    /* the watch stream being read */
    char *line;
    size_t line_len, line_cap;
    bool gone;       /* the watch reported 410 */
    bool watch_error; /* another ERROR event */
};

static char *dup_opt(const char *s, int *rc)
{
    if (!s)
        return NULL;
    char *d = ns_strdup(s);
    if (!d)
        *rc = NS_ERR_INTERNAL;
    return d;
}

int ns_kube_informer_new(ns_kube_client *c, const ns_kube_informer_options *o, ns_kube_informer **out)
{
    int rc = 0;
    *out = NULL;
    if (!o || !o->resource)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "informer: a resource is required");
    ns_kube_informer *inf = calloc(1, sizeof(*inf));
    if (!inf)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating an informer for %s", o->resource->resource);
    inf->client = c;
    inf->o = *o;
    inf->res = *o->resource;
    inf->namespace_ = dup_opt(o->namespace_, &rc);
    inf->label_selector = dup_opt(o->label_selector, &rc);
    inf->field_selector = dup_opt(o->field_selector, &rc);
    inf->store = ns_kube_store_new(o->decoder ? o->decoder->free : NULL);
    pthread_rwlock_init(&inf->lock, NULL);
    pthread_mutex_init(&inf->state_lock, NULL);
    pthread_cond_init(&inf->state_cond, NULL);
    if (rc < 0 || !inf->store) {
        ns_kube_informer_free(inf);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating an informer for %s", o->resource->resource);
    }
    *out = inf;
    return 0;
}

/* ---- decoding one object into a cache entry ---- */

static const char *str_at(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, a);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, b);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void describe(const ns_kube_informer *inf, const cJSON *obj, char *buf, size_t len)
{
    const char *ns = str_at(obj, "metadata", "namespace"), *name = str_at(obj, "metadata", "name");
    snprintf(buf, len, "%s %s%s%s", inf->res.kind, ns ? ns : "", ns ? "/" : "", name ? name : "(no name)");
}

/* A cache entry for obj, or NULL when it does not decode (the error is recorded, logged and counted). */
static ns_kube_obj *entry_from(ns_kube_informer *inf, const cJSON *obj)
{
    char what[320];
    void *typed = NULL;
    describe(inf, obj, what, sizeof(what));
    const char *name = str_at(obj, "metadata", "name");
    const char *provider_id = strcmp(inf->res.kind, "NodeClaim") == 0 ? str_at(obj, "status", "providerID")
                                                                       : str_at(obj, "spec", "providerID");
    int rc = 0;
    if (!cJSON_IsObject(obj) || !name)
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: metadata.name: missing", what);
    else if (inf->res.namespaced && !str_at(obj, "metadata", "namespace"))
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: metadata.namespace: missing", what);
    else if (inf->o.decoder)
        rc = inf->o.decoder->decode(obj, what, inf->o.decoder_ctx, &typed);
    if (rc < 0) {
        pthread_mutex_lock(&inf->state_lock);
        inf->stats.decode_errors++;
        snprintf(inf->stats.last_decode_error, sizeof(inf->stats.last_decode_error), "%s", ns_error_message());
        pthread_mutex_unlock(&inf->state_lock);
        ns_log(NS_LOG_ERROR, "informer", "failed decoding object, skipping it", "kind", inf->res.kind, "error",
               ns_error_message(), NULL);
        return NULL;
    }
    const char *uid = str_at(obj, "metadata", "uid"), *rv = str_at(obj, "metadata", "resourceVersion");
    ns_kube_obj *o;
    if (typed && inf->o.decoder->names) {
        const char *t_ns = NULL, *t_name = NULL, *t_node = NULL;
        inf->o.decoder->names(typed, &t_ns, &t_name, &t_node);
        o = ns_kube_obj_new_typed(uid, rv, provider_id, typed, inf->res.namespaced ? t_ns : NULL, t_name, t_node);
    } else {
        o = ns_kube_obj_new(inf->res.namespaced ? str_at(obj, "metadata", "namespace") : NULL, name, uid, rv,
                            str_at(obj, "spec", "nodeName"), provider_id, typed);
    }
    if (!o && typed && inf->o.decoder)
        inf->o.decoder->free(typed);
    return o;
}

static void bump(ns_kube_informer *inf, uint64_t *counter)
{
    pthread_mutex_lock(&inf->state_lock);
    (*counter)++;
    pthread_mutex_unlock(&inf->state_lock);
}

static void set_rv(ns_kube_informer *inf, const char *rv)
{
    if (!rv)
        return;
    pthread_mutex_lock(&inf->state_lock);
    snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
    snprintf(inf->stats.last_rv, sizeof(inf->stats.last_rv), "%s", rv);
    pthread_mutex_unlock(&inf->state_lock);
}

static void emit(ns_kube_informer *inf, ns_kube_event ev, const ns_kube_obj *o)
{
    bump(inf, &inf->stats.events);
    if (inf->o.on_event)
        inf->o.on_event(inf->o.ud, ev, o);
}

/* List items come without apiVersion and kind (the list names them once); the decoders need them. */
static void fill_type(const ns_kube_informer *inf, cJSON *obj)
{
    char av[128];
    if (!cJSON_IsObject(obj))
        return;
    if (!cJSON_GetObjectItemCaseSensitive(obj, "apiVersion")) {
        ns_kube_api_version(&inf->res, av, sizeof(av));
        cJSON_AddStringToObject(obj, "apiVersion", av);
    }
    if (!cJSON_GetObjectItemCaseSensitive(obj, "kind"))
        cJSON_AddStringToObject(obj, "kind", inf->res.kind);
}

/* Applies ADDED/MODIFIED (put) with the write lock held. */
static void apply_put(ns_kube_informer *inf, cJSON *obj, bool relisting)
{
    fill_type(inf, obj);
    ns_kube_obj *o = entry_from(inf, obj), *old = NULL;
    if (!o)
        return;
    if (ns_kube_store_put(inf->store, o, &old) < 0)
        return;
    if (relisting)
        ns_kube_store_mark_seen(inf->store, o);
    /* A relist re-delivers unchanged objects: only a new resourceVersion is an event. */
    if (!old || !relisting || !old->resource_version || !o->resource_version ||
        strcmp(old->resource_version, o->resource_version) != 0)
        emit(inf, old ? NS_KUBE_MODIFIED : NS_KUBE_ADDED, o);
    ns_kube_obj_free(inf->store, old);
}

static void apply_delete(ns_kube_informer *inf, const cJSON *obj)
{
    const char *ns = inf->res.namespaced ? str_at(obj, "metadata", "namespace") : NULL;
    const char *name = str_at(obj, "metadata", "name");
    ns_kube_obj *o = name ? ns_kube_store_take(inf->store, ns, name) : NULL;
    if (!o)
        return;
    emit(inf, NS_KUBE_DELETED, o);
    ns_kube_obj_free(inf->store, o);
}

/* ---- list ---- */

static int build_query(ns_kube_informer *inf, char *buf, size_t len, const char *extra)
{
    CURL *esc = curl_easy_init();
    size_t at = 0;
    int rc = 0;
    const char *names[] = {"labelSelector", "fieldSelector"};
    const char *values[] = {inf->label_selector, inf->field_selector};
    if (!esc)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory");
    at += (size_t)snprintf(buf + at, len - at, "%s", extra);
    for (int i = 0; i < 2 && at < len; i++) {
        if (!values[i])
            continue;
        char *e = curl_easy_escape(esc, values[i], 0);
        if (!e) {
            rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory");
            break;
        }
        at += (size_t)snprintf(buf + at, len - at, "&%s=%s", names[i], e);
        curl_free(e);
    }
    curl_easy_cleanup(esc);
    if (rc == 0 && at >= len)
        rc = NS_FAIL(NS_ERR_INVALID_ARGUMENT, "informer %s: selectors too long", inf->res.resource);
    return rc;
}

/* One page: applies its items and returns the continue token (empty at the end) and the list's RV. */
static int list_page(ns_kube_informer *inf, const char *cont, char **next, char *rv, size_t rv_len, long *status)
{
    char query[PATH_MAX_LEN], path[PATH_MAX_LEN], what[160], extra[PATH_MAX_LEN];
    cJSON *root = NULL;
    int rc;
    *next = NULL;
    char *cont_esc = cont ? curl_easy_escape(NULL, cont, 0) : NULL;
    if (cont && !cont_esc)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory");
    snprintf(extra, sizeof(extra), "limit=%d%s%s", inf->o.page_size > 0 ? inf->o.page_size : DEFAULT_PAGE,
             cont ? "&continue=" : "", cont ? cont_esc : "");
    curl_free(cont_esc);
    snprintf(what, sizeof(what), "listing %s", inf->res.resource);
    if ((rc = build_query(inf, query, sizeof(query), extra)) < 0 ||
        (rc = ns_kube_path(path, sizeof(path), &inf->res, inf->namespace_, NULL, NULL, query)) < 0 ||
        (rc = ns_kube_json(inf->client, "GET", path, NULL, NULL, what, status, &root)) < 0)
        return rc;
    cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "items");
    const char *list_rv = str_at(root, "metadata", "resourceVersion");
    const char *c = str_at(root, "metadata", "continue");
    if (!cJSON_IsArray(items) && !cJSON_IsNull(items) && items) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "%s: the answer has no items list", what);
        goto done;
    }
    if (list_rv)
        snprintf(rv, rv_len, "%s", list_rv);
    pthread_rwlock_wrlock(&inf->lock);
    cJSON *item;
    cJSON_ArrayForEach(item, items)
        apply_put(inf, item, true);
    pthread_rwlock_unlock(&inf->lock);
    if (c && *c && !(*next = ns_strdup(c)))
        rc = NS_ERR_INTERNAL;
    bump(inf, &inf->stats.pages);
done:
    cJSON_Delete(root);
    return rc;
}

static int list_all(ns_kube_informer *inf)
{
    char rv[32] = "";
    char *cont = NULL;
    int rc;
    long status = 0;
    pthread_rwlock_wrlock(&inf->lock);
    ns_kube_store_begin_relist(inf->store);
    pthread_rwlock_unlock(&inf->lock);
    for (;;) {
        char *next = NULL;
        rc = list_page(inf, cont, &next, rv, sizeof(rv), &status);
        free(cont);
        cont = next;
        if (rc < 0 && status == 410)
            bump(inf, &inf->stats.relists_gone); /* an expired continue token: the caller lists again */
        if (rc < 0 || !cont || atomic_load(&inf->stop))
            break;
    }
    free(cont);
    if (rc < 0 || atomic_load(&inf->stop))
        return rc;
    pthread_rwlock_wrlock(&inf->lock);
    for (ns_kube_obj *o; (o = ns_kube_store_take_unseen(inf->store));) {
        emit(inf, NS_KUBE_DELETED, o);
        ns_kube_obj_free(inf->store, o);
    }
    pthread_rwlock_unlock(&inf->lock);
    set_rv(inf, rv);
    pthread_mutex_lock(&inf->state_lock);
    inf->stats.lists++;
    inf->synced = true;
    pthread_cond_broadcast(&inf->state_cond);
    pthread_mutex_unlock(&inf->state_lock);
    return 0;
}

int ns_kube_informer_list_once(ns_kube_informer *inf)
{
    return list_all(inf);
}

/* ---- watch ---- */

static void handle_event(ns_kube_informer *inf, const char *text, size_t len)
{
    cJSON *ev = cJSON_ParseWithLength(text, len);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
    cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
    if (!cJSON_IsString(type) || !cJSON_IsObject(obj)) {
        ns_log(NS_LOG_ERROR, "informer", "ignoring a malformed watch event", "kind", inf->res.kind, NULL);
        inf->watch_error = true;
        goto done;
    }
    const char *t = type->valuestring;
    if (strcmp(t, "ERROR") == 0) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(obj, "message");
        if (cJSON_IsNumber(code) && code->valueint == 410)
            inf->gone = true;
        else
            inf->watch_error = true;
        ns_log(inf->gone ? NS_LOG_DEBUG : NS_LOG_ERROR, "informer", "watch error event", "kind", inf->res.kind,
               "message", cJSON_IsString(msg) ? msg->valuestring : "", NULL);
        goto done;
    }
    const char *rv = str_at(obj, "metadata", "resourceVersion");
    if (strcmp(t, "BOOKMARK") == 0) {
        bump(inf, &inf->stats.bookmarks);
    } else {
        pthread_rwlock_wrlock(&inf->lock);
        if (strcmp(t, "DELETED") == 0)
            apply_delete(inf, obj);
        else if (strcmp(t, "ADDED") == 0 || strcmp(t, "MODIFIED") == 0)
            apply_put(inf, obj, false);
        pthread_rwlock_unlock(&inf->lock);
    }
    set_rv(inf, rv);
done:
    cJSON_Delete(ev);
}

static bool on_watch_data(void *ud, const char *data, size_t len)
{
    ns_kube_informer *inf = ud;
    for (size_t i = 0; i < len; i++) {
        if (data[i] == '\n') {
            if (inf->line_len > 0)
                handle_event(inf, inf->line, inf->line_len);
            inf->line_len = 0;
            if (inf->gone || inf->watch_error)
                return false;
            continue;
        }
        if (inf->line_len + 1 >= inf->line_cap) {
            size_t cap = inf->line_cap ? inf->line_cap * 2 : 65536;
            char *grown = cap <= MAX_LINE ? realloc(inf->line, cap) : NULL;
            if (!grown) {
                inf->watch_error = true;
                return false;
            }
            inf->line = grown;
            inf->line_cap = cap;
        }
        inf->line[inf->line_len++] = data[i];
    }
    return true;
}

static int random_timeout(void)
{
    uint32_t r = 0;
    if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
        r = (uint32_t)ns_clock_now_ms();
    return 300 + (int)(r % 301);
}

/* One watch from inf->rv until it ends. Returns 0 (ended or dropped: resume), or 1 when a relist is needed. */
static int watch_once(ns_kube_informer *inf)
{
    char query[PATH_MAX_LEN], path[PATH_MAX_LEN], extra[256], rv[32];
    pthread_mutex_lock(&inf->state_lock);
    snprintf(rv, sizeof(rv), "%s", inf->rv);
    inf->stats.watches++;
    pthread_mutex_unlock(&inf->state_lock);
    int timeout_s = inf->o.watch_timeout_s > 0 ? inf->o.watch_timeout_s : random_timeout();
    snprintf(extra, sizeof(extra), "watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%d", rv,
             timeout_s);
    if (build_query(inf, query, sizeof(query), extra) < 0 ||
        ns_kube_path(path, sizeof(path), &inf->res, inf->namespace_, NULL, NULL, query) < 0)
        return 1;
    inf->line_len = 0;
    inf->gone = inf->watch_error = false;
    ns_kube_req req = {.method = "GET", .path = path, .timeout_ms = (int64_t)(timeout_s + 30) * 1000,
                       .on_data = on_watch_data, .ud = inf, .cancel = &inf->stop};
    ns_kube_resp resp;
    int rc = ns_kube_do(inf->client, &req, &resp);
    if (rc < 0) {
        ns_log(NS_LOG_DEBUG, "informer", "watch dropped, resuming", "kind", inf->res.kind, "error",
               ns_error_message(), NULL);
        return 0;
    }
    long status = resp.status;
    if (status != 200 && status != 410)
        ns_kube_fail(&resp, "watch");
    ns_kube_resp_clear(&resp);
    if (status == 410 || inf->gone) {
        bump(inf, &inf->stats.relists_gone);
        return 1;
    }
    if (status != 200) {
        ns_log(NS_LOG_ERROR, "informer", "watch refused", "kind", inf->res.kind, "error", ns_error_message(), NULL);
        return status == 403 || status == 404 ? 1 : 0;
    }
    return inf->watch_error ? 1 : 0;
}

/* Sleeps up to ms, waking at once when the informer is stopped. */
static void nap(ns_kube_informer *inf, int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&inf->state_lock);
    while (!atomic_load(&inf->stop) && pthread_cond_timedwait(&inf->state_cond, &inf->state_lock, &ts) == 0)
        ;
    pthread_mutex_unlock(&inf->state_lock);
}

static void *run(void *arg)
{
    ns_kube_informer *inf = arg;
    bool need_list = true;
    int failures = 0;
    while (!atomic_load(&inf->stop)) {
        if (need_list) {
            if (list_all(inf) < 0) {
                ns_log(NS_LOG_ERROR, "informer", "list failed", "kind", inf->res.kind, "error", ns_error_message(),
                       NULL);
                nap(inf, ns_http_backoff_ms(++failures < 8 ? failures : 8));
                continue;
            }
            need_list = false;
            failures = 0;
        }
        int64_t started = ns_clock_now_ms();
        need_list = watch_once(inf) == 1;
        if (atomic_load(&inf->stop))
            break;
        if (!need_list)
            bump(inf, &inf->stats.watch_resumes);
        /* A watch that ends at once (a refused or broken connection) backs off; a long one resumes at once. */
        failures = ns_clock_now_ms() - started < 1000 ? failures + 1 : 0;
        if (failures > 0)
            nap(inf, ns_http_backoff_ms(failures < 8 ? failures : 8));
    }
    return NULL;
}

int ns_kube_informer_start(ns_kube_informer *inf)
{
    if (inf->running)
        return 0;
    atomic_store(&inf->stop, false);
    if (pthread_create(&inf->thread, NULL, run, inf) != 0)
        return NS_FAIL(NS_ERR_INTERNAL, "informer %s: cannot start its thread", inf->res.resource);
    inf->running = true;
    return 0;
}

bool ns_kube_informer_synced(ns_kube_informer *inf)
{
    pthread_mutex_lock(&inf->state_lock);
    bool s = inf->synced;
    pthread_mutex_unlock(&inf->state_lock);
    return s;
}

bool ns_kube_informer_wait_synced(ns_kube_informer *inf, int64_t timeout_ms)
{
    int64_t deadline = ns_clock_now_ms() + timeout_ms;
    while (!ns_kube_informer_synced(inf)) {
        if (ns_clock_now_ms() >= deadline) {
            NS_FAIL(NS_ERR_THROTTLED, "informer %s: not synced after %lld ms", inf->res.resource,
                    (long long)timeout_ms);
            return false;
        }
        nap(inf, 20);
    }
    return true;
}

void ns_kube_informer_stop(ns_kube_informer *inf)
{
    if (!inf->running)
        return;
    pthread_mutex_lock(&inf->state_lock);
    atomic_store(&inf->stop, true);
    pthread_cond_broadcast(&inf->state_cond);
    pthread_mutex_unlock(&inf->state_lock);
    pthread_join(inf->thread, NULL);
    inf->running = false;
}

void ns_kube_informer_free(ns_kube_informer *inf)
{
    if (!inf)
        return;
    ns_kube_informer_stop(inf);
    ns_kube_store_free(inf->store);
    pthread_rwlock_destroy(&inf->lock);
    pthread_mutex_destroy(&inf->state_lock);
    pthread_cond_destroy(&inf->state_cond);
    free(inf->namespace_);
    free(inf->label_selector);
    free(inf->field_selector);
    free(inf->line);
    free(inf);
}

void ns_kube_informer_rdlock(ns_kube_informer *inf)
{
    pthread_rwlock_rdlock(&inf->lock);
}

void ns_kube_informer_unlock(ns_kube_informer *inf)
{
    pthread_rwlock_unlock(&inf->lock);
}

const ns_kube_store *ns_kube_informer_store(const ns_kube_informer *inf)
{
    return inf->store;
}

void ns_kube_informer_get_stats(ns_kube_informer *inf, ns_kube_informer_stats *out)
{
    pthread_mutex_lock(&inf->state_lock);
    *out = inf->stats;
    pthread_mutex_unlock(&inf->state_lock);
}
