#include "aws_ec2_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodesmith/provider.h>

#include "aws_parse_util.h"

const char *aws_ec2_tag(const aws_xml_node *tag_set, const char *key)
{
    for (const aws_xml_node *it = aws_xml_child(tag_set, "item"); it; it = aws_xml_next_same(it)) {
        const char *k = aws_xml_text(it, "key");
        if (k && strcmp(k, key) == 0) {
            const char *v = aws_xml_text(it, "value");
            return v ? v : "";
        }
    }
    return NULL;
}

size_t aws_ec2_tag_count(const aws_xml_node *tag_set)
{
    return aws_xml_count(tag_set, "item");
}

bool aws_ec2_tag_at(const aws_xml_node *tag_set, size_t i, const char **key, const char **value)
{
    const aws_xml_node *it = aws_xml_nth(tag_set, "item", i);
    if (!it || !aws_xml_text(it, "key"))
        return false;
    *key = aws_xml_text(it, "key");
    *value = aws_xml_text(it, "value") ? aws_xml_text(it, "value") : "";
    return true;
}

typedef void (*fill_fn)(const aws_xml_node *item, void *dst);

/* Allocates one element of `size` bytes per <item> child of `set` and fills each. */
static int collect(const aws_xml_node *set, size_t size, fill_fn fill, void **items, size_t *n)
{
    size_t count = aws_xml_count(set, "item");
    *items = NULL;
    *n = 0;
    if (count == 0)
        return NS_OK;
    char *array = calloc(count, size);
    if (!array)
        return NS_ERR_INTERNAL;
    size_t i = 0;
    for (const aws_xml_node *it = aws_xml_child(set, "item"); it; it = aws_xml_next_same(it))
        fill(it, array + size * i++);
    *items = array;
    *n = count;
    return NS_OK;
}

/* The common shape of a Describe* page: <ROOT><SET><item>...</item></SET><nextToken>...</nextToken></ROOT>. */
static int parse_page(const char *xml, size_t len, const char *root, const char *set, size_t size, fill_fn fill,
                      aws_xml_node **doc, void **items, size_t *n, const char **next_token, char *err, size_t errlen)
{
    int rc = aws_parse_open(xml, len, root, doc, err, errlen);
    if (rc != NS_OK)
        return rc;
    rc = collect(aws_xml_child(*doc, set), size, fill, items, n);
    if (rc != NS_OK) {
        snprintf(err, errlen, "out of memory reading %s", set);
        return rc;
    }
    const char *token = aws_xml_text(*doc, "nextToken");
    *next_token = token && *token ? token : NULL;
    return NS_OK;
}

#define DEFINE_PAGE_PARSER(fn, page_type, item_type, root, set, fill)                                                 \
    int fn(const char *xml, size_t len, page_type *out, char *err, size_t errlen)                                    \
    {                                                                                                                  \
        memset(out, 0, sizeof(*out));                                                                                  \
        void *items = NULL;                                                                                            \
        int rc = parse_page(xml, len, root, set, sizeof(item_type), fill, &out->doc, &items, &out->n,                  \
                            &out->next_token, err, errlen);                                                            \
        out->items = items;                                                                                            \
        return rc;                                                                                                     \
    }

#define DEFINE_PAGE_FREE(fn, page_type)                                                                                \
    void fn(page_type *page)                                                                                           \
    {                                                                                                                  \
        if (!page)                                                                                                     \
            return;                                                                                                    \
        aws_xml_free(page->doc);                                                                                       \
        free(page->items);                                                                                             \
        memset(page, 0, sizeof(*page));                                                                                \
    }

static int64_t time_ms(const aws_xml_node *item, const char *path)
{
    int64_t ms = 0;
    return aws_parse_iso8601_ms(aws_xml_text(item, path), &ms) ? ms : 0;
}

static void fill_instance_type(const aws_xml_node *it, void *dst)
{
    aws_ec2_instance_type *t = dst;
    t->name = aws_xml_text(it, "instanceType");
    t->vcpus = (int32_t)aws_parse_i64(aws_xml_text(it, "vCpuInfo/defaultVCpus"), 0);
    t->memory_mib = aws_parse_i64(aws_xml_text(it, "memoryInfo/sizeInMiB"), 0);
    const aws_xml_node *archs = aws_xml_path(it, "processorInfo/supportedArchitectures");
    for (const aws_xml_node *a = aws_xml_child(archs, "item"); a && t->n_architectures < 4; a = aws_xml_next_same(a))
        t->architectures[t->n_architectures++] = a->text;
    const aws_xml_node *classes = aws_xml_child(it, "supportedUsageClasses");
    for (const aws_xml_node *c = aws_xml_child(classes, "item"); c; c = aws_xml_next_same(c)) {
        t->spot |= strcmp(c->text, "spot") == 0;
        t->on_demand |= strcmp(c->text, "on-demand") == 0;
    }
    t->bare_metal = aws_parse_bool(aws_xml_text(it, "bareMetal"), false);
    t->current_generation = aws_parse_bool(aws_xml_text(it, "currentGeneration"), false);
    t->burstable = aws_parse_bool(aws_xml_text(it, "burstablePerformanceSupported"), false);
    t->hypervisor = aws_xml_text(it, "hypervisor");
    t->max_enis = (int32_t)aws_parse_i64(aws_xml_text(it, "networkInfo/maximumNetworkInterfaces"), 0);
    t->ipv4_per_eni = (int32_t)aws_parse_i64(aws_xml_text(it, "networkInfo/ipv4AddressesPerInterface"), 0);
    int64_t default_card = aws_parse_i64(aws_xml_text(it, "networkInfo/defaultNetworkCardIndex"), 0);
    t->default_card_enis = t->max_enis;
    for (const aws_xml_node *c = aws_xml_path(it, "networkInfo/networkCards/item"); c; c = aws_xml_next_same(c))
        if (aws_parse_i64(aws_xml_text(c, "networkCardIndex"), -1) == default_card)
            t->default_card_enis = (int32_t)aws_parse_i64(aws_xml_text(c, "maximumNetworkInterfaces"), t->max_enis);
    for (const aws_xml_node *g = aws_xml_path(it, "gpuInfo/gpus/item"); g; g = aws_xml_next_same(g)) {
        t->gpu_count += (int32_t)aws_parse_i64(aws_xml_text(g, "count"), 0);
        t->gpu_name = aws_xml_text(g, "name");
        t->gpu_manufacturer = aws_xml_text(g, "manufacturer");
        t->gpu_memory_mib = aws_parse_i64(aws_xml_text(g, "memoryInfo/sizeInMiB"), 0);
    }
    t->local_storage_gb = aws_parse_i64(aws_xml_text(it, "instanceStorageInfo/totalSizeInGB"), 0);
    t->sustained_clock_ghz = aws_parse_double(aws_xml_text(it, "processorInfo/sustainedClockSpeedInGhz"), 0);
}
DEFINE_PAGE_PARSER(aws_ec2_parse_instance_types, aws_ec2_instance_type_page, aws_ec2_instance_type,
                   "DescribeInstanceTypesResponse", "instanceTypeSet", fill_instance_type)
DEFINE_PAGE_FREE(aws_ec2_instance_type_page_free, aws_ec2_instance_type_page)

static void fill_offering(const aws_xml_node *it, void *dst)
{
    aws_ec2_offering *o = dst;
    o->instance_type = aws_xml_text(it, "instanceType");
    o->location_type = aws_xml_text(it, "locationType");
    o->location = aws_xml_text(it, "location");
}
DEFINE_PAGE_PARSER(aws_ec2_parse_offerings, aws_ec2_offering_page, aws_ec2_offering,
                   "DescribeInstanceTypeOfferingsResponse", "instanceTypeOfferingSet", fill_offering)
DEFINE_PAGE_FREE(aws_ec2_offering_page_free, aws_ec2_offering_page)

static void fill_spot_price(const aws_xml_node *it, void *dst)
{
    aws_ec2_spot_price *p = dst;
    p->instance_type = aws_xml_text(it, "instanceType");
    p->zone = aws_xml_text(it, "availabilityZone");
    p->product_description = aws_xml_text(it, "productDescription");
    p->price = aws_parse_double(aws_xml_text(it, "spotPrice"), -1);
    p->timestamp_ms = time_ms(it, "timestamp");
}
DEFINE_PAGE_PARSER(aws_ec2_parse_spot_prices, aws_ec2_spot_price_page, aws_ec2_spot_price,
                   "DescribeSpotPriceHistoryResponse", "spotPriceHistorySet", fill_spot_price)
DEFINE_PAGE_FREE(aws_ec2_spot_price_page_free, aws_ec2_spot_price_page)

static void fill_zone(const aws_xml_node *it, void *dst)
{
    aws_ec2_zone *z = dst;
    z->name = aws_xml_text(it, "zoneName");
    z->zone_id = aws_xml_text(it, "zoneId");
    z->state = aws_xml_text(it, "zoneState");
    z->region = aws_xml_text(it, "regionName");
    z->zone_type = aws_xml_text(it, "zoneType");
    z->opt_in_status = aws_xml_text(it, "optInStatus");
}
DEFINE_PAGE_PARSER(aws_ec2_parse_zones, aws_ec2_zone_page, aws_ec2_zone, "DescribeAvailabilityZonesResponse",
                   "availabilityZoneInfo", fill_zone)
DEFINE_PAGE_FREE(aws_ec2_zone_page_free, aws_ec2_zone_page)

static void fill_subnet(const aws_xml_node *it, void *dst)
{
    aws_ec2_subnet *s = dst;
    s->subnet_id = aws_xml_text(it, "subnetId");
    s->zone = aws_xml_text(it, "availabilityZone");
    s->zone_id = aws_xml_text(it, "availabilityZoneId");
    s->vpc_id = aws_xml_text(it, "vpcId");
    s->cidr = aws_xml_text(it, "cidrBlock");
    s->state = aws_xml_text(it, "state");
    s->available_ips = aws_parse_i64(aws_xml_text(it, "availableIpAddressCount"), 0);
    s->tags = aws_xml_child(it, "tagSet");
}
DEFINE_PAGE_PARSER(aws_ec2_parse_subnets, aws_ec2_subnet_page, aws_ec2_subnet, "DescribeSubnetsResponse",
                   "subnetSet", fill_subnet)
DEFINE_PAGE_FREE(aws_ec2_subnet_page_free, aws_ec2_subnet_page)

static void fill_security_group(const aws_xml_node *it, void *dst)
{
    aws_ec2_security_group *g = dst;
    g->group_id = aws_xml_text(it, "groupId");
    g->group_name = aws_xml_text(it, "groupName");
    g->vpc_id = aws_xml_text(it, "vpcId");
    g->tags = aws_xml_child(it, "tagSet");
}
DEFINE_PAGE_PARSER(aws_ec2_parse_security_groups, aws_ec2_security_group_page, aws_ec2_security_group,
                   "DescribeSecurityGroupsResponse", "securityGroupInfo", fill_security_group)
DEFINE_PAGE_FREE(aws_ec2_security_group_page_free, aws_ec2_security_group_page)

static void fill_image(const aws_xml_node *it, void *dst)
{
    aws_ec2_image *m = dst;
    m->image_id = aws_xml_text(it, "imageId");
    m->name = aws_xml_text(it, "name");
    m->architecture = aws_xml_text(it, "architecture");
    m->state = aws_xml_text(it, "imageState");
    m->owner_id = aws_xml_text(it, "imageOwnerId");
    m->creation_ms = time_ms(it, "creationDate");
    m->deprecation_ms = time_ms(it, "deprecationTime");
    m->tags = aws_xml_child(it, "tagSet");
}
DEFINE_PAGE_PARSER(aws_ec2_parse_images, aws_ec2_image_page, aws_ec2_image, "DescribeImagesResponse", "imagesSet",
                   fill_image)
DEFINE_PAGE_FREE(aws_ec2_image_page_free, aws_ec2_image_page)

static void fill_capacity_reservation(const aws_xml_node *it, void *dst)
{
    aws_ec2_capacity_reservation *r = dst;
    r->id = aws_xml_text(it, "capacityReservationId");
    r->owner_id = aws_xml_text(it, "ownerId");
    r->instance_type = aws_xml_text(it, "instanceType");
    r->zone = aws_xml_text(it, "availabilityZone");
    r->state = aws_xml_text(it, "state");
    r->match_criteria = aws_xml_text(it, "instanceMatchCriteria");
    r->reservation_type = aws_xml_text(it, "reservationType");
    r->total = aws_parse_i64(aws_xml_text(it, "totalInstanceCount"), -1);
    r->available = aws_parse_i64(aws_xml_text(it, "availableInstanceCount"), -1);
    r->end_ms = time_ms(it, "endDate");
    r->interruptible = aws_parse_bool(aws_xml_text(it, "interruptible"), false);
}
DEFINE_PAGE_PARSER(aws_ec2_parse_capacity_reservations, aws_ec2_capacity_reservation_page,
                   aws_ec2_capacity_reservation, "DescribeCapacityReservationsResponse", "capacityReservationSet",
                   fill_capacity_reservation)
DEFINE_PAGE_FREE(aws_ec2_capacity_reservation_page_free, aws_ec2_capacity_reservation_page)

static void fill_launch_template(const aws_xml_node *it, void *dst)
{
    aws_ec2_launch_template *t = dst;
    t->id = aws_xml_text(it, "launchTemplateId");
    t->name = aws_xml_text(it, "launchTemplateName");
    t->default_version = aws_parse_i64(aws_xml_text(it, "defaultVersionNumber"), 0);
    t->latest_version = aws_parse_i64(aws_xml_text(it, "latestVersionNumber"), 0);
    t->create_ms = time_ms(it, "createTime");
    t->tags = aws_xml_child(it, "tagSet");
}
DEFINE_PAGE_PARSER(aws_ec2_parse_launch_templates, aws_ec2_launch_template_page, aws_ec2_launch_template,
                   "DescribeLaunchTemplatesResponse", "launchTemplates", fill_launch_template)
DEFINE_PAGE_FREE(aws_ec2_launch_template_page_free, aws_ec2_launch_template_page)

int aws_ec2_parse_create_launch_template(const char *xml, size_t len, aws_ec2_launch_template_page *out, char *err,
                                         size_t errlen)
{
    memset(out, 0, sizeof(*out));
    int rc = aws_parse_open(xml, len, "CreateLaunchTemplateResponse", &out->doc, err, errlen);
    if (rc != NS_OK)
        return rc;
    const aws_xml_node *lt = aws_xml_child(out->doc, "launchTemplate");
    if (!lt || !aws_xml_text(lt, "launchTemplateId")) {
        snprintf(err, errlen, "CreateLaunchTemplateResponse has no launchTemplate/launchTemplateId");
        return NS_ERR_INVALID_ARGUMENT;
    }
    out->items = calloc(1, sizeof(*out->items));
    if (!out->items)
        return NS_ERR_INTERNAL;
    fill_launch_template(lt, out->items);
    out->n = 1;
    return NS_OK;
}

static void fill_state_change(const aws_xml_node *it, void *dst)
{
    aws_ec2_state_change *c = dst;
    c->instance_id = aws_xml_text(it, "instanceId");
    c->current_state = aws_xml_text(it, "currentState/name");
    c->current_code = (int)aws_parse_i64(aws_xml_text(it, "currentState/code"), -1);
    c->previous_state = aws_xml_text(it, "previousState/name");
    c->previous_code = (int)aws_parse_i64(aws_xml_text(it, "previousState/code"), -1);
}
DEFINE_PAGE_PARSER(aws_ec2_parse_terminate, aws_ec2_state_change_page, aws_ec2_state_change,
                   "TerminateInstancesResponse", "instancesSet", fill_state_change)
DEFINE_PAGE_FREE(aws_ec2_state_change_page_free, aws_ec2_state_change_page)

static void fill_instance(const aws_xml_node *it, aws_ec2_instance *i)
{
    i->instance_id = aws_xml_text(it, "instanceId");
    i->instance_type = aws_xml_text(it, "instanceType");
    i->image_id = aws_xml_text(it, "imageId");
    i->zone = aws_xml_text(it, "placement/availabilityZone");
    i->subnet_id = aws_xml_text(it, "subnetId");
    i->private_ip = aws_xml_text(it, "privateIpAddress");
    i->private_dns = aws_xml_text(it, "privateDnsName");
    i->state_name = aws_xml_text(it, "instanceState/name");
    i->state_code = (int)aws_parse_i64(aws_xml_text(it, "instanceState/code"), -1);
    i->lifecycle = aws_xml_text(it, "instanceLifecycle");
    i->capacity_reservation_id = aws_xml_text(it, "capacityReservationId");
    i->capacity_reservation_preference =
        aws_xml_text(it, "capacityReservationSpecification/capacityReservationPreference");
    i->launch_ms = time_ms(it, "launchTime");
    i->tags = aws_xml_child(it, "tagSet");
    i->groups = aws_xml_child(it, "groupSet");
}

size_t aws_ec2_group_count(const aws_xml_node *group_set)
{
    return aws_xml_count(group_set, "item");
}

const char *aws_ec2_group_at(const aws_xml_node *group_set, size_t i)
{
    return aws_xml_text(aws_xml_nth(group_set, "item", i), "groupId");
}

int aws_ec2_parse_instances(const char *xml, size_t len, aws_ec2_instance_page *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    int rc = aws_parse_open(xml, len, "DescribeInstancesResponse", &out->doc, err, errlen);
    if (rc != NS_OK)
        return rc;
    const aws_xml_node *reservations = aws_xml_child(out->doc, "reservationSet");
    size_t total = 0;
    for (const aws_xml_node *r = aws_xml_child(reservations, "item"); r; r = aws_xml_next_same(r))
        total += aws_xml_count(aws_xml_child(r, "instancesSet"), "item");
    if (total) {
        out->items = calloc(total, sizeof(*out->items));
        if (!out->items) {
            snprintf(err, errlen, "out of memory reading %zu instances", total);
            return NS_ERR_INTERNAL;
        }
    }
    for (const aws_xml_node *r = aws_xml_child(reservations, "item"); r; r = aws_xml_next_same(r))
        for (const aws_xml_node *it = aws_xml_path(r, "instancesSet/item"); it; it = aws_xml_next_same(it))
            fill_instance(it, &out->items[out->n++]);
    const char *token = aws_xml_text(out->doc, "nextToken");
    out->next_token = token && *token ? token : NULL;
    return NS_OK;
}
DEFINE_PAGE_FREE(aws_ec2_instance_page_free, aws_ec2_instance_page)

int aws_ec2_parse_create_fleet(const char *xml, size_t len, aws_ec2_fleet_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    int rc = aws_parse_open(xml, len, "CreateFleetResponse", &out->doc, err, errlen);
    if (rc != NS_OK)
        return rc;
    out->fleet_id = aws_xml_text(out->doc, "fleetId");
    const aws_xml_node *fleet_set = aws_xml_child(out->doc, "fleetInstanceSet");
    const aws_xml_node *error_set = aws_xml_child(out->doc, "errorSet");
    size_t n_ids = 0;
    for (const aws_xml_node *it = aws_xml_child(fleet_set, "item"); it; it = aws_xml_next_same(it))
        n_ids += aws_xml_count(aws_xml_child(it, "instanceIds"), "item");
    size_t n_errors = aws_xml_count(error_set, "item");
    if ((n_ids && !(out->instances = calloc(n_ids, sizeof(*out->instances)))) ||
        (n_errors && !(out->errors = calloc(n_errors, sizeof(*out->errors))))) {
        snprintf(err, errlen, "out of memory reading CreateFleetResponse");
        return NS_ERR_INTERNAL;
    }
    for (const aws_xml_node *it = aws_xml_child(fleet_set, "item"); it; it = aws_xml_next_same(it)) {
        const aws_xml_node *ov = aws_xml_path(it, "launchTemplateAndOverrides/overrides");
        for (const aws_xml_node *id = aws_xml_path(it, "instanceIds/item"); id; id = aws_xml_next_same(id)) {
            aws_ec2_fleet_instance *fi = &out->instances[out->n_instances++];
            fi->instance_id = id->text;
            fi->instance_type = aws_xml_text(it, "instanceType") ? aws_xml_text(it, "instanceType")
                                                                  : aws_xml_text(ov, "instanceType");
            fi->zone = aws_xml_text(ov, "availabilityZone");
            fi->subnet_id = aws_xml_text(ov, "subnetId");
            fi->lifecycle = aws_xml_text(it, "lifecycle");
        }
    }
    for (const aws_xml_node *it = aws_xml_child(error_set, "item"); it; it = aws_xml_next_same(it)) {
        const aws_xml_node *ov = aws_xml_path(it, "launchTemplateAndOverrides/overrides");
        aws_ec2_fleet_error *fe = &out->errors[out->n_errors++];
        fe->instance_type = aws_xml_text(ov, "instanceType");
        fe->zone = aws_xml_text(ov, "availabilityZone");
        fe->subnet_id = aws_xml_text(ov, "subnetId");
        fe->lifecycle = aws_xml_text(it, "lifecycle");
        fe->code = aws_xml_text(it, "errorCode");
        fe->message = aws_xml_text(it, "errorMessage");
    }
    return NS_OK;
}

void aws_ec2_fleet_result_free(aws_ec2_fleet_result *result)
{
    if (!result)
        return;
    aws_xml_free(result->doc);
    free(result->instances);
    free(result->errors);
    memset(result, 0, sizeof(*result));
}
