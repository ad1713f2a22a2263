/*
 * Catalog bookkeeping shared by both sources, and the arithmetic Karpenter's AWS provider uses for prices and
 * resources, so a node the sim reports is sized like the same node on EC2.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_catalog.h"
#include "sim_nodeclass.h"
#include "sim_state.h"

#define SIM_MIB (1024LL * 1024LL)
#define SIM_GIB (1024LL * SIM_MIB)
/* EC2 reports memory as sold; Karpenter subtracts 7.5% for the hypervisor (vmMemoryOverheadPercent). */
#define SIM_VM_MEMORY_OVERHEAD_PER_MILLE 75
/* Windows Server licence added to the Linux price, per vCPU-hour (EC2's published difference). */
#define SIM_WINDOWS_LICENCE_PER_VCPU 0.046

static int sim_itype_cmp(const void *a, const void *b)
{
    return strcmp(((const sim_itype *)a)->name, ((const sim_itype *)b)->name);
}

int sim_catalog_finish(sim_state *s, sim_catalog *cat, const char *source)
{
    if (cat->n == 0)
        return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "%s has no instance types", source);
    qsort(cat->types, cat->n, sizeof(sim_itype), sim_itype_cmp);
    for (size_t i = 1; i < cat->n; i++)
        if (strcmp(cat->types[i - 1].name, cat->types[i].name) == 0)
            return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "%s lists instance type %s twice", source, cat->types[i].name);
    return NS_OK;
}

void sim_catalog_free(sim_catalog *cat)
{
    if (!cat)
        return;
    for (size_t i = 0; i < cat->n; i++)
        free(cat->types[i].file);
    free(cat->types);
    cat->types = NULL;
    cat->n = 0;
}

const sim_itype *sim_catalog_find(const sim_catalog *cat, const char *name)
{
    if (!name)
        return NULL;
    sim_itype key;
    if (!sim_copy_str(key.name, sizeof(key.name), name))
        return NULL;
    return bsearch(&key, cat->types, cat->n, sizeof(sim_itype), sim_itype_cmp);
}

int64_t sim_eni_max_pods(int64_t enis, int64_t ips_per_eni)
{
    return enis * (ips_per_eni - 1) + 2;
}

static uint32_t sim_fnv1a(const char *a, const char *b)
{
    uint32_t h = 2166136261u;
    for (const char *p = a; p && *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    h = (h ^ (uint8_t)'/') * 16777619u;
    for (const char *p = b; p && *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    return h;
}

double sim_spot_fraction(const char *family, const char *zone)
{
    /* 30%..70% of on-demand per family, as EC2's spot discounts roughly range; then 0..4% more by zone so zones
     * differ, as they do on EC2. The maximum (0.70 * 1.04) stays below on-demand. */
    double base = 0.30 + (double)(sim_fnv1a(family, NULL) % 41) / 100.0;
    double nudge = zone ? 1.0 + (double)(sim_fnv1a(family, zone) % 5) / 100.0 : 1.0;
    return base * nudge;
}

double sim_offering_price(const sim_itype *t, const sim_nc *nc, const char *zone, const char *capacity_type)
{
    const sim_offer *declared = sim_itype_offer(t, zone, capacity_type);
    double price = declared ? declared->price : t->od_price;
    if (!declared && capacity_type && strcmp(capacity_type, NS_CAPACITY_SPOT) == 0)
        price *= sim_spot_fraction(t->family, zone);
    if (nc && nc->os != SIM_OS_LINUX)
        price += SIM_WINDOWS_LICENCE_PER_VCPU * (double)t->vcpu;
    return price;
}

/* kube-reserved CPU: 6% of the first core, 1% of the second, 0.5% of the next two, 0.25% of the rest. */
static int64_t sim_kube_reserved_cpu_milli(int64_t cpu_milli)
{
    static const struct {
        int64_t start, end, per_10000;
    } ranges[] = {{0, 1000, 600}, {1000, 2000, 100}, {2000, 4000, 50}, {4000, INT64_MAX, 25}};
    int64_t reserved = 0;
    for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
        if (cpu_milli <= ranges[i].start)
            break;
        int64_t top = cpu_milli < ranges[i].end ? cpu_milli : ranges[i].end;
        reserved += (top - ranges[i].start) * ranges[i].per_10000 / 10000;
    }
    return reserved;
}

/* Pods a node may run: maxPods, else the ENI limit; podsPerCore caps it (Bottlerocket ignores podsPerCore). */
static int64_t sim_pods(const sim_itype *t, const sim_nc *nc)
{
    const sim_kubelet *k = nc ? &nc->kubelet : NULL;
    int64_t pods = k && k->has_max_pods ? k->max_pods : t->max_pods;
    if (k && k->pods_per_core > 0 && !nc->bottlerocket && k->pods_per_core * t->vcpu < pods)
        pods = k->pods_per_core * t->vcpu;
    return pods;
}

static void sim_reserved_apply(ns_resources *r, const sim_reserved *k)
{
    if (k->has_cpu)
        r->cpu_milli = k->cpu_milli;
    if (k->has_memory)
        r->memory_bytes = k->memory_bytes;
    if (k->has_ephemeral)
        r->ephemeral_storage_bytes = k->ephemeral_bytes;
}

void sim_itype_resources(const sim_itype *t, const sim_nc *nc, ns_resources *capacity, ns_resources *kube_reserved,
                         ns_resources *system_reserved, ns_resources *eviction)
{
    int64_t ephemeral = nc ? nc->ephemeral_bytes : SIM_DEFAULT_EPHEMERAL_BYTES;
    int64_t overhead_mib = (t->memory_mib * SIM_VM_MEMORY_OVERHEAD_PER_MILLE + 999) / 1000;
    int64_t pods = sim_pods(t, nc);

    memset(capacity, 0, sizeof(*capacity));
    capacity->cpu_milli = t->vcpu * 1000;
    capacity->memory_bytes = (t->memory_mib - overhead_mib) * SIM_MIB;
    capacity->pods = pods;
    capacity->ephemeral_storage_bytes = ephemeral;
    if (t->gpu_count > 0) {
        const char *resource = strcmp(t->gpu_manufacturer, "amd") == 0 ? "amd.com/gpu" : "nvidia.com/gpu";
        sim_copy_str(capacity->extended[0].name, sizeof(capacity->extended[0].name), resource);
        capacity->extended[0].value = t->gpu_count;
        capacity->n_extended = 1;
    }

    memset(kube_reserved, 0, sizeof(*kube_reserved));
    kube_reserved->cpu_milli = sim_kube_reserved_cpu_milli(capacity->cpu_milli);
    kube_reserved->memory_bytes = (11 * pods + 255) * SIM_MIB;
    kube_reserved->ephemeral_storage_bytes = SIM_GIB;

    memset(system_reserved, 0, sizeof(*system_reserved));

    memset(eviction, 0, sizeof(*eviction));
    eviction->memory_bytes = 100 * SIM_MIB;
    eviction->ephemeral_storage_bytes = (ephemeral + 9) / 10;
    if (!nc)
        return;
    const sim_kubelet *k = &nc->kubelet;
    sim_reserved_apply(kube_reserved, &k->kube_reserved);
    sim_reserved_apply(system_reserved, &k->system_reserved);
    eviction->memory_bytes = sim_threshold_amount(&k->hard_memory, nc->bottlerocket ? NULL : &k->soft_memory,
                                                  capacity->memory_bytes, eviction->memory_bytes);
    eviction->ephemeral_storage_bytes = sim_threshold_amount(
        &k->hard_nodefs, nc->bottlerocket ? NULL : &k->soft_nodefs, ephemeral, eviction->ephemeral_storage_bytes);
}

static int64_t sim_sub_floor(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t v = a - b - c - d;
    return v > 0 ? v : 0;
}

void sim_itype_allocatable(const sim_itype *t, const sim_nc *nc, ns_resources *allocatable)
{
    ns_resources cap, kube, sys, evict;
    sim_itype_resources(t, nc, &cap, &kube, &sys, &evict);
    *allocatable = cap;
    allocatable->cpu_milli = sim_sub_floor(cap.cpu_milli, kube.cpu_milli, sys.cpu_milli, evict.cpu_milli);
    allocatable->memory_bytes = sim_sub_floor(cap.memory_bytes, kube.memory_bytes, sys.memory_bytes,
                                              evict.memory_bytes);
    allocatable->pods = sim_sub_floor(cap.pods, kube.pods, sys.pods, evict.pods);
    allocatable->ephemeral_storage_bytes =
        sim_sub_floor(cap.ephemeral_storage_bytes, kube.ephemeral_storage_bytes, sys.ephemeral_storage_bytes,
                      evict.ephemeral_storage_bytes);
}
