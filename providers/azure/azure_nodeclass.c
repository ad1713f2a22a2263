/* AKSNodeClass parsing and validation (azure_nodeclass.h). */
#include "azure_nodeclass.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GROUP "karpenter.azure.com"

typedef struct reader {
    const ns_host *h;
    ns_host_ctx *ctx;
    const char *name;
    const char *version;
    char *why; /* the refusal's words, kept for nodeclass_status's ValidationSucceeded condition */
    size_t why_len;
} reader;

NS_PRINTF(4, 5) static int bad(reader *r, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, r->why_len, fmt, ap);
    va_end(ap);
    return r->h->error(r->ctx, NS_ERR_INVALID_CONFIG, file, line, "%s", r->why);
}

#define BAD(r, ...) bad((r), __FILE__, __LINE__, __VA_ARGS__)

static const char *const V1BETA1_FIELDS[] = {"vnetSubnetID", "osDiskSizeGB", "imageFamily", "fipsMode", "tags",
                                             "kubelet", "maxPods", "security", "localDNS", "imageID", "userData",
                                             NULL};
static const char *const V1ALPHA2_FIELDS[] = {"vnetSubnetID", "osDiskSizeGB", "imageID", "imageFamily",
                                              "imageVersion", "tags", "kubelet", "maxPods", "userData", NULL};
static const char *const KUBELET_FIELDS[] = {"cpuManagerPolicy", "cpuCFSQuota", "cpuCFSQuotaPeriod",
                                             "imageGCHighThresholdPercent", "imageGCLowThresholdPercent",
                                             "topologyManagerPolicy", "allowedUnsafeSysctls", "containerLogMaxSize",
                                             "containerLogMaxFiles", "podPidsLimit", "failSwapOn", NULL};
static const char *const FAMILIES[] = {"Ubuntu", "Ubuntu2204", "Ubuntu2404", "AzureLinux", "Windows2019",
                                       "Windows2022", NULL};

static bool in(const char *const *list, const char *v)
{
    for (size_t i = 0; v && list[i]; i++)
        if (strcmp(list[i], v) == 0)
            return true;
    return false;
}

static int check_fields(reader *r, const ns_json *obj, const char *const *allowed, const char *where)
{
    for (size_t i = 0; i < r->h->json_size(obj); i++) {
        const char *key = r->h->json_key(r->h->json_at(obj, i));
        if (!in(allowed, key))
            return BAD(r, "AKSNodeClass %s: %s.%s is not a field of %s AKSNodeClass", r->name, where, key, r->version);
    }
    return NS_OK;
}

/* A string field: absent is fine (*out untouched); anything but a string that fits is an error. */
static int get_string(reader *r, const ns_json *obj, const char *key, const char *where, char *out, size_t len)
{
    const ns_json *v = r->h->json_get(obj, key);
    if (!v)
        return NS_OK;
    const char *s = r->h->json_string(v);
    if (!s)
        return BAD(r, "AKSNodeClass %s: %s.%s must be a string", r->name, where, key);
    if (strlen(s) >= len)
        return BAD(r, "AKSNodeClass %s: %s.%s is longer than %zu characters", r->name, where, key, len - 1);
    snprintf(out, len, "%s", s);
    return NS_OK;
}

/* An integer field within [lo, hi]; absent leaves *out. */
static int get_int(reader *r, const ns_json *obj, const char *key, const char *where, int64_t lo, int64_t hi,
                   int64_t *out)
{
    const ns_json *v = r->h->json_get(obj, key);
    if (!v)
        return NS_OK;
    double d = r->h->json_number(v);
    if (r->h->json_type(v) != NS_JSON_NUMBER || d != floor(d))
        return BAD(r, "AKSNodeClass %s: %s.%s must be an integer", r->name, where, key);
    if (d < (double)lo || d > (double)hi)
        return BAD(r, "AKSNodeClass %s: %s.%s must be from %lld to %lld, not %.0f", r->name, where, key,
                   (long long)lo, (long long)hi, d);
    *out = (int64_t)d;
    return NS_OK;
}

static int get_bool(reader *r, const ns_json *obj, const char *key, const char *where, int *out)
{
    const ns_json *v = r->h->json_get(obj, key);
    if (!v)
        return NS_OK;
    if (r->h->json_type(v) != NS_JSON_BOOL)
        return BAD(r, "AKSNodeClass %s: %s.%s must be true or false", r->name, where, key);
    *out = r->h->json_bool(v) ? 1 : 0;
    return NS_OK;
}

static bool segment_is(const char *p, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(p, word, n) == 0;
}

bool az_subnet_id_valid(const char *id)
{
    /* /subscriptions/S/resourceGroups/G/providers/Microsoft.Network/virtualNetworks/V/subnets/N */
    static const char *const FIXED[] = {"subscriptions", NULL, "resourceGroups", NULL, "providers",
                                        "Microsoft.Network", "virtualNetworks", NULL, "subnets", NULL};
    const char *p = id;
    for (size_t i = 0; i < 10; i++) {
        if (*p != '/')
            return false;
        const char *start = ++p;
        while (*p && *p != '/')
            p++;
        size_t n = (size_t)(p - start);
        if (n == 0 || (FIXED[i] && !segment_is(start, n, FIXED[i])))
            return false;
    }
    return *p == '\0';
}

static bool image_id_valid(const char *id)
{
    return strncasecmp(id, "/subscriptions/", 15) == 0 || strncasecmp(id, "/CommunityGalleries/", 20) == 0 ||
           strncasecmp(id, "/SharedGalleries/", 17) == 0;
}

static bool duration_valid(const char *s)
{
    /* Go durations as the kubelet takes them: one or more <number><unit>, units ns us ms s m h. */
    if (!*s)
        return false;
    while (*s) {
        if (!isdigit((unsigned char)*s))
            return false;
        while (isdigit((unsigned char)*s) || *s == '.')
            s++;
        if (strncmp(s, "ms", 2) == 0 || strncmp(s, "us", 2) == 0 || strncmp(s, "ns", 2) == 0)
            s += 2;
        else if (*s == 's' || *s == 'm' || *s == 'h')
            s++;
        else
            return false;
    }
    return true;
}

static int read_kubelet(reader *r, const ns_json *k, az_kubelet *out)
{
    const ns_host *h = r->h;
    const char *w = "spec.kubelet";
    int64_t v;
    int rc;
    if ((rc = check_fields(r, k, KUBELET_FIELDS, w)) < 0 ||
        (rc = get_string(r, k, "cpuManagerPolicy", w, out->cpu_manager_policy, sizeof(out->cpu_manager_policy))) < 0 ||
        (rc = get_bool(r, k, "cpuCFSQuota", w, &out->cpu_cfs_quota)) < 0 ||
        (rc = get_string(r, k, "cpuCFSQuotaPeriod", w, out->cpu_cfs_quota_period,
                         sizeof(out->cpu_cfs_quota_period))) < 0 ||
        (rc = get_string(r, k, "topologyManagerPolicy", w, out->topology_manager_policy,
                         sizeof(out->topology_manager_policy))) < 0 ||
        (rc = get_string(r, k, "containerLogMaxSize", w, out->container_log_max_size,
                         sizeof(out->container_log_max_size))) < 0 ||
        (rc = get_bool(r, k, "failSwapOn", w, &out->fail_swap_on)) < 0)
        return rc;
    if (out->cpu_manager_policy[0] && strcmp(out->cpu_manager_policy, "none") != 0 &&
        strcmp(out->cpu_manager_policy, "static") != 0)
        return BAD(r, "AKSNodeClass %s: %s.cpuManagerPolicy must be none or static, not %s", r->name, w,
                   out->cpu_manager_policy);
    static const char *const TOPO[] = {"none", "best-effort", "restricted", "single-numa-node", NULL};
    if (out->topology_manager_policy[0] && !in(TOPO, out->topology_manager_policy))
        return BAD(r, "AKSNodeClass %s: %s.topologyManagerPolicy must be none, best-effort, restricted or "
                   "single-numa-node, not %s", r->name, w, out->topology_manager_policy);
    if (out->cpu_cfs_quota_period[0] && !duration_valid(out->cpu_cfs_quota_period))
        return BAD(r, "AKSNodeClass %s: %s.cpuCFSQuotaPeriod must be a duration such as 100ms, not %s", r->name, w,
                   out->cpu_cfs_quota_period);
    if (out->container_log_max_size[0]) {
        char *end;
        double size = strtod(out->container_log_max_size, &end);
        static const char *const UNITS[] = {"Ki", "Mi", "Gi", "K", "M", "G", "", NULL};
        if (size <= 0 || !in(UNITS, end))
            return BAD(r, "AKSNodeClass %s: %s.containerLogMaxSize must be a size such as 50Mi, not %s", r->name, w,
                       out->container_log_max_size);
    }
    if ((rc = get_int(r, k, "imageGCHighThresholdPercent", w, 0, 100, &v)) < 0)
        return rc;
    out->image_gc_high = h->json_get(k, "imageGCHighThresholdPercent") ? (int)v : -1;
    if ((rc = get_int(r, k, "imageGCLowThresholdPercent", w, 0, 100, &v)) < 0)
        return rc;
    out->image_gc_low = h->json_get(k, "imageGCLowThresholdPercent") ? (int)v : -1;
    if (out->image_gc_high >= 0 && out->image_gc_low >= 0 && out->image_gc_low >= out->image_gc_high)
        return BAD(r, "AKSNodeClass %s: %s.imageGCLowThresholdPercent (%d) must be below "
                   "imageGCHighThresholdPercent (%d)", r->name, w, out->image_gc_low, out->image_gc_high);
    if ((rc = get_int(r, k, "containerLogMaxFiles", w, 2, 1000, &v)) < 0)
        return rc;
    out->container_log_max_files = h->json_get(k, "containerLogMaxFiles") ? (int)v : -1;
    if ((rc = get_int(r, k, "podPidsLimit", w, -1, INT64_C(4194304), &v)) < 0)
        return rc;
    out->pod_pids_limit = h->json_get(k, "podPidsLimit") ? v : -1;
    const ns_json *sysctls = h->json_get(k, "allowedUnsafeSysctls");
    if (sysctls && h->json_type(sysctls) != NS_JSON_ARRAY)
        return BAD(r, "AKSNodeClass %s: %s.allowedUnsafeSysctls must be a list of strings", r->name, w);
    for (size_t i = 0; sysctls && i < h->json_size(sysctls); i++) {
        const char *s = h->json_string(h->json_at(sysctls, i));
        if (!s || !*s || strlen(s) >= sizeof(out->allowed_unsafe_sysctls[0]) || strpbrk(s, " ,\"'"))
            return BAD(r, "AKSNodeClass %s: %s.allowedUnsafeSysctls[%zu] must be a sysctl name or pattern", r->name,
                       w, i);
        if (out->n_sysctls == AZ_MAX_SYSCTLS)
            return BAD(r, "AKSNodeClass %s: %s.allowedUnsafeSysctls has more than %d entries", r->name, w,
                       AZ_MAX_SYSCTLS);
        snprintf(out->allowed_unsafe_sysctls[out->n_sysctls++], sizeof(out->allowed_unsafe_sysctls[0]), "%s", s);
    }
    return NS_OK;
}

static int read_tags(reader *r, const ns_json *tags, az_nodeclass *out)
{
    const ns_host *h = r->h;
    if (h->json_type(tags) != NS_JSON_OBJECT)
        return BAD(r, "AKSNodeClass %s: spec.tags must be a map of strings", r->name);
    for (size_t i = 0; i < h->json_size(tags); i++) {
        const ns_json *m = h->json_at(tags, i);
        const char *k = h->json_key(m), *v = h->json_string(m);
        if (!v)
            return BAD(r, "AKSNodeClass %s: spec.tags.%s must be a string", r->name, k);
        if (!*k || strlen(k) > 256 || strpbrk(k, "<>%&\\?/"))
            return BAD(r, "AKSNodeClass %s: spec.tags key '%.80s' must be 1-256 characters without <>%%&\\?/ (Azure "
                       "tag names; Karpenter's keys are written with _ for /)", r->name, k);
        if (strlen(v) > 256)
            return BAD(r, "AKSNodeClass %s: spec.tags.%s is longer than 256 characters", r->name, k);
        if (strncasecmp(k, "karpenter.", 10) == 0 || strncasecmp(k, "compute.aks", 11) == 0)
            return BAD(r, "AKSNodeClass %s: spec.tags.%s is reserved for the provider's own tags", r->name, k);
        if (out->n_tags == AZ_MAX_TAGS - 8)
            return BAD(r, "AKSNodeClass %s: spec.tags has more than %d tags (Azure allows 50 per VM, and the provider "
                       "writes 8)", r->name, AZ_MAX_TAGS - 8);
        snprintf(out->tags[out->n_tags][0], 257, "%s", k);
        snprintf(out->tags[out->n_tags][1], 257, "%s", v);
        out->n_tags++;
    }
    return NS_OK;
}

static int read_security(reader *r, const ns_json *sec, az_nodeclass *out)
{
    static const char *const FIELDS[] = {"encryptionAtHost", "trustedLaunch", NULL};
    int v = 0, rc;
    if (r->h->json_type(sec) != NS_JSON_OBJECT)
        return BAD(r, "AKSNodeClass %s: spec.security must be an object", r->name);
    if ((rc = check_fields(r, sec, FIELDS, "spec.security")) < 0 ||
        (rc = get_bool(r, sec, "encryptionAtHost", "spec.security", &v)) < 0)
        return rc;
    out->encryption_at_host = v == 1;
    v = 0;
    if ((rc = get_bool(r, sec, "trustedLaunch", "spec.security", &v)) < 0)
        return rc;
    out->trusted_launch = v == 1;
    return NS_OK;
}

static int read_common(reader *r, const ns_json *spec, az_nodeclass *out)
{
    const ns_host *h = r->h;
    int64_t v;
    int rc;
    if ((rc = get_string(r, spec, "vnetSubnetID", "spec", out->subnet, sizeof(out->subnet))) < 0)
        return rc;
    if (!out->subnet[0])
        return BAD(r, "AKSNodeClass %s: spec.vnetSubnetID is not set and the provider has no default subnet (option "
                   "vnet_subnet_id)", r->name);
    if (!az_subnet_id_valid(out->subnet))
        return BAD(r, "AKSNodeClass %s: spec.vnetSubnetID '%.200s' is not a subnet ID (/subscriptions/SUB/"
                   "resourceGroups/RG/providers/Microsoft.Network/virtualNetworks/VNET/subnets/SUBNET)", r->name,
                   out->subnet);
    v = 128;
    if ((rc = get_int(r, spec, "osDiskSizeGB", "spec", 30, 2048, &v)) < 0)
        return rc;
    out->os_disk_gb = (int)v;
    snprintf(out->image_family, sizeof(out->image_family), "Ubuntu");
    if ((rc = get_string(r, spec, "imageFamily", "spec", out->image_family, sizeof(out->image_family))) < 0)
        return rc;
    if (!in(FAMILIES, out->image_family))
        return BAD(r, "AKSNodeClass %s: spec.imageFamily must be Ubuntu, Ubuntu2204, Ubuntu2404, AzureLinux, "
                   "Windows2019 or Windows2022, not %s", r->name, out->image_family);
    out->windows = strncmp(out->image_family, "Windows", 7) == 0;
    v = 0;
    if ((rc = get_int(r, spec, "maxPods", "spec", 10, 250, &v)) < 0)
        return rc;
    out->max_pods = (int)v;
    const ns_json *tags = h->json_get(spec, "tags");
    if (tags && (rc = read_tags(r, tags, out)) < 0)
        return rc;
    out->kubelet = (az_kubelet){.cpu_cfs_quota = -1, .image_gc_high = -1, .image_gc_low = -1,
                                .container_log_max_files = -1, .pod_pids_limit = -1, .fail_swap_on = -1};
    const ns_json *kubelet = h->json_get(spec, "kubelet");
    if (kubelet && h->json_type(kubelet) != NS_JSON_OBJECT)
        return BAD(r, "AKSNodeClass %s: spec.kubelet must be an object", r->name);
    if (kubelet && (rc = read_kubelet(r, kubelet, &out->kubelet)) < 0)
        return rc;
    if ((rc = get_string(r, spec, "imageID", "spec", out->image_id, sizeof(out->image_id))) < 0)
        return rc;
    if (out->image_id[0] && !image_id_valid(out->image_id))
        return BAD(r, "AKSNodeClass %s: spec.imageID '%.200s' must be an ARM image ID (/subscriptions/...), a "
                   "community gallery image (/CommunityGalleries/...) or a shared gallery image (/SharedGalleries/...)",
                   r->name, out->image_id);
    const ns_json *ud = h->json_get(spec, "userData");
    if (ud && (!(out->user_data = h->json_string(ud)) || strlen(out->user_data) > 60000))
        return BAD(r, "AKSNodeClass %s: spec.userData must be a string of at most 60000 bytes (customData holds "
                   "87380 base64 characters)", r->name);
    return NS_OK;
}

static int read_v1beta1(reader *r, const ns_json *spec, az_nodeclass *out)
{
    const ns_host *h = r->h;
    char fips[16] = "";
    int rc;
    if ((rc = check_fields(r, spec, V1BETA1_FIELDS, "spec")) < 0 || (rc = read_common(r, spec, out)) < 0 ||
        (rc = get_string(r, spec, "fipsMode", "spec", fips, sizeof(fips))) < 0)
        return rc;
    if (fips[0] && strcmp(fips, "FIPS") != 0 && strcmp(fips, "Disabled") != 0)
        return BAD(r, "AKSNodeClass %s: spec.fipsMode must be FIPS or Disabled, not %s", r->name, fips);
    out->fips = strcmp(fips, "FIPS") == 0;
    if (out->fips && (out->windows || strcmp(out->image_family, "Ubuntu2404") == 0))
        return BAD(r, "AKSNodeClass %s: spec.fipsMode FIPS is available for Ubuntu, Ubuntu2204 and AzureLinux only, "
                   "not %s", r->name, out->image_family);
    const ns_json *sec = h->json_get(spec, "security");
    if (sec && (rc = read_security(r, sec, out)) < 0)
        return rc;
    const ns_json *dns = h->json_get(spec, "localDNS");
    if (dns) {
        static const char *const MODES[] = {"Preferred", "Required", "Disabled", NULL};
        if (h->json_type(dns) != NS_JSON_OBJECT)
            return BAD(r, "AKSNodeClass %s: spec.localDNS must be an object", r->name);
        if ((rc = get_string(r, dns, "mode", "spec.localDNS", out->local_dns_mode,
                             sizeof(out->local_dns_mode))) < 0)
            return rc;
        if (!in(MODES, out->local_dns_mode))
            return BAD(r, "AKSNodeClass %s: spec.localDNS.mode must be Preferred, Required or Disabled", r->name);
    }
    return NS_OK;
}

static int read_v1alpha2(reader *r, const ns_json *spec, az_nodeclass *out)
{
    int rc;
    if ((rc = check_fields(r, spec, V1ALPHA2_FIELDS, "spec")) < 0 || (rc = read_common(r, spec, out)) < 0 ||
        (rc = get_string(r, spec, "imageVersion", "spec", out->image_version, sizeof(out->image_version))) < 0)
        return rc;
    for (const char *p = out->image_version; *p; p++)
        if (!isdigit((unsigned char)*p) && *p != '.')
            return BAD(r, "AKSNodeClass %s: spec.imageVersion must look like 202511.07.0, not %s", r->name,
                       out->image_version);
    return NS_OK;
}

int az_nodeclass_parse(const ns_host *h, ns_host_ctx *ctx, const ns_nodeclass *nc, const char *default_subnet,
                       az_nodeclass *out)
{
    memset(out, 0, sizeof(*out));
    reader r = {h, ctx, nc->name ? nc->name : "(unnamed)", nc->api_version ? nc->api_version : "", out->why,
                sizeof(out->why)};
    if (!nc->kind || strcmp(nc->kind, "AKSNodeClass") != 0)
        return NS_ERROR(h, ctx, NS_ERR_INVALID_ARGUMENT, "node class %s is a %s; the azure provider takes "
                        "AKSNodeClass (" GROUP "/v1beta1 or v1alpha2)", r.name, nc->kind ? nc->kind : "(no kind)");
    snprintf(out->name, sizeof(out->name), "%s", r.name);
    if (h->json_type(nc->spec) != NS_JSON_OBJECT)
        return BAD(&r, "AKSNodeClass %s: spec must be an object", r.name);
    snprintf(out->subnet, sizeof(out->subnet), "%s", default_subnet ? default_subnet : "");
    if (strcmp(r.version, GROUP "/v1beta1") == 0)
        return read_v1beta1(&r, nc->spec, out);
    if (strcmp(r.version, GROUP "/v1alpha2") == 0) {
        out->v1alpha2 = true;
        return read_v1alpha2(&r, nc->spec, out);
    }
    return BAD(&r, "AKSNodeClass %s: apiVersion %s is not served; use " GROUP "/v1beta1 or " GROUP "/v1alpha2", r.name,
               r.version[0] ? r.version : "(none)");
}
