/* launch: the node class resolved, the family's user data built, one launch template per image (aws_template.c),
 * then CreateFleet type instant with one override per acceptable instance type x subnet of one capacity type:
 * reserved first when the request allows it (Karpenter's order), then spot (price-capacity-optimized) when the
 * request allows spot, else on-demand (lowest-price). EC2's ClientToken carries the request's idempotency key.
 * Offerings EC2 refuses for capacity are reported to the core (host->error_unavailable_offering), also when another
 * offering launched: the core's unavailable-offerings cache keeps them, as Karpenter's does, and aws.so keeps none of
 * its own. When no reserved or spot offering had capacity and the request also allows a later capacity type, the
 * same call tries it (with a client token derived from the request's).
 *
 * A reserved launch goes into the node class's capacity reservations (aws_reservations.h): one launch template per
 * image and reservation, targeting it (capacity-reservations-only), with the reservation's labels in the node's
 * bootstrap; every reservation of the offering's type and zone is an override, so a retried launch sends the same
 * request whatever their counts have become, and EC2 skips a full one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_errors.h"
#include "aws_provider.h"
#include "aws_query.h"
#include "aws_userdata.h"
#include "prov_digest.h"

#define MAX_OVERRIDES 60 /* CreateFleet accepts up to 300 overrides; Karpenter sends at most 60 */
#define MAX_GROUPS MAX_OVERRIDES /* launch templates of one CreateFleet: one per image, and reservation when reserved */
#define MAX_FAILED (2 * MAX_OVERRIDES)
#define MAX_TAINTS 64

typedef struct override {
    const ns_launch_option *option;
    const aws_catalog_entry *entry;
    const char *subnet_id;
    const aws_image *image;
    const aws_reservation *reservation; /* reserved launches: the reservation this override goes into */
} override;

typedef struct failed_offering {
    const char *instance_type, *zone, *capacity_type;
    bool no_capacity; /* EC2 refused it for capacity (not: the node class cannot run it there) */
} failed_offering;

/* What one launch call carries between its CreateFleet attempts. */
typedef struct launch_call {
    aws_state *s;
    const ns_launch_request *req;
    const aws_nodeclass_view *v;
    const aws_catalog *c;
    const char *user_data;
    aws_reservation_set reserved; /* the node class's reservations, resolved when the request allows reserved */
    failed_offering failed[MAX_FAILED]; /* offerings that could not be filled, named in the capacity error */
    size_t n_failed;
    char why[200]; /* the last capacity answer, for the message */
} launch_call;

static void add_failed(launch_call *lc, const char *type, const char *zone, const char *capacity_type,
                       bool no_capacity)
{
    for (size_t i = 0; i < lc->n_failed; i++)
        if (strcmp(lc->failed[i].instance_type, type) == 0 && strcmp(lc->failed[i].zone, zone) == 0 &&
            strcmp(lc->failed[i].capacity_type, capacity_type) == 0)
            return;
    if (lc->n_failed < MAX_FAILED)
        lc->failed[lc->n_failed++] = (failed_offering){type, zone, capacity_type, no_capacity};
}

static void add_tag(aws_query *q, int spec, int *n, const char *key, const char *value)
{
    if (!key || !value || *n > 50) /* EC2 takes 50 tags per resource */
        return;
    aws_query_addf(q, key, "TagSpecification.%d.Tag.%d.Key", spec, *n);
    aws_query_addf(q, value, "TagSpecification.%d.Tag.%d.Value", spec, *n);
    (*n)++;
}

/* The tags that name the cluster, NodePool, node claim and node class, then the node class's and the request's. */
static void add_tags(launch_call *lc, aws_query *q, int spec, const char *resource)
{
    aws_state *s = lc->s;
    const ns_launch_request *req = lc->req;
    aws_query_addf(q, resource, "TagSpecification.%d.ResourceType", spec);
    int n = 1;
    char cluster_key[200];
    snprintf(cluster_key, sizeof(cluster_key), "kubernetes.io/cluster/%s", s->cluster);
    add_tag(q, spec, &n, cluster_key, "owned");
    add_tag(q, spec, &n, AWS_TAG_CLUSTER, s->cluster);
    add_tag(q, spec, &n, AWS_TAG_MANAGED_BY, s->cluster);
    add_tag(q, spec, &n, AWS_TAG_NODEPOOL, req->nodepool_name);
    add_tag(q, spec, &n, AWS_TAG_NODECLAIM, req->nodeclaim_name);
    add_tag(q, spec, &n, AWS_TAG_NODECLASS, lc->v->spec.name);
    for (size_t i = 0; i < lc->v->spec.n_tags; i++)
        add_tag(q, spec, &n, lc->v->spec.tags[i].key, lc->v->spec.tags[i].value);
    for (size_t i = 0; i < req->n_tags; i++)
        add_tag(q, spec, &n, req->tags[i].key, req->tags[i].value);
}

static const char *subnet_zone(const aws_nodeclass_view *v, const char *subnet_id, const char *zone)
{
    if (zone)
        return zone;
    for (size_t i = 0; subnet_id && i < v->n_subnets; i++)
        if (strcmp(v->subnets[i].subnet_id, subnet_id) == 0)
            return v->subnets[i].zone;
    return NULL;
}

static int fill_result(launch_call *lc, const aws_ec2_fleet_instance *fi, const char *capacity_type,
                       ns_launch_result *result)
{
    aws_state *s = lc->s;
    const char *zone = subnet_zone(lc->v, fi->subnet_id, fi->zone);
    const aws_catalog_entry *e = fi->instance_type ? aws_catalog_find(lc->c, fi->instance_type) : NULL;
    const aws_image *image = e ? aws_nodeclass_image_for(lc->v, e->type) : NULL;
    if (!zone || !e || !image || !fi->instance_id)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 CreateFleet launched %s without a known type or zone",
                        fi->instance_id ? fi->instance_id : "(no ID)");
    char provider_id[NS_PROVIDER_ID_MAX + 1];
    int n = snprintf(provider_id, sizeof(provider_id), "aws:///%s/%s", zone, fi->instance_id);
    if (n < 0 || (size_t)n >= NS_PROVIDER_ID_MAX || !aws_copy(result->provider_id, NS_PROVIDER_ID_MAX, provider_id) ||
        !aws_copy(result->instance_type, NS_NAME_MAX, fi->instance_type) ||
        !aws_copy(result->zone, NS_ZONE_MAX, zone) ||
        !aws_copy(result->capacity_type, NS_CAPACITY_TYPE_MAX, capacity_type) ||
        !aws_copy(result->image_id, NS_NAME_MAX, image->id))
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 instance %s: an identifier does not fit", fi->instance_id);
    ns_resources cap, kube, sys, evict;
    aws_resource_settings settings = s->resources;
    settings.instance_store_raid0 = aws_spec_instance_store_raid0(&lc->v->spec);
    aws_instance_resources(e->type, &settings, &cap, &kube, &sys, &evict);
    aws_allocatable(&cap, &kube, &sys, &evict, &result->allocatable);
    result->launch_time_ms = s->host->now_ms(s->ctx);
    return NS_OK;
}

/* The overrides of one capacity type, grouped by image and reservation (one launch template each): templates[k]
 * serves images[k] and reservations[k] (NULL unless reserved) with user_data[k] (NULL: the launch's own). */
typedef struct fleet_plan {
    override ov[MAX_OVERRIDES];
    size_t n;
    const aws_image *images[MAX_GROUPS];
    const aws_reservation *reservations[MAX_GROUPS];
    char *user_data[MAX_GROUPS];
    char templates[MAX_GROUPS][64];
    size_t n_groups;
} fleet_plan;

static void plan_free(fleet_plan *p)
{
    for (size_t k = 0; k < p->n_groups; k++)
        free(p->user_data[k]);
}

static void plan_add(fleet_plan *p, override ov)
{
    p->ov[p->n++] = ov;
    size_t k = 0;
    while (k < p->n_groups && (p->images[k] != ov.image || p->reservations[k] != ov.reservation))
        k++;
    if (k == p->n_groups) {
        p->images[k] = ov.image;
        p->reservations[k] = ov.reservation;
        p->user_data[k] = NULL;
        p->n_groups++;
    }
}

/* Karpenter launches into default, uninterruptible reservations as on-demand instances; capacity blocks and
 * interruptible reservations need their own market options, which aws.so does not send. */
static bool launchable(const aws_reservation *r)
{
    return strcmp(r->reservation_type, "default") == 0 && !r->interruptible;
}

static void plan_overrides(launch_call *lc, const char *capacity_type, fleet_plan *p)
{
    bool reserved = strcmp(capacity_type, NS_CAPACITY_RESERVED) == 0;
    p->n = p->n_groups = 0;
    for (size_t i = 0; i < lc->req->n_options && p->n < MAX_OVERRIDES; i++) {
        const ns_launch_option *o = NS_AT(lc->req->options, i);
        if (strcmp(o->capacity_type, capacity_type) != 0)
            continue;
        const aws_catalog_entry *e = aws_catalog_find(lc->c, o->instance_type);
        const aws_subnet_choice *sn = aws_nodeclass_subnet_in(lc->v, o->zone);
        const aws_image *image = e && aws_nodeclass_runs(&lc->v->spec, e->type) ? aws_nodeclass_image_for(lc->v, e->type)
                                                                                 : NULL;
        /* The core leaves offerings known to be out of capacity out of new launches; a retried launch sends EC2 the
         * same request for its client token. */
        if (!e || !sn || !image) {
            add_failed(lc, o->instance_type, o->zone, capacity_type, false);
            continue;
        }
        if (!reserved) {
            plan_add(p, (override){o, e, sn->subnet_id, image, NULL});
            continue;
        }
        size_t before = p->n;
        for (size_t r = 0; r < lc->reserved.n && p->n < MAX_OVERRIDES; r++) {
            const aws_reservation *res = &lc->reserved.items[r];
            if (strcmp(res->instance_type, o->instance_type) == 0 && strcmp(res->zone, o->zone) == 0 &&
                launchable(res))
                plan_add(p, (override){o, e, sn->subnet_id, image, res});
        }
        if (p->n == before) /* no selected reservation of this type in this zone (any more) */
            add_failed(lc, o->instance_type, o->zone, capacity_type, true);
    }
}

static int fleet_request(launch_call *lc, const fleet_plan *p, const char *capacity_type, const char *token,
                         ns_http_response **resp)
{
    aws_query q;
    aws_query_init(&q, "CreateFleet", AWS_EC2_VERSION);
    aws_query_add(&q, "Type", "instant");
    aws_query_add(&q, "ClientToken", token);
    aws_query_add(&q, "TargetCapacitySpecification.TotalTargetCapacity", "1");
    /* a reservation's instances are on-demand instances its launch template targets */
    bool spot = strcmp(capacity_type, NS_CAPACITY_SPOT) == 0;
    aws_query_add(&q, "TargetCapacitySpecification.DefaultTargetCapacityType", spot ? "spot" : "on-demand");
    if (spot)
        aws_query_add(&q, "SpotOptions.AllocationStrategy", "price-capacity-optimized");
    else
        aws_query_add(&q, "OnDemandOptions.AllocationStrategy", "lowest-price");
    for (size_t k = 0; k < p->n_groups; k++) {
        aws_query_addf(&q, p->templates[k], "LaunchTemplateConfigs.%zu.LaunchTemplateSpecification.LaunchTemplateId",
                       k + 1);
        aws_query_addf(&q, "$Latest", "LaunchTemplateConfigs.%zu.LaunchTemplateSpecification.Version", k + 1);
        size_t m = 0;
        for (size_t i = 0; i < p->n; i++) {
            if (p->ov[i].image != p->images[k] || p->ov[i].reservation != p->reservations[k])
                continue;
            m++;
            aws_query_addf(&q, p->ov[i].option->instance_type, "LaunchTemplateConfigs.%zu.Overrides.%zu.InstanceType",
                           k + 1, m);
            aws_query_addf(&q, p->ov[i].subnet_id, "LaunchTemplateConfigs.%zu.Overrides.%zu.SubnetId", k + 1, m);
        }
    }
    add_tags(lc, &q, 1, "instance");
    add_tags(lc, &q, 2, "volume");
    aws_api_error e = {0};
    int rc = aws_query_failed(&q) ? NS_ERROR(lc->s->host, lc->s->ctx, NS_ERR_INTERNAL, "aws launch: request too large")
                                  : aws_client_query(lc->s->client, "ec2", "CreateFleet", aws_query_body(&q),
                                                     aws_query_len(&q), resp, &e);
    aws_query_free(&q);
    if (strncmp(e.code, "InvalidLaunchTemplate", 21) == 0)
        aws_template_forget(lc->s); /* deleted behind our back: the next attempt creates it again */
    return rc;
}

static int build_user_data(aws_state *s, const ns_launch_request *req, const aws_nodeclass_spec *spec,
                           const ns_label *extra, size_t n_extra, char **out);

/* The user data of a reserved launch: the launch's labels and the reservation's (Karpenter's NodeClaim of a reserved
 * offering carries them, and the kubelet registers the node with them). *out is malloc'd. */
static int reserved_user_data(launch_call *lc, const aws_reservation *r, char **out)
{
    ns_label extra[] = {{AWS_LABEL_RESERVATION_ID, r->id}, {AWS_LABEL_RESERVATION_TYPE, r->reservation_type}};
    return build_user_data(lc->s, lc->req, &lc->v->spec, extra, 2, out);
}

/* One CreateFleet over the request's options of capacity_type. NS_OK with *result; NS_ERR_INSUFFICIENT_CAPACITY
 * (nothing reported yet: the failed offerings are recorded in lc); or another error, reported. */
static int fleet_attempt(launch_call *lc, const char *capacity_type, const char *token, ns_launch_result *result)
{
    aws_state *s = lc->s;
    fleet_plan p;
    plan_overrides(lc, capacity_type, &p);
    if (p.n == 0) {
        snprintf(lc->why, sizeof(lc->why), "every %s offering is unknown, outside the node class's subnets, without "
                 "an image for its architecture%s", capacity_type,
                 strcmp(capacity_type, NS_CAPACITY_RESERVED) == 0 ? " or without a selected capacity reservation" : "");
        return NS_ERR_INSUFFICIENT_CAPACITY;
    }
    int rc = NS_OK;
    for (size_t k = 0; k < p.n_groups && rc == NS_OK; k++) {
        if (p.reservations[k])
            rc = reserved_user_data(lc, p.reservations[k], &p.user_data[k]);
        if (rc == NS_OK)
            rc = aws_template_ensure(s, lc->v, p.images[k], p.user_data[k] ? p.user_data[k] : lc->user_data,
                                     p.reservations[k] ? p.reservations[k]->id : NULL, p.templates[k],
                                     sizeof(p.templates[k]));
    }
    ns_http_response *resp = NULL;
    if (rc == NS_OK)
        rc = fleet_request(lc, &p, capacity_type, token, &resp);
    plan_free(&p);
    if (rc != NS_OK)
        return rc;
    aws_ec2_fleet_result f;
    char err[256];
    rc = aws_ec2_parse_create_fleet(resp->body, resp->body_len, &f, err, sizeof(err));
    s->host->http_response_free(resp);
    if (rc != NS_OK) {
        aws_ec2_fleet_result_free(&f);
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 CreateFleet: unexpected answer: %s", err);
    }
    /* Remember exactly the offerings EC2 could not fill, launched or not; a reserved offering only when none of its
     * reservations launched (EC2 names each full one, and another of the same type and zone may have taken it). */
    bool reserved = strcmp(capacity_type, NS_CAPACITY_RESERVED) == 0;
    const char *other = NULL, *other_message = NULL;
    for (size_t i = 0; i < f.n_errors; i++) {
        const aws_ec2_fleet_error *fe = &f.errors[i];
        const char *zone = subnet_zone(lc->v, fe->subnet_id, fe->zone);
        const override *o = NULL;
        for (size_t k = 0; fe->instance_type && zone && k < p.n && !o; k++)
            if (strcmp(p.ov[k].option->instance_type, fe->instance_type) == 0 && strcmp(p.ov[k].option->zone, zone) == 0)
                o = &p.ov[k];
        if (aws_fleet_error_unfulfillable(fe->code) && o) {
            if (!reserved || f.n_instances == 0)
                add_failed(lc, o->option->instance_type, o->option->zone, capacity_type, true);
            snprintf(lc->why, sizeof(lc->why), "EC2 answered %s", fe->code);
        } else if (!other) {
            other = fe->code;
            other_message = fe->message;
        }
    }
    if (f.n_instances > 0)
        rc = fill_result(lc, &f.instances[0], capacity_type, result);
    else if (other)
        rc = NS_ERROR(s->host, s->ctx, aws_classify_error(other, 400).category,
                      "ec2 CreateFleet for nodeclaim %s launched nothing: %s: %s",
                      lc->req->nodeclaim_name ? lc->req->nodeclaim_name : "(unnamed)", other,
                      other_message ? other_message : "no message");
    else
        rc = NS_ERR_INSUFFICIENT_CAPACITY;
    if (rc == NS_ERR_INSUFFICIENT_CAPACITY && f.n_errors == 0)
        snprintf(lc->why, sizeof(lc->why), "EC2 answered with no instance and no error");
    aws_ec2_fleet_result_free(&f);
    return rc;
}

/* Reports the offerings that had no capacity, naming each as the ABI asks (error first, then the offerings). */
static int report_no_capacity(launch_call *lc)
{
    aws_state *s = lc->s;
    int rc = NS_ERROR(s->host, s->ctx, NS_ERR_INSUFFICIENT_CAPACITY,
                      "aws launch of nodeclaim %s: no capacity in any of %zu offerings: %s",
                      lc->req->nodeclaim_name ? lc->req->nodeclaim_name : "(unnamed)", lc->n_failed, lc->why);
    for (size_t i = 0; i < lc->n_failed; i++)
        s->host->error_unavailable_offering(s->ctx, lc->failed[i].instance_type, lc->failed[i].zone,
                                            lc->failed[i].capacity_type);
    return rc;
}

static bool wants(const ns_launch_request *req, const char *capacity_type, bool nvidia_only, const aws_catalog *c)
{
    for (size_t i = 0; i < req->n_options; i++) {
        const ns_launch_option *o = NS_AT(req->options, i);
        if (capacity_type && strcmp(o->capacity_type, capacity_type) == 0)
            return true;
        const aws_catalog_entry *e = nvidia_only ? aws_catalog_find(c, o->instance_type) : NULL;
        if (e && e->type->gpu_count > 0 && e->type->gpu_manufacturer &&
            strcmp(e->type->gpu_manufacturer, "NVIDIA") == 0)
            return true;
    }
    return false;
}

/* The user data of this launch: the family's bootstrap with the request's labels (and `extra`) and taints, and the
 * node class's own userData. *out is malloc'd (NULL for none). */
static int build_user_data(aws_state *s, const ns_launch_request *req, const aws_nodeclass_spec *spec,
                           const ns_label *extra, size_t n_extra, char **out)
{
    *out = NULL;
    ns_label *labels = NULL;
    if (n_extra) {
        labels = malloc((req->n_labels + n_extra) * sizeof(*labels));
        if (!labels)
            return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory building the user data of nodeclaim %s",
                            req->nodeclaim_name ? req->nodeclaim_name : "(unnamed)");
        for (size_t i = 0; i < req->n_labels; i++)
            labels[i] = req->labels[i];
        for (size_t i = 0; i < n_extra; i++)
            labels[req->n_labels + i] = extra[i];
    }
    aws_bootstrap b = {.family = spec->family, .cluster_name = s->cluster, .cluster_dns = spec->cluster_dns,
                       .max_pods = spec->max_pods, .labels = labels ? labels : req->labels,
                       .n_labels = req->n_labels + n_extra, .custom = spec->user_data,
                       .instance_store_raid0 = aws_spec_instance_store_raid0(spec),
                       .bottlerocket_default_bind = aws_bottlerocket_default_bind(spec->alias_version)};
    ns_taint taints[MAX_TAINTS];
    for (size_t i = 0; i < req->n_taints && b.n_taints < MAX_TAINTS; i++)
        taints[b.n_taints++] = req->taints[i];
    for (size_t i = 0; i < req->n_startup_taints && b.n_taints < MAX_TAINTS; i++)
        taints[b.n_taints++] = req->startup_taints[i];
    b.taints = taints;
    int rc = spec->family != AWS_FAMILY_CUSTOM ? aws_cluster_info(s, &b.endpoint, &b.ca_bundle, &b.cluster_cidr)
                                               : NS_OK;
    if (rc != NS_OK) {
        free(labels);
        return rc;
    }
    char err[512];
    rc = aws_userdata_build(&b, out, err, sizeof(err));
    free(labels);
    return rc == NS_OK ? NS_OK
                       : NS_ERROR(s->host, s->ctx, rc, "%s %s: spec.userData: %s", spec->kind, spec->name, err);
}

/* The client token of the reserved attempt ("-cr"), and of the on-demand attempt that follows a spot attempt without
 * capacity ("-od"): derived from the request's, so a retried launch finds the same instance. EC2 takes at most 64
 * characters. */
static void derived_token(const char *token, const char *suffix, char *out, size_t len)
{
    size_t n = strlen(token), m = strlen(suffix);
    if (n + m <= 64 && n + m < len) {
        memcpy(out, token, n);
        memcpy(out + n, suffix, m + 1);
        return;
    }
    char hash[65];
    prov_sha256_hex(token, strlen(token), hash);
    snprintf(out, len, "%.40s%s", hash, suffix);
}

/* The attempts of one launch, in Karpenter's order of capacity types: reserved, spot, on-demand. */
static int launch_attempts(launch_call *lc, ns_launch_result *result)
{
    const ns_launch_request *req = lc->req;
    bool reserved = wants(req, NS_CAPACITY_RESERVED, false, lc->c), spot = wants(req, NS_CAPACITY_SPOT, false, lc->c);
    bool on_demand = wants(req, NS_CAPACITY_ON_DEMAND, false, lc->c);
    char token[72];
    int rc = NS_ERR_INSUFFICIENT_CAPACITY;
    snprintf(lc->why, sizeof(lc->why), "no option is of a capacity type aws.so launches (reserved, spot, on-demand)");
    if (reserved) {
        rc = aws_reservations_resolve(lc->s, &lc->v->spec, &lc->reserved);
        derived_token(req->client_token, "-cr", token, sizeof(token));
        if (rc == NS_OK)
            rc = fleet_attempt(lc, NS_CAPACITY_RESERVED, token, result);
    }
    if (rc == NS_ERR_INSUFFICIENT_CAPACITY && spot)
        rc = fleet_attempt(lc, NS_CAPACITY_SPOT, req->client_token, result);
    if (rc == NS_ERR_INSUFFICIENT_CAPACITY && on_demand) {
        if (spot)
            derived_token(req->client_token, "-od", token, sizeof(token));
        rc = fleet_attempt(lc, NS_CAPACITY_ON_DEMAND, spot ? token : req->client_token, result);
    }
    return rc == NS_ERR_INSUFFICIENT_CAPACITY ? report_no_capacity(lc) : rc;
}

int aws_launch(void *state, const ns_launch_request *req, ns_launch_result *result)
{
    aws_state *s = state;
    if (!req->options || req->n_options == 0 || !req->client_token || !*req->client_token ||
        strlen(req->client_token) > 64)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT,
                        "aws launch: needs at least one option and a client token of 1 to 64 characters");
    aws_catalog *c = NULL;
    int rc = aws_catalog_acquire(s, &c);
    if (rc != NS_OK)
        return rc;
    aws_nodeclass_view *v = malloc(sizeof(*v));
    launch_call *lc = calloc(1, sizeof(*lc));
    char *user_data = NULL;
    if (!v || !lc)
        rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory launching nodeclaim %s",
                      req->nodeclaim_name ? req->nodeclaim_name : "(unnamed)");
    if (rc == NS_OK)
        rc = aws_nodeclass_resolve(s, req->nodeclass, wants(req, NULL, true, c), v);
    if (rc == NS_OK)
        rc = build_user_data(s, req, &v->spec, NULL, 0, &user_data);
    if (rc == NS_OK) {
        *lc = (launch_call){.s = s, .req = req, .v = v, .c = c, .user_data = user_data};
        rc = launch_attempts(lc, result);
    }
    /* A launch that got an instance still names the offerings EC2 refused for capacity on the way, for the core's
     * unavailable-offerings cache. */
    for (size_t i = 0; rc == NS_OK && i < lc->n_failed; i++)
        if (lc->failed[i].no_capacity)
            s->host->error_unavailable_offering(s->ctx, lc->failed[i].instance_type, lc->failed[i].zone,
                                                lc->failed[i].capacity_type);
    if (rc == NS_OK) {
        ns_label fields[] = {{"nodeclaim", req->nodeclaim_name ? req->nodeclaim_name : ""},
                             {"provider_id", result->provider_id},
                             {"instance_type", result->instance_type},
                             {"capacity_type", result->capacity_type}};
        s->host->log(s->ctx, NS_LOG_INFO, "aws instance launched", fields, 4);
    }
    free(user_data);
    if (lc)
        aws_reservation_set_free(&lc->reserved);
    free(lc);
    free(v);
    aws_catalog_release(s, c);
    return rc;
}
