/*
 * aws.so over HTTPS, through the core's loader and host (the real HTTP client): the emulator serves TLS with a
 * certificate a generated test CA signed (test/pki). Without that CA trusted, a call fails at once as a certificate
 * error (not "unreachable or timed out", not retried); trusted through AWS_CA_BUNDLE (aws.so's own setting) or
 * $NODESMITH_CA_BUNDLE (the host's, for every provider), calls succeed, over reused connections, with a User-Agent
 * naming nodesmith and aws.so.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_emulator.h"
#include "emulator_json.h"
#include "errors/ns_error.h"
#include "http/http_client.h"
#include "log/ns_log.h"
#include "plugin/plugin_loader.h"

static emulator emu;
static char ca_pem[512], other_ca_pem[512];

static int count_instance(void *ctx, const ns_instance *inst)
{
    (*(int *)ctx)++;
    return 0;
}

static ns_plugin *load_aws(void)
{
    ns_plugin *plugin = NULL;
    ns_plugin_setting settings[] = {{"cluster_name", "demo"}, {"request_timeout", "5s"}, {"max_attempts", "4"}};
    ns_plugin_load_params params = {.settings = settings, .n_settings = 3};
    ck_assert_msg(ns_plugin_load_file(getenv("AWS_PLUGIN"), &params, &plugin) == NS_OK, "load: %s",
                  ns_error_message());
    return plugin;
}

static cJSON *emulator_state(void)
{
    return emulator_get_json(&emu, "/_emulator/state");
}

static int api_requests(void)
{
    cJSON *st = emulator_state();
    int n = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(st, "requests"))
        n += r->valueint;
    cJSON_Delete(st);
    return n;
}

START_TEST(untrusted_certificate_is_a_certificate_error_not_a_timeout)
{
    unsetenv("AWS_CA_BUNDLE");
    unsetenv(NS_HTTP_CA_BUNDLE_ENV);
    ns_plugin *plugin = load_aws();
    int n = 0;
    int rc = ns_plugin_list_instances(plugin, count_instance, &n);
    const char *m = ns_error_message();
    ck_assert_msg(rc == NS_ERR_INVALID_CONFIG, "list_instances gave %s: %s", ns_err_name(rc), m);
    ck_assert_msg(strstr(m, "TLS certificate error") && strstr(m, emu.url), "%s", m);
    ck_assert_msg(!strstr(m, "unreachable") && !strstr(m, "timed out") && !strstr(m, "attempts"), "%s", m);
    ck_assert_int_eq(api_requests(), 0);
    /* An AWS_CA_BUNDLE of another CA: still refused, and the message names the bundle aws.so passed. */
    setenv("AWS_CA_BUNDLE", other_ca_pem, 1);
    rc = ns_plugin_list_instances(plugin, count_instance, &n);
    m = ns_error_message();
    ck_assert_msg(rc == NS_ERR_INVALID_CONFIG && strstr(m, "other-ca.pem") && strstr(m, "provider's CA bundle"), "%s",
                  m);
    unsetenv("AWS_CA_BUNDLE");
    ns_plugin_unload(plugin);
}
END_TEST

static void check_calls_succeed(void)
{
    ns_plugin *plugin = load_aws();
    cJSON *before = emulator_state();
    int connections_before = cJSON_GetObjectItemCaseSensitive(before, "connections")->valueint;
    cJSON_Delete(before);
    int requests_before = api_requests();
    for (int i = 0; i < 4; i++) {
        int n = 0;
        int rc = ns_plugin_list_instances(plugin, count_instance, &n);
        ck_assert_msg(rc == NS_OK, "list_instances over HTTPS: %s", ns_error_message());
    }
    cJSON *st = emulator_state();
    int requests = api_requests() - requests_before;
    int connections = cJSON_GetObjectItemCaseSensitive(st, "connections")->valueint - connections_before;
    /* the state requests of this test open their own connections (one each, from another client) */
    fprintf(stderr, "tls: %d API requests over %d connections (3 of them the test's own state requests)\n", requests,
            connections);
    ck_assert_int_ge(requests, 4);
    ck_assert_int_le(connections, 1 + 3);
    const cJSON *agent;
    bool named = false;
    cJSON_ArrayForEach(agent, cJSON_GetObjectItemCaseSensitive(st, "user_agents"))
        named |= strncmp(agent->string, "nodesmith/0.1.0 aws/", 20) == 0;
    ck_assert_msg(named, "no request with User-Agent nodesmith/0.1.0 aws/<version>");
    cJSON_Delete(st);
    ns_plugin_unload(plugin);
}

START_TEST(aws_ca_bundle_is_trusted)
{
    unsetenv(NS_HTTP_CA_BUNDLE_ENV);
    setenv("AWS_CA_BUNDLE", ca_pem, 1);
    check_calls_succeed();
    unsetenv("AWS_CA_BUNDLE");
}
END_TEST

START_TEST(host_ca_bundle_is_trusted_by_every_provider)
{
    unsetenv("AWS_CA_BUNDLE");
    setenv(NS_HTTP_CA_BUNDLE_ENV, ca_pem, 1);
    check_calls_succeed();
    unsetenv(NS_HTTP_CA_BUNDLE_ENV);
}
END_TEST

int main(void)
{
    const char *pki = getenv("NS_TEST_PKI");
    if (!getenv("AWS_PLUGIN") || !pki)
        return EXIT_FAILURE;
    char cert[512], key[512];
    snprintf(cert, sizeof(cert), "%s/server.pem", pki);
    snprintf(key, sizeof(key), "%s/server.key", pki);
    snprintf(ca_pem, sizeof(ca_pem), "%s/ca.pem", pki);
    snprintf(other_ca_pem, sizeof(other_ca_pem), "%s/other-ca.pem", pki);
    if (emulator_start_tls(&emu, cert, key, ca_pem) != 0)
        return EXIT_FAILURE;
    emulator_export_env(&emu);
    ns_log_set_level(NS_LOG_ERROR);
    Suite *s = suite_create("aws_tls");
    TCase *tc = tcase_create("tls");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, untrusted_certificate_is_a_certificate_error_not_a_timeout);
    tcase_add_test(tc, aws_ca_bundle_is_trusted);
    tcase_add_test(tc, host_ca_bundle_is_trusted_by_every_provider);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    emulator_stop(&emu);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
