/* The summary of one provisioning round, read from the engine's decisions and NodeClaims after its first step. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "errors/ns_error.h"
#include "model/labels.h"
#include "simulation/round_report.h"

/* What became of one pod that was pending. */
typedef struct pod_fate {
    const char *ref;
    const char *claim;  /* the last claim created for it, or NULL */
    const char *reason; /* the scheduler's, or NULL */
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

static bool bound(const ns_engine *e, const char *ref)
{
    char ns[320];
    const char *slash = strchr(ref, '/');
    snprintf(ns, sizeof(ns), "%.*s", slash ? (int)(slash - ref) : 0, ref);
    const ns_pod *p = ns_cluster_find_pod(ns_engine_cluster(e), ns, slash ? slash + 1 : ref);
    return p && p->node_name && p->node_name[0];
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

typedef struct claim_pods {
    const char *claim;
    cJSON *list; /* NULL: count only */
    int count;
    bool ok;
} claim_pods;

static void add_pod(pod_fate *fate, void *ctx)
{
    claim_pods *cp = ctx;
    if (!fate->claim || strcmp(fate->claim, cp->claim) != 0)
        return; /* a later claim took it */
    cp->count++;
    if (cp->list && !cJSON_AddItemToArray(cp->list, cJSON_CreateString(fate->ref)))
        cp->ok = false;
}

#define ADD(ok, expr) ((ok) = (ok) && (expr) != NULL)

/* One launched claim. full: also its labels, its pods by name and the instance types it could have launched. */
static cJSON *claim_json(const ns_nodeclaim *c, const char *listed, pod_fate *f, size_t n, bool full)
{
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
    claim_pods cp = {.claim = c->meta.name, .ok = true};
    if (full)
        ADD(ok, cp.list = cJSON_AddArrayToObject(o, "pods"));
    if (ok)
        each_listed(f, n, listed, add_pod, &cp);
    ok = ok && cp.ok;
    ADD(ok, cJSON_AddNumberToObject(o, "pod_count", cp.count));
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
    for (size_t r = 0; ok && types && r < c->n_requirements; r++)
        if (strcmp(c->requirements[r].key, NS_LABEL_INSTANCE_TYPE) == 0 && c->requirements[r].op == NS_OP_IN)
            for (size_t v = 0; ok && v < c->requirements[r].n_values; v++)
                ok = cJSON_AddItemToArray(types, cJSON_CreateString(c->requirements[r].values[v]));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *unschedulable(const char *ref, const char *reason)
{
    cJSON *o = cJSON_CreateObject();
    if (o && (!cJSON_AddStringToObject(o, "pod", ref) || !cJSON_AddStringToObject(o, "reason", reason))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Claims (launched, then failed) in the order they were created. false when out of memory. */
static bool add_claims(const ns_engine *e, pod_fate *f, size_t n, bool full, cJSON *root, cJSON *claims,
                       cJSON *failed)
{
    size_t nd;
    const ns_decision *d = ns_engine_decisions(e, &nd);
    double cost = 0;
    int64_t cpu_req = 0, cpu_alloc = 0, mem_req = 0, mem_alloc = 0;
    bool ok = true;
    for (size_t i = 0; ok && i < nd; i++) {
        if (d[i].kind != NS_DECISION_CREATED_NODECLAIM)
            continue;
        const ns_nodeclaim *c = launched_claim(e, d[i].nodeclaims);
        if (c) {
            ok = cJSON_AddItemToArray(claims, claim_json(c, d[i].pods, f, n, full));
            cost += price_of(c) > 0 ? price_of(c) : 0;
            cpu_req += c->requests.cpu_milli;
            mem_req += c->requests.memory_bytes;
            cpu_alloc += c->allocatable.cpu_milli;
            mem_alloc += c->allocatable.memory_bytes;
            continue;
        }
        cJSON *o = cJSON_CreateObject();
        const ns_nodeclaim *any = ns_cluster_find_nodeclaim(ns_engine_cluster(e), d[i].nodeclaims);
        ok = cJSON_AddItemToArray(failed, o);
        ADD(ok, cJSON_AddStringToObject(o, "name", d[i].nodeclaims));
        ADD(ok, cJSON_AddStringToObject(o, "nodepool", any ? label(any, NS_LABEL_NODEPOOL) : ""));
        ADD(ok, cJSON_AddStringToObject(o, "error", launch_error(e, d[i].nodeclaims)));
    }
    ADD(ok, cJSON_AddNumberToObject(root, "cost_per_hour", cost));
    ADD(ok, cJSON_AddNumberToObject(root, "cpu_utilization",
                                    cpu_alloc > 0 ? (double)cpu_req / (double)cpu_alloc : 0.0));
    ADD(ok, cJSON_AddNumberToObject(root, "memory_utilization",
                                    mem_alloc > 0 ? (double)mem_req / (double)mem_alloc : 0.0));
    return ok;
}

int ns_report_round(const ns_engine *e, char *const *pending, size_t n_pending, bool full, cJSON **doc)
{
    *doc = NULL;
    pod_fate *f = calloc(n_pending ? n_pending : 1, sizeof(*f));
    cJSON *root = cJSON_CreateObject();
    if (!f || !root)
        goto nomem;
    for (size_t p = 0; p < n_pending; p++)
        f[p].ref = pending[p];
    fates(e, f, n_pending);
    size_t on_existing = 0, scheduled = 0;
    cJSON *unsched = cJSON_AddArrayToObject(root, "pods_unschedulable");
    bool ok = unsched != NULL;
    /* In the order the pods were pending, as the document always listed them. */
    for (size_t i = 0; ok && i < n_pending; i++) {
        const pod_fate *fate = fate_of(f, n_pending, pending[i], strlen(pending[i]));
        char why[1400];
        if (bound(e, fate->ref)) {
            on_existing++;
            scheduled++;
        } else if (fate->claim && launched_claim(e, fate->claim)) {
            scheduled++;
        } else if (fate->claim) {
            snprintf(why, sizeof(why), "launching nodeclaim %s failed: %s", fate->claim,
                     launch_error(e, fate->claim));
            ok = cJSON_AddItemToArray(unsched, unschedulable(fate->ref, why));
        } else {
            ok = cJSON_AddItemToArray(unsched, unschedulable(fate->ref, fate->reason ? fate->reason : "not placed"));
        }
    }
    ADD(ok, cJSON_AddNumberToObject(root, "pods_total", (double)n_pending));
    ADD(ok, cJSON_AddNumberToObject(root, "pods_scheduled", (double)scheduled));
    ADD(ok, cJSON_AddNumberToObject(root, "pods_on_existing_nodes", (double)on_existing));
    cJSON *claims = NULL, *failed = NULL;
    ADD(ok, claims = cJSON_AddArrayToObject(root, "nodeclaims"));
    ADD(ok, failed = cJSON_AddArrayToObject(root, "launch_failures"));
    if (!ok || !add_claims(e, f, n_pending, full, root, claims, failed))
        goto nomem;
    free(f);
    *doc = root;
    return NS_OK;
nomem:
    free(f);
    cJSON_Delete(root);
    return NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory building the round's summary");
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

int ns_report_round_text(FILE *out, const cJSON *doc)
{
    const cJSON *claims = cJSON_GetObjectItemCaseSensitive(doc, "nodeclaims"), *c;
    if (cJSON_GetArraySize(claims) > 0)
        fprintf(out, "\n%-22s %-14s %-18s %-12s %-10s %9s %5s %13s %17s\n", "NODECLAIM", "NODEPOOL", "INSTANCE TYPE",
                "ZONE", "CAPACITY", "PRICE/H", "PODS", "CPU REQ/ALLOC", "MEMORY REQ/ALLOC");
    cJSON_ArrayForEach(c, claims)
    {
        char cpu[48], mem[48];
        snprintf(cpu, sizeof(cpu), "%.0f/%.0fm", num(c, "cpu_requested_milli"), num(c, "cpu_allocatable_milli"));
        snprintf(mem, sizeof(mem), "%" PRId64 "/%" PRId64 "Mi", (int64_t)num(c, "memory_requested_bytes") >> 20,
                 (int64_t)num(c, "memory_allocatable_bytes") >> 20);
        fprintf(out, "%-22s %-14s %-18s %-12s %-10s %9.4f %5d %13s %17s\n", str(c, "name"), str(c, "nodepool"),
                str(c, "instance_type"), str(c, "zone"), str(c, "capacity_type"), num(c, "price_per_hour"),
                (int)num(c, "pod_count"), cpu, mem);
    }
    const cJSON *unsched = cJSON_GetObjectItemCaseSensitive(doc, "pods_unschedulable"), *u;
    fprintf(out, "\n%.0f pending pod(s): %.0f scheduled (%.0f on existing nodes), %d unschedulable\n",
            num(doc, "pods_total"), num(doc, "pods_scheduled"), num(doc, "pods_on_existing_nodes"),
            cJSON_GetArraySize(unsched));
    fprintf(out, "%d node claim(s) launched, %.4f per hour; requests use %.1f%% of cpu and %.1f%% of memory\n",
            cJSON_GetArraySize(claims), num(doc, "cost_per_hour"), 100.0 * num(doc, "cpu_utilization"),
            100.0 * num(doc, "memory_utilization"));
    cJSON_ArrayForEach(u, unsched) fprintf(out, "unschedulable %s: %s\n", str(u, "pod"), str(u, "reason"));
    return ferror(out) ? NS_FAIL(NS_ERR_INTERNAL, "simulate: writing the summary failed") : NS_OK;
}
