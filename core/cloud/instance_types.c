#include "cloud/instance_types.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/checked.h"
#include "model/names.h"
#include "model/labels.h"
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

static void free_labels(ns_label *labels, size_t n)
{
    for (size_t i = 0; labels && i < n; i++) {
        free((char *)labels[i].key);
        free((char *)labels[i].value);
    }
    free(labels);
}

/* A deep copy of n labels, sorted by key. NS_OK, or an error naming the label; nothing is left allocated then. */
static int copy_labels(const ns_label *src, size_t n, ns_label **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (n && !src)
        return NS_FAIL(NS_ERR_INTERNAL, "%zu labels without an array", n);
    ns_label *d = calloc(n ? n : 1, sizeof(*d));
    if (!d)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory copying labels");
    for (size_t i = 0; i < n; i++) {
        if (!src[i].key || !src[i].value) {
            free_labels(d, i);
            return NS_FAIL(NS_ERR_INTERNAL, "label %zu has no key or no value", i);
        }
        d[i].key = strdup(src[i].key);
        d[i].value = strdup(src[i].value);
        if (!d[i].key || !d[i].value) {
            free_labels(d, i + 1);
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory copying labels");
        }
    }
    qsort(d, n, sizeof(*d), by_key);
    *out = d;
    *n_out = n;
    return NS_OK;
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
    free_labels(t->labels, t->n_labels);
    for (size_t i = 0; i < t->n_offerings; i++) {
        free(t->offerings[i].zone);
        free(t->offerings[i].capacity_type);
        free(t->offerings[i].reservation_id);
        free_labels(t->offerings[i].labels, t->offerings[i].n_labels);
    }
    free(t->offerings);
    ns_res_free(&t->capacity);
    ns_res_free(&t->kube_reserved);
    ns_res_free(&t->system_reserved);
    ns_res_free(&t->eviction_threshold);
    ns_res_free(&t->allocatable);
    memset(t, 0, sizeof(*t));
}

/* ABI 7's count of what a reserved offering's reservation can still take; unknown for an offering too short to have
 * it and for every other capacity type (the field means nothing there, and a zeroed one must not read as "full"). */
static int copy_reservation_capacity(const ns_offering *o, ns_itype_offering *d)
{
    d->reservation_capacity = NS_RESERVATION_CAPACITY_UNKNOWN;
    if (strcmp(o->capacity_type, NS_CAPACITY_RESERVED) != 0 || !NS_HAS_FIELD(o, ns_offering, reservation_capacity))
        return NS_OK;
    if (o->reservation_capacity < NS_RESERVATION_CAPACITY_UNKNOWN)
        return NS_FAIL(NS_ERR_INTERNAL, "reservation_capacity is %lld; a count is at least 0, and unknown is "
                       "NS_RESERVATION_CAPACITY_UNKNOWN (-1)", (long long)o->reservation_capacity);
    d->reservation_capacity = o->reservation_capacity;
    return NS_OK;
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
    if (copy_labels(src->labels, src->n_labels, &dst->labels, &dst->n_labels) != NS_OK)
        return ns_error_prefix("instance type %s: ", src->name);
    dst->name = strdup(src->name);
    dst->offerings = calloc(src->n_offerings ? src->n_offerings : 1, sizeof(ns_itype_offering));
    if (!dst->name || !dst->offerings)
        goto nomem;
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
        if (copy_reservation_capacity(o, d) != NS_OK) {
            ns_itype_free(dst);
            return ns_error_prefix("instance type %s: offering %zu (%s %s): ", src->name, i, o->zone,
                                   o->capacity_type);
        }
        if (NS_HAS_FIELD(o, ns_offering, n_labels) && o->n_labels) {
            int rc = copy_labels(o->labels, o->n_labels, &d->labels, &d->n_labels);
            if (rc != NS_OK) {
                ns_itype_free(dst);
                return ns_error_prefix("instance type %s: offering %zu (%s): ", src->name, i, o->zone);
            }
        }
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

const ns_label *ns_itype_zone_labels(const ns_itype *t, const char *zone, size_t *n)
{
    for (size_t i = 0; t && zone && i < t->n_offerings; i++)
        if (t->offerings[i].n_labels && strcmp(t->offerings[i].zone, zone) == 0) {
            *n = t->offerings[i].n_labels;
            return t->offerings[i].labels;
        }
    *n = 0;
    return NULL;
}

/* One zone of the sets' offerings and its labels (from the first of its offerings that has any). */
typedef struct zone_labels {
    const char *zone;
    const ns_label *labels;
    size_t n;
} zone_labels;

typedef struct zone_list {
    zone_labels *items;
    size_t n, cap;
    bool any_labels;
} zone_list;

static int add_zone(zone_list *l, const ns_itype_offering *o)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].zone, o->zone) == 0) {
            if (!l->items[i].n && o->n_labels)
                l->items[i] = (zone_labels){o->zone, o->labels, o->n_labels};
            return NS_OK;
        }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        zone_labels *grown = realloc(l->items, cap * sizeof(*grown));
        if (!grown)
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory listing zones");
        l->items = grown;
        l->cap = cap;
    }
    l->items[l->n++] = (zone_labels){o->zone, o->labels, o->n_labels};
    return NS_OK;
}

static bool zone_label_key(const zone_list *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (ns_label_find(l->items[i].labels, l->items[i].n, key))
            return true;
    return false;
}

/* A zone whose offerings lack the label meets only what a node without it meets: NotIn and DoesNotExist. */
static bool zone_allowed(const ns_requirement *r, const zone_labels *z)
{
    const char *v = ns_label_find(z->labels, z->n, r->key);
    if (v)
        return ns_requirement_has(r, v);
    ns_req_op op = ns_requirement_operator(r);
    return (op == NS_OP_NOT_IN || op == NS_OP_DOES_NOT_EXIST) && !r->has_gte && !r->has_lte;
}

struct ns_zone_labels {
    zone_list zones;
    const char **allowed; /* scratch, one slot per zone */
};

void ns_zone_labels_free(ns_zone_labels *z)
{
    if (!z)
        return;
    free(z->zones.items);
    free(z->allowed);
    free(z);
}

int ns_zone_labels_new(const ns_itype_set *const *sets, size_t n_sets, ns_zone_labels **out)
{
    *out = NULL;
    ns_zone_labels *z = calloc(1, sizeof(*z));
    if (!z)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory listing zone labels");
    int rc = NS_OK;
    for (size_t s = 0; s < n_sets && rc == NS_OK; s++)
        for (size_t t = 0; sets[s] && t < sets[s]->n && rc == NS_OK; t++)
            for (size_t o = 0; o < sets[s]->items[t].n_offerings && rc == NS_OK; o++) {
                z->zones.any_labels |= sets[s]->items[t].offerings[o].n_labels > 0;
                rc = add_zone(&z->zones, &sets[s]->items[t].offerings[o]);
            }
    if (rc == NS_OK && z->zones.any_labels && !(z->allowed = calloc(z->zones.n, sizeof(*z->allowed))))
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory listing zone labels");
    if (rc == NS_OK && z->zones.any_labels)
        *out = z;
    else
        ns_zone_labels_free(z);
    return rc;
}

int ns_zone_labels_rewrite(ns_zone_labels *z, ns_requirements *reqs)
{
    bool any = false;
    for (size_t i = 0; z && i < reqs->n && !any; i++)
        any = zone_label_key(&z->zones, reqs->items[i].key);
    if (!any)
        return NS_OK;
    ns_requirements out = {0};
    int rc = NS_OK;
    for (size_t i = 0; i < reqs->n && rc == NS_OK; i++) {
        const ns_requirement *r = &reqs->items[i];
        if (!zone_label_key(&z->zones, r->key)) {
            rc = ns_requirements_add(&out, r);
            continue;
        }
        size_t k = 0;
        for (size_t n = 0; n < z->zones.n; n++)
            if (zone_allowed(r, &z->zones.items[n]))
                z->allowed[k++] = z->zones.items[n].zone;
        rc = ns_requirements_add_op(&out, NS_LABEL_ZONE, NS_OP_IN, z->allowed, k, r->min_values);
    }
    if (rc != NS_OK) {
        ns_requirements_free(&out);
        return rc;
    }
    ns_requirements_free(reqs);
    *reqs = out;
    return NS_OK;
}
