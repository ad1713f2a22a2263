/*
 * What a catalog file entry may state beyond the type's shape, so that a scenario from Karpenter's tests can be written
 * down: "offerings" (each zone x capacity type with its price, whether it is available, and for a reserved offering
 * its reservation and how many instances it holds) and "labels" of the type's own. Both are read strictly: an unknown
 * key, a wrong type or a zone the sim does not have is an error naming the file, the entry's line, the entry, the
 * offering and the field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_catalog.h"
#include "sim_state.h"

typedef struct offer_ctx {
    sim_state *s;
    const char *path;
    size_t line, index;
    const char *name;
    size_t offer; /* SIZE_MAX: not in an offering */
} offer_ctx;

#define OFFER_FAIL(c, fmt, ...)                                                                                        \
    ((c)->offer == SIZE_MAX                                                                                            \
         ? SIM_FAIL((c)->s, NS_ERR_INVALID_CONFIG, "catalog file %s: line %zu: entry %zu (%s): " fmt, (c)->path,      \
                    (c)->line, (c)->index, (c)->name, __VA_ARGS__)                                                     \
         : SIM_FAIL((c)->s, NS_ERR_INVALID_CONFIG, "catalog file %s: line %zu: entry %zu (%s): offering %zu: " fmt,   \
                    (c)->path, (c)->line, (c)->index, (c)->name, (c)->offer, __VA_ARGS__))

static const char *const offer_keys[] = {"zone", "capacity_type", "price", "available", "reservation_id",
                                         "reservation_capacity"};

static int offer_string(const offer_ctx *c, const ns_json *o, const char *key, char *buf, size_t len)
{
    const ns_host *h = c->s->host;
    const ns_json *v = h->json_get(o, key);
    if (!v || h->json_type(v) != NS_JSON_STRING || !h->json_string(v)[0])
        return OFFER_FAIL(c, "field %s must be a non-empty string", key);
    if (!sim_copy_str(buf, len, h->json_string(v)))
        return OFFER_FAIL(c, "field %s is longer than %zu characters", key, len - 1);
    return NS_OK;
}

static int offer_check_keys(const offer_ctx *c, const ns_json *o)
{
    const ns_host *h = c->s->host;
    for (size_t i = 0; i < h->json_size(o); i++) {
        const char *key = h->json_key(h->json_at(o, i));
        bool known = false;
        for (size_t k = 0; k < sizeof(offer_keys) / sizeof(offer_keys[0]); k++)
            known = known || strcmp(key, offer_keys[k]) == 0;
        if (!known)
            return OFFER_FAIL(c, "unknown field %s (known: zone, capacity_type, price, available, reservation_id, "
                              "reservation_capacity)", key);
    }
    return NS_OK;
}

static int offer_capacity_type(const offer_ctx *c, const char *text, sim_offer *out)
{
    static const char *const known[] = {NS_CAPACITY_SPOT, NS_CAPACITY_ON_DEMAND, NS_CAPACITY_RESERVED};
    for (size_t i = 0; i < 3; i++)
        if (strcmp(text, known[i]) == 0)
            out->capacity_type = known[i];
    return out->capacity_type ? NS_OK
                              : OFFER_FAIL(c, "field capacity_type is \"%s\"; expected spot, on-demand or reserved", text);
}

/* available (default true), and for reserved offerings reservation_id (required) and reservation_capacity (a whole
 * number, default 1); both are errors on other capacity types. */
static int offer_optional(const offer_ctx *c, const ns_json *o, sim_offer *out)
{
    const ns_host *h = c->s->host;
    const ns_json *avail = h->json_get(o, "available");
    if (avail && h->json_type(avail) != NS_JSON_BOOL)
        return OFFER_FAIL(c, "%s", "field available must be true or false");
    out->available = !avail || h->json_bool(avail);
    bool reserved = strcmp(out->capacity_type, NS_CAPACITY_RESERVED) == 0;
    const ns_json *cap = h->json_get(o, "reservation_capacity");
    if (!reserved && (h->json_get(o, "reservation_id") || cap))
        return OFFER_FAIL(c, "reservation_id and reservation_capacity are for capacity_type reserved, not %s",
                          out->capacity_type);
    if (!reserved)
        return NS_OK;
    int rc = offer_string(c, o, "reservation_id", out->reservation_id, sizeof(out->reservation_id));
    if (rc != NS_OK)
        return rc;
    double n = cap && h->json_type(cap) == NS_JSON_NUMBER ? h->json_number(cap) : cap ? -1 : 1;
    if (n < 0 || n > 1e6 || n != (double)(int64_t)n)
        return OFFER_FAIL(c, "%s", "field reservation_capacity must be a whole number from 0 to 1000000");
    out->reservation_capacity = (int64_t)n;
    return NS_OK;
}

static int offer_parse(offer_ctx *c, const ns_json *o, const sim_itype_file *f, sim_offer *out)
{
    const ns_host *h = c->s->host;
    memset(out, 0, sizeof(*out));
    if (h->json_type(o) != NS_JSON_OBJECT)
        return OFFER_FAIL(c, "%s", "must be an object");
    char ct[32];
    int rc;
    if ((rc = offer_check_keys(c, o)) != NS_OK || (rc = offer_string(c, o, "zone", out->zone, sizeof(out->zone))) != NS_OK ||
        (rc = offer_string(c, o, "capacity_type", ct, sizeof(ct))) != NS_OK ||
        (rc = offer_capacity_type(c, ct, out)) != NS_OK)
        return rc;
    if (sim_zone_index(c->s, out->zone) < 0)
        return OFFER_FAIL(c, "field zone is %s, which is not one of the sim's zones (option zones)", out->zone);
    const ns_json *price = h->json_get(o, "price");
    if (!price || h->json_type(price) != NS_JSON_NUMBER || h->json_number(price) < 0)
        return OFFER_FAIL(c, "%s", "field price must be a number of at least 0");
    out->price = h->json_number(price);
    if ((rc = offer_optional(c, o, out)) != NS_OK)
        return rc;
    for (size_t i = 0; i < f->n_offers; i++)
        if (strcmp(f->offers[i].zone, out->zone) == 0 && strcmp(f->offers[i].capacity_type, out->capacity_type) == 0)
            return OFFER_FAIL(c, "zone %s and capacity type %s are already offered by offering %zu", out->zone,
                              out->capacity_type, i);
    return NS_OK;
}

static int offers_parse(offer_ctx *c, const ns_json *list, sim_itype_file *f)
{
    const ns_host *h = c->s->host;
    if (h->json_type(list) != NS_JSON_ARRAY || h->json_size(list) == 0)
        return OFFER_FAIL(c, "%s", "field offerings must be a non-empty array");
    if (h->json_size(list) > SIM_MAX_OFFERS)
        return OFFER_FAIL(c, "field offerings has %zu offerings; at most %d", h->json_size(list), SIM_MAX_OFFERS);
    for (size_t i = 0; i < h->json_size(list); i++) {
        c->offer = i;
        int rc = offer_parse(c, h->json_at(list, i), f, &f->offers[f->n_offers]);
        if (rc != NS_OK)
            return rc;
        f->n_offers++;
    }
    c->offer = SIZE_MAX;
    return NS_OK;
}

/* The sim writes the well-known and AWS labels itself; a file's labels are the type's own, in any other domain. */
static bool label_key_is_the_sims(const char *key)
{
    static const char *const domains[] = {"kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.k8s.aws"};
    const char *slash = strchr(key, '/');
    size_t len = slash ? (size_t)(slash - key) : 0;
    for (size_t i = 0; i < sizeof(domains) / sizeof(domains[0]); i++) {
        size_t n = strlen(domains[i]);
        bool tail = len >= n && strncmp(key + len - n, domains[i], n) == 0;
        if (tail && (len == n || key[len - n - 1] == '.'))
            return true;
    }
    return false;
}

static int labels_parse(offer_ctx *c, const ns_json *obj, sim_itype_file *f)
{
    const ns_host *h = c->s->host;
    if (h->json_type(obj) != NS_JSON_OBJECT)
        return OFFER_FAIL(c, "%s", "field labels must be an object of strings");
    if (h->json_size(obj) > SIM_MAX_CUSTOM_LABELS)
        return OFFER_FAIL(c, "field labels has %zu labels; at most %d", h->json_size(obj), SIM_MAX_CUSTOM_LABELS);
    for (size_t i = 0; i < h->json_size(obj); i++) {
        const ns_json *v = h->json_at(obj, i);
        const char *key = h->json_key(v);
        if (h->json_type(v) != NS_JSON_STRING)
            return OFFER_FAIL(c, "label %s must be a string", key);
        if (label_key_is_the_sims(key))
            return OFFER_FAIL(c, "label %s is in a domain the sim labels itself (kubernetes.io, k8s.io, karpenter.sh, "
                              "karpenter.k8s.aws)", key);
        if (!sim_copy_str(f->text[i][0], sizeof(f->text[i][0]), key) ||
            !sim_copy_str(f->text[i][1], sizeof(f->text[i][1]), h->json_string(v)))
            return OFFER_FAIL(c, "label %s or its value is longer than %d characters", key, NS_NAME_MAX - 1);
        f->labels[f->n_labels++] = (ns_label){f->text[i][0], f->text[i][1]};
    }
    return NS_OK;
}

int sim_entry_extras(sim_state *s, const char *path, size_t line, size_t index, const ns_json *entry, sim_itype *t)
{
    const ns_host *h = s->host;
    const ns_json *offers = h->json_get(entry, "offerings"), *labels = h->json_get(entry, "labels");
    if ((!offers || h->json_type(offers) == NS_JSON_NULL) && (!labels || h->json_type(labels) == NS_JSON_NULL))
        return NS_OK;
    if (!(t->file = calloc(1, sizeof(*t->file))))
        return SIM_FAIL(s, NS_ERR_INTERNAL, "catalog file %s: out of memory for entry %zu", path, index);
    offer_ctx c = {s, path, line, index, t->name, SIZE_MAX};
    int rc = NS_OK;
    if (offers && h->json_type(offers) != NS_JSON_NULL)
        rc = offers_parse(&c, offers, t->file);
    if (rc == NS_OK && labels && h->json_type(labels) != NS_JSON_NULL)
        rc = labels_parse(&c, labels, t->file);
    if (rc != NS_OK) {
        free(t->file);
        t->file = NULL;
    }
    return rc;
}

const sim_offer *sim_itype_offer(const sim_itype *t, const char *zone, const char *capacity_type)
{
    for (size_t i = 0; t->file && zone && capacity_type && i < t->file->n_offers; i++)
        if (strcmp(t->file->offers[i].zone, zone) == 0 && strcmp(t->file->offers[i].capacity_type, capacity_type) == 0)
            return &t->file->offers[i];
    return NULL;
}
