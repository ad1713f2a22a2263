#include "plugin/plugin_copies.h"

#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "json/host_json.h"

static int oom(void)
{
    return NS_FAIL(NS_ERR_INTERNAL, "out of memory copying a provider call's arguments");
}

static void *keep(ns_copies *c, void *block)
{
    if (!block)
        return NULL;
    if (c->n_blocks == c->cap_blocks) {
        size_t cap = c->cap_blocks ? 2 * c->cap_blocks : 16;
        void **grown = realloc(c->blocks, cap * sizeof(*grown));
        if (!grown) {
            free(block);
            return NULL;
        }
        c->blocks = grown;
        c->cap_blocks = cap;
    }
    return c->blocks[c->n_blocks++] = block;
}

/* src may be *dst itself (a field copied by value, now given its own string). */
int ns_copy_string(ns_copies *c, const char *src, const char **dst)
{
    if (!src) {
        *dst = NULL;
        return NS_OK;
    }
    return (*dst = keep(c, strdup(src))) ? NS_OK : oom();
}

/* A zeroed full-size copy of a struct the core built (so of its own size, but read by its struct_size anyway). */
static void *copy_sized(ns_copies *c, const void *src, size_t count, size_t size)
{
    char *out = keep(c, calloc(count ? count : 1, size));
    if (!out)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        const char *from = (const char *)src + i * *(const uint32_t *)src;
        uint32_t n = *(const uint32_t *)from;
        memcpy(out + i * size, from, n < size ? n : size);
        *(uint32_t *)(out + i * size) = (uint32_t)size;
    }
    return out;
}

int ns_copy_nodeclass(ns_copies *c, const ns_nodeclass *src, ns_nodeclass *dst)
{
    memset(dst, 0, sizeof(*dst));
    dst->struct_size = sizeof(*dst);
    if (ns_copy_string(c, src->api_version, &dst->api_version) < 0 || ns_copy_string(c, src->kind, &dst->kind) < 0 ||
        ns_copy_string(c, src->name, &dst->name) < 0)
        return NS_ERR_INTERNAL;
    if (!src->spec)
        return NS_OK;
    if (c->n_trees == c->cap_trees) {
        size_t cap = c->cap_trees ? 2 * c->cap_trees : 2;
        ns_json **grown = realloc(c->trees, cap * sizeof(*grown));
        if (!grown)
            return oom();
        c->trees = grown;
        c->cap_trees = cap;
    }
    cJSON *spec = cJSON_Duplicate((const cJSON *)src->spec, 1);
    if (!spec)
        return oom();
    c->trees[c->n_trees++] = (ns_json *)spec;
    dst->spec = (const ns_json *)spec;
    return NS_OK;
}

static int copy_labels(ns_copies *c, const ns_label *src, size_t n, const ns_label **dst)
{
    *dst = NULL;
    if (!src || n == 0)
        return NS_OK;
    ns_label *out = keep(c, calloc(n, sizeof(*out)));
    if (!out)
        return oom();
    *dst = out;
    for (size_t i = 0; i < n; i++)
        if (ns_copy_string(c, src[i].key, &out[i].key) < 0 || ns_copy_string(c, src[i].value, &out[i].value) < 0)
            return NS_ERR_INTERNAL;
    return NS_OK;
}

static int copy_taints(ns_copies *c, const ns_taint *src, size_t n, const ns_taint **dst)
{
    *dst = NULL;
    if (!src || n == 0)
        return NS_OK;
    ns_taint *out = keep(c, calloc(n, sizeof(*out)));
    if (!out)
        return oom();
    *dst = out;
    for (size_t i = 0; i < n; i++)
        if (ns_copy_string(c, src[i].key, &out[i].key) < 0 || ns_copy_string(c, src[i].value, &out[i].value) < 0 ||
            ns_copy_string(c, src[i].effect, &out[i].effect) < 0)
            return NS_ERR_INTERNAL;
    return NS_OK;
}

int ns_copy_launch_request(ns_copies *c, const ns_launch_request *src, ns_launch_request *dst)
{
    memset(dst, 0, sizeof(*dst));
    memcpy(dst, src, src->struct_size < sizeof(*dst) ? src->struct_size : sizeof(*dst));
    dst->struct_size = sizeof(*dst);
    ns_nodeclass *nc = keep(c, calloc(1, sizeof(*nc)));
    if (!nc)
        return oom();
    dst->nodeclass = nc;
    if (ns_copy_string(c, dst->cluster_name, &dst->cluster_name) < 0 ||
        ns_copy_string(c, dst->nodeclaim_name, &dst->nodeclaim_name) < 0 ||
        ns_copy_string(c, dst->nodepool_name, &dst->nodepool_name) < 0 ||
        ns_copy_string(c, dst->client_token, &dst->client_token) < 0 || ns_copy_nodeclass(c, src->nodeclass, nc) < 0)
        return NS_ERR_INTERNAL;
    ns_launch_option *options = copy_sized(c, src->options, src->n_options, sizeof(ns_launch_option));
    if (!options)
        return oom();
    dst->options = options;
    for (size_t i = 0; i < src->n_options; i++)
        if (ns_copy_string(c, options[i].instance_type, &options[i].instance_type) < 0 ||
            ns_copy_string(c, options[i].zone, &options[i].zone) < 0 ||
            ns_copy_string(c, options[i].capacity_type, &options[i].capacity_type) < 0)
            return NS_ERR_INTERNAL;
    if (copy_labels(c, dst->labels, dst->n_labels, &dst->labels) < 0 ||
        copy_taints(c, dst->taints, dst->n_taints, &dst->taints) < 0 ||
        copy_taints(c, dst->startup_taints, dst->n_startup_taints, &dst->startup_taints) < 0 ||
        copy_labels(c, dst->tags, dst->n_tags, &dst->tags) < 0)
        return NS_ERR_INTERNAL;
    return NS_OK;
}

int ns_copy_fault(ns_copies *c, const ns_fault *src, ns_fault *dst)
{
    memset(dst, 0, sizeof(*dst));
    memcpy(dst, src, src->struct_size < sizeof(*dst) ? src->struct_size : sizeof(*dst));
    dst->struct_size = sizeof(*dst);
    if (ns_copy_string(c, dst->instance_type, &dst->instance_type) < 0 ||
        ns_copy_string(c, dst->zone, &dst->zone) < 0 ||
        ns_copy_string(c, dst->capacity_type, &dst->capacity_type) < 0 ||
        ns_copy_string(c, dst->method, &dst->method) < 0 ||
        ns_copy_string(c, dst->provider_id, &dst->provider_id) < 0)
        return NS_ERR_INTERNAL;
    return NS_OK;
}

int ns_copy_node_condition(ns_copies *c, const ns_node_condition *src, ns_node_condition *dst)
{
    memset(dst, 0, sizeof(*dst));
    memcpy(dst, src, src->struct_size < sizeof(*dst) ? src->struct_size : sizeof(*dst));
    dst->struct_size = sizeof(*dst);
    if (ns_copy_string(c, dst->node_name, &dst->node_name) < 0 ||
        ns_copy_string(c, dst->provider_id, &dst->provider_id) < 0 || ns_copy_string(c, dst->type, &dst->type) < 0 ||
        ns_copy_string(c, dst->status, &dst->status) < 0 || ns_copy_string(c, dst->reason, &dst->reason) < 0 ||
        ns_copy_string(c, dst->message, &dst->message) < 0)
        return NS_ERR_INTERNAL;
    return NS_OK;
}

void ns_copies_free(ns_copies *c)
{
    for (size_t i = 0; i < c->n_blocks; i++)
        free(c->blocks[i]);
    for (size_t i = 0; i < c->n_trees; i++)
        cJSON_Delete((cJSON *)c->trees[i]);
    free(c->blocks);
    free(c->trees);
    memset(c, 0, sizeof(*c));
}
