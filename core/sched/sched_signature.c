/*
 * A pod's scheduling signature: every field that decides where it may go (namespace, labels, requests, node
 * selector, affinity, tolerations, spread constraints, host ports), serialised (model/pod_key.h) so that pods with
 * equal signatures can be placed as one group.
 */
#include "sched/sched_signature.h"

#include "errors/ns_error.h"

static void key_resources(ns_key *b, const ns_res *r)
{
    ns_key_int(b, r->cpu_milli);
    ns_key_int(b, r->memory_bytes);
    ns_key_int(b, r->ephemeral_storage_bytes);
    ns_key_int(b, r->pods);
    ns_key_int(b, r->n_ext);
    for (uint32_t i = 0; i < r->n_ext; i++) {
        ns_key_str(b, r->ext[i].name);
        ns_key_int(b, r->ext[i].value);
    }
}

int sched_signature(const ns_pod *p, bool with_owner, ns_key *b)
{
    b->len = 0;
    b->failed = false;
    ns_key_str(b, p->meta.namespace_);
    ns_key_labels(b, &p->meta.labels);
    key_resources(b, &p->requests);
    ns_key_labels(b, &p->node_selector);
    ns_key_affinity(b, &p->affinity);
    ns_key_int(b, (int64_t)p->n_tolerations);
    for (size_t i = 0; i < p->n_tolerations; i++) {
        const ns_toleration *t = &p->tolerations[i];
        ns_key_str(b, t->key);
        ns_key_int(b, t->exists);
        ns_key_str(b, t->value);
        ns_key_str(b, t->effect);
    }
    ns_key_spread(b, p->spread, p->n_spread);
    if (with_owner && p->n_spread == 0) {
        ns_key_str(b, p->meta.owner_kind);
        ns_key_str(b, p->meta.owner_name);
    }
    ns_key_int(b, (int64_t)p->n_host_ports);
    for (size_t i = 0; i < p->n_host_ports; i++) {
        ns_key_str(b, p->host_ports[i].ip);
        ns_key_int(b, p->host_ports[i].port);
        ns_key_str(b, p->host_ports[i].protocol);
    }
    ns_key_int(b, (int64_t)p->n_volumes);
    for (size_t i = 0; i < p->n_volumes; i++) {
        char claim[520]; /* two names of at most 253 characters and a dash */
        ns_key_str(b, ns_pod_volume_claim(p, &p->volumes[i], claim, sizeof(claim)));
    }
    if (b->failed)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory describing pod %s", p->meta.name);
    return NS_OK;
}
