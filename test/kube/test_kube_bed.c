/* The test bed itself, from C: the API server is the real one (version, TLS, authentication and authorization
 * answers), the helpers work, and the scheduler binds a pod to a Ready node. It is also the recipe for C tests of
 * the client: libcurl with the bed's CA and client certificate or a bearer token. */
#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube_bed.h"

typedef struct reply {
    long status;
    char body[65536];
    size_t len;
} reply;

static size_t collect(char *ptr, size_t size, size_t n, void *ud)
{
    reply *r = ud;
    size_t take = size * n;
    if (take > sizeof(r->body) - 1 - r->len)
        take = sizeof(r->body) - 1 - r->len;
    memcpy(r->body + r->len, ptr, take);
    r->len += take;
    r->body[r->len] = '\0';
    return size * n;
}

/* GET PATH from the API server; AUTH is "cert", a bearer token, or NULL for anonymous. CA NULL means the bed's. */
static CURLcode api_get(const char *path, const char *auth, const char *ca, reply *r)
{
    char url[512], header[256];
    snprintf(url, sizeof(url), "%s%s", getenv("NS_TEST_KUBE_URL"), path);
    memset(r, 0, sizeof(*r));
    CURL *curl = curl_easy_init();
    struct curl_slist *headers = NULL;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CAINFO, ca ? ca : getenv("NS_TEST_KUBE_CA"));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
    if (auth && strcmp(auth, "cert") == 0) {
        curl_easy_setopt(curl, CURLOPT_SSLCERT, getenv("NS_TEST_KUBE_CLIENT_CERT"));
        curl_easy_setopt(curl, CURLOPT_SSLKEY, getenv("NS_TEST_KUBE_CLIENT_KEY"));
    } else if (auth) {
        snprintf(header, sizeof(header), "Authorization: Bearer %s", auth);
        headers = curl_slist_append(headers, header);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    }
    CURLcode rc = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return rc;
}

START_TEST(test_version_is_a_release_build)
{
    reply r;
    ck_assert_int_eq(api_get("/version", "cert", NULL, &r), CURLE_OK);
    ck_assert_int_eq(r.status, 200);
    ck_assert_msg(strstr(r.body, "\"major\": \"1\""), "no major version 1 in %s", r.body);
    /* Built from the module proxy with the version stamped in, not a development build. */
    ck_assert_msg(strstr(r.body, "\"gitVersion\": \"v1.") && !strstr(r.body, "v0.0.0"), "version: %s", r.body);
}
END_TEST

START_TEST(test_tls_is_verified_against_the_bed_ca)
{
    reply r;
    /* The system trust store does not know the bed's CA: a client verifying TLS must refuse the server. */
    CURLcode rc = api_get("/version", "cert", "/etc/ssl/certs/ca-certificates.crt", &r);
    ck_assert_msg(rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE,
                  "expected a verification failure, got %s", curl_easy_strerror(rc));
}
END_TEST

START_TEST(test_authentication_and_rbac)
{
    reply r;
    ck_assert_int_eq(api_get("/api/v1/nodes?limit=1", getenv("NS_TEST_KUBE_TOKEN"), NULL, &r), CURLE_OK);
    ck_assert_int_eq(r.status, 200);
    ck_assert_int_eq(api_get("/api/v1/nodes?limit=1", getenv("NS_TEST_KUBE_NOBODY_TOKEN"), NULL, &r), CURLE_OK);
    ck_assert_int_eq(r.status, 403);
    ck_assert_msg(strstr(r.body, "\"reason\":\"Forbidden\"") && strstr(r.body, "nodesmith-nobody"), "%s", r.body);
    ck_assert_int_eq(api_get("/api/v1/nodes?limit=1", "not-a-token", NULL, &r), CURLE_OK);
    ck_assert_int_eq(r.status, 401);
    ck_assert_int_eq(api_get("/api/v1/nodes?limit=1", NULL, NULL, &r), CURLE_OK);
    ck_assert_int_eq(r.status, 403); /* anonymous requests are authenticated as system:anonymous, then denied */
}
END_TEST

START_TEST(test_scheduler_binds_to_a_ready_node)
{
    char ns[128], node[160], label[200], taint[200], manifest[2048];
    ck_assert_int_eq(kube_bed_namespace("c-bed", ns, sizeof(ns)), 0);
    /* The node is this test's own: labelled and tainted with the namespace's name. */
    snprintf(node, sizeof(node), "%s-node", ns);
    snprintf(label, sizeof(label), "nodesmith.test/owner=%s", ns);
    snprintf(taint, sizeof(taint), "nodesmith.test/owner=%s:NoSchedule", ns);
    ck_assert_int_eq(kube_bed_ready_node(node, label, taint), 0);
    snprintf(manifest, sizeof(manifest),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"%s\"},"
             "\"spec\":{\"nodeSelector\":{\"nodesmith.test/owner\":\"%s\"},"
             "\"tolerations\":[{\"key\":\"nodesmith.test/owner\",\"operator\":\"Equal\",\"value\":\"%s\","
             "\"effect\":\"NoSchedule\"}],"
             "\"containers\":[{\"name\":\"c\",\"image\":\"registry.invalid/pause\"}]}}", ns, ns, ns);
    char *out = NULL;
    const char *const apply[] = { "apply", "-f", "-", NULL };
    ck_assert_int_eq(kube_bed_kubectl(&out, manifest, apply), 0);
    free(out);
    const char *const get[] = { "get", "pod", "p", "-n", ns, "-o", "jsonpath={.spec.nodeName}", NULL };
    int bound = 0;
    for (int i = 0; i < 120 && !bound; i++) {
        ck_assert_int_eq(kube_bed_kubectl(&out, NULL, get), 0);
        bound = strcmp(out, node) == 0;
        free(out);
        if (!bound)
            usleep(250000);
    }
    ck_assert_msg(bound, "pod p in %s was not bound to %s within 30 s", ns, node);
}
END_TEST

typedef struct cut_watch {
    const kube_bed_proxy *proxy;
    size_t received;
} cut_watch;

static size_t cut_on_first_event(char *ptr, size_t size, size_t n, void *ud)
{
    cut_watch *w = ud;
    if (w->received == 0)
        kube_bed_proxy_cut(w->proxy);
    w->received += size * n;
    return size * n;
}

START_TEST(test_proxy_cuts_a_watch_mid_stream)
{
    kube_bed_proxy proxy;
    ck_assert_int_eq(kube_bed_proxy_start(&proxy), 0);
    char url[256];
    /* A watch from "now" that would stay open 60 s; namespaces exist, so the initial ADDED events arrive at once. */
    snprintf(url, sizeof(url), "%s/api/v1/namespaces?watch=true&resourceVersion=0&timeoutSeconds=60", proxy.url);
    cut_watch w = { .proxy = &proxy };
    CURL *curl = curl_easy_init();
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CAINFO, getenv("NS_TEST_KUBE_CA"));
    curl_easy_setopt(curl, CURLOPT_SSLCERT, getenv("NS_TEST_KUBE_CLIENT_CERT"));
    curl_easy_setopt(curl, CURLOPT_SSLKEY, getenv("NS_TEST_KUBE_CLIENT_KEY"));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, cut_on_first_event);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &w);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
    CURLcode rc = curl_easy_perform(curl);
    curl_easy_cleanup(curl);
    ck_assert_uint_gt(w.received, 0);
    /* The stream broke (not a clean end, not our timeout). */
    ck_assert_msg(rc != CURLE_OK && rc != CURLE_OPERATION_TIMEDOUT, "watch ended with %s", curl_easy_strerror(rc));
    /* The proxy still accepts new connections. */
    reply r;
    memset(&r, 0, sizeof(r));
    snprintf(url, sizeof(url), "%s/version", proxy.url);
    curl = curl_easy_init();
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CAINFO, getenv("NS_TEST_KUBE_CA"));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r);
    ck_assert_int_eq(curl_easy_perform(curl), CURLE_OK);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
    curl_easy_cleanup(curl);
    ck_assert_int_eq(r.status, 200);
    kube_bed_proxy_stop(&proxy);
}
END_TEST

int main(void)
{
    kube_bed bed;
    if (kube_bed_start(&bed) < 0)
        return 1;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    Suite *s = suite_create("kube_bed");
    TCase *tc = tcase_create("bed");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_version_is_a_release_build);
    tcase_add_test(tc, test_tls_is_verified_against_the_bed_ca);
    tcase_add_test(tc, test_authentication_and_rbac);
    tcase_add_test(tc, test_scheduler_binds_to_a_ready_node);
    tcase_add_test(tc, test_proxy_cuts_a_watch_mid_stream);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    kube_bed_stop(&bed);
    return failed == 0 ? 0 : 1;
}
