#include "model/requirements.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/intern.h"
#include "model/labels.h"
#include "model/model_util.h"

static const char *const op_names[] = {
    [NS_OP_IN] = "In",   [NS_OP_NOT_IN] = "NotIn", [NS_OP_EXISTS] = "Exists", [NS_OP_DOES_NOT_EXIST] = "DoesNotExist",
    [NS_OP_GT] = "Gt",   [NS_OP_LT] = "Lt",        [NS_OP_GTE] = "Gte",       [NS_OP_LTE] = "Lte",
};

const char *ns_req_op_name(ns_req_op op)
{
    if (op < NS_OP_IN || op > NS_OP_LTE)
        return "?";
    return op_names[op];
}

bool ns_req_op_parse(const char *name, ns_req_op *out)
{
    for (int op = NS_OP_IN; op <= NS_OP_LTE; op++) {
        if (strcmp(name, op_names[op]) == 0) {
            *out = (ns_req_op)op;
            return true;
        }
    }
    return false;
}

/* Go's strconv.Atoi on a 64-bit platform: optional sign, decimal digits only. */
static bool parse_int(const char *s, int64_t *out)
{
    if (!s || !*s)
        return false;
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!*p)
        return false;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9')
            return false;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE)
        return false;
    *out = v;
    return true;
}

int ns_selector_req_validate(const ns_selector_req *r, const char *field)
{
    const char *op = ns_req_op_name(r->op);
    if (!r->key || !*r->key)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s.key: must not be empty", field);
    switch (r->op) {
    case NS_OP_IN:
    case NS_OP_NOT_IN:
        if (r->n_values == 0)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: operator %s needs at least one value (key %s)", field, op,
                           r->key);
        break;
    case NS_OP_EXISTS:
    case NS_OP_DOES_NOT_EXIST:
        if (r->n_values != 0)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: operator %s takes no values (key %s)", field, op, r->key);
        break;
    case NS_OP_GT:
    case NS_OP_LT:
    case NS_OP_GTE:
    case NS_OP_LTE: {
        int64_t v;
        if (r->n_values != 1 || !parse_int(r->values[0], &v))
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: operator %s needs exactly one integer value (key %s)", field,
                           op, r->key);
        break;
    }
    default:
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: unknown operator (key %s)", field, r->key);
    }
    if (r->min_values != 0) {
        if (r->min_values < 1 || r->min_values > NS_MIN_VALUES_MAX)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s.minValues: %d is out of range 1..%d (key %s)", field,
                           r->min_values, NS_MIN_VALUES_MAX, r->key);
        if (r->op == NS_OP_IN && (size_t)r->min_values > r->n_values)
            return NS_FAIL(NS_ERR_INVALID_CONFIG,
                           "%s: minValues %d needs at least that many values, but %zu are listed (key %s)", field,
                           r->min_values, r->n_values, r->key);
    }
    return 0;
}

static void free_values(ns_selector_req *r)
{
    if (r->values_block)
        free(r->values);
    else
        ns_strv_free(r->values, r->n_values);
    r->values = NULL;
    r->n_values = 0;
    r->values_block = false;
}

int ns_selector_req_set_values(ns_selector_req *r, char *const *values, size_t n)
{
    size_t bytes = n * sizeof(char *);
    for (size_t i = 0; i < n; i++)
        bytes += strlen(values[i]) + 1;
    char **block = n ? malloc(bytes) : NULL;
    if (n && !block)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory copying %zu requirement values", n);
    char *text = (char *)(block + n);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(values[i]) + 1;
        memcpy(text, values[i], len);
        block[i] = text;
        text += len;
    }
    free_values(r);
    r->values = block;
    r->n_values = n;
    r->values_block = true;
    return 0;
}

int ns_selector_req_set_interned(ns_selector_req *r, char *const *values, size_t n)
{
    char **array = n ? malloc(n * sizeof(*array)) : NULL;
    if (n && !array)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory listing %zu requirement values", n);
    for (size_t i = 0; i < n; i++)
        if (!(array[i] = (char *)ns_intern(values[i]))) {
            free(array);
            return NS_ERR_INTERNAL;
        }
    free_values(r);
    r->values = array;
    r->n_values = n;
    r->values_block = true;
    return 0;
}

int ns_selector_req_copy(const ns_selector_req *src, ns_selector_req *dst)
{
    memset(dst, 0, sizeof(*dst));
    dst->key = ns_strdup(src->key);
    if (!dst->key || ns_selector_req_set_values(dst, src->values, src->n_values) < 0) {
        ns_selector_req_free(dst);
        return NS_ERR_INTERNAL;
    }
    dst->op = src->op;
    dst->min_values = src->min_values;
    return 0;
}

void ns_selector_req_free(ns_selector_req *r)
{
    if (!r)
        return;
    free(r->key);
    free_values(r);
    memset(r, 0, sizeof(*r));
}

void ns_selector_reqs_free(ns_selector_req *v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        ns_selector_req_free(&v[i]);
    free(v);
}

/* ---- sorted string sets ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool set_has(char *const *v, size_t n, const char *s)
{
    return n > 0 && bsearch(&s, v, n, sizeof(*v), cmp_str) != NULL;
}

static bool within(const char *value, bool has_gte, int64_t gte, bool has_lte, int64_t lte)
{
    if (!has_gte && !has_lte)
        return true;
    int64_t v;
    if (!parse_int(value, &v))
        return false;
    return (!has_gte || v >= gte) && (!has_lte || v <= lte);
}

void ns_requirement_free(ns_requirement *r)
{
    if (!r)
        return;
    free(r->key);
    ns_strv_free(r->values, r->n_values);
    memset(r, 0, sizeof(*r));
}

/* Sorts and de-duplicates r->values in place. */
static void normalise_values(ns_requirement *r)
{
    if (r->n_values < 2)
        return;
    qsort(r->values, r->n_values, sizeof(char *), cmp_str);
    size_t w = 1;
    for (size_t i = 1; i < r->n_values; i++) {
        if (strcmp(r->values[i], r->values[w - 1]) == 0)
            free(r->values[i]);
        else
            r->values[w++] = r->values[i];
    }
    r->n_values = w;
}

int ns_requirement_init(ns_requirement *out, const char *key, ns_req_op op, const char *const *values, size_t n_values,
                        int32_t min_values)
{
    memset(out, 0, sizeof(*out));
    int64_t bound = 0;
    bool bounded = op == NS_OP_GT || op == NS_OP_LT || op == NS_OP_GTE || op == NS_OP_LTE;
    if (bounded && (n_values != 1 || !parse_int(values[0], &bound)))
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "requirement %s %s needs exactly one integer value", key,
                       ns_req_op_name(op));
    if (op < NS_OP_IN || op > NS_OP_LTE)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "requirement %s has an unknown operator", key);
    out->key = ns_strdup(ns_label_normalize(key));
    if (!out->key)
        return NS_ERR_INTERNAL;
    out->min_values = min_values;
    out->complement = !(op == NS_OP_IN || op == NS_OP_DOES_NOT_EXIST);
    if (op == NS_OP_IN || op == NS_OP_NOT_IN) {
        if (ns_strv_copy((char *const *)values, n_values, &out->values) < 0) {
            ns_requirement_free(out);
            return NS_ERR_INTERNAL;
        }
        out->n_values = n_values;
        normalise_values(out);
    }
    switch (op) {
    case NS_OP_GT:
        if (bound == INT64_MAX) { /* nothing is greater */
            out->complement = false;
            break;
        }
        out->has_gte = true;
        out->gte = bound + 1;
        break;
    case NS_OP_LT:
        if (bound == INT64_MIN) {
            out->complement = false;
            break;
        }
        out->has_lte = true;
        out->lte = bound - 1;
        break;
    case NS_OP_GTE:
        out->has_gte = true;
        out->gte = bound;
        break;
    case NS_OP_LTE:
        out->has_lte = true;
        out->lte = bound;
        break;
    default:
        break;
    }
    return 0;
}

int ns_requirement_copy(const ns_requirement *src, ns_requirement *dst)
{
    *dst = *src;
    dst->key = NULL;
    dst->values = NULL;
    dst->key = ns_strdup(src->key);
    if (!dst->key || ns_strv_copy(src->values, src->n_values, &dst->values) < 0) {
        dst->n_values = 0;
        ns_requirement_free(dst);
        return NS_ERR_INTERNAL;
    }
    return 0;
}

ns_req_op ns_requirement_operator(const ns_requirement *r)
{
    if (r->complement)
        return r->n_values > 0 ? NS_OP_NOT_IN : NS_OP_EXISTS;
    return r->n_values > 0 ? NS_OP_IN : NS_OP_DOES_NOT_EXIST;
}

bool ns_requirement_has(const ns_requirement *r, const char *value)
{
    bool listed = set_has(r->values, r->n_values, value);
    if (r->complement ? listed : !listed)
        return false;
    return within(value, r->has_gte, r->gte, r->has_lte, r->lte);
}

static void combined_bounds(const ns_requirement *a, const ns_requirement *b, bool *has_gte, int64_t *gte,
                            bool *has_lte, int64_t *lte)
{
    *has_gte = a->has_gte || b->has_gte;
    *gte = a->has_gte && b->has_gte ? (a->gte > b->gte ? a->gte : b->gte) : (a->has_gte ? a->gte : b->gte);
    *has_lte = a->has_lte || b->has_lte;
    *lte = a->has_lte && b->has_lte ? (a->lte < b->lte ? a->lte : b->lte) : (a->has_lte ? a->lte : b->lte);
}

int ns_requirement_intersection(const ns_requirement *a, const ns_requirement *b, ns_requirement *out)
{
    memset(out, 0, sizeof(*out));
    bool has_gte, has_lte;
    int64_t gte, lte;
    combined_bounds(a, b, &has_gte, &gte, &has_lte, &lte);
    out->min_values = a->min_values > b->min_values ? a->min_values : b->min_values;
    out->key = ns_strdup(a->key);
    if (!out->key)
        return NS_ERR_INTERNAL;
    if (has_gte && has_lte && gte > lte)
        return 0; /* crossing bounds: DoesNotExist */

    out->complement = a->complement && b->complement;
    /* Candidate values: the union when both are complements, else the concrete side's values. */
    size_t cap = a->n_values + b->n_values;
    if (cap > 0) {
        out->values = calloc(cap, sizeof(char *));
        if (!out->values) {
            ns_requirement_free(out);
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory intersecting requirements on %s", a->key);
        }
    }
    const ns_requirement *sides[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        const ns_requirement *self = sides[s], *other = sides[1 - s];
        if (!out->complement && self->complement)
            continue;
        for (size_t i = 0; i < self->n_values; i++) {
            const char *v = self->values[i];
            bool keep;
            if (out->complement)
                keep = s == 0 || !set_has(a->values, a->n_values, v);
            else if (other->complement)
                keep = !set_has(other->values, other->n_values, v);
            else
                keep = s == 0 && set_has(other->values, other->n_values, v);
            if (keep && !within(v, has_gte, gte, has_lte, lte))
                keep = false;
            if (!keep)
                continue;
            if (!(out->values[out->n_values] = ns_strdup(v))) {
                ns_requirement_free(out);
                return NS_ERR_INTERNAL;
            }
            out->n_values++;
        }
    }
    normalise_values(out);
    if (out->complement) { /* concrete sets need no bounds: their values were filtered above */
        out->has_gte = has_gte;
        out->gte = gte;
        out->has_lte = has_lte;
        out->lte = lte;
    }
    return 0;
}

bool ns_requirement_has_intersection(const ns_requirement *a, const ns_requirement *b)
{
    bool has_gte, has_lte;
    int64_t gte, lte;
    combined_bounds(a, b, &has_gte, &gte, &has_lte, &lte);
    if (has_gte && has_lte && gte > lte)
        return false;
    if (a->complement && b->complement)
        return true;
    const ns_requirement *concrete = a->complement ? b : a, *other = a->complement ? a : b;
    for (size_t i = 0; i < concrete->n_values; i++) {
        const char *v = concrete->values[i];
        bool listed = set_has(other->values, other->n_values, v);
        if ((other->complement ? !listed : listed) && within(v, has_gte, gte, has_lte, lte))
            return true;
    }
    return false;
}

/* Appends to buf at *off, never overflowing. */
static void append(char *buf, size_t len, size_t *off, const char *fmt, ...) NS_PRINTF(4, 5);
static void append(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
    if (*off >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *off, len - *off, fmt, ap);
    va_end(ap);
    if (n > 0)
        *off += (size_t)n;
    if (*off >= len)
        *off = len - 1;
}

static void format_into(const ns_requirement *r, char *buf, size_t len, size_t *off)
{
    ns_req_op op = ns_requirement_operator(r);
    append(buf, len, off, "%s %s", r->key, ns_req_op_name(op));
    if (op == NS_OP_IN || op == NS_OP_NOT_IN) {
        append(buf, len, off, " [");
        for (size_t i = 0; i < r->n_values && i < 5; i++)
            append(buf, len, off, "%s%s", i ? " " : "", r->values[i]);
        if (r->n_values > 5)
            append(buf, len, off, " and %zu others", r->n_values - 5);
        append(buf, len, off, "]");
    }
    if (r->has_gte)
        append(buf, len, off, " >=%" PRId64, r->gte);
    if (r->has_lte)
        append(buf, len, off, " <=%" PRId64, r->lte);
    if (r->min_values)
        append(buf, len, off, " minValues %d", r->min_values);
}

char *ns_requirement_format(const ns_requirement *r, char *buf, size_t len)
{
    size_t off = 0;
    if (len)
        buf[0] = '\0';
    format_into(r, buf, len, &off);
    return buf;
}

/* ---- sets ---- */

static size_t find_key(const ns_requirements *s, const char *key, bool *found)
{
    return ns_sorted_find(s->items, s->n, sizeof(*s->items), offsetof(ns_requirement, key), key, found);
}

int ns_requirements_add(ns_requirements *s, const ns_requirement *r)
{
    bool found;
    size_t i = find_key(s, r->key, &found);
    ns_requirement merged;
    int rc = found ? ns_requirement_intersection(r, &s->items[i], &merged) : ns_requirement_copy(r, &merged);
    if (rc < 0)
        return rc;
    if (found) {
        ns_requirement_free(&s->items[i]);
        s->items[i] = merged;
        return 0;
    }
    if (ns_grow((void **)&s->items, &s->cap, s->n + 1, sizeof(ns_requirement)) < 0) {
        ns_requirement_free(&merged);
        return NS_ERR_INTERNAL;
    }
    memmove(&s->items[i + 1], &s->items[i], (s->n - i) * sizeof(ns_requirement));
    s->items[i] = merged;
    s->n++;
    return 0;
}

int ns_requirements_add_op(ns_requirements *s, const char *key, ns_req_op op, const char *const *values, size_t n,
                           int32_t min_values)
{
    ns_requirement r;
    int rc = ns_requirement_init(&r, key, op, values, n, min_values);
    if (rc < 0)
        return rc;
    rc = ns_requirements_add(s, &r);
    ns_requirement_free(&r);
    return rc;
}

int ns_requirements_add_selector(ns_requirements *s, const ns_selector_req *reqs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = ns_requirements_add_op(s, reqs[i].key, reqs[i].op, (const char *const *)reqs[i].values,
                                        reqs[i].n_values, reqs[i].min_values);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int ns_requirements_add_labels(ns_requirements *s, const ns_label *labels, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = labels[i].value;
        int rc = ns_requirements_add_op(s, labels[i].key, NS_OP_IN, &v, 1, 0);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int ns_requirements_add_all(ns_requirements *s, const ns_requirements *other)
{
    for (size_t i = 0; other && i < other->n; i++) {
        int rc = ns_requirements_add(s, &other->items[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

const ns_requirement *ns_requirements_get(const ns_requirements *s, const char *key)
{
    if (!s)
        return NULL;
    bool found;
    size_t i = find_key(s, ns_label_normalize(key), &found);
    return found ? &s->items[i] : NULL;
}

int ns_requirements_copy(const ns_requirements *src, ns_requirements *dst)
{
    memset(dst, 0, sizeof(*dst));
    int rc = ns_requirements_add_all(dst, src);
    if (rc < 0)
        ns_requirements_free(dst);
    return rc;
}

void ns_requirements_free(ns_requirements *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        ns_requirement_free(&s->items[i]);
    free(s->items);
    memset(s, 0, sizeof(*s));
}

bool ns_requirements_has_min_values(const ns_requirements *s)
{
    for (size_t i = 0; s && i < s->n; i++)
        if (s->items[i].min_values)
            return true;
    return false;
}

static bool absent_ok(ns_req_op op)
{
    return op == NS_OP_NOT_IN || op == NS_OP_DOES_NOT_EXIST;
}

static void set_reason(char *reason, size_t len, const char *fmt, ...) NS_PRINTF(3, 4);
static void set_reason(char *reason, size_t len, const char *fmt, ...)
{
    if (!reason || len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, len, fmt, ap);
    va_end(ap);
}

bool ns_requirements_intersects(const ns_requirements *existing, const ns_requirements *incoming, char *reason,
                                size_t reason_len)
{
    for (size_t i = 0; i < incoming->n; i++) {
        const ns_requirement *in = &incoming->items[i];
        const ns_requirement *ex = ns_requirements_get(existing, in->key);
        if (!ex || ns_requirement_has_intersection(ex, in))
            continue;
        if (absent_ok(ns_requirement_operator(in)) && absent_ok(ns_requirement_operator(ex)))
            continue;
        if (reason && reason_len) {
            char a[256], b[256];
            set_reason(reason, reason_len, "key %s, %s not in %s", in->key, ns_requirement_format(in, a, sizeof(a)),
                       ns_requirement_format(ex, b, sizeof(b)));
        }
        return false;
    }
    return true;
}

static bool allowed_undefined(const ns_compat_opts *opts, const char *key)
{
    if (!opts)
        return false;
    if (opts->allow_undefined_well_known && ns_label_is_well_known(key))
        return true;
    for (size_t i = 0; i < opts->n_extra_well_known; i++)
        if (strcmp(opts->extra_well_known[i], key) == 0)
            return true;
    return false;
}

bool ns_requirements_compatible(const ns_requirements *existing, const ns_requirements *incoming,
                                const ns_compat_opts *opts, char *reason, size_t reason_len)
{
    for (size_t i = 0; i < incoming->n; i++) {
        const ns_requirement *in = &incoming->items[i];
        if (allowed_undefined(opts, in->key) || ns_requirements_get(existing, in->key) ||
            absent_ok(ns_requirement_operator(in)))
            continue;
        set_reason(reason, reason_len, "label \"%s\" does not have known values", in->key);
        return false;
    }
    return ns_requirements_intersects(existing, incoming, reason, reason_len);
}

bool ns_requirements_match_labels(const ns_requirements *s, const ns_label *labels, size_t n, char *reason,
                                  size_t reason_len)
{
    for (size_t i = 0; i < s->n; i++) {
        const ns_requirement *r = &s->items[i];
        const char *value = ns_label_find(labels, n, r->key);
        bool ok = value ? ns_requirement_has(r, value)
                        : absent_ok(ns_requirement_operator(r)) && !r->has_gte && !r->has_lte;
        if (ok)
            continue;
        if (reason && reason_len) {
            char f[256];
            if (value)
                set_reason(reason, reason_len, "label %s=%s does not satisfy %s", r->key, value,
                           ns_requirement_format(r, f, sizeof(f)));
            else
                set_reason(reason, reason_len, "label %s is missing, required by %s", r->key,
                           ns_requirement_format(r, f, sizeof(f)));
        }
        return false;
    }
    return true;
}

char *ns_requirements_format(const ns_requirements *s, char *buf, size_t len)
{
    size_t off = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; s && i < s->n; i++) {
        if (i)
            append(buf, len, &off, ", ");
        format_into(&s->items[i], buf, len, &off);
    }
    return buf;
}
