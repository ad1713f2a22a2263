/* Hostile input (issue 16, "bad input gets a clear error and changes nothing"): quantities and durations at
 * Kubernetes' and Go's limits, checked sums, negative amounts, messages that quote what the user wrote. Each manifest
 * and timeline fixture in bad/ must fail with NS_ERR_INVALID_CONFIG and a message containing the expected text. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloud/instance_types.h"
#include "config/provider_options.h"
#include "config/scalar_parse.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "manifest/loader.h"
#include "model/checked.h"
#include "model/duration.h"
#include "model/quantity.h"
#include "model/resources.h"
#include "simulation/timeline.h"
#include "test_kinds.h"

static const struct {
    const char *file;
    const char *message; /* a part of the message, after FIXTURE_DIR "/bad/" */
} manifests[] = {
    {"sum-overflow.yaml", "sum-overflow.yaml:6: Pod default/huge: resource memory: 4Ei + 4Ei does not fit in 64 bits"},
    {"negative-request.yaml",
     "negative-request.yaml:14: Pod default/minus: spec.containers[1].resources.requests.cpu: \"-64\" is negative; it "
     "must be greater than or equal to 0"},
    {"negative-kube-reserved.yaml",
     "negative-kube-reserved.yaml:10: Provisioner old: spec.kubeletConfiguration.kubeReserved.memory: \"-1Gi\" is "
     "negative"},
    {"cpu-1e400.yaml",
     "cpu-1e400.yaml:11: Pod default/inf: spec.containers[0].resources.requests.cpu: invalid quantity \"1e400\": value "
     "does not fit in 64 bits at this unit"},
    {"expire-after-too-long.yaml",
     "expire-after-too-long.yaml:8: NodePool general: spec.template.spec.expireAfter: invalid duration \"2562048h\": "
     "longer than Go's largest duration, 2562047h47m16.854775807s"},
    {"nul-byte.yaml", "nul-byte.yaml:55: YAML syntax error: control characters are not allowed (byte 0x00 at column 54)"},
    {"billion-laughs.yaml", "billion-laughs.yaml:6: EC2NodeClass lol: spec.a4[7][8][8][8][9]: expands to more than "
                            "100000 values once aliases are expanded"},
    {"alias-depth.yaml", "alias-depth.yaml:6: EC2NodeClass deep: spec.d1[0][0]"},
    {"cron-never.yaml",
     "cron-never.yaml:14: NodePool general: schedule \"61 * * * *\": minute field \"61\": 61 is above the maximum 59"},
    {"grace-too-long.yaml", "grace-too-long.yaml:8: NodePool general: spec.template.spec.terminationGracePeriod: "
                            "invalid duration \"2562047788015h\": longer than Go's largest duration"},
};

/* A directory where a file is expected says so (libyaml's reader said "input error"). */
START_TEST(test_directory_as_file)
{
    ns_cluster *c = test_cluster_new();
    ck_assert_int_eq(ns_manifest_load_file(c, FIXTURE_DIR "/bad"), NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(), FIXTURE_DIR "/bad is a directory, not a manifest file");
    ns_timeline *t = NULL;
    ck_assert_int_eq(ns_timeline_load_file(FIXTURE_DIR "/bad", test_sim_kinds(), &t), NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(), FIXTURE_DIR "/bad is a directory, not a timeline file");
    ns_option_values *v = NULL;
    static const ns_option table[] = {{"region", NS_OPT_STRING, NULL, "r"}, {NULL, 0, NULL, NULL}};
    ck_assert_int_eq(ns_option_values_build("sim", table, FIXTURE_DIR "/bad", NULL, 0, &v), NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(), FIXTURE_DIR "/bad is a directory, not a options file");
    ns_cluster_free(c);
}
END_TEST

/* A NUL byte in an options file is reported on its own line, not line 1. */
START_TEST(test_options_nul_line)
{
    static const ns_option table[] = {{"region", NS_OPT_STRING, NULL, "r"}, {"zones", NS_OPT_STRING, NULL, "z"},
                                      {NULL, 0, NULL, NULL}};
    ns_option_values *v = NULL;
    ck_assert_int_eq(ns_option_values_build("sim", table, FIXTURE_DIR "/bad/options-nul.yaml", NULL, 0, &v),
                     NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(),
                     FIXTURE_DIR "/bad/options-nul.yaml:3:10: YAML syntax error: control characters are not allowed");
}
END_TEST

/* A 10 MB label value is refused as too long, and the message keeps its reason. */
START_TEST(test_huge_label_value)
{
    size_t n = 10u << 20;
    const char *head = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\n  labels:\n    team: ";
    const char *tail = "\nspec:\n  containers: [{name: a, image: x}]\n";
    size_t head_len = strlen(head), tail_len = strlen(tail);
    char *text = malloc(head_len + n + tail_len + 1);
    ck_assert_ptr_nonnull(text);
    memcpy(text, head, head_len);
    memset(text + head_len, 'a', n);
    memcpy(text + head_len + n, tail, tail_len + 1);
    ns_cluster *c = test_cluster_new();
    ck_assert_int_eq(ns_manifest_load_string(c, "big.yaml", text, strlen(text)), NS_ERR_INVALID_CONFIG);
    const char *msg = ns_error_message();
    ck_assert_msg(strstr(msg, "big.yaml:6: Pod: metadata.labels.team: label value \"aaaa"), "%s", msg);
    ck_assert_msg(strstr(msg, "aaa... (10485760 bytes)\" is invalid: must be no more than 63 characters"), "%s", msg);
    ck_assert_uint_eq(c->n_pods, 0);
    ns_cluster_free(c);
    free(text);
}
END_TEST

START_TEST(test_bad_manifest)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/bad/%s", FIXTURE_DIR, manifests[_i].file);
    ns_cluster *c = test_cluster_new();
    int rc = ns_manifest_load_file(c, path);
    ck_assert_int_eq(rc, NS_ERR_INVALID_CONFIG);
    const char *msg = ns_error_message();
    ck_assert_msg(strstr(msg, manifests[_i].message), "%s: got \"%s\"", manifests[_i].file, msg);
    ck_assert_msg(strncmp(msg, FIXTURE_DIR "/bad/", strlen(FIXTURE_DIR "/bad/")) == 0, "%s", msg);
    ns_cluster_free(c);
}
END_TEST

static const struct {
    const char *file;
    const char *message;
} timelines[] = {
    {"timeline-after-wraps.yaml",
     "timeline-after-wraps.yaml:3: timeline step 2: steps[1]: the step's time is later than Go's largest duration"},
    {"timeline-advance-too-long.yaml",
     "timeline-advance-too-long.yaml:2: timeline step 1: steps[0].advance: invalid duration \"2562047788015h\": longer "
     "than Go's largest duration"},
};

START_TEST(test_bad_timeline)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/bad/%s", FIXTURE_DIR, timelines[_i].file);
    ns_timeline *t = NULL;
    ck_assert_int_eq(ns_timeline_load_file(path, test_sim_kinds(), &t), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_null(t);
    const char *msg = ns_error_message();
    ck_assert_msg(strstr(msg, timelines[_i].message), "%s: got \"%s\"", timelines[_i].file, msg);
}
END_TEST

/* Go's time.Duration stops at INT64_MAX nanoseconds; so do durations here, to the millisecond. */
START_TEST(test_duration_bounds)
{
    int64_t ms = 0;
    ck_assert_int_eq(ns_duration_parse("2562047h47m16.854s", false, "d", &ms), 0);
    ck_assert_int_eq(ms, NS_DURATION_MAX_MS);
    ck_assert_int_eq(ns_duration_parse("2562047h47m16.854775807s", false, "d", &ms), 0);
    ck_assert_int_eq(ns_duration_parse("2562047h47m16.854775808s", false, "d", &ms), NS_ERR_INVALID_CONFIG);
    ck_assert_int_eq(ns_duration_parse("2562048h", false, "d", &ms), NS_ERR_INVALID_CONFIG);
    ck_assert_int_eq(ns_duration_parse("99999999999999999999999h", false, "d", &ms), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "longer than Go's largest duration"));
    /* Option durations go through the same parser; a bare number is seconds, multiplied without wrapping. */
    ck_assert_int_eq(ns_parse_duration_ms("18446744073709553", &ms), NS_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ns_parse_duration_ms("9223372036854775", &ms), NS_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ns_parse_duration_ms("9223372037", &ms), NS_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ns_parse_duration_ms("9223372036", &ms), NS_OK);
    ck_assert_int_eq(ms, 9223372036000);
    ck_assert_int_eq(ns_parse_duration_ms("2562048h", &ms), NS_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ns_parse_duration_ms("1.5s", &ms), NS_OK);
    ck_assert_int_eq(ms, 1500);
}
END_TEST

/* The one checked-arithmetic helper: exact or refused, and deadlines saturate. */
START_TEST(test_checked_arithmetic)
{
    int64_t r = 7;
    ck_assert(!ns_checked_add(INT64_MAX, 1, &r));
    ck_assert_int_eq(r, 7);
    ck_assert(!ns_checked_sub(INT64_MIN, 1, &r));
    ck_assert(!ns_checked_mul(INT64_C(18446744073709553) / 2, 1000, &r));
    ck_assert(ns_checked_add(-5, 3, &r));
    ck_assert_int_eq(r, -2);
    ck_assert_int_eq(ns_saturating_add(INT64_MAX - 1, 10), INT64_MAX);
    ck_assert_int_eq(ns_saturating_add(INT64_MIN + 1, -10), INT64_MIN);
    /* Resource sums: three containers of 4Ei memory do not wrap into a request that fits anywhere. */
    ns_res a = {0}, b = {0};
    ck_assert_int_eq(ns_res_set_text(&a, "memory", "3Ei", "a"), 0);
    ck_assert_int_eq(ns_res_set_text(&b, "memory", "4Ei", "b"), 0);
    ck_assert_int_eq(ns_res_add(&a, &b), 0);
    ck_assert_int_eq(ns_res_add(&a, &b), NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(), "resource memory: 7Ei + 4Ei does not fit in 64 bits");
    ns_res c = {0};
    ck_assert_int_eq(ns_res_set_text(&c, "example.com/dongle", "9223372036854775807", "c"), 0);
    ck_assert_int_eq(ns_res_add(&c, &c), NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(),
                     "resource example.com/dongle: 9223372036854775807 + 9223372036854775807 does not fit in 64 bits");
    ns_res_free(&a);
    ns_res_free(&b);
    ns_res_free(&c);
}
END_TEST

/* Quantities beyond an int64 at their unit are refused, quoting the text; 1Ei of millicores does not fit. */
START_TEST(test_quantity_bounds)
{
    int64_t v = 0;
    ck_assert_int_eq(ns_quantity_parse("8Ei", NS_QTY_UNITS, "q", &v, NULL), NS_ERR_INVALID_CONFIG);
    ck_assert_int_eq(ns_quantity_parse("7Ei", NS_QTY_UNITS, "q", &v, NULL), 0);
    ck_assert_int_eq(ns_quantity_parse("9223372036854775807", NS_QTY_UNITS, "q", &v, NULL), 0);
    ck_assert_int_eq(ns_quantity_parse("9223372036854775808", NS_QTY_UNITS, "q", &v, NULL), NS_ERR_INVALID_CONFIG);
    ck_assert_int_eq(ns_quantity_parse("9223372036854776", NS_QTY_MILLI, "q", &v, NULL), NS_ERR_INVALID_CONFIG);
    ck_assert_int_eq(ns_quantity_parse("1e400", NS_QTY_UNITS, "q", &v, NULL), NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(), "q: invalid quantity \"1e400\": value does not fit in 64 bits at this unit");
    ck_assert_int_eq(ns_quantity_parse("1e-400", NS_QTY_UNITS, "q", &v, NULL), 0);
    ck_assert_int_eq(v, 1);
}
END_TEST

/* A 10 KB option value is quoted in part, so the reason stays in the message; a wrapping duration is refused. */
START_TEST(test_option_messages)
{
    static const ns_option table[] = {{"launch_latency", NS_OPT_DURATION, "0s", "d"},
                                      {"count", NS_OPT_INT, "1", "n"},
                                      {NULL, 0, NULL, NULL}};
    ns_option_values *v = NULL;
    ns_plugin_setting wrap = {"launch_latency", "18446744073709553"};
    ck_assert_int_eq(ns_option_values_build("sim", table, NULL, &wrap, 1, &v), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_null(v);
    ck_assert_str_eq(ns_error_message(), "setting: option 'launch_latency' of provider sim: invalid duration "
                                         "\"18446744073709553\": 18446744073709553 seconds is longer than Go's largest "
                                         "duration, 2562047h47m16.854775807s");
    char *big = malloc(10241);
    memset(big, '7', 10240);
    big[10240] = '\0';
    big[5000] = 'x';
    ns_plugin_setting longv[] = {{"count", big}, {"launch_latency", big}};
    for (size_t i = 0; i < 2; i++) {
        ck_assert_int_eq(ns_option_values_build("sim", table, NULL, &longv[i], 1, &v), NS_ERR_INVALID_CONFIG);
        const char *msg = ns_error_message();
        ck_assert_msg(strstr(msg, "... (10240 bytes)"), "%s", msg);
        ck_assert_msg(strstr(msg, i == 0 ? "which is not a whole number" : "longer than Go's largest duration"), "%s",
                      msg);
    }
    free(big);
}
END_TEST

/* What a provider reports is checked before the core uses it: negative amounts, labels Kubernetes would refuse or that
 * contradict the type's own name, offerings of a struct_size too small to index. */
START_TEST(test_provider_data)
{
    ns_label good[] = {{"node.kubernetes.io/instance-type", "c6i.large"}};
    ns_label wrong[] = {{"node.kubernetes.io/instance-type", "m5.large"}};
    ns_label bad_key[] = {{"example.com/a/b", "x"}};
    ns_offering offers[] = {
        {sizeof(ns_offering), "z1", "on-demand", 0.1, true, NULL, NULL, 0, NS_RESERVATION_CAPACITY_UNKNOWN}};
    ns_instance_type t = {.struct_size = sizeof(t), .name = "c6i.large", .labels = good, .n_labels = 1,
                          .offerings = offers, .n_offerings = 1};
    t.capacity.cpu_milli = 2000;
    t.capacity.memory_bytes = INT64_MAX;
    t.kube_reserved.memory_bytes = INT64_MAX;
    t.system_reserved.memory_bytes = INT64_MAX; /* reservations summed without wrapping: allocatable is 0 */
    ns_itype it;
    ck_assert_int_eq(ns_itype_copy(&t, &it), 0);
    ck_assert_int_eq(it.allocatable.memory_bytes, 0);
    ns_itype_free(&it);
    t.system_reserved.cpu_milli = -64000;
    ck_assert_int_eq(ns_itype_copy(&t, &it), NS_ERR_INTERNAL);
    ck_assert_str_eq(ns_error_message(), "instance type c6i.large: system_reserved cpu is negative (-64000)");
    t.system_reserved.cpu_milli = 0;
    t.labels = wrong;
    ck_assert_int_eq(ns_itype_copy(&t, &it), NS_ERR_INTERNAL);
    ck_assert_str_eq(ns_error_message(), "instance type c6i.large: label node.kubernetes.io/instance-type is "
                                         "\"m5.large\", not the type's name");
    t.labels = bad_key;
    ck_assert_int_eq(ns_itype_copy(&t, &it), NS_ERR_INTERNAL);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "label key \"example.com/a/b\" is invalid"));
    t.labels = good;
    offers[0].struct_size = 4;
    ck_assert_int_eq(ns_itype_copy(&t, &it), NS_ERR_INTERNAL);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "offering struct_size 4 is smaller than"));
}
END_TEST

int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    Suite *s = suite_create("bad-input");
    TCase *tc = tcase_create("bad-input");
    tcase_add_loop_test(tc, test_bad_manifest, 0, (int)(sizeof(manifests) / sizeof(manifests[0])));
    tcase_add_loop_test(tc, test_bad_timeline, 0, (int)(sizeof(timelines) / sizeof(timelines[0])));
    tcase_add_test(tc, test_directory_as_file);
    tcase_add_test(tc, test_options_nul_line);
    tcase_add_test(tc, test_huge_label_value);
    tcase_add_test(tc, test_duration_bounds);
    tcase_add_test(tc, test_provider_data);
    tcase_add_test(tc, test_checked_arithmetic);
    tcase_add_test(tc, test_quantity_bounds);
    tcase_add_test(tc, test_option_messages);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
