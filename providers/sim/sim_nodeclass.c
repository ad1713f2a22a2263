/*
 * Node classes: parsing, validation (validate_nodeclass) and drift (check_drift).
 *
 * SimNodeClass is strict (an unknown spec field is an error). EC2NodeClass and AWSNodeTemplate are read leniently:
 * the sim checks the fields it uses and ignores the AWS-only ones (role, subnetSelectorTerms, ...), so a real AWS
 * manifest runs unchanged.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim_nodeclass.h"
#include "sim_state.h"

#define SIM_KIND "SimNodeClass"
#define SIM_API_VERSION "nodesmith.io/v1"
#define SIM_MIN_EPHEMERAL_BYTES (2LL << 30)

typedef struct sim_nc_ctx {
    sim_state *s;
    const ns_nodeclass *nc;
    const char *name;
} sim_nc_ctx;

#define SIM_NC_FAIL(c, ...) SIM_FAIL((c)->s, NS_ERR_INVALID_CONFIG, __VA_ARGS__)

const char *sim_os_label(sim_os os)
{
    return os == SIM_OS_LINUX ? "linux" : "windows";
}

const char *sim_os_windows_build(sim_os os)
{
    switch (os) {
    case SIM_OS_WINDOWS2019:
        return "10.0.17763";
    case SIM_OS_WINDOWS2022:
        return "10.0.20348";
    case SIM_OS_LINUX:
        break;
    }
    return NULL;
}

/* Kubernetes quantity with a binary or decimal suffix ("20Gi", "100G", "1073741824"); -1 when malformed. */
static int64_t sim_parse_quantity(const char *text)
{
    static const struct {
        const char *suffix;
        int64_t factor;
    } units[] = {{"", 1},           {"Ki", 1LL << 10},  {"Mi", 1LL << 20},  {"Gi", 1LL << 30},
                 {"Ti", 1LL << 40}, {"k", 1000},        {"M", 1000000},     {"G", 1000000000LL},
                 {"T", 1000000000000LL}};
    if (!text || !isdigit((unsigned char)text[0]))
        return -1;
    errno = 0;
    char *end = NULL;
    long long value = strtoll(text, &end, 10);
    if (errno != 0)
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(end, units[i].suffix) == 0)
            return value <= INT64_MAX / units[i].factor ? value * units[i].factor : -1;
    return -1;
}

static bool sim_is_type(const sim_state *s, const ns_json *v, ns_json_type type)
{
    return v && s->host->json_type(v) == type;
}

/* spec.<field> as a string; NULL when absent; an error when present with another type. */
static int sim_nc_string(const sim_nc_ctx *c, const ns_json *obj, const char *path, const char *key, const char **out)
{
    const ns_json *v = c->s->host->json_get(obj, key);
    *out = NULL;
    if (!v)
        return NS_OK;
    if (!sim_is_type(c->s, v, NS_JSON_STRING))
        return SIM_NC_FAIL(c, "%s %s: %s%s must be a string", c->nc->kind, c->name, path, key);
    *out = c->s->host->json_string(v);
    return NS_OK;
}

static int sim_nc_ephemeral(const sim_nc_ctx *c, const char *field, const char *text, sim_nc *out)
{
    int64_t bytes = sim_parse_quantity(text);
    if (bytes < SIM_MIN_EPHEMERAL_BYTES)
        return SIM_NC_FAIL(c, "%s %s: %s \"%s\" must be a quantity of at least 2Gi", c->nc->kind, c->name, field,
                           text);
    out->ephemeral_bytes = bytes;
    return NS_OK;
}

static int sim_nc_image_family(const sim_nc_ctx *c, const char *field, const char *family, sim_nc *out)
{
    if (strcasecmp(family, "Windows2019") == 0)
        out->os = SIM_OS_WINDOWS2019;
    else if (strcasecmp(family, "Windows2022") == 0)
        out->os = SIM_OS_WINDOWS2022;
    else if (strcasecmp(family, "Linux") == 0 || strcasecmp(family, "AL2") == 0 ||
             strcasecmp(family, "AL2023") == 0 || strcasecmp(family, "Bottlerocket") == 0 ||
             strcasecmp(family, "Custom") == 0)
        out->os = SIM_OS_LINUX;
    else
        return SIM_NC_FAIL(c, "%s %s: %s \"%s\" is not one of Linux, AL2, AL2023, Bottlerocket, Custom, "
                           "Windows2019, Windows2022", c->nc->kind, c->name, field, family);
    out->bottlerocket = strcasecmp(family, "Bottlerocket") == 0;
    return NS_OK;
}

static int sim_nc_zones(const sim_nc_ctx *c, const ns_json *zones, sim_nc *out)
{
    const ns_host *h = c->s->host;
    if (!sim_is_type(c->s, zones, NS_JSON_ARRAY) || h->json_size(zones) == 0)
        return SIM_NC_FAIL(c, "%s %s: spec.zones must be a non-empty array of zone names", c->nc->kind, c->name);
    memset(out->zone_allowed, 0, sizeof(out->zone_allowed));
    for (size_t i = 0; i < h->json_size(zones); i++) {
        const char *zone = h->json_string(h->json_at(zones, i));
        int z = zone ? sim_zone_index(c->s, zone) : -1;
        if (z < 0)
            return SIM_NC_FAIL(c, "%s %s: spec.zones[%zu] %s%s%s is not one of the provider's zones (option zones)",
                               c->nc->kind, c->name, i, zone ? "\"" : "", zone ? zone : "is not a string",
                               zone ? "\"" : "");
        out->zone_allowed[z] = true;
    }
    return NS_OK;
}

static int sim_nc_tags(const sim_nc_ctx *c, const ns_json *tags)
{
    const ns_host *h = c->s->host;
    if (!sim_is_type(c->s, tags, NS_JSON_OBJECT))
        return SIM_NC_FAIL(c, "%s %s: spec.tags must be an object of strings", c->nc->kind, c->name);
    for (size_t i = 0; i < h->json_size(tags); i++) {
        const ns_json *member = h->json_at(tags, i);
        if (!sim_is_type(c->s, member, NS_JSON_STRING))
            return SIM_NC_FAIL(c, "%s %s: spec.tags.%s must be a string", c->nc->kind, c->name, h->json_key(member));
    }
    return NS_OK;
}

static int sim_nc_parse_sim(const sim_nc_ctx *c, const ns_json *spec, sim_nc *out)
{
    const ns_host *h = c->s->host;
    const char *version = SIM_DEFAULT_IMAGE_VERSION;
    int rc = NS_OK;
    for (size_t i = 0; i < h->json_size(spec) && rc == NS_OK; i++) {
        const ns_json *member = h->json_at(spec, i);
        const char *key = h->json_key(member);
        const char *text = h->json_string(member);
        bool is_string = sim_is_type(c->s, member, NS_JSON_STRING);
        if (strcmp(key, "zones") == 0)
            rc = sim_nc_zones(c, member, out);
        else if (strcmp(key, "kubelet") == 0)
            rc = sim_kubelet_parse(c->s, c->nc->kind, c->name, member, &out->kubelet);
        else if (strcmp(key, "tags") == 0)
            rc = sim_nc_tags(c, member);
        else if (strcmp(key, "imageFamily") != 0 && strcmp(key, "imageVersion") != 0 &&
                 strcmp(key, "ephemeralStorage") != 0 && strcmp(key, "userData") != 0)
            rc = SIM_NC_FAIL(c, "%s %s: unknown field spec.%s (known: imageFamily, imageVersion, zones, "
                             "ephemeralStorage, tags, userData, kubelet)", c->nc->kind, c->name, key);
        else if (!is_string)
            rc = SIM_NC_FAIL(c, "%s %s: spec.%s must be a string", c->nc->kind, c->name, key);
        else if (strcmp(key, "imageFamily") == 0)
            rc = sim_nc_image_family(c, "spec.imageFamily", text, out);
        else if (strcmp(key, "ephemeralStorage") == 0)
            rc = sim_nc_ephemeral(c, "spec.ephemeralStorage", text, out);
        else if (strcmp(key, "imageVersion") == 0 && (text[0] == '\0' || strlen(text) > 64))
            rc = SIM_NC_FAIL(c, "%s %s: spec.imageVersion must be 1 to 64 characters", c->nc->kind, c->name);
        else if (strcmp(key, "imageVersion") == 0)
            version = text;
    }
    if (rc != NS_OK)
        return rc;
    const char *family = out->os == SIM_OS_WINDOWS2019 ? "windows2019"
                         : out->os == SIM_OS_WINDOWS2022 ? "windows2022"
                                                         : "linux";
    snprintf(out->image_id, sizeof(out->image_id), "sim-%s-%s", family, version);
    return NS_OK;
}

/* amiSelectorTerms: the first term names the image; an alias ("windows2022@latest") also names the OS family. */
static int sim_nc_ami_terms(const sim_nc_ctx *c, const ns_json *terms, sim_nc *out)
{
    const ns_host *h = c->s->host;
    if (!sim_is_type(c->s, terms, NS_JSON_ARRAY) || h->json_size(terms) == 0 ||
        !sim_is_type(c->s, h->json_at(terms, 0), NS_JSON_OBJECT))
        return SIM_NC_FAIL(c, "%s %s: spec.amiSelectorTerms must be a non-empty array of objects", c->nc->kind,
                           c->name);
    const ns_json *term = h->json_at(terms, 0);
    const char *alias = NULL, *id = NULL, *name = NULL;
    int rc;
    if ((rc = sim_nc_string(c, term, "spec.amiSelectorTerms[0].", "alias", &alias)) != NS_OK ||
        (rc = sim_nc_string(c, term, "spec.amiSelectorTerms[0].", "id", &id)) != NS_OK ||
        (rc = sim_nc_string(c, term, "spec.amiSelectorTerms[0].", "name", &name)) != NS_OK)
        return rc;
    const char *image = alias ? alias : id ? id : name ? name : "tags";
    if (!sim_copy_str(out->image_id, sizeof(out->image_id), image))
        return SIM_NC_FAIL(c, "%s %s: spec.amiSelectorTerms[0] names an image longer than %d characters",
                           c->nc->kind, c->name, NS_NAME_MAX - 1);
    if (alias) {
        char family[32];
        size_t len = strcspn(alias, "@");
        if (alias[len] != '@' || len >= sizeof(family))
            return SIM_NC_FAIL(c, "%s %s: spec.amiSelectorTerms[0].alias \"%s\" must be family@version",
                               c->nc->kind, c->name, alias);
        snprintf(family, sizeof(family), "%.*s", (int)len, alias);
        return sim_nc_image_family(c, "spec.amiSelectorTerms[0].alias", family, out);
    }
    return NS_OK;
}

/* blockDeviceMappings: the root volume (rootVolume: true, else the first mapping) sizes ephemeral storage. */
static int sim_nc_block_devices(const sim_nc_ctx *c, const ns_json *mappings, sim_nc *out)
{
    const ns_host *h = c->s->host;
    if (!sim_is_type(c->s, mappings, NS_JSON_ARRAY))
        return SIM_NC_FAIL(c, "%s %s: spec.blockDeviceMappings must be an array", c->nc->kind, c->name);
    const ns_json *root = NULL;
    for (size_t i = 0; i < h->json_size(mappings); i++) {
        const ns_json *m = h->json_at(mappings, i);
        if (!sim_is_type(c->s, m, NS_JSON_OBJECT))
            return SIM_NC_FAIL(c, "%s %s: spec.blockDeviceMappings[%zu] must be an object", c->nc->kind, c->name, i);
        if (!root && h->json_bool(h->json_get(m, "rootVolume")))
            root = m;
    }
    if (!root && h->json_size(mappings) > 0)
        root = h->json_at(mappings, 0);
    const ns_json *ebs = root ? h->json_get(root, "ebs") : NULL;
    const char *size = NULL;
    int rc = ebs ? sim_nc_string(c, ebs, "spec.blockDeviceMappings[].ebs.", "volumeSize", &size) : NS_OK;
    if (rc != NS_OK || !size)
        return rc;
    return sim_nc_ephemeral(c, "spec.blockDeviceMappings[].ebs.volumeSize", size, out);
}

static int sim_nc_parse_aws(const sim_nc_ctx *c, const ns_json *spec, bool has_kubelet, sim_nc *out)
{
    const ns_host *h = c->s->host;
    const char *family = NULL;
    out->aws_kind = true;
    snprintf(out->image_id, sizeof(out->image_id), "al2023@latest");
    if (!spec)
        return NS_OK;
    int rc = sim_nc_string(c, spec, "spec.", "amiFamily", &family);
    if (rc == NS_OK && family) {
        rc = sim_nc_image_family(c, "spec.amiFamily", family, out);
        char lower[32];
        size_t n = 0;
        for (; family[n] && n < sizeof(lower) - 1; n++)
            lower[n] = (char)tolower((unsigned char)family[n]);
        lower[n] = '\0';
        snprintf(out->image_id, sizeof(out->image_id), "%s@latest", lower);
    }
    const ns_json *terms = h->json_get(spec, "amiSelectorTerms");
    if (rc == NS_OK && terms)
        rc = sim_nc_ami_terms(c, terms, out);
    const ns_json *mappings = h->json_get(spec, "blockDeviceMappings");
    if (rc == NS_OK && mappings)
        rc = sim_nc_block_devices(c, mappings, out);
    /* Only EC2NodeClass v1 has spec.kubelet; earlier versions carried kubelet settings on the NodePool. */
    if (rc == NS_OK && has_kubelet)
        rc = sim_kubelet_parse(c->s, c->nc->kind, c->name, h->json_get(spec, "kubelet"), &out->kubelet);
    return rc;
}

int sim_nc_parse(sim_state *s, const ns_nodeclass *nodeclass_in, sim_nc *out)
{
    memset(out, 0, sizeof(*out));
    out->os = SIM_OS_LINUX;
    out->ephemeral_bytes = SIM_DEFAULT_EPHEMERAL_BYTES;
    for (size_t z = 0; z < s->n_zones; z++)
        out->zone_allowed[z] = true;
    snprintf(out->image_id, sizeof(out->image_id), "sim-linux-%s", SIM_DEFAULT_IMAGE_VERSION);
    if (!nodeclass_in)
        return NS_OK;

    ns_nodeclass nc;
    SIM_COPY_IN(nc, nodeclass_in);
    sim_nc_ctx c = {s, &nc, nc.name ? nc.name : "(unnamed)"};
    if (!nc.kind || !nc.api_version)
        return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "node class %s has no kind or apiVersion", c.name);
    if (nc.spec && s->host->json_type(nc.spec) != NS_JSON_OBJECT)
        return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "%s %s: spec must be an object", nc.kind, c.name);

    bool sim_kind = strcmp(nc.kind, SIM_KIND) == 0 && strcmp(nc.api_version, SIM_API_VERSION) == 0;
    bool ec2 = strcmp(nc.kind, "EC2NodeClass") == 0 && (strcmp(nc.api_version, "karpenter.k8s.aws/v1") == 0 ||
                                                        strcmp(nc.api_version, "karpenter.k8s.aws/v1beta1") == 0);
    bool aws_template = strcmp(nc.kind, "AWSNodeTemplate") == 0 &&
                    strcmp(nc.api_version, "karpenter.k8s.aws/v1alpha1") == 0;
    if (sim_kind)
        return nc.spec ? sim_nc_parse_sim(&c, nc.spec, out) : NS_OK;
    if (ec2 || aws_template)
        return sim_nc_parse_aws(&c, nc.spec, ec2 && strcmp(nc.api_version, "karpenter.k8s.aws/v1") == 0, out);
    return SIM_FAIL(s, NS_ERR_INVALID_CONFIG, "node class %s: kind %s (apiVersion %s) is not supported by provider "
                    "sim; use SimNodeClass (nodesmith.io/v1), EC2NodeClass (karpenter.k8s.aws/v1 or v1beta1) or "
                    "AWSNodeTemplate (karpenter.k8s.aws/v1alpha1)", c.name, nc.kind, nc.api_version);
}

int sim_validate_nodeclass(void *state, const ns_nodeclass *nodeclass)
{
    sim_state *s = state;
    if (!nodeclass)
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "validate_nodeclass: node class is NULL");
    int rc = sim_fault_enter(s, "validate_nodeclass");
    if (rc != NS_OK)
        return rc;
    sim_nc nc;
    return sim_nc_parse(s, nodeclass, &nc);
}

int sim_check_drift(void *state, const ns_instance *instance_in, const ns_nodeclass *nodeclass, bool *drifted,
                    char *reason, size_t reason_len)
{
    sim_state *s = state;
    if (!instance_in || !drifted || (!reason && reason_len > 0))
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "check_drift: instance, drifted or reason is NULL");
    *drifted = false;
    if (reason_len > 0)
        reason[0] = '\0';
    int rc = sim_fault_enter(s, "check_drift");
    if (rc != NS_OK)
        return rc;
    ns_instance inst;
    SIM_COPY_IN(inst, instance_in);
    sim_nc nc;
    if ((rc = sim_nc_parse(s, nodeclass, &nc)) != NS_OK)
        return rc;

    int z = sim_zone_index(s, inst.zone);
    const char *why = NULL;
    if (strcmp(inst.image_id, nc.image_id) != 0)
        why = nc.aws_kind ? "AMIDrift" : "ImageDrift";
    else if (z < 0 || !nc.zone_allowed[z])
        why = "ZoneDrift";
    if (!why)
        return NS_OK;
    if (!reason || !sim_copy_str(reason, reason_len, why))
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "check_drift: instance %s drifted (%s) but the reason buffer "
                        "holds %zu bytes", inst.provider_id, why, reason_len);
    *drifted = true;
    sim_log(s, NS_LOG_INFO, "instance drifted", "provider-id", inst.provider_id, "reason", why, "image",
            inst.image_id, "expected-image", nc.image_id, NULL);
    return NS_OK;
}
