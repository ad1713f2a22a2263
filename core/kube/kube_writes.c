#include "kube/kube_writes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"

#define PATH_LEN 2048

static void what_of(char *buf, size_t len, const char *verb, const ns_kube_resource *r, const char *ns,
                    const char *name, const char *sub)
{
    snprintf(buf, len, "%s %s %s%s%s%s%s", verb, r->kind, ns && r->namespaced ? ns : "",
             ns && r->namespaced ? "/" : "", name ? name : "", sub ? " " : "", sub ? sub : "");
}

int ns_kube_get(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const char *name, long *status,
                cJSON **out)
{
    char path[PATH_LEN], what[512];
    int rc = ns_kube_path(path, sizeof(path), r, ns, name, NULL, NULL);
    what_of(what, sizeof(what), "getting", r, ns, name, NULL);
    return rc < 0 ? rc : ns_kube_json(c, "GET", path, NULL, NULL, what, status, out);
}

int ns_kube_create(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const cJSON *obj, long *status,
                   cJSON **out)
{
    char path[PATH_LEN], what[512];
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(meta, "generateName");
    int rc = ns_kube_path(path, sizeof(path), r, ns, NULL, NULL, NULL);
    snprintf(what, sizeof(what), "creating %s %s%s%s%s", r->kind, ns && r->namespaced ? ns : "",
             ns && r->namespaced ? "/" : "", cJSON_IsString(name) ? name->valuestring : "",
             !cJSON_IsString(name) && cJSON_IsString(gen) ? gen->valuestring : "");
    return rc < 0 ? rc : ns_kube_json(c, "POST", path, NULL, obj, what, status, out);
}

int ns_kube_update(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const char *name, const char *sub,
                   const cJSON *obj, long *status, cJSON **out)
{
    char path[PATH_LEN], what[512];
    int rc = ns_kube_path(path, sizeof(path), r, ns, name, sub, NULL);
    what_of(what, sizeof(what), "updating", r, ns, name, sub);
    return rc < 0 ? rc : ns_kube_json(c, "PUT", path, NULL, obj, what, status, out);
}

int ns_kube_patch(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const char *name, const char *sub,
                  const char *patch_type, const cJSON *patch, const char *rv, long *status, cJSON **out)
{
    char path[PATH_LEN], what[512];
    cJSON *copy = NULL;
    int rc = ns_kube_path(path, sizeof(path), r, ns, name, sub, NULL);
    what_of(what, sizeof(what), "patching", r, ns, name, sub);
    if (rc < 0)
        return rc;
    if (rv) {
        copy = cJSON_Duplicate(patch, 1);
        cJSON *meta = cJSON_GetObjectItemCaseSensitive(copy, "metadata");
        if (copy && !meta)
            meta = cJSON_AddObjectToObject(copy, "metadata");
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
        if (!meta || !cJSON_AddStringToObject(meta, "resourceVersion", rv)) {
            cJSON_Delete(copy);
            return NS_FAIL(NS_ERR_INTERNAL, "%s: out of memory", what);
        }
        patch = copy;
    }
    rc = ns_kube_json(c, "PATCH", path, patch_type, patch, what, status, out);
    cJSON_Delete(copy);
    return rc;
}

/* client-go's retry.DefaultRetry spirit: a short jittered pause so racing writers stop colliding. */
static void conflict_backoff(int attempt)
{
    uint32_t r = 0;
    if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
        r = (uint32_t)ns_clock_now_ms();
    int64_t ceiling = (int64_t)10 << (attempt < 6 ? attempt : 6);
    ns_clock_sleep_ms((int64_t)(r % (uint32_t)(ceiling + 1)));
}

int ns_kube_patch_retry(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const char *name,
                        const char *sub, ns_kube_patch_fn fn, void *ud, int *conflicts, cJSON **out)
{
    int rc = 0;
    if (conflicts)
        *conflicts = 0;
    if (out)
        *out = NULL;
    for (int attempt = 0; attempt <= NS_KUBE_CONFLICT_RETRIES; attempt++) {
        cJSON *current = NULL, *patch = NULL;
        long status = 0;
        if ((rc = ns_kube_get(c, r, ns, name, NULL, &current)) < 0)
            return rc;
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(current, "metadata");
        const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
        rc = fn(ud, current, &patch);
        if (rc == 0)
            rc = ns_kube_patch(c, r, ns, name, sub, NS_KUBE_MERGE_PATCH, patch,
                               cJSON_IsString(rv) ? rv->valuestring : NULL, &status, out);
        else if (rc == 1)
            rc = 0;
        cJSON_Delete(patch);
        cJSON_Delete(current);
        if (status != 409)
            return rc;
        if (conflicts)
            (*conflicts)++;
        ns_error_clear();
        conflict_backoff(attempt);
    }
    return NS_FAIL(NS_ERR_THROTTLED, "patching %s %s: still conflicting after %d re-reads", r->kind, name,
                   NS_KUBE_CONFLICT_RETRIES);
}

typedef struct finalizer_ctx {
    const char *finalizer;
} finalizer_ctx;

static int without_finalizer(void *ud, const cJSON *current, cJSON **patch)
{
    const finalizer_ctx *f = ud;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(current, "metadata");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(meta, "finalizers");
    cJSON *p = cJSON_CreateObject();
    cJSON *pm = cJSON_AddObjectToObject(p, "metadata");
    cJSON *kept = cJSON_AddArrayToObject(pm, "finalizers");
    bool found = false;
    const cJSON *item;
    if (!kept) {
        cJSON_Delete(p);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory building a finalizer patch");
    }
    cJSON_ArrayForEach(item, list) {
        if (cJSON_IsString(item) && strcmp(item->valuestring, f->finalizer) == 0)
            found = true;
        else
            cJSON_AddItemToArray(kept, cJSON_Duplicate(item, 1));
    }
    if (!found) {
        cJSON_Delete(p);
        return 1;
    }
    *patch = p;
    return 0;
}

int ns_kube_remove_finalizer(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const char *name,
                             const char *finalizer)
{
    long status = 0;
    int rc;
    if (r->group[0] == '\0' || strcmp(r->group, "apps") == 0) {
        cJSON *patch = cJSON_CreateObject();
        cJSON *meta = cJSON_AddObjectToObject(patch, "metadata");
        cJSON *list = cJSON_AddArrayToObject(meta, "$deleteFromPrimitiveList/finalizers");
        if (!list || !cJSON_AddItemToArray(list, cJSON_CreateString(finalizer))) {
            cJSON_Delete(patch);
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory building a finalizer patch");
        }
        rc = ns_kube_patch(c, r, ns, name, NULL, NS_KUBE_STRATEGIC_PATCH, patch, NULL, &status, NULL);
        cJSON_Delete(patch);
    } else {
        finalizer_ctx f = {finalizer};
        rc = ns_kube_patch_retry(c, r, ns, name, NULL, without_finalizer, &f, NULL, NULL);
        if (rc < 0 && ns_error_last()->code == NS_ERR_NOT_FOUND)
            status = 404;
    }
    if (rc < 0 && status == 404) {
        ns_error_clear();
        return 0;
    }
    return rc;
}

static cJSON *delete_options(const ns_kube_delete_opts *o)
{
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "apiVersion", "v1");
    cJSON_AddStringToObject(body, "kind", "DeleteOptions");
    if (o && (o->uid || o->resource_version)) {
        cJSON *pre = cJSON_AddObjectToObject(body, "preconditions");
        if (o->uid)
            cJSON_AddStringToObject(pre, "uid", o->uid);
        if (o->resource_version)
            cJSON_AddStringToObject(pre, "resourceVersion", o->resource_version);
    }
    if (o && o->grace_period_s >= 0)
        cJSON_AddNumberToObject(body, "gracePeriodSeconds", (double)o->grace_period_s);
    if (o && o->propagation)
        cJSON_AddStringToObject(body, "propagationPolicy", o->propagation);
    return body;
}

int ns_kube_delete(ns_kube_client *c, const ns_kube_resource *r, const char *ns, const char *name,
                   const ns_kube_delete_opts *opts, long *status)
{
    char path[PATH_LEN], what[512];
    int rc = ns_kube_path(path, sizeof(path), r, ns, name, NULL, NULL);
    what_of(what, sizeof(what), "deleting", r, ns, name, NULL);
    if (rc < 0)
        return rc;
    cJSON *body = delete_options(opts);
    if (!body)
        return NS_FAIL(NS_ERR_INTERNAL, "%s: out of memory", what);
    rc = ns_kube_json(c, "DELETE", path, NULL, body, what, status, NULL);
    cJSON_Delete(body);
    return rc;
}

/* The eviction subresource's 500 for a pod under two PDBs; Karpenter treats it as a block, like a 429. */
#define MULTI_PDB_MESSAGE "more than one PodDisruptionBudget"

int ns_kube_evict(ns_kube_client *c, const char *ns, const char *name, const char *uid, ns_kube_evict_result *result)
{
    char path[PATH_LEN], what[512];
    char reason[64], message[512];
    ns_kube_resp resp = {0};
    char *text = NULL;
    int rc = ns_kube_path(path, sizeof(path), &NS_KUBE_PODS, ns, name, "eviction", NULL);
    snprintf(what, sizeof(what), "evicting Pod %s/%s", ns, name);
    if (rc < 0)
        return rc;
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "apiVersion", "policy/v1");
    cJSON_AddStringToObject(body, "kind", "Eviction");
    cJSON *meta = cJSON_AddObjectToObject(body, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", ns);
    if (uid) {
        cJSON *opts = cJSON_AddObjectToObject(body, "deleteOptions");
        cJSON *pre = cJSON_AddObjectToObject(opts, "preconditions");
        cJSON_AddStringToObject(pre, "uid", uid);
    }
    if (!(text = cJSON_PrintUnformatted(body))) {
        cJSON_Delete(body);
        return NS_FAIL(NS_ERR_INTERNAL, "%s: out of memory", what);
    }
    cJSON_Delete(body);
    ns_kube_req req = {.method = "POST", .path = path, .body = text, .body_len = strlen(text),
                       .no_status_retry = true};
    rc = ns_kube_do(c, &req, &resp);
    free(text);
    if (rc < 0)
        return ns_error_prefix("%s: ", what);
    ns_kube_status_reason(&resp, reason, sizeof(reason), message, sizeof(message));
    if (resp.status >= 200 && resp.status < 300)
        *result = NS_KUBE_EVICTED;
    else if (resp.status == 429 || (resp.status == 500 && strstr(message, MULTI_PDB_MESSAGE)))
        *result = NS_KUBE_EVICT_BLOCKED;
    else if (resp.status == 404 || resp.status == 409)
        *result = NS_KUBE_EVICT_GONE;
    else
        rc = ns_kube_fail(&resp, what);
    ns_kube_resp_clear(&resp);
    return rc;
}
