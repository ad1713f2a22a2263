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

/* Karpenter 1.14's label rules. Since v1.10 its RestrictedLabelDomains holds karpenter.sh alone and RestrictedLabels
 * kubernetes.io/hostname (pkg/apis/v1/labels.go); the kubernetes.io and k8s.io domains are allowed. The CRD's CEL rule,
 * which the API server applies before any controller reads the object, is the stricter of the two checks: the part of
 * the key before its first '/' (the whole key when it has none) may not end with "karpenter.sh", so it refuses
 * notkarpenter.sh/x too, where the controller's IsRestrictedLabel asks for the domain or a sub-domain. That rule is
 * followed here. */
bool ns_label_is_restricted(const char *key, const char **why)
{
    static const char domain[] = "karpenter.sh";
    if (ns_label_is_well_known(key))
        return false;
    const char *slash = strchr(key, '/');
    size_t dlen = slash ? (size_t)(slash - key) : strlen(key), slen = sizeof(domain) - 1;
    bool in_domain = dlen >= slen && memcmp(key + dlen - slen, domain, slen) == 0;
    if (in_domain || strcmp(key, NS_LABEL_HOSTNAME) == 0) {
        *why = "label is restricted as it might interfere with the internal provisioning logic; use a well-known label "
               "(karpenter.sh/nodepool, topology.kubernetes.io/zone, topology.kubernetes.io/region, "
               "node.kubernetes.io/instance-type, kubernetes.io/arch, kubernetes.io/os, karpenter.sh/capacity-type, "
               "node.kubernetes.io/windows-build) or a custom label outside the karpenter.sh domain";
        return true;
    }
    return false;
}
