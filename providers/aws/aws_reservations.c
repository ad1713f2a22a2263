/* Capacity reservations selected by an EC2NodeClass (aws_reservations.h). */
#include "aws_reservations.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_provider.h"
#include "aws_query.h"

/* One term as DescribeCapacityReservations parameters, as Karpenter's Query builds them: always state=active; an ID
 * alone (MaxResults cannot go with IDs), else the owner, tags ("*" = any value: tag-key) and match criteria. */
static void add_term(aws_query *q, const aws_reservation_term *t)
{
    int f = 1;
    aws_query_add(q, "Filter.1.Name", "state");
    aws_query_add(q, "Filter.1.Value.1", "active");
    if (t->id) {
        aws_query_add(q, "CapacityReservationId.1", t->id);
        return;
    }
    aws_query_add(q, "MaxResults", "1000");
    if (t->owner_id) {
        aws_query_addf(q, "owner-id", "Filter.%d.Name", ++f);
        aws_query_addf(q, t->owner_id, "Filter.%d.Value.1", f);
    }
    for (size_t i = 0; i < t->n_tags; i++) {
        char name[300];
        bool any = strcmp(t->tags[i].value, "*") == 0;
        snprintf(name, sizeof(name), "tag:%s", t->tags[i].key);
        aws_query_addf(q, any ? "tag-key" : name, "Filter.%d.Name", ++f);
        aws_query_addf(q, any ? t->tags[i].key : t->tags[i].value, "Filter.%d.Value.1", f);
    }
    if (t->match_criteria) {
        aws_query_addf(q, "instance-match-criteria", "Filter.%d.Name", ++f);
        aws_query_addf(q, t->match_criteria, "Filter.%d.Value.1", f);
    }
}

static int add_reservation(aws_state *s, aws_reservation_set *out, size_t *cap, const aws_ec2_capacity_reservation *r)
{
    for (size_t i = 0; i < out->n; i++)
        if (strcmp(out->items[i].id, r->id) == 0)
            return NS_OK;
    if (out->n == *cap) {
        size_t grown = *cap ? *cap * 2 : 8;
        aws_reservation *items = realloc(out->items, grown * sizeof(*items));
        if (!items)
            return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory listing capacity reservations");
        out->items = items;
        *cap = grown;
    }
    aws_reservation *d = &out->items[out->n];
    memset(d, 0, sizeof(*d));
    if (!aws_copy(d->id, sizeof(d->id), r->id) || !aws_copy(d->owner_id, sizeof(d->owner_id), r->owner_id) ||
        !aws_copy(d->instance_type, sizeof(d->instance_type), r->instance_type) ||
        !aws_copy(d->zone, sizeof(d->zone), r->zone) || !aws_copy(d->state, sizeof(d->state), r->state) ||
        !aws_copy(d->match_criteria, sizeof(d->match_criteria), r->match_criteria ? r->match_criteria : "open") ||
        !aws_copy(d->reservation_type, sizeof(d->reservation_type),
                  r->reservation_type ? r->reservation_type : "default"))
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeCapacityReservations: reservation %s has a "
                        "field too long to keep", r->id);
    d->available = r->available;
    d->total = r->total;
    d->end_ms = r->end_ms;
    d->interruptible = r->interruptible;
    out->n++;
    return NS_OK;
}

/* Every page of one term's answer into out; a term naming an ID that does not exist selects nothing. */
static int describe_term(aws_state *s, const aws_reservation_term *t, int64_t now_ms, aws_reservation_set *out,
                         size_t *cap)
{
    char *token = NULL;
    int rc = NS_OK;
    do {
        aws_query q;
        aws_query_init(&q, "DescribeCapacityReservations", AWS_EC2_VERSION);
        add_term(&q, t);
        if (token)
            aws_query_add(&q, "NextToken", token);
        ns_http_response *resp = NULL;
        aws_api_error e = {0};
        rc = aws_query_failed(&q) ? NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeCapacityReservations: "
                                             "out of memory")
                                  : aws_client_query(s->client, "ec2", "DescribeCapacityReservations",
                                                     aws_query_body(&q), aws_query_len(&q), &resp, &e);
        aws_query_free(&q);
        if (rc != NS_OK) {
            if (t->id && strcmp(e.code, "InvalidCapacityReservationId.NotFound") == 0)
                rc = NS_OK;
            break;
        }
        aws_ec2_capacity_reservation_page page;
        char err[256];
        rc = aws_ec2_parse_capacity_reservations(resp->body, resp->body_len, &page, err, sizeof(err));
        s->host->http_response_free(resp);
        if (rc != NS_OK)
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeCapacityReservations: unexpected answer: %s",
                          err);
        for (size_t i = 0; rc == NS_OK && i < page.n; i++) {
            const aws_ec2_capacity_reservation *r = &page.items[i];
            if (!r->id || !r->instance_type || !r->zone || !r->owner_id || !r->state)
                continue;
            if (strcmp(r->state, "active") != 0 || (r->end_ms && r->end_ms <= now_ms))
                continue; /* expired: EC2 may still list it until its state catches up */
            rc = add_reservation(s, out, cap, r);
        }
        free(token);
        token = rc == NS_OK && page.next_token ? strdup(page.next_token) : NULL;
        bool more = page.next_token != NULL;
        aws_ec2_capacity_reservation_page_free(&page);
        if (rc == NS_OK && more && !token)
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeCapacityReservations: out of memory");
    } while (rc == NS_OK && token);
    free(token);
    return rc;
}

static int by_id(const void *a, const void *b)
{
    return strcmp(((const aws_reservation *)a)->id, ((const aws_reservation *)b)->id);
}

int aws_reservations_resolve(aws_state *s, const aws_nodeclass_spec *spec, aws_reservation_set *out)
{
    memset(out, 0, sizeof(*out));
    size_t cap = 0;
    int64_t now = s->host->now_ms(s->ctx);
    int rc = NS_OK;
    for (size_t i = 0; rc == NS_OK && i < spec->n_reservations; i++)
        rc = describe_term(s, &spec->reservations[i], now, out, &cap);
    if (rc != NS_OK) {
        aws_reservation_set_free(out);
        return rc;
    }
    if (out->n > 1)
        qsort(out->items, out->n, sizeof(out->items[0]), by_id);
    return NS_OK;
}

void aws_reservation_set_free(aws_reservation_set *set)
{
    if (!set)
        return;
    free(set->items);
    set->items = NULL;
    set->n = 0;
}

const aws_reservation *aws_reservation_for(const aws_reservation_set *set, const char *type, const char *zone)
{
    const aws_reservation *best = NULL;
    for (size_t i = 0; i < set->n; i++) {
        const aws_reservation *r = &set->items[i];
        if (strcmp(r->instance_type, type) == 0 && strcmp(r->zone, zone) == 0 && r->available > 0 &&
            (!best || r->available > best->available))
            best = r;
    }
    return best;
}

double aws_reservation_price(double on_demand)
{
    return on_demand > 0 ? on_demand / 10000000.0 : 0.0;
}

size_t aws_reservation_offerings(const aws_reservation_set *set, const aws_catalog *c, const aws_catalog_entry *e,
                                 const aws_nodeclass_view *v, ns_offering *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n && n < cap; i++) {
        const aws_reservation *r = &set->items[i];
        if (strcmp(r->instance_type, e->type->name) != 0)
            continue;
        bool offered = false;
        for (size_t z = 0; z < c->n_zones && !offered; z++)
            offered = strcmp(c->zones[z], r->zone) == 0 && (e->zones & (1u << z));
        bool in_subnets = v->n_subnets == 0 || aws_nodeclass_subnet_in(v, r->zone);
        out[n++] = (ns_offering){.struct_size = sizeof(ns_offering), .zone = r->zone,
                                 .capacity_type = NS_CAPACITY_RESERVED,
                                 .price_per_hour = aws_reservation_price(e->on_demand),
                                 .available = r->available > 0 && offered && in_subnets, .reservation_id = r->id,
                                 .reservation_capacity = r->available};
    }
    return n;
}
