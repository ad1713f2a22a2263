/* AWSNodeTemplate (karpenter.k8s.aws/v1alpha1), the node class of Karpenter's Provisioner era, read into the same
 * view as an EC2NodeClass: its selector maps become selector terms the way Karpenter's v1beta1 migration converted
 * them ("aws-ids" lists become one id term per ID; "aws::name" and "aws::owners" select AMIs by name and owner; every
 * other key is a tag). */
#include <stdio.h>
#include <string.h>

#include "aws_nodeclass_spec.h"

typedef enum legacy_kind { LEGACY_SUBNET, LEGACY_GROUP, LEGACY_AMI } legacy_kind;

/* Adds one id term per comma-separated ID of `ids`. */
static int add_ids(aws_nodeclass_spec *s, const char *field, const char *ids, aws_selector_term *terms, size_t *n,
                   char *err, size_t errlen)
{
    const char *p = ids;
    while (*p) {
        size_t len = strcspn(p, ",");
        while (len && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
        size_t trimmed = len;
        while (trimmed && (p[trimmed - 1] == ' ' || p[trimmed - 1] == '\t'))
            trimmed--;
        if (trimmed) {
            if (*n == AWS_SPEC_MAX_TERMS)
                return aws_spec_fail(s, err, errlen, "spec.%s.aws-ids: more than %d IDs", field, AWS_SPEC_MAX_TERMS);
            const char *id = aws_spec_keep(s, p, trimmed);
            if (!id)
                return aws_spec_fail(s, err, errlen, "spec.%s.aws-ids: the ID list is too long", field);
            terms[*n] = (aws_selector_term){.id = id};
            (*n)++;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return NS_OK;
}

static int parse_selector(const ns_host *h, aws_nodeclass_spec *s, const ns_json *spec, const char *field,
                          legacy_kind kind, aws_selector_term *terms, size_t *n, char *err, size_t errlen)
{
    const ns_json *map = h->json_get(spec, field);
    *n = 0;
    if (!map || h->json_type(map) == NS_JSON_NULL)
        return kind == LEGACY_AMI ? NS_OK : aws_spec_fail(s, err, errlen, "spec.%s is required", field);
    if (h->json_type(map) != NS_JSON_OBJECT || h->json_size(map) == 0)
        return aws_spec_fail(s, err, errlen, "spec.%s must be a non-empty map of strings", field);
    aws_selector_term by_tags = {0};
    const char *owners = NULL;
    for (size_t i = 0; i < h->json_size(map); i++) {
        const ns_json *m = h->json_at(map, i);
        const char *key = h->json_key(m), *value = h->json_string(m);
        if (!key || !*key || !value || !*value)
            return aws_spec_fail(s, err, errlen, "spec.%s: empty keys or values aren't supported", field);
        if (strcmp(key, "aws-ids") == 0) {
            int rc = add_ids(s, field, value, terms, n, err, errlen);
            if (rc != NS_OK)
                return rc;
        } else if (kind == LEGACY_AMI && strcmp(key, "aws::name") == 0) {
            by_tags.name = value;
        } else if (kind == LEGACY_AMI && strcmp(key, "aws::owners") == 0) {
            owners = value;
        } else if (strncmp(key, "aws::", 5) == 0) {
            return aws_spec_fail(s, err, errlen, "spec.%s.%s: unknown selector key", field, key);
        } else {
            if (by_tags.n_tags == AWS_SPEC_MAX_TAGS)
                return aws_spec_fail(s, err, errlen, "spec.%s: more than %d tags", field, AWS_SPEC_MAX_TAGS);
            by_tags.tags[by_tags.n_tags++] = (aws_spec_tag){key, value};
        }
    }
    if (owners && !by_tags.name && by_tags.n_tags == 0)
        return aws_spec_fail(s, err, errlen, "spec.%s: aws::owners needs aws::name or tags beside it", field);
    if (!by_tags.name && by_tags.n_tags == 0)
        return NS_OK;
    /* One term per owner, each with the name and tags (Karpenter ORs the owners). */
    if (owners) {
        size_t before = *n;
        int rc = add_ids(s, field, owners, terms, n, err, errlen);
        for (size_t i = before; rc == NS_OK && i < *n; i++) {
            const char *owner = terms[i].id;
            terms[i] = by_tags;
            terms[i].owner = owner;
        }
        return rc;
    }
    if (*n == AWS_SPEC_MAX_TERMS)
        return aws_spec_fail(s, err, errlen, "spec.%s: too many terms", field);
    terms[(*n)++] = by_tags;
    return NS_OK;
}

int aws_nodeclass_legacy_parse(const ns_host *h, const ns_json *spec, aws_nodeclass_spec *s, char *err,
                               size_t errlen)
{
    static const char *const FIELDS[] = {"subnetSelector", "securityGroupSelector", "amiSelector", "amiFamily",
                                         "instanceProfile", "userData", "tags", "metadataOptions",
                                         "blockDeviceMappings", "detailedMonitoring", "launchTemplate", "context",
                                         NULL};
    for (size_t i = 0; i < h->json_size(spec); i++) {
        const char *key = h->json_key(h->json_at(spec, i));
        bool known = false;
        for (size_t k = 0; FIELDS[k] && key; k++)
            known |= strcmp(FIELDS[k], key) == 0;
        if (!known)
            return aws_spec_fail(s, err, errlen, "spec.%s: unknown field", key ? key : "(null)");
    }
    if (h->json_get(spec, "launchTemplate"))
        return aws_spec_fail(s, err, errlen, "spec.launchTemplate: launching from a launch template you manage is not "
                             "supported (Karpenter v1 dropped it); describe the instances with the other fields");
    const ns_json *family = h->json_get(spec, "amiFamily");
    if (family && !h->json_string(family))
        return aws_spec_fail(s, err, errlen, "spec.amiFamily must be a string");
    s->family = AWS_FAMILY_AL2; /* the v1alpha1 default */
    int rc;
    if (family && (rc = aws_spec_parse_family(s, "amiFamily", h->json_string(family), true, &s->family, err,
                                              errlen)) != NS_OK)
        return rc;
    if ((rc = parse_selector(h, s, spec, "subnetSelector", LEGACY_SUBNET, s->subnets, &s->n_subnets, err, errlen)) ||
        (rc = parse_selector(h, s, spec, "securityGroupSelector", LEGACY_GROUP, s->security_groups,
                             &s->n_security_groups, err, errlen)) ||
        (rc = parse_selector(h, s, spec, "amiSelector", LEGACY_AMI, s->amis, &s->n_amis, err, errlen)) ||
        (rc = aws_spec_parse_common(h, spec, s, err, errlen)))
        return rc;
    if (s->n_amis == 0) {
        if (s->family == AWS_FAMILY_CUSTOM)
            return aws_spec_fail(s, err, errlen, "spec.amiSelector: amiFamily Custom needs an amiSelector");
        s->alias_version = "latest";
    }
    if (!s->instance_profile)
        return aws_spec_fail(s, err, errlen, "spec.instanceProfile is required for an AWSNodeTemplate (it had no "
                             "role field)");
    return NS_OK;
}
