/* Node class selectors (aws_nodeclass_spec.h reads the spec): subnets, security groups and AMIs. Terms are ORed;
 * within a term, `id`, or `name`/`owner` and every `tags` entry must match (a tag value "*" matches any value). AMI
 * aliases resolve through the family's public SSM parameters, other AMI terms through DescribeImages (newest image of
 * each architecture). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws_provider.h"
#include "aws_query.h"

int aws_nodeclass_parse(aws_state *s, const ns_nodeclass *nc, aws_nodeclass_spec *out)
{
    char err[512];
    int rc = aws_nodeclass_spec_parse(s->host, nc, out, err, sizeof(err));
    return rc == NS_OK ? NS_OK : NS_ERROR(s->host, s->ctx, rc, "%s", err);
}

/* Adds one term's filters to a Describe* query: the ID to `id_param` ("SubnetId"), the name to a filter, the owner to
 * `owner_param`, tags to tag filters. */
static void add_term(aws_query *q, const aws_selector_term *t, const char *id_param, const char *name_filter,
                     const char *owner_param)
{
    int filter = 1;
    if (t->id) {
        aws_query_addf(q, t->id, "%s.1", id_param);
        return;
    }
    if (t->name && name_filter) {
        aws_query_addf(q, name_filter, "Filter.%d.Name", filter);
        aws_query_addf(q, t->name, "Filter.%d.Value.1", filter++);
    }
    if (t->owner && owner_param)
        aws_query_addf(q, t->owner, "%s.1", owner_param);
    for (size_t i = 0; i < t->n_tags; i++) {
        if (strcmp(t->tags[i].value, "*") == 0) {
            aws_query_addf(q, "tag-key", "Filter.%d.Name", filter);
            aws_query_addf(q, t->tags[i].key, "Filter.%d.Value.1", filter++);
        } else {
            char name[300];
            snprintf(name, sizeof(name), "tag:%s", t->tags[i].key);
            aws_query_addf(q, name, "Filter.%d.Name", filter);
            aws_query_addf(q, t->tags[i].value, "Filter.%d.Value.1", filter++);
        }
    }
}

/* One Describe* call for a term. On NS_OK the caller frees *resp. */
static int describe(aws_state *s, const char *action, const aws_selector_term *t, const char *id_param,
                    const char *name_filter, const char *owner_param, ns_http_response **resp)
{
    aws_query q;
    aws_query_init(&q, action, AWS_EC2_VERSION);
    add_term(&q, t, id_param, name_filter, owner_param);
    int rc = aws_query_failed(&q) ? NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 %s: out of memory", action)
                                  : aws_client_query(s->client, "ec2", action, aws_query_body(&q), aws_query_len(&q),
                                                     resp, NULL);
    aws_query_free(&q);
    return rc;
}

static void add_subnet(aws_nodeclass_view *out, const aws_ec2_subnet *sn)
{
    bool seen = false;
    for (size_t i = 0; i < out->n_subnet_ids && !seen; i++)
        seen = strcmp(out->subnet_ids[i], sn->subnet_id) == 0;
    if (!seen && out->n_subnet_ids < AWS_MAX_SUBNETS) {
        size_t k = out->n_subnet_ids++;
        aws_copy(out->subnet_ids[k], sizeof(out->subnet_ids[0]), sn->subnet_id);
        aws_copy(out->subnet_zones[k], sizeof(out->subnet_zones[0]), sn->zone);
        aws_copy(out->subnet_zone_ids[k], sizeof(out->subnet_zone_ids[0]), sn->zone_id ? sn->zone_id : "");
    }
    aws_subnet_choice *slot = (aws_subnet_choice *)aws_nodeclass_subnet_in(out, sn->zone);
    if (!slot && out->n_subnets < AWS_MAX_ZONES) {
        slot = &out->subnets[out->n_subnets++];
        aws_copy(slot->zone, sizeof(slot->zone), sn->zone);
        slot->available_ips = -1;
    }
    if (slot && sn->available_ips > slot->available_ips) {
        aws_copy(slot->subnet_id, sizeof(slot->subnet_id), sn->subnet_id);
        slot->available_ips = sn->available_ips;
    }
}

int aws_nodeclass_resolve_subnets(aws_state *s, aws_nodeclass_view *out)
{
    for (size_t i = 0; i < out->spec.n_subnets; i++) {
        ns_http_response *resp = NULL;
        int rc = describe(s, "DescribeSubnets", &out->spec.subnets[i], "SubnetId", NULL, NULL, &resp);
        if (rc != NS_OK)
            return rc;
        aws_ec2_subnet_page page;
        char err[256];
        rc = aws_ec2_parse_subnets(resp->body, resp->body_len, &page, err, sizeof(err));
        s->host->http_response_free(resp);
        for (size_t k = 0; rc == NS_OK && k < page.n; k++) {
            const aws_ec2_subnet *sn = &page.items[k];
            if (sn->zone && sn->subnet_id && (!sn->state || strcmp(sn->state, "available") == 0))
                add_subnet(out, sn);
        }
        aws_ec2_subnet_page_free(&page);
        if (rc != NS_OK)
            return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeSubnets: unexpected answer: %s", err);
    }
    return NS_OK;
}

int aws_nodeclass_subnets(aws_state *s, const ns_nodeclass *nc, aws_nodeclass_view *out)
{
    memset(out, 0, sizeof(*out));
    int rc = aws_nodeclass_parse(s, nc, &out->spec);
    return rc == NS_OK ? aws_nodeclass_resolve_subnets(s, out) : rc;
}

const aws_subnet_choice *aws_nodeclass_subnet_in(const aws_nodeclass_view *v, const char *zone)
{
    for (size_t i = 0; i < v->n_subnets; i++)
        if (strcmp(v->subnets[i].zone, zone) == 0)
            return &v->subnets[i];
    return NULL;
}

int aws_nodeclass_resolve_groups(aws_state *s, aws_nodeclass_view *out)
{
    for (size_t i = 0; i < out->spec.n_security_groups; i++) {
        ns_http_response *resp = NULL;
        int rc = describe(s, "DescribeSecurityGroups", &out->spec.security_groups[i], "GroupId", "group-name", NULL,
                          &resp);
        if (rc != NS_OK)
            return rc;
        aws_ec2_security_group_page page;
        char err[256];
        rc = aws_ec2_parse_security_groups(resp->body, resp->body_len, &page, err, sizeof(err));
        s->host->http_response_free(resp);
        for (size_t k = 0; rc == NS_OK && k < page.n && out->n_security_groups < AWS_MAX_GROUPS; k++) {
            bool seen = !page.items[k].group_id;
            for (size_t j = 0; j < out->n_security_groups && !seen; j++)
                seen = strcmp(out->security_groups[j], page.items[k].group_id) == 0;
            if (!seen) {
                size_t g = out->n_security_groups++;
                aws_copy(out->security_groups[g], sizeof(out->security_groups[0]), page.items[k].group_id);
                aws_copy(out->security_group_names[g], sizeof(out->security_group_names[0]),
                         page.items[k].group_name ? page.items[k].group_name : "");
            }
        }
        aws_ec2_security_group_page_free(&page);
        if (rc != NS_OK)
            return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeSecurityGroups: unexpected answer: %s",
                            err);
    }
    return NS_OK;
}

/* ---- AMIs ---- */

static void set_image(aws_image *m, const char *id, const char *name, const char *arch, const char *variant,
                      int64_t created_ms)
{
    *m = (aws_image){.created_ms = created_ms};
    aws_copy(m->id, sizeof(m->id), id);
    aws_copy(m->name, sizeof(m->name), name ? name : "");
    aws_copy(m->arch, sizeof(m->arch), arch);
    aws_copy(m->variant, sizeof(m->variant), variant);
}

/* Keeps one image per architecture and variant: the newest. */
static void add_image(aws_nodeclass_view *out, const char *id, const char *name, const char *arch,
                      const char *variant, int64_t created_ms)
{
    for (size_t i = 0; i < out->n_images; i++) {
        aws_image *m = &out->images[i];
        if (strcmp(m->arch, arch) == 0 && strcmp(m->variant, variant) == 0) {
            if (created_ms > m->created_ms)
                set_image(m, id, name, arch, variant, created_ms);
            return;
        }
    }
    if (out->n_images < AWS_MAX_IMAGES)
        set_image(&out->images[out->n_images++], id, name, arch, variant, created_ms);
}

/* The public SSM parameter of a family's EKS-optimized AMI for one architecture and variant; false when the family
 * publishes none (Windows on arm64, AL2's arm64 GPU image). */
static bool ssm_parameter(const aws_state *s, const aws_nodeclass_spec *spec, const char *arch, const char *variant,
                          char *buf, size_t len)
{
    const char *k = s->kubernetes_version, *v = spec->alias_version;
    bool latest = strcmp(v, "latest") == 0, arm = strcmp(arch, "arm64") == 0, gpu = strcmp(variant, "nvidia") == 0;
    const char *ec2_arch = arm ? "arm64" : "x86_64";
    int n = -1;
    switch (spec->family) {
    case AWS_FAMILY_AL2023:
        n = latest ? snprintf(buf, len, "/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/recommended/image_id",
                              k, ec2_arch, variant)
                   : snprintf(buf, len, "/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/"
                                        "amazon-eks-node-al2023-%s-%s-%s-%s/image_id",
                              k, ec2_arch, variant, ec2_arch, variant, k, v);
        break;
    case AWS_FAMILY_AL2: {
        if (arm && gpu)
            return false;
        const char *dir = gpu ? "amazon-linux-2-gpu" : arm ? "amazon-linux-2-arm64" : "amazon-linux-2";
        const char *image = gpu ? "amazon-eks-gpu-node" : arm ? "amazon-eks-arm64-node" : "amazon-eks-node";
        n = latest ? snprintf(buf, len, "/aws/service/eks/optimized-ami/%s/%s/recommended/image_id", k, dir)
                   : snprintf(buf, len, "/aws/service/eks/optimized-ami/%s/%s/%s-%s-%s/image_id", k, dir, image, k, v);
        break;
    }
    case AWS_FAMILY_BOTTLEROCKET:
        n = snprintf(buf, len, "/aws/service/bottlerocket/aws-k8s-%s%s/%s/%s/image_id", k, gpu ? "-nvidia" : "",
                     ec2_arch, latest ? "latest" : (v[0] == 'v' ? v + 1 : v));
        break;
    case AWS_FAMILY_WINDOWS2019:
    case AWS_FAMILY_WINDOWS2022:
        if (arm || gpu)
            return false;
        n = snprintf(buf, len, "/aws/service/ami-windows-latest/Windows_Server-%s-English-Core-EKS_Optimized-%s/image_id",
                     spec->family == AWS_FAMILY_WINDOWS2019 ? "2019" : "2022", k);
        break;
    case AWS_FAMILY_CUSTOM:
        return false;
    }
    return n > 0 && (size_t)n < len;
}

/* One SSM parameter's value: NS_OK, NS_ERR_NOT_FOUND (ParameterNotFound), or another error (reported). */
static int ssm_get(aws_state *s, const char *name, char *value, size_t len)
{
    ns_json *req = s->host->json_new_object();
    s->host->json_add(req, "Name", s->host->json_new_string(name));
    char *body = s->host->json_print(req);
    s->host->json_free(req);
    if (!body)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory asking SSM for %s", name);
    ns_http_response *resp = NULL;
    aws_api_error e;
    int rc = aws_client_json(s->client, "ssm", "AmazonSSM.GetParameter", "1.1", body, &resp, &e);
    s->host->free(body);
    if (rc != NS_OK)
        return rc;
    ns_json *doc = s->host->json_parse(resp->body, resp->body_len);
    const char *v = s->host->json_string(s->host->json_get(s->host->json_get(doc, "Parameter"), "Value"));
    if (!v || !aws_copy(value, len, v))
        rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ssm GetParameter %s: no usable value", name);
    s->host->json_free(doc);
    s->host->http_response_free(resp);
    return rc;
}

static int alias_images(aws_state *s, bool gpu_images, aws_nodeclass_view *out)
{
    static const char *const ARCHES[] = {"amd64", "arm64"};
    static const char *const VARIANTS[] = {"standard", "nvidia"};
    for (size_t v = 0; v < (gpu_images ? 2u : 1u); v++)
        for (size_t a = 0; a < 2; a++) {
            char name[300], id[64];
            if (!ssm_parameter(s, &out->spec, ARCHES[a], VARIANTS[v], name, sizeof(name)))
                continue;
            int rc = ssm_get(s, name, id, sizeof(id));
            if (rc == NS_ERR_NOT_FOUND)
                continue; /* the family publishes no such image for this Kubernetes version */
            if (rc != NS_OK)
                return rc;
            add_image(out, id, NULL, ARCHES[a], VARIANTS[v], 0);
        }
    return NS_OK;
}

static int select_images(aws_state *s, const aws_selector_term *term, aws_nodeclass_view *out)
{
    ns_http_response *resp = NULL;
    int rc = describe(s, "DescribeImages", term, "ImageId", "name", "Owner", &resp);
    if (rc != NS_OK)
        return rc;
    aws_ec2_image_page page;
    char err[256];
    rc = aws_ec2_parse_images(resp->body, resp->body_len, &page, err, sizeof(err));
    s->host->http_response_free(resp);
    for (size_t k = 0; rc == NS_OK && k < page.n; k++) {
        const aws_ec2_image *m = &page.items[k];
        if (!m->image_id || !m->architecture || (m->state && strcmp(m->state, "available") != 0))
            continue;
        const char *arch = strcmp(m->architecture, "arm64") == 0    ? "arm64"
                           : strcmp(m->architecture, "x86_64") == 0 ? "amd64"
                                                                    : NULL;
        if (arch)
            add_image(out, m->image_id, m->name, arch, "", m->creation_ms);
    }
    aws_ec2_image_page_free(&page);
    return rc == NS_OK ? NS_OK
                       : NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeImages: unexpected answer: %s", err);
}

int aws_nodeclass_resolve_images(aws_state *s, bool gpu_images, aws_nodeclass_view *out)
{
    int rc = NS_OK;
    if (out->spec.alias_version)
        rc = alias_images(s, gpu_images, out);
    for (size_t i = 0; rc == NS_OK && i < out->spec.n_amis; i++)
        rc = select_images(s, &out->spec.amis[i], out);
    return rc;
}

static int resolve_images(aws_state *s, bool gpu_images, aws_nodeclass_view *out)
{
    int rc = aws_nodeclass_resolve_images(s, gpu_images, out);
    if (rc == NS_OK && out->n_images == 0)
        rc = NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "%s %s: spec.amiSelectorTerms select no available "
                      "x86_64 or arm64 image%s%s", out->spec.kind, out->spec.name,
                      out->spec.alias_version ? " for Kubernetes " : "",
                      out->spec.alias_version ? s->kubernetes_version : "");
    return rc;
}

int aws_nodeclass_resolve(aws_state *s, const ns_nodeclass *nc, bool gpu_images, aws_nodeclass_view *out)
{
    int rc = aws_nodeclass_subnets(s, nc, out);
    if (rc != NS_OK)
        return rc;
    if (out->n_subnets == 0)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "%s %s: spec.subnetSelectorTerms select no available "
                        "subnet", out->spec.kind, out->spec.name);
    if ((rc = aws_nodeclass_resolve_groups(s, out)) != NS_OK)
        return rc;
    if (out->n_security_groups == 0)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "%s %s: spec.securityGroupSelectorTerms select no "
                        "security group", out->spec.kind, out->spec.name);
    if ((rc = resolve_images(s, gpu_images, out)) != NS_OK)
        return rc;
    /* The provider creates no instance profiles (that needs IAM permissions beyond Karpenter's controller policy):
     * a role is used through the instance profile of the same name, which IAM's console and CloudFormation create. */
    out->instance_profile = out->spec.instance_profile ? out->spec.instance_profile : out->spec.role;
    return NS_OK;
}

static bool nvidia(const aws_ec2_instance_type *t)
{
    return t->gpu_count > 0 && t->gpu_manufacturer && strcasecmp(t->gpu_manufacturer, "NVIDIA") == 0;
}

const aws_image *aws_nodeclass_image_for(const aws_nodeclass_view *v, const aws_ec2_instance_type *t)
{
    const char *arch = aws_kubernetes_arch(t);
    const aws_image *best = NULL;
    for (size_t i = 0; arch && i < v->n_images; i++) {
        const aws_image *m = &v->images[i];
        if (strcmp(m->arch, arch) != 0)
            continue;
        if (nvidia(t) && strcmp(m->variant, "nvidia") == 0)
            return m;
        if (strcmp(m->variant, "nvidia") != 0 && (!best || m->created_ms > best->created_ms))
            best = m;
    }
    return best;
}

bool aws_nodeclass_runs(const aws_nodeclass_spec *spec, const aws_ec2_instance_type *t)
{
    const char *arch = aws_kubernetes_arch(t);
    return arch && (!aws_ami_family_windows(spec->family) || strcmp(arch, "amd64") == 0);
}
