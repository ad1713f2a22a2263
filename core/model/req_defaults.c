#include "model/req_defaults.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "model/model_util.h"

ns_req_defaults *ns_req_defaults_new(void)
{
    ns_req_defaults *d = calloc(1, sizeof(*d));
    if (!d)
        NS_FAIL(NS_ERR_INTERNAL, "out of memory for requirement defaults");
    return d;
}

static void default_free(ns_req_default *r)
{
    ns_selector_req_free(&r->req);
    for (size_t i = 0; i < r->n_unless_keys; i++)
        free(r->unless_keys[i]);
    free(r->unless_keys);
}

void ns_req_defaults_free(ns_req_defaults *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++)
        default_free(&d->items[i]);
    free(d->items);
    free(d);
}

/* The operators a v1alpha5 Provisioner's requirements accept (Gte and Lte came with karpenter.sh/v1). */
static bool v1alpha5_op(const char *name, ns_req_op *op)
{
    return name && ns_req_op_parse(name, op) && *op != NS_OP_GTE && *op != NS_OP_LTE;
}

static bool has_key(char *const *keys, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(keys[i], key) == 0)
            return true;
    return false;
}

static int check_unless(const ns_req_defaults *d, const char *what, const char *key, const char *const *unless,
                        size_t n_unless)
{
    if (!unless || n_unless == 0)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: the default for %s has no unless keys (it would override every "
                       "requirement the user wrote)", what, key);
    bool own = false;
    for (size_t i = 0; i < n_unless; i++) {
        if (!unless[i] || !*unless[i])
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: the default for %s has an empty unless key", what, key);
        own = own || strcmp(ns_label_normalize(unless[i]), ns_label_normalize(key)) == 0;
    }
    if (!own)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: the default for %s does not list %s among its unless keys (it "
                       "would narrow a requirement the user wrote on that key)", what, key, key);
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->items[i].req.key, ns_label_normalize(key)) == 0)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: a second default for %s", what, key);
    return NS_OK;
}

static int fill(ns_req_default *r, const char *key, ns_req_op op, const char *const *values, size_t n_values,
                const char *const *unless, size_t n_unless)
{
    r->req.op = op;
    if (!(r->req.key = ns_strdup(ns_label_normalize(key))) ||
        ns_selector_req_set_values(&r->req, (char *const *)values, n_values) < 0 ||
        !(r->unless_keys = calloc(n_unless, sizeof(*r->unless_keys))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory for the requirement default of %s", key);
    for (; r->n_unless_keys < n_unless; r->n_unless_keys++)
        if (!(r->unless_keys[r->n_unless_keys] = ns_strdup(ns_label_normalize(unless[r->n_unless_keys]))))
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory for the requirement default of %s", key);
    return NS_OK;
}

int ns_req_defaults_add(ns_req_defaults *d, const char *what, const char *key, const char *op,
                        const char *const *values, size_t n_values, const char *const *unless, size_t n_unless)
{
    ns_req_op parsed;
    if (!key || !*key)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: a default has no key", what);
    if (!v1alpha5_op(op, &parsed))
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: the default for %s has operator \"%s\", not one of a v1alpha5 "
                       "Provisioner's (In, NotIn, Exists, DoesNotExist, Gt, Lt)", what, key, op ? op : "(null)");
    if (n_values > 0 && !values)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: the default for %s has %zu values and no array", what, key,
                       n_values);
    for (size_t i = 0; i < n_values; i++)
        if (!values[i])
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: the default for %s has a NULL value", what, key);
    ns_selector_req shape = {.key = (char *)key, .op = parsed, .values = (char **)values, .n_values = n_values};
    int rc = ns_selector_req_validate(&shape, what);
    if (rc == NS_OK)
        rc = check_unless(d, what, key, unless, n_unless);
    if (rc != NS_OK)
        return rc;
    ns_req_default *grown = realloc(d->items, (d->n + 1) * sizeof(*grown));
    if (!grown)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory for the requirement default of %s", key);
    d->items = grown;
    ns_req_default *r = &d->items[d->n];
    memset(r, 0, sizeof(*r));
    if ((rc = fill(r, key, parsed, values, n_values, unless, n_unless)) != NS_OK) {
        default_free(r);
        return rc;
    }
    d->n++;
    return NS_OK;
}

/* Whether the requirements as written name any of the default's unless keys. */
static bool written(const ns_req_default *r, const ns_selector_req *reqs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (has_key(r->unless_keys, r->n_unless_keys, ns_label_normalize(reqs[i].key)))
            return true;
    return false;
}

static void describe(const ns_selector_req *r, char *buf, size_t len)
{
    size_t used = strlen(buf);
    used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s %s", used ? "; " : "", r->key,
                             ns_req_op_name(r->op));
    for (size_t i = 0; i < r->n_values && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : " [", r->values[i]);
    if (r->n_values && used < len)
        snprintf(buf + used, len - used, "]");
}

int ns_req_defaults_apply(const ns_req_defaults *d, ns_selector_req **reqs, size_t *n, char *applied, size_t len)
{
    if (len)
        applied[0] = '\0';
    size_t written_n = *n, added = 0;
    for (size_t i = 0; d && i < d->n; i++)
        added += !written(&d->items[i], *reqs, written_n);
    if (added == 0)
        return NS_OK;
    ns_selector_req *grown = realloc(*reqs, (*n + added) * sizeof(*grown));
    if (!grown)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory adding requirement defaults");
    *reqs = grown;
    for (size_t i = 0; i < d->n; i++) {
        if (written(&d->items[i], grown, written_n))
            continue;
        if (ns_selector_req_copy(&d->items[i].req, &grown[*n]) < 0)
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory adding requirement defaults");
        describe(&grown[(*n)++], applied, len);
    }
    return NS_OK;
}
