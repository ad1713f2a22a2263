/*
 * Warm headroom (Karpenter's CapacityBuffer, active strategy): each buffer's chunks join provisioning as virtual pods
 * of its PodTemplate's shape. They are scheduled like pending pods, after the real ones (provisioning's second pass,
 * with the real pods pinned where its first pass put them, so a chunk never pushes a real pod onto a new node); the
 * chunks no existing or in-flight node holds get NodeClaims of their own, within the NodePools' limits. They are
 * never bound: each round places them again, so a real pod that takes their room displaces them and the next round
 * provisions them elsewhere. Where they went is kept until the next round, for emptiness (a node holding a chunk is
 * not empty, as Karpenter's HasBufferPods) and for the reports (with their share of the nodes' price).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/model_util.h"

void ns_engine_headroom_free(ns_engine_headroom *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->n; i++) {
        free(h->slots[i].node);
        ns_res_free(&h->slots[i].requests);
    }
    free(h->slots);
    for (size_t i = 0; i < h->n_buffers; i++)
        free(h->buffers[i].key);
    free(h->buffers);
    memset(h, 0, sizeof(*h));
}

/* The chunks the buffer asks for, of shape *tmpl (its PodTemplate's or its scalableRef's workload's); none when the
 * cluster has not that object (a timeline may delete it; Karpenter's buffer is then not ready for provisioning and
 * gets no virtual pod). */
static int64_t buffer_chunks(const ns_cluster *c, const ns_buffer *b, const ns_pod **tmpl)
{
    int32_t replicas;
    *tmpl = ns_cluster_buffer_shape(c, b, &replicas);
    return *tmpl ? ns_buffer_chunks(b, *tmpl, replicas) : 0;
}

static size_t chunks_wanted(const ns_cluster *c)
{
    size_t n = 0;
    const ns_pod *tmpl;
    for (size_t i = 0; i < c->n_buffers; i++)
        n += (size_t)buffer_chunks(c, c->buffers[i], &tmpl);
    return n;
}

/* One chunk: the template as a pending pod named as Karpenter names it, capacity-buffer-<buffer>-<i>, with the
 * template's labels (Karpenter propagates them, so other pods' spread and affinity selectors count chunks). */
static int add_chunk(ns_engine_plan *p, const ns_buffer *b, const ns_pod *tmpl, int64_t i, size_t *cap)
{
    char name[2 * NS_NAME_MAX];
    snprintf(name, sizeof(name), "capacity-buffer-%s-%lld", b->meta.name, (long long)i);
    char *owned = ns_strdup(name);
    char **names = owned ? realloc(p->own_names, (p->n_own_names + 1) * sizeof(*names)) : NULL;
    if (!names) {
        free(owned);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory adding CapacityBuffer %s's chunks", b->meta.name);
    }
    p->own_names = names;
    p->own_names[p->n_own_names++] = owned;
    ns_pod *pod = ns_engine_plan_pod(p, tmpl);
    if (!pod)
        return NS_ERR_INTERNAL;
    pod->meta.name = owned;
    /* Karpenter's sanitizeVirtualPodSpec drops PersistentVolumeClaim and ephemeral volumes (the only ones the model
     * keeps): a chunk's claim never exists, so it must not hold the chunk to a volume's zone or keep it unplaced. */
    pod->volumes = NULL;
    pod->n_volumes = 0;
    pod->node_name = NULL;
    pod->phase = NULL;
    pod->sched_status = NS_POD_STATUS_NONE;
    if (p->view.n_pods == *cap) {
        size_t next = *cap * 2 + 8;
        ns_pod **grown = realloc(p->view.pods, next * sizeof(*grown));
        if (!grown)
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory adding CapacityBuffer %s's chunks", b->meta.name);
        p->view.pods = grown;
        *cap = next;
    }
    p->view.pods[p->view.n_pods++] = pod;
    return 0;
}

int ns_engine_headroom_pods(ns_engine *e, ns_engine_plan *p)
{
    const ns_cluster *c = e->cluster;
    size_t cap = p->view.n_pods;
    int rc = 0;
    for (size_t b = 0; rc == 0 && b < c->n_buffers; b++) {
        const ns_pod *tmpl;
        int64_t n = buffer_chunks(c, c->buffers[b], &tmpl);
        for (int64_t i = 1; rc == 0 && i <= n; i++)
            rc = add_chunk(p, c->buffers[b], tmpl, i, &cap);
    }
    return rc;
}

static int add_slot(ns_engine_headroom *h, const char *node, const ns_res *requests)
{
    ns_headroom_slot *s = NULL;
    for (size_t i = 0; i < h->n && !s; i++)
        if (strcmp(h->slots[i].node, node) == 0)
            s = &h->slots[i];
    if (!s) {
        if (ns_grow((void **)&h->slots, &h->cap, h->n + 1, sizeof(*h->slots)) < 0)
            return NS_ERR_INTERNAL;
        s = &h->slots[h->n];
        memset(s, 0, sizeof(*s));
        if (!(s->node = ns_strdup(node)))
            return NS_ERR_INTERNAL;
        h->n++;
    }
    s->chunks++;
    return ns_res_add(&s->requests, requests);
}

/* One entry per buffer of the cluster, with the chunks it asks for: the plan's chunks come in this order. */
static int buffer_entries(const ns_cluster *c, ns_engine_headroom *h)
{
    if (!c->n_buffers)
        return 0;
    if (!(h->buffers = calloc(c->n_buffers, sizeof(*h->buffers))))
        return NS_ERR_INTERNAL;
    for (size_t b = 0; b < c->n_buffers; b++) {
        const ns_meta *m = &c->buffers[b]->meta;
        const ns_pod *tmpl;
        char key[2 * NS_NAME_MAX + 2];
        snprintf(key, sizeof(key), "%s/%s", m->namespace_ ? m->namespace_ : "default", m->name);
        if (!(h->buffers[b].key = ns_strdup(key)))
            return NS_ERR_INTERNAL;
        h->buffers[b].chunks.wanted = (size_t)buffer_chunks(c, c->buffers[b], &tmpl);
        h->n_buffers = b + 1;
    }
    return 0;
}

/* The buffer the chunk-th chunk of the round belongs to. */
static ns_engine_buffer_chunks *buffer_of(ns_engine_headroom *h, size_t chunk)
{
    for (size_t b = 0; b < h->n_buffers; b++) {
        if (chunk < h->buffers[b].chunks.wanted)
            return &h->buffers[b].chunks;
        chunk -= h->buffers[b].chunks.wanted;
    }
    return NULL;
}

/* Where the round put each chunk: a view node, or the NodeClaim created for it (names[claim]). */
static int record(ns_engine *e, const ns_engine_plan *p, char (*names)[NS_NAME_MAX], size_t wanted)
{
    ns_engine_headroom h = {.wanted = wanted};
    const ns_sched_result *r = &p->result;
    int rc = buffer_entries(e->cluster, &h);
    for (size_t i = p->n_cluster_pods; rc == 0 && i < p->view.n_pods; i++) {
        size_t at = i < r->n_placement ? r->placement[i] : SIZE_MAX;
        const char *node = NULL;
        ns_engine_buffer_chunks *counts = buffer_of(&h, i - p->n_cluster_pods);
        if (at < p->view.n_nodes)
            node = p->view.nodes[at]->meta.name;
        else if (at < p->view.n_nodes + r->n_claims && names[at - p->view.n_nodes][0])
            node = names[at - p->view.n_nodes];
        if (counts && at < p->view.n_nodes)
            counts->existing++;
        else if (counts)
            *(node ? &counts->new_capacity : &counts->failed) += 1;
        if (node)
            rc = add_slot(&h, node, &p->view.pods[i]->requests);
        else
            h.unplaced++;
    }
    if (rc < 0) {
        ns_engine_headroom_free(&h);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording where the capacity buffers' chunks went");
    }
    char where[512] = "";
    size_t off = 0;
    for (size_t i = 0; i < h.n && off < sizeof(where); i++) {
        int w = snprintf(where + off, sizeof(where) - off, "%s%s=%zu", i ? ", " : "", h.slots[i].node, h.slots[i].chunks);
        off += w > 0 ? (size_t)w : 0;
    }
    char unplaced[600];
    const char *why = "";
    for (size_t i = 0; i < r->n_unschedulable && !*why; i++)
        if (r->unschedulable[i].pod >= p->n_cluster_pods)
            why = r->unschedulable[i].reason;
    snprintf(unplaced, sizeof(unplaced), "%zu%s%s", h.unplaced, *why ? ": " : "", why);
    ns_log(NS_LOG_DEBUG, "provisioner", "placed capacity buffer chunk(s)", "nodes", where, "unplaced", unplaced, NULL);
    ns_engine_headroom_free(&e->headroom);
    e->headroom = h;
    return 0;
}

static size_t virtual_on(const ns_engine_plan *p, const ns_sched_claim *claim)
{
    size_t n = 0;
    for (size_t i = 0; i < claim->n_pods; i++)
        n += claim->pods[i] >= p->n_cluster_pods;
    return n;
}

int ns_engine_headroom_round(ns_engine *e, const char *const *pinned, size_t n_pinned)
{
    size_t wanted = e->cfg.capacity_buffer ? chunks_wanted(e->cluster) : 0;
    if (wanted == 0) {
        ns_engine_headroom_free(&e->headroom);
        return 0;
    }
    /* Pin mode even without a first pass: a real pod it did not place stays out of this one. */
    static const char *const none[1] = {NULL};
    ns_engine_plan_opts o = {.headroom = true, .pinned = pinned ? pinned : none, .n_pinned = pinned ? n_pinned : 0};
    ns_engine_plan plan;
    int rc = ns_engine_plan_run(e, &o, &plan);
    if (rc < 0)
        return ns_error_prefix("placing the capacity buffers' chunks: ");
    char (*names)[NS_NAME_MAX] = calloc(plan.result.n_claims ? plan.result.n_claims : 1, sizeof(*names));
    if (!names)
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory creating nodeclaims for capacity buffers");
    if (rc == 0 && plan.result.n_claims) {
        size_t chunks = 0;
        for (size_t i = 0; i < plan.result.n_claims; i++)
            chunks += virtual_on(&plan, &plan.result.claims[i]);
        cJSON *f = cJSON_CreateObject();
        if (f && (!cJSON_AddNumberToObject(f, "nodeclaims", (double)plan.result.n_claims) ||
                  !cJSON_AddNumberToObject(f, "capacity-buffer-chunks", (double)chunks))) {
            cJSON_Delete(f);
            f = NULL;
        }
        ns_log_json(NS_LOG_INFO, "provisioner", "computed new nodeclaim(s) to fit capacity buffer chunk(s)", f);
    }
    /* Only chunks are scheduled in this pass (real pods are pinned or left out), so every new claim is headroom's. */
    for (size_t i = 0; rc == 0 && i < plan.result.n_claims && (rc = ns_engine_check_stop(e)) == 0; i++)
        rc = ns_engine_create_claim(e, &plan.result.claims[i], true, names[i]);
    if (rc == 0)
        rc = record(e, &plan, names, wanted);
    free(names);
    ns_engine_plan_free(&plan);
    return rc;
}

bool ns_engine_buffer_placement(const ns_engine *e, const char *ns, const char *name, ns_engine_buffer_chunks *out)
{
    char key[2 * NS_NAME_MAX + 2];
    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "default", name);
    for (size_t i = 0; i < e->headroom.n_buffers; i++) {
        if (strcmp(e->headroom.buffers[i].key, key) == 0) {
            *out = e->headroom.buffers[i].chunks;
            return true;
        }
    }
    return false;
}

bool ns_engine_holds_headroom(const ns_engine *e, const char *node_name)
{
    for (size_t i = 0; node_name && i < e->headroom.n; i++)
        if (strcmp(e->headroom.slots[i].node, node_name) == 0)
            return true;
    return false;
}

/* The node a slot names (a Node, or an in-flight NodeClaim by its name) and its claim. */
static const ns_nodeclaim *slot_claim(const ns_engine *e, const char *name, const ns_node **node)
{
    *node = ns_cluster_find_node(e->cluster, name);
    if (*node)
        return ns_engine_claim_of_node(e, *node);
    return ns_cluster_find_nodeclaim(e->cluster, name);
}

static double share(int64_t used, int64_t total)
{
    return total > 0 ? (double)used / (double)total : 0;
}

void ns_engine_headroom_sample(const ns_engine *e, ns_engine_sample *out)
{
    out->headroom_wanted = e->headroom.wanted;
    for (size_t i = 0; i < e->headroom.n; i++) {
        const ns_headroom_slot *s = &e->headroom.slots[i];
        const ns_node *node;
        const ns_nodeclaim *claim = slot_claim(e, s->node, &node);
        if (!node && !claim)
            continue; /* gone since the round: placed again at the next one */
        out->headroom_placed += s->chunks;
        if (node && node->ready && !node->unschedulable && (!claim || ns_claim_initialized(claim)))
            out->headroom_ready += s->chunks;
        const char *price = claim ? ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_PRICE) : NULL;
        const ns_res *alloc = node ? &node->allocatable : &claim->allocatable;
        if (!price || !ns_claim_launched(claim))
            continue;
        double f = share(s->requests.cpu_milli, alloc->cpu_milli);
        double m = share(s->requests.memory_bytes, alloc->memory_bytes);
        f = m > f ? m : f;
        out->headroom_cost_per_hour += strtod(price, NULL) * (f > 1 ? 1 : f);
    }
}
