/* launch: CreateAutoProvisioningGroup of type instant with up to 20 (type, vSwitch) choices of one capacity type
 * (spot first when the request allows it, as Karpenter prefers spot; then on-demand), ECS taking the cheapest with
 * stock (lowest-price). Exactly the choices ECS refused for stock are named to the host (error_unavailable_offering),
 * also when another choice launched: the core's unavailable-offerings cache keeps them; the provider keeps none.
 * One instance per node claim, twice over: each group carries a ClientToken derived from the request's token and the
 * group's own parameters (ECS refuses one token for different parameters, and the core retries a claim with fewer
 * options under the same token), so a repeated call returns the first answer; and before launching, an instance
 * already tagged with the claim (a launch whose answer was lost) is returned instead of starting another. */
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ali_json.h"
#include "ali_provider.h"
#include "prov_digest.h"

#define MAX_CHOICES 20

/* Offerings ECS refused for stock during one launch, named to the host. */
typedef struct refused {
    char type[MAX_CHOICES * 2][64];
    char zone[MAX_CHOICES * 2][NS_ZONE_MAX];
    const char *capacity_type[MAX_CHOICES * 2];
    size_t n;
} refused;

typedef struct choice {
    const ns_launch_option *o;
    const ali_vswitch *vswitch;
    const ali_entry *entry;
} choice;

/* The choices of the launch: one capacity type and one architecture (one image per group), cheapest first. */
static size_t pick(ali_state *s, const ns_launch_request *req, const ali_nodeclass_view *v, const ali_catalog *c,
                   choice *out, const char *capacity_type, const ali_image **image)
{
    *image = NULL;
    size_t n = 0;
    for (size_t i = 0; i < req->n_options && n < MAX_CHOICES; i++) {
        const ns_launch_option *o = NS_AT(req->options, i);
        if (!o->capacity_type || !o->instance_type || !o->zone || strcmp(o->capacity_type, capacity_type) != 0)
            continue;
        const ali_entry *e = ali_catalog_find(c, o->instance_type);
        const ali_vswitch *w = ali_view_vswitch_in(v, o->zone);
        const ali_image *im = e ? ali_view_image_for(v, e->t.arch) : NULL;
        if (!e || !w || !im || (*image && *image != im))
            continue;
        *image = im;
        out[n++] = (choice){o, w, e};
    }
    return n;
}

/* vSwitchSelectionPolicy balanced (the reference port's rule): the zone is drawn at random among the choices' zones
 * rather than taken from the cheapest choice. The choices are regrouped zone by zone from a random first zone, each
 * zone's in price order, and launched with the prioritized strategy, so ECS keeps that order. */
static void balance(choice *ch, size_t n)
{
    const char *zones[MAX_CHOICES];
    size_t n_zones = 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t z = 0; z < n_zones; z++)
            seen |= strcmp(zones[z], ch[i].o->zone) == 0;
        if (!seen)
            zones[n_zones++] = ch[i].o->zone;
    }
    unsigned char r = 0;
    if (n_zones < 2 || RAND_bytes(&r, 1) != 1)
        return;
    choice out[MAX_CHOICES];
    size_t k = 0;
    for (size_t z = 0; z < n_zones; z++) {
        const char *zone = zones[(r + z) % n_zones];
        for (size_t i = 0; i < n; i++)
            if (strcmp(ch[i].o->zone, zone) == 0)
                out[k++] = ch[i];
    }
    memcpy(ch, out, n * sizeof(*ch));
}

static void add_tag(ali_params *p, size_t *n, const char *key, const char *value)
{
    ++*n;
    ali_params_addf(p, key, "LaunchConfiguration.Tag.%zu.Key", *n);
    ali_params_addf(p, value, "LaunchConfiguration.Tag.%zu.Value", *n);
}

static void launch_params(ali_state *s, const ns_launch_request *req, const ali_nodeclass_view *v, const choice *ch,
                          size_t n, const char *capacity_type, const ali_image *image, const char *user_data,
                          const char *token, ali_params *p)
{
    const ali_nodeclass_spec *sp = v->spec;
    bool spot = strcmp(capacity_type, NS_CAPACITY_SPOT) == 0;
    ali_params_add(p, "AutoProvisioningGroupType", "instant");
    ali_params_add(p, "ClientToken", token);
    ali_params_add(p, "TotalTargetCapacity", "1");
    ali_params_add(p, spot ? "SpotTargetCapacity" : "PayAsYouGoTargetCapacity", "1");
    ali_params_add(p, "DefaultTargetCapacityType", spot ? "Spot" : "PayAsYouGo");
    const char *strategy = sp->balanced ? "prioritized" : "lowest-price";
    ali_params_add(p, "SpotAllocationStrategy", strategy);
    ali_params_add(p, "PayAsYouGoAllocationStrategy", strategy);
    ali_params_add(p, "SpotInstanceInterruptionBehavior", "terminate");
    ali_params_add(p, "Tag.1.Key", "karpenter.k8s.alibabacloud/autoprovisiongroup");
    ali_params_add(p, "Tag.1.Value", "true");
    for (size_t i = 0; i < n; i++) {
        ali_params_addf(p, ch[i].o->instance_type, "LaunchTemplateConfig.%zu.InstanceType", i + 1);
        ali_params_addf(p, ch[i].vswitch->id, "LaunchTemplateConfig.%zu.VSwitchId", i + 1);
        ali_params_addf(p, "1", "LaunchTemplateConfig.%zu.WeightedCapacity", i + 1);
        char prio[16];
        snprintf(prio, sizeof(prio), "%zu", i);
        ali_params_addf(p, prio, "LaunchTemplateConfig.%zu.Priority", i + 1);
    }
    ali_params_add(p, "LaunchConfiguration.ImageId", image->id);
    ali_params_add(p, "LaunchConfiguration.UserData", user_data);
    for (size_t i = 0; i < v->n_groups; i++)
        ali_params_addf(p, v->groups[i], "LaunchConfiguration.SecurityGroupIds.%zu", i + 1);
    char num[32];
    snprintf(num, sizeof(num), "%lld", (long long)sp->system_disk_gib);
    ali_params_add(p, "LaunchConfiguration.SystemDiskSize", num);
    ali_params_add(p, "LaunchConfiguration.SystemDiskPerformanceLevel", sp->performance_level);
    for (size_t i = 0; i < sp->n_disk_categories; i++)
        ali_params_addf(p, sp->disk_categories[i], "SystemDiskConfig.%zu.DiskCategory", i + 1);
    for (size_t i = 0; i < sp->n_data_disks; i++) {
        snprintf(num, sizeof(num), "%lld", (long long)sp->data_disk_gib[i]);
        ali_params_addf(p, num, "LaunchConfiguration.DataDisk.%zu.Size", i + 1);
        if (sp->data_disk_device[i][0])
            ali_params_addf(p, sp->data_disk_device[i], "LaunchConfiguration.DataDisk.%zu.Device", i + 1);
    }
    for (size_t i = 0; sp->n_data_disks && i < sp->n_data_disk_categories; i++)
        ali_params_addf(p, sp->data_disk_categories[i], "DataDiskConfig.%zu.DiskCategory", i + 1);
    if (sp->resource_group_id[0])
        ali_params_add(p, "ResourceGroupId", sp->resource_group_id);
    if (sp->key_pair_name[0])
        ali_params_add(p, "LaunchConfiguration.KeyPairName", sp->key_pair_name);
    if (sp->password)
        ali_params_add(p, "LaunchConfiguration.Password", sp->password);
    if (sp->password_inherit)
        ali_params_add(p, "LaunchConfiguration.PasswordInherit", "true");
    size_t t = 0;
    char cluster_tag[200];
    snprintf(cluster_tag, sizeof(cluster_tag), "%s%s", ALI_TAG_CLUSTER_PREFIX, s->cluster_id);
    add_tag(p, &t, cluster_tag, "owned");
    add_tag(p, &t, ALI_TAG_MANAGED_BY, s->cluster_id);
    add_tag(p, &t, ALI_TAG_NODEPOOL, req->nodepool_name ? req->nodepool_name : "");
    add_tag(p, &t, ALI_TAG_NODECLAIM, req->nodeclaim_name ? req->nodeclaim_name : "");
    add_tag(p, &t, ALI_TAG_NODECLASS, req->nodeclass->name ? req->nodeclass->name : "");
    if (s->ack)
        add_tag(p, &t, ALI_TAG_ACK_CLUSTER, s->cluster_id);
    for (size_t i = 0; i < sp->n_tags && t < 20; i++)
        add_tag(p, &t, sp->tags[i].key, sp->tags[i].value);
    for (size_t i = 0; i < req->n_tags && t < 20; i++)
        add_tag(p, &t, req->tags[i].key, req->tags[i].value);
}

static bool no_stock(const char *code)
{
    return code && (strstr(code, "NoStock") || strcmp(code, "InvalidResourceType.NotSupported") == 0 ||
                    strncmp(code, "Zone.NotOnSale", 14) == 0 || strcmp(code, "NoInstanceStock") == 0);
}

static void allocatable(const ns_resources *cap, const ns_resources *k, const ns_resources *sys,
                        const ns_resources *ev, ns_resources *out)
{
    *out = *cap;
    out->cpu_milli = cap->cpu_milli - k->cpu_milli - sys->cpu_milli - ev->cpu_milli;
    out->memory_bytes = cap->memory_bytes - k->memory_bytes - sys->memory_bytes - ev->memory_bytes;
    out->ephemeral_storage_bytes =
        cap->ephemeral_storage_bytes - k->ephemeral_storage_bytes - sys->ephemeral_storage_bytes -
        ev->ephemeral_storage_bytes;
    if (out->cpu_milli < 0)
        out->cpu_milli = 0;
    if (out->memory_bytes < 0)
        out->memory_bytes = 0;
    if (out->ephemeral_storage_bytes < 0)
        out->ephemeral_storage_bytes = 0;
}

/* Reads LaunchResults: the choices ECS refused for stock on its way (into ref, whatever the outcome), then the
 * instance it launched; NS_ERR_INSUFFICIENT_CAPACITY when it launched none for want of stock. */
static int read_results(ali_state *s, const ns_json *doc, const choice *ch, size_t n, const char *capacity_type,
                        const ali_nodeclass_view *v, const ali_image *image, ns_launch_result *r, refused *ref)
{
    const ns_host *h = s->host;
    const ns_json *results = ali_json_list(h, doc, "LaunchResults", "LaunchResult");
    const char *first_code = NULL, *first_msg = NULL;
    bool stock = false;
    for (size_t i = 0; i < h->json_size(results); i++) {
        const ns_json *lr = h->json_at(results, i);
        const char *code = ali_json_str(h, lr, "ErrorCode"), *type = ali_json_str(h, lr, "InstanceType"),
                   *zone = ali_json_str(h, lr, "ZoneId");
        if (!first_code && code) {
            first_code = code;
            first_msg = ali_json_str(h, lr, "ErrorMsg");
        }
        if (!no_stock(code) || !type || !zone)
            continue;
        stock = true;
        if (ref->n < MAX_CHOICES * 2 && ali_copy(ref->type[ref->n], sizeof(ref->type[0]), type) &&
            ali_copy(ref->zone[ref->n], sizeof(ref->zone[0]), zone))
            ref->capacity_type[ref->n++] = capacity_type;
    }
    for (size_t i = 0; i < h->json_size(results); i++) {
        const ns_json *lr = h->json_at(results, i);
        const ns_json *ids = ali_json_list(h, lr, "InstanceIds", "InstanceId");
        const char *type = ali_json_str(h, lr, "InstanceType"), *zone = ali_json_str(h, lr, "ZoneId");
        const char *id = h->json_size(ids) ? h->json_string(h->json_at(ids, 0)) : NULL;
        if (!id || !type || !zone)
            continue;
        const choice *c = NULL;
        for (size_t k = 0; k < n && !c; k++)
            if (strcmp(ch[k].o->instance_type, type) == 0 && strcmp(ch[k].o->zone, zone) == 0)
                c = &ch[k];
        if (!c)
            return NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "ecs CreateAutoProvisioningGroup launched %s as %s in %s, "
                            "which the request did not offer", id, type, zone);
        char pid[NS_PROVIDER_ID_MAX];
        if ((size_t)snprintf(pid, sizeof(pid), "%s.%s", s->region, id) >= sizeof(pid) ||
            !ali_copy(r->provider_id, sizeof(r->provider_id), pid) ||
            !ali_copy(r->instance_type, sizeof(r->instance_type), type) ||
            !ali_copy(r->zone, sizeof(r->zone), zone) ||
            !ali_copy(r->capacity_type, sizeof(r->capacity_type), capacity_type) ||
            !ali_copy(r->image_id, sizeof(r->image_id), image->id))
            return NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "instance %s: an identifier does not fit", id);
        ns_resources cap, kube, sys, ev;
        ali_type_resources(s, &c->entry->t, v->spec, &cap, &kube, &sys, &ev);
        allocatable(&cap, &kube, &sys, &ev, &r->allocatable);
        r->launch_time_ms = h->now_ms(s->ctx);
        return NS_OK;
    }
    if (!stock && first_code) {
        ns_err cat = ali_api_category(first_code, 400);
        return NS_ERROR(h, s->ctx, cat == NS_ERR_INSUFFICIENT_CAPACITY ? NS_ERR_INTERNAL : (int)cat,
                        "ecs CreateAutoProvisioningGroup launched nothing: %s: %s", first_code, first_msg ? first_msg : "");
    }
    return NS_ERR_INSUFFICIENT_CAPACITY;
}

/* The ECS token of one group: "ns-" and 40 hex digits of SHA-256 over the request's token and the choices. */
static int group_token(const ns_launch_request *req, const char *capacity_type, const choice *ch, size_t n,
                       char out[44])
{
    prov_buf b = PROV_BUF_INIT;
    prov_buf_printf(&b, "%s|%s", req->client_token, capacity_type);
    for (size_t i = 0; i < n; i++)
        prov_buf_printf(&b, "|%s@%s", ch[i].o->instance_type, ch[i].vswitch->id);
    char hex[65];
    int rc = prov_buf_failed(&b) ? NS_ERR_INTERNAL : prov_sha256_hex(b.data, b.len, hex);
    prov_buf_free(&b);
    snprintf(out, 44, "ns-%.40s", rc == NS_OK ? hex : "");
    return rc;
}

/* One CreateAutoProvisioningGroup of one capacity type. NS_ERR_INSUFFICIENT_CAPACITY (offerings named) when ECS
 * had no stock for any choice, or when no option of that type is usable. */
static int launch_as(ali_state *s, const ns_launch_request *req, const ali_nodeclass_view *v, const ali_catalog *c,
                     const char *capacity_type, ns_launch_result *result, refused *ref)
{
    const ns_host *h = s->host;
    choice ch[MAX_CHOICES];
    const ali_image *image;
    size_t n = pick(s, req, v, c, ch, capacity_type, &image);
    if (n == 0)
        return NS_ERR_INSUFFICIENT_CAPACITY;
    if (v->spec->balanced)
        balance(ch, n);
    char *user_data = NULL;
    ali_params p = {0};
    ns_json *doc = NULL;
    int rc = ali_userdata_build(s, v->spec, req, &user_data);
    if (rc < 0)
        return rc;
    char token[44];
    if ((rc = group_token(req, capacity_type, ch, n, token)) < 0) {
        free(user_data);
        return NS_ERROR(h, s->ctx, rc, "alibaba launch: out of memory");
    }
    launch_params(s, req, v, ch, n, capacity_type, image, user_data, token, &p);
    if ((rc = ali_rpc(s->client, ALI_ECS, "CreateAutoProvisioningGroup", &p, &doc, NULL)) == NS_OK)
        rc = read_results(s, doc, ch, n, capacity_type, v, image, result, ref);
    h->json_free(doc);
    ali_params_free(&p);
    free(user_data);
    return rc;
}

/* An instance of this cluster already tagged with the claim: *found and *result filled from it. */
static int existing(ali_state *s, const ns_launch_request *req, const ali_nodeclass_view *v, const ali_catalog *c,
                    ns_launch_result *result, bool *found)
{
    const ns_host *h = s->host;
    *found = false;
    char key[200];
    snprintf(key, sizeof(key), "%s%s", ALI_TAG_CLUSTER_PREFIX, s->cluster_id);
    ali_params p = {0};
    ali_params_add(&p, "Tag.1.Key", key);
    ali_params_add(&p, "Tag.1.Value", "owned");
    ali_params_add(&p, "Tag.2.Key", ALI_TAG_NODECLAIM);
    ali_params_add(&p, "Tag.2.Value", req->nodeclaim_name && *req->nodeclaim_name ? req->nodeclaim_name
                                                                                   : req->client_token);
    ns_json *doc = NULL;
    int rc = ali_rpc(s->client, ALI_ECS, "DescribeInstances", &p, &doc, NULL);
    ali_params_free(&p);
    if (rc < 0)
        return rc;
    const ns_json *list = ali_json_list(h, doc, "Instances", "Instance");
    if (h->json_size(list)) {
        ns_instance inst;
        rc = ali_instance_from_json(s, h->json_at(list, 0), &inst);
        const ali_entry *e = rc == NS_OK ? ali_catalog_find(c, inst.instance_type) : NULL;
        if (e) {
            *found = true;
            ali_copy(result->provider_id, sizeof(result->provider_id), inst.provider_id);
            ali_copy(result->instance_type, sizeof(result->instance_type), inst.instance_type);
            ali_copy(result->zone, sizeof(result->zone), inst.zone);
            ali_copy(result->capacity_type, sizeof(result->capacity_type), inst.capacity_type);
            ali_copy(result->image_id, sizeof(result->image_id), inst.image_id);
            ns_resources cap, kube, sys, ev;
            ali_type_resources(s, &e->t, v->spec, &cap, &kube, &sys, &ev);
            allocatable(&cap, &kube, &sys, &ev, &result->allocatable);
            result->launch_time_ms = inst.launch_time_ms;
        }
    }
    h->json_free(doc);
    return rc;
}

static bool offers(const ns_launch_request *req, const char *capacity_type)
{
    for (size_t i = 0; i < req->n_options; i++) {
        const ns_launch_option *o = NS_AT(req->options, i);
        if (o->capacity_type && strcmp(o->capacity_type, capacity_type) == 0)
            return true;
    }
    return false;
}

int ali_launch(void *state, const ns_launch_request *req, ns_launch_result *result)
{
    ali_state *s = state;
    const ns_host *h = s->host;
    if (!req->n_options || !req->client_token || !*req->client_token || strlen(req->client_token) > 64 ||
        !req->nodeclass)
        return NS_ERROR(h, s->ctx, NS_ERR_INVALID_ARGUMENT, "alibaba launch of %s needs a node class, options and a "
                        "client token of 1 to 64 characters", req->nodeclaim_name ? req->nodeclaim_name : "(unnamed)");
    ali_nodeclass_view v;
    int rc = ali_nodeclass_resolve(s, req->nodeclass, &v);
    if (rc < 0)
        return rc;
    ali_catalog *c = NULL;
    if ((rc = ali_catalog_acquire(s, &c)) < 0)
        goto fail;
    /* spot first, as Karpenter prefers it; on-demand only when ECS had no spot stock at all */
    bool found;
    if ((rc = existing(s, req, &v, c, result, &found)) < 0 || found)
        goto fail;
    refused ref = {.n = 0};
    rc = NS_ERR_INSUFFICIENT_CAPACITY;
    if (offers(req, NS_CAPACITY_SPOT))
        rc = launch_as(s, req, &v, c, NS_CAPACITY_SPOT, result, &ref);
    if (rc == NS_ERR_INSUFFICIENT_CAPACITY && offers(req, NS_CAPACITY_ON_DEMAND))
        rc = launch_as(s, req, &v, c, NS_CAPACITY_ON_DEMAND, result, &ref);
    if (rc == NS_ERR_INSUFFICIENT_CAPACITY)
        rc = NS_ERROR(h, s->ctx, NS_ERR_INSUFFICIENT_CAPACITY, "alibaba launch of %s: no capacity: ECS had no stock "
                      "for %zu offering(s) and %zu option(s) had none known or no vSwitch or image",
                      req->nodeclaim_name ? req->nodeclaim_name : "", ref.n, req->n_options);
    /* after the error, if any, is recorded: the offerings attach to it, or stand alone after a launch */
    for (size_t i = 0; i < ref.n; i++)
        h->error_unavailable_offering(s->ctx, ref.type[i], ref.zone[i], ref.capacity_type[i]);
    if (rc == NS_OK) {
        ns_label f[] = {{"NodeClaim", req->nodeclaim_name ? req->nodeclaim_name : ""},
                        {"provider-id", result->provider_id},
                        {"instance-type", result->instance_type},
                        {"zone", result->zone},
                        {"capacity-type", result->capacity_type}};
        h->log(s->ctx, NS_LOG_INFO, "launched instance", f, 5);
    }
fail:
    ali_catalog_release(s, c);
    ali_view_free(&v);
    return rc;
}
