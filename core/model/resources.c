#include "model/resources.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/quantity.h"

static int64_t *standard(ns_resources *r, const char *name)
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

static ns_extended_resource *find_extended(const ns_resources *r, const char *name)
{
    for (uint32_t i = 0; i < r->n_extended && i < NS_MAX_EXTENDED_RESOURCES; i++)
        if (strcmp(r->extended[i].name, name) == 0)
            return (ns_extended_resource *)&r->extended[i];
    return NULL;
}

int ns_resources_set(ns_resources *r, const char *name, int64_t value)
{
    int64_t *slot = standard(r, name);
    if (slot) {
        *slot = value;
        return 0;
    }
    ns_extended_resource *e = find_extended(r, name);
    if (!e) {
        if (r->n_extended >= NS_MAX_EXTENDED_RESOURCES)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "resource %s: more than %d extended resources in one list", name,
                           NS_MAX_EXTENDED_RESOURCES);
        if (strlen(name) >= NS_NAME_MAX)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "resource name %s is longer than %d bytes", name, NS_NAME_MAX - 1);
        e = &r->extended[r->n_extended++];
        snprintf(e->name, sizeof(e->name), "%s", name);
    }
    e->value = value;
    return 0;
}

int ns_resources_set_text(ns_resources *r, const char *name, const char *text, const char *field)
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
    rc = ns_resources_set(r, name, v);
    if (rc < 0)
        return ns_error_prefix("%s: ", field);
    return 0;
}

int64_t ns_resources_get(const ns_resources *r, const char *name)
{
    int64_t *slot = standard((ns_resources *)r, name);
    if (slot)
        return *slot;
    const ns_extended_resource *e = find_extended(r, name);
    return e ? e->value : 0;
}

typedef enum { OP_ADD, OP_SUB, OP_MAX } combine_op;

static int64_t combine(int64_t a, int64_t b, combine_op op)
{
    switch (op) {
    case OP_ADD:
        return a + b;
    case OP_SUB:
        return a - b;
    default:
        return a > b ? a : b;
    }
}

static int combine_all(ns_resources *dst, const ns_resources *src, combine_op op)
{
    dst->cpu_milli = combine(dst->cpu_milli, src->cpu_milli, op);
    dst->memory_bytes = combine(dst->memory_bytes, src->memory_bytes, op);
    dst->pods = combine(dst->pods, src->pods, op);
    dst->ephemeral_storage_bytes = combine(dst->ephemeral_storage_bytes, src->ephemeral_storage_bytes, op);
    for (uint32_t i = 0; i < src->n_extended && i < NS_MAX_EXTENDED_RESOURCES; i++) {
        const ns_extended_resource *s = &src->extended[i];
        ns_extended_resource *d = find_extended(dst, s->name);
        int rc = ns_resources_set(dst, s->name, combine(d ? d->value : 0, s->value, op));
        if (rc < 0)
            return rc;
    }
    return 0;
}

int ns_resources_add(ns_resources *dst, const ns_resources *src)
{
    return combine_all(dst, src, OP_ADD);
}

int ns_resources_sub(ns_resources *dst, const ns_resources *src)
{
    return combine_all(dst, src, OP_SUB);
}

int ns_resources_max(ns_resources *dst, const ns_resources *src)
{
    return combine_all(dst, src, OP_MAX);
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

bool ns_resources_fit(const ns_resources *requested, const ns_resources *available, char *reason, size_t reason_len)
{
    static const char *const names[] = {NS_RES_CPU, NS_RES_MEMORY, NS_RES_PODS, NS_RES_EPHEMERAL_STORAGE};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int64_t req = ns_resources_get(requested, names[i]), avail = ns_resources_get(available, names[i]);
        if (req > avail) {
            describe(reason, reason_len, names[i], req, avail);
            return false;
        }
    }
    for (uint32_t i = 0; i < requested->n_extended && i < NS_MAX_EXTENDED_RESOURCES; i++) {
        const ns_extended_resource *e = &requested->extended[i];
        int64_t avail = ns_resources_get(available, e->name);
        if (e->value > avail) {
            describe(reason, reason_len, e->name, e->value, avail);
            return false;
        }
    }
    return true;
}

bool ns_resources_is_zero(const ns_resources *r)
{
    if (r->cpu_milli || r->memory_bytes || r->pods || r->ephemeral_storage_bytes)
        return false;
    for (uint32_t i = 0; i < r->n_extended && i < NS_MAX_EXTENDED_RESOURCES; i++)
        if (r->extended[i].value)
            return false;
    return true;
}

char *ns_resources_format(const ns_resources *r, char *buf, size_t len)
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
    for (uint32_t i = 0; i < r->n_extended && i < NS_MAX_EXTENDED_RESOURCES; i++)
        PUT(r->extended[i].name, r->extended[i].value, NS_QTY_UNITS, false);
#undef PUT
    return buf;
}
