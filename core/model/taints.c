#include "model/taints.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/model_util.h"

static const char *nz(const char *s)
{
    return s ? s : "";
}

bool ns_taint_effect_valid(const char *effect)
{
    return effect && (strcmp(effect, NS_EFFECT_NO_SCHEDULE) == 0 || strcmp(effect, NS_EFFECT_PREFER_NO_SCHEDULE) == 0 ||
                      strcmp(effect, NS_EFFECT_NO_EXECUTE) == 0);
}

bool ns_toleration_tolerates(const ns_toleration *t, const ns_taint *taint)
{
    if (*nz(t->effect) && strcmp(t->effect, nz(taint->effect)) != 0)
        return false;
    if (*nz(t->key) && strcmp(t->key, nz(taint->key)) != 0)
        return false;
    if (t->exists)
        return true;
    return strcmp(nz(t->value), nz(taint->value)) == 0;
}

bool ns_tolerations_tolerate(const ns_toleration *tols, size_t n, const ns_taint *taint)
{
    for (size_t i = 0; i < n; i++)
        if (ns_toleration_tolerates(&tols[i], taint))
            return true;
    return false;
}

bool ns_taint_matches(const ns_taint *a, const ns_taint *b)
{
    return strcmp(nz(a->key), nz(b->key)) == 0 && strcmp(nz(a->effect), nz(b->effect)) == 0;
}

bool ns_taint_is_known_ephemeral(const ns_taint *taint)
{
    /* Karpenter's KnownEphemeralTaints, compared as MatchTaint does: key and effect, any value. */
    static const ns_taint known[] = {
        {"node.kubernetes.io/not-ready", NULL, NS_EFFECT_NO_SCHEDULE},
        {"node.kubernetes.io/not-ready", NULL, NS_EFFECT_NO_EXECUTE},
        {"node.kubernetes.io/unreachable", NULL, NS_EFFECT_NO_SCHEDULE},
        {"node.cloudprovider.kubernetes.io/uninitialized", NULL, NS_EFFECT_NO_SCHEDULE},
        {"karpenter.sh/unregistered", NULL, NS_EFFECT_NO_EXECUTE},
    };
    /* KnownEphemeralTaintKeyPrefixes: the Node Readiness Controller's taints, any effect. */
    static const char readiness[] = "readiness.k8s.io/";
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (ns_taint_matches(&known[i], taint))
            return true;
    return strncmp(nz(taint->key), readiness, sizeof(readiness) - 1) == 0;
}

char *ns_taint_format(const ns_taint *taint, char *buf, size_t len)
{
    if (taint->value && *taint->value)
        snprintf(buf, len, "%s=%s:%s", nz(taint->key), taint->value, nz(taint->effect));
    else
        snprintf(buf, len, "%s:%s", nz(taint->key), nz(taint->effect));
    return buf;
}

bool ns_taints_tolerated(const ns_taint *taints, size_t n, const ns_taint *ignored, size_t n_ignored,
                         const ns_toleration *tols, size_t n_tols, unsigned flags, char *reason, size_t reason_len)
{
    for (size_t i = 0; i < n; i++) {
        const ns_taint *t = &taints[i];
        if ((flags & NS_TAINTS_IGNORE_PREFER_NO_SCHEDULE) && strcmp(nz(t->effect), NS_EFFECT_PREFER_NO_SCHEDULE) == 0)
            continue;
        bool skip = false;
        for (size_t j = 0; j < n_ignored && !skip; j++)
            skip = ns_taint_matches(&ignored[j], t);
        if (skip || ns_tolerations_tolerate(tols, n_tols, t))
            continue;
        if (reason && reason_len) {
            char f[256];
            snprintf(reason, reason_len, "did not tolerate taint %s", ns_taint_format(t, f, sizeof(f)));
        }
        return false;
    }
    return true;
}

void ns_taint_free(ns_taint *t)
{
    if (!t)
        return;
    free((void *)t->key);
    free((void *)t->value);
    free((void *)t->effect);
    memset(t, 0, sizeof(*t));
}

void ns_taints_free(ns_taint *v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        ns_taint_free(&v[i]);
    free(v);
}

int ns_taints_copy(const ns_taint *src, size_t n, ns_taint **dst)
{
    *dst = NULL;
    if (n == 0)
        return 0;
    ns_taint *v = calloc(n, sizeof(*v));
    if (!v)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory copying %zu taints", n);
    for (size_t i = 0; i < n; i++) {
        v[i].key = ns_strdup(src[i].key);
        v[i].value = ns_strdup(src[i].value);
        v[i].effect = ns_strdup(src[i].effect);
        if ((src[i].key && !v[i].key) || (src[i].value && !v[i].value) || (src[i].effect && !v[i].effect)) {
            ns_taints_free(v, i + 1);
            return NS_ERR_INTERNAL;
        }
    }
    *dst = v;
    return 0;
}

int ns_taints_append(ns_taint **v, size_t *n, const ns_taint *taint)
{
    ns_taint *copy = NULL;
    if (ns_taints_copy(taint, 1, &copy) < 0)
        return NS_ERR_INTERNAL;
    ns_taint *grown = realloc(*v, (*n + 1) * sizeof(*grown));
    if (!grown) {
        char buf[512];
        ns_taints_free(copy, 1);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory adding taint %s", ns_taint_format(taint, buf, sizeof(buf)));
    }
    *v = grown;
    grown[(*n)++] = copy[0];
    free(copy);
    return 0;
}

int ns_taints_put(ns_taint **v, size_t *n, const ns_taint *taint)
{
    for (size_t i = 0; i < *n; i++) {
        if (!ns_taint_matches(&(*v)[i], taint))
            continue;
        char *value = NULL;
        if (taint->value && !(value = ns_strdup(taint->value)))
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory setting the value of taint %s", nz(taint->key));
        free((char *)(*v)[i].value);
        (*v)[i].value = value;
        return 0;
    }
    return ns_taints_append(v, n, taint);
}

void ns_taints_remove(ns_taint *v, size_t *n, const char *key, const char *effect)
{
    ns_taint probe = {.key = key, .effect = effect};
    for (size_t i = 0; i < *n; i++) {
        if (!ns_taint_matches(&v[i], &probe))
            continue;
        ns_taint_free(&v[i]);
        memmove(&v[i], &v[i + 1], (*n - i - 1) * sizeof(*v));
        (*n)--;
        return;
    }
}

void ns_toleration_free(ns_toleration *t)
{
    if (!t)
        return;
    free(t->key);
    free(t->value);
    free(t->effect);
    memset(t, 0, sizeof(*t));
}

void ns_tolerations_free(ns_toleration *v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        ns_toleration_free(&v[i]);
    free(v);
}

int ns_tolerations_copy(const ns_toleration *src, size_t n, ns_toleration **dst)
{
    *dst = NULL;
    if (n == 0)
        return 0;
    ns_toleration *v = calloc(n, sizeof(*v));
    if (!v)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory copying %zu tolerations", n);
    for (size_t i = 0; i < n; i++) {
        v[i] = src[i];
        v[i].key = ns_strdup(src[i].key);
        v[i].value = ns_strdup(src[i].value);
        v[i].effect = ns_strdup(src[i].effect);
        if ((src[i].key && !v[i].key) || (src[i].value && !v[i].value) || (src[i].effect && !v[i].effect)) {
            ns_tolerations_free(v, i + 1);
            return NS_ERR_INTERNAL;
        }
    }
    *dst = v;
    return 0;
}
