/* launch: one launch template per node class, architecture and configuration, then CreateFleet (type instant) over
 * the request's options of one capacity type, with EC2's ClientToken carrying the request's idempotency key.
 * Offerings EC2 refuses for capacity are remembered for AWS_UNAVAILABLE_TTL_MS, as Karpenter does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "aws_errors.h"
#include "aws_provider.h"
#include "aws_query.h"
#include "aws_sigv4.h"

#define MAX_OVERRIDES 60 /* CreateFleet accepts up to 300 overrides; Karpenter sends at most 60 */

bool aws_offering_unavailable(aws_state *s, const char *type, const char *zone, const char *capacity_type)
{
    int64_t now = s->host->now_ms(s->ctx);
    bool found = false;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_unavailable && !found; i++) {
        const aws_unavailable *u = &s->unavailable[i];
        found = u->until_ms > now && strcmp(u->instance_type, type) == 0 && strcmp(u->zone, zone) == 0 &&
                strcmp(u->capacity_type, capacity_type) == 0;
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}

void aws_mark_unavailable(aws_state *s, const char *type, const char *zone, const char *capacity_type)
{
    int64_t now = s->host->now_ms(s->ctx);
    pthread_mutex_lock(&s->lock);
    /* Reuse the entry of the same offering, or an expired one, or the one expiring first. */
    size_t slot = s->n_unavailable;
    for (size_t i = 0; i < s->n_unavailable; i++) {
        aws_unavailable *u = &s->unavailable[i];
        if ((strcmp(u->instance_type, type) == 0 && strcmp(u->zone, zone) == 0 &&
             strcmp(u->capacity_type, capacity_type) == 0) ||
            u->until_ms <= now) {
            slot = i;
            break;
        }
    }
    if (slot == AWS_MAX_UNAVAILABLE) {
        slot = 0;
        for (size_t i = 1; i < s->n_unavailable; i++)
            if (s->unavailable[i].until_ms < s->unavailable[slot].until_ms)
                slot = i;
    } else if (slot == s->n_unavailable) {
        s->n_unavailable++;
    }
    aws_unavailable *u = &s->unavailable[slot];
    aws_copy(u->instance_type, sizeof(u->instance_type), type);
    aws_copy(u->zone, sizeof(u->zone), zone);
    aws_copy(u->capacity_type, sizeof(u->capacity_type), capacity_type);
    u->until_ms = now + AWS_UNAVAILABLE_TTL_MS;
    pthread_mutex_unlock(&s->lock);
}

/* The launch template's name encodes everything in it, so a changed node class gets a new template. */
static void template_name(aws_state *s, const ns_nodeclass *nc, const aws_nodeclass_view *v, const char *image,
                          char *name, size_t len)
{
    aws_buf key = AWS_BUF_INIT;
    const char *nodeclass = nc && nc->name ? nc->name : "default";
    aws_buf_printf(&key, "%s|%s|%s|%s|%s|", s->cluster, nodeclass, image,
                   v->instance_profile ? v->instance_profile : "", v->user_data ? v->user_data : "");
    for (size_t i = 0; i < v->n_security_groups; i++)
        aws_buf_printf(&key, "%s,", v->security_groups[i]);
    char hash[65] = "0000000000000000";
    aws_sigv4_sha256_hex(aws_buf_str(&key), key.len, hash);
    aws_buf_free(&key);
    /* EC2 allows 128 characters; a longer readable name falls back to the hash alone. */
    char readable[512];
    int n = snprintf(readable, sizeof(readable), "nodesmith/%s/%s/%.16s", s->cluster, nodeclass, hash);
    if (n > 0 && (size_t)n < len)
        memcpy(name, readable, (size_t)n + 1);
    else
        snprintf(name, len, "nodesmith/%.32s", hash);
}

static bool cached_template(aws_state *s, const char *name, char *id, size_t len)
{
    bool found = false;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_templates && !found; i++)
        if (strcmp(s->template_names[i], name) == 0)
            found = aws_copy(id, len, s->template_ids[i]);
    pthread_mutex_unlock(&s->lock);
    return found;
}

static void remember_template(aws_state *s, const char *name, const char *id)
{
    pthread_mutex_lock(&s->lock);
    size_t slot = s->n_templates < AWS_MAX_TEMPLATES ? s->n_templates++ : 0;
    aws_copy(s->template_names[slot], sizeof(s->template_names[slot]), name);
    aws_copy(s->template_ids[slot], sizeof(s->template_ids[slot]), id);
    pthread_mutex_unlock(&s->lock);
}

static int find_template(aws_state *s, const char *name, char *id, size_t len, bool *found)
{
    aws_query q;
    aws_query_init(&q, "DescribeLaunchTemplates", AWS_EC2_VERSION);
    aws_query_add(&q, "LaunchTemplateName.1", name);
    ns_http_response *resp = NULL;
    aws_api_error e;
    int rc = aws_client_query(s->client, "ec2", "DescribeLaunchTemplates", aws_query_body(&q), aws_query_len(&q),
                              &resp, &e);
    aws_query_free(&q);
    *found = false;
    if (rc == NS_ERR_NOT_FOUND)
        return NS_OK;
    if (rc != NS_OK)
        return rc;
    aws_ec2_launch_template_page page;
    char err[256];
    rc = aws_ec2_parse_launch_templates(resp->body, resp->body_len, &page, err, sizeof(err));
    s->host->http_response_free(resp);
    if (rc == NS_OK && page.n > 0 && page.items[0].id)
        *found = aws_copy(id, len, page.items[0].id);
    aws_ec2_launch_template_page_free(&page);
    return rc == NS_OK ? NS_OK
                       : NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeLaunchTemplates: unexpected answer: %s",
                                  err);
}

static int create_template(aws_state *s, const char *name, const aws_nodeclass_view *v, const char *image, char *id,
                           size_t len)
{
    aws_query q;
    aws_query_init(&q, "CreateLaunchTemplate", AWS_EC2_VERSION);
    aws_query_add(&q, "LaunchTemplateName", name);
    aws_query_add(&q, "LaunchTemplateData.ImageId", image);
    for (size_t i = 0; i < v->n_security_groups; i++)
        aws_query_addf(&q, v->security_groups[i], "LaunchTemplateData.SecurityGroupId.%zu", i + 1);
    if (v->instance_profile)
        aws_query_add(&q, "LaunchTemplateData.IamInstanceProfile.Name", v->instance_profile);
    aws_query_add(&q, "LaunchTemplateData.MetadataOptions.HttpTokens", "required");
    aws_query_add(&q, "LaunchTemplateData.MetadataOptions.HttpPutResponseHopLimit", "1");
    char *encoded = NULL;
    if (v->user_data) {
        size_t n = strlen(v->user_data);
        encoded = malloc(4 * ((n + 2) / 3) + 1);
        if (!encoded) {
            aws_query_free(&q);
            return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory encoding user data");
        }
        EVP_EncodeBlock((unsigned char *)encoded, (const unsigned char *)v->user_data, (int)n);
        aws_query_add(&q, "LaunchTemplateData.UserData", encoded);
        free(encoded);
    }
    aws_query_add(&q, "TagSpecification.1.ResourceType", "launch-template");
    aws_query_add(&q, "TagSpecification.1.Tag.1.Key", AWS_TAG_MANAGED_BY);
    aws_query_add(&q, "TagSpecification.1.Tag.1.Value", s->cluster);
    ns_http_response *resp = NULL;
    aws_api_error e;
    int rc = aws_client_query(s->client, "ec2", "CreateLaunchTemplate", aws_query_body(&q), aws_query_len(&q), &resp,
                              &e);
    aws_query_free(&q);
    if (rc != NS_OK) {
        /* Another launch created it first: use theirs. */
        bool found = false;
        if (strcmp(e.code, "InvalidLaunchTemplateName.AlreadyExistsException") == 0 &&
            find_template(s, name, id, len, &found) == NS_OK && found)
            return NS_OK;
        return rc;
    }
    aws_ec2_launch_template_page page;
    char err[256];
    rc = aws_ec2_parse_create_launch_template(resp->body, resp->body_len, &page, err, sizeof(err));
    s->host->http_response_free(resp);
    if (rc == NS_OK && !aws_copy(id, len, page.items[0].id))
        rc = NS_ERR_INTERNAL;
    aws_ec2_launch_template_page_free(&page);
    if (rc != NS_OK)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 CreateLaunchTemplate %s: unexpected answer: %s", name,
                        err);
    ns_label fields[] = {{"name", name}, {"id", id}, {"image", image}};
    s->host->log(s->ctx, NS_LOG_INFO, "aws launch template created", fields, 3);
    return NS_OK;
}

static int ensure_template(aws_state *s, const ns_nodeclass *nc, const aws_nodeclass_view *v, const char *image,
                           char *id, size_t len)
{
    char name[128];
    template_name(s, nc, v, image, name, sizeof(name));
    if (cached_template(s, name, id, len))
        return NS_OK;
    bool found = false;
    int rc = find_template(s, name, id, len, &found);
    if (rc == NS_OK && !found)
        rc = create_template(s, name, v, image, id, len);
    if (rc == NS_OK)
        remember_template(s, name, id);
    return rc;
}

typedef struct override {
    const ns_launch_option *option;
    const aws_catalog_entry *entry;
    const char *subnet_id;
    int config; /* 0 = amd64 template, 1 = arm64 template */
} override;

static void add_tag(aws_query *q, int spec, int *n, const char *key, const char *value)
{
    if (!key || !value)
        return;
    aws_query_addf(q, key, "TagSpecification.%d.Tag.%d.Key", spec, *n);
    aws_query_addf(q, value, "TagSpecification.%d.Tag.%d.Value", spec, *n);
    (*n)++;
}

static void add_tags(aws_state *s, aws_query *q, int spec, const char *resource, const ns_launch_request *req)
{
    aws_query_addf(q, resource, "TagSpecification.%d.ResourceType", spec);
    int n = 1;
    char cluster_key[200];
    snprintf(cluster_key, sizeof(cluster_key), "kubernetes.io/cluster/%s", s->cluster);
    add_tag(q, spec, &n, AWS_TAG_MANAGED_BY, s->cluster);
    add_tag(q, spec, &n, AWS_TAG_CLUSTER, s->cluster);
    add_tag(q, spec, &n, cluster_key, "owned");
    add_tag(q, spec, &n, AWS_TAG_NODEPOOL, req->nodepool_name);
    add_tag(q, spec, &n, AWS_TAG_NODECLAIM, req->nodeclaim_name);
    add_tag(q, spec, &n, AWS_TAG_NODECLASS, req->nodeclass ? req->nodeclass->name : NULL);
    for (size_t i = 0; i < req->n_tags && n <= 50; i++)
        add_tag(q, spec, &n, req->tags[i].key, req->tags[i].value);
}

/* Reports the offerings that had no capacity, naming each as the ABI asks (error first, then the offerings). */
static int report_no_capacity(aws_state *s, const override *ov, size_t n, const char *capacity_type, const char *why)
{
    int rc = NS_ERROR(s->host, s->ctx, NS_ERR_INSUFFICIENT_CAPACITY, "aws launch: no %s capacity in any of %zu "
                                                                     "offerings: %s",
                      capacity_type, n, why);
    for (size_t i = 0; i < n; i++)
        s->host->error_unavailable_offering(s->ctx, ov[i].option->instance_type, ov[i].option->zone, capacity_type);
    return rc;
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

static int fill_result(aws_state *s, const aws_ec2_fleet_instance *fi, const aws_nodeclass_view *v,
                       const aws_catalog *c, const char *capacity_type, ns_launch_result *result)
{
    const char *zone = subnet_zone(v, fi->subnet_id, fi->zone);
    const aws_catalog_entry *e = fi->instance_type ? aws_catalog_find(c, fi->instance_type) : NULL;
    if (!zone || !e)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 CreateFleet launched %s without a known type or zone",
                        fi->instance_id ? fi->instance_id : "(no ID)");
    bool arm = strcmp(aws_kubernetes_arch(e->type), "arm64") == 0;
    char provider_id[NS_PROVIDER_ID_MAX + 1];
    int n = snprintf(provider_id, sizeof(provider_id), "aws:///%s/%s", zone, fi->instance_id);
    if (n < 0 || (size_t)n >= NS_PROVIDER_ID_MAX || !aws_copy(result->provider_id, NS_PROVIDER_ID_MAX, provider_id) ||
        !aws_copy(result->instance_type, NS_NAME_MAX, fi->instance_type) ||
        !aws_copy(result->zone, NS_ZONE_MAX, zone) || !aws_copy(result->capacity_type, NS_CAPACITY_TYPE_MAX, capacity_type) ||
        !aws_copy(result->image_id, NS_NAME_MAX, arm ? v->image_arm64 : v->image_amd64))
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 instance %s: an identifier does not fit", fi->instance_id);
    ns_resources cap, kube, sys, evict;
    aws_instance_resources(e->type, &s->resources, &cap, &kube, &sys, &evict);
    aws_allocatable(&cap, &kube, &sys, &evict, &result->allocatable);
    result->launch_time_ms = s->host->now_ms(s->ctx);
    return NS_OK;
}

static int create_fleet(aws_state *s, const ns_launch_request *req, const aws_nodeclass_view *v, const aws_catalog *c,
                        override *ov, size_t n, const char *capacity_type, const char templates[2][64],
                        ns_launch_result *result)
{
    aws_query q;
    aws_query_init(&q, "CreateFleet", AWS_EC2_VERSION);
    aws_query_add(&q, "Type", "instant");
    aws_query_add(&q, "ClientToken", req->client_token);
    aws_query_add(&q, "TargetCapacitySpecification.TotalTargetCapacity", "1");
    aws_query_add(&q, "TargetCapacitySpecification.DefaultTargetCapacityType", capacity_type);
    if (strcmp(capacity_type, NS_CAPACITY_SPOT) == 0)
        aws_query_add(&q, "SpotOptions.AllocationStrategy", "price-capacity-optimized");
    else
        aws_query_add(&q, "OnDemandOptions.AllocationStrategy", "lowest-price");
    int config_index[2] = {0, 0}, next_config = 1, per_config[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        int k = ov[i].config;
        if (!config_index[k]) {
            config_index[k] = next_config++;
            aws_query_addf(&q, templates[k], "LaunchTemplateConfigs.%d.LaunchTemplateSpecification.LaunchTemplateId",
                           config_index[k]);
            aws_query_addf(&q, "$Latest", "LaunchTemplateConfigs.%d.LaunchTemplateSpecification.Version",
                           config_index[k]);
        }
        int m = ++per_config[k];
        aws_query_addf(&q, ov[i].option->instance_type, "LaunchTemplateConfigs.%d.Overrides.%d.InstanceType",
                       config_index[k], m);
        aws_query_addf(&q, ov[i].subnet_id, "LaunchTemplateConfigs.%d.Overrides.%d.SubnetId", config_index[k], m);
        char priority[16];
        snprintf(priority, sizeof(priority), "%zu", i + 1);
        aws_query_addf(&q, priority, "LaunchTemplateConfigs.%d.Overrides.%d.Priority", config_index[k], m);
    }
    add_tags(s, &q, 1, "instance", req);
    add_tags(s, &q, 2, "volume", req);
    ns_http_response *resp = NULL;
    int rc = aws_query_failed(&q) ? NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "aws launch: request too large")
                                  : aws_client_query(s->client, "ec2", "CreateFleet", aws_query_body(&q),
                                                     aws_query_len(&q), &resp, NULL);
    aws_query_free(&q);
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
    /* Remember every offering EC2 could not fill, launched or not. */
    const char *first_other = NULL, *first_message = NULL;
    for (size_t i = 0; i < f.n_errors; i++) {
        const aws_ec2_fleet_error *fe = &f.errors[i];
        const char *zone = subnet_zone(v, fe->subnet_id, fe->zone);
        if (aws_fleet_error_unfulfillable(fe->code) && fe->instance_type && zone)
            aws_mark_unavailable(s, fe->instance_type, zone, capacity_type);
        else if (!first_other) {
            first_other = fe->code;
            first_message = fe->message;
        }
    }
    if (f.n_instances > 0)
        rc = fill_result(s, &f.instances[0], v, c, capacity_type, result);
    else if (first_other) {
        aws_error_class cls = aws_classify_error(first_other, 400);
        rc = NS_ERROR(s->host, s->ctx, cls.category, "ec2 CreateFleet for nodeclaim %s launched nothing: %s: %s",
                      req->nodeclaim_name ? req->nodeclaim_name : "(unnamed)", first_other,
                      first_message ? first_message : "no message");
    } else {
        char why[160];
        snprintf(why, sizeof(why), "EC2 answered %s", f.n_errors ? f.errors[0].code : "no instance and no error");
        rc = report_no_capacity(s, ov, n, capacity_type, why);
    }
    aws_ec2_fleet_result_free(&f);
    return rc;
}

int aws_launch(void *state, const ns_launch_request *req, ns_launch_result *result)
{
    aws_state *s = state;
    if (!req->options || req->n_options == 0 || !req->client_token || !*req->client_token ||
        strlen(req->client_token) > 64)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_ARGUMENT,
                        "aws launch: needs at least one option and a client token of 1 to 64 characters");
    /* Spot when any option is spot (the cheaper capacity), else on-demand. */
    const char *capacity_type = NS_CAPACITY_ON_DEMAND;
    for (size_t i = 0; i < req->n_options; i++)
        if (strcmp(NS_AT(req->options, i)->capacity_type, NS_CAPACITY_SPOT) == 0)
            capacity_type = NS_CAPACITY_SPOT;
    aws_nodeclass_view v;
    int rc = aws_nodeclass_resolve(s, req->nodeclass, &v);
    if (rc != NS_OK)
        return rc;
    aws_catalog *c = NULL;
    if ((rc = aws_catalog_acquire(s, &c)) != NS_OK)
        return rc;
    override ov[MAX_OVERRIDES], skipped[MAX_OVERRIDES];
    size_t n = 0, n_skipped = 0;
    bool need[2] = {false, false};
    for (size_t i = 0; i < req->n_options && n < MAX_OVERRIDES; i++) {
        const ns_launch_option *o = NS_AT(req->options, i);
        if (strcmp(o->capacity_type, capacity_type) != 0)
            continue;
        const aws_catalog_entry *e = aws_catalog_find(c, o->instance_type);
        const aws_subnet_choice *sn = aws_nodeclass_subnet_in(&v, o->zone);
        int config = e && strcmp(aws_kubernetes_arch(e->type), "arm64") == 0 ? 1 : 0;
        const char *image = config ? v.image_arm64 : v.image_amd64;
        override entry = {o, e, sn ? sn->subnet_id : NULL, config};
        if (!e || !sn || !image[0] || aws_offering_unavailable(s, o->instance_type, o->zone, capacity_type)) {
            skipped[n_skipped++] = entry;
            continue;
        }
        need[config] = true;
        ov[n++] = entry;
    }
    char templates[2][64] = {"", ""};
    if (n == 0)
        rc = report_no_capacity(s, skipped, n_skipped, capacity_type,
                                "every offering is unknown, outside the node class's subnets, without an image for "
                                "its architecture, or recently out of capacity");
    for (int k = 0; k < 2 && rc == NS_OK && n; k++)
        if (need[k])
            rc = ensure_template(s, req->nodeclass, &v, k ? v.image_arm64 : v.image_amd64, templates[k], 64);
    if (rc == NS_OK && n)
        rc = create_fleet(s, req, &v, c, ov, n, capacity_type, (const char(*)[64])templates, result);
    if (rc == NS_OK) {
        ns_label fields[] = {{"nodeclaim", req->nodeclaim_name ? req->nodeclaim_name : ""},
                             {"provider_id", result->provider_id},
                             {"instance_type", result->instance_type},
                             {"capacity_type", result->capacity_type}};
        s->host->log(s->ctx, NS_LOG_INFO, "aws instance launched", fields, 4);
    }
    aws_catalog_release(s, c);
    return rc;
}
