#include "model/nodeclass_kinds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/model_util.h"

#define KNOWN_FLAGS (NS_NODECLASS_KUBELET | NS_NODECLASS_DEFAULT_V1BETA1_REF | NS_NODECLASS_DEFAULT_V1ALPHA5_REF)

struct ns_nodeclass_kinds {
    ns_nodeclass_kind_info *items;
    size_t n, cap;
};

ns_nodeclass_kinds *ns_nodeclass_kinds_new(void)
{
    ns_nodeclass_kinds *k = calloc(1, sizeof(*k));
    if (!k)
        NS_FAIL(NS_ERR_INTERNAL, "out of memory for the node-class kinds");
    return k;
}

static void info_free(ns_nodeclass_kind_info *i)
{
    free(i->provider);
    free(i->group);
    free(i->version);
    free(i->kind);
    free(i->api_version);
}

void ns_nodeclass_kinds_free(ns_nodeclass_kinds *k)
{
    if (!k)
        return;
    for (size_t i = 0; i < k->n; i++)
        info_free(&k->items[i]);
    free(k->items);
    free(k);
}

/* Groups Kubernetes reserves for its own APIs: a node class cannot live there. */
static bool kubernetes_group(const char *group)
{
    static const char *const suffixes[] = {".k8s.io", ".kubernetes.io"};
    static const char *const exact[] = {"k8s.io", "kubernetes.io", "apps", "batch", "policy", "autoscaling",
                                        "karpenter.sh"};
    size_t n = strlen(group);
    for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
        if (strcmp(group, exact[i]) == 0)
            return true;
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        size_t m = strlen(suffixes[i]);
        if (n >= m && strcmp(group + n - m, suffixes[i]) == 0)
            return true;
    }
    return false;
}

/* A DNS subdomain (group), a DNS label (version) or a CamelCase kind: lower-case letters, digits, '-' and '.' for the
 * first two, letters and digits for a kind, at most 253 / 63 / 63 characters. */
static bool valid_part(const char *s, size_t max, bool kind, bool dots)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = kind ? ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
                       : ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (dots && c == '.'));
        if (!ok)
            return false;
    }
    return kind ? (s[0] >= 'A' && s[0] <= 'Z') : (s[0] != '-' && s[0] != '.' && s[n - 1] != '-' && s[n - 1] != '.');
}

static int append(ns_nodeclass_kinds *k, ns_nodeclass_kind_info *info)
{
    if (ns_grow((void **)&k->items, &k->cap, k->n + 1, sizeof(*info)) < 0) {
        info_free(info);
        return NS_ERR_INTERNAL;
    }
    k->items[k->n++] = *info;
    return NS_OK;
}

int ns_nodeclass_kinds_add(ns_nodeclass_kinds *k, const char *provider, const ns_nodeclass_kind *d, void *owner,
                           ns_nodeclass_validate_fn validate)
{
    if (!k || !provider || !d)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "node-class kinds: a registry, a provider and a kind are required");
    if (!valid_part(d->group, 253, false, true) || kubernetes_group(d->group))
        return NS_FAIL(NS_ERR_INVALID_CONFIG,
                       "provider %s: node-class kind %s: group \"%s\" is not a custom API group (a DNS subdomain "
                       "outside Kubernetes' own groups)",
                       provider, d->kind ? d->kind : "(null)", d->group ? d->group : "(null)");
    if (!valid_part(d->version, 63, false, false))
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "provider %s: node-class kind %s: version \"%s\" is not a DNS label",
                       provider, d->kind ? d->kind : "(null)", d->version ? d->version : "(null)");
    if (!valid_part(d->kind, 63, true, false))
        return NS_FAIL(NS_ERR_INVALID_CONFIG,
                       "provider %s: node-class kind \"%s\" (%s/%s) is not a kind name (a capital letter, then "
                       "letters and digits)",
                       provider, d->kind ? d->kind : "(null)", d->group, d->version);
    if (d->flags & ~KNOWN_FLAGS)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "provider %s: node-class kind %s (%s/%s): unknown flags 0x%x", provider,
                       d->kind, d->group, d->version, (unsigned)(d->flags & ~KNOWN_FLAGS));
    for (size_t i = 0; i < k->n; i++) {
        const ns_nodeclass_kind_info *o = &k->items[i];
        if (o->any_kind)
            continue;
        if (strcmp(o->group, d->group) == 0 && strcmp(o->version, d->version) == 0 && strcmp(o->kind, d->kind) == 0)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "node-class kind %s (%s/%s) is declared by both provider %s and "
                           "provider %s; load only one of them",
                           d->kind, d->group, d->version, o->provider, provider);
        uint32_t both = o->flags & d->flags & (NS_NODECLASS_DEFAULT_V1BETA1_REF | NS_NODECLASS_DEFAULT_V1ALPHA5_REF);
        if (both)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "providers %s (%s) and %s (%s) both declare the default kind for "
                           "%s references that name no kind",
                           o->provider, o->kind, provider, d->kind,
                           both & NS_NODECLASS_DEFAULT_V1BETA1_REF ? "karpenter.sh/v1beta1 NodePool"
                                                                   : "karpenter.sh/v1alpha5 Provisioner");
    }
    ns_nodeclass_kind_info info = {
        .provider = ns_strdup(provider), .group = ns_strdup(d->group), .version = ns_strdup(d->version),
        .kind = ns_strdup(d->kind), .api_version = malloc(strlen(d->group) + strlen(d->version) + 2),
        .flags = d->flags, .owner = owner, .validate = validate,
    };
    if (!info.provider || !info.group || !info.version || !info.kind || !info.api_version) {
        info_free(&info);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording node-class kind %s", d->kind);
    }
    sprintf(info.api_version, "%s/%s", d->group, d->version);
    return append(k, &info);
}

int ns_nodeclass_kinds_add_any(ns_nodeclass_kinds *k, const char *provider, void *owner,
                               ns_nodeclass_validate_fn validate)
{
    if (!k || !provider)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "node-class kinds: a registry and a provider are required");
    for (size_t i = 0; i < k->n; i++)
        if (k->items[i].any_kind)
            return NS_FAIL(NS_ERR_INVALID_CONFIG,
                           "providers %s and %s both declare no node-class kinds (ABI 1 or 2), so neither can tell "
                           "which node classes are its own; load only one of them or rebuild one against ABI 3",
                           k->items[i].provider, provider);
    ns_nodeclass_kind_info info = {.provider = ns_strdup(provider), .any_kind = true, .owner = owner,
                                   .validate = validate};
    if (!info.provider)
        return NS_ERR_INTERNAL;
    return append(k, &info);
}

void ns_nodeclass_kinds_set_v1alpha5_defaults(ns_nodeclass_kinds *k, const char *provider,
                                              const struct ns_req_defaults *d)
{
    for (size_t i = 0; k && provider && i < k->n; i++)
        if (strcmp(k->items[i].provider, provider) == 0)
            k->items[i].v1alpha5_defaults = d;
}

const struct ns_req_defaults *ns_nodeclass_kinds_v1alpha5_defaults(const ns_nodeclass_kinds *k, const char *group,
                                                                   const char *kind)
{
    for (size_t i = 0; k && kind && i < k->n; i++) {
        const ns_nodeclass_kind_info *o = &k->items[i];
        if (!o->any_kind && strcmp(o->kind, kind) == 0 && (!group || strcmp(o->group, group) == 0))
            return o->v1alpha5_defaults;
    }
    return NULL;
}

bool ns_nodeclass_kinds_knows(const ns_nodeclass_kinds *k, const char *kind)
{
    for (size_t i = 0; k && kind && i < k->n; i++)
        if (!k->items[i].any_kind && strcmp(k->items[i].kind, kind) == 0)
            return true;
    return false;
}

const ns_nodeclass_kind_info *ns_nodeclass_kinds_find(const ns_nodeclass_kinds *k, const char *api_version,
                                                      const char *kind)
{
    const ns_nodeclass_kind_info *any = NULL;
    if (!k || !api_version || !kind)
        return NULL;
    for (size_t i = 0; i < k->n; i++) {
        const ns_nodeclass_kind_info *o = &k->items[i];
        if (o->any_kind)
            any = o;
        else if (strcmp(o->kind, kind) == 0 && strcmp(o->api_version, api_version) == 0)
            return o;
    }
    if (!any || ns_nodeclass_kinds_knows(k, kind))
        return NULL;
    const char *slash = strrchr(api_version, '/');
    if (!slash || slash == api_version)
        return NULL;
    char group[256];
    snprintf(group, sizeof(group), "%.*s", (int)(slash - api_version), api_version);
    return kubernetes_group(group) ? NULL : any;
}

const char *ns_nodeclass_kinds_versions(const ns_nodeclass_kinds *k, const char *kind, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; k && i < k->n && off < len; i++) {
        if (k->items[i].any_kind || strcmp(k->items[i].kind, kind) != 0)
            continue;
        int w = snprintf(buf + off, len - off, "%s%s", off ? ", " : "", k->items[i].api_version);
        off += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

const char *ns_nodeclass_kinds_describe(const ns_nodeclass_kinds *k, char *buf, size_t len)
{
    size_t off = 0;
    snprintf(buf, len, "none");
    for (size_t i = 0; k && i < k->n && off < len; i++) {
        const ns_nodeclass_kind_info *o = &k->items[i];
        int w = o->any_kind ? snprintf(buf + off, len - off, "%sany custom kind (provider %s)", off ? ", " : "",
                                       o->provider)
                            : snprintf(buf + off, len - off, "%s%s (%s)", off ? ", " : "", o->kind, o->api_version);
        off += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

const ns_nodeclass_kind_info *ns_nodeclass_kinds_default(const ns_nodeclass_kinds *k, uint32_t flag)
{
    for (size_t i = 0; k && i < k->n; i++)
        if (!k->items[i].any_kind && (k->items[i].flags & flag))
            return &k->items[i];
    return NULL;
}

size_t ns_nodeclass_kinds_count(const ns_nodeclass_kinds *k)
{
    return k ? k->n : 0;
}

const ns_nodeclass_kind_info *ns_nodeclass_kinds_at(const ns_nodeclass_kinds *k, size_t i)
{
    return k && i < k->n ? &k->items[i] : NULL;
}
