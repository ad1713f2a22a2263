/*
 * Typed views of the EC2 Query API responses the AWS provider uses, built on aws_xml.
 *
 * Pure: no host upcalls. Every parse function takes the response body, checks that the root element is the expected
 * "<Action>Response", and fills a result whose strings point into the parsed tree the result owns (result->doc).
 * Strings are NULL when the element is absent. Release a result with its *_free function, which accepts NULL and a
 * zeroed or half-filled result; call it also after a failed parse.
 *
 * Return values: NS_OK; NS_ERR_INVALID_ARGUMENT when the body is not well-formed XML or not the expected response
 * (the reason goes into err); NS_ERR_INTERNAL when memory runs out.
 */
#ifndef NS_AWS_EC2_PARSE_H
#define NS_AWS_EC2_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aws_xml.h"

/* The value of tag `key` in an EC2 tagSet element (item/key, item/value), or NULL. */
const char *aws_ec2_tag(const aws_xml_node *tag_set, const char *key);
/* The number of tags in a tagSet element, and the i-th one. */
size_t aws_ec2_tag_count(const aws_xml_node *tag_set);
bool aws_ec2_tag_at(const aws_xml_node *tag_set, size_t i, const char **key, const char **value);

/* Declares a paginated result: the tree, the items, and the token for the next page (NULL on the last page). */
#define AWS_EC2_PAGE(item_type)                                                                                        \
    struct {                                                                                                           \
        aws_xml_node *doc;                                                                                             \
        item_type *items;                                                                                              \
        size_t n;                                                                                                      \
        const char *next_token;                                                                                        \
    }

/* DescribeInstanceTypes */
typedef struct aws_ec2_instance_type {
    const char *name;
    int32_t vcpus;
    int64_t memory_mib;
    const char *architectures[4]; /* "x86_64", "arm64", ... */
    size_t n_architectures;
    bool spot, on_demand; /* supportedUsageClasses */
    bool bare_metal, current_generation, burstable;
    const char *hypervisor; /* "nitro", "xen", or NULL for metal */
    int32_t max_enis, ipv4_per_eni;
    int32_t default_card_enis; /* interfaces of the default network card (max_enis when the answer has no cards) */
    int32_t gpu_count;
    const char *gpu_name, *gpu_manufacturer;
    int64_t gpu_memory_mib; /* per GPU */
    int64_t local_storage_gb;
    double sustained_clock_ghz;
} aws_ec2_instance_type;
typedef AWS_EC2_PAGE(aws_ec2_instance_type) aws_ec2_instance_type_page;
int aws_ec2_parse_instance_types(const char *xml, size_t len, aws_ec2_instance_type_page *out, char *err,
                                 size_t errlen);
void aws_ec2_instance_type_page_free(aws_ec2_instance_type_page *page);

/* DescribeInstanceTypeOfferings */
typedef struct aws_ec2_offering {
    const char *instance_type;
    const char *location_type; /* "availability-zone", "availability-zone-id" or "region" */
    const char *location;
} aws_ec2_offering;
typedef AWS_EC2_PAGE(aws_ec2_offering) aws_ec2_offering_page;
int aws_ec2_parse_offerings(const char *xml, size_t len, aws_ec2_offering_page *out, char *err, size_t errlen);
void aws_ec2_offering_page_free(aws_ec2_offering_page *page);

/* DescribeSpotPriceHistory */
typedef struct aws_ec2_spot_price {
    const char *instance_type;
    const char *zone;
    const char *product_description; /* "Linux/UNIX" */
    double price;
    int64_t timestamp_ms;
} aws_ec2_spot_price;
typedef AWS_EC2_PAGE(aws_ec2_spot_price) aws_ec2_spot_price_page;
int aws_ec2_parse_spot_prices(const char *xml, size_t len, aws_ec2_spot_price_page *out, char *err, size_t errlen);
void aws_ec2_spot_price_page_free(aws_ec2_spot_price_page *page);

/* DescribeAvailabilityZones */
typedef struct aws_ec2_zone {
    const char *name, *zone_id, *state, *region, *zone_type, *opt_in_status;
} aws_ec2_zone;
typedef AWS_EC2_PAGE(aws_ec2_zone) aws_ec2_zone_page;
int aws_ec2_parse_zones(const char *xml, size_t len, aws_ec2_zone_page *out, char *err, size_t errlen);
void aws_ec2_zone_page_free(aws_ec2_zone_page *page);

/* DescribeSubnets */
typedef struct aws_ec2_subnet {
    const char *subnet_id, *zone, *zone_id, *vpc_id, *cidr, *state;
    int64_t available_ips;
    const aws_xml_node *tags;
} aws_ec2_subnet;
typedef AWS_EC2_PAGE(aws_ec2_subnet) aws_ec2_subnet_page;
int aws_ec2_parse_subnets(const char *xml, size_t len, aws_ec2_subnet_page *out, char *err, size_t errlen);
void aws_ec2_subnet_page_free(aws_ec2_subnet_page *page);

/* DescribeSecurityGroups */
typedef struct aws_ec2_security_group {
    const char *group_id, *group_name, *vpc_id;
    const aws_xml_node *tags;
} aws_ec2_security_group;
typedef AWS_EC2_PAGE(aws_ec2_security_group) aws_ec2_security_group_page;
int aws_ec2_parse_security_groups(const char *xml, size_t len, aws_ec2_security_group_page *out, char *err,
                                  size_t errlen);
void aws_ec2_security_group_page_free(aws_ec2_security_group_page *page);

/* DescribeImages */
typedef struct aws_ec2_image {
    const char *image_id, *name, *architecture, *state, *owner_id;
    int64_t creation_ms;
    int64_t deprecation_ms; /* 0 when none */
    const aws_xml_node *tags;
} aws_ec2_image;
typedef AWS_EC2_PAGE(aws_ec2_image) aws_ec2_image_page;
int aws_ec2_parse_images(const char *xml, size_t len, aws_ec2_image_page *out, char *err, size_t errlen);
void aws_ec2_image_page_free(aws_ec2_image_page *page);

/* DescribeCapacityReservations */
typedef struct aws_ec2_capacity_reservation {
    const char *id, *owner_id, *instance_type, *zone, *state, *match_criteria;
    const char *reservation_type; /* "default" or "capacity-block"; NULL from an answer without it */
    int64_t total, available;     /* instance counts; -1 when absent */
    int64_t end_ms;               /* 0 when the reservation has no end date */
    bool interruptible;
} aws_ec2_capacity_reservation;
typedef AWS_EC2_PAGE(aws_ec2_capacity_reservation) aws_ec2_capacity_reservation_page;
int aws_ec2_parse_capacity_reservations(const char *xml, size_t len, aws_ec2_capacity_reservation_page *out,
                                        char *err, size_t errlen);
void aws_ec2_capacity_reservation_page_free(aws_ec2_capacity_reservation_page *page);

/* DescribeLaunchTemplates; CreateLaunchTemplate returns one of these as a page of one. */
typedef struct aws_ec2_launch_template {
    const char *id, *name;
    int64_t default_version, latest_version;
    int64_t create_ms;
    const aws_xml_node *tags;
} aws_ec2_launch_template;
typedef AWS_EC2_PAGE(aws_ec2_launch_template) aws_ec2_launch_template_page;
int aws_ec2_parse_launch_templates(const char *xml, size_t len, aws_ec2_launch_template_page *out, char *err,
                                   size_t errlen);
int aws_ec2_parse_create_launch_template(const char *xml, size_t len, aws_ec2_launch_template_page *out, char *err,
                                         size_t errlen);
void aws_ec2_launch_template_page_free(aws_ec2_launch_template_page *page);

/* DescribeInstances: the instances of every reservation, flattened. */
typedef struct aws_ec2_instance {
    const char *instance_id, *instance_type, *image_id, *zone, *subnet_id, *private_ip, *private_dns;
    const char *state_name; /* "pending", "running", "shutting-down", "terminated", "stopping", "stopped" */
    int state_code;
    const char *lifecycle; /* "spot", "capacity-block", or NULL for on-demand */
    const char *capacity_reservation_id;
    const char *capacity_reservation_preference; /* "capacity-reservations-only", "open", "none"; NULL when absent */
    int64_t launch_ms;
    const aws_xml_node *tags;
    const aws_xml_node *groups; /* groupSet: item/groupId, item/groupName */
} aws_ec2_instance;
typedef AWS_EC2_PAGE(aws_ec2_instance) aws_ec2_instance_page;
/* The security groups of an instance's groupSet: how many, and the i-th group's ID (NULL past the end). */
size_t aws_ec2_group_count(const aws_xml_node *group_set);
const char *aws_ec2_group_at(const aws_xml_node *group_set, size_t i);
int aws_ec2_parse_instances(const char *xml, size_t len, aws_ec2_instance_page *out, char *err, size_t errlen);
void aws_ec2_instance_page_free(aws_ec2_instance_page *page);

/* TerminateInstances */
typedef struct aws_ec2_state_change {
    const char *instance_id, *current_state, *previous_state;
    int current_code, previous_code;
} aws_ec2_state_change;
typedef AWS_EC2_PAGE(aws_ec2_state_change) aws_ec2_state_change_page;
int aws_ec2_parse_terminate(const char *xml, size_t len, aws_ec2_state_change_page *out, char *err, size_t errlen);
void aws_ec2_state_change_page_free(aws_ec2_state_change_page *page);

/* CreateFleet (type "instant"): one entry per launched instance ID and one per failed override. */
typedef struct aws_ec2_fleet_instance {
    const char *instance_id, *instance_type, *zone, *subnet_id;
    const char *lifecycle; /* "spot" or "on-demand" */
} aws_ec2_fleet_instance;
typedef struct aws_ec2_fleet_error {
    const char *instance_type, *zone, *subnet_id, *lifecycle;
    const char *code, *message;
} aws_ec2_fleet_error;
typedef struct aws_ec2_fleet_result {
    aws_xml_node *doc;
    const char *fleet_id;
    aws_ec2_fleet_instance *instances;
    size_t n_instances;
    aws_ec2_fleet_error *errors;
    size_t n_errors;
} aws_ec2_fleet_result;
int aws_ec2_parse_create_fleet(const char *xml, size_t len, aws_ec2_fleet_result *out, char *err, size_t errlen);
void aws_ec2_fleet_result_free(aws_ec2_fleet_result *result);

#endif
