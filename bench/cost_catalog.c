#include "cost_catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#define GIB (INT64_C(1) << 30)
#define MIB (INT64_C(1) << 20)

static cJSON *read_json(const char *dir, const char *file)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = n > 0 ? malloc((size_t)n + 1) : NULL;
    cJSON *root = NULL;
    if (text && fread(text, 1, (size_t)n, f) == (size_t)n) {
        text[n] = '\0';
        root = cJSON_Parse(text);
    }
    if (!root)
        fprintf(stderr, "cost_bench: %s: cannot read or parse it as JSON\n", path);
    free(text);
    fclose(f);
    return root;
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

static int push(cb_catalog *c, const cb_type *t)
{
    cb_type *n = realloc(c->types, (c->n + 1) * sizeof(*n));
    if (!n) {
        fprintf(stderr, "cost_bench: %s: out of memory for %zu types\n", c->name, c->n + 1);
        return -1;
    }
    c->types = n;
    c->types[c->n++] = *t;
    return 0;
}

/* c, m and r of generation 5 and later, no GPU, no metal, up to 96 vCPU, with a us-east-1 price. */
static int load_aws(const char *dir, cb_catalog *out)
{
    cJSON *types = read_json(dir, "aws-instance-types.json"), *prices = read_json(dir, "aws-prices-us-east-1.json");
    int rc = types && prices ? 0 : -1;
    const cJSON *t, *list = rc == 0 ? types : NULL;
    cJSON_ArrayForEach(t, list)
    {
        const char *cat = str(t, "category");
        const cJSON *alloc = cJSON_GetObjectItemCaseSensitive(t, "allocatable");
        const cJSON *price = cJSON_GetObjectItemCaseSensitive(prices, str(t, "name"));
        if (strlen(cat) != 1 || !strchr("cmr", cat[0]) || num(t, "generation") < 5 || num(t, "gpu_count") > 0 ||
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "bare_metal")) || num(t, "vcpu") > 96 || !alloc ||
            !cJSON_IsNumber(price) || price->valuedouble <= 0)
            continue;
        cb_type x = {.cpu_milli = (int64_t)num(alloc, "cpu_millicores"),
                     .mem_bytes = (int64_t)num(alloc, "memory_mib") * MIB,
                     .pods = (int64_t)num(alloc, "pods"),
                     .price = price->valuedouble};
        snprintf(x.name, sizeof(x.name), "%s", str(t, "name"));
        snprintf(x.family, sizeof(x.family), "%s", str(t, "family"));
        snprintf(x.arch, sizeof(x.arch), "%s", str(t, "arch"));
        if (x.cpu_milli > 0 && x.mem_bytes > 0 && x.pods > 0 && (rc = push(out, &x)) < 0)
            break;
    }
    cJSON_Delete(types);
    cJSON_Delete(prices);
    return rc;
}

/* ecs.c, ecs.g and ecs.r families of generation 6 and later, no GPU, up to 96 vCPU, with a cn-hangzhou price. */
static int load_alibaba(const char *dir, cb_catalog *out)
{
    cJSON *types = read_json(dir, "alibaba-instance-types.json"),
          *all = read_json(dir, "alibaba-prices-ondemand.json");
    const cJSON *prices = cJSON_GetObjectItemCaseSensitive(all, "cn-hangzhou");
    int rc = types && prices ? 0 : -1;
    const cJSON *t, *list = rc == 0 ? types : NULL;
    cJSON_ArrayForEach(t, list)
    {
        const char *tok = str(t, "type_token");
        const cJSON *price = cJSON_GetObjectItemCaseSensitive(prices, str(t, "name"));
        if (!strchr("cgr", tok[0]) || tok[0] == '\0' || atoi(tok + 1) < 6 || strchr(tok, '-') ||
            num(t, "gpu_count") > 0 || num(t, "vcpu") > 96 || !cJSON_IsNumber(price) || price->valuedouble <= 0)
            continue;
        cb_type x = {.cpu_milli = (int64_t)num(t, "vcpu") * 1000,
                     .mem_bytes = (int64_t)num(t, "memory_mib") * MIB,
                     .pods = 110,
                     .price = price->valuedouble};
        snprintf(x.name, sizeof(x.name), "%s", str(t, "name"));
        snprintf(x.family, sizeof(x.family), "%s", str(t, "family"));
        snprintf(x.arch, sizeof(x.arch), "%s", str(t, "arch"));
        if (x.cpu_milli > 0 && x.mem_bytes >= GIB && (rc = push(out, &x)) < 0)
            break;
    }
    cJSON_Delete(types);
    cJSON_Delete(all);
    return rc;
}

/* The pods of an Azure node as nodesmith's Azure provider sets them: its default network plugin is Azure CNI in
 * overlay mode (providers/azure/azure_provider.c options), for which default_max_pods (azure_catalog.c) gives AKS's
 * 250 per node. */
#define AZURE_MAX_PODS 250

/* CpuArchitectureType as Kubernetes names it, or NULL for a value the Resource SKUs API does not document. */
static const char *azure_arch(const char *cpu_architecture_type)
{
    return !strcmp(cpu_architecture_type, "x64") ? "amd64" : !strcmp(cpu_architecture_type, "Arm64") ? "arm64" : NULL;
}

/* The southcentralus SKU records (20 of the data's 32, the provider's fixture; westcentralus has the other 12) of the
 * D, E and F series (general purpose, memory, compute; not DC, DS v2, A, B, M or N), no GPU, no restriction, up to
 * 96 vCPU, with a southcentralus Linux on-demand price (the price file holds Linux on-demand only, keyed by
 * armSkuName). cpu is vCPUsAvailable as the provider reads it; memory is MemoryGB, capacity as allocatable. */
static int load_azure(const char *dir, cb_catalog *out)
{
    static const char *REGION = "southcentralus";
    cJSON *skus = read_json(dir, "azure-skus.json"), *all = read_json(dir, "azure-prices-ondemand.json");
    const cJSON *prices = cJSON_GetObjectItemCaseSensitive(all, REGION);
    int rc = skus && all ? 0 : -1;
    if (rc == 0 && (!cJSON_IsArray(skus) || !cJSON_IsObject(prices))) {
        fprintf(stderr, "cost_bench: %s/%s\n", dir,
                !cJSON_IsArray(skus) ? "azure-skus.json: not an array of SKU records"
                                     : "azure-prices-ondemand.json: no object of prices for southcentralus");
        rc = -1;
    }
    const cJSON *t, *list = rc == 0 ? skus : NULL;
    cJSON_ArrayForEach(t, list)
    {
        const char *size = str(t, "size");
        const cJSON *caps = cJSON_GetObjectItemCaseSensitive(t, "capabilities");
        const cJSON *restrictions = cJSON_GetObjectItemCaseSensitive(t, "restrictions");
        const cJSON *price = cJSON_GetObjectItemCaseSensitive(prices, str(t, "name"));
        if (strcmp(str(t, "region"), REGION) || !strchr("DEF", size[0]) || size[0] == '\0' ||
            size[1] < '0' || size[1] > '9' || num(caps, "GPUs") > 0 || cJSON_GetArraySize(restrictions) > 0 ||
            num(caps, "vCPUsAvailable") > 96 || !cJSON_IsNumber(price) || price->valuedouble <= 0)
            continue;
        const char *arch = azure_arch(str(caps, "CpuArchitectureType"));
        cb_type x = {.cpu_milli = (int64_t)num(caps, "vCPUsAvailable") * 1000,
                     .mem_bytes = (int64_t)(num(caps, "MemoryGB") * (double)GIB),
                     .pods = AZURE_MAX_PODS,
                     .price = price->valuedouble};
        if (!arch || x.cpu_milli <= 0 || x.mem_bytes <= 0) {
            fprintf(stderr, "cost_bench: %s/azure-skus.json: %s: capabilities vCPUsAvailable %g, MemoryGB %g, "
                    "CpuArchitectureType \"%s\": want positive numbers and x64 or Arm64\n", dir, str(t, "name"),
                    num(caps, "vCPUsAvailable"), num(caps, "MemoryGB"), str(caps, "CpuArchitectureType"));
            rc = -1;
            break;
        }
        snprintf(x.name, sizeof(x.name), "%s", str(t, "name"));
        snprintf(x.family, sizeof(x.family), "%s", str(t, "family"));
        snprintf(x.arch, sizeof(x.arch), "%s", arch);
        if ((rc = push(out, &x)) < 0)
            break;
    }
    cJSON_Delete(skus);
    cJSON_Delete(all);
    return rc;
}

int cb_catalog_load(const char *data_dir, int which, cb_catalog *out)
{
    memset(out, 0, sizeof(*out));
    static const char *NAMES[CB_CATALOGS] = {"aws-us-east-1", "alibaba-cn-hangzhou", "azure-southcentralus"};
    static int (*const LOAD[CB_CATALOGS])(const char *, cb_catalog *) = {load_aws, load_alibaba, load_azure};
    if (which < 0 || which >= CB_CATALOGS) {
        fprintf(stderr, "cost_bench: catalog %d: there are %d catalogs\n", which, CB_CATALOGS);
        return -1;
    }
    snprintf(out->name, sizeof(out->name), "%s", NAMES[which]);
    int rc = LOAD[which](data_dir, out);
    if (rc == 0 && out->n == 0) {
        fprintf(stderr, "cost_bench: %s: no instance type kept from %s\n", out->name, data_dir);
        rc = -1;
    }
    if (rc < 0)
        cb_catalog_free(out);
    return rc;
}

void cb_catalog_free(cb_catalog *c)
{
    free(c->types);
    c->types = NULL;
    c->n = 0;
}
