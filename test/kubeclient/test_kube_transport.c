/* The Kubernetes client's transport edge cases against a scripted HTTP server on loopback (libmicrohttpd): retries
 * on 429 honouring Retry-After and on 5xx, answers handed back unretried when asked (eviction), the user agent and
 * bearer token, a 401 that makes the client re-read a rotated token file, connection reuse, a streamed body dropped
 * mid-line, and cancelling a stream. API semantics are tested against the real API server (test/kube/client). */
#include <check.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "kube/kube_client.h"

/* What the server does, per path. */
static atomic_int hits;
static char last_agent[128];
static char last_auth[128];
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct stream_state {
    int sent;
} stream_state;

/* A watch-like stream: two whole events, then half a line, then the connection breaks. */
static ssize_t drop_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    stream_state *st = cls;
    const char *parts[] = {"{\"type\":\"ADDED\",\"n\":1}\n", "{\"type\":\"ADDED\",\"n\":2}\n", "{\"type\":\"ADD"};
    if (st->sent >= 3)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    size_t n = strlen(parts[st->sent]);
    memcpy(buf, parts[st->sent++], n < max ? n : max);
    usleep(50000);
    return (ssize_t)(n < max ? n : max);
}

/* A stream that sends a line each 100 ms forever. */
static ssize_t endless_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    usleep(100000);
    const char *line = "{\"type\":\"BOOKMARK\"}\n";
    memcpy(buf, line, strlen(line));
    return (ssize_t)strlen(line);
}

static void free_state(void *cls)
{
    free(cls);
}

static enum MHD_Result queue(struct MHD_Connection *conn, int status, const char *body, const char *retry_after)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json");
    if (retry_after)
        MHD_add_response_header(r, "Retry-After", retry_after);
    enum MHD_Result rc = MHD_queue_response(conn, (unsigned)status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_size, void **con_cls)
{
    static int marker;
    if (*con_cls != &marker) {
        *con_cls = &marker;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    int n = atomic_fetch_add(&hits, 1);
    const char *ua = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "User-Agent");
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    pthread_mutex_lock(&seen_lock);
    snprintf(last_agent, sizeof(last_agent), "%s", ua ? ua : "");
    snprintf(last_auth, sizeof(last_auth), "%s", auth ? auth : "");
    pthread_mutex_unlock(&seen_lock);
    if (strcmp(url, "/throttled-once") == 0)
        return n == 0 ? queue(conn, 429, "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\"}", "1")
                      : queue(conn, 200, "{\"ok\":true}", NULL);
    if (strcmp(url, "/unavailable-twice") == 0)
        return n < 2 ? queue(conn, 503, "{}", NULL) : queue(conn, 200, "{\"ok\":true}", NULL);
    if (strcmp(url, "/always-429") == 0)
        return queue(conn, 429, "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"message\":\"PDB\"}", NULL);
    if (strcmp(url, "/needs-new-token") == 0)
        return auth && strcmp(auth, "Bearer new") == 0 ? queue(conn, 200, "{\"ok\":true}", NULL)
                                                       : queue(conn, 401, "{\"reason\":\"Unauthorized\"}", NULL);
    if (strcmp(url, "/drop") == 0 || strcmp(url, "/endless") == 0) {
        stream_state *st = calloc(1, sizeof(*st));
        struct MHD_Response *r = MHD_create_response_from_callback(
            MHD_SIZE_UNKNOWN, 1024, strcmp(url, "/drop") == 0 ? drop_reader : endless_reader, st, free_state);
        enum MHD_Result rc = MHD_queue_response(conn, 200, r);
        MHD_destroy_response(r);
        return rc;
    }
    return queue(conn, 200, "{\"ok\":true}", NULL);
}

static struct MHD_Daemon *server;
static char dir[64];
static ns_kube_client *client;

static void write_token(const char *text)
{
    char tmp[128], path[128];
    snprintf(tmp, sizeof(tmp), "%s/token.tmp", dir);
    snprintf(path, sizeof(path), "%s/token", dir);
    FILE *f = fopen(tmp, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    ck_assert_int_eq(rename(tmp, path), 0);
}

static void setup(void)
{
    atomic_store(&hits, 0);
    server = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, answer,
                              NULL, MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    ck_assert_ptr_nonnull(server);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(server, MHD_DAEMON_INFO_BIND_PORT);
    snprintf(dir, sizeof(dir), "/tmp/ns-kubetr-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    write_token("old");
    ns_kube_config *cfg = calloc(1, sizeof(*cfg));
    char url[64], tf[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", info->port);
    snprintf(tf, sizeof(tf), "%s/token", dir);
    cfg->server = strdup(url);
    cfg->token_file = strdup(tf);
    cfg->source = strdup("test");
    cfg->namespace_ = strdup("default");
    ns_kube_client_options o = {.qps = 1000, .burst = 1000, .max_retries = 3};
    ck_assert_int_eq(ns_kube_client_new(cfg, &o, &client), 0);
}

static void teardown(void)
{
    ns_kube_client_free(client);
    MHD_stop_daemon(server);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static int get(const char *path, ns_kube_resp *resp, bool no_retry)
{
    ns_kube_req req = {.method = "GET", .path = path, .no_status_retry = no_retry};
    return ns_kube_do(client, &req, resp);
}

START_TEST(retry_after_429_is_honoured)
{
    ns_kube_resp resp;
    int64_t start = ns_clock_now_ms();
    ck_assert_int_eq(get("/throttled-once", &resp, false), 0);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_int_ge(ns_clock_now_ms() - start, 1000);
    ns_kube_resp_clear(&resp);
    ns_kube_stats st;
    ns_kube_client_stats(client, &st);
    ck_assert_uint_eq(st.retries, 1);
    pthread_mutex_lock(&seen_lock);
    ck_assert_str_eq(last_agent, "nodesmith/" NS_VERSION);
    ck_assert_str_eq(last_auth, "Bearer old");
    pthread_mutex_unlock(&seen_lock);
}
END_TEST

START_TEST(server_errors_are_retried_then_answer_returned)
{
    ns_kube_resp resp;
    ck_assert_int_eq(get("/unavailable-twice", &resp, false), 0);
    ck_assert_int_eq(resp.status, 200);
    ns_kube_resp_clear(&resp);
    /* retries spent: the last answer comes back */
    ck_assert_int_eq(get("/always-429", &resp, false), 0);
    ck_assert_int_eq(resp.status, 429);
    ns_kube_resp_clear(&resp);
    ck_assert_int_eq(atomic_load(&hits), 3 + 4);
}
END_TEST

START_TEST(no_status_retry_hands_429_back)
{
    ns_kube_resp resp;
    ck_assert_int_eq(get("/always-429", &resp, true), 0);
    ck_assert_int_eq(resp.status, 429);
    char reason[64], message[64];
    ns_kube_status_reason(&resp, reason, sizeof(reason), message, sizeof(message));
    ck_assert_str_eq(reason, "TooManyRequests");
    ck_assert_str_eq(message, "PDB");
    ck_assert_int_eq(ns_kube_fail(&resp, "evicting Pod a/b"), NS_ERR_THROTTLED);
    ck_assert_str_eq(ns_error_message(), "evicting Pod a/b: HTTP 429 TooManyRequests: PDB");
    ns_kube_resp_clear(&resp);
    ck_assert_int_eq(atomic_load(&hits), 1);
}
END_TEST

START_TEST(unauthorized_rereads_rotated_token)
{
    ns_kube_resp resp;
    ck_assert_int_eq(get("/x", &resp, false), 0);
    ns_kube_resp_clear(&resp);
    /* kubelet-style rotation (a new file renamed over the old one): the next request carries the new token */
    write_token("new");
    ck_assert_int_eq(get("/needs-new-token", &resp, false), 0);
    ck_assert_int_eq(resp.status, 200);
    ns_kube_resp_clear(&resp);
}
END_TEST

START_TEST(connections_are_reused)
{
    for (int i = 0; i < 5; i++) {
        ns_kube_resp resp;
        ck_assert_int_eq(get("/x", &resp, false), 0);
        ns_kube_resp_clear(&resp);
    }
    ns_kube_stats st;
    ns_kube_client_stats(client, &st);
    ck_assert_uint_eq(st.requests, 5);
    ck_assert_uint_eq(st.connections, 1);
}
END_TEST

typedef struct hammer {
    ns_kube_client *c;
    int n;
    int64_t took_ms;
} hammer;

static void *hammer_requests(void *arg)
{
    hammer *h = arg;
    int64_t start = ns_clock_now_ms();
    for (int i = 0; i < h->n; i++) {
        ns_kube_req req = {.method = "GET", .path = "/x"};
        ns_kube_resp resp;
        ck_assert_int_eq(ns_kube_do(h->c, &req, &resp), 0);
        ns_kube_resp_clear(&resp);
    }
    h->took_ms = ns_clock_now_ms() - start;
    return NULL;
}

/* A client held back by its rate limit (2 requests/s here, Karpenter's 200/s under load) does not hold back the
 * leader-election sibling, which has a limiter of its own: lease renewal is never starved. */
START_TEST(leader_election_limiter_is_its_own)
{
    ns_kube_client *busy = NULL, *le = NULL;
    ck_assert_int_eq(ns_kube_client_new_sibling(client, 2, 1, &busy), 0);
    ck_assert_int_eq(ns_kube_client_new_sibling(busy, 5, 10, &le), 0);
    hammer h = {busy, 6, 0};
    pthread_t t;
    pthread_create(&t, NULL, hammer_requests, &h);
    usleep(300000); /* the busy client is now waiting on its limiter */
    int64_t start = ns_clock_now_ms();
    for (int i = 0; i < 3; i++) {
        ns_kube_req req = {.method = "GET", .path = "/x"};
        ns_kube_resp resp;
        ck_assert_int_eq(ns_kube_do(le, &req, &resp), 0);
        ns_kube_resp_clear(&resp);
    }
    int64_t le_ms = ns_clock_now_ms() - start;
    pthread_join(t, NULL);
    ck_assert_msg(h.took_ms >= 2000, "6 requests at 2/s took only %lld ms", (long long)h.took_ms);
    ck_assert_msg(le_ms < 1000, "3 lease requests waited %lld ms behind the busy client", (long long)le_ms);
    ns_kube_client_free(le);
    ns_kube_client_free(busy);
}
END_TEST

typedef struct collected {
    char text[512];
    size_t len;
} collected;

static bool collect(void *ud, const char *data, size_t len)
{
    collected *c = ud;
    if (c->len + len < sizeof(c->text)) {
        memcpy(c->text + c->len, data, len);
        c->len += len;
        c->text[c->len] = '\0';
    }
    return true;
}

START_TEST(dropped_stream_delivers_what_arrived_and_fails)
{
    collected got = {0};
    ns_kube_req req = {.method = "GET", .path = "/drop", .on_data = collect, .ud = &got};
    ns_kube_resp resp;
    ck_assert_int_eq(ns_kube_do(client, &req, &resp), NS_ERR_THROTTLED);
    ck_assert_str_eq(got.text, "{\"type\":\"ADDED\",\"n\":1}\n{\"type\":\"ADDED\",\"n\":2}\n{\"type\":\"ADD");
    /* a stream is never repeated by the transport: the informer resumes from its last resourceVersion */
    ck_assert_int_eq(atomic_load(&hits), 1);
}
END_TEST

static atomic_bool cancel_flag;

static void *cancel_later(void *arg)
{
    usleep(300000);
    atomic_store(&cancel_flag, true);
    return NULL;
}

START_TEST(cancelled_stream_stops_promptly)
{
    collected got = {0};
    atomic_store(&cancel_flag, false);
    ns_kube_req req = {.method = "GET", .path = "/endless", .on_data = collect, .ud = &got, .cancel = &cancel_flag};
    pthread_t t;
    pthread_create(&t, NULL, cancel_later, NULL);
    int64_t start = ns_clock_now_ms();
    ns_kube_resp resp;
    ck_assert_int_eq(ns_kube_do(client, &req, &resp), 0);
    ns_kube_resp_clear(&resp);
    pthread_join(t, NULL);
    ck_assert_int_lt(ns_clock_now_ms() - start, 2500);
    ck_assert_ptr_nonnull(strstr(got.text, "BOOKMARK"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube-transport");
    TCase *t = tcase_create("transport");
    tcase_set_timeout(t, 30);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, retry_after_429_is_honoured);
    tcase_add_test(t, server_errors_are_retried_then_answer_returned);
    tcase_add_test(t, no_status_retry_hands_429_back);
    tcase_add_test(t, unauthorized_rereads_rotated_token);
    tcase_add_test(t, connections_are_reused);
    tcase_add_test(t, leader_election_limiter_is_its_own);
    tcase_add_test(t, dropped_stream_delivers_what_arrived_and_fails);
    tcase_add_test(t, cancelled_stream_stops_promptly);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
