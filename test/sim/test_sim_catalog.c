/* The sim's built-in catalog as the core sees it: size, AWS-style labels, Karpenter's resource arithmetic,
 * offerings and prices, node-class effects (Windows, zones, storage), price and catalog files. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors/ns_error.h"
#include "sim_fixture.h"

#define MIB (1024LL * 1024LL)
#define GIB (1024LL * MIB)

static const ns_itype *find(const ns_itype_set *set, const char *name)
{
    const ns_itype *t = ns_itype_set_find(set, name);
    ck_assert_msg(t != NULL, "instance type %s missing", name);
    return t;
}

static void load_default(ns_plugin **p, sim_fx_nodeclass **nc, ns_itype_set *set)
{
    *p = sim_fx_load(NULL);
    *nc = sim_fx_sim_nodeclass("{}");
    sim_fx_types(*p, &(*nc)->abi, set);
}

static void unload(ns_plugin *p, sim_fx_nodeclass *nc, ns_itype_set *set)
{
    ns_itype_set_free(set);
    sim_fx_nodeclass_free(nc);
    ns_plugin_unload(p);
}

START_TEST(catalog_covers_families_generations_and_arches)
{
    ns_plugin *p;
    sim_fx_nodeclass *nc;
    ns_itype_set set;
    load_default(&p, &nc, &set);
    ck_assert_uint_ge(set.n, 60);

    static const char *const families[] = {"m5", "m6i", "m6g", "m7i", "m7g", "c5", "c6i", "c6g", "c7g",
                                           "r5", "r6i", "r6g", "g4dn", "g5", "p3"};
    for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
        size_t n = 0;
        for (size_t i = 0; i < set.n; i++)
            n += strcmp(ns_itype_label(&set.items[i], "karpenter.k8s.aws/instance-family"), families[f]) == 0;
        ck_assert_msg(n >= 3, "family %s has %zu types", families[f], n);
    }
    size_t amd64 = 0, arm64 = 0, gpu = 0;
    bool generation[10] = {false};
    for (size_t i = 0; i < set.n; i++) {
        const char *arch = ns_itype_label(&set.items[i], "kubernetes.io/arch");
        ck_assert_ptr_nonnull(arch);
        amd64 += strcmp(arch, "amd64") == 0;
        arm64 += strcmp(arch, "arm64") == 0;
        gpu += ns_itype_label(&set.items[i], "karpenter.k8s.aws/instance-gpu-count") != NULL;
        generation[atoi(ns_itype_label(&set.items[i], "karpenter.k8s.aws/instance-generation")) % 10] = true;
    }
    ck_assert_uint_eq(amd64 + arm64, set.n);
    ck_assert_uint_ge(arm64, 20);
    ck_assert_uint_ge(gpu, 10);
    ck_assert(generation[3] && generation[4] && generation[5] && generation[6] && generation[7]);
    unload(p, nc, &set);
}
END_TEST

START_TEST(labels_are_spelled_like_aws)
{
    ns_plugin *p;
    sim_fx_nodeclass *nc;
    ns_itype_set set;
    load_default(&p, &nc, &set);
    const ns_itype *t = find(&set, "m5.large");
    static const char *const expected[][2] = {
        {"kubernetes.io/arch", "amd64"},
        {"kubernetes.io/os", "linux"},
        {"node.kubernetes.io/instance-type", "m5.large"},
        {"topology.kubernetes.io/region", "us-west-2"},
        {"karpenter.k8s.aws/instance-category", "m"},
        {"karpenter.k8s.aws/instance-family", "m5"},
        {"karpenter.k8s.aws/instance-generation", "5"},
        {"karpenter.k8s.aws/instance-size", "large"},
        {"karpenter.k8s.aws/instance-cpu", "2"},
        {"karpenter.k8s.aws/instance-memory", "8192"},
        {"karpenter.k8s.aws/instance-hypervisor", "nitro"},
        {"karpenter.k8s.aws/instance-cpu-manufacturer", "intel"},
    };
    for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
        const char *v = ns_itype_label(t, expected[i][0]);
        ck_assert_msg(v && strcmp(v, expected[i][1]) == 0, "m5.large %s = %s, want %s", expected[i][0],
                      v ? v : "(absent)", expected[i][1]);
    }
    ck_assert_ptr_null(ns_itype_label(t, "node.kubernetes.io/windows-build"));
    ck_assert_ptr_null(ns_itype_label(t, "karpenter.k8s.aws/instance-gpu-count"));
    ck_assert_str_eq(ns_itype_label(find(&set, "m7g.xlarge"), "kubernetes.io/arch"), "arm64");
    ck_assert_str_eq(ns_itype_label(find(&set, "m7g.xlarge"), "karpenter.k8s.aws/instance-memory"), "16384");
    ck_assert_ptr_null(ns_itype_label(find(&set, "m5.metal"), "karpenter.k8s.aws/instance-hypervisor"));
    unload(p, nc, &set);
}
END_TEST

START_TEST(gpu_types_have_gpu_labels_and_extended_resources)
{
    ns_plugin *p;
    sim_fx_nodeclass *nc;
    ns_itype_set set;
    load_default(&p, &nc, &set);
    const ns_itype *t = find(&set, "g4dn.12xlarge");
    ck_assert_str_eq(ns_itype_label(t, "karpenter.k8s.aws/instance-gpu-name"), "t4");
    ck_assert_str_eq(ns_itype_label(t, "karpenter.k8s.aws/instance-gpu-count"), "4");
    ck_assert_str_eq(ns_itype_label(t, "karpenter.k8s.aws/instance-gpu-manufacturer"), "nvidia");
    ck_assert_str_eq(ns_itype_label(t, "karpenter.k8s.aws/instance-gpu-memory"), "16384");
    ck_assert_uint_eq(t->capacity.n_ext, 1);
    ck_assert_str_eq(t->capacity.ext[0].name, "nvidia.com/gpu");
    ck_assert_int_eq(t->capacity.ext[0].value, 4);
    ck_assert_int_eq(t->allocatable.ext[0].value, 4);
    const ns_itype *p3 = find(&set, "p3.16xlarge");
    ck_assert_str_eq(ns_itype_label(p3, "karpenter.k8s.aws/instance-gpu-name"), "v100");
    ck_assert_str_eq(ns_itype_label(p3, "karpenter.k8s.aws/instance-hypervisor"), "xen");
    ck_assert_int_eq(p3->capacity.ext[0].value, 8);
    ck_assert_uint_eq(find(&set, "m5.large")->capacity.n_ext, 0);
    unload(p, nc, &set);
}
END_TEST

START_TEST(resources_follow_karpenter_for_aws)
{
    ns_plugin *p;
    sim_fx_nodeclass *nc;
    ns_itype_set set;
    load_default(&p, &nc, &set);
    const ns_itype *t = find(&set, "m5.large");
    /* 8192Mi less the 7.5% VM overhead (615Mi, rounded up). */
    ck_assert_int_eq(t->capacity.cpu_milli, 2000);
    ck_assert_int_eq(t->capacity.memory_bytes, 7577 * MIB);
    ck_assert_int_eq(t->capacity.pods, 29); /* 3 ENIs x (10 - 1) + 2 */
    ck_assert_int_eq(t->capacity.ephemeral_storage_bytes, 20 * GIB);
    ck_assert_int_eq(t->kube_reserved.cpu_milli, 70); /* 60 + 10 */
    ck_assert_int_eq(t->kube_reserved.memory_bytes, (11 * 29 + 255) * MIB);
    ck_assert_int_eq(t->kube_reserved.ephemeral_storage_bytes, GIB);
    ck_assert_int_eq(t->eviction_threshold.memory_bytes, 100 * MIB);
    ck_assert_int_eq(t->eviction_threshold.ephemeral_storage_bytes, 2 * GIB);
    ck_assert_int_eq(t->allocatable.cpu_milli, 1930);
    ck_assert_int_eq(t->allocatable.memory_bytes, 6903 * MIB);
    ck_assert_int_eq(t->allocatable.ephemeral_storage_bytes, 17 * GIB);

    const ns_itype *big = find(&set, "m7i.48xlarge");
    /* 60 + 10 + 2 x 5 + 188 x 2.5 */
    ck_assert_int_eq(big->kube_reserved.cpu_milli, 550);
    ck_assert_int_eq(big->capacity.pods, 737);
    ck_assert_int_eq(find(&set, "m6g.medium")->capacity.pods, 8);
    ck_assert_int_eq(find(&set, "m6g.medium")->kube_reserved.cpu_milli, 60);
    unload(p, nc, &set);
}
END_TEST

START_TEST(offerings_cover_every_zone_with_spot_below_on_demand)
{
    ns_plugin *p;
    sim_fx_nodeclass *nc;
    ns_itype_set set;
    load_default(&p, &nc, &set);
    static const char *const zones[] = {"us-west-2a", "us-west-2b", "us-west-2c"};
    for (size_t i = 0; i < set.n; i++) {
        const ns_itype *t = &set.items[i];
        ck_assert_uint_eq(t->n_offerings, 6);
        for (size_t z = 0; z < 3; z++) {
            const ns_itype_offering *od = sim_fx_offering(t, zones[z], NS_CAPACITY_ON_DEMAND);
            const ns_itype_offering *spot = sim_fx_offering(t, zones[z], NS_CAPACITY_SPOT);
            ck_assert_ptr_nonnull(od);
            ck_assert_ptr_nonnull(spot);
            ck_assert(od->available && spot->available);
            ck_assert_msg(spot->price_per_hour > 0 && spot->price_per_hour < od->price_per_hour,
                          "%s in %s: spot %f, on-demand %f", t->name, zones[z], spot->price_per_hour,
                          od->price_per_hour);
        }
    }
    ck_assert_double_eq_tol(sim_fx_offering(find(&set, "m5.large"), "us-west-2b", "on-demand")->price_per_hour,
                            0.096, 1e-9);
    ck_assert_double_eq_tol(sim_fx_offering(find(&set, "c6g.xlarge"), "us-west-2a", "on-demand")->price_per_hour,
                            0.136, 1e-9);
    ck_assert_double_eq_tol(sim_fx_offering(find(&set, "p3.2xlarge"), "us-west-2a", "on-demand")->price_per_hour,
                            3.06, 1e-9);

    /* Deterministic: a second provider instance prices spot identically. */
    double spot = sim_fx_offering(find(&set, "r6i.4xlarge"), "us-west-2c", "spot")->price_per_hour;
    ns_plugin *again;
    sim_fx_nodeclass *nc2;
    ns_itype_set set2;
    load_default(&again, &nc2, &set2);
    ck_assert_double_eq(sim_fx_offering(find(&set2, "r6i.4xlarge"), "us-west-2c", "spot")->price_per_hour, spot);
    unload(again, nc2, &set2);
    unload(p, nc, &set);
}
END_TEST

START_TEST(region_and_zones_options_shape_offerings)
{
    ns_plugin *p = sim_fx_load("region", "eu-west-1", "zones", "eu-west-1a, eu-west-1b", NULL);
    sim_fx_nodeclass *nc = sim_fx_sim_nodeclass("{}");
    ns_itype_set set;
    sim_fx_types(p, &nc->abi, &set);
    const ns_itype *t = find(&set, "c5.large");
    ck_assert_str_eq(ns_itype_label(t, "topology.kubernetes.io/region"), "eu-west-1");
    ck_assert_uint_eq(t->n_offerings, 4);
    ck_assert_ptr_nonnull(sim_fx_offering(t, "eu-west-1b", "spot"));
    unload(p, nc, &set);

    ns_plugin *bad = NULL;
    ck_assert_int_eq(sim_fx_try_load(SIM_SO, &bad, "zones", "a,b,a", NULL), NS_ERR_INVALID_CONFIG);
    sim_fx_assert_error_has("zone a is listed twice");
    ck_assert_int_eq(sim_fx_try_load(SIM_SO, &bad, "zones", " , ", NULL), NS_ERR_INVALID_CONFIG);
    sim_fx_assert_error_has("option zones");
    ck_assert_int_eq(sim_fx_try_load(SIM_SO, &bad, "violation", "sometimes", NULL), NS_ERR_INVALID_CONFIG);
    sim_fx_assert_error_has("option violation: unknown mode \"sometimes\"");
    ck_assert_ptr_null(bad);
}
END_TEST

START_TEST(windows_node_classes_select_windows_capable_types)
{
    ns_plugin *p = sim_fx_load(NULL);
    sim_fx_nodeclass *nc = sim_fx_sim_nodeclass("{\"imageFamily\": \"Windows2022\"}");
    ns_itype_set set;
    sim_fx_types(p, &nc->abi, &set);
    ck_assert_uint_gt(set.n, 30);
    for (size_t i = 0; i < set.n; i++) {
        ck_assert_str_eq(ns_itype_label(&set.items[i], "kubernetes.io/arch"), "amd64");
        ck_assert_str_eq(ns_itype_label(&set.items[i], "kubernetes.io/os"), "windows");
        ck_assert_str_eq(ns_itype_label(&set.items[i], "node.kubernetes.io/windows-build"), "10.0.20348");
    }
    ck_assert_ptr_null(ns_itype_set_find(&set, "m6g.large"));
    /* The Windows licence: 0.046 per vCPU-hour on top of Linux's 0.096. */
    ck_assert_double_eq_tol(sim_fx_offering(find(&set, "m5.large"), "us-west-2a", "on-demand")->price_per_hour,
                            0.188, 1e-9);
    ns_itype_set_free(&set);
    sim_fx_nodeclass_free(nc);

    nc = sim_fx_nodeclass_new("karpenter.k8s.aws/v1", "EC2NodeClass",
                              "{\"amiSelectorTerms\": [{\"alias\": \"windows2019@latest\"}], \"role\": \"r\"}");
    sim_fx_types(p, &nc->abi, &set);
    ck_assert_str_eq(ns_itype_label(find(&set, "c6i.large"), "node.kubernetes.io/windows-build"), "10.0.17763");
    ns_itype_set_free(&set);
    sim_fx_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(node_class_zones_and_storage_shape_types)
{
    ns_plugin *p = sim_fx_load(NULL);
    sim_fx_nodeclass *nc =
        sim_fx_sim_nodeclass("{\"zones\": [\"us-west-2b\"], \"ephemeralStorage\": \"100Gi\", \"imageVersion\": \"v7\"}");
    ns_itype_set set;
    sim_fx_types(p, &nc->abi, &set);
    const ns_itype *t = find(&set, "r5.large");
    ck_assert_uint_eq(t->n_offerings, 2);
    ck_assert_ptr_nonnull(sim_fx_offering(t, "us-west-2b", "on-demand"));
    ck_assert_int_eq(t->capacity.ephemeral_storage_bytes, 100 * GIB);
    ck_assert_int_eq(t->eviction_threshold.ephemeral_storage_bytes, 10 * GIB);
    ns_itype_set_free(&set);
    sim_fx_nodeclass_free(nc);

    nc = sim_fx_nodeclass_new("karpenter.k8s.aws/v1beta1", "EC2NodeClass",
                              "{\"amiFamily\": \"AL2023\", \"blockDeviceMappings\": [{\"deviceName\": \"/dev/xvda\", "
                              "\"ebs\": {\"volumeSize\": \"50Gi\"}}]}");
    sim_fx_types(p, &nc->abi, &set);
    ck_assert_int_eq(find(&set, "r5.large")->capacity.ephemeral_storage_bytes, 50 * GIB);
    ns_itype_set_free(&set);
    sim_fx_nodeclass_free(nc);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(price_file_overrides_built_in_prices)
{
    char *prices = sim_fx_write_temp("{\"m5.large\": 1.5, \"not-in-catalog.large\": 2}");
    ns_plugin *p = sim_fx_load("prices", prices, NULL);
    sim_fx_nodeclass *nc = sim_fx_sim_nodeclass("{}");
    ns_itype_set set;
    sim_fx_types(p, &nc->abi, &set);
    const ns_itype *t = find(&set, "m5.large");
    ck_assert_double_eq_tol(sim_fx_offering(t, "us-west-2a", "on-demand")->price_per_hour, 1.5, 1e-9);
    ck_assert_double_lt(sim_fx_offering(t, "us-west-2a", "spot")->price_per_hour, 1.5);
    ck_assert_double_eq_tol(sim_fx_offering(find(&set, "m5.xlarge"), "us-west-2a", "on-demand")->price_per_hour,
                            0.192, 1e-9);
    unload(p, nc, &set);
    unlink(prices);
    free(prices);
}
END_TEST

/* Loads a catalog file with the given text and checks the refusal names the file and the problem. */
static void assert_bad_file(const char *option, const char *text, const char *needle)
{
    char *path = sim_fx_write_temp(text);
    ns_plugin *p = NULL;
    int rc = sim_fx_try_load(SIM_SO, &p, option, path, NULL);
    ck_assert_msg(rc == NS_ERR_INVALID_CONFIG, "%s %s: got %d", option, text, rc);
    ck_assert_ptr_null(p);
    sim_fx_assert_error_has(path);
    sim_fx_assert_error_has(needle);
    unlink(path);
    free(path);
}

START_TEST(bad_catalog_and_price_files_are_refused_with_reasons)
{
    assert_bad_file("catalog", "[{\"name\": \"x.large\"", "not valid JSON: syntax error at line 1, column");
    assert_bad_file("catalog", "{\"name\": \"x.large\"}", "must be an array");
    assert_bad_file("catalog", "[]", "has no instance types");
    assert_bad_file("catalog", "[{\"name\": \"x.large\", \"memory_mib\": 1024, \"arch\": \"amd64\"}]",
                    "entry 0 (x.large): field vcpu must be a whole number");
    assert_bad_file("catalog", "[{\"name\": \"x.large\", \"vcpu\": 2, \"memory_mib\": 1024, \"arch\": \"sparc\"}]",
                    "field arch is \"sparc\"");
    assert_bad_file("catalog",
                    "[{\"name\": \"m5.large\", \"vcpu\": 2, \"memory_mib\": 8192, \"arch\": \"amd64\"},"
                    " {\"name\": \"m5.large\", \"vcpu\": 2, \"memory_mib\": 8192, \"arch\": \"amd64\"}]",
                    "lists instance type m5.large twice");
    assert_bad_file("catalog", "[{\"name\": \"zz.large\", \"vcpu\": 2, \"memory_mib\": 8192, \"arch\": \"amd64\"}]",
                    "no instance type of the catalog file has a price");
    assert_bad_file("prices", "{\"m5.large\": -1}", "the price of m5.large must be a non-negative number");
    assert_bad_file("prices", "[1, 2]", "must be an object");

    ns_plugin *p = NULL;
    ck_assert_int_eq(sim_fx_try_load(SIM_SO, &p, "catalog", "/nonexistent/catalog.json", NULL),
                     NS_ERR_INVALID_CONFIG);
    sim_fx_assert_error_has("catalog file /nonexistent/catalog.json: cannot open");
}
END_TEST

START_TEST(small_catalog_file_takes_built_in_prices_and_derives_fields)
{
    char *path = sim_fx_write_temp("[{\"name\": \"m5.large\", \"vcpu\": 2, \"memory_mib\": 8192, \"arch\": \"amd64\","
                                   " \"max_enis\": 3, \"ipv4_per_eni\": 10},"
                                   " {\"name\": \"zz9.huge\", \"vcpu\": 4, \"memory_mib\": 4096, \"arch\": \"arm64\"}]");
    char *prices = sim_fx_write_temp("{\"zz9.huge\": 0.5}");
    ns_plugin *p = sim_fx_load("catalog", path, "prices", prices, NULL);
    sim_fx_nodeclass *nc = sim_fx_sim_nodeclass("{}");
    ns_itype_set set;
    sim_fx_types(p, &nc->abi, &set);
    ck_assert_uint_eq(set.n, 2);
    const ns_itype *m5 = find(&set, "m5.large");
    ck_assert_double_eq_tol(sim_fx_offering(m5, "us-west-2a", "on-demand")->price_per_hour, 0.096, 1e-9);
    ck_assert_int_eq(m5->capacity.pods, 29);
    const ns_itype *zz = find(&set, "zz9.huge");
    ck_assert_str_eq(ns_itype_label(zz, "karpenter.k8s.aws/instance-family"), "zz9");
    ck_assert_str_eq(ns_itype_label(zz, "karpenter.k8s.aws/instance-category"), "zz");
    ck_assert_str_eq(ns_itype_label(zz, "karpenter.k8s.aws/instance-generation"), "9");
    ck_assert_str_eq(ns_itype_label(zz, "karpenter.k8s.aws/instance-size"), "huge");
    ck_assert_int_eq(zz->capacity.pods, 110);
    ck_assert_double_eq_tol(sim_fx_offering(zz, "us-west-2c", "on-demand")->price_per_hour, 0.5, 1e-9);
    unload(p, nc, &set);
    unlink(path);
    unlink(prices);
    free(path);
    free(prices);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim-catalog");
    TCase *tc = tcase_create("catalog");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, catalog_covers_families_generations_and_arches);
    tcase_add_test(tc, labels_are_spelled_like_aws);
    tcase_add_test(tc, gpu_types_have_gpu_labels_and_extended_resources);
    tcase_add_test(tc, resources_follow_karpenter_for_aws);
    tcase_add_test(tc, offerings_cover_every_zone_with_spot_below_on_demand);
    tcase_add_test(tc, region_and_zones_options_shape_offerings);
    tcase_add_test(tc, windows_node_classes_select_windows_capable_types);
    tcase_add_test(tc, node_class_zones_and_storage_shape_types);
    tcase_add_test(tc, price_file_overrides_built_in_prices);
    tcase_add_test(tc, bad_catalog_and_price_files_are_refused_with_reasons);
    tcase_add_test(tc, small_catalog_file_takes_built_in_prices_and_derives_fields);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
