/* list_instance_types: the region's instance types with their zones (DescribeInstanceTypeOfferings), spot prices
 * (DescribeSpotPriceHistory) and on-demand prices (aws_pricing.c), cached for catalog_ttl. The node class narrows
 * the list: its subnets' zones, and for Windows families the amd64 types only, labelled with the Windows build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aws_parse_util.h"
#include "aws_provider.h"
#include "aws_query.h"
#include "prov_log.h"

void aws_catalog_free(aws_catalog *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_pages; i++)
        aws_ec2_instance_type_page_free(&c->pages[i]);
    free(c->pages);
    free(c->entries);
    free(c);
}

static int compare_entries(const void *a, const void *b)
{
    return strcmp(((const aws_catalog_entry *)a)->type->name, ((const aws_catalog_entry *)b)->type->name);
}

const aws_catalog_entry *aws_catalog_find(const aws_catalog *c, const char *name)
{
    aws_ec2_instance_type key_type = {.name = name};
    aws_catalog_entry key = {.type = &key_type};
    return bsearch(&key, c->entries, c->n_entries, sizeof(key), compare_entries);
}

static int zone_index(const aws_catalog *c, const char *zone)
{
    for (size_t i = 0; i < c->n_zones; i++)
        if (strcmp(c->zones[i], zone) == 0)
            return (int)i;
    return -1;
}

/* One EC2 call whose answer the caller parses; reports parse failures in the provider's words. */
static int ec2_call(aws_state *s, aws_query *q, const char *op, ns_http_response **resp)
{
    int rc = aws_query_failed(q) ? NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 %s: out of memory", op)
                                 : aws_client_query(s->client, "ec2", op, aws_query_body(q), aws_query_len(q), resp,
                                                    NULL);
    aws_query_free(q);
    return rc;
}

static int bad_answer(aws_state *s, const char *op, const char *err)
{
    return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 %s: unexpected answer: %s", op, err);
}

static int fetch_zones(aws_state *s, aws_catalog *c)
{
    aws_query q;
    aws_query_init(&q, "DescribeAvailabilityZones", AWS_EC2_VERSION);
    ns_http_response *resp = NULL;
    int rc = ec2_call(s, &q, "DescribeAvailabilityZones", &resp);
    if (rc != NS_OK)
        return rc;
    aws_ec2_zone_page page;
    char err[256];
    rc = aws_ec2_parse_zones(resp->body, resp->body_len, &page, err, sizeof(err));
    s->host->http_response_free(resp);
    if (rc != NS_OK) {
        aws_ec2_zone_page_free(&page);
        return bad_answer(s, "DescribeAvailabilityZones", err);
    }
    for (size_t i = 0; i < page.n && c->n_zones < AWS_MAX_ZONES; i++) {
        const aws_ec2_zone *z = &page.items[i];
        if (z->name && (!z->state || strcmp(z->state, "available") == 0) &&
            (!z->zone_type || strcmp(z->zone_type, "availability-zone") == 0))
            aws_copy(c->zones[c->n_zones++], NS_ZONE_MAX, z->name);
    }
    aws_ec2_zone_page_free(&page);
    return NS_OK;
}

static int fetch_types(aws_state *s, aws_catalog *c)
{
    char *token = NULL;
    int rc = NS_OK;
    do {
        aws_query q;
        aws_query_init(&q, "DescribeInstanceTypes", AWS_EC2_VERSION);
        aws_query_add(&q, "MaxResults", "100");
        if (token)
            aws_query_add(&q, "NextToken", token);
        ns_http_response *resp = NULL;
        if ((rc = ec2_call(s, &q, "DescribeInstanceTypes", &resp)) != NS_OK)
            break;
        aws_ec2_instance_type_page *pages = realloc(c->pages, (c->n_pages + 1) * sizeof(*pages));
        if (!pages) {
            s->host->http_response_free(resp);
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory reading instance types");
            break;
        }
        c->pages = pages;
        aws_ec2_instance_type_page *page = &c->pages[c->n_pages++];
        char err[256];
        rc = aws_ec2_parse_instance_types(resp->body, resp->body_len, page, err, sizeof(err));
        s->host->http_response_free(resp);
        if (rc != NS_OK) {
            rc = bad_answer(s, "DescribeInstanceTypes", err);
            break;
        }
        free(token);
        token = page->next_token ? strdup(page->next_token) : NULL;
        if (page->next_token && !token)
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory reading instance types");
    } while (rc == NS_OK && token);
    free(token);
    if (rc != NS_OK)
        return rc;
    size_t total = 0;
    for (size_t i = 0; i < c->n_pages; i++)
        total += c->pages[i].n;
    c->entries = calloc(total ? total : 1, sizeof(*c->entries));
    if (!c->entries)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory indexing %zu instance types", total);
    for (size_t i = 0; i < c->n_pages; i++)
        for (size_t k = 0; k < c->pages[i].n; k++) {
            const aws_ec2_instance_type *t = &c->pages[i].items[k];
            if (!t->name || !aws_kubernetes_arch(t) || t->vcpus <= 0 || t->memory_mib <= 0)
                continue;
            aws_catalog_entry *e = &c->entries[c->n_entries++];
            e->type = t;
            e->on_demand = -1;
            for (size_t z = 0; z < AWS_MAX_ZONES; z++)
                e->spot[z] = -1;
        }
    qsort(c->entries, c->n_entries, sizeof(*c->entries), compare_entries);
    return NS_OK;
}

static int fetch_offerings(aws_state *s, aws_catalog *c)
{
    char *token = NULL;
    int rc;
    do {
        aws_query q;
        aws_query_init(&q, "DescribeInstanceTypeOfferings", AWS_EC2_VERSION);
        aws_query_add(&q, "LocationType", "availability-zone");
        aws_query_add(&q, "MaxResults", "1000");
        if (token)
            aws_query_add(&q, "NextToken", token);
        ns_http_response *resp = NULL;
        if ((rc = ec2_call(s, &q, "DescribeInstanceTypeOfferings", &resp)) != NS_OK)
            break;
        aws_ec2_offering_page page;
        char err[256];
        rc = aws_ec2_parse_offerings(resp->body, resp->body_len, &page, err, sizeof(err));
        s->host->http_response_free(resp);
        if (rc != NS_OK) {
            aws_ec2_offering_page_free(&page);
            rc = bad_answer(s, "DescribeInstanceTypeOfferings", err);
            break;
        }
        for (size_t i = 0; i < page.n; i++) {
            aws_catalog_entry *e = (aws_catalog_entry *)aws_catalog_find(c, page.items[i].instance_type);
            int z = page.items[i].location ? zone_index(c, page.items[i].location) : -1;
            if (e && z >= 0)
                e->zones |= 1u << z;
        }
        free(token);
        token = page.next_token ? strdup(page.next_token) : NULL;
        aws_ec2_offering_page_free(&page);
    } while (token);
    free(token);
    return rc;
}

static int fetch_spot_prices(aws_state *s, aws_catalog *c)
{
    char now[32];
    time_t t = (time_t)(s->host->now_ms(s->ctx) / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* The newest price of each type and zone wins; remember when each one was set. */
    int64_t *stamp = calloc(c->n_entries * AWS_MAX_ZONES + 1, sizeof(*stamp));
    if (!stamp)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory reading spot prices");
    char *token = NULL;
    int rc;
    do {
        aws_query q;
        aws_query_init(&q, "DescribeSpotPriceHistory", AWS_EC2_VERSION);
        aws_query_add(&q, "ProductDescription.1", "Linux/UNIX");
        aws_query_add(&q, "StartTime", now);
        aws_query_add(&q, "MaxResults", "1000");
        if (token)
            aws_query_add(&q, "NextToken", token);
        ns_http_response *resp = NULL;
        if ((rc = ec2_call(s, &q, "DescribeSpotPriceHistory", &resp)) != NS_OK)
            break;
        aws_ec2_spot_price_page page;
        char err[256];
        rc = aws_ec2_parse_spot_prices(resp->body, resp->body_len, &page, err, sizeof(err));
        s->host->http_response_free(resp);
        if (rc != NS_OK) {
            aws_ec2_spot_price_page_free(&page);
            rc = bad_answer(s, "DescribeSpotPriceHistory", err);
            break;
        }
        for (size_t i = 0; i < page.n; i++) {
            const aws_ec2_spot_price *p = &page.items[i];
            aws_catalog_entry *e = p->instance_type ? (aws_catalog_entry *)aws_catalog_find(c, p->instance_type) : NULL;
            int z = p->zone ? zone_index(c, p->zone) : -1;
            if (!e || z < 0 || p->price < 0)
                continue;
            int64_t *when = &stamp[(size_t)(e - c->entries) * AWS_MAX_ZONES + (size_t)z];
            if (e->spot[z] < 0 || p->timestamp_ms >= *when) {
                e->spot[z] = p->price;
                *when = p->timestamp_ms;
            }
        }
        free(token);
        token = page.next_token ? strdup(page.next_token) : NULL;
        aws_ec2_spot_price_page_free(&page);
    } while (token);
    free(token);
    free(stamp);
    return rc;
}

/* The cache's fetch: owner is the provider state. */
static int fetch_catalog(void *owner, prov_snapshot **out)
{
    aws_state *s = owner;
    aws_catalog *c = calloc(1, sizeof(*c));
    if (!c)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory building the instance-type catalog");
    int rc = fetch_zones(s, c);
    if (rc == NS_OK)
        rc = fetch_types(s, c);
    if (rc == NS_OK)
        rc = fetch_offerings(s, c);
    if (rc == NS_OK)
        rc = fetch_spot_prices(s, c);
    if (rc != NS_OK) {
        aws_catalog_free(c);
        return rc;
    }
    aws_pricing_refresh(s);
    aws_pricing_apply(s, c);
    ns_log_field fields[] = {prov_log_int("types", (int64_t)c->n_entries), prov_log_int("zones", (int64_t)c->n_zones),
                             prov_log_str("region", s->region)};
    prov_log(s->host, s->ctx, NS_LOG_INFO, "aws instance-type catalog refreshed", fields, 3);
    *out = &c->snap;
    return NS_OK;
}

static void free_snapshot(prov_snapshot *snap)
{
    aws_catalog_free(prov_snapshot_of(snap, aws_catalog, snap));
}

void aws_catalog_cache_init(aws_state *s, int64_t ttl_ms)
{
    s->catalogs = (prov_snapshot_cache){&s->lock, NULL, ttl_ms, fetch_catalog, free_snapshot, s, s->host, s->ctx};
}

int aws_catalog_acquire(aws_state *s, aws_catalog **out)
{
    prov_snapshot *snap = NULL;
    int rc = prov_snapshot_acquire(&s->catalogs, &snap);
    if (rc == NS_OK)
        *out = prov_snapshot_of(snap, aws_catalog, snap);
    return rc;
}

void aws_catalog_release(aws_state *s, aws_catalog *c)
{
    prov_snapshot_release(&s->catalogs, c ? &c->snap : NULL);
}

int aws_list_instance_types(void *state, const ns_nodeclass *nodeclass, ns_instance_type_cb cb, void *cb_ctx)
{
    aws_state *s = state;
    aws_nodeclass_view view;
    int rc = aws_nodeclass_subnets(s, nodeclass, &view);
    if (rc != NS_OK)
        return rc;
    aws_catalog *c = NULL;
    aws_reservation_set reserved;
    if ((rc = aws_reservations_resolve(s, &view.spec, &reserved)) != NS_OK)
        return rc;
    if ((rc = aws_catalog_acquire(s, &c)) != NS_OK) {
        aws_reservation_set_free(&reserved);
        return rc;
    }
    size_t max_offerings = 2 * AWS_MAX_ZONES + reserved.n;
    ns_offering *offerings = malloc(max_offerings * sizeof(*offerings));
    if (!offerings)
        rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory listing instance types for %s %s",
                      view.spec.kind, view.spec.name);
    aws_resource_settings settings = s->resources;
    settings.instance_store_raid0 = aws_spec_instance_store_raid0(&view.spec);
    for (size_t i = 0; i < c->n_entries && rc == NS_OK; i++) {
        const aws_catalog_entry *e = &c->entries[i];
        if (!aws_nodeclass_runs(&view.spec, e->type))
            continue;
        size_t n = 0;
        for (size_t z = 0; z < c->n_zones; z++) {
            if (!(e->zones & (1u << z)) || (view.n_subnets && !aws_nodeclass_subnet_in(&view, c->zones[z])))
                continue;
            if (e->type->spot && e->spot[z] >= 0)
                offerings[n++] = (ns_offering){sizeof(ns_offering), c->zones[z], NS_CAPACITY_SPOT, e->spot[z],
                                               true, NULL, NULL, 0, NS_RESERVATION_CAPACITY_UNKNOWN};
            if (e->type->on_demand && e->on_demand >= 0)
                offerings[n++] = (ns_offering){sizeof(ns_offering), c->zones[z], NS_CAPACITY_ON_DEMAND, e->on_demand,
                                               true, NULL, NULL, 0, NS_RESERVATION_CAPACITY_UNKNOWN};
        }
        n += aws_reservation_offerings(&reserved, c, e, &view, offerings + n, max_offerings - n);
        if (n == 0)
            continue;
        aws_labels labels;
        aws_instance_labels(e->type, s->region, &labels);
        ns_label all[AWS_MAX_LABELS + 1];
        size_t n_labels = 0;
        const char *build = aws_ami_family_windows_build(view.spec.family);
        for (size_t k = 0; k < labels.n; k++) {
            all[n_labels] = labels.items[k];
            if (build && strcmp(all[n_labels].key, "kubernetes.io/os") == 0)
                all[n_labels].value = "windows";
            n_labels++;
        }
        if (build)
            all[n_labels++] = (ns_label){"node.kubernetes.io/windows-build", build};
        ns_instance_type t = {.struct_size = sizeof(t), .name = e->type->name, .labels = all, .n_labels = n_labels,
                              .offerings = offerings, .n_offerings = n};
        aws_instance_resources(e->type, &settings, &t.capacity, &t.kube_reserved, &t.system_reserved,
                               &t.eviction_threshold);
        rc = cb(cb_ctx, &t);
    }
    free(offerings);
    aws_reservation_set_free(&reserved);
    aws_catalog_release(s, c);
    return rc;
}
