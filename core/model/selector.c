#include "model/selector.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"

static bool expr_matches(const ns_selector_req *e, const ns_labels *labels)
{
    const char *v = ns_labels_get(labels, e->key);
    bool listed = false;
    for (size_t i = 0; v && i < e->n_values; i++)
        listed = listed || strcmp(e->values[i], v) == 0;
    switch (e->op) {
    case NS_OP_IN:
        return listed;
    case NS_OP_NOT_IN:
        return !listed;
    case NS_OP_EXISTS:
        return v != NULL;
    case NS_OP_DOES_NOT_EXIST:
        return v == NULL;
    default:
        return false;
    }
}

bool ns_label_selector_matches(const ns_label_selector *s, const ns_labels *labels)
{
    if (!s || !s->present)
        return false;
    for (size_t i = 0; i < s->match_labels.n; i++) {
        const char *v = ns_labels_get(labels, s->match_labels.items[i].key);
        if (!v || strcmp(v, s->match_labels.items[i].value) != 0)
            return false;
    }
    for (size_t i = 0; i < s->n_exprs; i++)
        if (!expr_matches(&s->exprs[i], labels))
            return false;
    return true;
}

int ns_label_selector_copy(const ns_label_selector *src, ns_label_selector *dst)
{
    memset(dst, 0, sizeof(*dst));
    dst->present = src->present;
    if (ns_labels_copy(&src->match_labels, &dst->match_labels) < 0)
        return NS_ERR_INTERNAL;
    if (src->n_exprs) {
        dst->exprs = calloc(src->n_exprs, sizeof(*dst->exprs));
        if (!dst->exprs) {
            ns_label_selector_free(dst);
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory copying a label selector");
        }
        for (; dst->n_exprs < src->n_exprs; dst->n_exprs++) {
            if (ns_selector_req_copy(&src->exprs[dst->n_exprs], &dst->exprs[dst->n_exprs]) < 0) {
                ns_label_selector_free(dst);
                return NS_ERR_INTERNAL;
            }
        }
    }
    return 0;
}

void ns_label_selector_free(ns_label_selector *s)
{
    if (!s)
        return;
    ns_labels_free(&s->match_labels);
    ns_selector_reqs_free(s->exprs, s->n_exprs);
    memset(s, 0, sizeof(*s));
}
