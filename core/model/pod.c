#include "model/pod.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/checked.h"
#include "model/intern.h"
#include "model/model_util.h"
#include "model/pod_share.h"
#include "model/resources.h"

ns_pod *ns_pod_new(void)
{
    ns_pod *pod = calloc(1, sizeof(*pod));
    if (!pod) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory allocating a pod");
        return NULL;
    }
    pod->termination_grace_period_s = -1;
    return pod;
}

void ns_container_free(ns_container *c)
{
    if (!c)
        return;
    free(c->name);
    ns_res_free(&c->requests);
    ns_res_free(&c->limits);
    memset(c, 0, sizeof(*c));
}

static void containers_free(ns_container *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        ns_container_free(&v[i]);
    free(v);
}

void ns_node_selector_term_free(ns_node_selector_term *t)
{
    if (!t)
        return;
    ns_selector_reqs_free(t->exprs, t->n_exprs);
    ns_selector_reqs_free(t->fields, t->n_fields);
    memset(t, 0, sizeof(*t));
}

void ns_pod_affinity_term_free(ns_pod_affinity_term *t)
{
    if (!t)
        return;
    ns_label_selector_free(&t->selector);
    ns_strv_free(t->namespaces, t->n_namespaces);
    ns_label_selector_free(&t->namespace_selector);
    free(t->topology_key);
    ns_strv_free(t->match_label_keys, t->n_match_label_keys);
    ns_strv_free(t->mismatch_label_keys, t->n_mismatch_label_keys);
    memset(t, 0, sizeof(*t));
}

static void pod_terms_free(ns_pod_affinity_term *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        ns_pod_affinity_term_free(&v[i]);
    free(v);
}

static void weighted_terms_free(ns_weighted_pod_affinity_term *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        ns_pod_affinity_term_free(&v[i].term);
    free(v);
}

void ns_affinity_free(ns_affinity *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n_node_required; i++)
        ns_node_selector_term_free(&a->node_required[i]);
    free(a->node_required);
    for (size_t i = 0; i < a->n_node_preferred; i++)
        ns_node_selector_term_free(&a->node_preferred[i].term);
    free(a->node_preferred);
    pod_terms_free(a->pod_required, a->n_pod_required);
    weighted_terms_free(a->pod_preferred, a->n_pod_preferred);
    pod_terms_free(a->anti_required, a->n_anti_required);
    weighted_terms_free(a->anti_preferred, a->n_anti_preferred);
    memset(a, 0, sizeof(*a));
}

void ns_topology_spread_free(ns_topology_spread *s)
{
    if (!s)
        return;
    free(s->topology_key);
    ns_label_selector_free(&s->selector);
    ns_strv_free(s->match_label_keys, s->n_match_label_keys);
    memset(s, 0, sizeof(*s));
}

void ns_pod_free(ns_pod *pod)
{
    if (!pod)
        return;
    if (pod->packed) {
        /* everything but these lives in the pod's own block (ns_pod_pack) */
        if (pod->node_name_owned)
            free(pod->node_name);
        if (pod->share) {
            ns_pod_share_release(pod->share);
        } else {
            ns_affinity_free(&pod->affinity);
            for (size_t i = 0; i < pod->n_spread; i++)
                ns_topology_spread_free(&pod->spread[i]);
            free(pod->spread);
        }
        free(pod->host_ports);
        ns_pod_spec_resources_free(pod->spec_resources);
        free(pod);
        return;
    }
    ns_meta_free(&pod->meta);
    containers_free(pod->containers, pod->n_containers);
    containers_free(pod->init_containers, pod->n_init_containers);
    ns_labels_free(&pod->node_selector);
    ns_affinity_free(&pod->affinity);
    ns_tolerations_free(pod->tolerations, pod->n_tolerations);
    for (size_t i = 0; i < pod->n_spread; i++)
        ns_topology_spread_free(&pod->spread[i]);
    free(pod->spread);
    free(pod->host_ports);
    for (size_t i = 0; i < pod->n_volumes; i++)
        free(pod->volumes[i].claim);
    free(pod->volumes);
    free(pod->priority_class_name);
    free(pod->preemption_policy);
    free(pod->node_name);
    free(pod->scheduler_name);
    free(pod->phase);
    ns_pod_spec_resources_free(pod->spec_resources);
    ns_res_free(&pod->requests);
    ns_res_free(&pod->limits);
    free(pod);
}

void ns_pod_spec_resources_free(ns_pod_spec_resources *r)
{
    if (!r)
        return;
    ns_res_free(&r->overhead);
    ns_res_free(&r->requests);
    ns_res_free(&r->limits);
    free(r);
}

/* A packed pod's phase is interned, as the rest of its names from bounded sets; its node name stays in its block
 * until the first binding gives it one of its own. */
int ns_pod_set_binding(ns_pod *pod, const char *node_name, const char *phase)
{
    char *name = node_name ? ns_strdup(node_name) : NULL;
    char *ph = NULL;
    if (phase)
        ph = pod->packed ? (char *)ns_intern(phase) : ns_strdup(phase);
    if ((node_name && !name) || (phase && !ph)) {
        free(name);
        if (!pod->packed)
            free(ph);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory binding pod %s/%s",
                       pod->meta.namespace_ ? pod->meta.namespace_ : "default", pod->meta.name ? pod->meta.name : "");
    }
    if (!pod->packed || pod->node_name_owned)
        free(pod->node_name);
    if (!pod->packed)
        free(pod->phase);
    pod->node_name = name;
    pod->phase = ph;
    if (!node_name)
        pod->sched_status = NS_POD_STATUS_NONE;
    pod->node_name_owned = pod->packed;
    return 0;
}

ns_pod_spec_resources *ns_pod_spec_resources_get(ns_pod *pod)
{
    if (!pod->spec_resources && !(pod->spec_resources = calloc(1, sizeof(*pod->spec_resources))))
        NS_FAIL(NS_ERR_INTERNAL, "out of memory allocating the resources of pod %s",
                pod->meta.name ? pod->meta.name : "");
    return pod->spec_resources;
}

/* requests or limits of the pod, by Kubernetes' rule (see the header), into *sum (empty on entry). */
static int effective(const ns_pod *pod, bool limits, ns_res *sum)
{
    ns_res sidecars = {0}, init_max = {0}, running = {0};
    int rc = 0;
    for (size_t i = 0; i < pod->n_containers && rc == 0; i++)
        rc = ns_res_add(sum, limits ? &pod->containers[i].limits : &pod->containers[i].requests);
    for (size_t i = 0; i < pod->n_init_containers && rc == 0; i++) {
        const ns_container *c = &pod->init_containers[i];
        const ns_res *r = limits ? &c->limits : &c->requests;
        if (c->sidecar) {
            rc = ns_res_add(&sidecars, r);
            rc = rc ? rc : ns_res_copy(&running, &sidecars);
        } else {
            rc = ns_res_copy(&running, r);
            rc = rc ? rc : ns_res_add(&running, &sidecars);
        }
        rc = rc ? rc : ns_res_max(&init_max, &running);
    }
    rc = rc ? rc : ns_res_add(sum, &sidecars);
    rc = rc ? rc : ns_res_max(sum, &init_max);
    ns_res_free(&sidecars);
    ns_res_free(&init_max);
    ns_res_free(&running);
    if (rc < 0)
        return rc;
    const ns_pod_spec_resources *sr = pod->spec_resources;
    if (!sr)
        return 0;
    bool has_pod_level = limits ? sr->has_limits : sr->has_requests;
    const ns_res *pod_level = limits ? &sr->limits : &sr->requests;
    if (has_pod_level) {
        if (pod_level->cpu_milli)
            sum->cpu_milli = pod_level->cpu_milli;
        if (pod_level->memory_bytes)
            sum->memory_bytes = pod_level->memory_bytes;
    }
    /* Overhead counts towards limits only where a limit exists, as in Kubernetes' PodLimits. */
    if (!limits) {
        rc = ns_res_add(sum, &sr->overhead);
    } else {
        if ((sum->cpu_milli && !ns_checked_add(sum->cpu_milli, sr->overhead.cpu_milli, &sum->cpu_milli)) ||
            (sum->memory_bytes && !ns_checked_add(sum->memory_bytes, sr->overhead.memory_bytes, &sum->memory_bytes)))
            rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "limits plus overhead do not fit in 64 bits");
    }
    return rc;
}

bool ns_pod_do_not_disrupt(const ns_pod *pod, int64_t now_ms)
{
    if (pod->do_not_disrupt_ms <= 0)
        return false;
    if (pod->do_not_disrupt_ms == NS_DO_NOT_DISRUPT_ALWAYS || pod->start_ms <= 0)
        return true;
    return now_ms - pod->start_ms < pod->do_not_disrupt_ms;
}

int ns_pod_compute_requests(ns_pod *pod)
{
    ns_res req = {0}, lim = {0};
    int rc = effective(pod, false, &req);
    if (rc == 0)
        rc = effective(pod, true, &lim);
    if (rc < 0) {
        ns_res_free(&req);
        ns_res_free(&lim);
        return ns_error_last()->code; /* the caller names the pod */
    }
    req.pods = 1;
    ns_res_free(&pod->requests);
    ns_res_free(&pod->limits);
    pod->requests = req;
    pod->limits = lim;
    return 0;
}

int ns_pod_preferred_order(const ns_pod *pod, size_t **out)
{
    *out = NULL;
    size_t n = pod->affinity.n_node_preferred;
    if (n == 0)
        return 0;
    size_t *idx = calloc(n, sizeof(*idx));
    if (!idx)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory ordering preferred terms");
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    /* Insertion sort: stable, and lists are short. */
    for (size_t i = 1; i < n; i++) {
        size_t v = idx[i], j = i;
        while (j > 0 && pod->affinity.node_preferred[idx[j - 1]].weight < pod->affinity.node_preferred[v].weight) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
    *out = idx;
    return 0;
}

int ns_pod_node_requirements(const ns_pod *pod, int required_term, int preferred_term, ns_requirements *out)
{
    memset(out, 0, sizeof(*out));
    int rc = ns_requirements_add_labels(out, pod->node_selector.items, pod->node_selector.n);
    if (rc == 0 && preferred_term >= 0 && (size_t)preferred_term < pod->affinity.n_node_preferred) {
        size_t *order = NULL;
        rc = ns_pod_preferred_order(pod, &order);
        if (rc == 0) {
            const ns_node_selector_term *t = &pod->affinity.node_preferred[order[preferred_term]].term;
            rc = ns_requirements_add_selector(out, t->exprs, t->n_exprs);
        }
        free(order);
    }
    if (rc == 0 && required_term >= 0 && (size_t)required_term < pod->affinity.n_node_required) {
        const ns_node_selector_term *t = &pod->affinity.node_required[required_term];
        rc = ns_requirements_add_selector(out, t->exprs, t->n_exprs);
    }
    if (rc < 0)
        ns_requirements_free(out);
    return rc;
}

static bool term_matches(const ns_node_selector_term *t, const ns_label *labels, size_t n, const char *node_name)
{
    if (t->n_exprs == 0 && t->n_fields == 0)
        return false; /* an empty term matches no objects */
    ns_requirements reqs = {0};
    bool ok = ns_requirements_add_selector(&reqs, t->exprs, t->n_exprs) == 0 &&
              ns_requirements_match_labels(&reqs, labels, n, NULL, 0);
    ns_requirements_free(&reqs);
    for (size_t i = 0; ok && i < t->n_fields; i++) {
        const ns_selector_req *f = &t->fields[i];
        bool listed = false;
        for (size_t j = 0; j < f->n_values && node_name; j++)
            listed = listed || strcmp(f->values[j], node_name) == 0;
        ok = strcmp(f->key, "metadata.name") == 0 && (f->op == NS_OP_IN ? listed : f->op == NS_OP_NOT_IN && !listed);
    }
    return ok;
}

bool ns_pod_matches_node(const ns_pod *pod, const ns_label *labels, size_t n_labels, const char *node_name,
                         char *reason, size_t reason_len)
{
    for (size_t i = 0; i < pod->node_selector.n; i++) {
        const ns_label *want = &pod->node_selector.items[i];
        const char *have = ns_label_find(labels, n_labels, want->key);
        if (!have || strcmp(have, want->value) != 0) {
            if (reason && reason_len)
                snprintf(reason, reason_len, "node selector %s=%s does not match (node has %s)", want->key,
                         want->value, have ? have : "no such label");
            return false;
        }
    }
    if (!pod->affinity.has_node_required)
        return true;
    for (size_t i = 0; i < pod->affinity.n_node_required; i++)
        if (term_matches(&pod->affinity.node_required[i], labels, n_labels, node_name))
            return true;
    if (reason && reason_len)
        snprintf(reason, reason_len, "none of the %zu required node affinity terms match",
                 pod->affinity.n_node_required);
    return false;
}

bool ns_pod_tolerates(const ns_pod *pod, const ns_taint *taints, size_t n, const ns_taint *ignored, size_t n_ignored,
                      unsigned flags, char *reason, size_t reason_len)
{
    return ns_taints_tolerated(taints, n, ignored, n_ignored, pod->tolerations, pod->n_tolerations, flags, reason,
                               reason_len);
}

bool ns_pod_owned_by(const ns_pod *pod, const char *kind)
{
    return pod->meta.owner_kind && strcmp(pod->meta.owner_kind, kind) == 0;
}

const char *ns_pod_volume_claim(const ns_pod *pod, const ns_pod_volume *v, char *buf, size_t len)
{
    int n = v->ephemeral ? snprintf(buf, len, "%s-%s", pod->meta.name ? pod->meta.name : "", v->claim)
                         : snprintf(buf, len, "%s", v->claim);
    if (n < 0 || (size_t)n >= len)
        buf[0] = '\0';
    return buf;
}
