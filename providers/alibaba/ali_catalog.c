/* list_instance_types: the region's ECS instance types (DescribeInstanceTypes) with the zones selling them with stock,
 * pay-as-you-go and spot (DescribeAvailableResource), and their prices (ali_pricing.c), cached for catalog_ttl. The
 * node class narrows the zones to its vSwitches' and sets pods, disks and reservations. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ali_json.h"
#include "ali_provider.h"
#include "prov_log.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MIB (1024LL * 1024LL)

void ali_catalog_free(ali_catalog *c)
{
    if (!c)
        return;
    free(c->entries);
    free(c);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const ali_entry *)a)->t.name, ((const ali_entry *)b)->t.name);
}

const ali_entry *ali_catalog_find(const ali_catalog *c, const char *name)
{
    ali_entry key;
    if (!ali_copy(key.t.name, sizeof(key.t.name), name))
        return NULL;
    return bsearch(&key, c->entries, c->n, sizeof(key), by_name);
}

int ali_catalog_zone_index(const ali_catalog *c, const char *zone)
{
    for (size_t i = 0; i < c->n_zones; i++)
        if (strcmp(c->zones[i], zone) == 0)
            return (int)i;
    return -1;
}

static int add_type(ali_state *s, ali_catalog *c, size_t *cap, const ns_json *it)
{
    const ns_host *h = s->host;
    const char *name = ali_json_str(h, it, "InstanceTypeId"), *family = ali_json_str(h, it, "InstanceTypeFamily"),
               *arch = ali_json_str(h, it, "CpuArchitecture");
    double vcpu = ali_json_num(h, it, "CpuCoreCount", 0), mem = ali_json_num(h, it, "MemorySize", 0);
    if (!name || vcpu <= 0 || mem <= 0)
        return NS_OK; /* not a launchable type (no CPU or memory): skipped as the reference port does */
    if (c->n == *cap) {
        size_t n = *cap ? *cap * 2 : 256;
        ali_entry *e = realloc(c->entries, n * sizeof(*e));
        if (!e)
            return NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "out of memory reading instance types");
        c->entries = e;
        *cap = n;
    }
    ali_entry *e = &c->entries[c->n];
    memset(e, 0, sizeof(*e));
    ali_type *t = &e->t;
    if (!ali_copy(t->name, sizeof(t->name), name))
        return NS_OK;
    ali_copy(t->family, sizeof(t->family), family ? family : "");
    ali_copy(t->arch, sizeof(t->arch), arch && strcasecmp(arch, "ARM") == 0 ? "arm64" : "amd64");
    const char *cpu_model = ali_json_str(h, it, "PhysicalProcessorModel"), *gpu = ali_json_str(h, it, "GPUSpec");
    ali_copy(t->cpu_model, sizeof(t->cpu_model), cpu_model ? cpu_model : "");
    ali_copy(t->gpu_spec, sizeof(t->gpu_spec), gpu ? gpu : "");
    t->vcpu = (int64_t)vcpu;
    t->memory_gib = mem;
    t->gpu_count = (int64_t)ali_json_num(h, it, "GPUAmount", 0);
    t->gpu_memory_mib = (int64_t)(ali_json_num(h, it, "GPUMemorySize", 0) * 1024);
    t->eni_quantity = (int64_t)ali_json_num(h, it, "EniQuantity", 0);
    t->eni_ips = (int64_t)ali_json_num(h, it, "EniPrivateIpAddressQuantity", 0);
    e->on_demand = -1;
    for (size_t z = 0; z < ALI_MAX_ZONES; z++)
        e->spot[z] = -1;
    c->n++;
    return NS_OK;
}

static int fetch_types(ali_state *s, ali_catalog *c)
{
    const ns_host *h = s->host;
    char token[512] = "";
    size_t cap = 0;
    int rc;
    do {
        ali_params p = {0};
        ali_params_add(&p, "MaxResults", "100");
        if (token[0])
            ali_params_add(&p, "NextToken", token);
        ns_json *doc = NULL;
        rc = ali_rpc(s->client, ALI_ECS, "DescribeInstanceTypes", &p, &doc, NULL);
        ali_params_free(&p);
        if (rc < 0)
            return rc;
        const ns_json *list = ali_json_list(h, doc, "InstanceTypes", "InstanceType");
        if (!list)
            rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "ecs DescribeInstanceTypes: the answer has no "
                          "InstanceTypes.InstanceType list");
        for (size_t i = 0; rc == NS_OK && i < h->json_size(list); i++)
            rc = add_type(s, c, &cap, h->json_at(list, i));
        const char *next = ali_json_str(h, doc, "NextToken");
        ali_copy(token, sizeof(token), next ? next : "");
        h->json_free(doc);
    } while (rc == NS_OK && token[0]);
    if (rc == NS_OK)
        qsort(c->entries, c->n, sizeof(*c->entries), by_name);
    return rc;
}

/* DescribeAvailableResource: which zones sell which types, pay-as-you-go or spot, and which of those are sold out
 * now (offered, but not available). */
static int fetch_availability(ali_state *s, ali_catalog *c, bool spot)
{
    const ns_host *h = s->host;
    ali_params p = {0};
    ali_params_add(&p, "DestinationResource", "InstanceType");
    ali_params_add(&p, "InstanceChargeType", "PostPaid");
    if (spot)
        ali_params_add(&p, "SpotStrategy", "SpotAsPriceGo");
    ns_json *doc = NULL;
    int rc = ali_rpc(s->client, ALI_ECS, "DescribeAvailableResource", &p, &doc, NULL);
    ali_params_free(&p);
    if (rc < 0)
        return rc;
    const ns_json *zones = ali_json_list(h, doc, "AvailableZones", "AvailableZone");
    for (size_t i = 0; i < h->json_size(zones); i++) {
        const ns_json *z = h->json_at(zones, i);
        const char *zone = ali_json_str(h, z, "ZoneId"), *status = ali_json_str(h, z, "Status");
        if (!zone || (status && strcmp(status, "Available") != 0))
            continue;
        int zi = ali_catalog_zone_index(c, zone);
        if (zi < 0 && c->n_zones < ALI_MAX_ZONES && ali_copy(c->zones[c->n_zones], NS_ZONE_MAX, zone))
            zi = (int)c->n_zones++;
        if (zi < 0)
            continue;
        const ns_json *res = ali_json_list(h, z, "AvailableResources", "AvailableResource");
        for (size_t r = 0; r < h->json_size(res); r++) {
            const ns_json *ar = h->json_at(res, r);
            const char *type = ali_json_str(h, ar, "Type");
            if (!type || strcmp(type, "InstanceType") != 0)
                continue;
            const ns_json *sup = ali_json_list(h, ar, "SupportedResources", "SupportedResource");
            for (size_t k = 0; k < h->json_size(sup); k++) {
                const ns_json *sr = h->json_at(sup, k);
                const char *value = ali_json_str(h, sr, "Value"), *st = ali_json_str(h, sr, "Status");
                ali_entry *e = value ? (ali_entry *)ali_catalog_find(c, value) : NULL;
                bool sold_out = st && strcmp(st, "SoldOut") == 0;
                if (!e || (st && strcmp(st, "Available") != 0 && !sold_out))
                    continue;
                *(spot ? &e->spot_zones : &e->od_zones) |= 1u << zi;
                if (sold_out)
                    *(spot ? &e->spot_sold_out : &e->od_sold_out) |= 1u << zi;
            }
        }
    }
    h->json_free(doc);
    return NS_OK;
}

/* The cluster's CNI (ACK's DescribeClusterDetail, asked once): terway's pod density depends on ENIs. */
static int fetch_cni(ali_state *s)
{
    pthread_mutex_lock(&s->lock);
    bool known = s->cni[0] != '\0';
    pthread_mutex_unlock(&s->lock);
    if (known)
        return NS_OK;
    if (!s->ack) {
        pthread_mutex_lock(&s->lock);
        ali_copy(s->cni, sizeof(s->cni), "unknown");
        pthread_mutex_unlock(&s->lock);
        return NS_OK;
    }
    char path[200];
    snprintf(path, sizeof(path), "/clusters/%s", s->cluster_id);
    ns_json *doc = NULL;
    int rc = ali_roa(s->client, "DescribeClusterDetail", "GET", path, NULL, NULL, &doc, NULL);
    if (rc < 0)
        return rc;
    const ns_host *h = s->host;
    /* meta_data is a JSON document in a string: {"Capabilities": {"Network": "terway-eniip"}, ...} */
    const char *meta = ali_json_str(h, doc, "meta_data");
    ns_json *m = meta ? h->json_parse(meta, strlen(meta)) : NULL;
    const char *cni = ali_json_str(h, h->json_get(m, "Capabilities"), "Network");
    pthread_mutex_lock(&s->lock);
    ali_copy(s->cni, sizeof(s->cni), cni ? cni : "unknown");
    pthread_mutex_unlock(&s->lock);
    h->json_free(m);
    h->json_free(doc);
    return NS_OK;
}

/* The cache's fetch: owner is the provider state. */
static int fetch_catalog(void *owner, prov_snapshot **out)
{
    ali_state *s = owner;
    ali_catalog *c = calloc(1, sizeof(*c));
    if (!c)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory building the instance-type catalog");
    int rc = fetch_types(s, c);
    if (rc == NS_OK)
        rc = fetch_availability(s, c, false);
    if (rc == NS_OK)
        rc = fetch_availability(s, c, true);
    if (rc == NS_OK)
        rc = fetch_cni(s);
    if (rc < 0) {
        ali_catalog_free(c);
        return rc;
    }
    ali_pricing_apply(s, c);
    ns_log_field fields[] = {prov_log_int("types", (int64_t)c->n), prov_log_int("zones", (int64_t)c->n_zones),
                             prov_log_str("region", s->region)};
    prov_log(s->host, s->ctx, NS_LOG_INFO, "alibaba instance-type catalog refreshed", fields, 3);
    *out = &c->snap;
    return NS_OK;
}

static void free_snapshot(prov_snapshot *snap)
{
    ali_catalog_free(prov_snapshot_of(snap, ali_catalog, snap));
}

void ali_catalog_cache_init(ali_state *s, int64_t ttl_ms)
{
    s->catalogs = (prov_snapshot_cache){&s->lock, NULL, ttl_ms, fetch_catalog, free_snapshot, s, s->host, s->ctx};
}

int ali_catalog_acquire(ali_state *s, ali_catalog **out)
{
    prov_snapshot *snap = NULL;
    int rc = prov_snapshot_acquire(&s->catalogs, &snap);
    if (rc == NS_OK)
        *out = prov_snapshot_of(snap, ali_catalog, snap);
    return rc;
}

void ali_catalog_release(ali_state *s, ali_catalog *c)
{
    prov_snapshot_release(&s->catalogs, c ? &c->snap : NULL);
}

/* ACK's reservation policy for the kubelet: CPU 6% of the first core, 1% of the second, 0.5% of the third and fourth,
 * 0.25% above four; memory min(11 MiB x pods + 255 MiB, 25% of memory). */
static int64_t ack_cpu_reserved(int64_t cpu_milli)
{
    int64_t r = 0;
    if (cpu_milli >= 1000)
        r += 60;
    if (cpu_milli >= 2000)
        r += 10;
    if (cpu_milli >= 3000)
        r += 5;
    if (cpu_milli >= 4000)
        r += 5;
    if (cpu_milli > 4000)
        r += (cpu_milli - 4000) / 400;
    return r;
}

static int64_t max_pods(const ali_state *s, const ali_type *t, const ali_kubelet *k)
{
    int64_t pods = 110;
    if (k->max_pods >= 0)
        pods = k->max_pods;
    else if (strncasecmp(s->cni, "terway", 6) == 0 && t->eni_quantity > 1)
        pods = (t->eni_quantity - 1) * t->eni_ips + 3;
    else if (strcasecmp(s->cni, "flannel") == 0)
        pods = 256;
    if (k->pods_per_core > 0 && k->pods_per_core * t->vcpu < pods)
        pods = k->pods_per_core * t->vcpu;
    return pods;
}

static int64_t eviction_amount(const ali_tag *m, size_t n, const char *signal, int64_t capacity, int64_t dflt)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(m[i].key, signal) == 0) {
            size_t len = strlen(m[i].value);
            if (len && m[i].value[len - 1] == '%')
                return (int64_t)ceil((double)capacity * atof(m[i].value) / 100.0);
            return ali_quantity(m[i].value, false);
        }
    return dflt;
}

static void add_extended(ns_resources *r, const char *name, int64_t v)
{
    if (v <= 0 || r->n_extended >= NS_MAX_EXTENDED_RESOURCES)
        return;
    ali_copy(r->extended[r->n_extended].name, NS_NAME_MAX, name);
    r->extended[r->n_extended++].value = v;
}

void ali_type_resources(const ali_state *s, const ali_type *t, const ali_nodeclass_spec *spec, ns_resources *cap,
                        ns_resources *kube, ns_resources *sys, ns_resources *evict)
{
    const ali_kubelet *k = &spec->kubelet;
    memset(cap, 0, sizeof(*cap));
    memset(kube, 0, sizeof(*kube));
    memset(sys, 0, sizeof(*sys));
    memset(evict, 0, sizeof(*evict));
    cap->cpu_milli = t->vcpu * 1000;
    int64_t mem = (int64_t)(t->memory_gib * GIB);
    int64_t overhead_mib = (int64_t)ceil((double)mem * s->vm_overhead / (double)MIB);
    cap->memory_bytes = mem - overhead_mib * MIB;
    cap->pods = max_pods(s, t, k);
    cap->ephemeral_storage_bytes = spec->system_disk_gib * (1LL << 30);
    if (strncasecmp(t->gpu_spec, "NVIDIA", 6) == 0)
        add_extended(cap, "nvidia.com/gpu", t->gpu_count);
    else if (strncasecmp(t->gpu_spec, "AMD", 3) == 0)
        add_extended(cap, "amd.com/gpu", t->gpu_count);
    if (strncasecmp(s->cni, "terway", 6) == 0)
        add_extended(cap, "aliyun/eni", t->eni_quantity - 1);
    int64_t mem_mib = cap->memory_bytes / MIB;
    int64_t kube_mem_mib = 11 * cap->pods + 255;
    if (kube_mem_mib > mem_mib / 4)
        kube_mem_mib = mem_mib / 4;
    kube->cpu_milli = k->kube_reserved.cpu_milli >= 0 ? k->kube_reserved.cpu_milli : ack_cpu_reserved(cap->cpu_milli);
    kube->memory_bytes = k->kube_reserved.memory_bytes >= 0 ? k->kube_reserved.memory_bytes : kube_mem_mib * MIB;
    kube->ephemeral_storage_bytes = k->kube_reserved.ephemeral_bytes >= 0 ? k->kube_reserved.ephemeral_bytes : 0;
    sys->cpu_milli = k->system_reserved.cpu_milli >= 0 ? k->system_reserved.cpu_milli : 0;
    sys->memory_bytes = k->system_reserved.memory_bytes >= 0 ? k->system_reserved.memory_bytes : 0;
    sys->ephemeral_storage_bytes = k->system_reserved.ephemeral_bytes >= 0 ? k->system_reserved.ephemeral_bytes : 0;
    /* the kubelet's hard thresholds, defaulting as the kubelet does; soft ones count too, as Karpenter takes the
     * larger of both */
    int64_t m = eviction_amount(k->eviction_hard, k->n_eviction_hard, "memory.available", cap->memory_bytes, 100 * MIB);
    int64_t ms = eviction_amount(k->eviction_soft, k->n_eviction_soft, "memory.available", cap->memory_bytes, 0);
    int64_t d = eviction_amount(k->eviction_hard, k->n_eviction_hard, "nodefs.available",
                                cap->ephemeral_storage_bytes, cap->ephemeral_storage_bytes / 10);
    int64_t ds = eviction_amount(k->eviction_soft, k->n_eviction_soft, "nodefs.available",
                                 cap->ephemeral_storage_bytes, 0);
    evict->memory_bytes = m > ms ? m : ms;
    evict->ephemeral_storage_bytes = d > ds ? d : ds;
}

/* "ecs.g7.large" -> family token "g7" and size "large"; "g7" -> category "g", generation "7". */
static void name_parts(const ali_type *t, char *token, size_t tl, char *size, size_t sl, char *category, size_t cl,
                       char *generation, size_t gl)
{
    const char *a = strchr(t->name, '.'), *b = a ? strchr(a + 1, '.') : NULL;
    snprintf(token, tl, "%.*s", a && b ? (int)(b - a - 1) : 0, a ? a + 1 : "");
    snprintf(size, sl, "%s", b ? b + 1 : "");
    size_t i = 0;
    while (token[i] && isalpha((unsigned char)token[i]))
        i++;
    snprintf(category, cl, "%.*s", (int)i, token);
    size_t j = i;
    while (token[j] && isdigit((unsigned char)token[j]))
        j++;
    snprintf(generation, gl, "%.*s", (int)(j - i), token + i);
}

#define MAX_LABELS 20
typedef struct labels {
    ns_label items[MAX_LABELS];
    size_t n;
    char buf[MAX_LABELS][96];
} labels;

static void put(labels *l, const char *key, const char *value)
{
    if (l->n < MAX_LABELS && value && *value) {
        ali_copy(l->buf[l->n], sizeof(l->buf[l->n]), value);
        l->items[l->n] = (ns_label){key, l->buf[l->n]};
        l->n++;
    }
}

static void lower_kebab(char *s)
{
    for (; *s; s++)
        *s = *s == ' ' || *s == '/' || *s == '*' ? '-' : (char)tolower((unsigned char)*s);
}

static void type_labels(const ali_state *s, const ali_type *t, labels *l)
{
    char token[32], size[32], category[16], generation[8], num[32];
    name_parts(t, token, sizeof(token), size, sizeof(size), category, sizeof(category), generation,
               sizeof(generation));
    l->n = 0;
    put(l, "node.kubernetes.io/instance-type", t->name);
    put(l, "kubernetes.io/arch", t->arch);
    put(l, "kubernetes.io/os", "linux");
    put(l, "topology.kubernetes.io/region", s->region);
    put(l, "karpenter.k8s.alibabacloud/instance-category", category);
    put(l, "karpenter.k8s.alibabacloud/instance-family", token);
    put(l, "karpenter.k8s.alibabacloud/instance-generation", generation);
    put(l, "karpenter.k8s.alibabacloud/instance-size", size);
    snprintf(num, sizeof(num), "%lld", (long long)t->vcpu);
    put(l, "karpenter.k8s.alibabacloud/instance-cpu", num);
    snprintf(num, sizeof(num), "%lld", (long long)(t->memory_gib * 1024));
    put(l, "karpenter.k8s.alibabacloud/instance-memory", num);
    char model[64];
    ali_copy(model, sizeof(model), strstr(t->cpu_model, "AMD") ? "amd" : strstr(t->cpu_model, "Intel") ? "intel" : "");
    put(l, "karpenter.k8s.alibabacloud/instance-cpu-model", model);
    if (t->gpu_count > 0 && t->gpu_spec[0]) {
        char name[64], maker[32];
        ali_copy(name, sizeof(name), t->gpu_spec);
        snprintf(maker, sizeof(maker), "%.*s", (int)strcspn(t->gpu_spec, " "), t->gpu_spec);
        lower_kebab(name);
        lower_kebab(maker);
        put(l, "karpenter.k8s.alibabacloud/instance-gpu-name", name);
        put(l, "karpenter.k8s.alibabacloud/instance-gpu-manufacturer", maker);
        snprintf(num, sizeof(num), "%lld", (long long)t->gpu_count);
        put(l, "karpenter.k8s.alibabacloud/instance-gpu-count", num);
        snprintf(num, sizeof(num), "%lld", (long long)t->gpu_memory_mib);
        put(l, "karpenter.k8s.alibabacloud/instance-gpu-memory", num);
    }
}

/* Whether the node class has an image for the type's architecture (aliases cover both). */
static bool runs(const ali_nodeclass_view *v, const ali_type *t)
{
    return v->n_images == 0 || ali_view_image_for(v, t->arch) != NULL;
}

int ali_list_instance_types(void *state, const ns_nodeclass *nc, ns_instance_type_cb cb, void *cb_ctx)
{
    ali_state *s = state;
    ali_nodeclass_view view;
    int rc = ali_nodeclass_vswitches(s, nc, &view);
    if (rc < 0)
        return rc;
    ali_catalog *c = NULL;
    if ((rc = ali_catalog_acquire(s, &c)) < 0) {
        ali_view_free(&view);
        return rc;
    }
    ns_offering offerings[2 * ALI_MAX_ZONES];
    /* the zone ID is a label of each offering (ECS's zone IDs are the zone names), as in the reference port */
    ns_label zone_ids[ALI_MAX_ZONES];
    for (size_t z = 0; z < c->n_zones; z++)
        zone_ids[z] = (ns_label){ALI_LABEL_ZONE_ID, c->zones[z]};
    for (size_t i = 0; i < c->n && rc == 0; i++) {
        const ali_entry *e = &c->entries[i];
        if (!runs(&view, &e->t))
            continue;
        size_t n = 0;
        for (size_t z = 0; z < c->n_zones; z++) {
            if (!ali_view_vswitch_in(&view, c->zones[z]))
                continue;
            double od = e->on_demand, spot = e->spot[z] >= 0 ? e->spot[z] : od;
            uint32_t bit = 1u << z;
            if ((e->spot_zones & bit) && spot >= 0)
                offerings[n++] = (ns_offering){sizeof(ns_offering), c->zones[z], NS_CAPACITY_SPOT, spot,
                                               !(e->spot_sold_out & bit), NULL, &zone_ids[z], 1,
                                               NS_RESERVATION_CAPACITY_UNKNOWN};
            if ((e->od_zones & bit) && od >= 0)
                offerings[n++] = (ns_offering){sizeof(ns_offering), c->zones[z], NS_CAPACITY_ON_DEMAND, od,
                                               !(e->od_sold_out & bit), NULL, &zone_ids[z], 1,
                                               NS_RESERVATION_CAPACITY_UNKNOWN};
        }
        if (n == 0)
            continue;
        labels l;
        type_labels(s, &e->t, &l);
        ns_instance_type t = {.struct_size = sizeof(t), .name = e->t.name, .labels = l.items, .n_labels = l.n,
                              .offerings = offerings, .n_offerings = n};
        ali_type_resources(s, &e->t, view.spec, &t.capacity, &t.kube_reserved, &t.system_reserved,
                           &t.eviction_threshold);
        rc = cb(cb_ctx, &t);
    }
    ali_catalog_release(s, c);
    ali_view_free(&view);
    return rc;
}
