/* The summary of one provisioning round, read from the engine's decisions and NodeClaims after its first step. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "errors/ns_error.h"
#include "model/labels.h"
#include "model/model_json.h"
#include "model/model_util.h"
#include "simulation/round_report.h"

/* What became of one pod that was pending. */
typedef struct pod_fate {
    const char *ref;
    const char *claim;  /* the last claim created for it, or NULL */
    const char *reason; /* the scheduler's, or NULL */
    const char *node;   /* the existing node it was bound to (the engine's), or NULL */
} pod_fate;

static int by_ref(const void *a, const void *b)
{
    return strcmp(((const pod_fate *)a)->ref, ((const pod_fate *)b)->ref);
}

/* The fate of pod ref (the fates are sorted by ref), or NULL for a pod that was not pending. */
static pod_fate *fate_of(pod_fate *f, size_t n, const char *ref, size_t len)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strncmp(f[mid].ref, ref, len);
        if (c == 0 && f[mid].ref[len] != '\0')
            c = 1;
        if (c == 0)
            return &f[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Calls fn for each pod of a decision's comma-separated list that was pending. */
static void each_listed(pod_fate *f, size_t n, const char *list, void (*fn)(pod_fate *, void *), void *ctx)
{
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        pod_fate *fate = fate_of(f, n, p, len);
        if (fate)
            fn(fate, ctx);
        p = end ? end + 1 : NULL;
    }
}

static void set_claim(pod_fate *fate, void *claim)
{
    fate->claim = claim;
}

/* The fates sorted by ref; each decision's pods found by search, so the cost grows with pods x log(pods), not with
 * pods x decisions. */
static void fates(const ns_engine *e, pod_fate *f, size_t n)
{
    size_t nd;
    const ns_decision *d = ns_engine_decisions(e, &nd);
    qsort(f, n, sizeof(*f), by_ref);
    for (size_t i = 0; i < nd; i++) {
        if (d[i].kind == NS_DECISION_CREATED_NODECLAIM) {
            each_listed(f, n, d[i].pods, set_claim, d[i].nodeclaims);
        } else if (d[i].kind == NS_DECISION_UNSCHEDULABLE_POD || d[i].kind == NS_DECISION_HELD_BY_LIMITS) {
            pod_fate *fate = fate_of(f, n, d[i].pods, strlen(d[i].pods));
            if (fate)
                fate->reason = d[i].reason;
        }
    }
}

/* The provider's message of the claim's last failed launch. */
static const char *launch_error(const ns_engine *e, const char *claim)
{
    size_t nd;
    const ns_decision *d = ns_engine_decisions(e, &nd);
    const char *why = "the node claim was not launched";
    for (size_t i = 0; i < nd; i++)
        if (d[i].kind == NS_DECISION_LAUNCH_FAILED && strcmp(d[i].nodeclaims, claim) == 0 && d[i].reason[0])
            why = d[i].reason;
    return why;
}

static const ns_nodeclaim *launched_claim(const ns_engine *e, const char *name)
{
    const ns_nodeclaim *c = ns_cluster_find_nodeclaim(ns_engine_cluster(e), name);
    return c && c->provider_id && c->provider_id[0] ? c : NULL;
}

/* The node the pod is bound to, or NULL. */
static const char *bound(const ns_engine *e, const char *ref)
{
    char ns[320];
    const char *slash = strchr(ref, '/');
    snprintf(ns, sizeof(ns), "%.*s", slash ? (int)(slash - ref) : 0, ref);
    const ns_pod *p = ns_cluster_find_pod(ns_engine_cluster(e), ns, slash ? slash + 1 : ref);
    return p && p->node_name && p->node_name[0] ? p->node_name : NULL;
}

static double price_of(const ns_nodeclaim *c)
{
    const char *price = ns_labels_get(&c->meta.annotations, NS_ANNOTATION_PRICE);
    return price ? strtod(price, NULL) : -1;
}

static const char *label(const ns_nodeclaim *c, const char *key)
{
    const char *v = ns_labels_get(&c->meta.labels, key);
    return v ? v : "";
}

/* A launched claim: its NodeClaim, the pods its "created nodeclaim" decision listed and how many of them it kept. */
typedef struct round_claim {
    const ns_nodeclaim *claim;
    const char *listed;
    int pod_count;
} round_claim;

/* A claim that was not launched, and the provider's last message. */
typedef struct round_failure {
    const char *name;
    const char *nodepool;
    const char *error;
} round_failure;

typedef struct round_unsched {
    const char *ref;
    char *reason; /* owned */
} round_unsched;

struct ns_round_report {
    char **pending; /* owned: the pods pending before the step, in that order */
    size_t n_pending;
    pod_fate *fates; /* the same pods sorted by ref */
    size_t scheduled, on_existing;
    round_claim *claims; /* launched, in the order they were created */
    size_t n_claims;
    round_failure *failures; /* not launched, in the order they were created */
    size_t n_failures;
    round_unsched *unsched; /* in the order the pods were pending */
    size_t n_unsched, cap_unsched;
    double cost;
    int64_t cpu_req, cpu_alloc, mem_req, mem_alloc;
};

typedef struct claim_pods {
    const char *claim;
    cJSON *list; /* NULL: count only */
    int count;
    bool ok;
} claim_pods;

/* Counts (and with a list, names) the pods of a claim's decision that the claim kept. */
static void add_pod(pod_fate *fate, void *ctx)
{
    claim_pods *cp = ctx;
    if (!fate->claim || strcmp(fate->claim, cp->claim) != 0)
        return; /* a later claim took it */
    cp->count++;
    if (cp->list && !cJSON_AddItemToArray(cp->list, cJSON_CreateString(fate->ref)))
        cp->ok = false;
}

static bool add_unsched(ns_round_report *r, const char *ref, const char *reason)
{
    if (ns_grow((void **)&r->unsched, &r->cap_unsched, r->n_unsched + 1, sizeof(*r->unsched)) < 0)
        return false;
    round_unsched *u = &r->unsched[r->n_unsched];
    if (!(u->reason = ns_strdup(reason)))
        return false;
    u->ref = ref;
    r->n_unsched++;
    return true;
}

/* Each pending pod is bound, on a launched claim, or unschedulable (with the launch's error when its claim failed). */
static bool sort_pods(const ns_engine *e, ns_round_report *r)
{
    for (size_t i = 0; i < r->n_pending; i++) {
        pod_fate *fate = fate_of(r->fates, r->n_pending, r->pending[i], strlen(r->pending[i]));
        char why[1400];
        if ((fate->node = bound(e, fate->ref))) {
            r->on_existing++;
            r->scheduled++;
        } else if (fate->claim && launched_claim(e, fate->claim)) {
            r->scheduled++;
        } else if (fate->claim) {
            snprintf(why, sizeof(why), "launching nodeclaim %s failed: %s", fate->claim,
                     launch_error(e, fate->claim));
            if (!add_unsched(r, fate->ref, why))
                return false;
        } else if (!add_unsched(r, fate->ref, fate->reason ? fate->reason : "not placed")) {
            return false;
        }
    }
    return true;
}

/* Claims (launched, then failed) in the order they were created, and the launched ones' totals. */
static bool sort_claims(const ns_engine *e, ns_round_report *r)
{
    size_t nd, created = 0;
    const ns_decision *d = ns_engine_decisions(e, &nd);
    for (size_t i = 0; i < nd; i++)
        created += d[i].kind == NS_DECISION_CREATED_NODECLAIM;
    r->claims = calloc(created ? created : 1, sizeof(*r->claims));
    r->failures = calloc(created ? created : 1, sizeof(*r->failures));
    if (!r->claims || !r->failures)
        return false;
    for (size_t i = 0; i < nd; i++) {
        if (d[i].kind != NS_DECISION_CREATED_NODECLAIM)
            continue;
        const ns_nodeclaim *c = launched_claim(e, d[i].nodeclaims);
        if (!c) {
            const ns_nodeclaim *any = ns_cluster_find_nodeclaim(ns_engine_cluster(e), d[i].nodeclaims);
            r->failures[r->n_failures++] = (round_failure){d[i].nodeclaims, any ? label(any, NS_LABEL_NODEPOOL) : "",
                                                           launch_error(e, d[i].nodeclaims)};
            continue;
        }
        claim_pods cp = {.claim = c->meta.name, .ok = true};
        each_listed(r->fates, r->n_pending, d[i].pods, add_pod, &cp);
        r->claims[r->n_claims++] = (round_claim){c, d[i].pods, cp.count};
        r->cost += price_of(c) > 0 ? price_of(c) : 0;
        r->cpu_req += c->requests.cpu_milli;
        r->mem_req += c->requests.memory_bytes;
        r->cpu_alloc += c->allocatable.cpu_milli;
        r->mem_alloc += c->allocatable.memory_bytes;
    }
    return true;
}

int ns_report_round(const ns_engine *e, char **pending, size_t n_pending, ns_round_report **out)
{
    *out = NULL;
    ns_round_report *r = calloc(1, sizeof(*r));
    if (!r) {
        ns_strv_free(pending, n_pending);
        return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory building the round's summary");
    }
    r->pending = pending;
    r->n_pending = n_pending;
    if (!(r->fates = calloc(n_pending ? n_pending : 1, sizeof(*r->fates))))
        goto nomem;
    for (size_t p = 0; p < n_pending; p++)
        r->fates[p].ref = pending[p];
    fates(e, r->fates, n_pending);
    if (!sort_pods(e, r) || !sort_claims(e, r))
        goto nomem;
    *out = r;
    return NS_OK;
nomem:
    ns_round_report_free(r);
    return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory building the round's summary");
}

void ns_round_report_free(ns_round_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_unsched; i++)
        free(r->unsched[i].reason);
    free(r->unsched);
    free(r->claims);
    free(r->failures);
    free(r->fates);
    ns_strv_free(r->pending, r->n_pending);
    free(r);
}

bool ns_round_report_launch_failed(const ns_round_report *r)
{
    return r->n_failures > 0;
}

#define ADD(ok, expr) ((ok) = (ok) && (expr) != NULL)

/* One launched claim. full: also its labels, its pods by name and the instance types it could have launched. */
static cJSON *claim_json(const ns_round_report *r, const round_claim *rc, bool full)
{
    const ns_nodeclaim *c = rc->claim;
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    ADD(ok, cJSON_AddStringToObject(o, "name", c->meta.name));
    ADD(ok, cJSON_AddStringToObject(o, "nodepool", label(c, NS_LABEL_NODEPOOL)));
    ADD(ok, cJSON_AddStringToObject(o, "instance_type", label(c, NS_LABEL_INSTANCE_TYPE)));
    ADD(ok, cJSON_AddStringToObject(o, "zone", label(c, NS_LABEL_ZONE)));
    ADD(ok, cJSON_AddStringToObject(o, "capacity_type", label(c, NS_LABEL_CAPACITY_TYPE)));
    ADD(ok, cJSON_AddStringToObject(o, "provider_id", c->provider_id));
    ADD(ok, cJSON_AddNumberToObject(o, "price_per_hour", price_of(c)));
    cJSON *labels = NULL;
    if (full)
        ADD(ok, labels = cJSON_AddObjectToObject(o, "labels"));
    for (size_t i = 0; ok && labels && i < c->meta.labels.n; i++)
        ADD(ok, cJSON_AddStringToObject(labels, c->meta.labels.items[i].key, c->meta.labels.items[i].value));
    /* What Karpenter writes on the NodeClaim besides its labels, in the NodeClaim's own shapes. */
    if (full)
        ok = ok && cJSON_AddItemToObject(o, "annotations", ns_model_labels_json(&c->meta.annotations)) &&
             cJSON_AddItemToObject(o, "taints", ns_model_taints_json(c->taints, c->n_taints)) &&
             cJSON_AddItemToObject(o, "startup_taints", ns_model_taints_json(c->startup_taints, c->n_startup_taints)) &&
             cJSON_AddItemToObject(o, "requirements", ns_model_requirements_json(c->requirements, c->n_requirements));
    claim_pods cp = {.claim = c->meta.name, .ok = true};
    if (full)
        ADD(ok, cp.list = cJSON_AddArrayToObject(o, "pods"));
    if (ok && cp.list)
        each_listed(r->fates, r->n_pending, rc->listed, add_pod, &cp);
    ok = ok && cp.ok;
    ADD(ok, cJSON_AddNumberToObject(o, "pod_count", rc->pod_count));
    ADD(ok, cJSON_AddNumberToObject(o, "cpu_requested_milli", (double)c->requests.cpu_milli));
    ADD(ok, cJSON_AddNumberToObject(o, "cpu_allocatable_milli", (double)c->allocatable.cpu_milli));
    ADD(ok, cJSON_AddNumberToObject(o, "memory_requested_bytes", (double)c->requests.memory_bytes));
    ADD(ok, cJSON_AddNumberToObject(o, "memory_allocatable_bytes", (double)c->allocatable.memory_bytes));
    cJSON *ext = NULL;
    if (c->allocatable.n_ext > 0)
        ADD(ok, ext = cJSON_AddObjectToObject(o, "extended_allocatable"));
    for (uint32_t x = 0; ok && x < c->allocatable.n_ext; x++)
        ADD(ok, cJSON_AddNumberToObject(ext, c->allocatable.ext[x].name, (double)c->allocatable.ext[x].value));
    cJSON *types = NULL;
    if (full)
        ADD(ok, types = cJSON_AddArrayToObject(o, "instance_type_options"));
    for (size_t q = 0; ok && types && q < c->n_requirements; q++)
        if (strcmp(c->requirements[q].key, NS_LABEL_INSTANCE_TYPE) == 0 && c->requirements[q].op == NS_OP_IN)
            for (size_t v = 0; ok && v < c->requirements[q].n_values; v++)
                ok = cJSON_AddItemToArray(types, cJSON_CreateString(c->requirements[q].values[v]));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *pair(const char *k1, const char *v1, const char *k2, const char *v2, const char *k3, const char *v3)
{
    cJSON *o = cJSON_CreateObject();
    if (o && (!cJSON_AddStringToObject(o, k1, v1) || !cJSON_AddStringToObject(o, k2, v2) ||
              (k3 && !cJSON_AddStringToObject(o, k3, v3)))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static double ratio(int64_t part, int64_t whole)
{
    return whole > 0 ? (double)part / (double)whole : 0.0;
}

int ns_round_report_json(const ns_round_report *r, bool full, cJSON **doc)
{
    cJSON *root = cJSON_CreateObject(), *unsched = NULL, *claims = NULL, *failed = NULL;
    bool ok = root != NULL;
    ADD(ok, unsched = cJSON_AddArrayToObject(root, "pods_unschedulable"));
    for (size_t i = 0; ok && i < r->n_unsched; i++)
        ok = cJSON_AddItemToArray(unsched, pair("pod", r->unsched[i].ref, "reason", r->unsched[i].reason, NULL, NULL));
    ADD(ok, cJSON_AddNumberToObject(root, "pods_total", (double)r->n_pending));
    ADD(ok, cJSON_AddNumberToObject(root, "pods_scheduled", (double)r->scheduled));
    ADD(ok, cJSON_AddNumberToObject(root, "pods_on_existing_nodes", (double)r->on_existing));
    cJSON *existing = NULL;
    if (full)
        ADD(ok, existing = cJSON_AddArrayToObject(root, "existing_node_placements"));
    for (size_t i = 0; ok && existing && i < r->n_pending; i++) {
        const pod_fate *f = fate_of(r->fates, r->n_pending, r->pending[i], strlen(r->pending[i]));
        if (f->node)
            ok = cJSON_AddItemToArray(existing, pair("pod", f->ref, "node", f->node, NULL, NULL));
    }
    ADD(ok, claims = cJSON_AddArrayToObject(root, "nodeclaims"));
    for (size_t i = 0; ok && i < r->n_claims; i++)
        ok = cJSON_AddItemToArray(claims, claim_json(r, &r->claims[i], full));
    ADD(ok, failed = cJSON_AddArrayToObject(root, "launch_failures"));
    for (size_t i = 0; ok && i < r->n_failures; i++)
        ok = cJSON_AddItemToArray(failed, pair("name", r->failures[i].name, "nodepool", r->failures[i].nodepool,
                                               "error", r->failures[i].error));
    ADD(ok, cJSON_AddNumberToObject(root, "cost_per_hour", r->cost));
    ADD(ok, cJSON_AddNumberToObject(root, "cpu_utilization", ratio(r->cpu_req, r->cpu_alloc)));
    ADD(ok, cJSON_AddNumberToObject(root, "memory_utilization", ratio(r->mem_req, r->mem_alloc)));
    if (!ok) {
        cJSON_Delete(root);
        *doc = NULL;
        return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory building the round's JSON document");
    }
    *doc = root;
    return NS_OK;
}

int ns_round_report_text(FILE *out, const ns_round_report *r)
{
    if (r->n_claims > 0)
        fprintf(out, "\n%-22s %-14s %-18s %-12s %-10s %9s %5s %13s %17s\n", "NODECLAIM", "NODEPOOL", "INSTANCE TYPE",
                "ZONE", "CAPACITY", "PRICE/H", "PODS", "CPU REQ/ALLOC", "MEMORY REQ/ALLOC");
    for (size_t i = 0; i < r->n_claims; i++) {
        const ns_nodeclaim *c = r->claims[i].claim;
        char cpu[48], mem[48];
        snprintf(cpu, sizeof(cpu), "%" PRId64 "/%" PRId64 "m", c->requests.cpu_milli, c->allocatable.cpu_milli);
        snprintf(mem, sizeof(mem), "%" PRId64 "/%" PRId64 "Mi", c->requests.memory_bytes >> 20,
                 c->allocatable.memory_bytes >> 20);
        fprintf(out, "%-22s %-14s %-18s %-12s %-10s %9.4f %5d %13s %17s\n", c->meta.name, label(c, NS_LABEL_NODEPOOL),
                label(c, NS_LABEL_INSTANCE_TYPE), label(c, NS_LABEL_ZONE), label(c, NS_LABEL_CAPACITY_TYPE),
                price_of(c), r->claims[i].pod_count, cpu, mem);
    }
    fprintf(out, "\n%zu pending pod(s): %zu scheduled (%zu on existing nodes), %zu unschedulable\n", r->n_pending,
            r->scheduled, r->on_existing, r->n_unsched);
    fprintf(out, "%zu node claim(s) launched, %.4f per hour; requests use %.1f%% of cpu and %.1f%% of memory\n",
            r->n_claims, r->cost, 100.0 * ratio(r->cpu_req, r->cpu_alloc), 100.0 * ratio(r->mem_req, r->mem_alloc));
    for (size_t i = 0; i < r->n_unsched; i++)
        fprintf(out, "unschedulable %s: %s\n", r->unsched[i].ref, r->unsched[i].reason);
    return ferror(out) ? NS_FAIL(NS_ERR_INTERNAL, "simulate: writing the summary failed") : NS_OK;
}
