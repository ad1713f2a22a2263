#include "simulation/timeline_sources.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "manifest/decode.h"
#include "manifest/loader.h"
#include "manifest/manifest_files.h"
#include "manifest/yaml_doc.h"
#include "manifest/yaml_json.h"
#include "model/model_util.h"

/* Kept: the workloads (namespaced) a timeline scales, the CapacityBuffers and PodTemplates (namespaced) it patches,
 * and the cluster-scoped objects it patches: NodePools, Provisioners and every kind the core does not decode itself,
 * which is where node classes are (their kinds are the providers'). */
static const char *const workloads[] = {"Deployment", "ReplicaSet", "StatefulSet", "Job", "CapacityBuffer",
                                        "PodTemplate"};

static bool kept(const char *kind, bool *namespaced)
{
    *namespaced = false;
    for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
        if (strcmp(kind, workloads[i]) == 0)
            return *namespaced = true;
    return strcmp(kind, "NodePool") == 0 || strcmp(kind, "Provisioner") == 0 || !ns_manifest_core_kind(kind);
}

typedef struct entry {
    char *kind;
    char *ns; /* NULL for cluster-scoped kinds */
    char *name;
    cJSON *doc;
} entry;

struct ns_tl_sources {
    entry *items;
    size_t n, cap;
};

ns_tl_sources *ns_tl_sources_new(void)
{
    ns_tl_sources *s = calloc(1, sizeof(*s));
    if (!s)
        NS_FAIL(NS_ERR_INTERNAL, "out of memory for the timeline's manifest registry");
    return s;
}

static void entry_free(entry *e)
{
    free(e->kind);
    free(e->ns);
    free(e->name);
    cJSON_Delete(e->doc);
}

void ns_tl_sources_free(ns_tl_sources *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        entry_free(&s->items[i]);
    free(s->items);
    free(s);
}

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static entry *find(const ns_tl_sources *s, const char *kind, const char *ns, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i].kind, kind) == 0 && same(s->items[i].ns, ns) && strcmp(s->items[i].name, name) == 0)
            return &s->items[i];
    return NULL;
}

const cJSON *ns_tl_sources_get(const ns_tl_sources *s, const char *kind, const char *ns, const char *name)
{
    const entry *e = find(s, kind, ns, name);
    return e ? e->doc : NULL;
}

int ns_tl_sources_replace(ns_tl_sources *s, const char *kind, const char *ns, const char *name, cJSON *doc)
{
    entry *e = find(s, kind, ns, name);
    if (!e) {
        cJSON_Delete(doc);
        return NS_FAIL(NS_ERR_NOT_FOUND, "%s %s%s%s is not in the manifests", kind, ns ? ns : "", ns ? "/" : "", name);
    }
    cJSON_Delete(e->doc);
    e->doc = doc;
    return 0;
}

void ns_tl_sources_remove(ns_tl_sources *s, const char *kind, const char *ns, const char *name)
{
    entry *e = find(s, kind, ns, name);
    if (!e)
        return;
    entry_free(e);
    size_t i = (size_t)(e - s->items);
    memmove(&s->items[i], &s->items[i + 1], (s->n - i - 1) * sizeof(*e));
    s->n--;
}

static const char *doc_string(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Takes ownership of doc. Objects of other kinds, and objects without a name, are dropped. */
static int keep(ns_tl_sources *s, cJSON *doc)
{
    const char *kind = doc_string(doc, "kind");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
    const char *name = doc_string(meta, "name"), *ns = doc_string(meta, "namespace");
    bool namespaced = false;
    if (!kind || !name || !kept(kind, &namespaced)) {
        cJSON_Delete(doc);
        return 0;
    }
    ns = namespaced ? (ns && *ns ? ns : "default") : NULL;
    entry *old = find(s, kind, ns, name);
    if (old) {
        cJSON_Delete(old->doc);
        old->doc = doc;
        return 0;
    }
    entry e = {.kind = ns_strdup(kind), .ns = ns_strdup(ns), .name = ns_strdup(name), .doc = doc};
    if (!e.kind || !e.name || (ns && !e.ns) || ns_grow((void **)&s->items, &s->cap, s->n + 1, sizeof(entry)) < 0) {
        entry_free(&e);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording %s %s", kind, name);
    }
    s->items[s->n++] = e;
    return 0;
}

static int keep_object(ns_tl_sources *s, cJSON *doc, int depth)
{
    const char *kind = doc_string(doc, "kind");
    if (!kind || strcmp(kind, "List") != 0 || depth > 4)
        return keep(s, doc);
    cJSON *items = cJSON_GetObjectItemCaseSensitive(doc, "items"), *item;
    int rc = 0;
    while (rc == 0 && cJSON_IsArray(items) && (item = cJSON_DetachItemFromArray(items, 0)) != NULL)
        rc = keep_object(s, item, depth + 1);
    cJSON_Delete(doc);
    return rc;
}

int ns_tl_sources_add_text(ns_tl_sources *s, const char *name, const char *text, size_t len)
{
    ns_yreader *r;
    int rc = ns_yreader_open_string(name, text, len, &r);
    if (rc < 0)
        return rc;
    ns_dec d = {.file = name};
    snprintf(d.object, sizeof(d.object), "object");
    for (;;) {
        ns_ydoc *ydoc = NULL;
        if ((rc = ns_yreader_next(r, &ydoc)) < 0 || !ydoc)
            break;
        const ns_ynode *root = ns_ydoc_root(ydoc);
        cJSON *doc = NULL;
        if (root->kind == NS_Y_MAP && (rc = ns_yaml_to_json(&d, root, "", &doc)) == 0)
            rc = keep_object(s, doc, 0);
        ns_ydoc_free(ydoc);
        if (rc < 0)
            break;
    }
    ns_yreader_close(r);
    return rc;
}

static int add_file(ns_tl_sources *s, const char *path)
{
    char *buf = NULL;
    size_t n = 0;
    int rc = ns_read_file(path, "manifest", &buf, &n);
    if (rc == 0)
        rc = ns_tl_sources_add_text(s, path, buf, n);
    free(buf);
    return rc;
}

static int add_one(void *ctx, const char *file)
{
    return add_file(ctx, file);
}

int ns_tl_sources_add_path(ns_tl_sources *s, const char *path)
{
    return ns_manifest_each_file(path, add_one, s);
}

int ns_tl_sources_select(const ns_tl_sources *s, const char *kind, const char *ns,
                         bool (*match)(const ns_labels *labels, const void *ctx), const void *ctx,
                         const char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    const char **names = calloc(s->n ? s->n : 1, sizeof(*names));
    if (!names)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory selecting %s objects", kind);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        const entry *e = &s->items[i];
        if (strcmp(e->kind, kind) != 0 || !same(e->ns, ns))
            continue;
        ns_labels labels = {0};
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e->doc, "metadata"),
                                                          "labels"),
                    *kv;
        cJSON_ArrayForEach(kv, l)
        {
            if (cJSON_IsString(kv) && ns_labels_set(&labels, kv->string, kv->valuestring) < 0)
                rc = NS_ERR_INTERNAL;
        }
        if (rc == 0 && match(&labels, ctx))
            names[(*n)++] = e->name;
        ns_labels_free(&labels);
    }
    if (rc < 0) {
        free(names);
        *n = 0;
        return rc;
    }
    *out = names;
    return 0;
}

int ns_json_merge_patch(cJSON **target, const cJSON *patch)
{
    if (!cJSON_IsObject(patch)) {
        cJSON *copy = cJSON_Duplicate(patch, true);
        if (!copy)
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory applying a patch");
        cJSON_Delete(*target);
        *target = copy;
        return 0;
    }
    if (!cJSON_IsObject(*target)) {
        cJSON *obj = cJSON_CreateObject();
        if (!obj)
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory applying a patch");
        cJSON_Delete(*target);
        *target = obj;
    }
    const cJSON *p;
    cJSON_ArrayForEach(p, patch)
    {
        if (cJSON_IsNull(p)) {
            cJSON_DeleteItemFromObjectCaseSensitive(*target, p->string);
            continue;
        }
        cJSON *child = cJSON_DetachItemFromObjectCaseSensitive(*target, p->string);
        int rc = ns_json_merge_patch(&child, p);
        if (rc == 0 && !cJSON_AddItemToObject(*target, p->string, child))
            rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory applying a patch");
        if (rc < 0) {
            cJSON_Delete(child);
            return rc;
        }
    }
    return 0;
}
