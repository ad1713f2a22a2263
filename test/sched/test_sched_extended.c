/*
 * Extended resources in the core: the scheduler takes as many distinct ones as the round names (the ABI's
 * ns_resources holds 8; the core has no such limit), and resource names follow Kubernetes' rule for qualified names
 * (a DNS-subdomain prefix of at most 253 characters, '/', a name of at most 63), from manifests as from code.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"
#include "manifest/loader.h"
#include "model/resources.h"
#include "sched_test_util.h"

#define N_EXT 12

static void ext_name(char *buf, size_t len, int i)
{
    snprintf(buf, len, "devices.example.com/dev-%d", i);
}

/* A type offering `n` of the N_EXT devices, `per` of each. */
static ns_itype *device_type(ns_itype_set *set, const char *name, int n, int64_t per, const char *offer)
{
    ns_itype *t = fx_type(set, name, 8000, 32 * FX_GI, 110, "kubernetes.io/arch=amd64,kubernetes.io/os=linux", offer);
    for (int i = 0; i < n; i++) {
        char r[64];
        ext_name(r, sizeof(r), i);
        fx_type_extended(t, r, per);
    }
    return t;
}

/* Device i requested i + 1 times: every dimension holds a different value, so a dropped or shifted one shows. */
static ns_pod *device_pod(ns_cluster *c, const char *name)
{
    ns_pod *p = fx_pod(c, name, 500, FX_GI, "");
    for (int i = 0; i < N_EXT; i++) {
        char r[64];
        ext_name(r, sizeof(r), i);
        fx_pod_extended(p, r, i + 1);
    }
    return p;
}

START_TEST(twelve_extended_resources_schedule)
{
    sched_env e;
    sched_env_init(&e, true);
    /* "eleven" is cheaper and lacks only the last device; "all" offers every one, twice the largest request. */
    device_type(&e.set, "eleven", N_EXT - 1, 2 * N_EXT, "z-a:on-demand:0.5");
    device_type(&e.set, "all", N_EXT, 2 * N_EXT, "z-a:on-demand:2.0");
    fx_pool(e.c, "default", 0, "");
    device_pod(e.c, "p1");
    device_pod(e.c, "p2");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    const ns_sched_claim *c1 = fx_claim_of(e.c, &e.r, "p1");
    ck_assert_ptr_nonnull(c1);
    ck_assert_ptr_eq(c1, fx_claim_of(e.c, &e.r, "p2"));
    ck_assert_uint_eq(c1->n_options, 1);
    ck_assert_str_eq(c1->options[0].type->name, "all");
    for (int i = 0; i < N_EXT; i++) {
        char r[64];
        ext_name(r, sizeof(r), i);
        ck_assert_int_eq(ns_res_get(&c1->pod_requests, r), 2 * (i + 1));
    }
    sched_env_free(&e);
}
END_TEST

/* The twelfth dimension is checked, not only carried: the type holds three pods' worth of every device but the last
 * (24 of dev-11, where three pods need 36), so the third pod needs a second claim. */
START_TEST(twelfth_resource_limits_the_fit)
{
    sched_env e;
    sched_env_init(&e, false);
    ns_itype *t = device_type(&e.set, "all", 0, 0, "z-a:on-demand:2.0");
    for (int i = 0; i < N_EXT; i++) {
        char r[64];
        ext_name(r, sizeof(r), i);
        fx_type_extended(t, r, i < N_EXT - 1 ? 3 * (i + 1) : 2 * N_EXT);
    }
    fx_pool(e.c, "default", 0, "");
    device_pod(e.c, "p1");
    device_pod(e.c, "p2");
    device_pod(e.c, "p3");
    sched_env_run(&e);
    ck_assert_uint_eq(e.r.n_claims, 2);
    ck_assert_ptr_ne(fx_claim_of(e.c, &e.r, "p1"), fx_claim_of(e.c, &e.r, "p3"));
    sched_env_free(&e);
}
END_TEST

/* A pod asking for a device no type offers is unschedulable, and the reason names the device. */
START_TEST(missing_twelfth_resource_is_named)
{
    sched_env e;
    sched_env_init(&e, false);
    device_type(&e.set, "eleven", N_EXT - 1, 2 * N_EXT, "z-a:on-demand:0.5");
    fx_pool(e.c, "default", 0, "");
    device_pod(e.c, "p1");
    sched_env_run(&e);
    const char *why = fx_reason(e.c, &e.r, "p1");
    ck_assert_ptr_nonnull(why);
    ck_assert_msg(strstr(why, "devices.example.com/dev-11") != NULL, "reason: %s", why);
    sched_env_free(&e);
}
END_TEST

/* prefix_len characters of DNS subdomain (labels of 63 joined by '.'), '/', name_len characters of name. */
static void long_name(char *buf, size_t prefix_len, size_t name_len)
{
    for (size_t i = 0; i < prefix_len; i++)
        buf[i] = (i % 64 == 63 && i + 1 < prefix_len) ? '.' : 'p';
    buf[prefix_len] = '/';
    memset(buf + prefix_len + 1, 'n', name_len);
    buf[prefix_len + 1 + name_len] = '\0';
}

START_TEST(resource_name_limits)
{
    char ok[256], bad_name[301], bad_prefix[301], over[NS_RES_NAME_MAX + 2];
    long_name(ok, 186, 63);
    ck_assert_uint_eq(strlen(ok), 250);
    long_name(bad_name, 11, 288);
    ck_assert_uint_eq(strlen(bad_name), 300);
    long_name(bad_prefix, 280, 19);
    ck_assert_uint_eq(strlen(bad_prefix), 300);
    long_name(over, 253, 64);
    ns_res r = {0};
    ck_assert_int_eq(ns_res_set(&r, ok, 3), 0);
    ck_assert_int_eq(ns_res_get(&r, ok), 3);
    ck_assert_int_eq(ns_res_set(&r, bad_name, 1), NS_ERR_INVALID_CONFIG);
    ck_assert_msg(strstr(ns_error_message(), bad_name) != NULL, "message: %s", ns_error_message());
    ck_assert_msg(strstr(ns_error_message(), "(300 characters)") != NULL, "message: %s", ns_error_message());
    ck_assert_msg(strstr(ns_error_message(), "must be no more than 63 characters") != NULL, "message: %s",
                  ns_error_message());
    ck_assert_int_eq(ns_res_set(&r, bad_prefix, 1), NS_ERR_INVALID_CONFIG);
    ck_assert_msg(strstr(ns_error_message(), bad_prefix) != NULL, "message: %s", ns_error_message());
    ck_assert_msg(strstr(ns_error_message(), "prefix must be a DNS subdomain of 1 to 253 characters") != NULL,
                  "message: %s", ns_error_message());
    ck_assert_int_eq(ns_res_set(&r, over, 1), NS_ERR_INVALID_CONFIG);
    ck_assert_uint_eq(r.n_ext, 1);
    ns_res_free(&r);
}
END_TEST

static int load_pod_requesting(ns_cluster *c, const char *resource)
{
    char yaml[1024];
    snprintf(yaml, sizeof(yaml),
             "apiVersion: v1\nkind: Pod\nmetadata: {name: dev, namespace: default}\nspec:\n  containers:\n"
             "  - name: app\n    image: app\n    resources:\n      requests: {cpu: 100m, \"%s\": 1}\n",
             resource);
    return ns_manifest_load_string(c, "pod.yaml", yaml, strlen(yaml));
}

/* Through a manifest: the 300-character name is refused naming the file, the field and the name; the 250-character
 * one loads, and a type offering it takes the pod. */
START_TEST(manifest_resource_names)
{
    char ok[256], bad[301];
    long_name(ok, 186, 63);
    long_name(bad, 11, 288);
    ns_cluster *c = ns_cluster_new();
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(load_pod_requesting(c, bad), NS_ERR_INVALID_CONFIG);
    const char *msg = ns_error_message();
    ck_assert_msg(strstr(msg, "pod.yaml:") != NULL && strstr(msg, bad) != NULL, "message: %s", msg);
    ns_cluster_free(c);

    sched_env e;
    sched_env_init(&e, true);
    ck_assert_int_eq(load_pod_requesting(e.c, ok), 0);
    ck_assert_int_eq(ns_res_get(&e.c->pods[0]->requests, ok), 1);
    ns_itype *t = fx_type(&e.set, "dev", 2000, 4 * FX_GI, 20, "kubernetes.io/arch=amd64", "z-a:on-demand:1.0");
    fx_type_extended(t, ok, 1);
    fx_pool(e.c, "default", 0, "");
    sched_env_run(&e);
    const ns_sched_claim *claim = fx_claim_of(e.c, &e.r, "dev");
    ck_assert_ptr_nonnull(claim);
    ck_assert_str_eq(claim->options[0].type->name, "dev");
    sched_env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-extended");
    TCase *tc = tcase_create("extended");
    tcase_add_test(tc, twelve_extended_resources_schedule);
    tcase_add_test(tc, twelfth_resource_limits_the_fit);
    tcase_add_test(tc, missing_twelfth_resource_is_named);
    tcase_add_test(tc, resource_name_limits);
    tcase_add_test(tc, manifest_resource_names);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
