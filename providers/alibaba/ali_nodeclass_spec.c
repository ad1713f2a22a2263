#include "ali_nodeclass_spec.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
    const ns_host *h;
    ns_host_ctx *ctx;
    const char *name;
    char *refusal; /* the spec's, sizeof(ali_nodeclass_spec.refusal) */
} reader;

NS_PRINTF(2, 3) static int bad(const reader *r, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(r->refusal, sizeof(((ali_nodeclass_spec *)0)->refusal), "ECSNodeClass %s: %s", r->name, msg);
    return r->h->error(r->ctx, NS_ERR_INVALID_CONFIG, __FILE__, __LINE__, "%s", r->refusal);
}

int64_t ali_quantity(const char *s, bool milli)
{
    static const struct {
        const char *suffix;
        double factor;
    } SUFFIXES[] = {{"Ki", 1024.0},        {"Mi", 1048576.0},      {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
                    {"m", 0.001},          {"k", 1e3},             {"M", 1e6},           {"G", 1e9},
                    {"T", 1e12},           {"", 1.0}};
    if (!s || !*s || *s == '-')
        return -1;
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || v < 0)
        return -1;
    for (size_t i = 0; i < sizeof(SUFFIXES) / sizeof(SUFFIXES[0]); i++)
        if (strcmp(end, SUFFIXES[i].suffix) == 0) {
            double x = v * SUFFIXES[i].factor * (milli ? 1000.0 : 1.0);
            return x > 9e18 ? -1 : (int64_t)ceil(x - 1e-9);
        }
    return -1;
}

static bool copy(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);
    if (n >= len)
        return false;
    memcpy(dst, src, n + 1);
    return true;
}

static bool matches_prefix_id(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(s, prefix, n) != 0 || !s[n])
        return false;
    for (s += n; *s; s++)
        if (!(isdigit((unsigned char)*s) || (*s >= 'a' && *s <= 'z')))
            return false;
    return true;
}

/* An object of string values into tags (max entries, empty keys refused). */
static int read_map(const reader *r, const ns_json *o, const char *path, ali_tag *out, size_t max, size_t *n)
{
    const ns_host *h = r->h;
    *n = 0;
    if (!o)
        return NS_OK;
    if (h->json_type(o) != NS_JSON_OBJECT)
        return bad(r, "%s must be a map of strings", path);
    if (h->json_size(o) > max)
        return bad(r, "%s has %zu entries; at most %zu are allowed", path, h->json_size(o), max);
    for (size_t i = 0; i < h->json_size(o); i++) {
        const ns_json *m = h->json_at(o, i);
        const char *k = h->json_key(m), *v = h->json_string(m);
        if (!k || !*k)
            return bad(r, "%s: empty keys aren't supported", path);
        if (!v)
            return bad(r, "%s.%s must be a string", path, k);
        if (!copy(out[*n].key, sizeof(out[*n].key), k) || !copy(out[*n].value, sizeof(out[*n].value), v))
            return bad(r, "%s.%s: key or value too long", path, k);
        (*n)++;
    }
    return NS_OK;
}

static const ns_json *array_of(const reader *r, const ns_json *spec, const char *field, size_t min, size_t max,
                               int *rc)
{
    const ns_json *a = r->h->json_get(spec, field);
    *rc = NS_OK;
    if (!a && min == 0)
        return NULL;
    if (!a || r->h->json_type(a) != NS_JSON_ARRAY)
        *rc = bad(r, "spec.%s is required and must be a list", field);
    else if (r->h->json_size(a) < min)
        *rc = bad(r, "spec.%s cannot be empty", field);
    else if (r->h->json_size(a) > max)
        *rc = bad(r, "spec.%s has %zu terms; at most %zu are allowed", field, r->h->json_size(a), max);
    return a;
}

/* vSwitch (prefix "vsw-", no name) or security group (prefix "sg-", name allowed) terms. */
static int read_terms(const reader *r, const ns_json *spec, const char *field, const char *prefix, bool named,
                      ali_term *out, size_t *n)
{
    const ns_host *h = r->h;
    int rc;
    const ns_json *a = array_of(r, spec, field, 1, ALI_MAX_TERMS, &rc);
    if (rc < 0)
        return rc;
    *n = h->json_size(a);
    for (size_t i = 0; i < *n; i++) {
        const ns_json *t = h->json_at(a, i);
        ali_term *term = &out[i];
        char path[96];
        snprintf(path, sizeof(path), "spec.%s[%zu]", field, i);
        const ns_json *id = h->json_get(t, "id"), *name = h->json_get(t, "name"), *tags = h->json_get(t, "tags");
        if (h->json_type(t) != NS_JSON_OBJECT)
            return bad(r, "%s must be an object", path);
        if (name && !named)
            return bad(r, "%s.name: unknown field (vSwitch terms take tags or id)", path);
        if (!id && !name && !tags)
            return bad(r, "%s: expected at least one of %s", path, named ? "'tags', 'id', 'name'" : "'tags', 'id'");
        if ((id && (name || tags)) || (name && tags))
            return bad(r, "%s: '%s' is mutually exclusive, cannot be set with a combination of other fields", path,
                       id ? "id" : "name");
        if (id && (!h->json_string(id) || !matches_prefix_id(h->json_string(id), prefix) ||
                   !copy(term->id, sizeof(term->id), h->json_string(id))))
            return bad(r, "%s.id must match %s[0-9a-z]+", path, prefix);
        if (name && (!h->json_string(name) || !*h->json_string(name) ||
                     !copy(term->name, sizeof(term->name), h->json_string(name))))
            return bad(r, "%s.name must be a non-empty string of at most 127 bytes", path);
        char tpath[112];
        snprintf(tpath, sizeof(tpath), "%s.tags", path);
        if ((rc = read_map(r, tags, tpath, term->tags, ALI_MAX_TERM_TAGS, &term->n_tags)) < 0)
            return rc;
        if (tags && term->n_tags == 0)
            return bad(r, "%s.tags cannot be empty", path);
    }
    return NS_OK;
}

static int read_images(const reader *r, const ns_json *spec, ali_nodeclass_spec *out)
{
    const ns_host *h = r->h;
    int rc;
    const ns_json *a = array_of(r, spec, "imageSelectorTerms", 1, ALI_MAX_TERMS, &rc);
    if (rc < 0)
        return rc;
    out->n_image_terms = h->json_size(a);
    for (size_t i = 0; i < out->n_image_terms; i++) {
        const ns_json *t = h->json_at(a, i);
        ali_image_term *it = &out->image_terms[i];
        const char *id = h->json_string(h->json_get(t, "id")), *alias = h->json_string(h->json_get(t, "alias"));
        if (!id && !alias)
            return bad(r, "spec.imageSelectorTerms[%zu]: expected at least one of 'id', 'alias'", i);
        if (id && alias)
            return bad(r, "spec.imageSelectorTerms[%zu]: 'id' is mutually exclusive with 'alias'", i);
        if (alias && out->n_image_terms != 1)
            return bad(r, "spec.imageSelectorTerms[%zu]: 'alias' is mutually exclusive, cannot be set with other "
                       "imageSelectorTerms", i);
        if (id && (!*id || !copy(it->id, sizeof(it->id), id)))
            return bad(r, "spec.imageSelectorTerms[%zu].id must be a non-empty image ID", i);
        if (alias) {
            const char *at = strchr(alias, '@');
            if (!at || at == alias || !at[1] || strlen(alias) > 30)
                return bad(r, "spec.imageSelectorTerms[%zu].alias '%s' is improperly formatted, must match the "
                           "format 'family@version'", i, alias);
            snprintf(it->family, sizeof(it->family), "%.*s", (int)(at - alias), alias);
            snprintf(it->version, sizeof(it->version), "%s", at + 1);
            if (strcmp(it->family, "AlibabaCloudLinux3") != 0 && strcmp(it->family, "ContainerOS") != 0)
                return bad(r, "spec.imageSelectorTerms[%zu].alias: family '%s' is not supported, must be one of "
                           "'AlibabaCloudLinux3,ContainerOS'", i, it->family);
            if (strcmp(it->family, "ContainerOS") == 0 && strcmp(it->version, "latest") != 0)
                return bad(r, "spec.imageSelectorTerms[%zu].alias: ContainerOS supports only @latest", i);
        }
    }
    return NS_OK;
}

static int64_t int_field(const reader *r, const ns_json *o, const char *key, const char *path, int64_t min,
                         int64_t max, int *rc)
{
    const ns_json *v = r->h->json_get(o, key);
    *rc = NS_OK;
    if (!v)
        return -1;
    double d = r->h->json_number(v);
    if (r->h->json_type(v) != NS_JSON_NUMBER || d != floor(d) || d < (double)min || d > (double)max) {
        *rc = bad(r, "%s.%s must be an integer from %lld to %lld", path, key, (long long)min, (long long)max);
        return -1;
    }
    return (int64_t)d;
}

static int read_reserved(const reader *r, const ns_json *o, const char *field, ali_reserved *out)
{
    ali_tag m[8];
    size_t n;
    char path[64];
    snprintf(path, sizeof(path), "spec.kubeletConfiguration.%s", field);
    *out = (ali_reserved){-1, -1, -1, -1};
    int rc = read_map(r, r->h->json_get(o, field), path, m, 8, &n);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        bool cpu = strcmp(m[i].key, "cpu") == 0;
        int64_t v = ali_quantity(m[i].value, cpu);
        if (v < 0)
            return bad(r, "%s.%s: '%s' is not a non-negative quantity", path, m[i].key, m[i].value);
        if (cpu)
            out->cpu_milli = v;
        else if (strcmp(m[i].key, "memory") == 0)
            out->memory_bytes = v;
        else if (strcmp(m[i].key, "ephemeral-storage") == 0)
            out->ephemeral_bytes = v;
        else if (strcmp(m[i].key, "pid") == 0)
            out->pid = v;
        else
            return bad(r, "%s: valid keys are ['cpu','memory','ephemeral-storage','pid'], not '%s'", path, m[i].key);
    }
    return NS_OK;
}

static bool eviction_signal(const char *k)
{
    static const char *const S[] = {"memory.available",  "nodefs.available",   "nodefs.inodesFree",
                                    "imagefs.available", "imagefs.inodesFree", "pid.available"};
    for (size_t i = 0; i < 6; i++)
        if (strcmp(k, S[i]) == 0)
            return true;
    return false;
}

static bool has_key(const ali_tag *m, size_t n, const char *k)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(m[i].key, k) == 0)
            return true;
    return false;
}

static int read_eviction(const reader *r, const ns_json *o, const char *field, ali_tag *m, size_t *n, bool duration)
{
    char path[80];
    snprintf(path, sizeof(path), "spec.kubeletConfiguration.%s", field);
    int rc = read_map(r, r->h->json_get(o, field), path, m, ALI_MAX_KUBELET_MAP, n);
    for (size_t i = 0; rc == NS_OK && i < *n; i++) {
        size_t len = strlen(m[i].value);
        if (!eviction_signal(m[i].key))
            return bad(r, "%s: valid keys are ['memory.available','nodefs.available','nodefs.inodesFree',"
                       "'imagefs.available','imagefs.inodesFree','pid.available'], not '%s'", path, m[i].key);
        bool ok = duration ? len > 1 && strchr("smh", m[i].value[len - 1]) && isdigit((unsigned char)m[i].value[0])
                           : (len > 1 && m[i].value[len - 1] == '%' && atof(m[i].value) >= 0 &&
                              atof(m[i].value) <= 100) || ali_quantity(m[i].value, false) >= 0;
        if (!ok)
            return bad(r, "%s.%s: '%s' is not a %s", path, m[i].key, m[i].value,
                       duration ? "duration (like 1m30s)" : "percentage or quantity");
    }
    return rc;
}

static int read_kubelet(const reader *r, const ns_json *o, ali_kubelet *k)
{
    const ns_host *h = r->h;
    const char *path = "spec.kubeletConfiguration";
    int rc = NS_OK;
    k->cpu_cfs_quota = -1;
    k->max_pods = k->pods_per_core = k->eviction_max_pod_grace = k->gc_high = k->gc_low = -1;
    k->system_reserved = k->kube_reserved = (ali_reserved){-1, -1, -1, -1};
    if (!o)
        return NS_OK;
    if (h->json_type(o) != NS_JSON_OBJECT)
        return bad(r, "%s must be an object", path);
    static const char *const KNOWN[] = {"clusterDNS",   "maxPods",      "podsPerCore",           "systemReserved",
                                        "kubeReserved", "evictionHard", "evictionSoft",          "evictionSoftGracePeriod",
                                        "evictionMaxPodGracePeriod",    "imageGCHighThresholdPercent",
                                        "imageGCLowThresholdPercent",   "cpuCFSQuota"};
    for (size_t i = 0; i < h->json_size(o); i++) {
        const char *key = h->json_key(h->json_at(o, i));
        bool known = false;
        for (size_t j = 0; j < sizeof(KNOWN) / sizeof(KNOWN[0]); j++)
            known |= strcmp(KNOWN[j], key) == 0;
        if (!known)
            return bad(r, "%s.%s: unknown field", path, key);
    }
    const ns_json *dns = h->json_get(o, "clusterDNS");
    if (dns && (h->json_type(dns) != NS_JSON_ARRAY || h->json_size(dns) > 4))
        return bad(r, "%s.clusterDNS must be a list of at most 4 addresses", path);
    for (size_t i = 0; dns && i < h->json_size(dns); i++) {
        const char *s = h->json_string(h->json_at(dns, i));
        if (!s || !*s || strspn(s, "0123456789abcdefABCDEF.:") != strlen(s) ||
            !copy(k->cluster_dns[i], sizeof(k->cluster_dns[i]), s))
            return bad(r, "%s.clusterDNS[%zu] must be an IP address", path, i);
        k->n_cluster_dns++;
    }
    k->max_pods = int_field(r, o, "maxPods", path, 0, 2147483647, &rc);
    if (rc == NS_OK)
        k->pods_per_core = int_field(r, o, "podsPerCore", path, 0, 2147483647, &rc);
    if (rc == NS_OK)
        k->eviction_max_pod_grace = int_field(r, o, "evictionMaxPodGracePeriod", path, 0, 2147483647, &rc);
    if (rc == NS_OK)
        k->gc_high = int_field(r, o, "imageGCHighThresholdPercent", path, 0, 100, &rc);
    if (rc == NS_OK)
        k->gc_low = int_field(r, o, "imageGCLowThresholdPercent", path, 0, 100, &rc);
    if (rc < 0)
        return rc;
    if (k->gc_high >= 0 && k->gc_low >= 0 && k->gc_high <= k->gc_low)
        return bad(r, "%s: imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent", path);
    const ns_json *cfs = h->json_get(o, "cpuCFSQuota");
    if (cfs && h->json_type(cfs) != NS_JSON_BOOL)
        return bad(r, "%s.cpuCFSQuota must be true or false", path);
    if (cfs)
        k->cpu_cfs_quota = h->json_bool(cfs);
    if ((rc = read_reserved(r, o, "systemReserved", &k->system_reserved)) < 0 ||
        (rc = read_reserved(r, o, "kubeReserved", &k->kube_reserved)) < 0 ||
        (rc = read_eviction(r, o, "evictionHard", k->eviction_hard, &k->n_eviction_hard, false)) < 0 ||
        (rc = read_eviction(r, o, "evictionSoft", k->eviction_soft, &k->n_eviction_soft, false)) < 0 ||
        (rc = read_eviction(r, o, "evictionSoftGracePeriod", k->eviction_soft_grace, &k->n_eviction_soft_grace,
                            true)) < 0)
        return rc;
    for (size_t i = 0; i < k->n_eviction_soft; i++)
        if (!has_key(k->eviction_soft_grace, k->n_eviction_soft_grace, k->eviction_soft[i].key))
            return bad(r, "%s.evictionSoft.%s does not have a matching evictionSoftGracePeriod", path,
                       k->eviction_soft[i].key);
    for (size_t i = 0; i < k->n_eviction_soft_grace; i++)
        if (!has_key(k->eviction_soft, k->n_eviction_soft, k->eviction_soft_grace[i].key))
            return bad(r, "%s.evictionSoftGracePeriod.%s does not have a matching evictionSoft", path,
                       k->eviction_soft_grace[i].key);
    return NS_OK;
}

static bool disk_category(const char *c)
{
    static const char *const C[] = {"cloud", "cloud_efficiency", "cloud_ssd", "cloud_essd", "cloud_auto",
                                    "cloud_essd_entry"};
    for (size_t i = 0; i < 6; i++)
        if (strcmp(c, C[i]) == 0)
            return true;
    return false;
}

static int read_categories(const reader *r, const ns_json *a, const char *path, char out[6][24], size_t *n)
{
    const ns_host *h = r->h;
    *n = 0;
    if (!a) {
        static const char *const ALL[] = {"cloud", "cloud_efficiency", "cloud_ssd", "cloud_essd", "cloud_auto",
                                          "cloud_essd_entry"};
        for (size_t i = 0; i < 6; i++)
            copy(out[(*n)++], 24, ALL[i]);
        return NS_OK;
    }
    if (h->json_type(a) != NS_JSON_ARRAY || h->json_size(a) == 0 || h->json_size(a) > 6)
        return bad(r, "%s must be a list of one to six disk categories", path);
    for (size_t i = 0; i < h->json_size(a); i++) {
        const char *c = h->json_string(h->json_at(a, i));
        if (!c || !disk_category(c))
            return bad(r, "%s[%zu] must be one of cloud, cloud_efficiency, cloud_ssd, cloud_essd, cloud_auto, "
                       "cloud_essd_entry", path, i);
        copy(out[(*n)++], 24, c);
    }
    return NS_OK;
}

/* A disk size quantity (Gi/G/Ti/T) in GiB, rounded up. */
static int64_t disk_gib(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n < 2 || !isdigit((unsigned char)s[0]) || !(strcmp(s + n - 2, "Gi") == 0 || strcmp(s + n - 2, "Ti") == 0 ||
                                                   s[n - 1] == 'G' || s[n - 1] == 'T'))
        return -1;
    int64_t bytes = ali_quantity(s, false);
    return bytes < 0 ? -1 : (bytes + (1LL << 30) - 1) >> 30;
}

static int read_disks(const reader *r, const ns_json *spec, ali_nodeclass_spec *out)
{
    const ns_host *h = r->h;
    const ns_json *sd = h->json_get(spec, "systemDisk");
    out->system_disk_gib = 40;
    copy(out->performance_level, sizeof(out->performance_level), "PL0");
    int rc = read_categories(r, h->json_get(sd, "categories"), "spec.systemDisk.categories", out->disk_categories,
                             &out->n_disk_categories);
    if (rc < 0)
        return rc;
    if (sd && h->json_type(sd) != NS_JSON_OBJECT)
        return bad(r, "spec.systemDisk must be an object");
    const ns_json *vs = h->json_get(sd, "volumeSize");
    if (vs) {
        int64_t g = disk_gib(h->json_string(vs));
        if (g < 20 || g > 65536)
            return bad(r, "spec.systemDisk.volumeSize '%s' must be a size in Gi, G, Ti or T of at least 20Gi",
                       h->json_string(vs) ? h->json_string(vs) : "(not a string)");
        out->system_disk_gib = g;
    }
    int64_t size = int_field(r, sd, "size", "spec.systemDisk", 20, 2048, &rc);
    if (rc < 0)
        return rc;
    if (size > 0)
        out->system_disk_gib = size;
    const ns_json *pl = h->json_get(sd, "performanceLevel");
    if (pl) {
        const char *p = h->json_string(pl);
        if (!p || strlen(p) != 3 || strncmp(p, "PL", 2) != 0 || p[2] < '0' || p[2] > '3')
            return bad(r, "spec.systemDisk.performanceLevel must be one of PL0, PL1, PL2, PL3");
        copy(out->performance_level, sizeof(out->performance_level), p);
    }
    const ns_json *dd = h->json_get(spec, "dataDisks");
    if (dd && (h->json_type(dd) != NS_JSON_ARRAY || h->json_size(dd) > ALI_MAX_DATA_DISKS))
        return bad(r, "spec.dataDisks must be a list of at most %d disks", ALI_MAX_DATA_DISKS);
    for (size_t i = 0; dd && i < h->json_size(dd); i++) {
        const ns_json *d = h->json_at(dd, i);
        const char *v = h->json_string(h->json_get(d, "volumeSize")), *dev = h->json_string(h->json_get(d, "device"));
        int64_t g = v ? disk_gib(v) : 20;
        if (g < 20 || g > 65536)
            return bad(r, "spec.dataDisks[%zu].volumeSize '%s' must be a size in Gi, G, Ti or T of at least 20Gi", i,
                       v ? v : "");
        if (h->json_get(d, "device") && (!dev || strncmp(dev, "/dev/", 5) != 0 ||
                                          !copy(out->data_disk_device[i], sizeof(out->data_disk_device[i]), dev)))
            return bad(r, "spec.dataDisks[%zu].device must be a device path such as /dev/xvdb", i);
        out->data_disk_gib[i] = g;
        out->n_data_disks++;
    }
    rc = read_categories(r, h->json_get(spec, "dataDiskCategories"), "spec.dataDiskCategories",
                         out->data_disk_categories, &out->n_data_disk_categories);
    const ns_json *fmt = h->json_get(spec, "formatDataDisk");
    if (rc == NS_OK && fmt && h->json_type(fmt) != NS_JSON_BOOL)
        return bad(r, "spec.formatDataDisk must be true or false");
    out->format_data_disk = fmt && h->json_bool(fmt);
    return rc;
}

static int read_tags(const reader *r, const ns_json *spec, ali_nodeclass_spec *out)
{
    static const char *const RESTRICTED[] = {"ecs:ecs-cluster-name", "karpenter.sh/nodepool", "karpenter.sh/nodeclaim",
                                             "karpenter.k8s.alibabacloud/ecsnodeclass"};
    int rc = read_map(r, r->h->json_get(spec, "tags"), "spec.tags", out->tags, ALI_MAX_TAGS, &out->n_tags);
    for (size_t i = 0; rc == NS_OK && i < out->n_tags; i++) {
        if (strncmp(out->tags[i].key, "kubernetes.io/cluster", 21) == 0)
            return bad(r, "spec.tags: tag contains a restricted tag matching kubernetes.io/cluster/ (%s)",
                       out->tags[i].key);
        for (size_t j = 0; j < sizeof(RESTRICTED) / sizeof(RESTRICTED[0]); j++)
            if (strcmp(out->tags[i].key, RESTRICTED[j]) == 0)
                return bad(r, "spec.tags: tag contains a restricted tag matching %s", RESTRICTED[j]);
    }
    return rc;
}

static bool valid_password(const char *p)
{
    static const char SPECIAL[] = "~!@#$%^&*()_+-=[]{}|\\:;\"'<>,.?/";
    size_t n = strlen(p);
    if (n < 8 || n > 30)
        return false;
    for (; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr(SPECIAL, *p))
            return false;
    return true;
}

static bool valid_key_pair(const char *k)
{
    size_t n = strlen(k);
    if (n < 2 || n > 128 || !isalpha((unsigned char)k[0]))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!isalnum((unsigned char)k[i]) && !strchr("._:-", k[i]))
            return false;
    return true;
}

static int read_access(const reader *r, const ns_json *spec, ali_nodeclass_spec *out)
{
    const ns_host *h = r->h;
    const ns_json *rg = h->json_get(spec, "resourceGroupId"), *ud = h->json_get(spec, "userData"),
                  *pw = h->json_get(spec, "password"), *kp = h->json_get(spec, "keyPairName"),
                  *pi = h->json_get(spec, "passwordInherit");
    if (rg && (!h->json_string(rg) || !matches_prefix_id(h->json_string(rg), "rg-") ||
               !copy(out->resource_group_id, sizeof(out->resource_group_id), h->json_string(rg))))
        return bad(r, "spec.resourceGroupId must match rg-[0-9a-z]+");
    if (ud && h->json_type(ud) != NS_JSON_STRING)
        return bad(r, "spec.userData must be a string");
    out->user_data = h->json_string(ud);
    if (pw && (!h->json_string(pw) || !valid_password(h->json_string(pw))))
        return bad(r, "spec.password must be 8 to 30 letters, digits and special characters");
    out->password = h->json_string(pw);
    if (kp && (!h->json_string(kp) || !valid_key_pair(h->json_string(kp))))
        return bad(r, "spec.keyPairName must start with a letter and hold 2 to 128 letters, digits, '.', '_', ':', '-'");
    if (kp)
        copy(out->key_pair_name, sizeof(out->key_pair_name), h->json_string(kp));
    if (pi && h->json_type(pi) != NS_JSON_BOOL)
        return bad(r, "spec.passwordInherit must be true or false");
    out->password_inherit = pi && h->json_bool(pi);
    if (out->password_inherit && out->password)
        return bad(r, "spec.password cannot be set when spec.passwordInherit is true");
    return NS_OK;
}

static int check_fields(const reader *r, const ns_json *spec)
{
    static const char *const KNOWN[] = {
        "vSwitchSelectorTerms", "vSwitchSelectionPolicy", "securityGroupSelectorTerms", "imageSelectorTerms",
        "kubeletConfiguration", "systemDisk", "dataDisks", "dataDiskCategories", "formatDataDisk", "tags",
        "resourceGroupId", "userData", "password", "keyPairName", "passwordInherit"};
    for (size_t i = 0; i < r->h->json_size(spec); i++) {
        const char *key = r->h->json_key(r->h->json_at(spec, i));
        bool known = false;
        for (size_t j = 0; j < sizeof(KNOWN) / sizeof(KNOWN[0]); j++)
            known |= strcmp(KNOWN[j], key) == 0;
        if (!known)
            return bad(r, "spec.%s: unknown field", key);
    }
    return NS_OK;
}

int ali_nodeclass_spec_parse(const ns_host *host, ns_host_ctx *ctx, const ns_nodeclass *nc, ali_nodeclass_spec *out)
{
    reader r = {host, ctx, nc && nc->name ? nc->name : "(unnamed)", out->refusal};
    if (!nc || !nc->kind || strcmp(nc->kind, ALI_KIND) != 0 || !nc->api_version ||
        strcmp(nc->api_version, ALI_API_VERSION) != 0) {
        snprintf(out->refusal, sizeof(out->refusal), "node class %s: the alibaba provider takes %s %s, not %s %s",
                 r.name, ALI_API_VERSION, ALI_KIND, nc && nc->api_version ? nc->api_version : "(none)",
                 nc && nc->kind ? nc->kind : "(none)");
        return host->error(ctx, NS_ERR_INVALID_CONFIG, __FILE__, __LINE__, "%s", out->refusal);
    }
    const ns_json *spec = nc->spec;
    if (host->json_type(spec) != NS_JSON_OBJECT)
        return bad(&r, "spec must be an object");
    int rc = check_fields(&r, spec);
    if (rc < 0 ||
        (rc = read_terms(&r, spec, "vSwitchSelectorTerms", "vsw-", false, out->vswitch_terms, &out->n_vswitch_terms)) <
            0 ||
        (rc = read_terms(&r, spec, "securityGroupSelectorTerms", "sg-", true, out->sg_terms, &out->n_sg_terms)) < 0 ||
        (rc = read_images(&r, spec, out)) < 0)
        return rc;
    const ns_json *policy = host->json_get(spec, "vSwitchSelectionPolicy");
    const char *p = host->json_string(policy);
    if (policy && (!p || (strcmp(p, "cheapest") != 0 && strcmp(p, "balanced") != 0)))
        return bad(&r, "spec.vSwitchSelectionPolicy must be cheapest or balanced");
    out->balanced = p && strcmp(p, "balanced") == 0;
    if ((rc = read_kubelet(&r, host->json_get(spec, "kubeletConfiguration"), &out->kubelet)) < 0 ||
        (rc = read_disks(&r, spec, out)) < 0 || (rc = read_tags(&r, spec, out)) < 0)
        return rc;
    return read_access(&r, spec, out);
}
