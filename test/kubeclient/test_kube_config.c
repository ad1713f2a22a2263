/* The Kubernetes client's configuration and credentials, without an API server: kubeconfig files (contexts, CA,
 * client certificates, tokens, token files, exec plugins, refusals), the in-cluster configuration, the exec plugin's
 * caching rules, and the token bucket. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "kube/kube_auth.h"
#include "kube/kube_config.h"
#include "kube/kube_ratelimit.h"

static char dir[256];

static void make_dir(void)
{
    snprintf(dir, sizeof(dir), "/tmp/ns-kubecfg-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static const char *write_file(const char *name, const char *text, int mode)
{
    static char path[8][320];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, 320, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    chmod(p, (mode_t)mode);
    return p;
}

/* "hello CA" and "CERT"/"KEY" in base64 */
#define CA_B64 "aGVsbG8gQ0E="
#define CERT_B64 "Q0VSVA=="
#define KEY_B64 "S0VZ"

static const char *const two_contexts =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: admin\n"
    "clusters:\n"
    "- name: c1\n"
    "  cluster:\n"
    "    server: https://127.0.0.1:6443/\n"
    "    certificate-authority-data: " CA_B64 "\n"
    "- name: c2\n"
    "  cluster:\n"
    "    server: https://10.0.0.1\n"
    "    certificate-authority: ca.pem\n"
    "    tls-server-name: kubernetes\n"
    "users:\n"
    "- name: admin\n"
    "  user:\n"
    "    client-certificate-data: " CERT_B64 "\n"
    "    client-key-data: " KEY_B64 "\n"
    "- name: robot\n"
    "  user:\n"
    "    tokenFile: token\n"
    "contexts:\n"
    "- name: admin\n"
    "  context: {cluster: c1, user: admin}\n"
    "- name: robot\n"
    "  context: {cluster: c2, user: robot, namespace: karpenter}\n"
    "preferences: {}\n";

START_TEST(kubeconfig_current_context_with_embedded_data)
{
    make_dir();
    const char *path = write_file("config", two_contexts, 0600);
    ns_kube_config *c = NULL;
    ck_assert_int_eq(ns_kube_config_from_kubeconfig(path, NULL, &c), 0);
    ck_assert_str_eq(c->server, "https://127.0.0.1:6443");
    ck_assert_str_eq(c->ca_pem, "hello CA");
    ck_assert_uint_eq(c->ca_len, 8);
    ck_assert_str_eq(c->cert_pem, "CERT");
    ck_assert_str_eq(c->key_pem, "KEY");
    ck_assert_str_eq(c->namespace_, "default");
    ck_assert_ptr_null(c->token);
    ns_kube_config_free(c);
    remove_dir();
}
END_TEST

START_TEST(kubeconfig_named_context_with_files)
{
    make_dir();
    write_file("ca.pem", "CA FROM FILE", 0600);
    write_file("token", "tok\n", 0600);
    const char *path = write_file("config", two_contexts, 0600);
    ns_kube_config *c = NULL;
    ck_assert_int_eq(ns_kube_config_from_kubeconfig(path, "robot", &c), 0);
    ck_assert_str_eq(c->server, "https://10.0.0.1");
    ck_assert_str_eq(c->tls_server_name, "kubernetes");
    ck_assert_str_eq(c->ca_pem, "CA FROM FILE");
    ck_assert_str_eq(c->namespace_, "karpenter");
    char want[320];
    snprintf(want, sizeof(want), "%s/token", dir);
    ck_assert_str_eq(c->token_file, want);
    ns_kube_auth *a = NULL;
    ns_kube_creds creds;
    ck_assert_int_eq(ns_kube_auth_new(c, &a), 0);
    ck_assert_int_eq(ns_kube_auth_get(a, &creds), 0);
    ck_assert_str_eq(creds.token, "tok");
    ns_kube_creds_clear(&creds);
    ns_kube_auth_free(a);
    ns_kube_config_free(c);
    remove_dir();
}
END_TEST

static void expect_refusal(const char *yaml, const char *context, int code, const char *needle)
{
    make_dir();
    const char *path = write_file("config", yaml, 0600);
    ns_kube_config *c = NULL;
    ck_assert_int_eq(ns_kube_config_from_kubeconfig(path, context, &c), code);
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(ns_error_message(), needle), "message \"%s\" lacks \"%s\"", ns_error_message(), needle);
    remove_dir();
}

START_TEST(kubeconfig_refuses_insecure_skip_tls_verify)
{
    expect_refusal("current-context: x\n"
                   "clusters: [{name: c, cluster: {server: 'https://1.2.3.4', insecure-skip-tls-verify: true}}]\n"
                   "contexts: [{name: x, context: {cluster: c}}]\n",
                   NULL, NS_ERR_INVALID_CONFIG, "insecure-skip-tls-verify is refused: nodesmith always verifies");
}
END_TEST

START_TEST(kubeconfig_errors_name_file_line_and_field)
{
    expect_refusal("current-context: x\n"
                   "clusters: [{name: c, cluster: {server: 'https://1.2.3.4', sever: typo}}]\n"
                   "contexts: [{name: x, context: {cluster: c}}]\n",
                   NULL, NS_ERR_INVALID_CONFIG, ":2: cluster c: unknown field \"clusters[0].cluster.sever\"");
    expect_refusal("current-context: x\n"
                   "clusters: [{name: c, cluster: {server: 'https://1.2.3.4'}}]\n"
                   "contexts: [{name: x, context: {cluster: c}}]\n",
                   "nope", NS_ERR_NOT_FOUND, "no contexts named \"nope\"");
    expect_refusal("current-context: x\n"
                   "clusters: [{name: c, cluster: {server: 'https://1.2.3.4', certificate-authority-data: '!!'}}]\n"
                   "contexts: [{name: x, context: {cluster: c}}]\n",
                   NULL, NS_ERR_INVALID_CONFIG, "certificate-authority-data: not valid base64");
    expect_refusal("current-context: x\n"
                   "clusters: [{name: c, cluster: {server: 'https://1.2.3.4'}}]\n"
                   "users: [{name: u, user: {client-certificate-data: " CERT_B64 "}}]\n"
                   "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
                   NULL, NS_ERR_INVALID_CONFIG, "needs both client-certificate and client-key");
    expect_refusal("current-context: x\n"
                   "clusters: [{name: c, cluster: {server: 'https://1.2.3.4'}}]\n"
                   "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}}}]\n"
                   "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
                   NULL, NS_ERR_INVALID_CONFIG, "v1alpha1\" is not supported");
    expect_refusal("current-context: x\n"
                   "clusters: [{name: c, cluster: {server: 'https://1.2.3.4'}}]\n"
                   "users: [{name: u, user: {auth-provider: {name: gcp}}}]\n"
                   "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
                   NULL, NS_ERR_INVALID_CONFIG, "users[0].user.auth-provider: is not supported");
}
END_TEST

START_TEST(in_cluster_reads_service_account)
{
    make_dir();
    write_file("token", "sa-token-1\n", 0600);
    write_file("ca.crt", "CLUSTER CA", 0600);
    write_file("namespace", "karpenter\n", 0600);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    ns_kube_config *c = NULL;
    ck_assert_int_eq(ns_kube_config_in_cluster(dir, &c), 0);
    ck_assert_str_eq(c->server, "https://10.96.0.1:443");
    ck_assert_str_eq(c->ca_pem, "CLUSTER CA");
    ck_assert_str_eq(c->namespace_, "karpenter");
    ns_kube_auth *a = NULL;
    ns_kube_creds creds;
    ck_assert_int_eq(ns_kube_auth_new(c, &a), 0);
    ck_assert_int_eq(ns_kube_auth_get(a, &creds), 0);
    ck_assert_str_eq(creds.token, "sa-token-1");
    ns_kube_creds_clear(&creds);
    /* kubelet rotates the token: the next request reads the new one */
    write_file("token.new", "sa-token-2", 0600);
    char from[320], to[320];
    snprintf(from, sizeof(from), "%s/token.new", dir);
    snprintf(to, sizeof(to), "%s/token", dir);
    ck_assert_int_eq(rename(from, to), 0);
    ck_assert_int_eq(ns_kube_auth_get(a, &creds), 0);
    ck_assert_str_eq(creds.token, "sa-token-2");
    ns_kube_creds_clear(&creds);
    ns_kube_auth_free(a);
    ns_kube_config_free(c);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    ck_assert_int_eq(ns_kube_config_in_cluster(dir, &c), 0);
    ck_assert_str_eq(c->server, "https://[fd00::1]:443");
    ns_kube_config_free(c);
    unsetenv("KUBERNETES_SERVICE_HOST");
    ck_assert_int_eq(ns_kube_config_in_cluster(dir, &c), NS_ERR_NOT_FOUND);
    ck_assert_ptr_null(strstr(ns_error_message(), "sa-token"));
    remove_dir();
}
END_TEST

/* An exec plugin that counts its runs in a file and prints a credential expiring at $EXPIRY. */
static const char *const plugin_script =
    "#!/bin/sh\n"
    "n=$(cat \"$COUNT_FILE\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$COUNT_FILE\"\n"
    "case \"$KUBERNETES_EXEC_INFO\" in *'\"interactive\":false'*) ;; *) echo 'no exec info' >&2; exit 3;; esac\n"
    "[ \"$MODE\" = fail ] && { echo 'first line' >&2; echo 'error: token expired, run aws sso login' >&2; exit 2; }\n"
    "printf '{\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"tok-%s\"%s}}' "
    "\"$API\" \"$n\" \"$EXPIRY\"\n";

static ns_kube_config *exec_config(const char *api, const char *expiry_json, const char *mode)
{
    const char *script = write_file("plugin.sh", plugin_script, 0700);
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "current-context: x\n"
             "clusters: [{name: c, cluster: {server: 'https://1.2.3.4'}}]\n"
             "users:\n"
             "- name: u\n"
             "  user:\n"
             "    exec:\n"
             "      apiVersion: %s\n"
             "      command: %s\n"
             "      args: [eks, get-token]\n"
             "      installHint: install the AWS CLI\n"
             "      env:\n"
             "      - {name: COUNT_FILE, value: %s/count}\n"
             "      - {name: API, value: %s}\n"
             "      - {name: EXPIRY, value: '%s'}\n"
             "      - {name: MODE, value: %s}\n"
             "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
             api, script, dir, api, expiry_json, mode);
    const char *path = write_file("config", yaml, 0600);
    ns_kube_config *c = NULL;
    ck_assert_int_eq(ns_kube_config_from_kubeconfig(path, NULL, &c), 0);
    return c;
}

static void expect_token(ns_kube_auth *a, const char *want)
{
    ns_kube_creds creds;
    ck_assert_msg(ns_kube_auth_get(a, &creds) == 0, "%s", ns_error_message());
    ck_assert_str_eq(creds.token, want);
    ns_kube_creds_clear(&creds);
}

START_TEST(exec_plugin_cached_until_expiry)
{
    make_dir();
    char exp[128], ts[40];
    ns_clock_format_rfc3339(ns_clock_now_ms() + 3600 * 1000, ts, sizeof(ts));
    snprintf(exp, sizeof(exp), ",\"expirationTimestamp\":\"%s\"", ts);
    ns_kube_config *c = exec_config("client.authentication.k8s.io/v1beta1", exp, "ok");
    ns_kube_auth *a = NULL;
    ck_assert_int_eq(ns_kube_auth_new(c, &a), 0);
    expect_token(a, "tok-1");
    expect_token(a, "tok-1");
    ck_assert_uint_eq(ns_kube_auth_exec_runs(a), 1);
    /* a 401 drops the cached answer */
    ns_kube_auth_invalidate(a);
    expect_token(a, "tok-2");
    ns_kube_auth_free(a);
    ns_kube_config_free(c);
    remove_dir();
}
END_TEST

START_TEST(exec_plugin_rerun_after_expiry)
{
    make_dir();
    char exp[128], ts[40];
    ns_clock_format_rfc3339(ns_clock_now_ms() - 1000, ts, sizeof(ts));
    snprintf(exp, sizeof(exp), ",\"expirationTimestamp\":\"%s\"", ts);
    ns_kube_config *c = exec_config("client.authentication.k8s.io/v1", exp, "ok");
    ns_kube_auth *a = NULL;
    ck_assert_int_eq(ns_kube_auth_new(c, &a), 0);
    expect_token(a, "tok-1");
    expect_token(a, "tok-2");
    ck_assert_uint_eq(ns_kube_auth_exec_runs(a), 2);
    ns_kube_auth_free(a);
    ns_kube_config_free(c);
    /* no expirationTimestamp: kept until a 401 */
    c = exec_config("client.authentication.k8s.io/v1", "", "ok");
    ck_assert_int_eq(ns_kube_auth_new(c, &a), 0);
    expect_token(a, "tok-3");
    expect_token(a, "tok-3");
    ns_kube_auth_free(a);
    ns_kube_config_free(c);
    remove_dir();
}
END_TEST

START_TEST(exec_plugin_failure_names_command_status_and_stderr)
{
    make_dir();
    ns_kube_config *c = exec_config("client.authentication.k8s.io/v1", "", "fail");
    ns_kube_auth *a = NULL;
    ns_kube_creds creds;
    ck_assert_int_eq(ns_kube_auth_new(c, &a), 0);
    ck_assert_int_eq(ns_kube_auth_get(a, &creds), NS_ERR_UNAUTHORIZED);
    const char *m = ns_error_message();
    ck_assert_msg(strstr(m, "plugin.sh failed with exit status 2: error: token expired, run aws sso login"), "%s", m);
    ck_assert_ptr_nonnull(strstr(m, "kubeconfig "));
    ns_kube_auth_free(a);
    ns_kube_config_free(c);
    /* a command that does not exist: the install hint is in the message */
    const char *path = write_file("config2",
                                  "current-context: x\n"
                                  "clusters: [{name: c, cluster: {server: 'https://1.2.3.4'}}]\n"
                                  "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1,"
                                  " command: no-such-aws-cli, installHint: install the AWS CLI}}}]\n"
                                  "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
                                  0600);
    ck_assert_int_eq(ns_kube_config_from_kubeconfig(path, NULL, &c), 0);
    ck_assert_int_eq(ns_kube_auth_new(c, &a), 0);
    ck_assert_int_eq(ns_kube_auth_get(a, &creds), NS_ERR_UNAUTHORIZED);
    ck_assert_msg(strstr(ns_error_message(), "install the AWS CLI"), "%s", ns_error_message());
    ns_kube_auth_free(a);
    ns_kube_config_free(c);
    remove_dir();
}
END_TEST

START_TEST(exec_plugin_wrong_api_version_refused)
{
    make_dir();
    /* the script answers with the API it is told ($API); configure v1 but make it answer v1beta1 */
    ns_kube_config *c = exec_config("client.authentication.k8s.io/v1", "", "ok");
    for (size_t i = 0; c->exec->env[i]; i++) {
        if (strncmp(c->exec->env[i], "API=", 4) == 0) {
            free(c->exec->env[i]);
            c->exec->env[i] = strdup("API=client.authentication.k8s.io/v1beta1");
        }
    }
    ns_kube_auth *a = NULL;
    ns_kube_creds creds;
    ck_assert_int_eq(ns_kube_auth_new(c, &a), 0);
    ck_assert_int_eq(ns_kube_auth_get(a, &creds), NS_ERR_UNAUTHORIZED);
    ck_assert_msg(strstr(ns_error_message(), "apiVersion client.authentication.k8s.io/v1beta1, expected"), "%s",
                  ns_error_message());
    ns_kube_auth_free(a);
    ns_kube_config_free(c);
    remove_dir();
}
END_TEST

START_TEST(load_order_kubeconfig_env_in_cluster_home)
{
    make_dir();
    const char *path = write_file("config", two_contexts, 0600);
    char list[700];
    snprintf(list, sizeof(list), "%s/missing:%s", dir, path);
    setenv("KUBECONFIG", list, 1);
    ns_kube_config *c = NULL;
    ck_assert_int_eq(ns_kube_config_load(NULL, NULL, &c), 0);
    ck_assert_str_eq(c->server, "https://127.0.0.1:6443");
    ns_kube_config_free(c);
    setenv("KUBECONFIG", "/nonexistent/a:/nonexistent/b", 1);
    ck_assert_int_eq(ns_kube_config_load(NULL, NULL, &c), NS_ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "KUBECONFIG=/nonexistent/a:/nonexistent/b"));
    unsetenv("KUBECONFIG");
    /* in a pod: the service account */
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    ck_assert_int_eq(ns_kube_config_load(NULL, NULL, &c), NS_ERR_NOT_FOUND); /* no token under /var/run/secrets */
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "no service-account token"));
    unsetenv("KUBERNETES_SERVICE_HOST");
    /* else ~/.kube/config */
    char kube_dir[300];
    snprintf(kube_dir, sizeof(kube_dir), "%s/.kube", dir);
    ck_assert_int_eq(mkdir(kube_dir, 0700), 0);
    write_file(".kube/config", two_contexts, 0600);
    setenv("HOME", dir, 1);
    ck_assert_int_eq(ns_kube_config_load(NULL, "robot", &c), NS_ERR_NOT_FOUND); /* robot's ca.pem is missing */
    ck_assert_int_eq(ns_kube_config_load(NULL, NULL, &c), 0);
    ck_assert_ptr_nonnull(strstr(c->source, "/.kube/config context admin"));
    ns_kube_config_free(c);
    remove_dir();
}
END_TEST

START_TEST(token_bucket_allows_burst_then_paces)
{
    ns_kube_limiter *l = ns_kube_limiter_new(20.0, 3);
    int64_t waited = 0;
    for (int i = 0; i < 3; i++)
        waited += ns_kube_limiter_wait(l);
    ck_assert_int_le(waited, 5);
    int64_t start = ns_clock_now_ms();
    for (int i = 0; i < 4; i++)
        ns_kube_limiter_wait(l);
    int64_t took = ns_clock_now_ms() - start;
    ck_assert_int_ge(took, 180); /* 4 tokens at 20/s = 200 ms, less the refill since creation */
    ck_assert_int_le(took, 600);
    ns_kube_limiter_free(l);
    double qps;
    int burst;
    unsetenv("KUBE_CLIENT_QPS");
    unsetenv("KUBE_CLIENT_BURST");
    ck_assert_int_eq(ns_kube_limits_from_env(&qps, &burst), 0);
    ck_assert(qps == 200.0 && burst == 300);
    setenv("KUBE_CLIENT_QPS", "abc", 1);
    ck_assert_int_eq(ns_kube_limits_from_env(&qps, &burst), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "KUBE_CLIENT_QPS=\"abc\""));
    unsetenv("KUBE_CLIENT_QPS");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube-config");
    TCase *t = tcase_create("config");
    tcase_set_timeout(t, 30);
    tcase_add_test(t, kubeconfig_current_context_with_embedded_data);
    tcase_add_test(t, kubeconfig_named_context_with_files);
    tcase_add_test(t, kubeconfig_refuses_insecure_skip_tls_verify);
    tcase_add_test(t, kubeconfig_errors_name_file_line_and_field);
    tcase_add_test(t, in_cluster_reads_service_account);
    tcase_add_test(t, exec_plugin_cached_until_expiry);
    tcase_add_test(t, exec_plugin_rerun_after_expiry);
    tcase_add_test(t, exec_plugin_failure_names_command_status_and_stderr);
    tcase_add_test(t, exec_plugin_wrong_api_version_refused);
    tcase_add_test(t, load_order_kubeconfig_env_in_cluster_home);
    tcase_add_test(t, token_bucket_allows_burst_then_paces);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
