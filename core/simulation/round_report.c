/* The summary of one provisioning round, read from the engine's decisions and NodeClaims after its first step. */
#include <inttypes.h>
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

/* True when the comma-separated list holds ref. */
static bool list_has(const char *list, const char *ref)
{
    size_t n = strlen(ref);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, ref, n) == 0)
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

static void fates(const ns_engine *e, pod_fate *f, size_t n)
{
    size_t nd;
    const ns_decision *d = ns_engine_decisions(e, &nd);
    for (size_t i = 0; i < nd; i++)
        for (size_t p = 0; p < n; p++) {
            if (d[i].kind == NS_DECISION_CREATED_NODECLAIM && list_has(d[i].pods, f[p].ref))
                f[p].claim = d[i].nodeclaims;
            else if (d[i].kind == NS_DECISION_UNSCHEDULABLE_POD && strcmp(d[i].pods, f[p].ref) == 0)
                f[p].reason = d[i].reason;
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

static cJSON *claim_json(const ns_nodeclaim *c, const pod_fate *f, size_t n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", c->meta.name);
    cJSON_AddStringToObject(o, "nodepool", label(c, NS_LABEL_NODEPOOL));
    cJSON_AddStringToObject(o, "instance_type", label(c, NS_LABEL_INSTANCE_TYPE));
    cJSON_AddStringToObject(o, "zone", label(c, NS_LABEL_ZONE));
    cJSON_AddStringToObject(o, "capacity_type", label(c, NS_LABEL_CAPACITY_TYPE));
    cJSON_AddStringToObject(o, "provider_id", c->provider_id);
    cJSON_AddNumberToObject(o, "price_per_hour", price_of(c));
    cJSON *pods = cJSON_AddArrayToObject(o, "pods");
    for (size_t p = 0; pods && p < n; p++)
        if (f[p].claim && strcmp(f[p].claim, c->meta.name) == 0)
            cJSON_AddItemToArray(pods, cJSON_CreateString(f[p].ref));
    cJSON_AddNumberToObject(o, "cpu_requested_milli", (double)c->requests.cpu_milli);
    cJSON_AddNumberToObject(o, "cpu_allocatable_milli", (double)c->allocatable.cpu_milli);
    cJSON_AddNumberToObject(o, "memory_requested_bytes", (double)c->requests.memory_bytes);
    cJSON_AddNumberToObject(o, "memory_allocatable_bytes", (double)c->allocatable.memory_bytes);
    for (uint32_t x = 0; x < c->allocatable.n_ext; x++) {
        cJSON *ext = cJSON_GetObjectItem(o, "extended_allocatable");
        if (!ext)
            ext = cJSON_AddObjectToObject(o, "extended_allocatable");
        cJSON_AddNumberToObject(ext, c->allocatable.ext[x].name, (double)c->allocatable.ext[x].value);
    }
    cJSON *types = cJSON_AddArrayToObject(o, "instance_type_options");
    for (size_t r = 0; types && r < c->n_requirements; r++)
        if (strcmp(c->requirements[r].key, NS_LABEL_INSTANCE_TYPE) == 0 && c->requirements[r].op == NS_OP_IN)
            for (size_t v = 0; v < c->requirements[r].n_values; v++)
                cJSON_AddItemToArray(types, cJSON_CreateString(c->requirements[r].values[v]));
    return o;
}

static cJSON *unschedulable(const char *ref, const char *reason)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "pod", ref);
    cJSON_AddStringToObject(o, "reason", reason);
    return o;
}

/* Claims (launched, then failed) in the order they were created. */
static void add_claims(const ns_engine *e, const pod_fate *f, size_t n, cJSON *root, cJSON *claims, cJSON *failed)
{
    size_t nd;
    const ns_decision *d = ns_engine_decisions(e, &nd);
    double cost = 0;
    int64_t cpu_req = 0, cpu_alloc = 0, mem_req = 0, mem_alloc = 0;
    for (size_t i = 0; i < nd; i++) {
        if (d[i].kind != NS_DECISION_CREATED_NODECLAIM)
            continue;
        const ns_nodeclaim *c = launched_claim(e, d[i].nodeclaims);
        if (c) {
            cJSON_AddItemToArray(claims, claim_json(c, f, n));
            cost += price_of(c) > 0 ? price_of(c) : 0;
            cpu_req += c->requests.cpu_milli;
            mem_req += c->requests.memory_bytes;
            cpu_alloc += c->allocatable.cpu_milli;
            mem_alloc += c->allocatable.memory_bytes;
            continue;
        }
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(failed, o);
        cJSON_AddStringToObject(o, "name", d[i].nodeclaims);
        const ns_nodeclaim *any = ns_cluster_find_nodeclaim(ns_engine_cluster(e), d[i].nodeclaims);
        cJSON_AddStringToObject(o, "nodepool", any ? label(any, NS_LABEL_NODEPOOL) : "");
        cJSON_AddStringToObject(o, "error", launch_error(e, d[i].nodeclaims));
    }
    cJSON_AddNumberToObject(root, "cost_per_hour", cost);
    cJSON_AddNumberToObject(root, "cpu_utilization", cpu_alloc > 0 ? (double)cpu_req / (double)cpu_alloc : 0.0);
    cJSON_AddNumberToObject(root, "memory_utilization", mem_alloc > 0 ? (double)mem_req / (double)mem_alloc : 0.0);
}

int ns_report_round(const ns_engine *e, char *const *pending, size_t n_pending, cJSON **doc)
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
    for (size_t p = 0; unsched && p < n_pending; p++) {
        char why[1400];
        if (bound(e, f[p].ref)) {
            on_existing++;
            scheduled++;
        } else if (f[p].claim && launched_claim(e, f[p].claim)) {
            scheduled++;
        } else if (f[p].claim) {
            snprintf(why, sizeof(why), "launching nodeclaim %s failed: %s", f[p].claim, launch_error(e, f[p].claim));
            cJSON_AddItemToArray(unsched, unschedulable(f[p].ref, why));
        } else {
            cJSON_AddItemToArray(unsched, unschedulable(f[p].ref, f[p].reason ? f[p].reason : "not placed"));
        }
    }
    cJSON_AddNumberToObject(root, "pods_total", (double)n_pending);
    cJSON_AddNumberToObject(root, "pods_scheduled", (double)scheduled);
    cJSON_AddNumberToObject(root, "pods_on_existing_nodes", (double)on_existing);
    cJSON *claims = cJSON_AddArrayToObject(root, "nodeclaims");
    cJSON *failed = cJSON_AddArrayToObject(root, "launch_failures");
    if (!claims || !failed)
        goto nomem;
    add_claims(e, f, n_pending, root, claims, failed);
    /* cJSON sets no error flag on a failed add; printing the tree is the check that it is whole. */
    char *probe = cJSON_PrintUnformatted(root);
    if (!probe)
        goto nomem;
    free(probe);
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
                cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c, "pods")), cpu, mem);
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
