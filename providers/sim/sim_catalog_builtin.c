/*
 * The built-in catalog, written from EC2's public specifications and us-east-1 Linux on-demand prices. General,
 * compute and memory families are described once per family (EC2 prices these per vCPU within a family, and the
 * size decides vCPUs and network interfaces); GPU types are listed one by one since their shapes are irregular.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_catalog.h"
#include "sim_state.h"

/* A size of a Nitro family: vCPUs and the network-interface limits that decide max pods. */
typedef struct sim_size {
    const char *name;
    int vcpu;
    int enis;
    int ips_per_eni;
} sim_size;

static const sim_size sim_sizes[] = {
    {"medium", 1, 2, 4},     {"large", 2, 3, 10},      {"xlarge", 4, 4, 15},     {"2xlarge", 8, 4, 15},
    {"4xlarge", 16, 8, 30},  {"8xlarge", 32, 8, 30},   {"9xlarge", 36, 8, 30},   {"12xlarge", 48, 8, 30},
    {"16xlarge", 64, 15, 50}, {"18xlarge", 72, 15, 50}, {"24xlarge", 96, 15, 50}, {"32xlarge", 128, 15, 50},
    {"48xlarge", 192, 15, 50},
};

typedef struct sim_family {
    const char *family;
    const char *category;
    int generation;
    const char *arch;
    const char *cpu_manufacturer;
    int gib_per_vcpu;
    double price_per_vcpu;
    const char *sizes; /* space-separated names from sim_sizes */
    int metal_vcpu;    /* 0: no .metal size */
} sim_family;

static const sim_family sim_families[] = {
    {"m5", "m", 5, "amd64", "intel", 4, 0.048, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge", 96},
    {"m6i", "m", 6, "amd64", "intel", 4, 0.048,
     "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge", 128},
    {"m6a", "m", 6, "amd64", "amd", 4, 0.0432,
     "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge 48xlarge", 192},
    {"m6g", "m", 6, "arm64", "aws", 4, 0.0385, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge", 64},
    {"m7i", "m", 7, "amd64", "intel", 4, 0.0504,
     "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 48xlarge", 0},
    {"m7g", "m", 7, "arm64", "aws", 4, 0.0408, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge", 64},
    {"c5", "c", 5, "amd64", "intel", 2, 0.0425, "large xlarge 2xlarge 4xlarge 9xlarge 12xlarge 18xlarge 24xlarge", 96},
    {"c6i", "c", 6, "amd64", "intel", 2, 0.0425,
     "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge", 128},
    {"c6a", "c", 6, "amd64", "amd", 2, 0.03825,
     "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge 48xlarge", 192},
    {"c6g", "c", 6, "arm64", "aws", 2, 0.034, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge", 64},
    {"c7i", "c", 7, "amd64", "intel", 2, 0.044625,
     "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 48xlarge", 0},
    {"c7g", "c", 7, "arm64", "aws", 2, 0.03625, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge", 64},
    {"r5", "r", 5, "amd64", "intel", 8, 0.063, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge", 96},
    {"r6i", "r", 6, "amd64", "intel", 8, 0.063,
     "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge", 128},
    {"r6g", "r", 6, "arm64", "aws", 8, 0.0504, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge", 64},
    {"r7g", "r", 7, "arm64", "aws", 8, 0.05355, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge", 64},
};

/* GPU types, one row each: their vCPU, memory, GPU and interface counts do not follow a per-size rule. */
typedef struct sim_gpu_type {
    const char *name;
    const char *hypervisor;
    const char *cpu_manufacturer;
    int vcpu;
    int memory_gib;
    int gpu_count;
    const char *gpu_name;
    int gpu_memory_mib;
    int enis;
    int ips_per_eni;
    double price;
} sim_gpu_type;

static const sim_gpu_type sim_gpu_types[] = {
    {"g4dn.xlarge", "nitro", "intel", 4, 16, 1, "t4", 16384, 3, 10, 0.526},
    {"g4dn.2xlarge", "nitro", "intel", 8, 32, 1, "t4", 16384, 3, 10, 0.752},
    {"g4dn.4xlarge", "nitro", "intel", 16, 64, 1, "t4", 16384, 3, 10, 1.204},
    {"g4dn.8xlarge", "nitro", "intel", 32, 128, 1, "t4", 16384, 4, 15, 2.176},
    {"g4dn.12xlarge", "nitro", "intel", 48, 192, 4, "t4", 16384, 8, 30, 3.912},
    {"g4dn.16xlarge", "nitro", "intel", 64, 256, 1, "t4", 16384, 4, 15, 4.352},
    {"g5.xlarge", "nitro", "amd", 4, 16, 1, "a10g", 22888, 4, 15, 1.006},
    {"g5.2xlarge", "nitro", "amd", 8, 32, 1, "a10g", 22888, 4, 15, 1.212},
    {"g5.4xlarge", "nitro", "amd", 16, 64, 1, "a10g", 22888, 8, 30, 1.624},
    {"g5.8xlarge", "nitro", "amd", 32, 128, 1, "a10g", 22888, 8, 30, 2.448},
    {"g5.12xlarge", "nitro", "amd", 48, 192, 4, "a10g", 22888, 15, 50, 5.672},
    {"g5.48xlarge", "nitro", "amd", 192, 768, 8, "a10g", 22888, 7, 50, 16.288},
    {"p3.2xlarge", "xen", "intel", 8, 61, 1, "v100", 16384, 4, 15, 3.06},
    {"p3.8xlarge", "xen", "intel", 32, 244, 4, "v100", 16384, 8, 30, 12.24},
    {"p3.16xlarge", "xen", "intel", 64, 488, 8, "v100", 16384, 8, 30, 24.48},
};

static const sim_size *sim_size_find(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(sim_sizes) / sizeof(sim_sizes[0]); i++)
        if (strlen(sim_sizes[i].name) == len && strncmp(sim_sizes[i].name, name, len) == 0)
            return &sim_sizes[i];
    return NULL;
}

static void sim_family_type(const sim_family *f, const char *size, int vcpu, int64_t max_pods, bool metal,
                            sim_itype *t)
{
    memset(t, 0, sizeof(*t));
    snprintf(t->name, sizeof(t->name), "%s.%s", f->family, size);
    snprintf(t->family, sizeof(t->family), "%s", f->family);
    snprintf(t->category, sizeof(t->category), "%s", f->category);
    snprintf(t->size, sizeof(t->size), "%s", size);
    snprintf(t->arch, sizeof(t->arch), "%s", f->arch);
    snprintf(t->cpu_manufacturer, sizeof(t->cpu_manufacturer), "%s", f->cpu_manufacturer);
    snprintf(t->hypervisor, sizeof(t->hypervisor), "%s", metal ? "" : "nitro");
    t->generation = f->generation;
    t->vcpu = vcpu;
    t->memory_mib = (int64_t)vcpu * f->gib_per_vcpu * 1024;
    t->max_pods = max_pods;
    t->windows_capable = strcmp(f->arch, "amd64") == 0;
    t->od_price = f->price_per_vcpu * vcpu;
}

static void sim_gpu_itype(const sim_gpu_type *g, sim_itype *t)
{
    const char *dot = strchr(g->name, '.');
    memset(t, 0, sizeof(*t));
    snprintf(t->name, sizeof(t->name), "%s", g->name);
    snprintf(t->family, sizeof(t->family), "%.*s", (int)(dot - g->name), g->name);
    snprintf(t->category, sizeof(t->category), "%c", g->name[0]);
    snprintf(t->size, sizeof(t->size), "%s", dot + 1);
    snprintf(t->arch, sizeof(t->arch), "amd64");
    snprintf(t->cpu_manufacturer, sizeof(t->cpu_manufacturer), "%s", g->cpu_manufacturer);
    snprintf(t->hypervisor, sizeof(t->hypervisor), "%s", g->hypervisor);
    snprintf(t->gpu_name, sizeof(t->gpu_name), "%s", g->gpu_name);
    snprintf(t->gpu_manufacturer, sizeof(t->gpu_manufacturer), "nvidia");
    t->generation = strtol(t->family + 1, NULL, 10);
    t->vcpu = g->vcpu;
    t->memory_mib = (int64_t)g->memory_gib * 1024;
    t->gpu_count = g->gpu_count;
    t->gpu_memory_mib = g->gpu_memory_mib;
    t->max_pods = sim_eni_max_pods(g->enis, g->ips_per_eni);
    t->windows_capable = true;
    t->od_price = g->price;
}

/* Counts the types the tables describe, so one allocation holds them all. */
static size_t sim_builtin_count(void)
{
    size_t n = sizeof(sim_gpu_types) / sizeof(sim_gpu_types[0]);
    for (size_t i = 0; i < sizeof(sim_families) / sizeof(sim_families[0]); i++) {
        const char *p = sim_families[i].sizes;
        while (*p) {
            size_t len = strcspn(p, " ");
            n++;
            p += len + strspn(p + len, " ");
        }
        if (sim_families[i].metal_vcpu)
            n++;
    }
    return n;
}

int sim_catalog_load_builtin(sim_state *s, sim_catalog *out)
{
    size_t cap = sim_builtin_count();
    sim_catalog cat = {calloc(cap, sizeof(sim_itype)), 0};
    if (!cat.types)
        return SIM_FAIL(s, NS_ERR_INTERNAL, "building the built-in catalog: out of memory for %zu types", cap);

    for (size_t i = 0; i < sizeof(sim_families) / sizeof(sim_families[0]); i++) {
        const sim_family *f = &sim_families[i];
        const char *p = f->sizes;
        while (*p) {
            size_t len = strcspn(p, " ");
            const sim_size *sz = sim_size_find(p, len);
            if (!sz) {
                sim_catalog_free(&cat);
                return SIM_FAIL(s, NS_ERR_INTERNAL, "built-in family %s names unknown size \"%.*s\"", f->family,
                                (int)len, p);
            }
            sim_family_type(f, sz->name, sz->vcpu, sim_eni_max_pods(sz->enis, sz->ips_per_eni), false,
                            &cat.types[cat.n++]);
            p += len + strspn(p + len, " ");
        }
        if (f->metal_vcpu)
            sim_family_type(f, "metal", f->metal_vcpu, sim_eni_max_pods(15, 50), true, &cat.types[cat.n++]);
    }
    for (size_t i = 0; i < sizeof(sim_gpu_types) / sizeof(sim_gpu_types[0]); i++)
        sim_gpu_itype(&sim_gpu_types[i], &cat.types[cat.n++]);

    int rc = sim_catalog_finish(s, &cat, "the built-in catalog");
    if (rc != NS_OK) {
        sim_catalog_free(&cat);
        return rc;
    }
    *out = cat;
    return NS_OK;
}
