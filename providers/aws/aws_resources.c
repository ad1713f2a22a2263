#include "aws_resources.h"

#include <ctype.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MIB (1024LL * 1024)
#define GIB (1024LL * MIB)

void aws_resource_settings_default(aws_resource_settings *s)
{
    memset(s, 0, sizeof(*s)); /* every field, instance_store_raid0 among them, has a defined default */
    s->vm_memory_overhead = 0.075;
    s->root_volume_bytes = 20 * GIB;
    s->max_pods = 0;
}

int64_t aws_eni_limited_pods(const aws_ec2_instance_type *t)
{
    int64_t enis = t->default_card_enis > 0 ? t->default_card_enis : t->max_enis;
    if (enis <= 0 || t->ipv4_per_eni <= 0)
        return 110; /* the kubelet's default when the type reports no network limits */
    return enis * (t->ipv4_per_eni - 1) + 2;
}

/* Karpenter's kube-reserved CPU: 6 % of the first core, 1 % of the second, 0.5 % of the third and fourth, 0.25 % of
 * every further one. */
static int64_t kube_reserved_cpu_milli(int64_t cpu_milli)
{
    static const struct {
        int64_t start, end;
        double share;
    } STEPS[] = {{0, 1000, 0.06}, {1000, 2000, 0.01}, {2000, 4000, 0.005}, {4000, INT64_MAX, 0.0025}};
    double reserved = 0;
    for (size_t i = 0; i < sizeof(STEPS) / sizeof(STEPS[0]); i++) {
        if (cpu_milli <= STEPS[i].start)
            break;
        int64_t top = cpu_milli < STEPS[i].end ? cpu_milli : STEPS[i].end;
        reserved += (double)(top - STEPS[i].start) * STEPS[i].share;
    }
    return (int64_t)reserved;
}

static void add_extended(ns_resources *r, const char *name, int64_t value)
{
    if (r->n_extended >= NS_MAX_EXTENDED_RESOURCES)
        return;
    snprintf(r->extended[r->n_extended].name, NS_NAME_MAX, "%s", name);
    r->extended[r->n_extended].value = value;
    r->n_extended++;
}

/* The instance stores under RAID0 (an EC2 figure too large for bytes is not believed), else the root volume. */
static int64_t ephemeral_storage(const aws_ec2_instance_type *t, const aws_resource_settings *s)
{
    const int64_t gb = 1000 * 1000 * 1000;
    if (s->instance_store_raid0 && t->local_storage_gb > 0 && t->local_storage_gb <= INT64_MAX / gb)
        return t->local_storage_gb * gb;
    return s->root_volume_bytes;
}

void aws_instance_resources(const aws_ec2_instance_type *t, const aws_resource_settings *s, ns_resources *capacity,
                            ns_resources *kube_reserved, ns_resources *system_reserved, ns_resources *eviction)
{
    memset(capacity, 0, sizeof(*capacity));
    memset(kube_reserved, 0, sizeof(*kube_reserved));
    memset(system_reserved, 0, sizeof(*system_reserved));
    memset(eviction, 0, sizeof(*eviction));
    capacity->cpu_milli = (int64_t)t->vcpus * 1000;
    int64_t overhead_mib = (int64_t)ceil((double)t->memory_mib * s->vm_memory_overhead);
    capacity->memory_bytes = (t->memory_mib - overhead_mib) * MIB;
    capacity->pods = s->max_pods > 0 ? s->max_pods : aws_eni_limited_pods(t);
    capacity->ephemeral_storage_bytes = ephemeral_storage(t, s);
    if (t->gpu_count > 0 && t->gpu_manufacturer) {
        if (strcasecmp(t->gpu_manufacturer, "NVIDIA") == 0)
            add_extended(capacity, "nvidia.com/gpu", t->gpu_count);
        else if (strcasecmp(t->gpu_manufacturer, "AMD") == 0)
            add_extended(capacity, "amd.com/gpu", t->gpu_count);
    }
    kube_reserved->cpu_milli = kube_reserved_cpu_milli(capacity->cpu_milli);
    kube_reserved->memory_bytes = (11 * capacity->pods + 255) * MIB;
    kube_reserved->ephemeral_storage_bytes = GIB;
    eviction->memory_bytes = 100 * MIB;
    eviction->ephemeral_storage_bytes = (int64_t)ceil((double)capacity->ephemeral_storage_bytes * 0.10);
}

static int64_t floor0(int64_t v)
{
    return v < 0 ? 0 : v;
}

void aws_allocatable(const ns_resources *capacity, const ns_resources *kube_reserved,
                     const ns_resources *system_reserved, const ns_resources *eviction, ns_resources *out)
{
    *out = *capacity;
    out->cpu_milli = floor0(capacity->cpu_milli - kube_reserved->cpu_milli - system_reserved->cpu_milli -
                            eviction->cpu_milli);
    out->memory_bytes = floor0(capacity->memory_bytes - kube_reserved->memory_bytes - system_reserved->memory_bytes -
                               eviction->memory_bytes);
    out->pods = floor0(capacity->pods - kube_reserved->pods - system_reserved->pods - eviction->pods);
    out->ephemeral_storage_bytes =
        floor0(capacity->ephemeral_storage_bytes - kube_reserved->ephemeral_storage_bytes -
               system_reserved->ephemeral_storage_bytes - eviction->ephemeral_storage_bytes);
}

const char *aws_kubernetes_arch(const aws_ec2_instance_type *t)
{
    for (size_t i = 0; i < t->n_architectures; i++) {
        if (strcmp(t->architectures[i], "x86_64") == 0)
            return "amd64";
        if (strcmp(t->architectures[i], "arm64") == 0)
            return "arm64";
    }
    return NULL;
}

static void label(aws_labels *l, const char *key, const char *fmt, ...) NS_PRINTF(3, 4);

/* Karpenter writes GPU names and manufacturers in lower case ("nvidia", "t4"). */
static void lower_last(aws_labels *l)
{
    if (l->n)
        for (char *p = (char *)l->items[l->n - 1].value; *p; p++)
            *p = (char)tolower((unsigned char)*p);
}

static void label(aws_labels *l, const char *key, const char *fmt, ...)
{
    if (l->n >= AWS_MAX_LABELS || l->used >= sizeof(l->text))
        return;
    char *dst = l->text + l->used;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst, sizeof(l->text) - l->used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(l->text) - l->used)
        return;
    l->used += (size_t)n + 1;
    l->items[l->n++] = (ns_label){key, dst};
}

void aws_instance_labels(const aws_ec2_instance_type *t, const char *region, aws_labels *out)
{
    memset(out, 0, sizeof(*out));
    const char *arch = aws_kubernetes_arch(t);
    label(out, "kubernetes.io/arch", "%s", arch ? arch : "amd64");
    label(out, "kubernetes.io/os", "linux");
    label(out, "node.kubernetes.io/instance-type", "%s", t->name);
    if (region)
        label(out, "topology.kubernetes.io/region", "%s", region);
    const char *dot = strchr(t->name, '.');
    size_t family_len = dot ? (size_t)(dot - t->name) : strlen(t->name);
    label(out, "karpenter.k8s.aws/instance-family", "%.*s", (int)family_len, t->name);
    if (dot)
        label(out, "karpenter.k8s.aws/instance-size", "%s", dot + 1);
    size_t letters = 0;
    while (letters < family_len && isalpha((unsigned char)t->name[letters]))
        letters++;
    size_t digits = letters;
    while (digits < family_len && isdigit((unsigned char)t->name[digits]))
        digits++;
    label(out, "karpenter.k8s.aws/instance-category", "%.*s", (int)letters, t->name);
    if (digits > letters)
        label(out, "karpenter.k8s.aws/instance-generation", "%.*s", (int)(digits - letters), t->name + letters);
    label(out, "karpenter.k8s.aws/instance-cpu", "%d", t->vcpus);
    label(out, "karpenter.k8s.aws/instance-memory", "%lld", (long long)t->memory_mib);
    label(out, "karpenter.k8s.aws/instance-hypervisor", "%s", t->hypervisor ? t->hypervisor : "");
    if (t->gpu_count > 0) {
        label(out, "karpenter.k8s.aws/instance-gpu-count", "%d", t->gpu_count);
        if (t->gpu_name) {
            label(out, "karpenter.k8s.aws/instance-gpu-name", "%s", t->gpu_name);
            lower_last(out);
        }
        if (t->gpu_manufacturer) {
            label(out, "karpenter.k8s.aws/instance-gpu-manufacturer", "%s", t->gpu_manufacturer);
            lower_last(out);
        }
        label(out, "karpenter.k8s.aws/instance-gpu-memory", "%lld", (long long)t->gpu_memory_mib);
    }
    if (t->local_storage_gb > 0)
        label(out, "karpenter.k8s.aws/instance-local-nvme", "%lld", (long long)t->local_storage_gb);
}
