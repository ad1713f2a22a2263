#include "cloud/instance_types.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/checked.h"
#include "model/names.h"
#include "plugin/plugin_loader.h"
#include "plugin/plugin_resources.h"

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const ns_label *)a)->key, ((const ns_label *)b)->key);
}

static int64_t floor_zero(int64_t v)
{
    return v < 0 ? 0 : v;
}

static int compute_allocatable(ns_itype *t)
{
    const ns_res *c = &t->capacity, *k = &t->kube_reserved, *s = &t->system_reserved, *e = &t->eviction_threshold;
    ns_res *a = &t->allocatable;
    int rc = ns_res_copy(a, c);
    if (rc < 0)
        return rc;
    /* Every amount is at least 0 (check_reported), so the saturated sum of reservations cannot make this wrap. */
    a->cpu_milli = floor_zero(c->cpu_milli - ns_saturating_add(ns_saturating_add(k->cpu_milli, s->cpu_milli),
                                                               e->cpu_milli));
    a->memory_bytes = floor_zero(c->memory_bytes - ns_saturating_add(ns_saturating_add(k->memory_bytes,
                                                                                       s->memory_bytes),
                                                                     e->memory_bytes));
    a->ephemeral_storage_bytes =
        floor_zero(c->ephemeral_storage_bytes -
                   ns_saturating_add(ns_saturating_add(k->ephemeral_storage_bytes, s->ephemeral_storage_bytes),
                                     e->ephemeral_storage_bytes));
    return 0;
}

/* A provider's amounts are never negative: a negative capacity or reservation would make room that is not there. */
static int check_amounts(const ns_res *r, const char *what)
{
    const struct {
        const char *name;
        int64_t value;
    } std[] = {{"cpu", r->cpu_milli}, {"memory", r->memory_bytes}, {"pods", r->pods},
               {"ephemeral-storage", r->ephemeral_storage_bytes}};
    for (size_t i = 0; i < sizeof(std) / sizeof(std[0]); i++)
        if (std[i].value < 0)
            return NS_FAIL(NS_ERR_INTERNAL, "%s %s is negative (%lld)", what, std[i].name, (long long)std[i].value);
    for (uint32_t i = 0; i < r->n_ext; i++)
        if (r->ext[i].value < 0)
            return NS_FAIL(NS_ERR_INTERNAL, "%s %s is negative (%lld)", what, r->ext[i].name,
                           (long long)r->ext[i].value);
    return 0;
}

/* What the core would otherwise take on trust: amounts of at least 0, labels Kubernetes would accept, and an
 * instance-type label that names the type it is on. */
static int check_reported(const ns_itype *t)
{
    int rc;
    if ((rc = check_amounts(&t->capacity, "capacity")) < 0 || (rc = check_amounts(&t->kube_reserved, "kube_reserved")) < 0 ||
        (rc = check_amounts(&t->system_reserved, "system_reserved")) < 0 ||
        (rc = check_amounts(&t->eviction_threshold, "eviction_threshold")) < 0)
        return rc;
    char quoted[NS_EXCERPT_BUF];
    for (size_t i = 0; i < t->n_labels; i++) {
        const char *key = t->labels[i].key, *value = t->labels[i].value, *why = NULL;
        if (!ns_label_key_is_valid(key, &why))
            return NS_FAIL(NS_ERR_INTERNAL, "label key \"%s\" is invalid: %s",
                           ns_error_excerpt(key, quoted, sizeof(quoted)), why);
        if (!ns_label_value_is_valid(value, &why))
            return NS_FAIL(NS_ERR_INTERNAL, "label %s: value \"%s\" is invalid: %s", key,
                           ns_error_excerpt(value, quoted, sizeof(quoted)), why);
        if (strcmp(key, "node.kubernetes.io/instance-type") == 0 && strcmp(value, t->name) != 0)
            return NS_FAIL(NS_ERR_INTERNAL, "label node.kubernetes.io/instance-type is \"%s\", not the type's name",
                           ns_error_excerpt(value, quoted, sizeof(quoted)));
    }
    return 0;
}

void ns_itype_free(ns_itype *t)
{
    if (!t)
        return;
    free(t->name);
    for (size_t i = 0; i < t->n_labels; i++) {
        free((char *)t->labels[i].key);
        free((char *)t->labels[i].value);
    }
    free(t->labels);
    for (size_t i = 0; i < t->n_offerings; i++) {
        free(t->offerings[i].zone);
        free(t->offerings[i].capacity_type);
        free(t->offerings[i].reservation_id);
    }
    free(t->offerings);
    ns_res_free(&t->capacity);
    ns_res_free(&t->kube_reserved);
    ns_res_free(&t->system_reserved);
    ns_res_free(&t->eviction_threshold);
    ns_res_free(&t->allocatable);
    memset(t, 0, sizeof(*t));
}

int ns_itype_copy(const ns_instance_type *src, ns_itype *dst)
{
    memset(dst, 0, sizeof(*dst));
    if (!src->name || !*src->name)
        return NS_FAIL(NS_ERR_INTERNAL, "instance type without a name");
    if ((src->n_labels && !src->labels) || (src->n_offerings && !src->offerings))
        return NS_FAIL(NS_ERR_INTERNAL, "instance type %s: label or offering count without an array", src->name);
    /* Offerings are indexed by the first one's struct_size (NS_AT): it must cover every field ABI 1 has. */
    if (src->n_offerings && src->offerings[0].struct_size < offsetof(ns_offering, reservation_id))
        return NS_FAIL(NS_ERR_INTERNAL, "instance type %s: offering struct_size %u is smaller than the %zu bytes an "
                       "ns_offering has", src->name, (unsigned)src->offerings[0].struct_size,
                       offsetof(ns_offering, reservation_id));
    dst->name = strdup(src->name);
    dst->labels = calloc(src->n_labels ? src->n_labels : 1, sizeof(ns_label));
    dst->offerings = calloc(src->n_offerings ? src->n_offerings : 1, sizeof(ns_itype_offering));
    if (!dst->name || !dst->labels || !dst->offerings)
        goto nomem;
    for (size_t i = 0; i < src->n_labels; i++) {
        if (!src->labels[i].key || !src->labels[i].value) {
            ns_itype_free(dst);
            return NS_FAIL(NS_ERR_INTERNAL, "instance type %s: label %zu has no key or no value", src->name, i);
        }
        dst->labels[i].key = strdup(src->labels[i].key);
        dst->labels[i].value = strdup(src->labels[i].value);
        dst->n_labels = i + 1;
        if (!dst->labels[i].key || !dst->labels[i].value)
            goto nomem;
    }
    qsort(dst->labels, dst->n_labels, sizeof(ns_label), by_key);
    for (size_t i = 0; i < src->n_offerings; i++) {
        const ns_offering *o = NS_AT(src->offerings, i);
        ns_itype_offering *d = &dst->offerings[i];
        dst->n_offerings = i + 1;
        if (!o->zone || !o->capacity_type) {
            ns_itype_free(dst);
            return NS_FAIL(NS_ERR_INTERNAL, "instance type %s: offering %zu has no zone or no capacity type",
                           src->name, i);
        }
        d->zone = strdup(o->zone);
        d->capacity_type = strdup(o->capacity_type);
        d->price_per_hour = o->price_per_hour;
        d->available = o->available;
        bool has_reservation = NS_HAS_FIELD(o, ns_offering, reservation_id) && o->reservation_id;
        d->reservation_id = has_reservation ? dup_or_null(o->reservation_id) : NULL;
        if (!d->zone || !d->capacity_type || (has_reservation && !d->reservation_id))
            goto nomem;
    }
    int rc = ns_res_from_abi(&src->capacity, &dst->capacity, "capacity");
    if (rc == NS_OK)
        rc = ns_res_from_abi(&src->kube_reserved, &dst->kube_reserved, "kube_reserved");
    if (rc == NS_OK)
        rc = ns_res_from_abi(&src->system_reserved, &dst->system_reserved, "system_reserved");
    if (rc == NS_OK)
        rc = ns_res_from_abi(&src->eviction_threshold, &dst->eviction_threshold, "eviction_threshold");
    if (rc == NS_OK)
        rc = check_reported(dst);
    if (rc == NS_OK)
        rc = compute_allocatable(dst);
    if (rc != NS_OK) {
        ns_itype_free(dst);
        return ns_error_prefix("instance type %s: ", src->name);
    }
    return NS_OK;
nomem:
    ns_itype_free(dst);
    return NS_FAIL(NS_ERR_INTERNAL, "instance type %s: out of memory", src->name);
}

void ns_itype_set_free(ns_itype_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        ns_itype_free(&s->items[i]);
    free(s->items);
    s->items = NULL;
    s->n = 0;
}

typedef struct collect {
    ns_itype_set *set;
    size_t cap;
} collect;

static int on_type(void *ctx, const ns_instance_type *src)
{
    collect *c = ctx;
    if (c->set->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        ns_itype *grown = realloc(c->set->items, cap * sizeof(*grown));
        if (!grown)
            return NS_FAIL(NS_ERR_INTERNAL, "instance type %s: out of memory", src->name ? src->name : "?");
        c->set->items = grown;
        c->cap = cap;
    }
    int rc = ns_itype_copy(src, &c->set->items[c->set->n]);
    if (rc == NS_OK)
        c->set->n++;
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const ns_itype *)a)->name, ((const ns_itype *)b)->name);
}

int ns_itype_set_load(ns_plugin *plugin, const ns_nodeclass *nodeclass, ns_itype_set *out)
{
    memset(out, 0, sizeof(*out));
    collect c = {out, 0};
    int rc = ns_plugin_list_instance_types(plugin, nodeclass, on_type, &c);
    if (rc != NS_OK) {
        ns_itype_set_free(out);
        return rc;
    }
    qsort(out->items, out->n, sizeof(ns_itype), by_name);
    for (size_t i = 1; i < out->n; i++) {
        if (strcmp(out->items[i - 1].name, out->items[i].name) == 0) {
            rc = NS_FAIL(NS_ERR_INTERNAL, "provider %s: instance type %s listed twice", ns_plugin_name(plugin),
                         out->items[i].name);
            ns_itype_set_free(out);
            return rc;
        }
    }
    return NS_OK;
}

const char *ns_itype_label(const ns_itype *t, const char *key)
{
    ns_label probe = {key, NULL};
    const ns_label *hit = bsearch(&probe, t->labels, t->n_labels, sizeof(ns_label), by_key);
    return hit ? hit->value : NULL;
}

const ns_itype *ns_itype_set_find(const ns_itype_set *s, const char *name)
{
    ns_itype probe = {.name = (char *)name};
    return bsearch(&probe, s->items, s->n, sizeof(ns_itype), by_name);
}

double ns_itype_min_price(const ns_itype *t)
{
    double best = -1;
    for (size_t i = 0; i < t->n_offerings; i++) {
        const ns_itype_offering *o = &t->offerings[i];
        if (o->available && isfinite(o->price_per_hour) && (best < 0 || o->price_per_hour < best))
            best = o->price_per_hour;
    }
    return best;
}
