/* EC2NodeClass (karpenter.k8s.aws/v1, v1beta1): field-by-field checks as Karpenter's CRD schema and CEL rules make
 * them, and the parts both node class kinds share (metadata options, block devices, tags, user data). */
#include "aws_nodeclass_spec.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const FAMILY_NAMES[] = {"AL2023", "AL2", "Bottlerocket", "Windows2019", "Windows2022", "Custom"};
static const char *const ALIAS_NAMES[] = {"al2023", "al2", "bottlerocket", "windows2019", "windows2022", NULL};

const char *aws_ami_family_name(aws_ami_family f)
{
    return (unsigned)f < sizeof(FAMILY_NAMES) / sizeof(FAMILY_NAMES[0]) ? FAMILY_NAMES[f] : "unknown";
}

bool aws_ami_family_windows(aws_ami_family f)
{
    return f == AWS_FAMILY_WINDOWS2019 || f == AWS_FAMILY_WINDOWS2022;
}

const char *aws_ami_family_windows_build(aws_ami_family f)
{
    return f == AWS_FAMILY_WINDOWS2019 ? "10.0.17763" : f == AWS_FAMILY_WINDOWS2022 ? "10.0.20348" : NULL;
}

int aws_spec_fail(const aws_nodeclass_spec *s, char *err, size_t errlen, const char *fmt, ...)
{
    int n = snprintf(err, errlen, "%s %s: ", s->kind ? s->kind : "node class", s->name ? s->name : "(unnamed)");
    if (n >= 0 && (size_t)n < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return NS_ERR_INVALID_CONFIG;
}

const char *aws_spec_keep(aws_nodeclass_spec *s, const char *text, size_t len)
{
    if (s->text_used + len + 1 > sizeof(s->text))
        return NULL;
    char *dst = s->text + s->text_used;
    memcpy(dst, text, len);
    dst[len] = '\0';
    s->text_used += len + 1;
    return dst;
}

int aws_spec_parse_family(const aws_nodeclass_spec *s, const char *field, const char *text, bool allow_custom,
                          aws_ami_family *out, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof(FAMILY_NAMES) / sizeof(FAMILY_NAMES[0]); i++)
        if (strcmp(text, FAMILY_NAMES[i]) == 0 && (allow_custom || i != AWS_FAMILY_CUSTOM)) {
            *out = (aws_ami_family)i;
            return NS_OK;
        }
    if (strcmp(text, "Ubuntu") == 0)
        return aws_spec_fail(s, err, errlen, "spec.%s: Ubuntu is not supported (Karpenter v1 dropped it); use AL2023, "
                             "Bottlerocket or Custom with amiSelectorTerms", field);
    return aws_spec_fail(s, err, errlen, "spec.%s: \"%s\" is not one of AL2, AL2023, Bottlerocket, Windows2019, "
                         "Windows2022%s", field, text, allow_custom ? ", Custom" : "");
}

/* ---- small typed readers: each fails naming the field when the value has the wrong type ---- */

static bool in_list(const char *key, const char *const *allowed)
{
    for (size_t i = 0; allowed[i]; i++)
        if (strcmp(allowed[i], key) == 0)
            return true;
    return false;
}

static int only_fields(const ns_host *h, const aws_nodeclass_spec *s, const ns_json *obj, const char *path,
                       const char *const *allowed, char *err, size_t errlen)
{
    if (h->json_type(obj) != NS_JSON_OBJECT)
        return aws_spec_fail(s, err, errlen, "%s must be an object", path);
    for (size_t i = 0; i < h->json_size(obj); i++) {
        const char *key = h->json_key(h->json_at(obj, i));
        if (!key || !in_list(key, allowed))
            return aws_spec_fail(s, err, errlen, "%s.%s: unknown field", path, key ? key : "(null)");
    }
    return NS_OK;
}

static int opt_string(const ns_host *h, const aws_nodeclass_spec *s, const ns_json *obj, const char *key,
                      const char *path, const char **out, char *err, size_t errlen)
{
    const ns_json *v = h->json_get(obj, key);
    *out = NULL;
    if (!v || h->json_type(v) == NS_JSON_NULL)
        return NS_OK;
    if (h->json_type(v) != NS_JSON_STRING || !*h->json_string(v))
        return aws_spec_fail(s, err, errlen, "%s.%s must be a non-empty string", path, key);
    *out = h->json_string(v);
    return NS_OK;
}

static int opt_bool(const ns_host *h, const aws_nodeclass_spec *s, const ns_json *obj, const char *key,
                    const char *path, int *out, char *err, size_t errlen)
{
    const ns_json *v = h->json_get(obj, key);
    *out = -1;
    if (!v || h->json_type(v) == NS_JSON_NULL)
        return NS_OK;
    if (h->json_type(v) != NS_JSON_BOOL)
        return aws_spec_fail(s, err, errlen, "%s.%s must be true or false", path, key);
    *out = h->json_bool(v) ? 1 : 0;
    return NS_OK;
}

static int opt_int(const ns_host *h, const aws_nodeclass_spec *s, const ns_json *obj, const char *key,
                   const char *path, int64_t min, int64_t max, int64_t *out, char *err, size_t errlen)
{
    const ns_json *v = h->json_get(obj, key);
    if (!v || h->json_type(v) == NS_JSON_NULL)
        return NS_OK;
    double d = h->json_number(v);
    if (h->json_type(v) != NS_JSON_NUMBER || d != floor(d) || d < (double)min || d > (double)max)
        return aws_spec_fail(s, err, errlen, "%s.%s must be a whole number from %lld to %lld", path, key,
                             (long long)min, (long long)max);
    *out = (int64_t)d;
    return NS_OK;
}

static int one_of(const aws_nodeclass_spec *s, const char *value, const char *path, const char *const *allowed,
                  char *err, size_t errlen)
{
    if (!value || in_list(value, allowed))
        return NS_OK;
    char list[200] = "";
    for (size_t i = 0; allowed[i]; i++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", allowed[i]);
    return aws_spec_fail(s, err, errlen, "%s: \"%s\" is not one of %s", path, value, list);
}

/* A Kubernetes quantity ("20Gi", "100G", "1Ti", "21474836480") in whole GiB, rounded up. */
static bool quantity_gib(const char *text, int64_t *gib)
{
    static const struct {
        const char *suffix;
        double factor;
    } UNITS[] = {{"Ki", 1024.0},         {"Mi", 1048576.0},         {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
                 {"Pi", 1125899906842624.0}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"", 1.0}};
    char *end = NULL;
    if (!text || !isdigit((unsigned char)text[0]))
        return false;
    double v = strtod(text, &end);
    for (size_t i = 0; i < sizeof(UNITS) / sizeof(UNITS[0]); i++)
        if (strcmp(end, UNITS[i].suffix) == 0) {
            double bytes = v * UNITS[i].factor;
            *gib = (int64_t)ceil(bytes / 1073741824.0);
            return true;
        }
    return false;
}

/* ---- pieces both kinds share ---- */

static int parse_tags(const ns_host *h, aws_nodeclass_spec *s, const ns_json *tags, char *err, size_t errlen)
{
    static const char *const RESTRICTED[] = {"karpenter.sh/nodepool", "karpenter.sh/nodeclaim", "eks:eks-cluster-name",
                                             "karpenter.k8s.aws/ec2nodeclass", "karpenter.sh/managed-by",
                                             "karpenter.sh/provisioner-name", NULL};
    if (!tags || h->json_type(tags) == NS_JSON_NULL)
        return NS_OK;
    if (h->json_type(tags) != NS_JSON_OBJECT)
        return aws_spec_fail(s, err, errlen, "spec.tags must be a map of strings");
    for (size_t i = 0; i < h->json_size(tags); i++) {
        const ns_json *m = h->json_at(tags, i);
        const char *key = h->json_key(m), *value = h->json_string(m);
        if (!key || !*key || !value)
            return aws_spec_fail(s, err, errlen, "spec.tags.%s: keys must be non-empty and values strings",
                                 key ? key : "");
        if (in_list(key, RESTRICTED) || strncmp(key, "kubernetes.io/cluster/", 22) == 0)
            return aws_spec_fail(s, err, errlen, "spec.tags.%s: the tag is restricted (the provider sets it)", key);
        if (s->n_tags == AWS_SPEC_MAX_NODECLASS_TAGS)
            return aws_spec_fail(s, err, errlen, "spec.tags: more than %d tags", AWS_SPEC_MAX_NODECLASS_TAGS);
        s->tags[s->n_tags++] = (aws_spec_tag){key, value};
    }
    return NS_OK;
}

static int parse_metadata(const ns_host *h, aws_nodeclass_spec *s, const ns_json *md, char *err, size_t errlen)
{
    static const char *const FIELDS[] = {"httpEndpoint", "httpProtocolIPv6", "httpPutResponseHopLimit", "httpTokens",
                                         NULL};
    static const char *const ON_OFF[] = {"enabled", "disabled", NULL};
    static const char *const TOKENS[] = {"required", "optional", NULL};
    const char *p = "spec.metadataOptions";
    s->http_endpoint = "enabled";
    s->http_protocol_ipv6 = "disabled";
    s->http_tokens = "required";
    /* v1 lowered the default from 2 to 1, so that pods cannot reach the node's credentials */
    s->http_put_response_hop_limit = strcmp(s->api_version, "karpenter.k8s.aws/v1") == 0 ? 1 : 2;
    if (!md || h->json_type(md) == NS_JSON_NULL)
        return NS_OK;
    const char *endpoint = NULL, *ipv6 = NULL, *tokens = NULL;
    int rc;
    if ((rc = only_fields(h, s, md, p, FIELDS, err, errlen)) ||
        (rc = opt_string(h, s, md, "httpEndpoint", p, &endpoint, err, errlen)) ||
        (rc = opt_string(h, s, md, "httpProtocolIPv6", p, &ipv6, err, errlen)) ||
        (rc = opt_string(h, s, md, "httpTokens", p, &tokens, err, errlen)) ||
        (rc = opt_int(h, s, md, "httpPutResponseHopLimit", p, 1, 64, &s->http_put_response_hop_limit, err, errlen)) ||
        (rc = one_of(s, endpoint, "spec.metadataOptions.httpEndpoint", ON_OFF, err, errlen)) ||
        (rc = one_of(s, ipv6, "spec.metadataOptions.httpProtocolIPv6", ON_OFF, err, errlen)) ||
        (rc = one_of(s, tokens, "spec.metadataOptions.httpTokens", TOKENS, err, errlen)))
        return rc;
    s->http_endpoint = endpoint ? endpoint : s->http_endpoint;
    s->http_protocol_ipv6 = ipv6 ? ipv6 : s->http_protocol_ipv6;
    s->http_tokens = tokens ? tokens : s->http_tokens;
    return NS_OK;
}

static int parse_block_device(const ns_host *h, aws_nodeclass_spec *s, const ns_json *item, size_t i,
                              aws_block_device *out, char *err, size_t errlen)
{
    static const char *const FIELDS[] = {"deviceName", "ebs", "rootVolume", NULL};
    static const char *const EBS[] = {"deleteOnTermination", "encrypted", "iops", "kmsKeyID", "snapshotID",
                                      "throughput", "volumeSize", "volumeType", "volumeInitializationRate", NULL};
    static const char *const TYPES[] = {"standard", "io1", "io2", "gp2", "sc1", "st1", "gp3", NULL};
    char p[64], pe[72];
    snprintf(p, sizeof(p), "spec.blockDeviceMappings[%zu]", i);
    snprintf(pe, sizeof(pe), "%s.ebs", p);
    int root = -1, rc;
    *out = (aws_block_device){.encrypted = -1, .delete_on_termination = -1};
    if ((rc = only_fields(h, s, item, p, FIELDS, err, errlen)) ||
        (rc = opt_string(h, s, item, "deviceName", p, &out->device_name, err, errlen)) ||
        (rc = opt_bool(h, s, item, "rootVolume", p, &root, err, errlen)))
        return rc;
    if (!out->device_name)
        return aws_spec_fail(s, err, errlen, "%s.deviceName is required", p);
    out->root_volume = root == 1;
    const ns_json *ebs = h->json_get(item, "ebs");
    if (!ebs)
        return NS_OK;
    const char *size = NULL;
    const ns_json *size_v = h->json_get(ebs, "volumeSize");
    if ((rc = only_fields(h, s, ebs, pe, EBS, err, errlen)) ||
        (rc = opt_string(h, s, ebs, "volumeType", pe, &out->volume_type, err, errlen)) ||
        (rc = one_of(s, out->volume_type, "spec.blockDeviceMappings[].ebs.volumeType", TYPES, err, errlen)) ||
        (rc = opt_string(h, s, ebs, "kmsKeyID", pe, &out->kms_key_id, err, errlen)) ||
        (rc = opt_string(h, s, ebs, "snapshotID", pe, &out->snapshot_id, err, errlen)) ||
        (rc = opt_bool(h, s, ebs, "encrypted", pe, &out->encrypted, err, errlen)) ||
        (rc = opt_bool(h, s, ebs, "deleteOnTermination", pe, &out->delete_on_termination, err, errlen)) ||
        (rc = opt_int(h, s, ebs, "iops", pe, 100, 256000, &out->iops, err, errlen)) ||
        (rc = opt_int(h, s, ebs, "throughput", pe, 125, 2000, &out->throughput, err, errlen)))
        return rc;
    if (size_v && h->json_type(size_v) == NS_JSON_NUMBER) {
        double bytes = h->json_number(size_v);
        out->volume_size_gib = (int64_t)ceil(bytes / 1073741824.0);
    } else if (size_v) {
        size = h->json_string(size_v);
        if (!size || !quantity_gib(size, &out->volume_size_gib))
            return aws_spec_fail(s, err, errlen, "%s.volumeSize: \"%s\" is not a quantity such as 20Gi", pe,
                                 size ? size : "(not a string)");
    }
    if (size_v && (out->volume_size_gib < 1 || out->volume_size_gib > 64 * 1024))
        return aws_spec_fail(s, err, errlen, "%s.volumeSize must be from 1Gi to 64Ti", pe);
    return NS_OK;
}

static int parse_block_devices(const ns_host *h, aws_nodeclass_spec *s, const ns_json *list, char *err, size_t errlen)
{
    if (!list || h->json_type(list) == NS_JSON_NULL)
        return NS_OK;
    if (h->json_type(list) != NS_JSON_ARRAY)
        return aws_spec_fail(s, err, errlen, "spec.blockDeviceMappings must be a list");
    size_t roots = 0;
    for (size_t i = 0; i < h->json_size(list); i++) {
        if (s->n_block_devices == AWS_SPEC_MAX_BLOCK_DEVICES)
            return aws_spec_fail(s, err, errlen, "spec.blockDeviceMappings: more than %d entries",
                                 AWS_SPEC_MAX_BLOCK_DEVICES);
        aws_block_device *d = &s->block_devices[s->n_block_devices];
        int rc = parse_block_device(h, s, h->json_at(list, i), i, d, err, errlen);
        if (rc != NS_OK)
            return rc;
        roots += d->root_volume;
        s->n_block_devices++;
    }
    if (roots > 1)
        return aws_spec_fail(s, err, errlen, "spec.blockDeviceMappings: must have only one blockDeviceMappings with "
                             "rootVolume");
    return NS_OK;
}

int aws_spec_parse_common(const ns_host *h, const ns_json *spec, aws_nodeclass_spec *s, char *err, size_t errlen)
{
    int rc;
    const char *context = NULL;
    if ((rc = opt_string(h, s, spec, "userData", "spec", &s->user_data, err, errlen)) ||
        (rc = opt_string(h, s, spec, "instanceProfile", "spec", &s->instance_profile, err, errlen)) ||
        (rc = opt_string(h, s, spec, "context", "spec", &context, err, errlen)) ||
        (rc = opt_bool(h, s, spec, "detailedMonitoring", "spec", &s->detailed_monitoring, err, errlen)) ||
        (rc = parse_tags(h, s, h->json_get(spec, "tags"), err, errlen)) ||
        (rc = parse_metadata(h, s, h->json_get(spec, "metadataOptions"), err, errlen)) ||
        (rc = parse_block_devices(h, s, h->json_get(spec, "blockDeviceMappings"), err, errlen)))
        return rc;
    return NS_OK;
}

int aws_spec_term_tags(const ns_host *h, const aws_nodeclass_spec *s, const ns_json *tags, const char *path,
                       aws_spec_tag *out, size_t *n, char *err, size_t errlen)
{
    for (size_t i = 0; i < h->json_size(tags); i++) {
        const ns_json *m = h->json_at(tags, i);
        const char *key = h->json_key(m), *value = h->json_string(m);
        if (!key || !*key || !value || !*value)
            return aws_spec_fail(s, err, errlen, "%s.tags: empty tag keys or values aren't supported", path);
        if (*n == AWS_SPEC_MAX_TAGS)
            return aws_spec_fail(s, err, errlen, "%s.tags: more than %d tags", path, AWS_SPEC_MAX_TAGS);
        out[(*n)++] = (aws_spec_tag){key, value};
    }
    return NS_OK;
}

/* ---- EC2NodeClass ---- */

static int parse_term_tags(const ns_host *h, aws_nodeclass_spec *s, const ns_json *tags, const char *path,
                           aws_selector_term *t, char *err, size_t errlen)
{
    if (!tags)
        return NS_OK;
    if (h->json_type(tags) != NS_JSON_OBJECT || h->json_size(tags) == 0)
        return aws_spec_fail(s, err, errlen, "%s.tags must be a non-empty map of strings", path);
    return aws_spec_term_tags(h, s, tags, path, t->tags, &t->n_tags, err, errlen);
}

typedef enum term_kind { TERM_SUBNET, TERM_SECURITY_GROUP, TERM_AMI } term_kind;

static int parse_term(const ns_host *h, aws_nodeclass_spec *s, const ns_json *item, const char *field, size_t i,
                      term_kind kind, bool v1, aws_selector_term *t, char *err, size_t errlen)
{
    static const char *const SUBNET[] = {"id", "tags", NULL};
    static const char *const GROUP[] = {"id", "name", "tags", NULL};
    static const char *const AMI_V1[] = {"alias", "id", "name", "owner", "tags", "ssmParameter", NULL};
    static const char *const AMI_V1BETA1[] = {"id", "name", "owner", "tags", NULL};
    char p[80];
    snprintf(p, sizeof(p), "spec.%s[%zu]", field, i);
    const char *const *allowed = kind == TERM_SUBNET ? SUBNET : kind == TERM_SECURITY_GROUP ? GROUP
                                 : v1                ? AMI_V1
                                                     : AMI_V1BETA1;
    memset(t, 0, sizeof(*t));
    int rc;
    if ((rc = only_fields(h, s, item, p, allowed, err, errlen)) ||
        (rc = opt_string(h, s, item, "id", p, &t->id, err, errlen)) ||
        (rc = opt_string(h, s, item, "name", p, &t->name, err, errlen)) ||
        (rc = opt_string(h, s, item, "owner", p, &t->owner, err, errlen)) ||
        (rc = opt_string(h, s, item, "alias", p, &t->alias, err, errlen)) ||
        (rc = opt_string(h, s, item, "ssmParameter", p, &t->ssm_parameter, err, errlen)) ||
        (rc = parse_term_tags(h, s, h->json_get(item, "tags"), p, t, err, errlen)))
        return rc;
    size_t set = h->json_size(item);
    if (set == 0)
        return aws_spec_fail(s, err, errlen, "%s: expected at least one of %s", p,
                             kind == TERM_SUBNET ? "tags, id" : kind == TERM_SECURITY_GROUP ? "tags, id, name"
                                                                                            : "tags, id, name, alias");
    if (t->id && set > 1)
        return aws_spec_fail(s, err, errlen, "%s: 'id' is mutually exclusive, cannot be set with a combination of "
                             "other fields", p);
    if (t->alias && set > 1)
        return aws_spec_fail(s, err, errlen, "%s: 'alias' is mutually exclusive, cannot be set with a combination of "
                             "other fields", p);
    if (t->owner && !t->name && t->n_tags == 0)
        return aws_spec_fail(s, err, errlen, "%s: 'owner' needs 'name' or 'tags' beside it", p);
    return NS_OK;
}

static int parse_terms(const ns_host *h, aws_nodeclass_spec *s, const ns_json *spec, const char *field,
                       term_kind kind, bool v1, bool required, aws_selector_term *terms, size_t *n, char *err,
                       size_t errlen)
{
    const ns_json *list = h->json_get(spec, field);
    *n = 0;
    if (!list || h->json_type(list) == NS_JSON_NULL) {
        if (required)
            return aws_spec_fail(s, err, errlen, "spec.%s must be a non-empty array", field);
        return NS_OK;
    }
    if (h->json_type(list) != NS_JSON_ARRAY || h->json_size(list) == 0)
        return aws_spec_fail(s, err, errlen, "spec.%s must be a non-empty array", field);
    if (h->json_size(list) > AWS_SPEC_MAX_TERMS)
        return aws_spec_fail(s, err, errlen, "spec.%s: more than %d terms", field, AWS_SPEC_MAX_TERMS);
    for (size_t i = 0; i < h->json_size(list); i++) {
        int rc = parse_term(h, s, h->json_at(list, i), field, i, kind, v1, &terms[i], err, errlen);
        if (rc != NS_OK)
            return rc;
        (*n)++;
    }
    return NS_OK;
}

/* "al2023@latest" -> family and version. */
static int parse_alias(aws_nodeclass_spec *s, const char *alias, char *err, size_t errlen)
{
    const char *at = strchr(alias, '@');
    size_t flen = at ? (size_t)(at - alias) : 0;
    for (size_t i = 0; at && ALIAS_NAMES[i]; i++)
        if (strlen(ALIAS_NAMES[i]) == flen && strncmp(alias, ALIAS_NAMES[i], flen) == 0) {
            const char *version = at + 1;
            s->family = (aws_ami_family)i;
            s->alias_version = version;
            if (!*version || strchr(version, '/') || strchr(version, '@'))
                break;
            if (aws_ami_family_windows(s->family) && strcmp(version, "latest") != 0)
                return aws_spec_fail(s, err, errlen, "spec.amiSelectorTerms[0].alias \"%s\": Windows families may "
                                     "only specify version 'latest'", alias);
            return NS_OK;
        }
    return aws_spec_fail(s, err, errlen, "spec.amiSelectorTerms[0].alias \"%s\": want FAMILY@VERSION with FAMILY one of "
                         "al2, al2023, bottlerocket, windows2019, windows2022 and VERSION 'latest' or a release such "
                         "as v20240807", alias);
}

static int parse_kubelet(const ns_host *h, aws_nodeclass_spec *s, const ns_json *k, char *err, size_t errlen)
{
    static const char *const FIELDS[] = {"clusterDNS", "maxPods", "podsPerCore", "systemReserved", "kubeReserved",
                                         "evictionHard", "evictionSoft", "evictionSoftGracePeriod",
                                         "evictionMaxPodGracePeriod", "imageGCHighThresholdPercent",
                                         "imageGCLowThresholdPercent", "cpuCFSQuota", NULL};
    if (!k || h->json_type(k) == NS_JSON_NULL)
        return NS_OK;
    int rc = only_fields(h, s, k, "spec.kubelet", FIELDS, err, errlen);
    if (rc == NS_OK)
        rc = opt_int(h, s, k, "maxPods", "spec.kubelet", 0, 1000000, &s->max_pods, err, errlen);
    if (rc != NS_OK)
        return rc;
    const ns_json *dns = h->json_get(k, "clusterDNS");
    if (dns && (h->json_type(dns) != NS_JSON_ARRAY || (h->json_size(dns) > 0 && !h->json_string(h->json_at(dns, 0)))))
        return aws_spec_fail(s, err, errlen, "spec.kubelet.clusterDNS must be a list of IP addresses");
    s->cluster_dns = dns && h->json_size(dns) ? h->json_string(h->json_at(dns, 0)) : NULL;
    return NS_OK;
}

static int parse_ec2nodeclass(const ns_host *h, const ns_json *spec, bool v1, aws_nodeclass_spec *s, char *err,
                              size_t errlen)
{
    static const char *const V1[] = {"subnetSelectorTerms", "securityGroupSelectorTerms",
                                     "capacityReservationSelectorTerms", "associatePublicIPAddress",
                                     "amiSelectorTerms", "amiFamily", "userData", "role", "instanceProfile", "tags",
                                     "kubelet", "blockDeviceMappings", "instanceStorePolicy", "detailedMonitoring",
                                     "metadataOptions", "context", NULL};
    static const char *const V1BETA1[] = {"subnetSelectorTerms", "securityGroupSelectorTerms",
                                          "associatePublicIPAddress", "amiSelectorTerms", "amiFamily", "userData",
                                          "role", "instanceProfile", "tags", "blockDeviceMappings",
                                          "instanceStorePolicy", "detailedMonitoring", "metadataOptions", "context",
                                          NULL};
    static const char *const STORE[] = {"RAID0", NULL};
    const char *family = NULL;
    int rc;
    if ((rc = only_fields(h, s, spec, "spec", v1 ? V1 : V1BETA1, err, errlen)) ||
        (rc = parse_terms(h, s, spec, "subnetSelectorTerms", TERM_SUBNET, v1, true, s->subnets, &s->n_subnets, err,
                          errlen)) ||
        (rc = parse_terms(h, s, spec, "securityGroupSelectorTerms", TERM_SECURITY_GROUP, v1, true, s->security_groups,
                          &s->n_security_groups, err, errlen)) ||
        (rc = parse_terms(h, s, spec, "amiSelectorTerms", TERM_AMI, v1, v1, s->amis, &s->n_amis, err, errlen)) ||
        (rc = opt_string(h, s, spec, "amiFamily", "spec", &family, err, errlen)) ||
        (rc = opt_string(h, s, spec, "role", "spec", &s->role, err, errlen)) ||
        (rc = opt_string(h, s, spec, "instanceStorePolicy", "spec", &s->instance_store_policy, err, errlen)) ||
        (rc = one_of(s, s->instance_store_policy, "spec.instanceStorePolicy", STORE, err, errlen)) ||
        (rc = opt_bool(h, s, spec, "associatePublicIPAddress", "spec", &s->associate_public_ip, err, errlen)) ||
        (rc = parse_kubelet(h, s, h->json_get(spec, "kubelet"), err, errlen)) ||
        (rc = aws_spec_parse_common(h, spec, s, err, errlen)))
        return rc;
    if ((rc = aws_spec_parse_reservations(h, h->json_get(spec, "capacityReservationSelectorTerms"), s, err,
                                          errlen)) != NS_OK)
        return rc;
    bool alias = false;
    for (size_t i = 0; i < s->n_amis; i++)
        alias |= s->amis[i].alias != NULL;
    if (alias) {
        if (s->n_amis > 1)
            return aws_spec_fail(s, err, errlen, "spec.amiSelectorTerms: 'alias' is mutually exclusive, cannot be set "
                                 "with a combination of other amiSelectorTerms");
        if ((rc = parse_alias(s, s->amis[0].alias, err, errlen)) != NS_OK)
            return rc;
        s->n_amis = 0;
        aws_ami_family declared;
        if (family && (rc = aws_spec_parse_family(s, "amiFamily", family, true, &declared, err, errlen)) != NS_OK)
            return rc;
        if (family && declared != s->family)
            return aws_spec_fail(s, err, errlen, "spec.amiFamily %s does not match the alias family of "
                                 "spec.amiSelectorTerms[0].alias", family);
    } else if (!family) {
        return aws_spec_fail(s, err, errlen, "spec.amiFamily: must specify amiFamily if amiSelectorTerms does not "
                             "contain an alias");
    } else if ((rc = aws_spec_parse_family(s, "amiFamily", family, true, &s->family, err, errlen)) != NS_OK) {
        return rc;
    } else if (s->n_amis == 0) {
        if (s->family == AWS_FAMILY_CUSTOM)
            return aws_spec_fail(s, err, errlen, "spec.amiSelectorTerms: amiFamily Custom needs amiSelectorTerms");
        s->alias_version = "latest"; /* v1beta1 without terms: the family's latest EKS-optimized AMIs */
    }
    if (!!s->role == !!s->instance_profile)
        return aws_spec_fail(s, err, errlen, "spec: must specify exactly one of ['role', 'instanceProfile']");
    return NS_OK;
}

int aws_nodeclass_spec_parse(const ns_host *h, const ns_nodeclass *nc, aws_nodeclass_spec *out, char *err,
                             size_t errlen)
{
    memset(out, 0, sizeof(*out));
    out->detailed_monitoring = out->associate_public_ip = -1;
    out->kind = nc && nc->kind ? nc->kind : "(no kind)";
    out->name = nc && nc->name ? nc->name : "(unnamed)";
    const char *api = nc && nc->api_version ? nc->api_version : "";
    out->api_version = api;
    const ns_json *spec = nc ? nc->spec : NULL;
    if (!spec || h->json_type(spec) != NS_JSON_OBJECT)
        return aws_spec_fail(out, err, errlen, "spec must be an object");
    if (strcmp(out->kind, "EC2NodeClass") == 0 &&
        (strcmp(api, "karpenter.k8s.aws/v1") == 0 || strcmp(api, "karpenter.k8s.aws/v1beta1") == 0))
        return parse_ec2nodeclass(h, spec, strcmp(api, "karpenter.k8s.aws/v1") == 0, out, err, errlen);
    if (strcmp(out->kind, "AWSNodeTemplate") == 0 && strcmp(api, "karpenter.k8s.aws/v1alpha1") == 0) {
        out->legacy = true;
        return aws_nodeclass_legacy_parse(h, spec, out, err, errlen);
    }
    return aws_spec_fail(out, err, errlen, "%s is not an AWS node class: the aws provider takes EC2NodeClass "
                         "(karpenter.k8s.aws/v1 or v1beta1) or AWSNodeTemplate (karpenter.k8s.aws/v1alpha1)",
                         *api ? api : "(no apiVersion)");
}

bool aws_spec_instance_store_raid0(const aws_nodeclass_spec *s)
{
    return s->instance_store_policy && strcmp(s->instance_store_policy, "RAID0") == 0;
}
