/*
 * The sim's instance-type catalog: built-in tables (sim_catalog_builtin.c) or a JSON file (sim_catalog_file.c),
 * then turned into ns_instance_type records per node class (sim_catalog_types.c).
 */
#ifndef SIM_CATALOG_H
#define SIM_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodesmith/provider.h"

typedef struct sim_state sim_state;
typedef struct sim_nc sim_nc;

#define SIM_FIELD_MAX 32
#define SIM_MAX_ZONES 16 /* option `zones` */

#define SIM_MAX_OFFERS (SIM_MAX_ZONES * 3) /* zone x spot, on-demand, reserved */
#define SIM_MAX_CUSTOM_LABELS 8

/* One offering a catalog file declares for its type. */
typedef struct sim_offer {
    char zone[NS_ZONE_MAX];
    const char *capacity_type; /* NS_CAPACITY_*, static */
    double price;              /* per hour, as declared (a Windows node class adds its licence) */
    bool available;
    char reservation_id[NS_NAME_MAX]; /* reserved only */
    int64_t reservation_capacity;     /* reserved only: instances the reservation holds */
} sim_offer;

/* What a catalog file may state beyond the type's shape: its offerings (replacing every zone x spot/on-demand) and
 * labels of its own. */
typedef struct sim_itype_file {
    sim_offer offers[SIM_MAX_OFFERS];
    size_t n_offers; /* 0: the generated offerings */
    ns_label labels[SIM_MAX_CUSTOM_LABELS]; /* key and value point into text */
    size_t n_labels;
    char text[SIM_MAX_CUSTOM_LABELS][2][NS_NAME_MAX];
} sim_itype_file;

typedef struct sim_itype {
    char name[NS_NAME_MAX];
    char family[SIM_FIELD_MAX];
    char category[SIM_FIELD_MAX];
    char size[SIM_FIELD_MAX];
    char arch[SIM_FIELD_MAX]; /* "amd64" or "arm64" */
    char cpu_manufacturer[SIM_FIELD_MAX];
    char hypervisor[SIM_FIELD_MAX]; /* empty for bare metal */
    char gpu_name[SIM_FIELD_MAX];
    char gpu_manufacturer[SIM_FIELD_MAX];
    int64_t generation;
    int64_t vcpu;
    int64_t memory_mib; /* as sold, before the VM overhead */
    int64_t gpu_count;
    int64_t gpu_memory_mib; /* per GPU */
    int64_t max_pods;       /* ENI-limited */
    bool windows_capable;
    double od_price; /* Linux on-demand per hour; < 0 while unknown during loading */
    sim_itype_file *file; /* owned; NULL when the catalog states nothing beyond the shape */
} sim_itype;

/* Owned array sorted by name; free with sim_catalog_free. */
typedef struct sim_catalog {
    sim_itype *types;
    size_t n;
} sim_catalog;

/* The offering a catalog file declares for the type in zone with capacity_type, or NULL (also when it declares none).
 */
const sim_offer *sim_itype_offer(const sim_itype *t, const char *zone, const char *capacity_type);
/* Parses an entry's optional "offerings" and "labels" into t->file (allocated when either is present); errors name
 * the file, the entry's line, the entry, the offering and the field. */
int sim_entry_extras(sim_state *s, const char *path, size_t line, size_t index, const ns_json *entry, sim_itype *t);

/* Whether a declared offering can take one more instance now: available, and for a reserved one, fewer instances
 * running in it than the reservation holds. Caller holds the lock. */
bool sim_offer_has_capacity(const sim_state *s, const sim_itype *t, const sim_offer *o);
int64_t sim_reserved_in_use(const sim_state *s, const sim_itype *t, const char *zone);

/* Builds the built-in catalog. On error *out is empty. */
int sim_catalog_load_builtin(sim_state *s, sim_catalog *out);
/* Loads a catalog file in the format of aws-instance-types.json, with the offerings and labels an entry states
 * (sim_entry_extras); od_price is -1 for every type. */
int sim_catalog_load_file(sim_state *s, const char *path, sim_catalog *out);
/* Sets od_price from a {"type": price} file for every type the file names. */
int sim_catalog_apply_prices(sim_state *s, const char *path, sim_catalog *cat);
/* Types whose price is still unknown take the built-in price of the same name; those without one are dropped.
 * `path` names the catalog file in messages. */
int sim_catalog_fill_missing_prices(sim_state *s, sim_catalog *cat, const char *path);
/* Sorts by name and rejects duplicates and an empty catalog, naming `source`. */
int sim_catalog_finish(sim_state *s, sim_catalog *cat, const char *source);
void sim_catalog_free(sim_catalog *cat); /* accepts NULL */

const sim_itype *sim_catalog_find(const sim_catalog *cat, const char *name);

/* ENI-limited max pods, Karpenter's formula for AWS: enis * (ips_per_eni - 1) + 2. */
int64_t sim_eni_max_pods(int64_t enis, int64_t ips_per_eni);

/* Prices. The spot price is a fixed fraction of on-demand per family, nudged per zone; always below on-demand. */
double sim_spot_fraction(const char *family, const char *zone);
/* Price per hour of one offering for the node class's OS (Windows adds a per-vCPU licence); a declared offering's
 * price is the catalog file's. */
double sim_offering_price(const sim_itype *t, const sim_nc *nc, const char *zone, const char *capacity_type);

/* Resources as Karpenter computes them for AWS: capacity without the VM memory overhead, pods from the node class's
 * kubelet maxPods (else the ENI limit) capped by podsPerCore, kube-reserved from the CPU and pod counts, eviction
 * thresholds of 100Mi memory and 10% ephemeral storage; then the kubelet's kubeReserved, systemReserved,
 * evictionHard and evictionSoft (sim_kubelet.h). nc may be NULL (defaults). */
void sim_itype_resources(const sim_itype *t, const sim_nc *nc, ns_resources *capacity, ns_resources *kube_reserved,
                         ns_resources *system_reserved, ns_resources *eviction);
void sim_itype_allocatable(const sim_itype *t, const sim_nc *nc, ns_resources *allocatable);

/* list_instance_types for the node class (ABI method). */
int sim_list_instance_types(void *state, const ns_nodeclass *nodeclass, ns_instance_type_cb cb, void *cb_ctx);

#endif
