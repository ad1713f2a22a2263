/*
 * Volume topology, as Karpenter's VolumeTopology (pkg/controllers/provisioning/scheduling/volumetopology.go): each of
 * a pod's volumes backed by a PersistentVolumeClaim gives alternative requirements, from the bound PersistentVolume's
 * required node affinity (one alternative per term; a local or hostPath volume's hostname requirement is dropped,
 * since a new node cannot have that name) or, for a claim not bound yet, from its StorageClass's allowedTopologies
 * (one alternative per term, each expression an In). The volumes' alternatives combine term by term, keeping the
 * combinations that intersect (all of them when none does). The result constrains where the pod's node may be, but
 * not the pod's own requirements that topology spread counts with (Karpenter keeps them apart the same way).
 *
 * A claim that cannot be used makes the pod not provisionable, as Karpenter's ValidatePersistentVolumeClaims does:
 * the claim is missing or being deleted or Lost; a bound claim whose volume is missing or being deleted, or that
 * lacks the pv.kubernetes.io/bind-completed annotation; an unbound claim without a StorageClass, whose class is
 * missing, or whose class binds Immediately (such a claim must be bound already).
 */
#include "sched/sched_volumes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"

typedef struct alts {
    ns_requirements *v;
    size_t n;
} alts;

static void alts_free(alts *a)
{
    for (size_t i = 0; a->v && i < a->n; i++)
        ns_requirements_free(&a->v[i]);
    free(a->v);
    a->v = NULL;
    a->n = 0;
}

static ns_requirements *alts_push(alts *a)
{
    ns_requirements *nv = realloc(a->v, (a->n + 1) * sizeof(*nv));
    if (!nv)
        return NULL;
    a->v = nv;
    memset(&a->v[a->n], 0, sizeof(a->v[a->n]));
    return &a->v[a->n++];
}

static void why_set(char *why, size_t len, const char *fmt, ...) NS_PRINTF(3, 4);
static void why_set(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

/* One alternative per node selector term; with drop_hostname (local and hostPath volumes) the hostname expressions
 * are left out, and a term left with none allows every node. */
static int term_alts(const ns_node_selector_term *terms, size_t n, bool drop_hostname, alts *out)
{
    for (size_t i = 0; i < n; i++) {
        const ns_node_selector_term *t = &terms[i];
        size_t kept = 0;
        for (size_t e = 0; e < t->n_exprs; e++)
            kept += !(drop_hostname && strcmp(t->exprs[e].key, NS_LABEL_HOSTNAME) == 0);
        if (kept == 0 && !(drop_hostname && t->n_exprs > 0))
            continue; /* Karpenter skips a term without expressions */
        ns_requirements *r = alts_push(out);
        if (!r)
            return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory reading volume topology");
        for (size_t e = 0; e < t->n_exprs; e++) {
            if (drop_hostname && strcmp(t->exprs[e].key, NS_LABEL_HOSTNAME) == 0)
                continue;
            int rc = ns_requirements_add_selector(r, &t->exprs[e], 1);
            if (rc < 0)
                return rc;
        }
    }
    return NS_OK;
}

/* The alternatives of one claim, or a reason in why when it cannot be used. */
static int claim_alts(const ns_cluster *cl, const ns_pod *pod, const char *claim, alts *out, char *why, size_t len)
{
    const char *ns = pod->meta.namespace_ ? pod->meta.namespace_ : "default";
    const ns_pvc *pvc = ns_cluster_find_pvc(cl, ns, claim);
    if (!pvc) {
        why_set(why, len, "PersistentVolumeClaim %s/%s not found", ns, claim);
        return NS_OK;
    }
    if (pvc->meta.deletion_ms) {
        why_set(why, len, "PersistentVolumeClaim %s/%s is being deleted", ns, claim);
        return NS_OK;
    }
    if (pvc->phase && strcmp(pvc->phase, "Lost") == 0) {
        why_set(why, len, "PersistentVolumeClaim %s/%s is bound to a PersistentVolume that no longer exists", ns,
                claim);
        return NS_OK;
    }
    if (pvc->volume_name && *pvc->volume_name) {
        const ns_pv *pv = ns_cluster_find_pv(cl, pvc->volume_name);
        if (!pv || pv->meta.deletion_ms) {
            why_set(why, len, "PersistentVolume %s of PersistentVolumeClaim %s/%s %s", pvc->volume_name, ns, claim,
                    pv ? "is being deleted" : "not found");
            return NS_OK;
        }
        if (!ns_labels_get(&pvc->meta.annotations, "pv.kubernetes.io/bind-completed")) {
            why_set(why, len, "PersistentVolumeClaim %s/%s is considered unbound: it names volume %s but lacks the "
                    "pv.kubernetes.io/bind-completed annotation", ns, claim, pvc->volume_name);
            return NS_OK;
        }
        return term_alts(pv->node_affinity, pv->n_node_affinity, pv->local, out);
    }
    if (!pvc->storage_class || !*pvc->storage_class) {
        why_set(why, len, "PersistentVolumeClaim %s/%s is unbound and names no StorageClass", ns, claim);
        return NS_OK;
    }
    const ns_storage_class *sc = ns_cluster_find_storage_class(cl, pvc->storage_class);
    if (!sc) {
        why_set(why, len, "StorageClass %s of PersistentVolumeClaim %s/%s not found", pvc->storage_class, ns, claim);
        return NS_OK;
    }
    if (!sc->wait_for_first_consumer) {
        why_set(why, len, "PersistentVolumeClaim %s/%s is unbound and its StorageClass %s binds Immediately (such a "
                "claim must be bound before the pod schedules)", ns, claim, sc->meta.name);
        return NS_OK;
    }
    return term_alts(sc->allowed_topologies, sc->n_allowed_topologies, false, out);
}

/* acc x vol, keeping the pairs that intersect when any does (an empty acc is the one alternative "anything"). */
static int merge(alts *acc, const alts *vol)
{
    alts out = {0};
    int rc = NS_OK;
    size_t n_acc = acc->n ? acc->n : 1;
    for (int pass = 0; pass < 2 && rc == NS_OK && out.n == 0; pass++) {
        for (size_t i = 0; rc == NS_OK && i < n_acc; i++)
            for (size_t j = 0; rc == NS_OK && j < vol->n; j++) {
                const ns_requirements *e = acc->n ? &acc->v[i] : NULL;
                bool ok = !e || ns_requirements_intersects(e, &vol->v[j], NULL, 0);
                if (pass == 0 && !ok)
                    continue;
                ns_requirements *r = alts_push(&out);
                if (!r)
                    rc = NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory reading volume topology");
                if (rc == NS_OK && e)
                    rc = ns_requirements_add_all(r, e);
                if (rc == NS_OK)
                    rc = ns_requirements_add_all(r, &vol->v[j]);
            }
    }
    alts_free(acc);
    *acc = out;
    if (rc != NS_OK)
        alts_free(acc);
    return rc;
}

/* True when every alternative is one In requirement on the same key without bounds or minValues. */
static bool one_key_in(const alts *a)
{
    for (size_t i = 0; i < a->n; i++) {
        const ns_requirements *r = &a->v[i];
        if (r->n != 1 || r->items[0].complement || r->items[0].has_gte || r->items[0].has_lte ||
            strcmp(r->items[0].key, a->v[0].items[0].key) != 0)
            return false;
    }
    return true;
}

/* The alternatives as one set: on one key with In values, their union is exactly "any of them" (an
 * allowedTopologies term per zone, a PersistentVolume term per zone); otherwise the first alternative, which may
 * refuse a node Karpenter would find with a later one (docs/simulate.md). */
static int collapse(const alts *a, ns_requirements *out)
{
    if (a->n == 0)
        return NS_OK;
    if (a->n == 1 || !one_key_in(a))
        return ns_requirements_add_all(out, &a->v[0]);
    size_t n = 0;
    for (size_t i = 0; i < a->n; i++)
        n += a->v[i].items[0].n_values;
    const char **values = malloc((n ? n : 1) * sizeof(*values));
    if (!values)
        return NS_FAIL(NS_ERR_INTERNAL, "scheduling: out of memory reading volume topology");
    n = 0;
    for (size_t i = 0; i < a->n; i++)
        for (size_t j = 0; j < a->v[i].items[0].n_values; j++)
            values[n++] = a->v[i].items[0].values[j];
    int rc = ns_requirements_add_op(out, a->v[0].items[0].key, NS_OP_IN, values, n, 0);
    free(values);
    return rc;
}

int sched_volume_requirements(const ns_cluster *cl, const ns_pod *pod, ns_requirements *out, char *why, size_t len)
{
    alts acc = {0};
    int rc = NS_OK;
    why[0] = '\0';
    for (size_t i = 0; rc == NS_OK && !why[0] && i < pod->n_volumes; i++) {
        char claim[520]; /* two names of at most 253 characters and a dash */
        alts vol = {0};
        if (!ns_pod_volume_claim(pod, &pod->volumes[i], claim, sizeof(claim))[0])
            why_set(why, len, "the claim name of volume %s is too long", pod->volumes[i].claim);
        else
            rc = claim_alts(cl, pod, claim, &vol, why, len);
        if (rc == NS_OK && !why[0] && vol.n)
            rc = merge(&acc, &vol);
        alts_free(&vol);
    }
    if (rc == NS_OK && !why[0])
        rc = collapse(&acc, out);
    alts_free(&acc);
    if (rc != NS_OK)
        return ns_error_prefix("pod %s/%s: volume topology: ", pod->meta.namespace_ ? pod->meta.namespace_ : "default",
                               pod->meta.name ? pod->meta.name : "");
    return NS_OK;
}
