#include "model/resources.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/checked.h"
#include "model/intern.h"
#include "model/names.h"
#include "model/quantity.h"

static int64_t *standard(ns_res *r, const char *name)
{
    if (strcmp(name, NS_RES_CPU) == 0)
        return &r->cpu_milli;
    if (strcmp(name, NS_RES_MEMORY) == 0)
        return &r->memory_bytes;
    if (strcmp(name, NS_RES_PODS) == 0)
        return &r->pods;
    if (strcmp(name, NS_RES_EPHEMERAL_STORAGE) == 0)
        return &r->ephemeral_storage_bytes;
    return NULL;
}

static ns_res_ext *find_ext(const ns_res *r, const char *name)
{
    for (uint32_t i = 0; i < r->n_ext; i++)
        if (r->ext[i].name == name || strcmp(r->ext[i].name, name) == 0)
            return &r->ext[i];
    return NULL;
}

static int append_ext(ns_res *r, const char *name, int64_t value)
{
    if (!name[0])
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "a resource name is empty");
    /* Kubernetes' rule for resource names (a qualified name): a DNS-subdomain prefix of at most 253 characters and a
     * name of at most 63, so at most NS_RES_NAME_MAX in all. The whole name goes into the message: it fits. */
    const char *why;
    if (!ns_label_key_is_valid(name, &why))
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "resource name \"%s\" (%zu characters) is not a valid resource name: %s",
                       name, strlen(name), why);
    const char *interned = ns_intern(name);
    if (!interned)
        return NS_ERR_INTERNAL;
    if (r->n_ext == r->cap_ext) {
        uint32_t cap = r->cap_ext ? 2 * r->cap_ext : 2;
        ns_res_ext *grown = realloc(r->ext, cap * sizeof(*grown));
        if (!grown)
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory adding resource %s", name);
        r->ext = grown;
        r->cap_ext = cap;
    }
    r->ext[r->n_ext++] = (ns_res_ext){interned, value};
    return 0;
}

int ns_res_set(ns_res *r, const char *name, int64_t value)
{
    int64_t *slot = standard(r, name);
    if (slot) {
        *slot = value;
        return 0;
    }
    ns_res_ext *e = find_ext(r, name);
    if (!e)
        return append_ext(r, name, value);
    e->value = value;
    return 0;
}

int ns_res_set_text(ns_res *r, const char *name, const char *text, const char *field)
{
    bool is_cpu = strcmp(name, NS_RES_CPU) == 0;
    bool exact = true;
    int64_t v;
    int rc = ns_quantity_parse(text, is_cpu ? NS_QTY_MILLI : NS_QTY_UNITS, field, &v, &exact);
    if (rc < 0)
        return rc;
    if (!standard(r, name) && !exact)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: extended resource %s must be a whole number, got \"%s\"", field,
                       name, text);
    rc = ns_res_set(r, name, v);
    if (rc < 0)
        return ns_error_prefix("%s: ", field);
    return 0;
}

int64_t ns_res_get(const ns_res *r, const char *name)
{
    int64_t *slot = standard((ns_res *)r, name);
    if (slot)
        return *slot;
    const ns_res_ext *e = find_ext(r, name);
    return e ? e->value : 0;
}

typedef enum { OP_ADD, OP_SUB, OP_MAX } combine_op;

/* *a op b, refusing a sum or difference that does not fit: three containers of 4Ei memory must not wrap to a
 * negative request that fits anywhere. */
static int combine(const char *name, int64_t *a, int64_t b, combine_op op)
{
    int64_t r = *a > b ? *a : b;
    if ((op == OP_ADD && !ns_checked_add(*a, b, &r)) || (op == OP_SUB && !ns_checked_sub(*a, b, &r))) {
        bool cpu = strcmp(name, NS_RES_CPU) == 0;
        bool bytes = strcmp(name, NS_RES_MEMORY) == 0 || strcmp(name, NS_RES_EPHEMERAL_STORAGE) == 0;
        char x[48], y[48];
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "resource %s: %s %s %s does not fit in 64 bits", name,
                       ns_quantity_format(*a, cpu ? NS_QTY_MILLI : NS_QTY_UNITS, bytes, x, sizeof(x)),
                       op == OP_ADD ? "+" : "-",
                       ns_quantity_format(b, cpu ? NS_QTY_MILLI : NS_QTY_UNITS, bytes, y, sizeof(y)));
    }
    *a = r;
    return 0;
}

static int combine_all(ns_res *dst, const ns_res *src, combine_op op)
{
    int rc;
    if ((rc = combine(NS_RES_CPU, &dst->cpu_milli, src->cpu_milli, op)) < 0 ||
        (rc = combine(NS_RES_MEMORY, &dst->memory_bytes, src->memory_bytes, op)) < 0 ||
        (rc = combine(NS_RES_PODS, &dst->pods, src->pods, op)) < 0 ||
        (rc = combine(NS_RES_EPHEMERAL_STORAGE, &dst->ephemeral_storage_bytes, src->ephemeral_storage_bytes, op)) < 0)
        return rc;
    for (uint32_t i = 0; i < src->n_ext; i++) {
        const ns_res_ext *s = &src->ext[i];
        ns_res_ext *d = find_ext(dst, s->name);
        if (d) {
            if ((rc = combine(s->name, &d->value, s->value, op)) < 0)
                return rc;
            continue;
        }
        int64_t v = 0;
        if ((rc = combine(s->name, &v, s->value, op)) < 0 || (rc = append_ext(dst, s->name, v)) < 0)
            return rc;
    }
    return 0;
}

int ns_res_add(ns_res *dst, const ns_res *src)
{
    return combine_all(dst, src, OP_ADD);
}

int ns_res_sub(ns_res *dst, const ns_res *src)
{
    return combine_all(dst, src, OP_SUB);
}

int ns_res_max(ns_res *dst, const ns_res *src)
{
    return combine_all(dst, src, OP_MAX);
}

int ns_res_copy(ns_res *dst, const ns_res *src)
{
    if (dst == src)
        return 0;
    ns_res_free(dst);
    ns_res_ext *ext = NULL;
    if (src->n_ext && !(ext = malloc(src->n_ext * sizeof(*ext))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory copying %u extended resources", (unsigned)src->n_ext);
    *dst = *src;
    if (ext)
        memcpy(ext, src->ext, src->n_ext * sizeof(*ext));
    dst->ext = ext;
    dst->cap_ext = src->n_ext;
    return 0;
}

void ns_res_free(ns_res *r)
{
    if (!r)
        return;
    free(r->ext);
    memset(r, 0, sizeof(*r));
}

static bool ext_within(const ns_res *a, const ns_res *b)
{
    for (uint32_t i = 0; i < a->n_ext; i++)
        if (a->ext[i].value != ns_res_get(b, a->ext[i].name))
            return false;
    return true;
}

bool ns_res_equal(const ns_res *a, const ns_res *b)
{
    return a->cpu_milli == b->cpu_milli && a->memory_bytes == b->memory_bytes && a->pods == b->pods &&
           a->ephemeral_storage_bytes == b->ephemeral_storage_bytes && ext_within(a, b) && ext_within(b, a);
}

static void describe(char *reason, size_t len, const char *name, int64_t req, int64_t avail)
{
    if (!reason || !len)
        return;
    char a[48], b[48];
    bool cpu = strcmp(name, NS_RES_CPU) == 0;
    bool bytes = strcmp(name, NS_RES_MEMORY) == 0 || strcmp(name, NS_RES_EPHEMERAL_STORAGE) == 0;
    snprintf(reason, len, "%s: requested %s, available %s", name,
             ns_quantity_format(req, cpu ? NS_QTY_MILLI : NS_QTY_UNITS, bytes, a, sizeof(a)),
             ns_quantity_format(avail, cpu ? NS_QTY_MILLI : NS_QTY_UNITS, bytes, b, sizeof(b)));
}

bool ns_res_fit(const ns_res *requested, const ns_res *available, char *reason, size_t reason_len)
{
    static const char *const names[] = {NS_RES_CPU, NS_RES_MEMORY, NS_RES_PODS, NS_RES_EPHEMERAL_STORAGE};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int64_t req = ns_res_get(requested, names[i]), avail = ns_res_get(available, names[i]);
        if (req > avail) {
            describe(reason, reason_len, names[i], req, avail);
            return false;
        }
    }
    for (uint32_t i = 0; i < requested->n_ext; i++) {
        const ns_res_ext *e = &requested->ext[i];
        int64_t avail = ns_res_get(available, e->name);
        if (e->value > avail) {
            describe(reason, reason_len, e->name, e->value, avail);
            return false;
        }
    }
    return true;
}

bool ns_res_is_zero(const ns_res *r)
{
    if (r->cpu_milli || r->memory_bytes || r->pods || r->ephemeral_storage_bytes)
        return false;
    for (uint32_t i = 0; i < r->n_ext; i++)
        if (r->ext[i].value)
            return false;
    return true;
}

char *ns_res_format(const ns_res *r, char *buf, size_t len)
{
    size_t off = 0;
    char q[48];
    if (len)
        buf[0] = '\0';
#define PUT(name, value, scale, binary)                                                                                \
    do {                                                                                                               \
        if ((value) && off < len) {                                                                                    \
            int n_ = snprintf(buf + off, len - off, "%s%s=%s", off ? " " : "", (name),                                \
                              ns_quantity_format((value), (scale), (binary), q, sizeof(q)));                           \
            off = n_ > 0 ? off + (size_t)n_ : off;                                                                     \
        }                                                                                                              \
    } while (0)
    PUT(NS_RES_CPU, r->cpu_milli, NS_QTY_MILLI, false);
    PUT(NS_RES_MEMORY, r->memory_bytes, NS_QTY_UNITS, true);
    PUT(NS_RES_PODS, r->pods, NS_QTY_UNITS, false);
    PUT(NS_RES_EPHEMERAL_STORAGE, r->ephemeral_storage_bytes, NS_QTY_UNITS, true);
    for (uint32_t i = 0; i < r->n_ext; i++)
        PUT(r->ext[i].name, r->ext[i].value, NS_QTY_UNITS, false);
#undef PUT
    return buf;
}
