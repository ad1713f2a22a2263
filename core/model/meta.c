#include "model/meta.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/model_util.h"

int ns_meta_copy(const ns_meta *src, ns_meta *dst)
{
    memset(dst, 0, sizeof(*dst));
    dst->source_line = src->source_line;
    dst->creation_ms = src->creation_ms;
    dst->deletion_ms = src->deletion_ms;
    dst->generation = src->generation;
    dst->source_file = src->source_file;
    if ((src->name && !(dst->name = ns_strdup(src->name))) ||
        (src->namespace_ && !(dst->namespace_ = ns_strdup(src->namespace_))) ||
        (src->owner_kind && !(dst->owner_kind = ns_strdup(src->owner_kind))) ||
        (src->owner_name && !(dst->owner_name = ns_strdup(src->owner_name))) ||
        ns_labels_copy(&src->labels, &dst->labels) < 0 || ns_labels_copy(&src->annotations, &dst->annotations) < 0 ||
        (src->n_finalizers && ns_strv_copy(src->finalizers, src->n_finalizers, &dst->finalizers) < 0)) {
        ns_meta_free(dst);
        return NS_ERR_INTERNAL;
    }
    dst->n_finalizers = dst->finalizers ? src->n_finalizers : 0;
    return 0;
}

void ns_meta_free(ns_meta *m)
{
    if (!m)
        return;
    free(m->name);
    free(m->namespace_);
    ns_labels_free(&m->labels);
    ns_labels_free(&m->annotations);
    free(m->owner_kind);
    free(m->owner_name);
    ns_strv_free(m->finalizers, m->n_finalizers);
    memset(m, 0, sizeof(*m));
}

bool ns_meta_has_finalizer(const ns_meta *m, const char *finalizer)
{
    for (size_t i = 0; i < m->n_finalizers; i++)
        if (strcmp(m->finalizers[i], finalizer) == 0)
            return true;
    return false;
}

int ns_meta_add_finalizer(ns_meta *m, const char *finalizer)
{
    if (ns_meta_has_finalizer(m, finalizer))
        return 0;
    char *copy = ns_strdup(finalizer);
    char **grown = copy ? realloc(m->finalizers, (m->n_finalizers + 1) * sizeof(*grown)) : NULL;
    if (!grown) {
        free(copy);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory adding finalizer %s", finalizer);
    }
    m->finalizers = grown;
    m->finalizers[m->n_finalizers++] = copy;
    return 0;
}

void ns_meta_remove_finalizer(ns_meta *m, const char *finalizer)
{
    for (size_t i = 0; i < m->n_finalizers; i++) {
        if (strcmp(m->finalizers[i], finalizer) != 0)
            continue;
        free(m->finalizers[i]);
        memmove(&m->finalizers[i], &m->finalizers[i + 1], (m->n_finalizers - i - 1) * sizeof(char *));
        m->n_finalizers--;
        return;
    }
}
