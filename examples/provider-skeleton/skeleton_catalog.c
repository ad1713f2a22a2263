/*
 * The skeleton's catalog: a handful of instance types, each offered in three zones as on-demand and spot. A real
 * provider builds this from its cloud's describe/price APIs and caches it; the shape handed to the core is the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skeleton.h"

#define MIB (1024LL * 1024LL)
#define GIB (1024LL * MIB)

typedef struct sk_type_spec {
    const char *name;
    const char *arch;
    int64_t vcpu;
    int64_t memory_mib;
    int64_t gpus;
    double on_demand_price;
} sk_type_spec;

static const sk_type_spec sk_specs[] = {
    {"sk.small", "amd64", 2, 4096, 0, 0.0416},
    {"sk.medium", "amd64", 4, 8192, 0, 0.0832},
    {"sk.large", "amd64", 8, 32768, 0, 0.2016},
    {"sk.arm.medium", "arm64", 4, 8192, 0, 0.0672},
    {"sk.gpu.xlarge", "amd64", 8, 65536, 1, 1.0060},
};

static const char *const sk_capacity_types[SK_N_CAPACITY_TYPES] = {NS_CAPACITY_ON_DEMAND, NS_CAPACITY_SPOT};

/* Spot sells at a discount that differs a little per zone, as it does on real clouds. */
static double sk_price(const sk_type_spec *spec, size_t zone, size_t capacity_type)
{
    if (capacity_type == 0)
        return spec->on_demand_price;
    return spec->on_demand_price * (0.30 + 0.05 * (double)zone);
}

static ns_resources sk_capacity(const sk_type *type)
{
    ns_resources r = {0};

    r.cpu_milli = type->vcpu * 1000;
    r.memory_bytes = type->memory_mib * MIB;
    r.pods = type->vcpu <= 2 ? 58 : 110;
    r.ephemeral_storage_bytes = 20 * GIB;
    if (type->gpus > 0) {
        snprintf(r.extended[0].name, sizeof(r.extended[0].name), "nvidia.com/gpu");
        r.extended[0].value = type->gpus;
        r.n_extended = 1;
    }
    return r;
}

/* Karpenter's kubelet defaults: 6% of the first core, 1% of the next, 0.5% of the next two, 0.25% beyond; 11 MiB
 * per pod plus 255 MiB of memory. */
static ns_resources sk_kube_reserved(const sk_type *type)
{
    ns_resources r = {0};
    int64_t cores = type->vcpu;

    r.cpu_milli = 60 + (cores > 1 ? 10 : 0) + (cores > 2 ? 5 * (cores > 3 ? 2 : 1) : 0) +
                  (cores > 4 ? (cores - 4) * 25 / 10 : 0);
    r.memory_bytes = (11 * sk_capacity(type).pods + 255) * MIB;
    r.ephemeral_storage_bytes = 1 * GIB;
    return r;
}

static ns_resources sk_system_reserved(void)
{
    ns_resources r = {0};

    r.cpu_milli = 100;
    r.memory_bytes = 100 * MIB;
    return r;
}

static ns_resources sk_eviction_threshold(void)
{
    ns_resources r = {0};

    r.memory_bytes = 100 * MIB;
    r.ephemeral_storage_bytes = 2 * GIB;
    return r;
}

ns_resources sk_catalog_allocatable(const sk_type *type)
{
    ns_resources r = sk_capacity(type);
    ns_resources kube = sk_kube_reserved(type), sys = sk_system_reserved(), evict = sk_eviction_threshold();

    r.cpu_milli -= kube.cpu_milli + sys.cpu_milli + evict.cpu_milli;
    r.memory_bytes -= kube.memory_bytes + sys.memory_bytes + evict.memory_bytes;
    r.ephemeral_storage_bytes -= kube.ephemeral_storage_bytes + sys.ephemeral_storage_bytes +
                                 evict.ephemeral_storage_bytes;
    return r;
}

int sk_catalog_build(sk_state *st)
{
    size_t n = sizeof(sk_specs) / sizeof(sk_specs[0]);

    for (size_t z = 0; z < SK_N_ZONES; z++)
        snprintf(st->zones[z], sizeof(st->zones[z]), "%s%c", st->region, (char)('a' + z));
    st->types = calloc(n, sizeof(*st->types));
    if (!st->types)
        return NS_ERROR(st->host, st->ctx, NS_ERR_INTERNAL, "allocating the catalog of %zu types: out of memory", n);
    st->n_types = n;
    for (size_t i = 0; i < n; i++) {
        const sk_type_spec *spec = &sk_specs[i];
        sk_type *t = &st->types[i];

        t->name = spec->name;
        t->arch = spec->arch;
        t->vcpu = spec->vcpu;
        t->memory_mib = spec->memory_mib;
        t->gpus = spec->gpus;
        t->on_demand_price = spec->on_demand_price;
        t->labels[0] = (ns_label){"kubernetes.io/arch", spec->arch};
        t->labels[1] = (ns_label){"kubernetes.io/os", "linux"};
        t->labels[2] = (ns_label){"node.kubernetes.io/instance-type", spec->name};
        t->labels[3] = (ns_label){"topology.kubernetes.io/region", st->region};
        for (size_t z = 0; z < SK_N_ZONES; z++) {
            for (size_t c = 0; c < SK_N_CAPACITY_TYPES; c++) {
                ns_offering *o = &t->offerings[z * SK_N_CAPACITY_TYPES + c];

                o->struct_size = sizeof(*o);
                o->zone = st->zones[z];
                o->capacity_type = sk_capacity_types[c];
                o->price_per_hour = sk_price(spec, z, c);
                o->available = true;
            }
        }
    }
    return NS_OK;
}

void sk_catalog_free(sk_state *st)
{
    free(st->types);
    st->types = NULL;
    st->n_types = 0;
}

const sk_type *sk_catalog_find(const sk_state *st, const char *name)
{
    for (size_t i = 0; name && i < st->n_types; i++)
        if (strcmp(st->types[i].name, name) == 0)
            return &st->types[i];
    return NULL;
}

const ns_offering *sk_catalog_offering(const sk_type *type, const char *zone, const char *capacity_type)
{
    for (size_t i = 0; zone && capacity_type && i < SK_N_OFFERINGS; i++) {
        const ns_offering *o = &type->offerings[i];

        if (strcmp(o->zone, zone) == 0 && strcmp(o->capacity_type, capacity_type) == 0)
            return o;
    }
    return NULL;
}

int sk_list_instance_types(void *state, const ns_nodeclass *nodeclass, ns_instance_type_cb cb, void *cb_ctx)
{
    sk_state *st = state;
    int rc = sk_faults_before_call(st, "list_instance_types");

    (void)nodeclass; /* one catalog for every node class; a real provider filters by the class's image and network */
    for (size_t i = 0; rc == NS_OK && i < st->n_types; i++) {
        const sk_type *t = &st->types[i];
        ns_offering offerings[SK_N_OFFERINGS];
        ns_instance_type it = {0};

        /* Offerings without capacity stay listed, marked unavailable, so the scheduler knows they exist. */
        memcpy(offerings, t->offerings, sizeof(offerings));
        pthread_mutex_lock(&st->lock);
        for (size_t o = 0; o < SK_N_OFFERINGS; o++)
            offerings[o].available = !sk_faults_offering_exhausted_locked(st, t->name, offerings[o].zone,
                                                                          offerings[o].capacity_type);
        pthread_mutex_unlock(&st->lock);

        it.struct_size = sizeof(it);
        it.name = t->name;
        it.labels = t->labels;
        it.n_labels = sizeof(t->labels) / sizeof(t->labels[0]);
        it.capacity = sk_capacity(t);
        it.kube_reserved = sk_kube_reserved(t);
        it.system_reserved = sk_system_reserved();
        it.eviction_threshold = sk_eviction_threshold();
        it.offerings = offerings;
        it.n_offerings = SK_N_OFFERINGS;
        rc = cb(cb_ctx, &it);
    }
    return rc;
}
