/*
 * The Alibaba Cloud provider's state and the functions its methods share. One file per method group:
 *   ali_provider.c    options, init, destroy, the exported table
 *   ali_catalog.c     list_instance_types (DescribeInstanceTypes, DescribeAvailableResource; labels, allocatable)
 *   ali_pricing.c     DescribePrice and DescribeSpotPriceHistory, cached; the built-in table (ali_pricing_builtin.c)
 *   ali_nodeclass.c   node class resolution: vSwitches (VPC), security groups and images (ECS, ACK versions)
 *   ali_userdata.c    bootstrap: ACK's attach script with labels, taints and kubelet settings, merged user data
 *   ali_launch.c      launch (CreateAutoProvisioningGroup instant, one ClientToken), refused offerings named
 *   ali_instances.c   terminate, list_instances, get_instance
 *   ali_events.c      poll_events (the MNS queue of ECS system events; DescribeInstances operation locks)
 *   ali_drift.c       check_drift, validate_nodeclass, list_repair_policies
 *   ali_status.c      nodeclass_status (the ECSNodeClass's resolved vSwitches, security groups, images, conditions)
 *   ali_test_hooks.c  test_inject_fault, through the emulator's control endpoint
 */
#ifndef NS_ALI_PROVIDER_H
#define NS_ALI_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <nodesmith/provider.h>

#include "ali_client.h"
#include "ali_credentials.h"
#include "prov_snapshot.h"
#include "ali_nodeclass_spec.h"

#define ALI_MAX_ZONES 32
#define ALI_MAX_SEEN_LOCKS 256
#define ALI_MAX_PENDING 32
#define ALI_MAX_DELIVERED 256

/* One ECS instance type, from DescribeInstanceTypes. */
typedef struct ali_type {
    char name[64];   /* ecs.g7.large */
    char family[48]; /* ecs.g7 */
    char arch[8];    /* amd64 or arm64 */
    char cpu_model[64];
    char gpu_spec[64];
    int64_t vcpu;
    double memory_gib;
    int64_t gpu_count;
    int64_t gpu_memory_mib;
    int64_t eni_quantity;
    int64_t eni_ips;
} ali_type;

typedef struct ali_entry {
    ali_type t;
    uint32_t od_zones;    /* bit i: the catalog's zone i sells it pay-as-you-go */
    uint32_t spot_zones;  /* bit i: ... as spot */
    uint32_t od_sold_out; /* bit i: ... but has no stock now (DescribeAvailableResource SoldOut) */
    uint32_t spot_sold_out;
    double on_demand;    /* < 0 unknown */
    bool estimated;      /* from the built-in table, not DescribePrice */
    double spot[ALI_MAX_ZONES]; /* < 0 unknown: the on-demand price stands in */
} ali_entry;

typedef struct ali_catalog {
    ali_entry *entries;
    size_t n;
    char zones[ALI_MAX_ZONES][NS_ZONE_MAX];
    size_t n_zones;
    prov_snapshot snap; /* shared between calls until the catalog_ttl ages it */
} ali_catalog;


/* On-demand prices from DescribePrice, kept across catalog refreshes. */
typedef struct ali_price {
    char type[64];
    double price;
    int64_t fetched_ms;
} ali_price;

typedef struct ali_state {
    const ns_host *host;
    ns_host_ctx *ctx;
    char region[64];
    char cluster_id[128];
    bool ack; /* cluster_mode ack (attach script) or custom (user data alone) */
    char queue[256];
    char queue_url[320];
    char kubernetes_version[16];
    double vm_overhead;
    int64_t pricing_ttl_ms, lock_poll_ms;
    bool test_hooks;
    char control_url[256];
    int max_attempts;
    ali_credentials *credentials;
    ali_client *client;
    pthread_mutex_t lock; /* guards everything below down to poll_lock */
    prov_snapshot_cache catalogs;
    ali_price *prices;
    size_t n_prices;
    char *attach_script; /* cached DescribeClusterAttachScripts answer */
    char cni[32];        /* the cluster's CNI (DescribeClusterDetail), "" until asked */
    /* instances whose operation lock was reported, a ring: a locked instance is gone within minutes */
    char seen_locks[ALI_MAX_SEEN_LOCKS][32];
    size_t n_seen_locks, next_seen_lock;
    int64_t last_lock_poll_ms;
    pthread_mutex_t poll_lock; /* one poll_events at a time: the fields below are its own */
    char delivered[ALI_MAX_DELIVERED][NS_NAME_MAX]; /* IDs of recent events taken by the core (a ring) */
    size_t next_delivered;
    ns_event pending[ALI_MAX_PENDING]; /* events the core refused, delivered again */
    char pending_receipt[ALI_MAX_PENDING][256];
    size_t n_pending;
} ali_state;

/* Catalog (ali_catalog.c). */
/* ali_catalog_acquire returns the current catalog, fetching it when it is missing or older than the TTL; release it
 * with ali_catalog_release. */
void ali_catalog_cache_init(ali_state *s, int64_t ttl_ms);
int ali_catalog_acquire(ali_state *s, ali_catalog **out);
void ali_catalog_release(ali_state *s, ali_catalog *c);
void ali_catalog_free(ali_catalog *c);
const ali_entry *ali_catalog_find(const ali_catalog *c, const char *name);
int ali_catalog_zone_index(const ali_catalog *c, const char *zone);
int ali_list_instance_types(void *state, const ns_nodeclass *nc, ns_instance_type_cb cb, void *cb_ctx);
/* Capacity, reservations and allocatable of a type under a node class (ACK's reservation policy). */
void ali_type_resources(const ali_state *s, const ali_type *t, const ali_nodeclass_spec *spec, ns_resources *capacity,
                        ns_resources *kube_reserved, ns_resources *system_reserved, ns_resources *eviction);

/* Prices (ali_pricing.c): fills entries' on_demand (DescribePrice, else the built-in table) and spot prices
 * (DescribeSpotPriceHistory, else on-demand). Failures are logged, never returned. */
void ali_pricing_apply(ali_state *s, ali_catalog *c);
/* The built-in on-demand price (CNY per hour) of a type: the family's per-vCPU and per-GiB rates. Pure. */
double ali_pricing_builtin(const char *family, int64_t vcpu, double memory_gib, int64_t gpus);

/* Node class resolution (ali_nodeclass.c). */
#define ALI_MAX_VSWITCHES 64
#define ALI_MAX_GROUPS 16
#define ALI_MAX_IMAGES 8
typedef struct ali_vswitch {
    char id[64];
    char zone[NS_ZONE_MAX];
    int64_t free_ips;
} ali_vswitch;
typedef struct ali_image {
    char id[128];
    char name[128]; /* may be empty */
    char arch[8];
} ali_image;
typedef struct ali_nodeclass_view {
    ali_nodeclass_spec *spec; /* owned */
    ali_vswitch vswitches[ALI_MAX_VSWITCHES];
    size_t n_vswitches;
    char groups[ALI_MAX_GROUPS][64];
    char group_names[ALI_MAX_GROUPS][128];
    size_t n_groups;
    ali_image images[ALI_MAX_IMAGES];
    size_t n_images;
} ali_nodeclass_view;
int ali_nodeclass_parse(ali_state *s, const ns_nodeclass *nc, ali_nodeclass_spec **out);
/* Resolves vSwitches only (list_instance_types), or everything (launch, drift): NS_ERR_INVALID_CONFIG when a
 * selector selects nothing. Release with ali_view_free. */
int ali_nodeclass_vswitches(ali_state *s, const ns_nodeclass *nc, ali_nodeclass_view *out);
int ali_nodeclass_resolve(ali_state *s, const ns_nodeclass *nc, ali_nodeclass_view *out);
/* The three resolutions one by one, for nodeclass_status (v->spec parsed): an error only when the cloud could not
 * be asked; when nothing resolved, NS_OK with the part empty and *why saying which selector and why. */
int ali_resolve_vswitches(ali_state *s, ali_nodeclass_view *v, char *why, size_t len);
int ali_resolve_groups(ali_state *s, ali_nodeclass_view *v, char *why, size_t len);
int ali_resolve_images(ali_state *s, ali_nodeclass_view *v, char *why, size_t len);
void ali_view_free(ali_nodeclass_view *v);
/* The vSwitch of a zone with the most free addresses, or NULL. */
const ali_vswitch *ali_view_vswitch_in(const ali_nodeclass_view *v, const char *zone);
const ali_image *ali_view_image_for(const ali_nodeclass_view *v, const char *arch);

/* User data (ali_userdata.c): the base64 user data of a launch, owned by the caller. */
int ali_userdata_build(ali_state *s, const ali_nodeclass_spec *spec, const ns_launch_request *req, char **out_b64);
/* Pure: the attach-script command line with labels, taints and kubelet settings; the MIME merge. */
char *ali_userdata_attach_command(const char *script, const char *cluster_id, const ns_label *labels, size_t n_labels,
                                  const ns_taint *taints, size_t n_taints, const ns_taint *startup, size_t n_startup,
                                  const ali_kubelet *k, bool format_disk);
char *ali_userdata_merge(const char *bootstrap, const char *user);

/* Methods. */
int ali_launch(void *state, const ns_launch_request *req, ns_launch_result *result);
int ali_terminate(void *state, const char *provider_id, bool *already_gone);
int ali_list_instances(void *state, ns_instance_cb cb, void *cb_ctx);
int ali_get_instance(void *state, const char *provider_id, ns_instance *out);
int ali_poll_events(void *state, ns_event_cb cb, void *cb_ctx);
int ali_check_drift(void *state, const ns_instance *instance, const ns_nodeclass *nc, bool *drifted, char *reason,
                    size_t reason_len);
int ali_validate_nodeclass(void *state, const ns_nodeclass *nc);
int ali_nodeclass_status(void *state, const ns_nodeclass *nc, ns_json **status);
int ali_list_repair_policies(void *state, ns_repair_policy_cb cb, void *cb_ctx);
int ali_test_inject_fault(void *state, const ns_fault *fault);

/* Instances (ali_instances.c). */
/* "<region>.<instance-id>" (ACK's provider ID) -> the instance ID, or NULL. */
const char *ali_instance_id_of(const ali_state *s, const char *provider_id);
/* One DescribeInstances entry into *out; also the vSwitch and security groups for drift when asked. */
int ali_instance_from_json(ali_state *s, const ns_json *in, ns_instance *out);
/* DescribeInstances of one instance: its JSON (free the doc), or NS_ERR_NOT_FOUND. */
int ali_describe_instance(ali_state *s, const char *instance_id, ns_json **doc, const ns_json **inst);
/* Called for each instance of a listing with its DescribeInstances entry (borrowed: valid during the call); a
 * non-zero return stops the listing and is returned by it. */
typedef int (*ali_instance_fn)(ali_state *s, const ns_json *in, void *ctx);
/* Pages DescribeInstances over the instances tagged as owned by this cluster, those with the operation lock
 * lock_reason only when it is not NULL. NS_OK, the first error of the API, or fn's first non-zero return. */
int ali_each_owned_instance(ali_state *s, const char *lock_reason, ali_instance_fn fn, void *ctx);

bool ali_copy(char *dst, size_t len, const char *src);

#define ALI_TAG_CLUSTER_PREFIX "kubernetes.io/cluster/"
#define ALI_TAG_NODEPOOL "karpenter.sh/nodepool"
#define ALI_TAG_NODECLAIM "karpenter.sh/nodeclaim"
#define ALI_TAG_NODECLASS "karpenter.k8s.alibabacloud/ecsnodeclass"
#define ALI_TAG_MANAGED_BY "karpenter.sh/managed-by"
#define ALI_TAG_ACK_CLUSTER "ack.aliyun.com"
#define ALI_LABEL_ZONE_ID "topology.k8s.alibabacloud/zone-id"

#endif
