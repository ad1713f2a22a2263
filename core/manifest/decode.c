#include "manifest/decode.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/duration.h"
#include "model/model_util.h"
#include "model/names.h"
#include "model/resources.h"

int ns_dec_fail(const ns_dec *d, const ns_ynode *at, const char *path, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    int line = at ? at->line : 0;
    /* Trees from JSON (the API server) have no lines: the object and the field path say where. */
    if (line == 0 && path && *path)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: %s: %s: %s", d->file, d->object, path, msg);
    if (line == 0)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: %s: %s", d->file, d->object, msg);
    if (path && *path)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%d: %s: %s: %s", d->file, line, d->object, path, msg);
    return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%d: %s: %s", d->file, line, d->object, msg);
}

int ns_dec_wrap(const ns_dec *d, const ns_ynode *at)
{
    if (!at || at->line == 0)
        return ns_error_prefix("%s: %s: ", d->file, d->object);
    return ns_error_prefix("%s:%d: %s: ", d->file, at ? at->line : 0, d->object);
}

/* A path too long for the buffer is cut and ends in "..." so messages stay readable. */
static void mark_truncation(char *buf, size_t len, int written)
{
    if (written >= 0 && (size_t)written < len)
        return;
    if (len >= 4)
        memcpy(buf + len - 4, "...", 4);
}

void ns_path_key(char *buf, size_t len, const char *path, const char *key)
{
    int n = path && *path ? snprintf(buf, len, "%s.%s", path, key) : snprintf(buf, len, "%s", key);
    mark_truncation(buf, len, n);
}

void ns_path_index(char *buf, size_t len, const char *path, size_t i)
{
    mark_truncation(buf, len, snprintf(buf, len, "%s[%zu]", path, i));
}

int ns_dec_fields(const ns_dec *d, const ns_ynode *node, const char *path, const char *const *known)
{
    if (node->kind != NS_Y_MAP)
        return ns_dec_fail(d, node, path, "expected a mapping, got %s", ns_ynode_type_name(node));
    for (size_t i = 0; i < node->n; i++) {
        const ns_ynode *k = ns_ymap_key(node, i);
        if (k->kind != NS_Y_SCALAR || !k->str)
            return ns_dec_fail(d, k, path, "field names must be strings, got %s", ns_ynode_type_name(k));
        for (size_t j = 0; j < i; j++) {
            const ns_ynode *prev = ns_ymap_key(node, j);
            if (prev->str && strcmp(prev->str, k->str) == 0) {
                char p[NS_PATH_MAX];
                ns_path_key(p, sizeof(p), path, k->str);
                return ns_dec_fail(d, k, NULL, "duplicate field \"%s\" (first on line %d)", p, prev->line);
            }
        }
        if (!known)
            continue;
        bool ok = false;
        for (const char *const *f = known; *f && !ok; f++)
            ok = strcmp(*f, k->str) == 0;
        if (!ok) {
            char p[NS_PATH_MAX];
            ns_path_key(p, sizeof(p), path, k->str);
            return ns_dec_fail(d, k, NULL, "unknown field \"%s\"", p);
        }
    }
    return 0;
}

static const char *kind_name(ns_ynode_kind kind)
{
    return kind == NS_Y_MAP ? "a mapping" : kind == NS_Y_SEQ ? "a list" : "a scalar";
}

const ns_ynode *ns_dec_child(const ns_dec *d, const ns_ynode *map, const char *path, const char *key,
                             ns_ynode_kind kind, int *rc)
{
    *rc = 0;
    const ns_ynode *v = ns_ymap_get(map, key);
    if (!v || v->kind == kind)
        return v;
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, key);
    *rc = ns_dec_fail(d, v, p, "expected %s, got %s", kind_name(kind), ns_ynode_type_name(v));
    return NULL;
}

int ns_dec_object(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, const char *const *known,
                  ns_dec_field *f)
{
    int rc;
    if (!(f->node = ns_dec_child(d, map, path, key, NS_Y_MAP, &rc)))
        return rc;
    ns_path_key(f->path, sizeof(f->path), path, key);
    return (rc = ns_dec_fields(d, f->node, f->path, known)) < 0 ? rc : 1;
}

int ns_dec_scalar_string(const ns_dec *d, const ns_ynode *node, const char *path, const char **out)
{
    if (node->kind != NS_Y_SCALAR)
        return ns_dec_fail(d, node, path, "expected a string, got %s", ns_ynode_type_name(node));
    *out = node->str ? node->str : "";
    return 0;
}

/* The string at map[key]: 1 with its node and path in *f and the string (borrowed) in *s, 0 when absent, or the
 * error when it is not a string. */
static int string_at(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, ns_dec_field *f,
                     const char **s)
{
    if (!(f->node = ns_ymap_get(map, key)))
        return 0;
    ns_path_key(f->path, sizeof(f->path), path, key);
    int rc = ns_dec_scalar_string(d, f->node, f->path, s);
    return rc < 0 ? rc : 1;
}

int ns_dec_string(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, char **out)
{
    ns_dec_field f;
    const char *s = NULL;
    int rc = string_at(d, map, path, key, &f, &s);
    if (rc <= 0)
        return rc;
    char *copy = ns_strdup(s);
    if (!copy)
        return NS_ERR_INTERNAL;
    free(*out);
    *out = copy;
    return 0;
}

int ns_dec_string_required(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, char **out)
{
    int rc = ns_dec_string(d, map, path, key, out);
    if (rc == 0 && (!*out || !**out)) {
        char p[NS_PATH_MAX];
        ns_path_key(p, sizeof(p), path, key);
        return ns_dec_fail(d, map, NULL, "missing required field \"%s\"", p);
    }
    return rc;
}

int ns_dec_int(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, int64_t min, int64_t max,
               int64_t *out, bool *present)
{
    if (present)
        *present = false;
    const ns_ynode *v = ns_ymap_get(map, key);
    if (!v)
        return 0;
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, key);
    int64_t value;
    if (v->kind == NS_Y_SCALAR && v->type == NS_YS_INT)
        value = v->i;
    else if (v->kind == NS_Y_SCALAR && v->type == NS_YS_FLOAT && isfinite(v->f) && floor(v->f) == v->f &&
             fabs(v->f) < 9.2e18)
        value = (int64_t)v->f;
    else if (v->kind == NS_Y_SCALAR && v->type == NS_YS_STRING)
        return ns_dec_fail(d, v, p, "expected an integer, got the string \"%s\"", v->text);
    else
        return ns_dec_fail(d, v, p, "expected an integer, got %s", ns_ynode_type_name(v));
    if (value < min || value > max)
        return ns_dec_fail(d, v, p, "%lld is out of range %lld..%lld", (long long)value, (long long)min,
                           (long long)max);
    *out = value;
    if (present)
        *present = true;
    return 0;
}

int ns_dec_int32(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, int32_t min, int32_t max,
                 int32_t *out, bool *present)
{
    int64_t v = 0;
    bool have = false;
    int rc = ns_dec_int(d, map, path, key, min, max, &v, &have);
    if (rc == 0 && have)
        *out = (int32_t)v;
    if (present)
        *present = have;
    return rc;
}

int ns_dec_bool(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, bool *out, bool *present)
{
    if (present)
        *present = false;
    const ns_ynode *v = ns_ymap_get(map, key);
    if (!v)
        return 0;
    if (v->kind != NS_Y_SCALAR || v->type != NS_YS_BOOL) {
        char p[NS_PATH_MAX];
        ns_path_key(p, sizeof(p), path, key);
        if (v->kind == NS_Y_SCALAR && v->type == NS_YS_STRING)
            return ns_dec_fail(d, v, p, "expected a boolean, got the string \"%s\"", v->text);
        return ns_dec_fail(d, v, p, "expected a boolean, got %s", ns_ynode_type_name(v));
    }
    *out = v->b;
    if (present)
        *present = true;
    return 0;
}

/* Called for each key of a map of strings: k and v are the key's and value's nodes, vp the value's path. */
typedef int (*string_entry_fn)(const ns_dec *d, const ns_ynode *k, const ns_ynode *v, const char *s, const char *vp,
                               void *ctx);

/* Walks the map of strings at path.key (absent: nothing to do): no unknown-key check, each value a string. */
static int each_string(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, string_entry_fn fn,
                       void *ctx)
{
    ns_dec_field f;
    int rc = ns_dec_object(d, map, path, key, NULL, &f);
    if (rc <= 0)
        return rc;
    for (size_t i = 0; i < f.node->n; i++) {
        const ns_ynode *k = ns_ymap_key(f.node, i), *v = ns_ymap_value(f.node, i);
        char vp[NS_PATH_MAX];
        ns_path_key(vp, sizeof(vp), f.path, k->str);
        const char *s = NULL;
        if ((rc = ns_dec_scalar_string(d, v, vp, &s)) < 0 || (rc = fn(d, k, v, s, vp, ctx)) < 0)
            return rc;
    }
    return 1;
}

static int set_string(const ns_dec *d, const ns_ynode *k, const ns_ynode *v, const char *s, const char *vp, void *ctx)
{
    (void)d, (void)v, (void)vp;
    return ns_labels_set(ctx, k->str, s) < 0 ? NS_ERR_INTERNAL : 0;
}

static int set_label(const ns_dec *d, const ns_ynode *k, const ns_ynode *v, const char *s, const char *vp, void *ctx)
{
    const char *why = NULL;
    char p[NS_PATH_MAX];
    size_t plen = strlen(vp) > strlen(k->str) ? strlen(vp) - strlen(k->str) - 1 : 0;
    snprintf(p, sizeof(p), "%.*s", (int)plen, vp);
    char quoted[NS_EXCERPT_BUF];
    if (!ns_label_key_is_valid(k->str, &why))
        return ns_dec_fail(d, k, p, "label key \"%s\" is invalid: %s", ns_error_excerpt(k->str, quoted, sizeof(quoted)),
                           why);
    if (!ns_label_value_is_valid(s, &why))
        return ns_dec_fail(d, v, vp, "label value \"%s\" is invalid: %s", ns_error_excerpt(s, quoted, sizeof(quoted)),
                           why);
    return set_string(d, k, v, s, vp, ctx);
}

int ns_dec_labels(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, ns_labels *out)
{
    int rc = each_string(d, map, path, key, set_string, out);
    return rc < 0 ? rc : 0;
}

int ns_dec_label_map(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, ns_labels *out)
{
    int rc = each_string(d, map, path, key, set_label, out);
    return rc < 0 ? rc : 0;
}

int ns_dec_seq(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, size_t size, ns_dec_item_fn fn,
               const void *arg, void (*free_items)(void *v, size_t n), void **out, size_t *n)
{
    int rc;
    const ns_ynode *seq = ns_dec_child(d, map, path, key, NS_Y_SEQ, &rc);
    if (!seq || seq->n == 0)
        return rc;
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, key);
    char *v = calloc(seq->n, size);
    if (!v)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory reading %s", p);
    for (size_t i = 0; i < seq->n && rc == 0; i++) {
        char ip[NS_PATH_MAX];
        ns_path_index(ip, sizeof(ip), p, i);
        rc = fn(d, seq->items[i], ip, arg, v + i * size);
    }
    if (rc < 0) {
        free_items(v, seq->n);
        return rc;
    }
    free_items(*out, *n);
    *out = v;
    *n = seq->n;
    return 0;
}

static int decode_string_item(const ns_dec *d, const ns_ynode *item, const char *p, const void *arg, void *out)
{
    (void)arg;
    const char *s = NULL;
    int rc = ns_dec_scalar_string(d, item, p, &s);
    if (rc < 0)
        return rc;
    return (*(char **)out = ns_strdup(s)) ? 0 : NS_FAIL(NS_ERR_INTERNAL, "out of memory reading %s", p);
}

static void free_strings(void *v, size_t n)
{
    ns_strv_free(v, n);
}

int ns_dec_strings(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, char ***out, size_t *n)
{
    return ns_dec_seq(d, map, path, key, sizeof(**out), decode_string_item, NULL, free_strings, (void **)out, n);
}

typedef struct resource_sink {
    ns_res *res;
    bool nonnegative;
} resource_sink;

static int set_resource(const ns_dec *d, const ns_ynode *k, const ns_ynode *v, const char *s, const char *vp,
                        void *ctx)
{
    resource_sink *sink = ctx;
    /* An out-of-range float ("1e400") reads as +Inf: quote what the user wrote instead. */
    if (v->kind == NS_Y_SCALAR && v->type == NS_YS_FLOAT && !isfinite(v->f))
        s = v->text;
    if (ns_res_set_text(sink->res, k->str, s, vp) < 0)
        return ns_dec_wrap(d, v);
    if (sink->nonnegative && ns_res_get(sink->res, k->str) < 0) {
        char quoted[NS_EXCERPT_BUF];
        return ns_dec_fail(d, v, vp, "\"%s\" is negative; it must be greater than or equal to 0",
                           ns_error_excerpt(v->text ? v->text : s, quoted, sizeof(quoted)));
    }
    return 0;
}

static int decode_resources(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, ns_res *out,
                            bool *present, bool nonnegative)
{
    if (present)
        *present = false;
    resource_sink sink = {out, nonnegative};
    int rc = each_string(d, map, path, key, set_resource, &sink);
    if (present)
        *present = rc > 0;
    return rc < 0 ? rc : 0;
}

int ns_dec_resources(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, ns_res *out,
                     bool *present)
{
    return decode_resources(d, map, path, key, out, present, true);
}

int ns_dec_resources_signed(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, ns_res *out,
                            bool *present)
{
    return decode_resources(d, map, path, key, out, present, false);
}

int ns_dec_duration(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, bool allow_never,
                    int64_t *out_ms, bool *present)
{
    if (present)
        *present = false;
    ns_dec_field f;
    const char *s = NULL;
    int rc = string_at(d, map, path, key, &f, &s);
    if (rc <= 0)
        return rc;
    if (ns_duration_parse(s, allow_never, f.path, out_ms) < 0)
        return ns_dec_wrap(d, f.node);
    if (present)
        *present = true;
    return 0;
}
