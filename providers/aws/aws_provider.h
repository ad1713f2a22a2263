/*
 * The AWS provider's state and the functions its vtable methods share. One file per method group:
 *   aws_provider.c   options, init, destroy, the exported table
 *   aws_catalog.c    list_instance_types (DescribeInstanceTypes/Offerings, spot and on-demand prices, cached)
 *   aws_nodeclass.c  EC2NodeClass selectors: subnets, security groups, AMIs
 *   aws_launch.c     launch (launch templates, CreateFleet instant, the unavailable-offerings cache)
 *   aws_instances.c  terminate, list_instances, get_instance
 *   aws_events.c     poll_events (the SQS interruption queue)
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
#include "aws_resources.h"

#define AWS_EC2_VERSION "2016-11-15"
#define AWS_MAX_ZONES 32
#define AWS_MAX_UNAVAILABLE 256
#define AWS_MAX_TEMPLATES 32
#define AWS_UNAVAILABLE_TTL_MS (3 * 60 * 1000)

/* The catalog as last fetched: every type with its zones and prices. Owned by the state; replaced whole. */
typedef struct aws_catalog_entry {
    const aws_ec2_instance_type *type; /* points into one of the catalog's pages */
    uint32_t zones;                    /* bit i = the catalog's zone i offers the type */
    double on_demand;                  /* < 0 when no price is known */
    double spot[AWS_MAX_ZONES];        /* < 0 when no price is known */
} aws_catalog_entry;

typedef struct aws_catalog {
    aws_ec2_instance_type_page *pages;
    size_t n_pages;
    aws_catalog_entry *entries;
    size_t n_entries;
    char zones[AWS_MAX_ZONES][NS_ZONE_MAX];
    size_t n_zones;
    int64_t fetched_ms;
    int refs;     /* calls reading it */
    bool retired; /* replaced by a newer catalog: the last reader frees it */
} aws_catalog;

/* An offering recently refused for capacity (Karpenter keeps these for 3 minutes). */
typedef struct aws_unavailable {
    char instance_type[NS_NAME_MAX];
    char zone[NS_ZONE_MAX];
    char capacity_type[NS_CAPACITY_TYPE_MAX];
    int64_t until_ms;
} aws_unavailable;

typedef struct aws_state {
    const ns_host *host;
    ns_host_ctx *ctx;
    char region[64];
    char cluster[128];
    char queue_name[256];
    char kubernetes_version[16];
    int64_t catalog_ttl_ms;
    aws_resource_settings resources;
    aws_credentials_provider *credentials;
    aws_client *client;
    pthread_mutex_t lock; /* guards everything below */
    aws_catalog *catalog;
    aws_unavailable unavailable[AWS_MAX_UNAVAILABLE];
    size_t n_unavailable;
    char template_names[AWS_MAX_TEMPLATES][128]; /* launch templates known to exist: name -> ID */
    char template_ids[AWS_MAX_TEMPLATES][64];
    size_t n_templates;
    char queue_url[512];
} aws_state;

/* Catalog (aws_catalog.c). aws_catalog_acquire returns the current catalog, fetching it when it is missing or older
 * than the TTL; release it with aws_catalog_release. */
int aws_catalog_acquire(aws_state *s, aws_catalog **out);
void aws_catalog_release(aws_state *s, aws_catalog *c);
void aws_catalog_free(aws_catalog *c);
const aws_catalog_entry *aws_catalog_find(const aws_catalog *c, const char *name);
int aws_list_instance_types(void *state, const ns_nodeclass *nodeclass, ns_instance_type_cb cb, void *cb_ctx);

/* Unavailable offerings (aws_launch.c). */
bool aws_offering_unavailable(aws_state *s, const char *type, const char *zone, const char *capacity_type);
void aws_mark_unavailable(aws_state *s, const char *type, const char *zone, const char *capacity_type);

/* Node class resolution (aws_nodeclass.c). */
typedef struct aws_subnet_choice {
    char zone[NS_ZONE_MAX];
    char subnet_id[64];
    int64_t available_ips;
} aws_subnet_choice;

typedef struct aws_nodeclass_view {
    aws_subnet_choice subnets[AWS_MAX_ZONES]; /* one per zone: the one with the most free addresses */
    size_t n_subnets;
    char security_groups[16][64];
    size_t n_security_groups;
    char image_amd64[64];
    char image_arm64[64];
    const char *instance_profile; /* points into the node class; NULL when unset */
    const char *user_data;        /* points into the node class; NULL when unset */
} aws_nodeclass_view;

/* Subnets only (what list_instance_types needs), or everything (what launch needs). */
int aws_nodeclass_subnets(aws_state *s, const ns_nodeclass *nc, aws_nodeclass_view *out);
int aws_nodeclass_resolve(aws_state *s, const ns_nodeclass *nc, aws_nodeclass_view *out);
const aws_subnet_choice *aws_nodeclass_subnet_in(const aws_nodeclass_view *v, const char *zone);

/* Methods (aws_launch.c, aws_instances.c, aws_events.c). */
int aws_launch(void *state, const ns_launch_request *req, ns_launch_result *result);
int aws_terminate(void *state, const char *provider_id, bool *already_gone);
int aws_list_instances(void *state, ns_instance_cb cb, void *cb_ctx);
int aws_get_instance(void *state, const char *provider_id, ns_instance *out);
int aws_poll_events(void *state, ns_event_cb cb, void *cb_ctx);

/* Helpers shared by the methods. */
/* Copies src into a fixed buffer; false (and nothing written beyond dst[0] = 0) when it does not fit. */
bool aws_copy(char *dst, size_t dst_len, const char *src);
/* "aws:///<zone>/<instance-id>" -> the instance ID (a pointer into provider_id), or NULL when it is not one. */
const char *aws_instance_id_of(const char *provider_id);
/* Fills an ns_instance from a DescribeInstances entry. NS_OK or NS_ERR_INTERNAL (a field did not fit). */
int aws_instance_from_ec2(aws_state *s, const aws_ec2_instance *in, ns_instance *out);

/* Tag keys the provider writes on what it launches (Karpenter's). */
#define AWS_TAG_NODEPOOL "karpenter.sh/nodepool"
#define AWS_TAG_NODECLAIM "karpenter.sh/nodeclaim"
#define AWS_TAG_NODECLASS "karpenter.k8s.aws/ec2nodeclass"
#define AWS_TAG_MANAGED_BY "karpenter.sh/managed-by"
#define AWS_TAG_CLUSTER "eks:eks-cluster-name"

#endif
