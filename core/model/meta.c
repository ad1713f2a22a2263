#include "model/meta.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/model_util.h"

int ns_meta_copy(const ns_meta *src, ns_meta *dst)
{
    memset(dst, 0, sizeof(*dst));
    dst->source_line = src->source_line;
    if ((src->name && !(dst->name = ns_strdup(src->name))) ||
        (src->namespace_ && !(dst->namespace_ = ns_strdup(src->namespace_))) ||
        (src->owner_kind && !(dst->owner_kind = ns_strdup(src->owner_kind))) ||
        (src->owner_name && !(dst->owner_name = ns_strdup(src->owner_name))) ||
        (src->source_file && !(dst->source_file = ns_strdup(src->source_file))) ||
        ns_labels_copy(&src->labels, &dst->labels) < 0 || ns_labels_copy(&src->annotations, &dst->annotations) < 0) {
        ns_meta_free(dst);
        return NS_ERR_INTERNAL;
    }
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
    free(m->source_file);
    memset(m, 0, sizeof(*m));
}
