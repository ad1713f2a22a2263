#include "simulation/sched_report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"

typedef struct totals {
    size_t scheduled, launched;
    double cost;
    int64_t cpu_req, cpu_alloc, mem_req, mem_alloc;
} totals;

static void pod_name(const ns_pod *p, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", p->meta.namespace_ ? p->meta.namespace_ : "default", p->meta.name);
}

static int64_t claim_cpu(const ns_sched_claim *c)
{
    return c->pod_requests.cpu_milli + c->daemon_overhead.cpu_milli;
}

static int64_t claim_mem(const ns_sched_claim *c)
{
    return c->pod_requests.memory_bytes + c->daemon_overhead.memory_bytes;
}

static totals compute(const ns_sched_result *r, const ns_sched_launch *l)
{
    totals t = {.scheduled = r->n_on_existing};
    for (size_t i = 0; i < r->n_claims; i++) {
        if (l[i].code != NS_OK)
            continue;
        t.launched++;
        t.scheduled += r->claims[i].n_pods;
        t.cost += l[i].price_per_hour > 0 ? l[i].price_per_hour : 0;
        t.cpu_req += claim_cpu(&r->claims[i]);
        t.mem_req += claim_mem(&r->claims[i]);
        t.cpu_alloc += l[i].allocatable.cpu_milli;
        t.mem_alloc += l[i].allocatable.memory_bytes;
    }
    return t;
}

static double ratio(int64_t a, int64_t b)
{
    return b > 0 ? (double)a / (double)b : 0.0;
}

static cJSON *unschedulable_json(const ns_cluster *cl, const ns_sched_result *r, const ns_sched_launch *l)
{
    cJSON *arr = cJSON_CreateArray();
    char name[512], reason[768];
    for (size_t i = 0; arr && i < r->n_unschedulable; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, o);
        pod_name(cl->pods[r->unschedulable[i].pod], name, sizeof(name));
        cJSON_AddStringToObject(o, "pod", name);
        cJSON_AddStringToObject(o, "reason", r->unschedulable[i].reason);
    }
    for (size_t c = 0; arr && c < r->n_claims; c++) {
        if (l[c].code == NS_OK)
            continue;
        snprintf(reason, sizeof(reason), "launching nodeclaim %s failed: %s", r->claims[c].name, l[c].error ? l[c].error : "(no message)");
        for (size_t p = 0; p < r->claims[c].n_pods; p++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddItemToArray(arr, o);
            pod_name(cl->pods[r->claims[c].pods[p]], name, sizeof(name));
            cJSON_AddStringToObject(o, "pod", name);
            cJSON_AddStringToObject(o, "reason", reason);
        }
    }
    return arr;
}

static cJSON *claim_json(const ns_cluster *cl, const ns_sched_claim *c, const ns_sched_launch *l)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", c->name);
    cJSON_AddStringToObject(o, "nodepool", cl->nodepools[c->nodepool]->meta.name);
    cJSON_AddStringToObject(o, "instance_type", l->instance_type);
    cJSON_AddStringToObject(o, "zone", l->zone);
    cJSON_AddStringToObject(o, "capacity_type", l->capacity_type);
    cJSON_AddStringToObject(o, "provider_id", l->provider_id);
    cJSON_AddNumberToObject(o, "price_per_hour", l->price_per_hour);
    cJSON *pods = cJSON_AddArrayToObject(o, "pods");
    char name[512];
    for (size_t p = 0; pods && p < c->n_pods; p++) {
        pod_name(cl->pods[c->pods[p]], name, sizeof(name));
        cJSON_AddItemToArray(pods, cJSON_CreateString(name));
    }
    cJSON_AddNumberToObject(o, "cpu_requested_milli", (double)claim_cpu(c));
    cJSON_AddNumberToObject(o, "cpu_allocatable_milli", (double)l->allocatable.cpu_milli);
    cJSON_AddNumberToObject(o, "memory_requested_bytes", (double)claim_mem(c));
    cJSON_AddNumberToObject(o, "memory_allocatable_bytes", (double)l->allocatable.memory_bytes);
    for (uint32_t e = 0; e < l->allocatable.n_ext; e++) {
        cJSON *ext = cJSON_GetObjectItem(o, "extended_allocatable");
        if (!ext)
            ext = cJSON_AddObjectToObject(o, "extended_allocatable");
        cJSON_AddNumberToObject(ext, l->allocatable.ext[e].name, (double)l->allocatable.ext[e].value);
    }
    cJSON *types = cJSON_AddArrayToObject(o, "instance_type_options");
    for (size_t i = 0; types && i < c->n_options; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = c->options[j].type == c->options[i].type;
        if (!seen)
            cJSON_AddItemToArray(types, cJSON_CreateString(c->options[i].type->name));
    }
    return o;
}

cJSON *ns_sched_report_json(const ns_cluster *cl, const ns_sched_result *r, const ns_sched_launch *l)
{
    totals t = compute(r, l);
    cJSON *root = cJSON_CreateObject();
    if (!root)
        goto nomem;
    cJSON_AddNumberToObject(root, "pods_total", (double)r->n_pending);
    cJSON_AddNumberToObject(root, "pods_scheduled", (double)t.scheduled);
    cJSON_AddNumberToObject(root, "pods_on_existing_nodes", (double)r->n_on_existing);
    cJSON_AddItemToObject(root, "pods_unschedulable", unschedulable_json(cl, r, l));
    cJSON *claims = cJSON_AddArrayToObject(root, "nodeclaims");
    cJSON *failed = cJSON_AddArrayToObject(root, "launch_failures");
    for (size_t i = 0; claims && failed && i < r->n_claims; i++) {
        if (l[i].code == NS_OK) {
            cJSON_AddItemToArray(claims, claim_json(cl, &r->claims[i], &l[i]));
            continue;
        }
        cJSON *f = cJSON_CreateObject();
        cJSON_AddItemToArray(failed, f);
        cJSON_AddStringToObject(f, "name", r->claims[i].name);
        cJSON_AddStringToObject(f, "nodepool", cl->nodepools[r->claims[i].nodepool]->meta.name);
        cJSON_AddStringToObject(f, "error", l[i].error ? l[i].error : "(no message)");
    }
    cJSON_AddNumberToObject(root, "cost_per_hour", t.cost);
    cJSON_AddNumberToObject(root, "cpu_utilization", ratio(t.cpu_req, t.cpu_alloc));
    cJSON_AddNumberToObject(root, "memory_utilization", ratio(t.mem_req, t.mem_alloc));
    /* cJSON sets no error flag on a failed add; printing the tree is the check that it is whole. */
    char *probe = cJSON_PrintUnformatted(root);
    if (!probe || !claims || !failed)
        goto nomem;
    free(probe);
    return root;
nomem:
    cJSON_Delete(root);
    NS_FAIL(NS_ERR_INTERNAL, "simulate: out of memory building the JSON summary");
    return NULL;
}

void ns_sched_report_text(FILE *out, const ns_cluster *cl, const ns_sched_result *r, const ns_sched_launch *l)
{
    totals t = compute(r, l);
    if (t.launched)
        fprintf(out, "\n%-22s %-14s %-18s %-12s %-10s %9s %5s %13s %17s\n", "NODECLAIM", "NODEPOOL", "INSTANCE TYPE",
                "ZONE", "CAPACITY", "PRICE/H", "PODS", "CPU REQ/ALLOC", "MEMORY REQ/ALLOC");
    for (size_t i = 0; i < r->n_claims; i++) {
        const ns_sched_claim *c = &r->claims[i];
        if (l[i].code != NS_OK)
            continue;
        char cpu[32], mem[32];
        snprintf(cpu, sizeof(cpu), "%" PRId64 "/%" PRId64 "m", claim_cpu(c), l[i].allocatable.cpu_milli);
        snprintf(mem, sizeof(mem), "%" PRId64 "/%" PRId64 "Mi", claim_mem(c) >> 20,
                 l[i].allocatable.memory_bytes >> 20);
        fprintf(out, "%-22s %-14s %-18s %-12s %-10s %9.4f %5zu %13s %17s\n", c->name,
                cl->nodepools[c->nodepool]->meta.name, l[i].instance_type, l[i].zone,
                l[i].capacity_type, l[i].price_per_hour, c->n_pods, cpu, mem);
    }
    size_t unsched = r->n_pending - t.scheduled;
    fprintf(out, "\n%zu pending pod(s): %zu scheduled (%zu on existing nodes), %zu unschedulable\n", r->n_pending,
            t.scheduled, r->n_on_existing, unsched);
    fprintf(out, "%zu node claim(s) launched, %.4f per hour; requests use %.1f%% of cpu and %.1f%% of memory\n",
            t.launched, t.cost, 100.0 * ratio(t.cpu_req, t.cpu_alloc), 100.0 * ratio(t.mem_req, t.mem_alloc));
    char name[512];
    for (size_t i = 0; i < r->n_unschedulable; i++) {
        pod_name(cl->pods[r->unschedulable[i].pod], name, sizeof(name));
        fprintf(out, "unschedulable %s: %s\n", name, r->unschedulable[i].reason);
    }
    for (size_t c = 0; c < r->n_claims; c++)
        for (size_t p = 0; l[c].code != NS_OK && p < r->claims[c].n_pods; p++) {
            pod_name(cl->pods[r->claims[c].pods[p]], name, sizeof(name));
            fprintf(out, "unschedulable %s: launching nodeclaim %s failed: %s\n", name, r->claims[c].name,
                    l[c].error ? l[c].error : "(no message)");
        }
}
