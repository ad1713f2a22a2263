/* EC2NodeClass selectors (karpenter.k8s.aws/v1): subnetSelectorTerms, securityGroupSelectorTerms, amiSelectorTerms.
 * Terms are ORed; within a term, `id` or `name` or every `tags` entry must match (a tag value "*" matches any value). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_provider.h"
#include "aws_query.h"

static const ns_json *spec_get(aws_state *s, const ns_nodeclass *nc, const char *key)
{
    return nc && nc->spec ? s->host->json_get(nc->spec, key) : NULL;
}

static const char *term_string(aws_state *s, const ns_json *term, const char *key)
{
    return s->host->json_string(s->host->json_get(term, key));
}

/* Adds one term's filters to a Describe* query: IDs go to `id_param` ("SubnetId"), names to a filter, tags to tag
 * filters. Returns false when the term names nothing usable. */
static bool add_term(aws_state *s, aws_query *q, const ns_json *term, const char *id_param, const char *name_filter)
{
    const char *id = term_string(s, term, "id");
    const char *name = name_filter ? term_string(s, term, "name") : NULL;
    const ns_json *tags = s->host->json_get(term, "tags");
    int filter = 1;
    if (id) {
        aws_query_addf(q, id, "%s.1", id_param);
        return true;
    }
    if (name) {
        aws_query_addf(q, name_filter, "Filter.%d.Name", filter);
        aws_query_addf(q, name, "Filter.%d.Value.1", filter++);
    }
    size_t n = s->host->json_type(tags) == NS_JSON_OBJECT ? s->host->json_size(tags) : 0;
    for (size_t i = 0; i < n; i++) {
        const ns_json *member = s->host->json_at(tags, i);
        const char *key = s->host->json_key(member);
        const char *value = s->host->json_string(member);
        if (!key || !value)
            continue;
        char name_buf[300];
        if (strcmp(value, "*") == 0) {
            aws_query_addf(q, "tag-key", "Filter.%d.Name", filter);
            aws_query_addf(q, key, "Filter.%d.Value.1", filter++);
        } else {
            snprintf(name_buf, sizeof(name_buf), "tag:%s", key);
            aws_query_addf(q, name_buf, "Filter.%d.Name", filter);
            aws_query_addf(q, value, "Filter.%d.Value.1", filter++);
        }
    }
    return filter > 1;
}

static int bad_term(aws_state *s, const ns_nodeclass *nc, const char *field, size_t i)
{
    return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG,
                    "EC2NodeClass %s: spec.%s[%zu] selects nothing: give id, tags%s", nc->name ? nc->name : "(unnamed)",
                    field, i, strcmp(field, "subnetSelectorTerms") ? " or name" : "");
}

int aws_nodeclass_subnets(aws_state *s, const ns_nodeclass *nc, aws_nodeclass_view *out)
{
    memset(out, 0, sizeof(*out));
    const ns_json *terms = spec_get(s, nc, "subnetSelectorTerms");
    size_t n = s->host->json_type(terms) == NS_JSON_ARRAY ? s->host->json_size(terms) : 0;
    for (size_t i = 0; i < n; i++) {
        aws_query q;
        aws_query_init(&q, "DescribeSubnets", AWS_EC2_VERSION);
        if (!add_term(s, &q, s->host->json_at(terms, i), "SubnetId", NULL)) {
            aws_query_free(&q);
            return bad_term(s, nc, "subnetSelectorTerms", i);
        }
        ns_http_response *resp = NULL;
        int rc = aws_client_query(s->client, "ec2", "DescribeSubnets", aws_query_body(&q), aws_query_len(&q), &resp,
                                  NULL);
        aws_query_free(&q);
        if (rc != NS_OK)
            return rc;
        aws_ec2_subnet_page page;
        char err[256];
        rc = aws_ec2_parse_subnets(resp->body, resp->body_len, &page, err, sizeof(err));
        s->host->http_response_free(resp);
        if (rc != NS_OK) {
            aws_ec2_subnet_page_free(&page);
            return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeSubnets: unexpected answer: %s", err);
        }
        for (size_t k = 0; k < page.n; k++) {
            const aws_ec2_subnet *sn = &page.items[k];
            if (!sn->zone || !sn->subnet_id || (sn->state && strcmp(sn->state, "available") != 0))
                continue;
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
        aws_ec2_subnet_page_free(&page);
    }
    return NS_OK;
}

const aws_subnet_choice *aws_nodeclass_subnet_in(const aws_nodeclass_view *v, const char *zone)
{
    for (size_t i = 0; i < v->n_subnets; i++)
        if (strcmp(v->subnets[i].zone, zone) == 0)
            return &v->subnets[i];
    return NULL;
}

static int resolve_security_groups(aws_state *s, const ns_nodeclass *nc, aws_nodeclass_view *out)
{
    const ns_json *terms = spec_get(s, nc, "securityGroupSelectorTerms");
    size_t n = s->host->json_type(terms) == NS_JSON_ARRAY ? s->host->json_size(terms) : 0;
    for (size_t i = 0; i < n; i++) {
        aws_query q;
        aws_query_init(&q, "DescribeSecurityGroups", AWS_EC2_VERSION);
        if (!add_term(s, &q, s->host->json_at(terms, i), "GroupId", "group-name")) {
            aws_query_free(&q);
            return bad_term(s, nc, "securityGroupSelectorTerms", i);
        }
        ns_http_response *resp = NULL;
        int rc = aws_client_query(s->client, "ec2", "DescribeSecurityGroups", aws_query_body(&q), aws_query_len(&q),
                                  &resp, NULL);
        aws_query_free(&q);
        if (rc != NS_OK)
            return rc;
        aws_ec2_security_group_page page;
        char err[256];
        rc = aws_ec2_parse_security_groups(resp->body, resp->body_len, &page, err, sizeof(err));
        s->host->http_response_free(resp);
        if (rc != NS_OK) {
            aws_ec2_security_group_page_free(&page);
            return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeSecurityGroups: unexpected answer: %s",
                            err);
        }
        for (size_t k = 0; k < page.n && out->n_security_groups < 16; k++) {
            bool seen = false;
            for (size_t j = 0; j < out->n_security_groups; j++)
                seen |= strcmp(out->security_groups[j], page.items[k].group_id) == 0;
            if (!seen && page.items[k].group_id)
                aws_copy(out->security_groups[out->n_security_groups++], 64, page.items[k].group_id);
        }
        aws_ec2_security_group_page_free(&page);
    }
    return NS_OK;
}

/* The EKS-optimized AL2023 AMI of one architecture, from its public SSM parameter. */
static int alias_image(aws_state *s, const char *arch, char *image, size_t len)
{
    char body[400];
    snprintf(body, sizeof(body),
             "{\"Name\":\"/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/standard/recommended/image_id\"}",
             s->kubernetes_version, arch);
    ns_http_response *resp = NULL;
    int rc = aws_client_json(s->client, "ssm", "AmazonSSM.GetParameter", "1.1", body, &resp, NULL);
    if (rc != NS_OK)
        return rc;
    ns_json *doc = s->host->json_parse(resp->body, resp->body_len);
    const char *value = s->host->json_string(s->host->json_get(s->host->json_get(doc, "Parameter"), "Value"));
    if (!value || !aws_copy(image, len, value))
        rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ssm GetParameter for the al2023 %s AMI: no usable value",
                      arch);
    s->host->json_free(doc);
    s->host->http_response_free(resp);
    return rc;
}

/* Images selected by id, name or tags: the newest of each architecture wins. */
static int select_images(aws_state *s, const ns_nodeclass *nc, const ns_json *term, size_t i, aws_nodeclass_view *out,
                         int64_t newest[2])
{
    aws_query q;
    aws_query_init(&q, "DescribeImages", AWS_EC2_VERSION);
    if (!add_term(s, &q, term, "ImageId", "name")) {
        aws_query_free(&q);
        return bad_term(s, nc, "amiSelectorTerms", i);
    }
    ns_http_response *resp = NULL;
    int rc = aws_client_query(s->client, "ec2", "DescribeImages", aws_query_body(&q), aws_query_len(&q), &resp, NULL);
    aws_query_free(&q);
    if (rc != NS_OK)
        return rc;
    aws_ec2_image_page page;
    char err[256];
    rc = aws_ec2_parse_images(resp->body, resp->body_len, &page, err, sizeof(err));
    s->host->http_response_free(resp);
    if (rc != NS_OK) {
        aws_ec2_image_page_free(&page);
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeImages: unexpected answer: %s", err);
    }
    for (size_t k = 0; k < page.n; k++) {
        const aws_ec2_image *m = &page.items[k];
        if (!m->image_id || !m->architecture || (m->state && strcmp(m->state, "available") != 0))
            continue;
        int slot = strcmp(m->architecture, "arm64") == 0 ? 1 : strcmp(m->architecture, "x86_64") == 0 ? 0 : -1;
        if (slot < 0 || m->creation_ms < newest[slot])
            continue;
        newest[slot] = m->creation_ms;
        aws_copy(slot ? out->image_arm64 : out->image_amd64, 64, m->image_id);
    }
    aws_ec2_image_page_free(&page);
    return NS_OK;
}

static int resolve_images(aws_state *s, const ns_nodeclass *nc, aws_nodeclass_view *out)
{
    const ns_json *terms = spec_get(s, nc, "amiSelectorTerms");
    size_t n = s->host->json_type(terms) == NS_JSON_ARRAY ? s->host->json_size(terms) : 0;
    if (n == 0)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG,
                        "EC2NodeClass %s: spec.amiSelectorTerms must be a non-empty array",
                        nc->name ? nc->name : "(unnamed)");
    int64_t newest[2] = {-1, -1};
    for (size_t i = 0; i < n; i++) {
        const ns_json *term = s->host->json_at(terms, i);
        const char *alias = term_string(s, term, "alias");
        int rc;
        if (alias) {
            if (strcmp(alias, "al2023@latest") != 0)
                return NS_ERROR(s->host, s->ctx, NS_ERR_UNSUPPORTED,
                                "EC2NodeClass %s: spec.amiSelectorTerms[%zu].alias %s: only al2023@latest is supported",
                                nc->name ? nc->name : "(unnamed)", i, alias);
            if ((rc = alias_image(s, "x86_64", out->image_amd64, sizeof(out->image_amd64))) != NS_OK ||
                (rc = alias_image(s, "arm64", out->image_arm64, sizeof(out->image_arm64))) != NS_OK)
                return rc;
        } else if ((rc = select_images(s, nc, term, i, out, newest)) != NS_OK) {
            return rc;
        }
    }
    if (!out->image_amd64[0] && !out->image_arm64[0])
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG,
                        "EC2NodeClass %s: spec.amiSelectorTerms select no available x86_64 or arm64 image",
                        nc->name ? nc->name : "(unnamed)");
    return NS_OK;
}

int aws_nodeclass_resolve(aws_state *s, const ns_nodeclass *nc, aws_nodeclass_view *out)
{
    int rc = aws_nodeclass_subnets(s, nc, out);
    if (rc != NS_OK)
        return rc;
    const char *name = nc && nc->name ? nc->name : "(unnamed)";
    if (out->n_subnets == 0)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG,
                        "EC2NodeClass %s: spec.subnetSelectorTerms select no available subnet", name);
    if ((rc = resolve_security_groups(s, nc, out)) != NS_OK)
        return rc;
    if (out->n_security_groups == 0)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG,
                        "EC2NodeClass %s: spec.securityGroupSelectorTerms select no security group", name);
    if ((rc = resolve_images(s, nc, out)) != NS_OK)
        return rc;
    out->instance_profile = s->host->json_string(spec_get(s, nc, "instanceProfile"));
    out->user_data = s->host->json_string(spec_get(s, nc, "userData"));
    if (!out->instance_profile && s->host->json_string(spec_get(s, nc, "role")))
        return NS_ERROR(s->host, s->ctx, NS_ERR_UNSUPPORTED,
                        "EC2NodeClass %s: spec.role needs an instance profile created for it, which this provider "
                        "does not do; set spec.instanceProfile",
                        name);
    return NS_OK;
}
