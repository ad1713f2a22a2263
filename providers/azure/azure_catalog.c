/* list_instance_types: the location's Resource SKUs (cached for catalog_ttl), filtered to what the subscription may
 * use, with AKS's labels, reservations and the offerings per zone and priority. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "azure_arm.h"
#include "azure_provider.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MIB (1024 * 1024)
#define VM_MEMORY_OVERHEAD 0.075

void az_catalog_free(az_catalog *c)
{
    if (!c)
        return;
    free(c->skus);
    free(c);
}

typedef struct collect {
    az_state *s;
    az_catalog *c;
    size_t cap;
} collect;

static int on_sku(void *ctx, const ns_json *rec)
{
    collect *k = ctx;
    az_sku sku;
    int rc = az_sku_parse(k->s->host, k->s->ctx, rec, k->s->location, &sku);
    if (rc <= 0)
        return rc;
    if (k->c->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 64;
        az_sku *grown = realloc(k->c->skus, cap * sizeof(*grown));
        if (!grown)
            return NS_ERROR(k->s->host, k->s->ctx, NS_ERR_INTERNAL, "out of memory reading Resource SKUs");
        k->c->skus = grown;
        k->cap = cap;
    }
    k->c->skus[k->c->n++] = sku;
    return NS_OK;
}

/* The cache's fetch: owner is the provider state. */
static int fetch(void *owner, prov_snapshot **out)
{
    az_state *s = owner;
    char path[400];
    snprintf(path, sizeof(path), "/subscriptions/%s/providers/Microsoft.Compute/skus?$filter=location%%20eq%%20%%27%s%%27",
             s->subscription, s->location);
    collect k = {s, calloc(1, sizeof(az_catalog)), 0};
    if (!k.c)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory reading Resource SKUs");
    int rc = az_arm_list(s, path, AZ_API_SKUS, "list Resource SKUs", on_sku, &k);
    if (rc < 0) {
        az_catalog_free(k.c);
        return rc;
    }
    if (k.c->n == 0) {
        az_catalog_free(k.c);
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "Resource SKUs: the subscription may use no VM size "
                        "in %s", s->location);
    }
    *out = &k.c->snap;
    return NS_OK;
}

static void free_snapshot(prov_snapshot *snap)
{
    az_catalog_free(prov_snapshot_of(snap, az_catalog, snap));
}

void az_catalog_cache_init(az_state *s, int64_t ttl_ms)
{
    s->catalogs = (prov_snapshot_cache){&s->lock, NULL, ttl_ms, fetch, free_snapshot, s, s->host, s->ctx};
}

int az_catalog_acquire(az_state *s, az_catalog **out)
{
    prov_snapshot *snap = NULL;
    int rc = prov_snapshot_acquire(&s->catalogs, &snap);
    if (rc == NS_OK)
        *out = prov_snapshot_of(snap, az_catalog, snap);
    return rc;
}

void az_catalog_release(az_state *s, az_catalog *c)
{
    prov_snapshot_release(&s->catalogs, c ? &c->snap : NULL);
}

const az_catalog *az_catalog_current(const az_state *s)
{
    return s->catalogs.current ? prov_snapshot_of(s->catalogs.current, az_catalog, snap) : NULL;
}

const az_sku *az_catalog_find(const az_catalog *c, const char *name)
{
    for (size_t i = 0; c && name && i < c->n; i++)
        if (strcmp(c->skus[i].name, name) == 0)
            return &c->skus[i];
    return NULL;
}

/* AKS's kube-reserved CPU: 60m for the first core, 40m for the second, 20m each for the next two, 10m beyond. */
static int64_t reserved_cpu_milli(int cores)
{
    int64_t m = 0;
    for (int i = 1; i <= cores; i++)
        m += i == 1 ? 60 : i == 2 ? 40 : i <= 4 ? 20 : 10;
    return m;
}

/* AKS's regressive kube-reserved memory: 25 % of the first 4 GiB, 20 % of the next 4, 10 % of the next 8, 6 % of
 * the next 112, 2 % above 128 GiB. */
static int64_t reserved_memory(double gib)
{
    static const double STEPS[][2] = {{4, 0.25}, {4, 0.20}, {8, 0.10}, {112, 0.06}, {1e9, 0.02}};
    double left = gib, r = 0;
    for (size_t i = 0; i < 5 && left > 0; i++) {
        double part = left < STEPS[i][0] ? left : STEPS[i][0];
        r += part * STEPS[i][1];
        left -= part;
    }
    return (int64_t)(r * GIB);
}

static int default_max_pods(const az_state *s)
{
    if (strcmp(s->network_plugin, "azure") == 0)
        return strcmp(s->network_plugin_mode, "overlay") == 0 ? 250 : 30;
    return strcmp(s->network_plugin, "none") == 0 ? 250 : 110;
}

static void capacity_of(const az_state *s, const az_sku *k, const az_nodeclass *nc, ns_resources *cap)
{
    memset(cap, 0, sizeof(*cap));
    cap->cpu_milli = (int64_t)k->vcpus * 1000;
    cap->memory_bytes = (int64_t)(k->memory_gib * GIB * (1 - VM_MEMORY_OVERHEAD));
    cap->pods = nc->max_pods ? nc->max_pods : default_max_pods(s);
    cap->ephemeral_storage_bytes = (int64_t)nc->os_disk_gb * (int64_t)GIB;
    if (k->gpus > 0 && k->gpu_manufacturer[0]) {
        cap->n_extended = 1;
        snprintf(cap->extended[0].name, sizeof(cap->extended[0].name), "%s",
                 strcmp(k->gpu_manufacturer, "amd") == 0 ? "amd.com/gpu" : "nvidia.com/gpu");
        cap->extended[0].value = k->gpus;
    }
}

static void reservations(const az_sku *k, const ns_resources *cap, ns_resources *kube, ns_resources *evict)
{
    memset(kube, 0, sizeof(*kube));
    memset(evict, 0, sizeof(*evict));
    kube->cpu_milli = reserved_cpu_milli(k->vcpus);
    kube->memory_bytes = reserved_memory(k->memory_gib);
    evict->memory_bytes = 750LL * MIB;
    evict->ephemeral_storage_bytes = cap->ephemeral_storage_bytes / 10;
}

void az_sku_allocatable(const az_state *s, const az_sku *k, const az_nodeclass *nc, ns_resources *out)
{
    ns_resources kube, evict;
    capacity_of(s, k, nc, out);
    reservations(k, out, &kube, &evict);
    out->cpu_milli -= kube.cpu_milli;
    out->memory_bytes -= kube.memory_bytes + evict.memory_bytes;
    out->ephemeral_storage_bytes -= evict.ephemeral_storage_bytes;
}

typedef struct type_view {
    char values[24][128];
    ns_label labels[24];
    size_t n;
} type_view;

static void label(type_view *v, const char *key, const char *unused, const char *value)
{
    (void)unused;
    snprintf(v->values[v->n], sizeof(v->values[0]), "%.127s", value);
    v->labels[v->n] = (ns_label){key, v->values[v->n]};
    v->n++;
}

static void labelf(type_view *v, const char *key, long long value)
{
    snprintf(v->values[v->n], sizeof(v->values[0]), "%lld", value);
    v->labels[v->n] = (ns_label){key, v->values[v->n]};
    v->n++;
}

static void labels_of(const az_state *s, const az_sku *k, const az_nodeclass *nc, type_view *v)
{
    v->n = 0;
    label(v, "node.kubernetes.io/instance-type", NULL, k->name);
    label(v, "kubernetes.io/arch", NULL, k->arch);
    label(v, "kubernetes.io/os", NULL, nc->windows ? "windows" : "linux");
    label(v, "karpenter.azure.com/sku-name", NULL, k->name);
    label(v, "karpenter.azure.com/sku-family", NULL, k->family);
    label(v, "karpenter.azure.com/sku-series", NULL, k->series);
    label(v, "karpenter.azure.com/sku-version", NULL, k->version);
    labelf(v, "karpenter.azure.com/sku-cpu", k->vcpus);
    labelf(v, "karpenter.azure.com/sku-memory", (long long)(k->memory_gib * 1024));
    label(v, "karpenter.azure.com/sku-networking-accelerated", NULL, k->accelerated_networking ? "true" : "false");
    label(v, "karpenter.azure.com/sku-storage-premium-capable", NULL, k->premium_io ? "true" : "false");
    labelf(v, "karpenter.azure.com/sku-storage-ephemeralos-maxsize", (long long)(k->ephemeral_os_max_mb / 1024));
    label(v, "karpenter.azure.com/sku-hyperv-generation", NULL, k->hyperv_v2 ? "V2" : "V1");
    if (k->gpus > 0 && k->gpu_manufacturer[0]) {
        labelf(v, "karpenter.azure.com/sku-gpu-count", k->gpus);
        label(v, "karpenter.azure.com/sku-gpu-manufacturer", NULL, k->gpu_manufacturer);
        if (k->gpu_name[0])
            label(v, "karpenter.azure.com/sku-gpu-name", NULL, k->gpu_name);
    }
    label(v, "kubernetes.azure.com/cluster", NULL, s->node_rg);
    label(v, "kubernetes.azure.com/mode", NULL, "user");
    label(v, "kubernetes.azure.com/os-sku", NULL, nc->windows ? "Windows" : strncmp(nc->image_family, "Ubuntu", 6) == 0
                                                                                 ? "Ubuntu" : "AzureLinux");
    labelf(v, "kubernetes.azure.com/sku-cpu", k->vcpus);
    labelf(v, "kubernetes.azure.com/sku-memory", (long long)(k->memory_gib * 1024));
    if (nc->fips)
        label(v, "kubernetes.azure.com/fips_enabled", NULL, "true");
    label(v, "topology.kubernetes.io/region", NULL, s->location);
}

/* Offerings: every usable zone ("<location>-<n>", or "0" for a size without zones here) x on-demand, and spot
 * where the size allows it. */
typedef struct offer_view {
    char zones[9][NS_ZONE_MAX];
    ns_offering items[18];
    size_t n;
} offer_view;

/* Every offering is listed as available: the core's unavailable-offerings cache keeps the ones a launch found
 * without capacity (providers keep none, provider.h). */
static void offerings_of(az_state *s, const az_sku *k, offer_view *o)
{
    double od, spot;
    az_price_of(s, k->name, &od, &spot);
    size_t nz = 0;
    for (int z = 0; z < 8; z++)
        if (k->zones & (1u << z))
            snprintf(o->zones[nz++], NS_ZONE_MAX, "%.50s-%d", s->location, z + 1);
    if (nz == 0)
        snprintf(o->zones[nz++], NS_ZONE_MAX, "0");
    o->n = 0;
    for (size_t i = 0; i < nz; i++) {
        o->items[o->n++] = (ns_offering){sizeof(ns_offering), o->zones[i], NS_CAPACITY_ON_DEMAND, od, true, NULL,
                                         NULL, 0, NS_RESERVATION_CAPACITY_UNKNOWN};
        if (k->spot_capable)
            o->items[o->n++] = (ns_offering){sizeof(ns_offering), o->zones[i], NS_CAPACITY_SPOT, spot, true,
                                             NULL, NULL, 0, NS_RESERVATION_CAPACITY_UNKNOWN};
    }
}

bool az_sku_runs(const az_sku *k, const az_nodeclass *nc)
{
    /* Windows Server images are x64 only; custom images are taken to fit every size. A size whose memory AKS's
     * reservations and eviction threshold use up (Standard_B1s: 1 GiB) cannot run a pod. */
    if (nc->windows && strcmp(k->arch, "amd64") != 0)
        return false;
    double usable = k->memory_gib * GIB * (1 - VM_MEMORY_OVERHEAD) - (double)reserved_memory(k->memory_gib) -
                    750.0 * MIB;
    return usable > 256.0 * MIB;
}

int az_list_instance_types(void *state, const ns_nodeclass *nodeclass, ns_instance_type_cb cb, void *cb_ctx)
{
    az_state *s = state;
    az_nodeclass *nc = malloc(sizeof(*nc));
    type_view *tv = malloc(sizeof(*tv));
    offer_view *ov = malloc(sizeof(*ov));
    az_catalog *c = NULL;
    int rc = (nc && tv && ov) ? NS_OK : NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory listing types");
    if (rc < 0 || (rc = az_nodeclass_read(s, nodeclass, nc)) < 0 || (rc = az_catalog_acquire(s, &c)) < 0)
        goto done;
    az_pricing_refresh(s);
    for (size_t i = 0; i < c->n && rc == 0; i++) {
        const az_sku *k = &c->skus[i];
        if (!az_sku_runs(k, nc))
            continue;
        ns_instance_type t = {.struct_size = sizeof(t), .name = k->name};
        capacity_of(s, k, nc, &t.capacity);
        reservations(k, &t.capacity, &t.kube_reserved, &t.eviction_threshold);
        labels_of(s, k, nc, tv);
        offerings_of(s, k, ov);
        t.labels = tv->labels;
        t.n_labels = tv->n;
        t.offerings = ov->items;
        t.n_offerings = ov->n;
        rc = cb(cb_ctx, &t);
    }
done:
    if (c)
        az_catalog_release(s, c);
    free(nc);
    free(tv);
    free(ov);
    return rc;
}
