#include "model/cluster.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/expansions.h"
#include "model/hash.h"
#include "model/model_util.h"

/* Open-addressing hash of pods by namespace and name, so loading many pods stays linear. */
struct ns_cluster_index {
    ns_pod **slots;
    size_t n_slots;
    size_t used;
};

static const char *ns_or_default(const char *ns)
{
    return ns ? ns : "default";
}

static const char *nz(const char *s)
{
    return s ? s : "";
}

static uint64_t pod_hash(const char *ns, const char *name)
{
    return ns_hash_str(ns_hash_step(ns_hash_str(NS_HASH_SEED, ns), '/'), name);
}

static bool pod_is(const ns_pod *p, const char *ns, const char *name)
{
    return strcmp(ns_or_default(p->meta.namespace_), ns) == 0 && strcmp(nz(p->meta.name), name) == 0;
}

static ns_pod **index_slot(const struct ns_cluster_index *ix, const char *ns, const char *name)
{
    size_t mask = ix->n_slots - 1;
    for (size_t i = (size_t)pod_hash(ns, name) & mask;; i = (i + 1) & mask)
        if (!ix->slots[i] || pod_is(ix->slots[i], ns, name))
            return &ix->slots[i];
}

static int index_insert(ns_cluster *c, ns_pod *pod)
{
    struct ns_cluster_index *ix = c->index;
    if ((ix->used + 1) * 2 > ix->n_slots) {
        size_t n = ix->n_slots ? ix->n_slots * 2 : 64;
        ns_pod **slots = calloc(n, sizeof(*slots));
        if (!slots)
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory growing the pod index");
        struct ns_cluster_index grown = {slots, n, 0};
        for (size_t i = 0; i < ix->n_slots; i++) {
            if (ix->slots[i]) {
                *index_slot(&grown, ns_or_default(ix->slots[i]->meta.namespace_), nz(ix->slots[i]->meta.name)) =
                    ix->slots[i];
                grown.used++;
            }
        }
        free(ix->slots);
        *ix = grown;
    }
    *index_slot(ix, ns_or_default(pod->meta.namespace_), nz(pod->meta.name)) = pod;
    ix->used++;
    return 0;
}

ns_cluster *ns_cluster_new(void)
{
    ns_cluster *c = calloc(1, sizeof(*c));
    if (c)
        c->index = calloc(1, sizeof(*c->index));
    if (!c || !c->index) {
        free(c);
        NS_FAIL(NS_ERR_INTERNAL, "out of memory allocating a cluster");
        return NULL;
    }
    return c;
}

void ns_cluster_set_kinds(ns_cluster *c, const struct ns_nodeclass_kinds *kinds)
{
    c->kinds = kinds;
}

void ns_cluster_set_packed_pods(ns_cluster *c, bool packed)
{
    c->packed_pods = packed;
}

void ns_cluster_free(ns_cluster *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_pods; i++)
        ns_pod_free(c->pods[i]);
    for (size_t i = 0; i < c->n_nodes; i++)
        ns_node_free(c->nodes[i]);
    for (size_t i = 0; i < c->n_nodepools; i++)
        ns_nodepool_free(c->nodepools[i]);
    for (size_t i = 0; i < c->n_nodeclasses; i++)
        ns_nodeclass_def_free(c->nodeclasses[i]);
    for (size_t i = 0; i < c->n_pdbs; i++)
        ns_pdb_free(c->pdbs[i]);
    for (size_t i = 0; i < c->n_daemonsets; i++)
        ns_daemonset_free(c->daemonsets[i]);
    for (size_t i = 0; i < c->n_nodeclaims; i++)
        ns_nodeclaim_free(c->nodeclaims[i]);
    for (size_t i = 0; i < c->n_storage_classes; i++)
        ns_storage_class_free(c->storage_classes[i]);
    for (size_t i = 0; i < c->n_pvs; i++)
        ns_pv_free(c->pvs[i]);
    for (size_t i = 0; i < c->n_pvcs; i++)
        ns_pvc_free(c->pvcs[i]);
    for (size_t i = 0; i < c->n_services; i++)
        ns_service_free(c->services[i]);
    for (size_t i = 0; i < c->n_pod_controllers; i++)
        ns_workload_free(c->pod_controllers[i]);
    free(c->services);
    free(c->pod_controllers);
    for (size_t i = 0; i < c->n_volume_attachments; i++)
        ns_volume_attachment_free(c->volume_attachments[i]);
    free(c->volume_attachments);
    for (size_t i = 0; i < c->n_buffers; i++)
        ns_buffer_free(c->buffers[i]);
    for (size_t i = 0; i < c->n_pod_templates; i++)
        ns_pod_template_free(c->pod_templates[i]);
    free(c->buffers);
    free(c->pod_templates);
    free(c->storage_classes);
    free(c->pvs);
    free(c->pvcs);
    free(c->pods);
    free(c->nodes);
    free(c->nodepools);
    free(c->nodeclasses);
    free(c->pdbs);
    free(c->daemonsets);
    free(c->nodeclaims);
    if (c->index)
        free(c->index->slots);
    free(c->index);
    ns_expansions_free(c->expansions);
    free(c);
}

static int duplicate(const char *kind, const ns_meta *now, const ns_meta *before)
{
    const char *ns = now->namespace_;
    return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%d: %s %s%s%s is defined twice (first at %s:%d)", nz(now->source_file),
                   now->source_line, kind, ns ? ns : "", ns ? "/" : "", nz(now->name), nz(before->source_file),
                   before->source_line);
}

static int unnamed(const char *kind, const ns_meta *m)
{
    return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%d: %s has no metadata.name", nz(m->source_file), m->source_line, kind);
}

/* Appends obj to a pointer list. */
static int push(void ***list, size_t *n, size_t *cap, void *obj)
{
    int rc = ns_grow((void **)list, cap, *n + 1, sizeof(void *));
    if (rc == 0)
        (*list)[(*n)++] = obj;
    return rc;
}

int ns_cluster_add_pod(ns_cluster *c, ns_pod *pod)
{
    int rc;
    if (!pod->meta.name)
        rc = unnamed("Pod", &pod->meta);
    else if (c->index->n_slots && *index_slot(c->index, ns_or_default(pod->meta.namespace_), pod->meta.name))
        rc = duplicate("Pod", &pod->meta,
                       &(*index_slot(c->index, ns_or_default(pod->meta.namespace_), pod->meta.name))->meta);
    else if ((rc = push((void ***)&c->pods, &c->n_pods, &c->cap.pods, pod)) == 0 && (rc = index_insert(c, pod)) < 0)
        c->n_pods--;
    if (rc < 0)
        ns_pod_free(pod);
    return rc;
}

/* The shared shape of the other add functions: check the name, reject duplicates found by `find`, append. */
#define ADD_UNIQUE(kind, list, n, cap, obj, existing, freefn)                                                          \
    do {                                                                                                               \
        int rc_;                                                                                                       \
        if (!(obj)->meta.name)                                                                                         \
            rc_ = unnamed(kind, &(obj)->meta);                                                                         \
        else if (existing)                                                                                             \
            rc_ = duplicate(kind, &(obj)->meta, &(existing)->meta);                                                    \
        else                                                                                                           \
            rc_ = push((void ***)&(list), &(n), &(cap), (obj));                                                        \
        if (rc_ < 0)                                                                                                   \
            freefn(obj);                                                                                               \
        return rc_;                                                                                                    \
    } while (0)

int ns_cluster_add_node(ns_cluster *c, ns_node *node)
{
    ADD_UNIQUE("Node", c->nodes, c->n_nodes, c->cap.nodes, node,
               node->meta.name ? ns_cluster_find_node(c, node->meta.name) : NULL, ns_node_free);
}

int ns_cluster_add_nodepool(ns_cluster *c, ns_nodepool *np)
{
    ADD_UNIQUE("NodePool", c->nodepools, c->n_nodepools, c->cap.nodepools, np,
               np->meta.name ? ns_cluster_find_nodepool(c, np->meta.name) : NULL, ns_nodepool_free);
}

int ns_cluster_add_nodeclass(ns_cluster *c, ns_nodeclass_def *def)
{
    ADD_UNIQUE(def->kind, c->nodeclasses, c->n_nodeclasses, c->cap.nodeclasses, def,
               def->meta.name ? ns_cluster_find_nodeclass(c, def->kind, def->meta.name) : NULL,
               ns_nodeclass_def_free);
}

int ns_cluster_add_pdb(ns_cluster *c, ns_pdb *pdb)
{
    ADD_UNIQUE("PodDisruptionBudget", c->pdbs, c->n_pdbs, c->cap.pdbs, pdb,
               pdb->meta.name ? ns_cluster_find_pdb(c, pdb->meta.namespace_, pdb->meta.name) : NULL, ns_pdb_free);
}

int ns_cluster_add_daemonset(ns_cluster *c, ns_daemonset *ds)
{
    ADD_UNIQUE("DaemonSet", c->daemonsets, c->n_daemonsets, c->cap.daemonsets, ds,
               ds->meta.name ? ns_cluster_find_daemonset(c, ds->meta.namespace_, ds->meta.name) : NULL,
               ns_daemonset_free);
}

int ns_cluster_add_storage_class(ns_cluster *c, ns_storage_class *sc)
{
    ADD_UNIQUE("StorageClass", c->storage_classes, c->n_storage_classes, c->cap.storage_classes, sc,
               sc->meta.name ? ns_cluster_find_storage_class(c, sc->meta.name) : NULL, ns_storage_class_free);
}

int ns_cluster_add_pv(ns_cluster *c, ns_pv *pv)
{
    ADD_UNIQUE("PersistentVolume", c->pvs, c->n_pvs, c->cap.pvs, pv,
               pv->meta.name ? ns_cluster_find_pv(c, pv->meta.name) : NULL, ns_pv_free);
}

int ns_cluster_add_pvc(ns_cluster *c, ns_pvc *pvc)
{
    ADD_UNIQUE("PersistentVolumeClaim", c->pvcs, c->n_pvcs, c->cap.pvcs, pvc,
               pvc->meta.name ? ns_cluster_find_pvc(c, pvc->meta.namespace_, pvc->meta.name) : NULL, ns_pvc_free);
}

int ns_cluster_add_service(ns_cluster *c, ns_service *svc)
{
    ADD_UNIQUE("Service", c->services, c->n_services, c->cap.services, svc,
               svc->meta.name ? ns_cluster_find_service(c, svc->meta.namespace_, svc->meta.name) : NULL,
               ns_service_free);
}

int ns_cluster_add_pod_controller(ns_cluster *c, ns_workload *w)
{
    ADD_UNIQUE(w->kind, c->pod_controllers, c->n_pod_controllers, c->cap.pod_controllers, w,
               w->meta.name ? ns_cluster_find_pod_controller(c, w->kind, w->meta.namespace_, w->meta.name) : NULL,
               ns_workload_free);
}

int ns_cluster_add_volume_attachment(ns_cluster *c, ns_volume_attachment *va)
{
    ADD_UNIQUE("VolumeAttachment", c->volume_attachments, c->n_volume_attachments, c->cap.volume_attachments, va,
               va->meta.name ? ns_cluster_find_volume_attachment(c, va->meta.name) : NULL, ns_volume_attachment_free);
}

int ns_cluster_add_buffer(ns_cluster *c, ns_buffer *b)
{
    ADD_UNIQUE("CapacityBuffer", c->buffers, c->n_buffers, c->cap.buffers, b,
               b->meta.name ? ns_cluster_find_buffer(c, b->meta.namespace_, b->meta.name) : NULL, ns_buffer_free);
}

int ns_cluster_add_pod_template(ns_cluster *c, ns_pod_template *t)
{
    ADD_UNIQUE("PodTemplate", c->pod_templates, c->n_pod_templates, c->cap.pod_templates, t,
               t->meta.name ? ns_cluster_find_pod_template(c, t->meta.namespace_, t->meta.name) : NULL,
               ns_pod_template_free);
}

int ns_cluster_add_nodeclaim(ns_cluster *c, ns_nodeclaim *claim)
{
    ADD_UNIQUE("NodeClaim", c->nodeclaims, c->n_nodeclaims, c->cap.nodeclaims, claim,
               claim->meta.name ? ns_cluster_find_nodeclaim(c, claim->meta.name) : NULL, ns_nodeclaim_free);
}

/* Linear-probing deletion: pull later entries of the same probe run back so lookups never stop at the hole. */
static void index_remove(struct ns_cluster_index *ix, ns_pod *pod)
{
    ns_pod **slot = index_slot(ix, ns_or_default(pod->meta.namespace_), nz(pod->meta.name));
    if (*slot != pod)
        return;
    size_t mask = ix->n_slots - 1, hole = (size_t)(slot - ix->slots);
    ix->slots[hole] = NULL;
    ix->used--;
    for (size_t i = (hole + 1) & mask; ix->slots[i]; i = (i + 1) & mask) {
        ns_pod *p = ix->slots[i];
        size_t home = (size_t)pod_hash(ns_or_default(p->meta.namespace_), nz(p->meta.name)) & mask;
        /* p may move into the hole when its home is not cyclically within (hole, i]. */
        bool stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
        if (!stays) {
            ix->slots[hole] = p;
            ix->slots[i] = NULL;
            hole = i;
        }
    }
}

/* Removes obj from a pointer list, keeping the order. false when absent. */
static bool unlink_obj(void **list, size_t *n, const void *obj)
{
    for (size_t i = 0; i < *n; i++) {
        if (list[i] != obj)
            continue;
        memmove(&list[i], &list[i + 1], (*n - i - 1) * sizeof(void *));
        (*n)--;
        return true;
    }
    return false;
}

static int not_in_cluster(const char *kind, const ns_meta *m)
{
    return NS_FAIL(NS_ERR_NOT_FOUND, "removing %s %s: it is not in the cluster", kind, nz(m->name));
}

int ns_cluster_remove_pod(ns_cluster *c, ns_pod *pod)
{
    if (!unlink_obj((void **)c->pods, &c->n_pods, pod))
        return not_in_cluster("Pod", &pod->meta);
    index_remove(c->index, pod);
    ns_pod_free(pod);
    return 0;
}

int ns_cluster_replace_pod(ns_cluster *c, ns_pod *old, ns_pod *pod)
{
    size_t i = 0;
    while (i < c->n_pods && c->pods[i] != old)
        i++;
    bool same = pod->meta.name && old->meta.name && strcmp(pod->meta.name, old->meta.name) == 0 &&
                strcmp(ns_or_default(pod->meta.namespace_), ns_or_default(old->meta.namespace_)) == 0;
    if (i == c->n_pods || !same) {
        int rc = i == c->n_pods ? not_in_cluster("Pod", &old->meta)
                                : NS_FAIL(NS_ERR_INVALID_ARGUMENT, "replacing pod %s: the new pod is named %s",
                                          nz(old->meta.name), nz(pod->meta.name));
        ns_pod_free(pod);
        return rc;
    }
    *index_slot(c->index, ns_or_default(old->meta.namespace_), nz(old->meta.name)) = pod;
    c->pods[i] = pod;
    ns_pod_free(old);
    return 0;
}

int ns_cluster_remove_node(ns_cluster *c, ns_node *node)
{
    if (!unlink_obj((void **)c->nodes, &c->n_nodes, node))
        return not_in_cluster("Node", &node->meta);
    ns_node_free(node);
    return 0;
}

int ns_cluster_remove_nodeclaim(ns_cluster *c, ns_nodeclaim *claim)
{
    if (!unlink_obj((void **)c->nodeclaims, &c->n_nodeclaims, claim))
        return not_in_cluster("NodeClaim", &claim->meta);
    ns_nodeclaim_free(claim);
    return 0;
}

int ns_cluster_remove_nodepool(ns_cluster *c, ns_nodepool *np)
{
    if (!unlink_obj((void **)c->nodepools, &c->n_nodepools, np))
        return not_in_cluster("NodePool", &np->meta);
    ns_nodepool_free(np);
    return 0;
}

int ns_cluster_remove_nodeclass(ns_cluster *c, ns_nodeclass_def *def)
{
    if (!unlink_obj((void **)c->nodeclasses, &c->n_nodeclasses, def))
        return not_in_cluster(def->kind, &def->meta);
    ns_nodeclass_def_free(def);
    return 0;
}

int ns_cluster_remove_pdb(ns_cluster *c, ns_pdb *pdb)
{
    if (!unlink_obj((void **)c->pdbs, &c->n_pdbs, pdb))
        return not_in_cluster("PodDisruptionBudget", &pdb->meta);
    ns_pdb_free(pdb);
    return 0;
}

int ns_cluster_remove_daemonset(ns_cluster *c, ns_daemonset *ds)
{
    if (!unlink_obj((void **)c->daemonsets, &c->n_daemonsets, ds))
        return not_in_cluster("DaemonSet", &ds->meta);
    ns_daemonset_free(ds);
    return 0;
}

int ns_cluster_remove_storage_class(ns_cluster *c, ns_storage_class *sc)
{
    if (!unlink_obj((void **)c->storage_classes, &c->n_storage_classes, sc))
        return not_in_cluster("StorageClass", &sc->meta);
    ns_storage_class_free(sc);
    return 0;
}

int ns_cluster_remove_pv(ns_cluster *c, ns_pv *pv)
{
    if (!unlink_obj((void **)c->pvs, &c->n_pvs, pv))
        return not_in_cluster("PersistentVolume", &pv->meta);
    ns_pv_free(pv);
    return 0;
}

int ns_cluster_remove_volume_attachment(ns_cluster *c, ns_volume_attachment *va)
{
    if (!unlink_obj((void **)c->volume_attachments, &c->n_volume_attachments, va))
        return not_in_cluster("VolumeAttachment", &va->meta);
    ns_volume_attachment_free(va);
    return 0;
}

int ns_cluster_remove_service(ns_cluster *c, ns_service *svc)
{
    if (!unlink_obj((void **)c->services, &c->n_services, svc))
        return not_in_cluster("Service", &svc->meta);
    ns_service_free(svc);
    return 0;
}

int ns_cluster_remove_pod_controller(ns_cluster *c, ns_workload *w)
{
    if (!unlink_obj((void **)c->pod_controllers, &c->n_pod_controllers, w))
        return not_in_cluster(w->kind, &w->meta);
    ns_workload_free(w);
    return 0;
}

int ns_cluster_remove_pvc(ns_cluster *c, ns_pvc *pvc)
{
    if (!unlink_obj((void **)c->pvcs, &c->n_pvcs, pvc))
        return not_in_cluster("PersistentVolumeClaim", &pvc->meta);
    ns_pvc_free(pvc);
    return 0;
}

int ns_cluster_remove_buffer(ns_cluster *c, ns_buffer *b)
{
    if (!unlink_obj((void **)c->buffers, &c->n_buffers, b))
        return not_in_cluster("CapacityBuffer", &b->meta);
    ns_buffer_free(b);
    return 0;
}

int ns_cluster_remove_pod_template(ns_cluster *c, ns_pod_template *t)
{
    if (!unlink_obj((void **)c->pod_templates, &c->n_pod_templates, t))
        return not_in_cluster("PodTemplate", &t->meta);
    ns_pod_template_free(t);
    return 0;
}

int ns_cluster_take_buffer(ns_cluster *c, ns_buffer *b)
{
    return unlink_obj((void **)c->buffers, &c->n_buffers, b) ? 0 : not_in_cluster("CapacityBuffer", &b->meta);
}

int ns_cluster_take_nodepool(ns_cluster *c, ns_nodepool *np)
{
    return unlink_obj((void **)c->nodepools, &c->n_nodepools, np) ? 0 : not_in_cluster("NodePool", &np->meta);
}

int ns_cluster_take_nodeclaim(ns_cluster *c, ns_nodeclaim *claim)
{
    return unlink_obj((void **)c->nodeclaims, &c->n_nodeclaims, claim) ? 0
                                                                      : not_in_cluster("NodeClaim", &claim->meta);
}

ns_pod *ns_cluster_find_pod(const ns_cluster *c, const char *ns, const char *name)
{
    if (!c->index->n_slots || !name)
        return NULL;
    return *index_slot(c->index, ns_or_default(ns), name);
}

/* Linear lookups: these lists are short (pools, classes, nodes, budgets). */
#define FIND(list, n, match)                                                                                           \
    do {                                                                                                               \
        for (size_t i_ = 0; i_ < (n); i_++) {                                                                          \
            __typeof__((list)[0]) it = (list)[i_];                                                                     \
            if (match)                                                                                                 \
                return it;                                                                                             \
        }                                                                                                              \
        return NULL;                                                                                                   \
    } while (0)

ns_node *ns_cluster_find_node(const ns_cluster *c, const char *name)
{
    FIND(c->nodes, c->n_nodes, strcmp(nz(it->meta.name), name) == 0);
}

ns_nodepool *ns_cluster_find_nodepool(const ns_cluster *c, const char *name)
{
    FIND(c->nodepools, c->n_nodepools, strcmp(nz(it->meta.name), name) == 0);
}

ns_nodeclass_def *ns_cluster_find_nodeclass(const ns_cluster *c, const char *kind, const char *name)
{
    FIND(c->nodeclasses, c->n_nodeclasses, strcmp(it->kind, kind) == 0 && strcmp(nz(it->meta.name), name) == 0);
}

ns_pdb *ns_cluster_find_pdb(const ns_cluster *c, const char *ns, const char *name)
{
    FIND(c->pdbs, c->n_pdbs,
         strcmp(ns_or_default(it->meta.namespace_), ns_or_default(ns)) == 0 && strcmp(nz(it->meta.name), name) == 0);
}

ns_service *ns_cluster_find_service(const ns_cluster *c, const char *ns, const char *name)
{
    FIND(c->services, c->n_services,
         strcmp(ns_or_default(it->meta.namespace_), ns_or_default(ns)) == 0 && strcmp(nz(it->meta.name), name) == 0);
}

ns_workload *ns_cluster_find_pod_controller(const ns_cluster *c, const char *kind, const char *ns, const char *name)
{
    FIND(c->pod_controllers, c->n_pod_controllers,
         strcmp(it->kind, kind) == 0 && strcmp(ns_or_default(it->meta.namespace_), ns_or_default(ns)) == 0 &&
             strcmp(nz(it->meta.name), name) == 0);
}

ns_daemonset *ns_cluster_find_daemonset(const ns_cluster *c, const char *ns, const char *name)
{
    FIND(c->daemonsets, c->n_daemonsets,
         strcmp(ns_or_default(it->meta.namespace_), ns_or_default(ns)) == 0 && strcmp(nz(it->meta.name), name) == 0);
}

ns_nodeclaim *ns_cluster_find_nodeclaim(const ns_cluster *c, const char *name)
{
    FIND(c->nodeclaims, c->n_nodeclaims, strcmp(nz(it->meta.name), name) == 0);
}

ns_storage_class *ns_cluster_find_storage_class(const ns_cluster *c, const char *name)
{
    FIND(c->storage_classes, c->n_storage_classes, strcmp(nz(it->meta.name), name) == 0);
}

ns_pv *ns_cluster_find_pv(const ns_cluster *c, const char *name)
{
    FIND(c->pvs, c->n_pvs, strcmp(nz(it->meta.name), name) == 0);
}

ns_volume_attachment *ns_cluster_find_volume_attachment(const ns_cluster *c, const char *name)
{
    FIND(c->volume_attachments, c->n_volume_attachments, strcmp(nz(it->meta.name), name) == 0);
}

ns_pvc *ns_cluster_find_pvc(const ns_cluster *c, const char *ns, const char *name)
{
    FIND(c->pvcs, c->n_pvcs,
         strcmp(ns_or_default(it->meta.namespace_), ns_or_default(ns)) == 0 && strcmp(nz(it->meta.name), name) == 0);
}

ns_buffer *ns_cluster_find_buffer(const ns_cluster *c, const char *ns, const char *name)
{
    FIND(c->buffers, c->n_buffers,
         strcmp(ns_or_default(it->meta.namespace_), ns_or_default(ns)) == 0 && strcmp(nz(it->meta.name), name) == 0);
}

const ns_pod *ns_cluster_buffer_shape(const ns_cluster *c, const ns_buffer *b, int32_t *scalable_replicas)
{
    *scalable_replicas = 0;
    if (b->pod_template) {
        const ns_pod_template *t = ns_cluster_find_pod_template(c, b->meta.namespace_, b->pod_template);
        return t ? t->pod : NULL;
    }
    const ns_workload *w =
        b->scalable_kind && b->scalable_name ? ns_cluster_find_pod_controller(c, b->scalable_kind, b->meta.namespace_, b->scalable_name)
                         : NULL;
    if (!w || !w->template_pod)
        return NULL;
    *scalable_replicas = w->replicas;
    return w->template_pod;
}

ns_pod_template *ns_cluster_find_pod_template(const ns_cluster *c, const char *ns, const char *name)
{
    FIND(c->pod_templates, c->n_pod_templates,
         strcmp(ns_or_default(it->meta.namespace_), ns_or_default(ns)) == 0 && strcmp(nz(it->meta.name), name) == 0);
}

ns_nodeclass_def *ns_cluster_nodeclass_for(const ns_cluster *c, const ns_nodeclass_ref *ref)
{
    if (!ref->kind || !ref->name)
        return NULL;
    ns_nodeclass_def *def = ns_cluster_find_nodeclass(c, ref->kind, ref->name);
    if (def && ref->group && *ref->group) {
        char group[128];
        if (strcmp(ns_api_group(def->api_version, group, sizeof(group)), ref->group) != 0)
            return NULL;
    }
    return def;
}

static int missing_class(const char *kind, const ns_meta *m, const ns_nodeclass_ref *ref)
{
    return NS_FAIL(NS_ERR_INVALID_CONFIG,
                   "%s:%d: %s %s: nodeClassRef names %s %s%s%s, which is not among the loaded manifests",
                   nz(m->source_file), m->source_line, kind, nz(m->name), nz(ref->kind), nz(ref->name),
                   ref->group && *ref->group ? " in group " : "", ref->group ? ref->group : "");
}

int ns_cluster_resolve(ns_cluster *c)
{
    for (size_t i = 0; i < c->n_nodepools; i++) {
        ns_nodepool *np = c->nodepools[i];
        const ns_nodeclass_def *def = ns_cluster_nodeclass_for(c, &np->nodeclass_ref);
        if (!def)
            return missing_class("NodePool", &np->meta, &np->nodeclass_ref);
        if (!np->kubelet.present && def->kubelet.present) {
            int rc = ns_kubelet_config_copy(&def->kubelet, &np->kubelet);
            if (rc < 0)
                return rc;
        }
    }
    for (size_t i = 0; i < c->n_nodeclaims; i++) {
        ns_nodeclaim *claim = c->nodeclaims[i];
        if (!ns_cluster_nodeclass_for(c, &claim->nodeclass_ref))
            return missing_class("NodeClaim", &claim->meta, &claim->nodeclass_ref);
    }
    for (size_t i = 0; i < c->n_buffers; i++) {
        const ns_buffer *b = c->buffers[i];
        const ns_meta *m = &b->meta;
        const char *t = b->pod_template;
        int32_t replicas;
        if (!t && !b->resolution_failed && !ns_cluster_buffer_shape(c, b, &replicas))
            return NS_FAIL(NS_ERR_INVALID_CONFIG,
                           "%s:%d: CapacityBuffer %s/%s: spec.scalableRef names %s %s/%s, which is not among the "
                           "loaded manifests (a buffer's workload is in its own namespace)",
                           nz(m->source_file), m->source_line, ns_or_default(m->namespace_), nz(m->name),
                           b->scalable_kind, ns_or_default(m->namespace_), b->scalable_name);
        if (t && !ns_cluster_find_pod_template(c, m->namespace_, t))
            return NS_FAIL(NS_ERR_INVALID_CONFIG,
                           "%s:%d: CapacityBuffer %s/%s: spec.podTemplateRef names PodTemplate %s/%s, which is not "
                           "among the loaded manifests (a buffer's template is in its own namespace)",
                           nz(m->source_file), m->source_line, ns_or_default(m->namespace_), nz(m->name),
                           ns_or_default(m->namespace_), t);
    }
    return 0;
}
