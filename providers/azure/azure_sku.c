/* Resource SKU records -> az_sku (azure_sku.h). */
#include "azure_sku.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *capability(const ns_host *h, const ns_json *caps, const char *name)
{
    for (size_t i = 0; i < h->json_size(caps); i++) {
        const ns_json *c = h->json_at(caps, i);
        const char *n = h->json_string(h->json_get(c, "name"));
        if (n && strcmp(n, name) == 0)
            return h->json_string(h->json_get(c, "value"));
    }
    return NULL;
}

static bool cap_true(const ns_host *h, const ns_json *caps, const char *name)
{
    const char *v = capability(h, caps, name);
    return v && strcasecmp(v, "True") == 0;
}

static double cap_number(const ns_host *h, const ns_json *caps, const char *name)
{
    const char *v = capability(h, caps, name);
    return v ? strtod(v, NULL) : 0;
}

static bool has_string(const ns_host *h, const ns_json *arr, const char *s)
{
    for (size_t i = 0; i < h->json_size(arr); i++) {
        const char *v = h->json_string(h->json_at(arr, i));
        if (v && strcasecmp(v, s) == 0)
            return true;
    }
    return false;
}

/* Standard_D16plds_v5 -> family D, series Dplds_v5, version 5; Standard_NC24ads_A100_v4 -> NC, NCads_v4, 4. */
static void name_parts(az_sku *o)
{
    const char *p = strchr(o->name, '_');
    p = p ? p + 1 : o->name;
    size_t f = 0;
    while (isupper((unsigned char)p[f]) && f + 1 < sizeof(o->family))
        f++;
    memcpy(o->family, p, f);
    o->family[f] = '\0';
    const char *q = p + f;
    while (isdigit((unsigned char)*q) || *q == '-')
        q++;
    char features[16] = "";
    size_t n = 0;
    while (islower((unsigned char)*q) && n + 1 < sizeof(features))
        features[n++] = *q++;
    features[n] = '\0';
    const char *v = strstr(o->name, "_v");
    snprintf(o->version, sizeof(o->version), "%s", v && isdigit((unsigned char)v[2]) ? v + 2 : "1");
    if (v && isdigit((unsigned char)v[2]))
        snprintf(o->series, sizeof(o->series), "%s%s_v%s", o->family, features, o->version);
    else
        snprintf(o->series, sizeof(o->series), "%s%s", o->family, features);
}

/* GPU maker and model from the size's name: N-series are NVIDIA except NVv4 and the NGads V620 (AMD). */
static void gpu_parts(az_sku *o)
{
    static const char *const MODELS[] = {"A100", "H100", "H200", "A10", "T4", "V100", "P100", "P40", "M60", "MI300X",
                                         NULL};
    if (o->gpus <= 0)
        return;
    bool amd = (strncmp(o->family, "NV", 2) == 0 && strcmp(o->version, "4") == 0) || strstr(o->name, "V620") ||
               strstr(o->name, "MI300X");
    snprintf(o->gpu_manufacturer, sizeof(o->gpu_manufacturer), "%s", amd ? "amd" : "nvidia");
    for (size_t i = 0; MODELS[i]; i++)
        if (strstr(o->name, MODELS[i])) {
            snprintf(o->gpu_name, sizeof(o->gpu_name), "%s", MODELS[i]);
            return;
        }
    if (strcmp(o->family, "NC") == 0 && strcmp(o->version, "3") == 0)
        snprintf(o->gpu_name, sizeof(o->gpu_name), "V100");
    else if (strcmp(o->family, "NV") == 0 && strcmp(o->version, "1") == 0)
        snprintf(o->gpu_name, sizeof(o->gpu_name), "M60");
}

/* Removes the zones a Zone restriction lists; true when a Location restriction covers the location. */
static bool apply_restrictions(const ns_host *h, const ns_json *restrictions, const char *location, az_sku *o)
{
    for (size_t i = 0; i < h->json_size(restrictions); i++) {
        const ns_json *r = h->json_at(restrictions, i);
        const char *type = h->json_string(h->json_get(r, "type"));
        const ns_json *info = h->json_get(r, "restrictionInfo");
        if (!type || !(has_string(h, h->json_get(r, "values"), location) ||
                       has_string(h, h->json_get(info, "locations"), location)))
            continue;
        if (strcmp(type, "Location") == 0)
            return true;
        const ns_json *zones = h->json_get(info, "zones");
        for (size_t z = 0; strcmp(type, "Zone") == 0 && z < h->json_size(zones); z++) {
            const char *zone = h->json_string(h->json_at(zones, z));
            int n = zone ? atoi(zone) : 0;
            if (n >= 1 && n <= 8)
                o->zones &= ~(1u << (n - 1));
        }
    }
    return false;
}

int az_sku_parse(const ns_host *h, ns_host_ctx *ctx, const ns_json *rec, const char *location, az_sku *o)
{
    memset(o, 0, sizeof(*o));
    const char *type = h->json_string(h->json_get(rec, "resourceType"));
    const char *name = h->json_string(h->json_get(rec, "name"));
    if (!type || strcmp(type, "virtualMachines") != 0)
        return 0;
    if (!name || strlen(name) >= sizeof(o->name))
        return NS_ERROR(h, ctx, NS_ERR_INTERNAL, "Resource SKUs: a virtualMachines record has %s name",
                        name ? "an overlong" : "no");
    snprintf(o->name, sizeof(o->name), "%s", name);
    if (!has_string(h, h->json_get(rec, "locations"), location))
        return 0;
    const ns_json *caps = h->json_get(rec, "capabilities");
    if (h->json_type(caps) != NS_JSON_ARRAY)
        return NS_ERROR(h, ctx, NS_ERR_INTERNAL, "Resource SKUs: %s has no capabilities array", name);
    const char *fam = h->json_string(h->json_get(rec, "family"));
    snprintf(o->arm_family, sizeof(o->arm_family), "%s", fam ? fam : "");
    o->vcpus = (int)cap_number(h, caps, "vCPUsAvailable");
    if (o->vcpus <= 0)
        o->vcpus = (int)cap_number(h, caps, "vCPUs");
    o->memory_gib = cap_number(h, caps, "MemoryGB");
    if (o->vcpus <= 0 || o->memory_gib <= 0)
        return 0;
    const char *arch = capability(h, caps, "CpuArchitectureType");
    snprintf(o->arch, sizeof(o->arch), "%s", arch && strcasecmp(arch, "Arm64") == 0 ? "arm64" : "amd64");
    o->gpus = (int)cap_number(h, caps, "GPUs");
    o->accelerated_networking = cap_true(h, caps, "AcceleratedNetworkingEnabled");
    o->premium_io = cap_true(h, caps, "PremiumIO");
    o->encryption_at_host = cap_true(h, caps, "EncryptionAtHostSupported");
    o->spot_capable = cap_true(h, caps, "LowPriorityCapable");
    const char *gens = capability(h, caps, "HyperVGenerations");
    o->hyperv_v1 = !gens || strstr(gens, "V1");
    o->hyperv_v2 = gens && strstr(gens, "V2");
    o->ephemeral_os_max_mb = (int64_t)cap_number(h, caps, "MaxResourceVolumeMB");
    o->max_nics = (int)cap_number(h, caps, "MaxNetworkInterfaces");
    const ns_json *infos = h->json_get(rec, "locationInfo");
    for (size_t i = 0; i < h->json_size(infos); i++) {
        const ns_json *info = h->json_at(infos, i);
        const char *loc = h->json_string(h->json_get(info, "location"));
        const ns_json *zones = h->json_get(info, "zones");
        for (size_t z = 0; loc && strcasecmp(loc, location) == 0 && z < h->json_size(zones); z++) {
            const char *zone = h->json_string(h->json_at(zones, z));
            int n = zone ? atoi(zone) : 0;
            if (n >= 1 && n <= 8)
                o->zones |= 1u << (n - 1);
        }
    }
    unsigned listed = o->zones;
    if (apply_restrictions(h, h->json_get(rec, "restrictions"), location, o))
        return 0;
    if (listed && !o->zones)
        return 0; /* zonal, and every zone restricted */
    name_parts(o);
    gpu_parts(o);
    return 1;
}
