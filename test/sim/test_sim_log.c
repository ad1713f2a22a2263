/* The providers' typed log lines (providers/common/prov_log.c): the sim's lines through the core's logger carry
 * counts as JSON numbers (ABI 7's log_typed), and a host older than ABI 7 (struct_size without log_typed) gets the
 * same fields as strings through log, log_typed never called even when the slot holds a pointer. */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "prov_log.h"
#include "sim_fixture.h"

/* The first JSON log line in text whose message is message; the caller deletes it. */
static cJSON *line_of(const char *text, const char *message)
{
    for (const char *p = text; p && *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        cJSON *o = cJSON_ParseWithLength(p, len);
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "message");
        if (cJSON_IsString(m) && strcmp(m->valuestring, message) == 0)
            return o;
        cJSON_Delete(o);
        p = end ? end + 1 : NULL;
    }
    ck_abort_msg("no log line \"%s\" in:\n%s", message, text);
    return NULL;
}

static void write_file(char *path, const char *text)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_ge(fputs(text, f), 0);
    ck_assert_int_eq(fclose(f), 0);
}

/* Two priced types and one the sim cannot price (no offerings, not in the built-in catalog): the ready line counts 2
 * types, the warning counts 1 dropped, both as JSON integers; strings stay strings. */
START_TEST(test_sim_lines_are_typed)
{
    char path[] = "/tmp/sim-log-XXXXXX";
    write_file(path, "[{\"name\": \"t1.large\", \"vcpu\": 2, \"memory_mib\": 8192, \"arch\": \"amd64\",\n"
                     "  \"offerings\": [{\"zone\": \"us-west-2a\", \"capacity_type\": \"on-demand\",\n"
                     "                 \"price\": 0.1}]},\n"
                     " {\"name\": \"t2.large\", \"vcpu\": 2, \"memory_mib\": 8192, \"arch\": \"amd64\",\n"
                     "  \"offerings\": [{\"zone\": \"us-west-2a\", \"capacity_type\": \"on-demand\",\n"
                     "                 \"price\": 0.2}]},\n"
                     " {\"name\": \"zz9.unpriced\", \"vcpu\": 2, \"memory_mib\": 8192, \"arch\": \"amd64\"}]\n");
    char *text = NULL;
    size_t len = 0;
    FILE *log = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(log);
    ns_log_set_output(log);
    ns_log_set_level(NS_LOG_INFO);
    ns_plugin *p = sim_fx_load("catalog", path, NULL);
    ns_log_set_output(stderr);
    ns_log_set_level(NS_LOG_ERROR);
    ck_assert_int_eq(fclose(log), 0);
    unlink(path);

    cJSON *ready = line_of(text, "simulated cloud ready");
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(ready, "instance-types");
    ck_assert_msg(cJSON_IsNumber(types) && types->valuedouble == 2, "instance-types: %s", text);
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ready, "region")));
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ready, "violation")));
    cJSON *dropped = line_of(text, "dropped instance types without an on-demand price");
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(dropped, "count");
    ck_assert_msg(cJSON_IsNumber(count) && count->valuedouble == 1, "count: %s", text);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(dropped, "level")->valuestring, "WARN");
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(dropped, "catalog")));
    cJSON_Delete(ready);
    cJSON_Delete(dropped);
    free(text);
    ns_plugin_unload(p);
}
END_TEST

/* ---- prov_log over hand-made hosts. */

static struct seen {
    int log_calls, typed_calls;
    char keys[8][32], values[8][64];
    size_t n;
    const ns_log_field *typed;
    size_t n_typed;
} seen;

static void fake_log(ns_host_ctx *ctx, ns_log_level level, const char *message, const ns_label *fields, size_t n)
{
    (void)ctx;
    ck_assert_int_eq(level, NS_LOG_WARN);
    ck_assert_str_eq(message, "m");
    seen.log_calls++;
    seen.n = n;
    for (size_t i = 0; i < n && i < 8; i++) {
        snprintf(seen.keys[i], sizeof(seen.keys[i]), "%s", fields[i].key);
        snprintf(seen.values[i], sizeof(seen.values[i]), "%s", fields[i].value);
    }
}

static void fake_log_typed(ns_host_ctx *ctx, ns_log_level level, const char *message, const ns_log_field *fields,
                           size_t n)
{
    (void)ctx;
    ck_assert_int_eq(level, NS_LOG_WARN);
    ck_assert_str_eq(message, "m");
    seen.typed_calls++;
    seen.typed = fields;
    seen.n_typed = n;
}

static char *fake_json_print(const ns_json *value)
{
    (void)value;
    char *s = malloc(8);
    ck_assert_ptr_nonnull(s);
    memcpy(s, "{\"a\":1}", 8);
    return s;
}

static ns_host fake_host(uint32_t struct_size)
{
    ns_host h;
    memset(&h, 0, sizeof(h));
    h.abi_version = struct_size < sizeof(ns_host) ? 6 : 7;
    h.struct_size = struct_size;
    h.log = fake_log;
    h.log_typed = fake_log_typed; /* present in memory either way: struct_size alone says whether it may be used */
    h.json_print = fake_json_print;
    h.free = free;
    return h;
}

static const int some_json; /* any address: fake_json_print does not read it */

static void fields(ns_log_field out[6])
{
    out[0] = prov_log_str("name", "x");
    out[1] = prov_log_int("count", INT64_C(-9007199254740993));
    out[2] = prov_log_bool("spot", true);
    out[3] = (ns_log_field){.key = "ratio", .type = NS_LOG_FIELD_NUMBER, .value.number = 0.5};
    out[4] = (ns_log_field){.key = "ref", .type = NS_LOG_FIELD_JSON, .value.json = (const ns_json *)&some_json};
    out[5] = prov_log_str("empty", NULL);
}

START_TEST(test_older_host_gets_strings)
{
    memset(&seen, 0, sizeof(seen));
    ns_host h = fake_host((uint32_t)offsetof(ns_host, log_typed));
    ns_log_field f[6];
    fields(f);
    prov_log(&h, NULL, NS_LOG_WARN, "m", f, 6);
    ck_assert_int_eq(seen.typed_calls, 0);
    ck_assert_int_eq(seen.log_calls, 1);
    ck_assert_uint_eq(seen.n, 6);
    const char *keys[] = {"name", "count", "spot", "ratio", "ref", "empty"};
    const char *values[] = {"x", "-9007199254740993", "true", "0.5", "{\"a\":1}", ""};
    for (size_t i = 0; i < 6; i++) {
        ck_assert_str_eq(seen.keys[i], keys[i]);
        ck_assert_str_eq(seen.values[i], values[i]);
    }
}
END_TEST

START_TEST(test_abi7_host_gets_typed_fields)
{
    memset(&seen, 0, sizeof(seen));
    ns_host h = fake_host((uint32_t)sizeof(ns_host));
    ns_log_field f[6];
    fields(f);
    prov_log(&h, NULL, NS_LOG_WARN, "m", f, 6);
    ck_assert_int_eq(seen.log_calls, 0);
    ck_assert_int_eq(seen.typed_calls, 1);
    ck_assert_ptr_eq(seen.typed, f);
    ck_assert_uint_eq(seen.n_typed, 6);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim-log");
    TCase *tc = tcase_create("log");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sim_lines_are_typed);
    tcase_add_test(tc, test_older_host_gets_strings);
    tcase_add_test(tc, test_abi7_host_gets_typed_fields);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
