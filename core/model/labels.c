#include "model/labels.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/model_util.h"

static size_t lower_bound(const ns_labels *l, const char *key, bool *found)
{
    return ns_sorted_find(l->items, l->n, sizeof(*l->items), offsetof(ns_label, key), key, found);
}

/* Room for one more label. Growth starts at one: most maps (a pod's labels, a selector's matchLabels) hold one or two,
 * and a model keeps one or more per pod. */
static int reserve_one(ns_labels *l)
{
    if (l->n < l->cap)
        return 0;
    size_t cap = l->cap ? 2 * l->cap : 1;
    ns_label *items = realloc(l->items, cap * sizeof(*items));
    if (!items)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory growing a label map to %zu labels", cap);
    l->items = items;
    l->cap = cap;
    return 0;
}

int ns_labels_set(ns_labels *l, const char *key, const char *value)
{
    bool found;
    size_t i = lower_bound(l, key, &found);
    char *v = ns_strdup(value ? value : "");
    if (!v)
        return NS_ERR_INTERNAL;
    if (found) {
        free((void *)l->items[i].value);
        l->items[i].value = v;
        return 0;
    }
    char *k = ns_strdup(key);
    if (!k || reserve_one(l) < 0) {
        free(k);
        free(v);
        return NS_ERR_INTERNAL;
    }
    memmove(&l->items[i + 1], &l->items[i], (l->n - i) * sizeof(ns_label));
    l->items[i].key = k;
    l->items[i].value = v;
    l->n++;
    return 0;
}

const char *ns_labels_get(const ns_labels *l, const char *key)
{
    if (!l || l->n == 0)
        return NULL;
    bool found;
    size_t i = lower_bound(l, key, &found);
    return found ? l->items[i].value : NULL;
}

void ns_labels_remove(ns_labels *l, const char *key)
{
    bool found;
    size_t i = lower_bound(l, key, &found);
    if (!found)
        return;
    free((void *)l->items[i].key);
    free((void *)l->items[i].value);
    memmove(&l->items[i], &l->items[i + 1], (l->n - i - 1) * sizeof(ns_label));
    l->n--;
}

int ns_labels_assign(ns_labels *l, const char *key, const char *value)
{
    if (!value) {
        ns_labels_remove(l, key);
        return 0;
    }
    return ns_labels_set(l, key, value);
}

int ns_labels_copy(const ns_labels *src, ns_labels *dst)
{
    memset(dst, 0, sizeof(*dst));
    for (size_t i = 0; src && i < src->n; i++) {
        if (ns_labels_set(dst, src->items[i].key, src->items[i].value) < 0) {
            ns_labels_free(dst);
            return NS_ERR_INTERNAL;
        }
    }
    return 0;
}

void ns_labels_free(ns_labels *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free((void *)l->items[i].key);
        free((void *)l->items[i].value);
    }
    free(l->items);
    memset(l, 0, sizeof(*l));
}

const char *ns_label_find(const ns_label *labels, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(labels[i].key, key) == 0)
            return labels[i].value;
    return NULL;
}

const char *ns_label_normalize(const char *key)
{
    static const char *const aliases[][2] = {
        {"failure-domain.beta.kubernetes.io/zone", NS_LABEL_ZONE},
        {"failure-domain.beta.kubernetes.io/region", NS_LABEL_REGION},
        {"beta.kubernetes.io/arch", NS_LABEL_ARCH},
        {"beta.kubernetes.io/os", NS_LABEL_OS},
        {"beta.kubernetes.io/instance-type", NS_LABEL_INSTANCE_TYPE},
    };
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (strcmp(key, aliases[i][0]) == 0)
            return aliases[i][1];
    return key;
}

bool ns_label_is_well_known(const char *key)
{
    static const char *const known[] = {
        NS_LABEL_NODEPOOL, NS_LABEL_ZONE, NS_LABEL_REGION,        NS_LABEL_INSTANCE_TYPE,
        NS_LABEL_ARCH,     NS_LABEL_OS,   NS_LABEL_CAPACITY_TYPE, NS_LABEL_WINDOWS_BUILD,
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(key, known[i]) == 0)
            return true;
    return false;
}

static bool has_domain_suffix(const char *domain, size_t dlen, const char *suffix)
{
    size_t slen = strlen(suffix);
    return dlen >= slen && memcmp(domain + dlen - slen, suffix, slen) == 0;
}

bool ns_label_is_restricted_node_label(const char *key)
{
    if (ns_label_is_well_known(key))
        return true;
    const char *slash = strchr(key, '/');
    if (slash) {
        size_t dlen = (size_t)(slash - key);
        static const char *const exceptions[] = {"kops.k8s.io", "node.kubernetes.io", "node-restriction.kubernetes.io"};
        static const char *const restricted[] = {"kubernetes.io", "k8s.io", "karpenter.sh"};
        for (size_t i = 0; i < sizeof(exceptions) / sizeof(exceptions[0]); i++)
            if (has_domain_suffix(key, dlen, exceptions[i]))
                return false;
        for (size_t i = 0; i < sizeof(restricted) / sizeof(restricted[0]); i++)
            if (has_domain_suffix(key, dlen, restricted[i]))
                return true;
    }
    return strcmp(key, NS_LABEL_HOSTNAME) == 0;
}

bool ns_label_is_restricted(const char *key, const char **why)
{
    if (ns_label_is_well_known(key))
        return false;
    if (ns_label_is_restricted_node_label(key)) {
        *why = "label is restricted; use a well-known label (karpenter.sh/nodepool, topology.kubernetes.io/zone, "
               "topology.kubernetes.io/region, node.kubernetes.io/instance-type, kubernetes.io/arch, kubernetes.io/os, "
               "karpenter.sh/capacity-type, node.kubernetes.io/windows-build) or a custom label outside the "
               "kubernetes.io, k8s.io and karpenter.sh domains";
        return true;
    }
    return false;
}
