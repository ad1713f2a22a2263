/* The commitments settings file (commitments.h), decoded strictly: every error names the commitment, the field and
 * why. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/commitments.h"
#include "errors/ns_error.h"
#include "manifest/decode.h"
#include "manifest/yaml_doc.h"

static const char *const item_fields[] = {"name",   "kind",   "amount",       "discount", "effectivePrice",
                                          "instanceType", "family", "familyLabel", "region", "zone", NULL};
static const char *const top_fields[] = {"commitments", NULL};

static void commitment_free(ns_commitment *c)
{
    free(c->name);
    free(c->instance_type);
    free(c->family);
    free(c->family_label);
    free(c->region);
    free(c->zone);
}

static void items_free(void *v, size_t n)
{
    ns_commitment *items = v;
    for (size_t i = 0; items && i < n; i++)
        commitment_free(&items[i]);
    free(items);
}

void ns_commitments_free(ns_commitments *c)
{
    if (!c)
        return;
    items_free(c->items, c->n);
    c->items = NULL;
    c->n = 0;
}

const char *ns_commit_kind_name(ns_commit_kind k)
{
    return k == NS_COMMIT_SPEND ? "spend" : "instances";
}

/* The value node of item's field key (for its line), or item itself when the field is absent. */
static const ns_ynode *at(const ns_ynode *item, const char *key)
{
    for (size_t k = 0; item->kind == NS_Y_MAP && k < item->n; k++)
        if (item->items[2 * k]->str && strcmp(item->items[2 * k]->str, key) == 0)
            return item->items[2 * k + 1];
    return item;
}

/* A number field: *present false when absent; finite, else an error naming the field. */
static int number(const ns_dec *d, const ns_ynode *map, const char *key, double *out, bool *present)
{
    int rc;
    const ns_ynode *n = ns_dec_child(d, map, "", key, NS_Y_SCALAR, &rc);
    *present = n != NULL;
    if (!n)
        return rc;
    if (n->quoted || (n->type != NS_YS_INT && n->type != NS_YS_FLOAT))
        return ns_dec_fail(d, n, key, "must be a number, not \"%s\"", n->text ? n->text : "");
    *out = n->type == NS_YS_INT ? (double)n->i : n->f;
    if (!isfinite(*out))
        return ns_dec_fail(d, n, key, "must be a finite number, not %s", n->text);
    return 0;
}

static int decode_kind(const ns_dec *d, const ns_ynode *item, ns_commitment *c)
{
    char *kind = NULL;
    int rc = ns_dec_string_required(d, item, "", "kind", &kind);
    if (rc == 0 && strcmp(kind, "instances") == 0)
        c->kind = NS_COMMIT_INSTANCES;
    else if (rc == 0 && strcmp(kind, "spend") == 0)
        c->kind = NS_COMMIT_SPEND;
    else if (rc == 0)
        rc = ns_dec_fail(d, at(item, "kind"), "kind",
                         "must be instances (reserved instances, reservations) or spend (savings plans), not \"%s\"",
                         kind);
    free(kind);
    return rc;
}

/* amount, then discount or effectivePrice as the kind allows. */
static int decode_price(const ns_dec *d, const ns_ynode *item, ns_commitment *c)
{
    bool has_amount, has_discount, has_price;
    int rc = number(d, item, "amount", &c->amount, &has_amount);
    if (rc == 0)
        rc = number(d, item, "discount", &c->discount, &has_discount);
    if (rc == 0)
        rc = number(d, item, "effectivePrice", &c->effective_price, &has_price);
    if (rc < 0)
        return rc;
    if (!has_amount)
        return ns_dec_fail(d, at(item, "amount"), "amount", "is required (%s)",
                           c->kind == NS_COMMIT_SPEND ? "dollars per hour committed" : "the number of instances");
    if (c->amount <= 0)
        return ns_dec_fail(d, at(item, "amount"), "amount", "must be above 0, not %g", c->amount);
    if (c->kind == NS_COMMIT_INSTANCES && c->amount != floor(c->amount))
        return ns_dec_fail(d, at(item, "amount"), "amount", "must be a whole number of instances, not %g", c->amount);
    if (c->kind == NS_COMMIT_SPEND && has_price)
        return ns_dec_fail(d, at(item, "effectivePrice"), "effectivePrice",
                           "applies to kind instances only; a spend commitment takes a discount");
    if (has_discount == has_price)
        return ns_dec_fail(d, item, has_price ? "effectivePrice" : "discount",
                           has_price ? "and discount are exclusive: give one" : "is required (or effectivePrice)");
    if (has_discount && !(c->discount > 0 && c->discount < 1))
        return ns_dec_fail(d, at(item, "discount"), "discount",
                           "must be a fraction above 0 and below 1 (0.3 for 30%% off), not %g", c->discount);
    if (has_price && c->effective_price < 0)
        return ns_dec_fail(d, at(item, "effectivePrice"), "effectivePrice", "must be at least 0, not %g",
                           c->effective_price);
    if (!has_price)
        c->effective_price = -1;
    else
        c->discount = 0;
    return 0;
}

static int decode_scope(const ns_dec *d, const ns_ynode *item, ns_commitment *c)
{
    int rc = ns_dec_string(d, item, "", "instanceType", &c->instance_type);
    if (rc == 0)
        rc = ns_dec_string(d, item, "", "family", &c->family);
    if (rc == 0)
        rc = ns_dec_string(d, item, "", "familyLabel", &c->family_label);
    if (rc == 0)
        rc = ns_dec_string(d, item, "", "region", &c->region);
    if (rc == 0)
        rc = ns_dec_string(d, item, "", "zone", &c->zone);
    if (rc == 0 && !c->family != !c->family_label)
        rc = ns_dec_fail(d, item, c->family ? "familyLabel" : "family",
                         "family and familyLabel go together: the label of the instance types whose value is the "
                         "family (docs/cost.md lists each cloud's)");
    return rc;
}

static int decode_item(const ns_dec *outer, const ns_ynode *item, const char *p, const void *arg, void *out)
{
    const ns_commitments *seen = arg;
    ns_commitment *c = out;
    ns_dec d = *outer;
    snprintf(d.object, sizeof(d.object), "%.200s", p);
    int rc = ns_dec_fields(&d, item, "", item_fields);
    if (rc == 0)
        rc = ns_dec_string_required(&d, item, "", "name", &c->name);
    if (rc < 0)
        return rc;
    snprintf(d.object, sizeof(d.object), "commitment %.200s", c->name);
    if (!*c->name)
        return ns_dec_fail(&d, at(item, "name"), "name", "must not be empty");
    /* The items before this one are decoded already (decode_root fills the array in order). */
    for (const ns_commitment *o = seen->items; o < c; o++)
        if (strcmp(o->name, c->name) == 0)
            return ns_dec_fail(&d, at(item, "name"), "name",
                               "is used by another commitment already; names must be unique");
    if ((rc = decode_kind(&d, item, c)) == 0 && (rc = decode_price(&d, item, c)) == 0)
        rc = decode_scope(&d, item, c);
    return rc;
}

static int decode_root(const ns_dec *d, const ns_ynode *root, ns_commitments *out)
{
    if (!root || root->kind != NS_Y_MAP)
        return ns_dec_fail(d, root, "", "must be a mapping with a commitments list");
    int rc = ns_dec_fields(d, root, "", top_fields);
    if (rc < 0)
        return rc;
    const ns_ynode *seq = ns_dec_child(d, root, "", "commitments", NS_Y_SEQ, &rc);
    if (!seq)
        return rc;
    ns_commitment *items = calloc(seq->n ? seq->n : 1, sizeof(*items));
    if (!items)
        return NS_FAIL(NS_ERR_INTERNAL, "%s: out of memory for %zu commitments", d->file, seq->n);
    ns_commitments seen = {.items = items, .n = 0};
    for (size_t i = 0; rc == 0 && i < seq->n; i++) {
        char p[NS_PATH_MAX];
        ns_path_index(p, sizeof(p), "commitments", i);
        rc = decode_item(d, seq->items[i], p, &seen, &items[i]);
    }
    if (rc < 0) {
        items_free(items, seq->n);
        return rc;
    }
    out->items = items;
    out->n = seq->n;
    return 0;
}

static int read_reader(ns_yreader *r, ns_commitments *out)
{
    ns_dec d = {.file = ns_yreader_name(r)};
    snprintf(d.object, sizeof(d.object), "commitments");
    ns_ydoc *doc = NULL;
    int rc = ns_yreader_next(r, &doc);
    bool had_doc = doc != NULL;
    if (rc == 0 && had_doc)
        rc = decode_root(&d, ns_ydoc_root(doc), out);
    ns_ydoc_free(doc);
    ns_ydoc *extra = NULL;
    if (rc == 0 && had_doc && (rc = ns_yreader_next(r, &extra)) == 0 && extra)
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: more than one YAML document; commitments take one", d.file);
    ns_ydoc_free(extra);
    if (rc < 0)
        ns_commitments_free(out);
    return rc;
}

int ns_commitments_read(const char *path, ns_commitments *out)
{
    memset(out, 0, sizeof(*out));
    ns_yreader *r = NULL;
    int rc = ns_yreader_open_file(path, &r);
    if (rc == 0)
        rc = read_reader(r, out);
    ns_yreader_close(r);
    return rc;
}

int ns_commitments_parse(const char *name, const char *text, size_t len, ns_commitments *out)
{
    memset(out, 0, sizeof(*out));
    ns_yreader *r = NULL;
    int rc = ns_yreader_open_string(name, text, len, &r);
    if (rc == 0)
        rc = read_reader(r, out);
    ns_yreader_close(r);
    return rc;
}
