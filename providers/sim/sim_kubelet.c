#include "sim_kubelet.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_state.h"

typedef struct kctx {
    sim_state *s;
    const char *kind, *name;
} kctx;

#define KFAIL(c, ...) SIM_FAIL((c)->s, NS_ERR_INVALID_CONFIG, __VA_ARGS__)

/* A Kubernetes quantity ("500m", "1.5Gi", "100M", "2") times 10^scale, rounded up; false when malformed. Exponent
 * forms ("1e3") are not accepted here: kubelet settings are written with suffixes. */
static bool parse_quantity(const char *text, int scale, int64_t *out)
{
    static const struct {
        const char *suffix;
        int exp10; /* decimal suffixes */
        int exp2;  /* binary suffixes; 0 = decimal */
    } units[] = {{"", 0, 0},   {"m", -3, 0}, {"k", 3, 0},   {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},
                 {"P", 15, 0}, {"E", 18, 0}, {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40},
                 {"Pi", 0, 50}, {"Ei", 0, 60}};
    const char *p = text;
    __int128 mant = 0;
    int frac = 0, digits = 0;
    bool dot = false;
    for (; *p && (isdigit((unsigned char)*p) || (*p == '.' && !dot)); p++) {
        if (*p == '.') {
            dot = true;
            continue;
        }
        if (++digits > 30)
            return false;
        mant = mant * 10 + (*p - '0');
        frac += dot;
    }
    if (digits == 0)
        return false;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(p, units[i].suffix) != 0)
            continue;
        __int128 num = mant, den = 1;
        int e10 = units[i].exp10 + scale - frac;
        for (; e10 > 0; e10--)
            num *= 10;
        for (; e10 < 0; e10++)
            den *= 10;
        num <<= units[i].exp2;
        __int128 v = (num + den - 1) / den;
        if (v > INT64_MAX)
            return false;
        *out = (int64_t)v;
        return true;
    }
    return false;
}

static int parse_reserved(const kctx *c, const ns_json *obj, const char *field, sim_reserved *out)
{
    const ns_host *h = c->s->host;
    if (h->json_type(obj) != NS_JSON_OBJECT)
        return KFAIL(c, "%s %s: spec.kubelet.%s must be an object of quantities", c->kind, c->name, field);
    for (size_t i = 0; i < h->json_size(obj); i++) {
        const ns_json *m = h->json_at(obj, i);
        const char *key = h->json_key(m), *text = h->json_string(m);
        bool cpu = strcmp(key, "cpu") == 0;
        int64_t v;
        if (!text || !parse_quantity(text, cpu ? 3 : 0, &v))
            return KFAIL(c, "%s %s: spec.kubelet.%s.%s must be a quantity string such as \"%s\"", c->kind, c->name,
                         field, key, cpu ? "100m" : "1Gi");
        if (cpu) {
            out->has_cpu = true;
            out->cpu_milli = v;
        } else if (strcmp(key, "memory") == 0) {
            out->has_memory = true;
            out->memory_bytes = v;
        } else if (strcmp(key, "ephemeral-storage") == 0) {
            out->has_ephemeral = true;
            out->ephemeral_bytes = v;
        } else if (strcmp(key, "pid") != 0) {
            return KFAIL(c, "%s %s: spec.kubelet.%s.%s is not a reserved resource (cpu, memory, ephemeral-storage, "
                         "pid)", c->kind, c->name, field, key);
        }
    }
    return NS_OK;
}

static int parse_threshold(const kctx *c, const char *field, const char *signal, const char *text, sim_threshold *t)
{
    size_t len = text ? strlen(text) : 0;
    int64_t v;
    if (len > 1 && text[len - 1] == '%') {
        char *end = NULL;
        double pct = strtod(text, &end);
        if (end == text + len - 1 && pct >= 0 && pct <= 100) {
            *t = (sim_threshold){true, true, pct};
            return NS_OK;
        }
    } else if (text && parse_quantity(text, 0, &v)) {
        *t = (sim_threshold){true, false, (double)v};
        return NS_OK;
    }
    return KFAIL(c, "%s %s: spec.kubelet.%s.%s must be a quantity (\"100Mi\") or a percentage (\"10%%\")", c->kind,
                 c->name, field, signal);
}

static int parse_evictions(const kctx *c, const ns_json *obj, const char *field, sim_threshold *memory,
                           sim_threshold *nodefs)
{
    const ns_host *h = c->s->host;
    if (h->json_type(obj) != NS_JSON_OBJECT)
        return KFAIL(c, "%s %s: spec.kubelet.%s must be an object of signal thresholds", c->kind, c->name, field);
    int rc = NS_OK;
    for (size_t i = 0; i < h->json_size(obj) && rc == NS_OK; i++) {
        const ns_json *m = h->json_at(obj, i);
        const char *sig = h->json_key(m), *text = h->json_string(m);
        if (strcmp(sig, "memory.available") == 0)
            rc = parse_threshold(c, field, sig, text, memory);
        else if (strcmp(sig, "nodefs.available") == 0)
            rc = parse_threshold(c, field, sig, text, nodefs);
        else if (!text)
            rc = KFAIL(c, "%s %s: spec.kubelet.%s.%s must be a string", c->kind, c->name, field, sig);
    }
    return rc;
}

static int parse_count(const kctx *c, const ns_json *v, const char *field, int64_t *out)
{
    const ns_host *h = c->s->host;
    double d = h->json_number(v);
    if (h->json_type(v) != NS_JSON_NUMBER || d < 0 || d > 1000000 || d != floor(d))
        return KFAIL(c, "%s %s: spec.kubelet.%s must be a whole number from 0 to 1000000", c->kind, c->name, field);
    *out = (int64_t)d;
    return NS_OK;
}

int sim_kubelet_parse(sim_state *s, const char *kind, const char *name, const ns_json *kubelet, sim_kubelet *out)
{
    static const char *const ignored[] = {"clusterDNS", "evictionSoftGracePeriod", "evictionMaxPodGracePeriod",
                                          "imageGCHighThresholdPercent", "imageGCLowThresholdPercent",
                                          "cpuCFSQuota"};
    const ns_host *h = s->host;
    kctx c = {s, kind, name};
    memset(out, 0, sizeof(*out));
    if (!kubelet)
        return NS_OK;
    if (h->json_type(kubelet) != NS_JSON_OBJECT)
        return KFAIL(&c, "%s %s: spec.kubelet must be an object", kind, name);
    int rc = NS_OK;
    for (size_t i = 0; i < h->json_size(kubelet) && rc == NS_OK; i++) {
        const ns_json *m = h->json_at(kubelet, i);
        const char *key = h->json_key(m);
        bool known = false;
        for (size_t j = 0; j < sizeof(ignored) / sizeof(ignored[0]) && !known; j++)
            known = strcmp(key, ignored[j]) == 0;
        if (strcmp(key, "maxPods") == 0) {
            out->has_max_pods = true;
            rc = parse_count(&c, m, key, &out->max_pods);
        } else if (strcmp(key, "podsPerCore") == 0) {
            rc = parse_count(&c, m, key, &out->pods_per_core);
        } else if (strcmp(key, "kubeReserved") == 0) {
            rc = parse_reserved(&c, m, key, &out->kube_reserved);
        } else if (strcmp(key, "systemReserved") == 0) {
            rc = parse_reserved(&c, m, key, &out->system_reserved);
        } else if (strcmp(key, "evictionHard") == 0) {
            rc = parse_evictions(&c, m, key, &out->hard_memory, &out->hard_nodefs);
        } else if (strcmp(key, "evictionSoft") == 0) {
            rc = parse_evictions(&c, m, key, &out->soft_memory, &out->soft_nodefs);
        } else if (!known) {
            rc = KFAIL(&c, "%s %s: unknown field spec.kubelet.%s (known: maxPods, podsPerCore, kubeReserved, "
                       "systemReserved, evictionHard, evictionSoft, evictionSoftGracePeriod, "
                       "evictionMaxPodGracePeriod, imageGCHighThresholdPercent, imageGCLowThresholdPercent, "
                       "cpuCFSQuota, clusterDNS)", kind, name, key);
        }
    }
    return rc;
}

static int64_t threshold_one(const sim_threshold *t, int64_t capacity)
{
    if (!t->percent)
        return (int64_t)t->value;
    /* The kubelet reads 100% as "no threshold". */
    return t->value >= 100 ? 0 : (int64_t)ceil((double)capacity * t->value / 100.0);
}

int64_t sim_threshold_amount(const sim_threshold *hard, const sim_threshold *soft, int64_t capacity,
                             int64_t fallback)
{
    if (!hard->set && !(soft && soft->set))
        return fallback;
    int64_t a = hard->set ? threshold_one(hard, capacity) : 0;
    int64_t b = soft && soft->set ? threshold_one(soft, capacity) : 0;
    return a > b ? a : b;
}
