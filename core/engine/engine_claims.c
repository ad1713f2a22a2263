/* NodeClaims: names, creation from a scheduler claim, state predicates, drift hashes, and lookups. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "clock/ns_clock.h"
#include "engine/engine_internal.h"
#include "errors/ns_error.h"
#include "model/checked.h"
#include "model/hash.h"
#include "model/model_util.h"
#include "model/names.h"
#include "model/resources.h"

static const char *nz(const char *s)
{
    return s ? s : "";
}

bool ns_claim_launched(const ns_nodeclaim *c)
{
    return c->provider_id && c->provider_id[0];
}

bool ns_claim_registered(const ns_nodeclaim *c)
{
    return ns_conditions_true(&c->conditions, NS_COND_REGISTERED);
}

bool ns_claim_initialized(const ns_nodeclaim *c)
{
    return ns_conditions_true(&c->conditions, NS_COND_INITIALIZED);
}

bool ns_claim_deleting(const ns_nodeclaim *c)
{
    return c->meta.deletion_ms != 0;
}

bool ns_claim_termination_end(const ns_nodeclaim *c, int64_t *end_ms)
{
    if (!ns_claim_deleting(c))
        return false;
    const char *stamp = ns_labels_get(&c->meta.annotations, NS_ANNOTATION_TERMINATION_TIMESTAMP);
    /* an unparsable annotation is no termination time, as Karpenter's termination controller errors on it */
    if (stamp)
        return ns_clock_parse_rfc3339(stamp, end_ms) == 0;
    if (c->termination_grace_period_ms < 0)
        return false;
    *end_ms = ns_saturating_add(c->meta.deletion_ms, c->termination_grace_period_ms);
    return true;
}

int ns_engine_terminate_by(ns_engine *e, ns_nodeclaim *claim, int64_t now)
{
    const char *cur = ns_labels_get(&claim->meta.annotations, NS_ANNOTATION_TERMINATION_TIMESTAMP);
    int64_t at;
    if (cur && ns_clock_parse_rfc3339(cur, &at) == 0 && at < now)
        return NS_OK;
    char stamp[32];
    time_t secs = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (cur && strcmp(cur, stamp) == 0)
        return NS_OK;
    if (ns_labels_set(&claim->meta.annotations, NS_ANNOTATION_TERMINATION_TIMESTAMP, stamp) < 0)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory annotating nodeclaim %s", claim->meta.name);
    return e->writes.ops->update_nodeclaim(e->writes.ctx, claim);
}

void ns_engine_pod_ref(const ns_pod *pod, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", pod->meta.namespace_ ? pod->meta.namespace_ : "default", nz(pod->meta.name));
}

bool ns_engine_pod_is_daemon(const ns_pod *pod)
{
    return ns_pod_owned_by(pod, "DaemonSet") || ns_pod_owned_by(pod, "Node");
}

bool ns_engine_pod_stays_on_node(const ns_pod *pod)
{
    static const ns_taint disrupted = {NS_TAINT_DISRUPTED_KEY, NULL, NS_EFFECT_NO_SCHEDULE};
    return ns_pod_owned_by(pod, "Node") || ns_tolerations_tolerate(pod->tolerations, pod->n_tolerations, &disrupted);
}

bool ns_engine_pod_is_critical(const ns_pod *pod)
{
    const char *pc = pod->priority_class_name;
    return pc && (strcmp(pc, "system-cluster-critical") == 0 || strcmp(pc, "system-node-critical") == 0);
}

ns_nodeclaim *ns_engine_claim_of_node(const ns_engine *e, const ns_node *node)
{
    const ns_cluster *c = e->cluster;
    for (size_t i = 0; i < c->n_nodeclaims; i++) {
        ns_nodeclaim *claim = c->nodeclaims[i];
        if ((node->provider_id && claim->provider_id && strcmp(node->provider_id, claim->provider_id) == 0) ||
            (claim->node_name && node->meta.name && strcmp(claim->node_name, node->meta.name) == 0))
            return claim;
    }
    return NULL;
}

ns_node *ns_engine_node_of_claim(const ns_engine *e, const ns_nodeclaim *claim)
{
    const ns_cluster *c = e->cluster;
    for (size_t i = 0; i < c->n_nodes; i++) {
        ns_node *n = c->nodes[i];
        if ((n->provider_id && claim->provider_id && strcmp(n->provider_id, claim->provider_id) == 0) ||
            (claim->node_name && n->meta.name && strcmp(claim->node_name, n->meta.name) == 0))
            return n;
    }
    return NULL;
}

int ns_engine_pods_on_node(const ns_engine *e, const char *node_name, ns_pod ***out, size_t *n)
{
    const ns_cluster *c = e->cluster;
    *out = NULL;
    *n = 0;
    ns_pod **v = malloc((c->n_pods ? c->n_pods : 1) * sizeof(*v));
    if (!v)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory listing the pods of node %s", node_name);
    for (size_t i = 0; i < c->n_pods; i++)
        if (c->pods[i]->node_name && strcmp(c->pods[i]->node_name, node_name) == 0)
            v[(*n)++] = c->pods[i];
    *out = v;
    return NS_OK;
}

/* ---- Names */

static bool claim_name_taken(const char *name, void *ctx)
{
    const ns_cluster *c = ctx;
    return ns_cluster_find_nodeclaim(c, name) || ns_cluster_find_node(c, name);
}

int ns_engine_claim_name(ns_engine *e, const char *nodepool, char *buf, size_t len)
{
    char prefix[NS_K8S_NAME_MAX + 2];
    snprintf(prefix, sizeof(prefix), "%s-", nodepool);
    /* The API server rejects a generateName collision; the in-memory cluster is checked the same way. */
    return ns_name_generate(&e->names, prefix, claim_name_taken, e->cluster, buf, len);
}

/* ---- Hashes (drift) */

typedef struct hasher {
    uint64_t h;
} hasher;

static void hs(hasher *x, const char *s)
{
    x->h = ns_hash_field(x->h, s);
}

static void hi(hasher *x, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%" PRId64, v);
    hs(x, buf);
}

/* Karpenter hashes the template with SlicesAsSets, and labels are a map: reordering taints or labels is no change.
 * Each element is hashed on its own and the results summed, which does not depend on order. */
static void h_taints(hasher *x, const ns_taint *t, size_t n)
{
    uint64_t set = 0;
    for (size_t i = 0; i < n; i++) {
        hasher e = {NS_HASH_SEED};
        hs(&e, t[i].key);
        hs(&e, t[i].value);
        hs(&e, t[i].effect);
        set += e.h;
    }
    hi(x, (int64_t)n);
    hi(x, (int64_t)set);
}

static void h_labels(hasher *x, const ns_labels *l)
{
    uint64_t set = 0;
    for (size_t i = 0; i < l->n; i++) {
        hasher e = {NS_HASH_SEED};
        hs(&e, l->items[i].key);
        hs(&e, l->items[i].value);
        set += e.h;
    }
    hi(x, (int64_t)l->n);
    hi(x, (int64_t)set);
}

/* What Karpenter's NodePool.Hash covers: the template's metadata, taints, startup taints, node class reference,
 * expireAfter and terminationGracePeriod. Requirements are `hash:"ignore"`: a node drifts on them only when its labels
 * no longer satisfy them (RequirementsDrifted), so widening a requirement rolls nothing. */
void ns_nodepool_hash(const ns_nodepool *np, char *buf, size_t len)
{
    hasher x = {NS_HASH_SEED};
    h_labels(&x, &np->labels);
    h_labels(&x, &np->annotations);
    h_taints(&x, np->taints, np->n_taints);
    h_taints(&x, np->startup_taints, np->n_startup_taints);
    hs(&x, np->nodeclass_ref.group);
    hs(&x, np->nodeclass_ref.kind);
    hs(&x, np->nodeclass_ref.name);
    hi(&x, np->expire_after_ms);
    hi(&x, np->termination_grace_period_ms);
    snprintf(buf, len, "%016" PRIx64, x.h);
}

/* True when the provider's check_drift judges this spec field of this kind ("Kind.field" in its drift_fields). */
static bool provider_owns_field(const char *const *drift_fields, const char *kind, const char *field)
{
    size_t klen = kind ? strlen(kind) : 0;
    for (const char *const *f = drift_fields; f && *f && kind && field; f++)
        if (strncmp(*f, kind, klen) == 0 && (*f)[klen] == '.' && strcmp(*f + klen + 1, field) == 0)
            return true;
    return false;
}

void ns_nodeclass_hash(const ns_nodeclass_def *def, const char *const *drift_fields, char *buf, size_t len)
{
    hasher x = {NS_HASH_SEED};
    hs(&x, def->kind);
    hs(&x, def->meta.name);
    for (const cJSON *field = def->spec ? def->spec->child : NULL; field; field = field->next) {
        if (provider_owns_field(drift_fields, def->kind, field->string))
            continue;
        char *value = cJSON_PrintUnformatted(field);
        hs(&x, field->string);
        hs(&x, value);
        free(value);
    }
    snprintf(buf, len, "%016" PRIx64, x.h);
}

/* ---- Creation */

/* A normalised requirement back in manifest form (one or two entries: the set, then integer bounds). Values from a
 * bounded set (`interned`: the launch options' types, zones and capacity types) are interned, not copied. */
static int add_req(ns_selector_req **v, size_t *n, const char *key, ns_req_op op, char *const *values, size_t nv,
                   int32_t min_values, bool interned)
{
    ns_selector_req *grown = realloc(*v, (*n + 1) * sizeof(*grown));
    if (!grown)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory writing NodeClaim requirements");
    *v = grown;
    ns_selector_req *r = &grown[*n];
    memset(r, 0, sizeof(*r));
    r->op = op;
    r->min_values = min_values;
    if (!(r->key = ns_strdup(key)) ||
        (interned ? ns_selector_req_set_interned(r, values, nv) : ns_selector_req_set_values(r, values, nv)) < 0) {
        ns_selector_req_free(r);
        return NS_ERR_INTERNAL;
    }
    (*n)++;
    return 0;
}

static int add_bound(ns_selector_req **v, size_t *n, const char *key, ns_req_op op, int64_t bound)
{
    char num[32], *vals[1] = {num};
    snprintf(num, sizeof(num), "%" PRId64, bound);
    return add_req(v, n, key, op, vals, 1, 0, false);
}

static int requirement_to_selector(const ns_requirement *r, ns_selector_req **v, size_t *n)
{
    int rc;
    if (r->complement)
        rc = add_req(v, n, r->key, r->n_values ? NS_OP_NOT_IN : NS_OP_EXISTS, r->values, r->n_values,
                     r->min_values, false);
    else
        rc = add_req(v, n, r->key, r->n_values ? NS_OP_IN : NS_OP_DOES_NOT_EXIST, r->values, r->n_values,
                     r->min_values, false);
    if (rc == 0 && r->has_gte)
        rc = add_bound(v, n, r->key, NS_OP_GTE, r->gte);
    if (rc == 0 && r->has_lte)
        rc = add_bound(v, n, r->key, NS_OP_LTE, r->lte);
    return rc;
}

/* Distinct strings of the options' field, in first-seen (cheapest-first) order. */
static int option_values(const ns_sched_claim *c, int which, char ***out, size_t *n)
{
    *out = calloc(c->n_options ? c->n_options : 1, sizeof(char *));
    *n = 0;
    if (!*out)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory listing launch options");
    for (size_t i = 0; i < c->n_options; i++) {
        const char *v = which == 0 ? c->options[i].type->name : which == 1 ? c->options[i].zone
                                                                            : c->options[i].capacity_type;
        bool seen = false;
        for (size_t k = 0; k < *n && !seen; k++)
            seen = strcmp((*out)[k], v) == 0;
        if (!seen)
            (*out)[(*n)++] = (char *)v;
    }
    return 0;
}

static int claim_requirements(ns_nodeclaim *claim, const ns_sched_claim *c)
{
    static const char *const keys[] = {NS_LABEL_INSTANCE_TYPE, NS_LABEL_ZONE, NS_LABEL_CAPACITY_TYPE};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->requirements.n; i++) {
        const ns_requirement *r = &c->requirements.items[i];
        bool optioned = false;
        for (size_t k = 0; k < 3; k++)
            optioned = optioned || strcmp(r->key, keys[k]) == 0;
        if (!optioned)
            rc = requirement_to_selector(r, &claim->requirements, &claim->n_requirements);
    }
    for (int k = 0; rc == 0 && k < 3; k++) {
        char **vals;
        size_t nv;
        if ((rc = option_values(c, k, &vals, &nv)) < 0)
            break;
        const ns_requirement *orig = ns_requirements_get(&c->requirements, keys[k]);
        rc = add_req(&claim->requirements, &claim->n_requirements, keys[k], NS_OP_IN, vals, nv,
                     orig ? orig->min_values : 0, true);
        free(vals);
    }
    return rc;
}

/* Labels the claim (and later its Node) carries: the pool's template labels, the single-valued requirements but
 * kubernetes.io/hostname (Karpenter 1.14's resolveCustomLabelsFromRequirements skips its RestrictedLabels only, so a
 * custom label in the kubernetes.io or k8s.io domains is set), and the nodepool label. */
static int claim_labels(ns_nodeclaim *claim, const ns_nodepool *np, const ns_sched_claim *c)
{
    if (ns_labels_copy(&np->labels, &claim->meta.labels) < 0)
        return NS_ERR_INTERNAL;
    for (size_t i = 0; i < c->requirements.n; i++) {
        const ns_requirement *r = &c->requirements.items[i];
        if (r->complement || r->n_values != 1 || strcmp(r->key, NS_LABEL_INSTANCE_TYPE) == 0 ||
            strcmp(r->key, NS_LABEL_ZONE) == 0 || strcmp(r->key, NS_LABEL_CAPACITY_TYPE) == 0)
            continue;
        if (strcmp(r->key, NS_LABEL_HOSTNAME) == 0)
            continue;
        if (ns_labels_set(&claim->meta.labels, r->key, r->values[0]) < 0)
            return NS_ERR_INTERNAL;
    }
    return ns_labels_set(&claim->meta.labels, NS_LABEL_NODEPOOL, np->meta.name);
}

/* "ns/a,ns/b": the pods the scheduler put on the claim (indices into the plan's pods, which match the cluster's). */
static char *pod_refs(const ns_engine *e, const ns_sched_claim *c)
{
    size_t cap = 1, off = 0;
    for (size_t i = 0; i < c->n_pods; i++)
        if (c->pods[i] < e->cluster->n_pods)
            cap += 2 * NS_K8S_NAME_MAX + 3;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    buf[0] = '\0';
    for (size_t i = 0; i < c->n_pods; i++) {
        if (c->pods[i] >= e->cluster->n_pods)
            continue;
        char ref[2 * NS_K8S_NAME_MAX + 2];
        ns_engine_pod_ref(e->cluster->pods[c->pods[i]], ref, sizeof(ref));
        off += (size_t)snprintf(buf + off, cap - off, "%s%s", off ? "," : "", ref);
    }
    return buf;
}

int ns_engine_create_claim(ns_engine *e, const ns_sched_claim *c, bool launch_now, char *name_out)
{
    if (c->nodepool >= e->cluster->n_nodepools || c->n_options == 0)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "creating a nodeclaim: a scheduler claim of %zu pod(s) has no "
                       "NodePool or no launch option", c->n_pods);
    const ns_nodepool *np = e->cluster->nodepools[c->nodepool];
    const ns_nodeclass_def *def = ns_cluster_nodeclass_for(e->cluster, &np->nodeclass_ref);
    ns_nodeclaim *claim = ns_nodeclaim_new();
    if (!claim)
        return NS_ERR_INTERNAL;
    char name[NS_GENERATED_NAME_MAX + 1], hash[32];
    int rc = ns_engine_claim_name(e, np->meta.name, name, sizeof(name));
    if (rc < 0) {
        ns_nodeclaim_free(claim);
        return rc;
    }
    /* The template's annotations, then the hashes over them (Karpenter's lo.Assign order). */
    if (!(claim->meta.name = ns_strdup(name)) || claim_labels(claim, np, c) < 0 ||
        ns_labels_copy(&np->annotations, &claim->meta.annotations) < 0 ||
        ns_meta_add_finalizer(&claim->meta, NS_FINALIZER_TERMINATION) < 0 ||
        ns_taints_copy(np->taints, np->n_taints, &claim->taints) < 0 ||
        ns_taints_copy(np->startup_taints, np->n_startup_taints, &claim->startup_taints) < 0 ||
        claim_requirements(claim, c) < 0 || !(claim->nodeclass_ref.group = ns_strdup(np->nodeclass_ref.group)) ||
        !(claim->nodeclass_ref.kind = ns_strdup(np->nodeclass_ref.kind)) ||
        !(claim->nodeclass_ref.name = ns_strdup(np->nodeclass_ref.name)))
        rc = NS_ERR_INTERNAL;
    claim->n_taints = claim->taints ? np->n_taints : 0;
    claim->n_startup_taints = claim->startup_taints ? np->n_startup_taints : 0;
    if (rc == 0) {
        ns_nodepool_hash(np, hash, sizeof(hash));
        rc = ns_labels_set(&claim->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH, hash);
    }
    if (rc == 0)
        rc = ns_labels_set(&claim->meta.annotations, NS_ANNOTATION_NODEPOOL_HASH_VERSION, NS_NODEPOOL_HASH_VERSION);
    if (rc == 0)
        rc = ns_labels_set(&claim->meta.annotations, NS_ANNOTATION_MIN_VALUES_RELAXED,
                           c->min_values_relaxed ? "true" : "false");
    if (rc == 0 && def) {
        ns_nodeclass_hash(def, ns_plugin_table(e->plugin)->drift_fields, hash, sizeof(hash));
        rc = ns_labels_set(&claim->meta.annotations, NS_ANNOTATION_NODECLASS_HASH, hash);
    }
    if (rc < 0) {
        ns_nodeclaim_free(claim);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating nodeclaim %s", name);
    }
    if ((rc = ns_res_copy(&claim->requests, &c->pod_requests)) < 0 ||
        (rc = ns_res_add(&claim->requests, &c->daemon_overhead)) < 0) {
        ns_nodeclaim_free(claim);
        return rc;
    }
    claim->expire_after_ms = np->expire_after_ms;
    claim->termination_grace_period_ms = np->termination_grace_period_ms;
    if ((rc = ns_conditions_set(&claim->conditions, NS_COND_LAUNCHED, "Unknown", "NotLaunched", NULL,
                                ns_clock_now_ms())) < 0) {
        ns_nodeclaim_free(claim);
        return rc;
    }
    if ((rc = e->writes.ops->create_nodeclaim(e->writes.ctx, claim)) < 0)
        return rc;
    /* An API store lets the server pick the name from generateName "<nodepool>-": the claim now carries it. */
    snprintf(name, sizeof(name), "%s", claim->meta.name);
    char detail[256];
    snprintf(detail, sizeof(detail), "nodepool %s, %zu pod(s), %zu instance type(s) cheapest %s $%.4f/h",
             np->meta.name, c->n_pods, c->n_types, c->options[0].type->name, c->options[0].price_per_hour);
    char *pods = pod_refs(e, c);
    if (!pods)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording nodeclaim %s", name);
    rc = ns_engine_record(e, NS_DECISION_CREATED_NODECLAIM, NULL, NULL, NULL, name, pods, detail);
    free(pods);
    if (rc < 0)
        return rc;
    if (name_out)
        snprintf(name_out, NS_NAME_MAX, "%s", name);
    ns_nodeclaim *created = ns_cluster_find_nodeclaim(e->cluster, name);
    return launch_now && created ? ns_engine_launch_claim(e, created) : NS_OK;
}

int ns_engine_delete_claim(ns_engine *e, ns_nodeclaim *claim, const char *method, const char *reason)
{
    if (ns_claim_deleting(claim))
        return NS_OK;
    /* The method and reason stay on the claim so termination's decisions say why the node went. */
    ns_labels *a = &claim->meta.annotations;
    if ((method && !ns_labels_get(a, NS_ANNOTATION_DISRUPTION_METHOD) &&
         ns_labels_set(a, NS_ANNOTATION_DISRUPTION_METHOD, method) < 0) ||
        (reason && !ns_labels_get(a, NS_ANNOTATION_DISRUPTION_REASON) &&
         ns_labels_set(a, NS_ANNOTATION_DISRUPTION_REASON, reason) < 0))
        return NS_ERR_INTERNAL;
    int rc = e->writes.ops->update_nodeclaim(e->writes.ctx, claim);
    return rc < 0 ? rc : e->writes.ops->delete_nodeclaim(e->writes.ctx, claim);
}

int ns_engine_each_claim(ns_engine *e, ns_engine_claim_fn fn, void *ctx)
{
    size_t n = e->cluster->n_nodeclaims;
    char **names = calloc(n ? n : 1, sizeof(*names));
    if (!names)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory listing nodeclaims");
    int rc = NS_OK;
    for (size_t i = 0; i < n && rc == NS_OK; i++)
        if (!(names[i] = ns_strdup(e->cluster->nodeclaims[i]->meta.name)))
            rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory listing nodeclaims");
    for (size_t i = 0; i < n && rc == NS_OK; i++) {
        ns_nodeclaim *claim = ns_cluster_find_nodeclaim(e->cluster, names[i]);
        if (claim)
            rc = fn(e, claim, ctx);
    }
    ns_strv_free(names, n);
    return rc;
}
