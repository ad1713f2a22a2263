/* The client's configuration and credentials against the real API server: a client certificate from the admin
 * kubeconfig (HTTP/2 negotiated, connections reused), a static token, a user without RBAC (403), a server whose CA
 * is not given (refused), exec plugins that work and that fail, and a service-account token that expires and is
 * rotated on disk. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors/ns_error.h"
#include "kc_util.h"
#include "kube/kube_client.h"
#include "kube/kube_config.h"
#include "kube_bed.h"

/* The user the API server sees for this client (a SelfSubjectReview, allowed to every authenticated user). */
static int whoami(ns_kube_client *c, char *user, size_t len)
{
    cJSON *body = kc_json("{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}");
    cJSON *out = NULL;
    int rc = ns_kube_json(c, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", NULL, body, "whoami", NULL,
                          &out);
    cJSON_Delete(body);
    if (rc == 0) {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(out, "status");
        const cJSON *ui = cJSON_GetObjectItemCaseSensitive(st, "userInfo");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(ui, "username");
        snprintf(user, len, "%s", cJSON_IsString(name) ? name->valuestring : "");
    }
    cJSON_Delete(out);
    return rc;
}

START_TEST(admin_client_certificate_over_http2)
{
    ns_kube_client *c = kc_admin();
    char user[256];
    ck_assert_msg(whoami(c, user, sizeof(user)) == 0, "%s", ns_error_message());
    ck_assert_str_eq(user, "nodesmith-admin");
    ns_kube_req req = {.method = "GET", .path = "/api/v1/namespaces/default"};
    ns_kube_resp resp;
    ck_assert_int_eq(ns_kube_do(c, &req, &resp), 0);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_msg(resp.http2, "the API server offers HTTP/2 over TLS; the client should use it");
    ns_kube_resp_clear(&resp);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(ns_kube_do(c, &req, &resp), 0);
        ns_kube_resp_clear(&resp);
    }
    ns_kube_stats st;
    ns_kube_client_stats(c, &st);
    ck_assert_uint_eq(st.connections, 1);
    ns_kube_client_free(c);
}
END_TEST

static void *long_watch(void *arg)
{
    /* a watch of nothing in particular, held open until the server ends it */
    cJSON *out = NULL;
    ns_kube_json(arg, "GET", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=10", NULL, NULL, "watch",
                 NULL, &out);
    cJSON_Delete(out);
    return NULL;
}

/* The controller holds a watch per informer (each on a connection of its own) while it writes: the connection a
 * write used stays open for the next one (with libcurl's default cache size every write paid a TLS handshake). */
START_TEST(requests_reuse_a_connection_while_watches_run)
{
    enum { WATCHES = 8, REQUESTS = 20 };
    ns_kube_client *c = kc_admin();
    pthread_t t[WATCHES];
    for (int i = 0; i < WATCHES; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, long_watch, c), 0);
    usleep(1000 * 1000); /* the watches are open (they last 10 s, longer than the requests below on a loaded machine) */
    ns_kube_stats before;
    ns_kube_client_stats(c, &before);
    for (int i = 0; i < REQUESTS; i++) {
        cJSON *out = NULL;
        ck_assert_msg(ns_kube_json(c, "GET", "/api/v1/namespaces/default", NULL, NULL, "get", NULL, &out) == 0, "%s",
                      ns_error_message());
        cJSON_Delete(out);
    }
    ns_kube_stats after;
    ns_kube_client_stats(c, &after);
    for (int i = 0; i < WATCHES; i++)
        pthread_join(t[i], NULL);
    ck_assert_msg(after.connections - before.connections <= 1, "%d requests beside %d watches opened %llu connections",
                  REQUESTS, WATCHES, (unsigned long long)(after.connections - before.connections));
    ns_kube_client_free(c);
}
END_TEST

START_TEST(static_token_and_forbidden_user)
{
    char cfg[4096], user[512];
    snprintf(user, sizeof(user), "    token: %s", getenv("NS_TEST_KUBE_TOKEN"));
    kc_kubeconfig(cfg, sizeof(cfg), getenv("NS_TEST_KUBE_URL"), user);
    ns_kube_client *c = NULL;
    ck_assert_int_eq(kc_from_kubeconfig_text(cfg, NULL, &c), 0);
    char who[256];
    ck_assert_msg(whoami(c, who, sizeof(who)) == 0, "%s", ns_error_message());
    ns_kube_client_free(c);
    snprintf(user, sizeof(user), "    token: %s", getenv("NS_TEST_KUBE_NOBODY_TOKEN"));
    kc_kubeconfig(cfg, sizeof(cfg), getenv("NS_TEST_KUBE_URL"), user);
    ck_assert_int_eq(kc_from_kubeconfig_text(cfg, NULL, &c), 0);
    long status = 0;
    ck_assert_int_eq(ns_kube_json(c, "GET", "/api/v1/nodes", NULL, NULL, "listing nodes", &status, NULL),
                     NS_ERR_UNAUTHORIZED);
    ck_assert_int_eq(status, 403);
    ck_assert_msg(strstr(ns_error_message(), "listing nodes: HTTP 403 Forbidden: nodes is forbidden"), "%s",
                  ns_error_message());
    ns_kube_client_free(c);
}
END_TEST

START_TEST(server_not_trusted_without_its_ca)
{
    char cfg[4096];
    snprintf(cfg, sizeof(cfg),
             "current-context: t\n"
             "clusters: [{name: bed, cluster: {server: '%s'}}]\n"
             "contexts: [{name: t, context: {cluster: bed, user: u}}]\n"
             "users: [{name: u, user: {token: %s}}]\n",
             getenv("NS_TEST_KUBE_URL"), getenv("NS_TEST_KUBE_TOKEN"));
    ns_kube_client *c = NULL;
    ck_assert_int_eq(kc_from_kubeconfig_text(cfg, NULL, &c), 0);
    ck_assert_int_eq(ns_kube_json(c, "GET", "/version", NULL, NULL, "version", NULL, NULL), NS_ERR_UNAUTHORIZED);
    ck_assert_msg(strstr(ns_error_message(), "certificate is not trusted"), "%s", ns_error_message());
    ck_assert_ptr_null(strstr(ns_error_message(), getenv("NS_TEST_KUBE_TOKEN")));
    ns_kube_client_free(c);
}
END_TEST

static void exec_kubeconfig(char *cfg, size_t len, const char *script)
{
    char user[1024];
    snprintf(user, sizeof(user),
             "    exec:\n"
             "      apiVersion: client.authentication.k8s.io/v1\n"
             "      command: %s\n"
             "      args: [eks, get-token, --cluster-name, bed]\n"
             "      env: [{name: BED_TOKEN, value: '%s'}]\n",
             script, getenv("NS_TEST_KUBE_TOKEN"));
    kc_kubeconfig(cfg, len, getenv("NS_TEST_KUBE_URL"), user);
}

START_TEST(exec_plugin_token_works_and_failure_is_reported)
{
    const char *ok = kc_temp_file("#!/bin/sh\n"
                                  "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
                                  "\"ExecCredential\",\"status\":{\"token\":\"%s\"}}' \"$BED_TOKEN\"\n",
                                  0700);
    char cfg[4096], who[256];
    exec_kubeconfig(cfg, sizeof(cfg), ok);
    ns_kube_client *c = NULL;
    ck_assert_int_eq(kc_from_kubeconfig_text(cfg, NULL, &c), 0);
    ck_assert_msg(whoami(c, who, sizeof(who)) == 0, "%s", ns_error_message());
    ns_kube_client_free(c);
    const char *bad = kc_temp_file("#!/bin/sh\necho 'could not get token: AccessDenied' >&2\nexit 1\n", 0700);
    exec_kubeconfig(cfg, sizeof(cfg), bad);
    ck_assert_int_eq(kc_from_kubeconfig_text(cfg, NULL, &c), 0);
    ck_assert_int_eq(whoami(c, who, sizeof(who)), NS_ERR_UNAUTHORIZED);
    ck_assert_msg(strstr(ns_error_message(), "failed with exit status 1: could not get token: AccessDenied"), "%s",
                  ns_error_message());
    ns_kube_client_free(c);
    unlink(ok);
    unlink(bad);
}
END_TEST

/* A service-account token bound to a Secret: valid until the Secret is deleted. */
static char *bound_token(const char *ns, const char *secret)
{
    char *out = kc_kubectl("-n", ns, "create", "secret", "generic", secret, NULL);
    ck_assert_ptr_nonnull(out);
    free(out);
    out = kc_kubectl("-n", ns, "create", "token", "default", "--bound-object-kind", "Secret", "--bound-object-name",
                     secret, NULL);
    ck_assert_ptr_nonnull(out);
    return out;
}

START_TEST(expired_token_rotated_on_disk)
{
    char ns[64], cfg[4096], user[512], who[256];
    ck_assert_int_eq(kube_bed_namespace("kc-token", ns, sizeof(ns)), 0);
    char *t1 = bound_token(ns, "s1");
    const char *file = kc_temp_file(t1, 0600);
    snprintf(user, sizeof(user), "    tokenFile: %s", file);
    kc_kubeconfig(cfg, sizeof(cfg), getenv("NS_TEST_KUBE_URL"), user);
    ns_kube_client *c = NULL;
    ck_assert_int_eq(kc_from_kubeconfig_text(cfg, NULL, &c), 0);
    ck_assert_msg(whoami(c, who, sizeof(who)) == 0, "%s", ns_error_message());
    char want[128];
    snprintf(want, sizeof(want), "system:serviceaccount:%s:default", ns);
    ck_assert_str_eq(who, want);
    /* the token expires (its Secret is gone): 401. Until the API server's token cache notices, answers may still
     * succeed, and a loaded server may throttle or cut an answer short: only the 401 ends the wait. */
    free(kc_kubectl("-n", ns, "delete", "secret", "s1", "--wait=true", NULL));
    int rc = -1;
    for (int i = 0; i < 300 && (rc = whoami(c, who, sizeof(who))) != NS_ERR_UNAUTHORIZED; i++)
        usleep(100000);
    ck_assert_msg(rc == NS_ERR_UNAUTHORIZED && strstr(ns_error_message(), "HTTP 401"), "%d: %s", rc,
                  ns_error_message());
    /* kubelet-style rotation: a new token renamed over the file; the next request uses it */
    char *t2 = bound_token(ns, "s2");
    const char *tmp = kc_temp_file(t2, 0600);
    ck_assert_int_eq(rename(tmp, file), 0);
    ck_assert_msg(whoami(c, who, sizeof(who)) == 0, "%s", ns_error_message());
    ck_assert_str_eq(who, want);
    ns_kube_client_free(c);
    unlink(file);
    free(t1);
    free(t2);
}
END_TEST

int main(void)
{
    kube_bed bed;
    if (kube_bed_start(&bed) < 0)
        return 1;
    Suite *s = suite_create("kube-client-auth");
    TCase *t = tcase_create("auth");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, admin_client_certificate_over_http2);
    tcase_add_test(t, requests_reuse_a_connection_while_watches_run);
    tcase_add_test(t, static_token_and_forbidden_user);
    tcase_add_test(t, server_not_trusted_without_its_ca);
    tcase_add_test(t, exec_plugin_token_works_and_failure_is_reported);
    tcase_add_test(t, expired_token_rotated_on_disk);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    kube_bed_stop(&bed);
    return failed ? 1 : 0;
}
