/*
 * alibaba.so's credential chain through the core's loader against the emulator, one scenario per test (each test
 * forks, so it sets its own environment and loads the provider afresh): environment keys, RRSA with a refresh before
 * expiry and a refused token, the CLI profile, the credentials file, the ECS RAM role through the metadata service and
 * its session token, none at all; no secret in any log line or error.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ali_provider_fixture.h"
#include "errors/ns_error.h"
#include "json/host_json.h"
#include "log/ns_log.h"
#include "plugin/plugin_status.h"

START_TEST(test_credentials_environment)
{
    alf_env_static_keys();
    alf_start_logging();
    int before = alf_count("DescribeInstances");
    ns_plugin *p = alf_load();
    alf_call_api(p);
    ck_assert_int_eq(alf_count("DescribeInstances"), before + 1);
    char *text = alf_logged();
    ck_assert_msg(strstr(text, "\"auth-via\":\"environment\""), "the source is not logged: %s", text);
    alf_assert_no_secret(text, ALI_TEST_SECRET);
    free(text);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(test_credentials_rrsa_refreshed_before_expiry)
{
    alf_env_clear();
    char token_file[512];
    snprintf(token_file, sizeof(token_file), "%s/oidc-token", alf_tmpdir);
    alf_write_file(token_file, "emulator-oidc-token\n");
    setenv("ALIBABA_CLOUD_ROLE_ARN", "acs:ram::1234567890:role/karpenter", 1);
    setenv("ALIBABA_CLOUD_OIDC_PROVIDER_ARN", "acs:ram::1234567890:oidc-provider/ack-rrsa-c-demo", 1);
    setenv("ALIBABA_CLOUD_OIDC_TOKEN_FILE", token_file, 1);
    /* credentials living 182 s (181 to 182 once the Expiration's milliseconds are cut) are fetched again 3 minutes
     * before they expire: not at once, but at the next call 3 seconds later */
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/credentials", "{\"lifetime_s\":182}", NULL), 200);
    alf_start_logging();
    int before = alf_count("AssumeRoleWithOIDC");
    ns_plugin *p = alf_load();
    alf_call_api(p);
    ck_assert_int_eq(alf_count("AssumeRoleWithOIDC"), before + 1);
    alf_call_api(p);
    ck_assert_int_eq(alf_count("AssumeRoleWithOIDC"), before + 1);
    sleep(3);
    alf_call_api(p);
    ck_assert_int_eq(alf_count("AssumeRoleWithOIDC"), before + 2);
    /* an early refresh STS refuses leaves the current, still valid, credentials in use */
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/faults", "{\"kind\":\"sts_reject\",\"count\":1}", NULL),
                     200);
    sleep(3);
    alf_call_api(p);
    ck_assert_int_eq(alf_count("AssumeRoleWithOIDC"), before + 3);
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/credentials", "{\"lifetime_s\":3600}", NULL), 200);
    char *text = alf_logged();
    ck_assert(strstr(text, "refreshing alibaba credentials failed; the current ones are still valid"));
    alf_assert_no_secret(text, "emulator-oidc-token");
    alf_assert_no_secret(text, "token-"); /* the STS security tokens the emulator issues */
    ck_assert(strstr(text, "\"auth-via\":\"rrsa\""));
    free(text);
    ns_plugin_unload(p);
}
END_TEST

START_TEST(test_credentials_rrsa_rejected)
{
    alf_env_clear();
    char token_file[512];
    snprintf(token_file, sizeof(token_file), "%s/bad-token", alf_tmpdir);
    alf_write_file(token_file, "not-a-token");
    setenv("ALIBABA_CLOUD_ROLE_ARN", "acs:ram::1234567890:role/karpenter", 1);
    setenv("ALIBABA_CLOUD_OIDC_PROVIDER_ARN", "acs:ram::1234567890:oidc-provider/ack-rrsa-c-demo", 1);
    setenv("ALIBABA_CLOUD_OIDC_TOKEN_FILE", token_file, 1);
    ns_plugin *p = alf_load();
    int n = 0;
    int rc = ns_plugin_list_instances(p, alf_collect_none, &n);
    ck_assert_int_eq(rc, NS_ERR_UNAUTHORIZED);
    ck_assert_msg(strstr(ns_error_message(), "AssumeRoleWithOIDC") &&
                      strstr(ns_error_message(), "AuthenticationFail.OIDCToken.Invalid") &&
                      !strstr(ns_error_message(), "not-a-token"),
                  "%s", ns_error_message());
    ns_plugin_unload(p);
}
END_TEST

START_TEST(test_credentials_cli_profile)
{
    alf_env_clear();
    char dir[512], path[600];
    snprintf(dir, sizeof(dir), "%s/.aliyun", getenv("HOME"));
    mkdir(dir, 0700);
    snprintf(path, sizeof(path), "%s/config.json", dir);
    alf_write_file(path, "{\"current\":\"other\",\"profiles\":[{\"name\":\"other\",\"mode\":\"AK\",\"access_key_id\":"
                     "\"nobody\",\"access_key_secret\":\"nothing\"},{\"name\":\"karpenter\",\"mode\":\"AK\","
                     "\"access_key_id\":\"" ALI_TEST_ACCESS_KEY "\",\"access_key_secret\":\"" ALI_TEST_SECRET "\","
                     "\"region_id\":\"cn-hangzhou\"}]}");
    setenv("ALIBABA_CLOUD_PROFILE", "karpenter", 1);
    alf_start_logging();
    ns_plugin *p = alf_load();
    alf_call_api(p);
    char *text = alf_logged();
    ck_assert(strstr(text, "\"auth-via\":\"cli-profile\""));
    alf_assert_no_secret(text, ALI_TEST_SECRET);
    free(text);
    ns_plugin_unload(p);
    /* the profile "current" names is refused by the emulator: its key does not exist */
    unsetenv("ALIBABA_CLOUD_PROFILE");
    p = alf_load();
    int n = 0;
    ck_assert_int_eq(ns_plugin_list_instances(p, alf_collect_none, &n), NS_ERR_UNAUTHORIZED);
    ck_assert_msg(strstr(ns_error_message(), "InvalidAccessKeyId.NotFound"), "%s", ns_error_message());
    ns_plugin_unload(p);
    alf_write_file(path, "{\"current\":\"x\",\"profiles\":[{\"name\":\"x\",\"mode\":\"RsaKeyPair\"}]}");
    int rc;
    p = alf_load_with(NULL, &rc);
    ck_assert_int_eq(rc, NS_ERR_INVALID_CONFIG);
    ck_assert_msg(strstr(ns_error_message(), "mode 'RsaKeyPair' is not supported"), "%s", ns_error_message());
    unlink(path);
}
END_TEST

START_TEST(test_credentials_file)
{
    alf_env_clear();
    char path[512];
    snprintf(path, sizeof(path), "%s/credentials.ini", alf_tmpdir);
    alf_write_file(path, "[default]\ntype = access_key\naccess_key_id = nobody\naccess_key_secret = nothing\n\n"
                     "[karpenter]\ntype = access_key\naccess_key_id = " ALI_TEST_ACCESS_KEY "\n"
                     "access_key_secret = " ALI_TEST_SECRET "\n");
    setenv("ALIBABA_CLOUD_CREDENTIALS_FILE", path, 1);
    setenv("ALIBABA_CLOUD_PROFILE", "karpenter", 1);
    alf_start_logging();
    ns_plugin *p = alf_load();
    alf_call_api(p);
    char *text = alf_logged();
    ck_assert(strstr(text, "\"auth-via\":\"credentials-file\""));
    alf_assert_no_secret(text, ALI_TEST_SECRET);
    free(text);
    ns_plugin_unload(p);
    setenv("ALIBABA_CLOUD_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
    int rc;
    p = alf_load_with(NULL, &rc);
    ck_assert_int_eq(rc, NS_ERR_INVALID_CONFIG);
    ck_assert(strstr(ns_error_message(), "ALIBABA_CLOUD_CREDENTIALS_FILE /nonexistent/credentials"));
}
END_TEST

START_TEST(test_credentials_ecs_ram_role)
{
    alf_env_clear();
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/metadata", "{\"token_required\":true}", NULL), 200);
    setenv("ALIBABA_CLOUD_IMDSV1_DISABLED", "true", 1);
    unsetenv("ALIBABA_CLOUD_REGION_ID"); /* the region comes from the metadata service too */
    /* the role's credentials live 182 s: fetched again 3 minutes before they expire, as RRSA's are */
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/credentials", "{\"lifetime_s\":182}", NULL), 200);
    alf_start_logging();
    const char *const extra[] = {"metadata_endpoint", alf_emu.url, NULL};
    int before = alf_count("Metadata");
    ns_plugin *p = alf_load_with(extra, NULL);
    alf_call_api(p);
    int fetched = alf_count("Metadata");
    ck_assert_int_ge(fetched, before + 3); /* region-id, the role's name, its credentials */
    alf_call_api(p);
    ck_assert_int_eq(alf_count("Metadata"), fetched);
    sleep(3);
    alf_call_api(p);
    ck_assert_int_gt(alf_count("Metadata"), fetched);
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/credentials", "{\"lifetime_s\":3600}", NULL), 200);
    char *text = alf_logged();
    ck_assert(strstr(text, "\"auth-via\":\"ecs-ram-role\""));
    ck_assert(strstr(text, "\"region\":\"cn-hangzhou\""));
    alf_assert_no_secret(text, "token-");
    free(text);
    ns_plugin_unload(p);
    ck_assert_int_eq(emulator_control(&alf_emu, "/_emulator/metadata", "{\"token_required\":false}", NULL), 200);
}
END_TEST

START_TEST(test_credentials_none)
{
    alf_env_clear();
    setenv("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true", 1);
    int rc;
    alf_load_with(NULL, &rc);
    ck_assert_int_eq(rc, NS_ERR_UNAUTHORIZED);
    ck_assert_msg(strstr(ns_error_message(), "no credentials"), "%s", ns_error_message());
    alf_env_clear();
    setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", ALI_TEST_ACCESS_KEY, 1);
    alf_load_with(NULL, &rc);
    ck_assert_int_eq(rc, NS_ERR_INVALID_CONFIG);
    ck_assert(strstr(ns_error_message(), "ALIBABA_CLOUD_ACCESS_KEY_SECRET"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("alibaba_credentials");
    TCase *creds = tcase_create("credentials");
    tcase_set_timeout(creds, 120);
    tcase_add_test(creds, test_credentials_environment);
    tcase_add_test(creds, test_credentials_rrsa_refreshed_before_expiry);
    tcase_add_test(creds, test_credentials_rrsa_rejected);
    tcase_add_test(creds, test_credentials_cli_profile);
    tcase_add_test(creds, test_credentials_file);
    tcase_add_test(creds, test_credentials_ecs_ram_role);
    tcase_add_test(creds, test_credentials_none);
    suite_add_tcase(s, creds);
    return alf_run(s);
}
