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
} sim_itype;

/* Owned array sorted by name; free with sim_catalog_free. */
typedef struct sim_catalog {
    sim_itype *types;
    size_t n;
} sim_catalog;

/* Builds the built-in catalog. On error *out is empty. */
int sim_catalog_load_builtin(sim_state *s, sim_catalog *out);
/* Loads a catalog file in the format of aws-instance-types.json; od_price is -1 for every type. */
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
/* Price per hour of one offering for the node class's OS (Windows adds a per-vCPU licence). */
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
