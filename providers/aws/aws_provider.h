/*
 * The AWS provider's state and the functions its vtable methods share. One file per method group:
 *   aws_provider.c    options, init, destroy, the exported table
 *   aws_catalog.c     list_instance_types (DescribeInstanceTypes/Offerings, spot prices, cached)
 *   aws_pricing.c     on-demand prices (the Pricing API, cached; the built-in fallback)
 *   aws_nodeclass.c   node class selectors: subnets, security groups, AMIs (SSM aliases, DescribeImages)
 *   aws_reservations.c  capacity reservations the node class selects, and their reserved offerings
 *   aws_cluster.c     the cluster's endpoint, CA and service CIDR (options, else eks:DescribeCluster)
 *   aws_template.c    launch templates (user data, metadata options, block devices, tags)
 *   aws_launch.c      launch (CreateFleet instant; refused offerings reported to the core's cache)
 *   aws_instances.c   terminate, list_instances, get_instance
 *   aws_events.c      poll_events (the SQS interruption queue)
 *   aws_instance_status.c  poll_events' unhealthy instances (EC2 DescribeInstanceStatus)
 *   aws_drift.c       check_drift, validate_nodeclass, list_repair_policies
 *   aws_test_hooks.c  test_inject_fault, through an emulator's control endpoint
 *   aws_status.c      nodeclass_status: the EC2NodeClass status Karpenter writes
 */
#ifndef NS_AWS_PROVIDER_H
#define NS_AWS_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <nodesmith/provider.h>

#include "aws_client.h"
#include "aws_credentials.h"
#include "aws_ec2_parse.h"
#include "aws_nodeclass_spec.h"
#include "aws_query.h"
#include "aws_reservations.h"
#include "aws_resources.h"
#include "prov_snapshot.h"

#define AWS_EC2_VERSION "2016-11-15"
#define AWS_MAX_ZONES 32
/* A launch template no launch has used for this long is deleted, as Karpenter's launch-template cache evicts (and
 * deletes) its entries after a minute; the sweep looks at most this often. */
#define AWS_TEMPLATE_TTL_MS (60 * 1000)

/* The catalog as last fetched: every type with its zones and prices. Owned by the state; replaced whole. */
typedef struct aws_catalog_entry {
    const aws_ec2_instance_type *type; /* points into one of the catalog's pages */
    uint32_t zones;                    /* bit i = the catalog's zone i offers the type */
    double on_demand;                  /* < 0 when no price is known */
    bool on_demand_estimated;          /* from the built-in table or the estimate, not the Pricing API */
    double spot[AWS_MAX_ZONES];        /* < 0 when no price is known */
} aws_catalog_entry;

typedef struct aws_catalog {
    aws_ec2_instance_type_page *pages;
    size_t n_pages;
    aws_catalog_entry *entries;
    size_t n_entries;
    char zones[AWS_MAX_ZONES][NS_ZONE_MAX];
    size_t n_zones;
    prov_snapshot snap; /* shared between calls until the catalog_ttl ages it */
} aws_catalog;

/* An interruption event the core refused (its callback returned non-zero): delivered again at the next poll, and its
 * SQS message deleted once the core takes it. Kept here rather than made visible again in SQS, which would need
 * sqs:ChangeMessageVisibility, a permission beyond Karpenter's controller policy. */
#define AWS_MAX_PENDING_EVENTS 32
typedef struct aws_pending_event {
    ns_event event;
    char receipt[1024];
} aws_pending_event;

/* An unhealthy instance DescribeInstanceStatus reported (aws_instance_status.c): one per instance and category
 * (aws_status_category), delivered once while EC2 keeps reporting it. */
typedef struct aws_health_entry {
    ns_event event;
    char instance_id[32];
    int category;
    bool delivered;
} aws_health_entry;

/* On-demand prices from the Pricing API, sorted by name. Owned by the state; replaced whole. */
typedef struct aws_price {
    char *name;
    double usd_per_hour;
} aws_price;
typedef struct aws_price_list {
    aws_price *items;
    size_t n;
    int64_t fetched_ms;
} aws_price_list;

/* A launch template known to exist, and when a launch last used it (or when a sweep first saw it). */
typedef struct aws_template_entry {
    char name[128];
    char id[64];
    int64_t used_ms;
} aws_template_entry;

typedef struct aws_state {
    const ns_host *host;
    ns_host_ctx *ctx;
    char region[64];
    char cluster[128];
    char queue_name[256];
    char kubernetes_version[16];
    int64_t pricing_ttl_ms;
    int max_attempts;
    bool test_hooks;
    char control_url[256]; /* test hooks: the emulator's control endpoint, "http://127.0.0.1:PORT/_emulator" */
    aws_resource_settings resources;
    aws_credentials_provider *credentials;
    aws_client *client;
    pthread_mutex_t lock; /* guards everything below */
    prov_snapshot_cache catalogs;
    aws_template_entry *templates; /* launch templates known to exist, by name */
    size_t n_templates, cap_templates;
    int64_t templates_swept_ms; /* the last sweep of unused launch templates; 0 before the first */
    char queue_url[512];
    aws_pending_event pending[AWS_MAX_PENDING_EVENTS];
    size_t n_pending;
    aws_price_list *prices;   /* NULL until the Pricing API answered once */
    bool pricing_builtin_logged; /* GovCloud: the one line saying the built-in table is the source was logged */
    bool pricing_unreachable; /* the last attempt failed: the built-in prices are in use where needed */
    aws_health_entry *health; /* the last DescribeInstanceStatus poll's unhealthy instances */
    size_t n_health;
    int64_t health_polled_ms; /* when that poll ran; 0 before the first */
    char *cluster_endpoint;   /* resolved once (options or DescribeCluster); NULL until then */
    char *cluster_ca;
    char *cluster_cidr;
} aws_state;

/* Catalog (aws_catalog.c). aws_catalog_acquire returns the current catalog, fetching it when it is missing or older
 * than the TTL; release it with aws_catalog_release. */
void aws_catalog_cache_init(aws_state *s, int64_t ttl_ms);
int aws_catalog_acquire(aws_state *s, aws_catalog **out);
void aws_catalog_release(aws_state *s, aws_catalog *c);
void aws_catalog_free(aws_catalog *c);
const aws_catalog_entry *aws_catalog_find(const aws_catalog *c, const char *name);
int aws_list_instance_types(void *state, const ns_nodeclass *nodeclass, ns_instance_type_cb cb, void *cb_ctx);

/* On-demand prices (aws_pricing.c). aws_pricing_refresh asks the Pricing API when the cached prices are older than
 * pricing_ttl or the last attempt failed; a failure is logged, never returned: the built-in prices stand in. */
void aws_pricing_refresh(aws_state *s);
/* Fills every entry's on_demand: the Pricing API's price, or, while the API is unreachable and has never answered,
 * the built-in price or the estimate. */
void aws_pricing_apply(aws_state *s, aws_catalog *c);
void aws_price_list_free(aws_price_list *l);


/* Node class resolution (aws_nodeclass.c). */
typedef struct aws_subnet_choice {
    char zone[NS_ZONE_MAX];
    char subnet_id[64];
    int64_t available_ips;
} aws_subnet_choice;

#define AWS_MAX_SUBNETS 64
#define AWS_MAX_GROUPS 16
#define AWS_MAX_IMAGES 8

/* One resolved AMI. `variant` is "standard" or "nvidia" for the family's EKS-optimized images, "" for an image
 * selected by id, name or tags (used for every type of its architecture). */
typedef struct aws_image {
    char id[64];
    char name[128]; /* "" when unknown (images found through SSM aliases) */
    char arch[8]; /* "amd64" or "arm64" */
    char variant[16];
    int64_t created_ms;
} aws_image;

typedef struct aws_nodeclass_view {
    aws_nodeclass_spec spec;
    aws_subnet_choice subnets[AWS_MAX_ZONES]; /* one per zone: the one with the most free addresses */
    size_t n_subnets;
    char subnet_ids[AWS_MAX_SUBNETS][32]; /* every subnet the terms select (drift, status) */
    char subnet_zones[AWS_MAX_SUBNETS][NS_ZONE_MAX];
    char subnet_zone_ids[AWS_MAX_SUBNETS][32]; /* "" when EC2 named none */
    size_t n_subnet_ids;
    char security_groups[AWS_MAX_GROUPS][32];
    char security_group_names[AWS_MAX_GROUPS][256];
    size_t n_security_groups;
    aws_image images[AWS_MAX_IMAGES];
    size_t n_images;
    const char *instance_profile; /* spec.instanceProfile, or the instance profile named after spec.role */
} aws_nodeclass_view;

/* Parses and checks the node class (NS_ERR_INVALID_CONFIG naming the field), then resolves its subnets only (what
 * list_instance_types needs), or everything (what launch and drift need; nvidia images too when `gpu_images`). */
int aws_nodeclass_subnets(aws_state *s, const ns_nodeclass *nc, aws_nodeclass_view *out);
int aws_nodeclass_resolve(aws_state *s, const ns_nodeclass *nc, bool gpu_images, aws_nodeclass_view *out);
/* The three selectors one at a time on a view whose spec is parsed (out->spec), for nodeclass_status: each adds what
 * its terms select, and an empty result is NS_OK; an error only when EC2 or SSM could not be asked. */
int aws_nodeclass_resolve_subnets(aws_state *s, aws_nodeclass_view *out);
int aws_nodeclass_resolve_groups(aws_state *s, aws_nodeclass_view *out);
int aws_nodeclass_resolve_images(aws_state *s, bool gpu_images, aws_nodeclass_view *out);
/* Parses and checks only, reporting with host->error. */
int aws_nodeclass_parse(aws_state *s, const ns_nodeclass *nc, aws_nodeclass_spec *out);
const aws_subnet_choice *aws_nodeclass_subnet_in(const aws_nodeclass_view *v, const char *zone);
/* The image for a type: the nvidia variant for NVIDIA GPU types when there is one, else an image of its
 * architecture; NULL when none fits. */
const aws_image *aws_nodeclass_image_for(const aws_nodeclass_view *v, const aws_ec2_instance_type *t);
/* Whether the node class's family can run the type at all (Windows AMIs exist for amd64 only). */
bool aws_nodeclass_runs(const aws_nodeclass_spec *spec, const aws_ec2_instance_type *t);

/* The reserved offerings of catalog entry e under the node class (aws_reservations.c): one per selected reservation
 * of its type, available when the reservation has an instance free and the type is offered in its zone within the
 * node class's subnets (Karpenter's reserved-capacity resolver). Writes at most cap; returns how many. Strings point
 * into set and c. */
size_t aws_reservation_offerings(const aws_reservation_set *set, const aws_catalog *c, const aws_catalog_entry *e,
                                 const aws_nodeclass_view *v, ns_offering *out, size_t cap);

/* The cluster's API endpoint, CA bundle and service CIDR (aws_cluster.c): from the options, else from
 * eks:DescribeCluster, asked once. Pointers stay valid until destroy. */
int aws_cluster_info(aws_state *s, const char **endpoint, const char **ca, const char **cidr);

/* Launch templates (aws_template.c): ensures the template of one image and configuration exists and returns its ID.
 * `user_data` is the plain-text user data (base64-encoded here); `reservation_id` the capacity reservation its
 * launches go into, NULL for none. */
int aws_template_ensure(aws_state *s, const aws_nodeclass_view *v, const aws_image *image, const char *user_data,
                        const char *reservation_id, char *id, size_t len);
/* Forgets the templates known to exist (one was deleted behind the provider's back): the next launches look again. */
void aws_template_forget(aws_state *s);
/* Deletes the cluster's launch templates no launch used for AWS_TEMPLATE_TTL_MS (aws_template_gc.c): those of an
 * older configuration of a node class and those of a deleted node class. Templates this process has not seen yet
 * (left by an earlier run) get a full TTL from the first sweep that finds them. Runs at most once per TTL; failures
 * are logged, never returned: the next sweep tries again. */
void aws_template_sweep(aws_state *s);

/* Methods (aws_launch.c, aws_instances.c, aws_events.c). */
int aws_launch(void *state, const ns_launch_request *req, ns_launch_result *result);
int aws_terminate(void *state, const char *provider_id, bool *already_gone);
int aws_list_instances(void *state, ns_instance_cb cb, void *cb_ctx);
int aws_get_instance(void *state, const char *provider_id, ns_instance *out);
int aws_poll_events(void *state, ns_event_cb cb, void *cb_ctx);
/* poll_events' second source: asks DescribeInstanceStatus when the interval has passed, then delivers what was not
 * delivered yet. NS_OK, an error (reported), or the callback's non-zero verdict. */
int aws_instance_status_poll(aws_state *s, ns_event_cb cb, void *cb_ctx);
/* A failed status check counts once impaired this long (Karpenter's UnhealthyThreshold). */
#define AWS_UNHEALTHY_THRESHOLD_MS 120000
/* The next aws_instance_status_poll asks DescribeInstanceStatus whatever the interval: the test hook, after it
 * impaired an instance, so the poll does not wait a minute to see it. */
void aws_instance_status_ask_next_poll(aws_state *s);
int aws_check_drift(void *state, const ns_instance *instance, const ns_nodeclass *nodeclass, bool *drifted,
                    char *reason, size_t reason_len);
int aws_validate_nodeclass(void *state, const ns_nodeclass *nodeclass);
int aws_list_repair_policies(void *state, ns_repair_policy_cb cb, void *cb_ctx);
int aws_test_inject_fault(void *state, const ns_fault *fault);
int aws_nodeclass_status(void *state, const ns_nodeclass *nodeclass, ns_json **status);

/* Helpers shared by the methods. */
/* Copies src into a fixed buffer; false (and nothing written beyond dst[0] = 0) when it does not fit. */
bool aws_copy(char *dst, size_t dst_len, const char *src);
/* "aws:///<zone>/<instance-id>" -> the instance ID (a pointer into provider_id), or NULL when it is not one. */
const char *aws_instance_id_of(const char *provider_id);
/* DescribeInstances' filters 1 and 2 (aws_instances.c): the instances this cluster launched for a NodePool, tagged
 * with its managed-by and a nodepool key, as Karpenter's instance provider lists them. Callers add from Filter.3. */
void aws_query_cluster_instances(aws_query *q, const aws_state *s);
/* Fills an ns_instance from a DescribeInstances entry. NS_OK or NS_ERR_INTERNAL (a field did not fit). */
int aws_instance_from_ec2(aws_state *s, const aws_ec2_instance *in, ns_instance *out);

/* Tag keys the provider writes on what it launches (Karpenter's). */
#define AWS_TAG_NODEPOOL "karpenter.sh/nodepool"
#define AWS_TAG_NODECLAIM "karpenter.sh/nodeclaim"
#define AWS_TAG_NODECLASS "karpenter.k8s.aws/ec2nodeclass"
#define AWS_TAG_MANAGED_BY "karpenter.sh/managed-by"
#define AWS_TAG_CLUSTER "eks:eks-cluster-name"
#define AWS_TAG_CLUSTER_LT "karpenter.k8s.aws/cluster"

#endif
