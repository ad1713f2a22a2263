/*
 * The Azure provider's state and the functions its vtable methods share. One file per method group:
 *   azure_provider.c    options, init, destroy, the exported table
 *   azure_auth.c        Entra ID tokens: client secret, workload identity, managed identity (IMDS); cached, refreshed
 *   azure_arm.c         ARM calls: bearer token, api-version, retries (429 Retry-After, 5xx), long-running operations
 *   azure_errors.c      ARM error codes -> nodesmith categories; capacity and quota errors
 *   azure_nodeclass.c   AKSNodeClass (v1beta1, v1alpha2): parsing and validation
 *   azure_sku.c         one Resource SKU record -> labels and resources (pure)
 *   azure_catalog.c     list_instance_types (Resource SKUs, cached; offerings per zone and priority)
 *   azure_pricing.c     Retail Prices API (on-demand and spot), the built-in table as fallback
 *   azure_bootstrap.c   the AKS bootstrap script carried in customData; the node image per family
 *   azure_launch.c      launch (NIC, then VM; idempotent by the VM name derived from the claim)
 *   azure_instances.c   terminate, list_instances, get_instance, leaked NICs
 *   azure_events.c      poll_events (VM instance views, Resource Health)
 *   azure_node_events.c event_from_node_condition (ABI 5): Scheduled Events relayed as Node conditions
 *   azure_drift.c       check_drift, validate_nodeclass, list_repair_policies
 *   azure_test_hooks.c  test_inject_fault, through the emulator's control endpoint
 *   azure_status.c      nodeclass_status (ABI 4): images, kubernetesVersion, conditions
 */
#ifndef NS_AZURE_PROVIDER_H
#define NS_AZURE_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <nodesmith/provider.h>

#include "azure_auth.h"
#include "azure_nodeclass.h"
#include "azure_sku.h"
#include "prov_snapshot.h"

#define AZ_API_COMPUTE "2024-07-01"
#define AZ_API_SKUS "2021-07-01"
#define AZ_API_NETWORK "2024-05-01"
#define AZ_API_HEALTH "2022-10-01"
#define AZ_API_PRICES "2023-01-01-preview"
#define AZ_API_GALLERY "2024-03-03"
#define AZ_MAX_DELIVERED 1024
#define AZ_MAX_PENDING 64

/* The catalog as last fetched: every usable VM SKU of the location with its prices. Replaced whole. */
typedef struct az_catalog {
    az_sku *skus;
    size_t n;
    prov_snapshot snap; /* shared between calls until the catalog_ttl ages it */
} az_catalog;

typedef struct az_price {
    char name[64];
    double on_demand; /* < 0 unknown */
    double spot;      /* < 0 unknown */
} az_price;

typedef struct az_price_list {
    az_price *items;
    size_t n;
    int64_t fetched_ms;
} az_price_list;

typedef struct az_state {
    const ns_host *host;
    ns_host_ctx *ctx;
    char subscription[64];
    char location[64];
    char node_rg[128];
    char cluster[128];
    char arm[256];     /* "https://management.azure.com" */
    char prices[256];  /* "https://prices.azure.com", "" = none (national clouds): the built-in table */
    char default_subnet[512];
    char kubernetes_version[16];
    char image_version[64];
    char cluster_endpoint[256];
    char bootstrap_token[128];
    char ssh_key[1024];
    char network_plugin[32];
    char network_plugin_mode[32];
    char network_dataplane[32];
    char kubelet_client_id[64];
    char dns_service_ip[64];
    char windows_cse_package[300];
    char tenant[64];
    int64_t pricing_ttl_ms;
    int64_t timeout_ms;
    int max_attempts;
    bool test_hooks;
    char control_url[256];
    az_auth *auth;
    pthread_mutex_t lock; /* guards everything below */
    prov_snapshot_cache catalogs;
    az_price_list *price_list;
    char delivered[AZ_MAX_DELIVERED][NS_NAME_MAX]; /* event IDs already taken by the core (a ring) */
    size_t n_delivered, next_delivered;
} az_state;

/* Catalog (azure_catalog.c). */
/* az_catalog_acquire returns the current catalog, fetching it when it is missing or older than the TTL; release it
 * with az_catalog_release. az_catalog_current is the current one or NULL, for a caller holding s->lock. */
void az_catalog_cache_init(az_state *s, int64_t ttl_ms);
const az_catalog *az_catalog_current(const az_state *s);
int az_catalog_acquire(az_state *s, az_catalog **out);
void az_catalog_release(az_state *s, az_catalog *c);
void az_catalog_free(az_catalog *c);
const az_sku *az_catalog_find(const az_catalog *c, const char *name);
int az_list_instance_types(void *state, const ns_nodeclass *nodeclass, ns_instance_type_cb cb, void *cb_ctx);
/* The allocatable resources of a SKU under a node class (capacity minus AKS's reservations and eviction). */
void az_sku_allocatable(const az_state *s, const az_sku *sku, const az_nodeclass *nc, ns_resources *out);
/* Whether the node class's image can run the size (Windows Server images are x64 only). */
bool az_sku_runs(const az_sku *sku, const az_nodeclass *nc);

/* Prices (azure_pricing.c): refresh asks the Retail Prices API when due; a failure is logged, never returned. */
void az_pricing_refresh(az_state *s);
/* On-demand and spot price of a SKU: the API's, else the built-in table's (spot estimated); < 0 when unknown. */
void az_price_of(az_state *s, const char *sku, double *on_demand, double *spot);
void az_price_list_free(az_price_list *l);

/* Naming: the VM and NIC of a node claim ("aks-<claim>"), ARM IDs, provider IDs. */
int az_vm_name(const char *nodeclaim, char *out, size_t len);
/* "azure:///subscriptions/.../virtualMachines/<name>" -> the VM name into out; false when it is not one of ours. */
bool az_vm_name_of(const az_state *s, const char *provider_id, char *out, size_t len);
/* The ARM path (below the ARM host) of a resource in the node resource group: "Compute", "virtualMachines", name. */
void az_resource_path(const az_state *s, const char *provider, const char *type, const char *name, char *out,
                      size_t len);
/* Fills out from an ARM VM resource. NS_OK or an error naming the field. */
int az_instance_from_vm(az_state *s, const ns_json *vm, ns_instance *out);

/* Methods. */
int az_launch(void *state, const ns_launch_request *req, ns_launch_result *result);
int az_terminate(void *state, const char *provider_id, bool *already_gone);
int az_list_instances(void *state, ns_instance_cb cb, void *cb_ctx);
int az_get_instance(void *state, const char *provider_id, ns_instance *out);
int az_poll_events(void *state, ns_event_cb cb, void *cb_ctx);
int az_check_drift(void *state, const ns_instance *instance, const ns_nodeclass *nodeclass, bool *drifted,
                   char *reason, size_t reason_len);
int az_validate_nodeclass(void *state, const ns_nodeclass *nodeclass);
int az_list_repair_policies(void *state, ns_repair_policy_cb cb, void *cb_ctx);
int az_test_inject_fault(void *state, const ns_fault *fault);
int az_nodeclass_status(void *state, const ns_nodeclass *nodeclass, ns_json **status);
int az_event_from_node_condition(void *state, const ns_node_condition *condition, ns_event *event, bool *is_event);
/* Deletes NICs of this cluster that no VM uses (a launch that failed between the NIC and the VM). */
int az_collect_leaked_nics(az_state *s);

/* The lock serialising work on one node claim's VM and NIC within the process (launch, leaked-NIC collection). */
pthread_mutex_t *az_claim_lock(const char *vm_name);

/* Parses and checks the node class, reporting with host->error (azure_nodeclass.c does the work). */
int az_nodeclass_read(az_state *s, const ns_nodeclass *nc, az_nodeclass *out);

bool az_copy(char *dst, size_t len, const char *src);

/* Tags (slashes become underscores, as the reference port writes them). */
#define AZ_TAG_CLUSTER "karpenter.azure.com_cluster"
#define AZ_TAG_NODEPOOL "karpenter.sh_nodepool"
#define AZ_TAG_NODECLAIM "karpenter.sh_nodeclaim"
#define AZ_TAG_NODECLASS "karpenter.azure.com_aksnodeclass"
#define AZ_TAG_BILLING "compute.aks.billing"
#define AZ_TAG_IMAGE "karpenter.azure.com_image-version"

#endif
