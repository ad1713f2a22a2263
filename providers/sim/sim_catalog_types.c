/*
 * list_instance_types: each catalog entry becomes an ns_instance_type for the node class, with labels in AWS's
 * spelling (so AWS NodePool requirements select the same types) and one offering per zone and capacity type, or the
 * offerings and labels a catalog file declared for it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim_catalog.h"
#include "sim_nodeclass.h"
#include "sim_state.h"

#define SIM_MAX_LABELS (24 + SIM_MAX_CUSTOM_LABELS)
#define SIM_MAX_NUMBERS 8

/* The labels of one type, with storage for the values that are numbers. Lives for one callback. */
typedef struct sim_label_set {
    ns_label labels[SIM_MAX_LABELS];
    size_t n;
    char numbers[SIM_MAX_NUMBERS][24];
    size_t n_numbers;
} sim_label_set;

static void sim_label(sim_label_set *ls, const char *key, const char *value)
{
    ls->labels[ls->n].key = key;
    ls->labels[ls->n].value = value;
    ls->n++;
}

static void sim_label_int(sim_label_set *ls, const char *key, int64_t value)
{
    char *buf = ls->numbers[ls->n_numbers++];
    snprintf(buf, sizeof(ls->numbers[0]), "%" PRId64, value);
    sim_label(ls, key, buf);
}

static void sim_labels_build(const sim_state *s, const sim_itype *t, const sim_nc *nc, sim_label_set *ls)
{
    memset(ls, 0, sizeof(*ls));
    if (s->violation != SIM_VIOLATION_MISSING_LABEL)
        sim_label(ls, "kubernetes.io/arch", t->arch);
    sim_label(ls, "kubernetes.io/os", sim_os_label(nc->os));
    sim_label(ls, "node.kubernetes.io/instance-type", t->name);
    sim_label(ls, "topology.kubernetes.io/region", s->region);
    sim_label(ls, "karpenter.k8s.aws/instance-category", t->category);
    sim_label(ls, "karpenter.k8s.aws/instance-family", t->family);
    sim_label_int(ls, "karpenter.k8s.aws/instance-generation", t->generation);
    sim_label(ls, "karpenter.k8s.aws/instance-size", t->size);
    sim_label_int(ls, "karpenter.k8s.aws/instance-cpu", t->vcpu);
    if (t->cpu_manufacturer[0])
        sim_label(ls, "karpenter.k8s.aws/instance-cpu-manufacturer", t->cpu_manufacturer);
    sim_label_int(ls, "karpenter.k8s.aws/instance-memory", t->memory_mib);
    if (t->hypervisor[0])
        sim_label(ls, "karpenter.k8s.aws/instance-hypervisor", t->hypervisor);
    if (t->gpu_count > 0) {
        sim_label(ls, "karpenter.k8s.aws/instance-gpu-name", t->gpu_name);
        sim_label_int(ls, "karpenter.k8s.aws/instance-gpu-count", t->gpu_count);
        sim_label(ls, "karpenter.k8s.aws/instance-gpu-manufacturer", t->gpu_manufacturer);
        sim_label_int(ls, "karpenter.k8s.aws/instance-gpu-memory", t->gpu_memory_mib);
    }
    if (sim_os_windows_build(nc->os))
        sim_label(ls, "node.kubernetes.io/windows-build", sim_os_windows_build(nc->os));
    for (size_t i = 0; t->file && i < t->file->n_labels; i++)
        sim_label(ls, t->file->labels[i].key, t->file->labels[i].value);
}

/* Instances a reserved offering holds now: those of its type and zone launched as reserved and not terminated. */
int64_t sim_reserved_in_use(const sim_state *s, const sim_itype *t, const char *zone)
{
    int64_t n = 0;
    for (size_t i = 0; i < s->instances.n; i++) {
        const sim_instance *inst = &s->instances.items[i];
        n += strcmp(inst->capacity_type, NS_CAPACITY_RESERVED) == 0 && inst->instance_type == t->name &&
             inst->state != NS_INSTANCE_TERMINATED && strcmp(sim_instance_get(inst, SIM_NAME_ZONE), zone) == 0;
    }
    return n;
}

bool sim_offer_has_capacity(const sim_state *s, const sim_itype *t, const sim_offer *o)
{
    return o->available && (strcmp(o->capacity_type, NS_CAPACITY_RESERVED) != 0 ||
                            sim_reserved_in_use(s, t, o->zone) < o->reservation_capacity);
}

/* The offerings a catalog file declared, in the node class's zones. Caller holds the lock. */
static size_t sim_declared_offerings(sim_state *s, const sim_itype *t, const sim_nc *nc, ns_offering *out)
{
    size_t n = 0;
    for (size_t i = 0; i < t->file->n_offers; i++) {
        const sim_offer *d = &t->file->offers[i];
        int z = sim_zone_index(s, d->zone);
        if (z < 0 || !nc->zone_allowed[z])
            continue;
        ns_offering *o = &out[n++];
        memset(o, 0, sizeof(*o));
        o->struct_size = sizeof(*o);
        o->zone = d->zone;
        o->capacity_type = d->capacity_type;
        o->price_per_hour = sim_offering_price(t, nc, d->zone, d->capacity_type);
        o->available = sim_offer_has_capacity(s, t, d) &&
                       !sim_faults_capacity_exhausted(&s->faults, t->name, d->zone, d->capacity_type);
        o->reservation_id = strcmp(d->capacity_type, NS_CAPACITY_RESERVED) == 0 ? d->reservation_id : NULL;
        o->reservation_capacity = NS_RESERVATION_CAPACITY_UNKNOWN;
        if (o->reservation_id) {
            int64_t left = d->reservation_capacity - sim_reserved_in_use(s, t, d->zone);
            o->reservation_capacity = o->available && left > 0 ? left : 0;
        }
    }
    return n;
}

/* Offerings of one type in the node class's zones; availability reflects injected capacity faults. */
static size_t sim_offerings_build(sim_state *s, const sim_itype *t, const sim_nc *nc, ns_offering *out)
{
    static const char *const capacity_types[] = {NS_CAPACITY_SPOT, NS_CAPACITY_ON_DEMAND};
    size_t n = 0;
    pthread_mutex_lock(&s->lock);
    if (t->file && t->file->n_offers) {
        n = sim_declared_offerings(s, t, nc, out);
        pthread_mutex_unlock(&s->lock);
        return n;
    }
    for (size_t z = 0; z < s->n_zones; z++) {
        if (!nc->zone_allowed[z])
            continue;
        for (size_t c = 0; c < 2; c++) {
            ns_offering *o = &out[n++];
            memset(o, 0, sizeof(*o));
            o->struct_size = sizeof(*o);
            o->zone = s->zones[z];
            o->capacity_type = capacity_types[c];
            o->price_per_hour = sim_offering_price(t, nc, s->zones[z], capacity_types[c]);
            if (s->violation == SIM_VIOLATION_NEGATIVE_PRICE && c == 0)
                o->price_per_hour = -o->price_per_hour;
            o->available = !sim_faults_capacity_exhausted(&s->faults, t->name, s->zones[z], capacity_types[c]);
        }
    }
    pthread_mutex_unlock(&s->lock);
    return n;
}

int sim_list_instance_types(void *state, const ns_nodeclass *nodeclass, ns_instance_type_cb cb, void *cb_ctx)
{
    sim_state *s = state;
    if (!cb)
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "list_instance_types: callback is NULL");
    int rc = sim_fault_enter(s, "list_instance_types");
    if (rc != NS_OK)
        return rc;
    sim_nc nc;
    rc = sim_nc_parse(s, nodeclass, &nc);
    if (rc != NS_OK)
        return rc;

    for (size_t i = 0; i < s->catalog.n; i++) {
        const sim_itype *t = &s->catalog.types[i];
        if (nc.os != SIM_OS_LINUX && !t->windows_capable)
            continue;
        sim_label_set ls;
        ns_offering offerings[SIM_MAX_OFFERS];
        ns_instance_type it;
        memset(&it, 0, sizeof(it));
        it.struct_size = sizeof(it);
        it.name = t->name;
        sim_labels_build(s, t, &nc, &ls);
        it.labels = ls.labels;
        it.n_labels = ls.n;
        sim_itype_resources(t, &nc, &it.capacity, &it.kube_reserved, &it.system_reserved, &it.eviction_threshold);
        it.offerings = offerings;
        it.n_offerings = sim_offerings_build(s, t, &nc, offerings);
        rc = cb(cb_ctx, &it);
        if (rc != 0)
            return rc;
    }
    return NS_OK;
}
