/* The loader's checks, each against a real shared object built to break one rule (test_plugin.c). */
#include <check.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cloud/instance_types.h"
#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "plugin/plugin_loader.h"

static char path_buf[4096];

static const char *variant(const char *name)
{
    snprintf(path_buf, sizeof(path_buf), "%s/%s.so", TP_DIR, name);
    return path_buf;
}

static int load(const char *name, const ns_plugin_load_params *params, ns_plugin **out)
{
    return ns_plugin_load_file(variant(name), params, out);
}

#define ck_assert_error_has(needle)                                                                                    \
    ck_assert_msg(strstr(ns_error_message(), (needle)) != NULL, "error '%s' lacks '%s'", ns_error_message(), (needle))

static char *write_temp(const char *content)
{
    char *path = strdup("/tmp/nodesmith-loader-XXXXXX.yaml");
    int fd = mkstemps(path, 5);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
    close(fd);
    return path;
}

/* A private copy of a variant in a fresh directory, with chosen modes. */
static char *copy_to_temp_dir(const char *name, mode_t dir_mode, mode_t file_mode, char *dir_out, size_t dir_len)
{
    snprintf(dir_out, dir_len, "/tmp/nodesmith-plugins-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir_out));
    char *dst = malloc(4096);
    snprintf(dst, 4096, "%s/%s.so", dir_out, name);
    FILE *in = fopen(variant(name), "rb");
    FILE *out = fopen(dst, "wb");
    ck_assert_ptr_nonnull(in);
    ck_assert_ptr_nonnull(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
    ck_assert_int_eq(chmod(dst, file_mode), 0);
    ck_assert_int_eq(chmod(dir_out, dir_mode), 0);
    return dst;
}

START_TEST(good_plugin_loads_and_lists)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("good", NULL, &p), NS_OK);
    ck_assert_str_eq(ns_plugin_name(p), "good");
    ck_assert_str_eq(ns_plugin_version(p), "0.0.1");
    ck_assert_uint_eq(ns_plugin_abi_version(p), NS_PROVIDER_ABI_VERSION);
    ns_nodeclass nc = {.struct_size = sizeof(nc), .name = "default", .spec = NULL};
    ns_itype_set set;
    ck_assert_int_eq(ns_itype_set_load(p, &nc, &set), NS_OK);
    ck_assert_uint_eq(set.n, 1);
    ck_assert_str_eq(set.items[0].name, "tp.small");
    ck_assert_str_eq(ns_itype_label(&set.items[0], "kubernetes.io/arch"), "amd64");
    ck_assert_int_eq(set.items[0].allocatable.cpu_milli, 1900);
    ck_assert_int_eq(set.items[0].allocatable.memory_bytes, (4LL << 30) - (512LL << 20));
    ns_itype_set_free(&set);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(config_file_reaches_provider)
{
    char *cfg = write_temp("# provider options\nanswer: 5\ngreeting: hello\nenabled: yes\ninterval: 1m30s\n");
    ns_plugin_load_params params = {.config_path = cfg};
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("good", &params, &p), NS_OK);
    ns_nodeclass nc = {.struct_size = sizeof(nc), .name = "default"};
    ns_itype_set set;
    ck_assert_int_eq(ns_itype_set_load(p, &nc, &set), NS_OK);
    ck_assert_int_eq(set.items[0].capacity.cpu_milli, 2005);
    ns_itype_set_free(&set);
    ns_plugin_unload(p);
    unlink(cfg);
    free(cfg);
}
END_TEST

START_TEST(settings_override_config_file)
{
    char *cfg = write_temp("answer: 5\n");
    ns_plugin_setting settings[] = {{"answer", "7"}};
    ns_plugin_load_params params = {.config_path = cfg, .settings = settings, .n_settings = 1};
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("good", &params, &p), NS_OK);
    ns_nodeclass nc = {.struct_size = sizeof(nc), .name = "default"};
    ns_itype_set set;
    ck_assert_int_eq(ns_itype_set_load(p, &nc, &set), NS_OK);
    ck_assert_int_eq(set.items[0].capacity.cpu_milli, 2007);
    ns_itype_set_free(&set);
    ns_plugin_unload(p);
    unlink(cfg);
    free(cfg);
}
END_TEST

START_TEST(unknown_option_names_file_line_and_key)
{
    char *cfg = write_temp("answer: 5\n\nanwser: 6\n");
    ns_plugin_load_params params = {.config_path = cfg};
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("good", &params, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_null(p);
    char where[4200];
    snprintf(where, sizeof(where), "%s:3: unknown option 'anwser' for provider good", cfg);
    ck_assert_error_has(where);
    ck_assert_error_has("known options: answer, greeting, enabled, interval");
    unlink(cfg);
    free(cfg);
}
END_TEST

START_TEST(option_of_wrong_type_is_refused)
{
    static const char *const bad[] = {"answer: many\n", "enabled: perhaps\n", "interval: 5 minutes\n",
                                      "answer:\n  nested: 1\n"};
    static const char *const expect[] = {"option 'answer' of provider good is 'many', which is not a whole number",
                                         "'perhaps', which is not true or false",
                                         "option 'interval' of provider good: invalid duration \"5 minutes\": unknown unit",
                                         ":1: option 'answer' must be a single value"};
    for (size_t i = 0; i < 4; i++) {
        char *cfg = write_temp(bad[i]);
        ns_plugin_load_params params = {.config_path = cfg};
        ns_plugin *p = NULL;
        ck_assert_int_eq(load("good", &params, &p), NS_ERR_INVALID_CONFIG);
        ck_assert_error_has(expect[i]);
        unlink(cfg);
        free(cfg);
    }
}
END_TEST

START_TEST(yaml_syntax_error_names_line)
{
    char *cfg = write_temp("answer: 5\ngreeting: [unclosed\n");
    ns_plugin_load_params params = {.config_path = cfg};
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("good", &params, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("YAML syntax error");
    ck_assert_error_has(cfg);
    unlink(cfg);
    free(cfg);
}
END_TEST

START_TEST(unknown_setting_is_refused)
{
    ns_plugin_setting settings[] = {{"colour", "blue"}};
    ns_plugin_load_params params = {.settings = settings, .n_settings = 1};
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("good", &params, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("unknown option 'colour' for provider good");
}
END_TEST

START_TEST(missing_entry_symbol_is_refused)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("no_entry", NULL, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_null(p);
    ck_assert_error_has("no_entry.so: missing entry symbol 'nodesmith_provider_entry'");
}
END_TEST

START_TEST(unsupported_abi_versions_are_refused)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("abi99", NULL, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("abi99.so: built for provider ABI 99; this nodesmith supports 1 to 7");
    ck_assert_int_eq(load("abi0", NULL, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("built for provider ABI 0");
}
END_TEST

START_TEST(table_too_small_is_refused)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("small_table", NULL, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("small_table.so: provider table is 40 bytes, too small for ABI 7 (needs at least 176)");
}
END_TEST

START_TEST(missing_required_method_is_refused)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("no_launch", NULL, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("no_launch.so: required method 'launch' (ABI 1) is NULL");
}
END_TEST

START_TEST(failing_init_is_refused_with_its_reason)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("init_fails", NULL, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_null(p);
    ck_assert_error_has("init_fails.so: provider good failed to initialise: option answer: the account is closed");
}
END_TEST

START_TEST(failing_init_with_partial_state_is_destroyed)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("init_fails_late", NULL, &p), NS_ERR_UNAUTHORIZED);
    ck_assert_error_has("credentials rejected by the cloud");
    void *h = dlopen(variant("init_fails_late"), RTLD_NOW | RTLD_NOLOAD);
    ck_assert_ptr_nonnull(h);
    int *calls = dlsym(h, "tp_destroy_calls");
    ck_assert_ptr_nonnull(calls);
    ck_assert_int_eq(*calls, 1);
}
END_TEST

START_TEST(bad_option_table_is_refused)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("bad_option", NULL, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("option 'answer' has default 'forty-two', which is not a whole number");
}
END_TEST

START_TEST(name_must_match_file)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(ns_plugin_load(TP_DIR, "misnamed", NULL, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_null(p);
    ck_assert_error_has("declares provider name 'other', expected 'misnamed'");
    ck_assert_int_eq(ns_plugin_load(TP_DIR, "absent", NULL, &p), NS_ERR_NOT_FOUND);
    ck_assert_error_has("provider absent: no file");
    ck_assert_int_eq(ns_plugin_load(TP_DIR, "../good", NULL, &p), NS_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(world_writable_file_is_refused)
{
    char dir[64];
    char *so = copy_to_temp_dir("good", 0755, 0666, dir, sizeof(dir));
    ns_plugin *p = NULL;
    ck_assert_int_eq(ns_plugin_load(dir, "good", NULL, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("is writable by everyone (mode 0666)");
    chmod(so, 0620);
    ck_assert_int_eq(ns_plugin_load(dir, "good", NULL, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("is writable by its group");
    chmod(so, 0755);
    ck_assert_int_eq(ns_plugin_load(dir, "good", NULL, &p), NS_OK);
    ns_plugin_unload(p);
    unlink(so);
    rmdir(dir);
    free(so);
}
END_TEST

START_TEST(writable_directory_is_refused)
{
    char dir[64];
    char *so = copy_to_temp_dir("good", 0777, 0755, dir, sizeof(dir));
    ns_plugin *p = NULL;
    ck_assert_int_eq(ns_plugin_load(dir, "good", NULL, &p), NS_ERR_INVALID_CONFIG);
    ck_assert_error_has("plugins directory");
    ck_assert_error_has("is writable by everyone");
    unlink(so);
    rmdir(dir);
    free(so);
}
END_TEST

START_TEST(v1_provider_falls_back_for_get)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("v1", NULL, &p), NS_OK);
    ck_assert_uint_eq(ns_plugin_abi_version(p), 1);
    ns_instance inst;
    ck_assert_int_eq(ns_plugin_get_instance(p, "tp:///zone-a/i-2", &inst), NS_OK);
    ck_assert_str_eq(inst.provider_id, "tp:///zone-a/i-2");
    ck_assert_uint_eq(inst.struct_size, sizeof(ns_instance));
    ck_assert_int_eq(ns_plugin_get_instance(p, "tp:///zone-a/i-9", &inst), NS_ERR_NOT_FOUND);
    ck_assert_error_has("no such instance");
    ns_nodeclass nc = {.struct_size = sizeof(nc), .name = "default"};
    bool drifted = true;
    char reason[64];
    ck_assert_int_eq(ns_plugin_check_drift(p, &inst, &nc, &drifted, reason, sizeof(reason)), NS_ERR_UNSUPPORTED);
    ck_assert(!drifted);
    ck_assert_error_has("provider good (ABI 1) does not support check_drift");
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_CLEAR};
    ck_assert_int_eq(ns_plugin_test_inject_fault(p, &f), NS_ERR_UNSUPPORTED);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(v2_get_uses_provider_method)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("good", NULL, &p), NS_OK);
    ns_instance inst;
    /* The good provider's own get says "not found" even for i-2, which its list has: proof the core called it. */
    ck_assert_int_eq(ns_plugin_get_instance(p, "tp:///zone-a/i-2", &inst), NS_ERR_NOT_FOUND);
    ck_assert_error_has("provider good: get_instance tp:///zone-a/i-2: instance tp:///zone-a/i-2 not found");
    ns_plugin_unload(p);
}
END_TEST

START_TEST(errors_name_provider_method_and_object)
{
    ns_plugin *p = NULL;
    ck_assert_int_eq(load("good", NULL, &p), NS_OK);
    ns_nodeclass nc = {.struct_size = sizeof(nc), .name = "default"};
    ns_launch_option opt = {.struct_size = sizeof(opt), .instance_type = "tp.small", .zone = "zone-a",
                            .capacity_type = "on-demand", .price_per_hour = 0.5};
    ns_launch_request req = {.struct_size = sizeof(req), .nodeclaim_name = "default-abcde", .client_token = "t1",
                             .nodeclass = &nc, .options = &opt, .n_options = 1};
    ns_launch_result res;
    ck_assert_int_eq(ns_plugin_launch(p, &req, &res), NS_ERR_INSUFFICIENT_CAPACITY);
    ck_assert_str_eq(ns_error_message(), "provider good: launch default-abcde: no capacity for default-abcde");
    req.client_token = "";
    ck_assert_int_eq(ns_plugin_launch(p, &req, &res), NS_ERR_INVALID_ARGUMENT);
    bool gone = false;
    ck_assert_int_eq(ns_plugin_terminate(p, "tp:///zone-a/i-1", &gone), NS_OK);
    ck_assert(gone);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(scan_reports_each_plugin)
{
    char dir[64];
    char *good = copy_to_temp_dir("good", 0700, 0755, dir, sizeof(dir));
    char cmd[8600];
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s/' && chmod 0755 '%s/abi99.so'", variant("abi99"), dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    ns_plugin_scan_entry *entries = NULL;
    size_t n = 0;
    ck_assert_int_eq(ns_plugin_scan_dir(dir, 0, &entries, &n), NS_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(entries[0].name, "abi99");
    ck_assert_int_eq(entries[0].code, NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(entries[0].error, "built for provider ABI 99"));
    ck_assert_str_eq(entries[1].name, "good");
    ck_assert_int_eq(entries[1].code, NS_OK);
    ck_assert_str_eq(entries[1].version, "0.0.1");
    ns_plugin_scan_free(entries, n);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    free(good);
    ck_assert_int_eq(ns_plugin_scan_dir("/nonexistent/plugins.d", 0, &entries, &n), NS_ERR_NOT_FOUND);
}
END_TEST

START_TEST(several_providers_load_at_once)
{
    ns_plugin_setting five[] = {{"answer", "5"}};
    ns_plugin_load_params params = {.settings = five, .n_settings = 1};
    ns_plugin *a = NULL, *b = NULL, *c = NULL;
    ck_assert_int_eq(load("good", &params, &a), NS_OK);
    ck_assert_int_eq(load("v1", NULL, &b), NS_OK);
    ck_assert_int_eq(load("misnamed", NULL, &c), NS_OK);
    ns_nodeclass nc = {.struct_size = sizeof(nc), .name = "default"};
    ns_itype_set sa, sb;
    ck_assert_int_eq(ns_itype_set_load(a, &nc, &sa), NS_OK);
    ck_assert_int_eq(ns_itype_set_load(b, &nc, &sb), NS_OK);
    /* Each module has its own state and options: the option set on one does not leak into the other. */
    ck_assert_int_eq(sa.items[0].capacity.cpu_milli, 2005);
    ck_assert_int_eq(sb.items[0].capacity.cpu_milli, 2000);
    ck_assert_uint_eq(ns_plugin_abi_version(a), NS_PROVIDER_ABI_VERSION);
    ck_assert_uint_eq(ns_plugin_abi_version(b), 1);
    ck_assert_str_eq(ns_plugin_name(c), "other");
    ns_itype_set_free(&sa);
    ns_itype_set_free(&sb);
    ns_plugin_unload(b);
    /* Unloading one leaves the others working. */
    ns_instance inst;
    ck_assert_int_eq(ns_plugin_get_instance(a, "tp:///zone-a/i-1", &inst), NS_ERR_NOT_FOUND);
    ck_assert_int_eq(ns_plugin_list_instances(c, NULL, NULL), NS_ERR_INVALID_ARGUMENT);
    ns_plugin_unload(a);
    ns_plugin_unload(c);
}
END_TEST

int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    Suite *s = suite_create("loader");
    TCase *tc = tcase_create("loader");
    tcase_add_test(tc, good_plugin_loads_and_lists);
    tcase_add_test(tc, config_file_reaches_provider);
    tcase_add_test(tc, settings_override_config_file);
    tcase_add_test(tc, unknown_option_names_file_line_and_key);
    tcase_add_test(tc, option_of_wrong_type_is_refused);
    tcase_add_test(tc, yaml_syntax_error_names_line);
    tcase_add_test(tc, unknown_setting_is_refused);
    tcase_add_test(tc, missing_entry_symbol_is_refused);
    tcase_add_test(tc, unsupported_abi_versions_are_refused);
    tcase_add_test(tc, table_too_small_is_refused);
    tcase_add_test(tc, missing_required_method_is_refused);
    tcase_add_test(tc, failing_init_is_refused_with_its_reason);
    tcase_add_test(tc, failing_init_with_partial_state_is_destroyed);
    tcase_add_test(tc, bad_option_table_is_refused);
    tcase_add_test(tc, name_must_match_file);
    tcase_add_test(tc, world_writable_file_is_refused);
    tcase_add_test(tc, writable_directory_is_refused);
    tcase_add_test(tc, v1_provider_falls_back_for_get);
    tcase_add_test(tc, v2_get_uses_provider_method);
    tcase_add_test(tc, errors_name_provider_method_and_object);
    tcase_add_test(tc, scan_reports_each_plugin);
    tcase_add_test(tc, several_providers_load_at_once);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
