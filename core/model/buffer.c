/* CapacityBuffers and PodTemplates (model/buffer.h). */
#include <stdlib.h>

#include "model/buffer.h"

ns_buffer *ns_buffer_new(void)
{
    return calloc(1, sizeof(ns_buffer));
}

void ns_buffer_free(ns_buffer *b)
{
    if (!b)
        return;
    ns_meta_free(&b->meta);
    free(b->pod_template);
    free(b->scalable_name);
    free(b->resolution_failed);
    ns_res_free(&b->limits);
    free(b);
}

ns_pod_template *ns_pod_template_new(void)
{
    return calloc(1, sizeof(ns_pod_template));
}

void ns_pod_template_free(ns_pod_template *t)
{
    if (!t)
        return;
    ns_meta_free(&t->meta);
    ns_pod_free(t->pod);
    free(t);
}

/* floor(limit / request) folded into *least; a resource the template does not request caps nothing. */
static void cap_by(int64_t limit, int64_t request, int64_t *least, bool *matched)
{
    if (request <= 0)
        return;
    int64_t n = limit < 0 ? 0 : limit / request;
    if (!*matched || n < *least)
        *least = n;
    *matched = true;
}

/* Karpenter's calculatePercentageReplicas. */
static int64_t percentage_of(int32_t replicas, int32_t percentage)
{
    int64_t n = ((int64_t)replicas * percentage + 99) / 100;
    return n < 1 && percentage > 0 && replicas > 0 ? 1 : n;
}

int64_t ns_buffer_chunks(const ns_buffer *b, const ns_pod *tmpl, int32_t scalable_replicas)
{
    bool sized = b->has_replicas;
    int64_t want = b->has_replicas ? b->replicas : 0;
    if (b->scalable_name && b->has_percentage && scalable_replicas > 0) {
        int64_t pct = percentage_of(scalable_replicas, b->percentage);
        want = sized && want > pct ? want : pct;
        sized = true;
    }
    if (!b->has_limits)
        return want;
    const ns_res *l = &b->limits, *r = &tmpl->requests;
    int64_t least = 0;
    bool matched = false;
    if (b->limits_set & NS_BUFFER_LIMIT_CPU)
        cap_by(l->cpu_milli, r->cpu_milli, &least, &matched);
    if (b->limits_set & NS_BUFFER_LIMIT_MEMORY)
        cap_by(l->memory_bytes, r->memory_bytes, &least, &matched);
    if (b->limits_set & NS_BUFFER_LIMIT_PODS)
        cap_by(l->pods, r->pods, &least, &matched);
    if (b->limits_set & NS_BUFFER_LIMIT_STORAGE)
        cap_by(l->ephemeral_storage_bytes, r->ephemeral_storage_bytes, &least, &matched);
    for (uint32_t i = 0; i < l->n_ext; i++)
        cap_by(l->ext[i].value, ns_res_get(r, l->ext[i].name), &least, &matched);
    if (!matched)
        return want;
    return sized && want < least ? want : least;
}
