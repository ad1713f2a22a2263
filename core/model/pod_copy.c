/* Deep copies of pods (the in-memory workload controllers create replicas from a template pod). */
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/model_util.h"
#include "model/pod.h"

static int containers_copy(const ns_container *src, size_t n, ns_container **dst, size_t *n_dst)
{
    if (n == 0)
        return 0;
    if (!(*dst = calloc(n, sizeof(**dst))))
        return NS_ERR_INTERNAL;
    for (size_t i = 0; i < n; i++) {
        ns_container *d = &(*dst)[i];
        d->sidecar = src[i].sidecar;
        *n_dst = i + 1;
        if ((src[i].name && !(d->name = ns_strdup(src[i].name))) || ns_res_copy(&d->requests, &src[i].requests) < 0 ||
            ns_res_copy(&d->limits, &src[i].limits) < 0)
            return NS_ERR_INTERNAL;
    }
    return 0;
}

static int reqs_copy(const ns_selector_req *src, size_t n, ns_selector_req **dst, size_t *n_dst)
{
    if (n == 0)
        return 0;
    if (!(*dst = calloc(n, sizeof(**dst))))
        return NS_ERR_INTERNAL;
    for (size_t i = 0; i < n; i++) {
        if (ns_selector_req_copy(&src[i], &(*dst)[i]) < 0)
            return NS_ERR_INTERNAL;
        *n_dst = i + 1;
    }
    return 0;
}

static int node_term_copy(const ns_node_selector_term *src, ns_node_selector_term *dst)
{
    memset(dst, 0, sizeof(*dst));
    if (reqs_copy(src->exprs, src->n_exprs, &dst->exprs, &dst->n_exprs) < 0 ||
        reqs_copy(src->fields, src->n_fields, &dst->fields, &dst->n_fields) < 0)
        return NS_ERR_INTERNAL;
    return 0;
}

static int strv_copy(char *const *src, size_t n, char ***dst, size_t *n_dst)
{
    if (n && ns_strv_copy(src, n, dst) < 0)
        return NS_ERR_INTERNAL;
    *n_dst = *dst ? n : 0;
    return 0;
}

static int pod_term_copy(const ns_pod_affinity_term *src, ns_pod_affinity_term *dst)
{
    memset(dst, 0, sizeof(*dst));
    if (ns_label_selector_copy(&src->selector, &dst->selector) < 0 ||
        strv_copy(src->namespaces, src->n_namespaces, &dst->namespaces, &dst->n_namespaces) < 0 ||
        ns_label_selector_copy(&src->namespace_selector, &dst->namespace_selector) < 0 ||
        (src->topology_key && !(dst->topology_key = ns_strdup(src->topology_key))) ||
        strv_copy(src->match_label_keys, src->n_match_label_keys, &dst->match_label_keys,
                  &dst->n_match_label_keys) < 0 ||
        strv_copy(src->mismatch_label_keys, src->n_mismatch_label_keys, &dst->mismatch_label_keys,
                  &dst->n_mismatch_label_keys) < 0)
        return NS_ERR_INTERNAL;
    return 0;
}

static int pod_terms_copy(const ns_pod_affinity_term *src, size_t n, ns_pod_affinity_term **dst, size_t *n_dst)
{
    if (n == 0)
        return 0;
    if (!(*dst = calloc(n, sizeof(**dst))))
        return NS_ERR_INTERNAL;
    for (size_t i = 0; i < n; i++) {
        *n_dst = i + 1;
        if (pod_term_copy(&src[i], &(*dst)[i]) < 0)
            return NS_ERR_INTERNAL;
    }
    return 0;
}

static int weighted_copy(const ns_weighted_pod_affinity_term *src, size_t n, ns_weighted_pod_affinity_term **dst,
                         size_t *n_dst)
{
    if (n == 0)
        return 0;
    if (!(*dst = calloc(n, sizeof(**dst))))
        return NS_ERR_INTERNAL;
    for (size_t i = 0; i < n; i++) {
        *n_dst = i + 1;
        (*dst)[i].weight = src[i].weight;
        if (pod_term_copy(&src[i].term, &(*dst)[i].term) < 0)
            return NS_ERR_INTERNAL;
    }
    return 0;
}

static int affinity_copy(const ns_affinity *src, ns_affinity *dst)
{
    memset(dst, 0, sizeof(*dst));
    dst->has_node_required = src->has_node_required;
    if (src->n_node_required) {
        if (!(dst->node_required = calloc(src->n_node_required, sizeof(*dst->node_required))))
            return NS_ERR_INTERNAL;
        for (size_t i = 0; i < src->n_node_required; i++) {
            dst->n_node_required = i + 1;
            if (node_term_copy(&src->node_required[i], &dst->node_required[i]) < 0)
                return NS_ERR_INTERNAL;
        }
    }
    if (src->n_node_preferred) {
        if (!(dst->node_preferred = calloc(src->n_node_preferred, sizeof(*dst->node_preferred))))
            return NS_ERR_INTERNAL;
        for (size_t i = 0; i < src->n_node_preferred; i++) {
            dst->n_node_preferred = i + 1;
            dst->node_preferred[i].weight = src->node_preferred[i].weight;
            if (node_term_copy(&src->node_preferred[i].term, &dst->node_preferred[i].term) < 0)
                return NS_ERR_INTERNAL;
        }
    }
    if (pod_terms_copy(src->pod_required, src->n_pod_required, &dst->pod_required, &dst->n_pod_required) < 0 ||
        weighted_copy(src->pod_preferred, src->n_pod_preferred, &dst->pod_preferred, &dst->n_pod_preferred) < 0 ||
        pod_terms_copy(src->anti_required, src->n_anti_required, &dst->anti_required, &dst->n_anti_required) < 0 ||
        weighted_copy(src->anti_preferred, src->n_anti_preferred, &dst->anti_preferred, &dst->n_anti_preferred) < 0)
        return NS_ERR_INTERNAL;
    return 0;
}

static int spread_copy(const ns_topology_spread *src, size_t n, ns_topology_spread **dst, size_t *n_dst)
{
    if (n == 0)
        return 0;
    if (!(*dst = calloc(n, sizeof(**dst))))
        return NS_ERR_INTERNAL;
    for (size_t i = 0; i < n; i++) {
        ns_topology_spread *d = &(*dst)[i];
        *n_dst = i + 1;
        d->max_skew = src[i].max_skew;
        d->when_unsatisfiable = src[i].when_unsatisfiable;
        d->min_domains = src[i].min_domains;
        d->node_affinity_policy = src[i].node_affinity_policy;
        d->node_taints_policy = src[i].node_taints_policy;
        if ((src[i].topology_key && !(d->topology_key = ns_strdup(src[i].topology_key))) ||
            ns_label_selector_copy(&src[i].selector, &d->selector) < 0 ||
            strv_copy(src[i].match_label_keys, src[i].n_match_label_keys, &d->match_label_keys,
                      &d->n_match_label_keys) < 0)
            return NS_ERR_INTERNAL;
    }
    return 0;
}

static int dup_field(const char *src, char **dst)
{
    *dst = NULL;
    return src && !(*dst = ns_strdup(src)) ? NS_ERR_INTERNAL : 0;
}

ns_pod *ns_pod_copy(const ns_pod *src)
{
    ns_pod *p = ns_pod_new();
    if (!p)
        return NULL;
    /* Scalars first; every owned pointer is then reset so a failure part-way frees only what was copied. */
    *p = *src;
    memset(&p->meta, 0, sizeof(p->meta));
    p->containers = p->init_containers = NULL;
    p->n_containers = p->n_init_containers = 0;
    memset(&p->node_selector, 0, sizeof(p->node_selector));
    memset(&p->affinity, 0, sizeof(p->affinity));
    p->tolerations = NULL;
    p->n_tolerations = 0;
    p->spread = NULL;
    p->n_spread = 0;
    p->host_ports = NULL;
    p->n_host_ports = 0;
    p->volumes = NULL;
    p->n_volumes = 0;
    p->priority_class_name = p->preemption_policy = p->node_name = p->scheduler_name = p->phase = NULL;
    p->packed = p->node_name_owned = false;
    p->share = NULL;
    p->spec_resources = NULL;
    memset(&p->requests, 0, sizeof(p->requests));
    memset(&p->limits, 0, sizeof(p->limits));
    int rc = ns_meta_copy(&src->meta, &p->meta);
    if (rc == 0)
        rc = ns_res_copy(&p->requests, &src->requests);
    if (rc == 0)
        rc = ns_res_copy(&p->limits, &src->limits);
    if (rc == 0 && src->spec_resources) {
        const ns_pod_spec_resources *s = src->spec_resources;
        ns_pod_spec_resources *d = ns_pod_spec_resources_get(p);
        if (!d)
            rc = NS_ERR_INTERNAL;
        if (rc == 0) {
            d->has_requests = s->has_requests;
            d->has_limits = s->has_limits;
            rc = ns_res_copy(&d->overhead, &s->overhead);
        }
        if (rc == 0)
            rc = ns_res_copy(&d->requests, &s->requests);
        if (rc == 0)
            rc = ns_res_copy(&d->limits, &s->limits);
    }
    if (rc == 0)
        rc = containers_copy(src->containers, src->n_containers, &p->containers, &p->n_containers);
    if (rc == 0)
        rc = containers_copy(src->init_containers, src->n_init_containers, &p->init_containers,
                             &p->n_init_containers);
    if (rc == 0)
        rc = ns_labels_copy(&src->node_selector, &p->node_selector);
    if (rc == 0)
        rc = affinity_copy(&src->affinity, &p->affinity);
    if (rc == 0 && src->n_tolerations && (rc = ns_tolerations_copy(src->tolerations, src->n_tolerations,
                                                                   &p->tolerations)) == 0)
        p->n_tolerations = src->n_tolerations;
    if (rc == 0)
        rc = spread_copy(src->spread, src->n_spread, &p->spread, &p->n_spread);
    if (rc == 0 && src->n_host_ports) {
        if (!(p->host_ports = malloc(src->n_host_ports * sizeof(*p->host_ports))))
            rc = NS_ERR_INTERNAL;
        else {
            memcpy(p->host_ports, src->host_ports, src->n_host_ports * sizeof(*p->host_ports));
            p->n_host_ports = src->n_host_ports;
        }
    }
    if (rc == 0 && src->n_volumes && !(p->volumes = calloc(src->n_volumes, sizeof(*p->volumes))))
        rc = NS_ERR_INTERNAL;
    for (size_t i = 0; rc == 0 && i < src->n_volumes; i++) {
        p->n_volumes = i + 1;
        p->volumes[i].ephemeral = src->volumes[i].ephemeral;
        rc = dup_field(src->volumes[i].claim, &p->volumes[i].claim);
    }
    if (rc == 0)
        rc = dup_field(src->priority_class_name, &p->priority_class_name);
    if (rc == 0)
        rc = dup_field(src->preemption_policy, &p->preemption_policy);
    if (rc == 0)
        rc = dup_field(src->node_name, &p->node_name);
    if (rc == 0)
        rc = dup_field(src->scheduler_name, &p->scheduler_name);
    if (rc == 0)
        rc = dup_field(src->phase, &p->phase);
    if (rc < 0) {
        ns_pod_free(p);
        NS_FAIL(NS_ERR_INTERNAL, "out of memory copying pod %s", src->meta.name ? src->meta.name : "");
        return NULL;
    }
    return p;
}
