/* Node class resolution: the vSwitches (VPC DescribeVSwitches), security groups (ECS DescribeSecurityGroups) and
 * images (ECS DescribeImages for IDs; for aliases, ACK's images of the cluster's Kubernetes version in ack mode, the
 * newest Alibaba Cloud Linux 3 system image in custom mode) its selector terms select now. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ali_json.h"
#include "ali_provider.h"

int ali_nodeclass_parse(ali_state *s, const ns_nodeclass *nc, ali_nodeclass_spec **out)
{
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory reading a node class");
    int rc = ali_nodeclass_spec_parse(s->host, s->ctx, nc, *out);
    if (rc < 0) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

void ali_view_free(ali_nodeclass_view *v)
{
    free(v->spec);
    v->spec = NULL;
}

static void add_tag_filter(ali_params *p, const ali_term *t)
{
    for (size_t i = 0; i < t->n_tags; i++) {
        ali_params_addf(p, t->tags[i].key, "Tag.%zu.Key", i + 1);
        if (strcmp(t->tags[i].value, "*") != 0) /* '*' = any value: the key alone filters */
            ali_params_addf(p, t->tags[i].value, "Tag.%zu.Value", i + 1);
    }
}

static void add_vswitch(ali_nodeclass_view *v, const char *id, const char *zone, int64_t free_ips)
{
    for (size_t i = 0; i < v->n_vswitches; i++)
        if (strcmp(v->vswitches[i].id, id) == 0)
            return;
    if (v->n_vswitches < ALI_MAX_VSWITCHES) {
        ali_vswitch *w = &v->vswitches[v->n_vswitches];
        if (ali_copy(w->id, sizeof(w->id), id) && ali_copy(w->zone, sizeof(w->zone), zone)) {
            w->free_ips = free_ips;
            v->n_vswitches++;
        }
    }
}

int ali_resolve_vswitches(ali_state *s, ali_nodeclass_view *v, char *why, size_t len)
{
    const ns_host *h = s->host;
    for (size_t t = 0; t < v->spec->n_vswitch_terms; t++) {
        const ali_term *term = &v->spec->vswitch_terms[t];
        for (int page = 1;; page++) {
            ali_params p = {0};
            char num[16];
            snprintf(num, sizeof(num), "%d", page);
            ali_params_add(&p, "PageSize", "50");
            ali_params_add(&p, "PageNumber", num);
            if (term->id[0])
                ali_params_add(&p, "VSwitchId", term->id);
            add_tag_filter(&p, term);
            ns_json *doc = NULL;
            int rc = ali_rpc(s->client, ALI_VPC, "DescribeVSwitches", &p, &doc, NULL);
            ali_params_free(&p);
            if (rc < 0)
                return rc;
            const ns_json *list = ali_json_list(h, doc, "VSwitches", "VSwitch");
            for (size_t i = 0; i < h->json_size(list); i++) {
                const ns_json *w = h->json_at(list, i);
                const char *id = ali_json_str(h, w, "VSwitchId"), *zone = ali_json_str(h, w, "ZoneId"),
                           *status = ali_json_str(h, w, "Status");
                if (id && zone && (!status || strcmp(status, "Available") == 0))
                    add_vswitch(v, id, zone, (int64_t)ali_json_num(h, w, "AvailableIpAddressCount", 0));
            }
            double total = ali_json_num(h, doc, "TotalCount", 0);
            size_t got = h->json_size(list);
            h->json_free(doc);
            if (got < 50 || page * 50 >= total)
                break;
        }
    }
    if (v->n_vswitches == 0)
        snprintf(why, len, "spec.vSwitchSelectorTerms select no available vSwitch");
    return NS_OK;
}

int ali_resolve_groups(ali_state *s, ali_nodeclass_view *v, char *why, size_t len)
{
    const ns_host *h = s->host;
    for (size_t t = 0; t < v->spec->n_sg_terms; t++) {
        const ali_term *term = &v->spec->sg_terms[t];
        char token[512] = "";
        do {
            ali_params p = {0};
            ali_params_add(&p, "MaxResults", "100");
            if (token[0])
                ali_params_add(&p, "NextToken", token);
            if (term->id[0]) {
                char ids[96];
                snprintf(ids, sizeof(ids), "[\"%s\"]", term->id);
                ali_params_add(&p, "SecurityGroupIds", ids);
            }
            if (term->name[0])
                ali_params_add(&p, "SecurityGroupName", term->name);
            add_tag_filter(&p, term);
            ns_json *doc = NULL;
            int rc = ali_rpc(s->client, ALI_ECS, "DescribeSecurityGroups", &p, &doc, NULL);
            ali_params_free(&p);
            if (rc < 0)
                return rc;
            const ns_json *list = ali_json_list(h, doc, "SecurityGroups", "SecurityGroup");
            for (size_t i = 0; i < h->json_size(list); i++) {
                const ns_json *g = h->json_at(list, i);
                const char *id = ali_json_str(h, g, "SecurityGroupId"), *name = ali_json_str(h, g, "SecurityGroupName");
                bool dup = false;
                for (size_t k = 0; id && k < v->n_groups; k++)
                    dup |= strcmp(v->groups[k], id) == 0;
                if (id && !dup && v->n_groups < ALI_MAX_GROUPS &&
                    ali_copy(v->groups[v->n_groups], sizeof(v->groups[0]), id)) {
                    ali_copy(v->group_names[v->n_groups], sizeof(v->group_names[0]), name ? name : "");
                    v->n_groups++;
                }
            }
            const char *next = ali_json_str(h, doc, "NextToken");
            ali_copy(token, sizeof(token), next ? next : "");
            h->json_free(doc);
        } while (token[0]);
    }
    if (v->n_groups == 0)
        snprintf(why, len, "spec.securityGroupSelectorTerms select no security group");
    return NS_OK;
}

static void add_image(ali_nodeclass_view *v, const char *id, const char *name, const char *arch)
{
    const char *a = arch && (strcmp(arch, "arm64") == 0 || strcmp(arch, "aarch64") == 0) ? "arm64" : "amd64";
    for (size_t i = 0; i < v->n_images; i++)
        if (strcmp(v->images[i].arch, a) == 0)
            return; /* the first (newest) image of an architecture wins */
    if (v->n_images < ALI_MAX_IMAGES && ali_copy(v->images[v->n_images].id, sizeof(v->images[0].id), id)) {
        ali_copy(v->images[v->n_images].arch, sizeof(v->images[0].arch), a);
        ali_copy(v->images[v->n_images].name, sizeof(v->images[0].name), name ? name : "");
        v->n_images++;
    }
}

static int images_by_id(ali_state *s, ali_nodeclass_view *v, const ali_params *extra)
{
    const ns_host *h = s->host;
    ali_params p = {0};
    for (size_t i = 0; i < extra->n; i++)
        ali_params_add(&p, extra->items[i].key, extra->items[i].value);
    ali_params_add(&p, "PageSize", "100");
    ns_json *doc = NULL;
    int rc = ali_rpc(s->client, ALI_ECS, "DescribeImages", &p, &doc, NULL);
    ali_params_free(&p);
    if (rc < 0)
        return rc;
    /* newest first, as the answer lists them by creation time */
    const ns_json *list = ali_json_list(h, doc, "Images", "Image");
    for (size_t i = 0; i < h->json_size(list); i++) {
        const ns_json *im = h->json_at(list, i);
        const char *id = ali_json_str(h, im, "ImageId"), *status = ali_json_str(h, im, "Status");
        if (id && (!status || strcmp(status, "Available") == 0))
            add_image(v, id, ali_json_str(h, im, "ImageName"), ali_json_str(h, im, "Architecture"));
    }
    h->json_free(doc);
    return NS_OK;
}

/* ACK's images for the cluster's Kubernetes version (DescribeKubernetesVersionMetadata). */
static int images_from_ack(ali_state *s, ali_nodeclass_view *v, const ali_image_term *t)
{
    const ns_host *h = s->host;
    ali_params q = {0};
    ali_params_add(&q, "ClusterType", "ManagedKubernetes");
    ali_params_add(&q, "KubernetesVersion", s->kubernetes_version);
    ns_json *doc = NULL;
    int rc = ali_roa(s->client, "DescribeKubernetesVersionMetadata", "GET", "/api/v1/metadata/versions", &q, NULL,
                     &doc, NULL);
    ali_params_free(&q);
    if (rc < 0)
        return rc;
    bool cos = strcmp(t->family, "ContainerOS") == 0, latest = strcmp(t->version, "latest") == 0;
    for (size_t i = 0; i < h->json_size(doc); i++) {
        const ns_json *images = h->json_get(h->json_at(doc, i), "images");
        for (size_t k = 0; k < h->json_size(images); k++) {
            const ns_json *im = h->json_at(images, k);
            const char *id = ali_json_str(h, im, "image_id"), *type = ali_json_str(h, im, "image_type"),
                       *name = ali_json_str(h, im, "image_name");
            if (!id || !type)
                continue;
            bool family = cos ? strncmp(type, "ContainerOS", 11) == 0 : strncmp(type, "AliyunLinux3", 12) == 0;
            bool version = latest || (name && strstr(name, t->version)) || strstr(id, t->version);
            if (family && version)
                add_image(v, id, name, ali_json_str(h, im, "architecture"));
        }
    }
    h->json_free(doc);
    return NS_OK;
}

int ali_resolve_images(ali_state *s, ali_nodeclass_view *v, char *why, size_t len)
{
    const ali_nodeclass_spec *sp = v->spec;
    int rc = NS_OK;
    bool refused = false;
    for (size_t i = 0; i < sp->n_image_terms && rc == NS_OK; i++) {
        const ali_image_term *t = &sp->image_terms[i];
        ali_params p = {0};
        if (t->id[0]) {
            ali_params_add(&p, "ImageId", t->id);
            rc = images_by_id(s, v, &p);
        } else if (s->ack) {
            rc = images_from_ack(s, v, t);
        } else if (strcmp(t->family, "AlibabaCloudLinux3") == 0) {
            ali_params_add(&p, "ImageOwnerAlias", "system");
            ali_params_add(&p, "ImageFamily", "acs:alibaba_cloud_linux_3_2104_lts_x64");
            rc = images_by_id(s, v, &p);
            ali_params_free(&p);
            ali_params_add(&p, "ImageOwnerAlias", "system");
            ali_params_add(&p, "ImageFamily", "acs:alibaba_cloud_linux_3_2104_lts_arm64");
            if (rc == NS_OK)
                rc = images_by_id(s, v, &p);
        } else if (!refused) {
            refused = true;
            snprintf(why, len, "spec.imageSelectorTerms[%zu]: the ContainerOS alias needs cluster_mode ack (its "
                     "images come from ACK)", i);
        }
        ali_params_free(&p);
    }
    if (rc == NS_OK && v->n_images == 0 && !refused)
        snprintf(why, len, "spec.imageSelectorTerms select no available image");
    return rc;
}

/* One part resolved: NS_ERR_INVALID_CONFIG naming the node class when it resolved nothing. */
static int resolved(ali_state *s, const ns_nodeclass *nc, int rc, const char *why)
{
    if (rc == NS_OK && why[0])
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "ECSNodeClass %s: %s", nc->name, why);
    return rc;
}

int ali_nodeclass_vswitches(ali_state *s, const ns_nodeclass *nc, ali_nodeclass_view *out)
{
    memset(out, 0, sizeof(*out));
    char why[256] = "";
    int rc = ali_nodeclass_parse(s, nc, &out->spec);
    if (rc == NS_OK)
        rc = resolved(s, nc, ali_resolve_vswitches(s, out, why, sizeof(why)), why);
    if (rc < 0)
        ali_view_free(out);
    return rc;
}

int ali_nodeclass_resolve(ali_state *s, const ns_nodeclass *nc, ali_nodeclass_view *out)
{
    int rc = ali_nodeclass_vswitches(s, nc, out);
    if (rc < 0)
        return rc;
    char why[256] = "";
    if ((rc = resolved(s, nc, ali_resolve_groups(s, out, why, sizeof(why)), why)) < 0 ||
        (rc = resolved(s, nc, ali_resolve_images(s, out, why, sizeof(why)), why)) < 0)
        ali_view_free(out);
    return rc;
}

const ali_vswitch *ali_view_vswitch_in(const ali_nodeclass_view *v, const char *zone)
{
    const ali_vswitch *best = NULL;
    for (size_t i = 0; i < v->n_vswitches; i++)
        if (strcmp(v->vswitches[i].zone, zone) == 0 && (!best || v->vswitches[i].free_ips > best->free_ips))
            best = &v->vswitches[i];
    return best;
}

const ali_image *ali_view_image_for(const ali_nodeclass_view *v, const char *arch)
{
    for (size_t i = 0; i < v->n_images; i++)
        if (strcmp(v->images[i].arch, arch) == 0)
            return &v->images[i];
    return NULL;
}
