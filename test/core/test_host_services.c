/* The core services providers reach through the host table: options parsing, the error record, structured
 * logging, JSON, and the HTTP client (against a real HTTP server on loopback, libmicrohttpd). */
#include <check.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "clock/ns_clock.h"
#include "config/scalar_parse.h"
#include "errors/ns_error.h"
#include "http/http_client.h"
#include "json/host_json.h"
#include "log/ns_log.h"

START_TEST(durations_parse_like_go)
{
    static const struct {
        const char *text;
        int64_t ms;
    } ok[] = {{"30s", 30000}, {"5m", 300000}, {"1h30m", 5400000}, {"720h", 2592000000LL}, {"300ms", 300},
              {"1.5s", 1500}, {"0", 0}, {"15", 15000}, {"2h0m5s", 7205000}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        int64_t v = -1;
        ck_assert_msg(ns_parse_duration_ms(ok[i].text, &v) == NS_OK, "%s", ok[i].text);
        ck_assert_int_eq(v, ok[i].ms);
    }
    static const char *const bad[] = {"", "s", "5 m", "5x", "-5s", "1h-2m", "abc", "5m3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t v;
        ck_assert_msg(ns_parse_duration_ms(bad[i], &v) == NS_ERR_INVALID_ARGUMENT, "'%s' accepted", bad[i]);
    }
}
END_TEST

START_TEST(bools_and_ints_parse_strictly)
{
    bool b = false;
    ck_assert_int_eq(ns_parse_bool("Yes", &b), NS_OK);
    ck_assert(b);
    ck_assert_int_eq(ns_parse_bool("off", &b), NS_OK);
    ck_assert(!b);
    ck_assert_int_eq(ns_parse_bool("1", &b), NS_ERR_INVALID_ARGUMENT);
    int64_t v;
    ck_assert_int_eq(ns_parse_int64("-42", &v), NS_OK);
    ck_assert_int_eq(v, -42);
    ck_assert_int_eq(ns_parse_int64("42x", &v), NS_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ns_parse_int64(" 42", &v), NS_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ns_parse_int64("99999999999999999999", &v), NS_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(error_record_keeps_detail_and_prefixes)
{
    ns_error_clear();
    ck_assert_int_eq(ns_error_last()->code, NS_OK);
    ck_assert_int_eq(NS_FAIL(NS_ERR_INSUFFICIENT_CAPACITY, "no capacity for %s", "m5.large"),
                     NS_ERR_INSUFFICIENT_CAPACITY);
    ns_error_add_unavailable("m5.large", "us-west-2a", "spot");
    ns_error_set_retry_after(1500);
    ck_assert_int_eq(ns_error_prefix("launch %s: ", "default-x"), NS_ERR_INSUFFICIENT_CAPACITY);
    const ns_error_record *e = ns_error_last();
    ck_assert_str_eq(e->message, "launch default-x: no capacity for m5.large");
    ck_assert_str_eq(e->file, "test_host_services.c");
    ck_assert_uint_eq(e->n_unavailable, 1);
    ck_assert_str_eq(e->unavailable[0].zone, "us-west-2a");
    ck_assert_int_eq(e->retry_after_ms, 1500);
    ck_assert_str_eq(ns_err_name(NS_ERR_THROTTLED), "throttled");
    /* A prefix longer than what fits keeps the message NUL-terminated and within bounds. */
    char big[700];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    NS_FAIL(NS_ERR_INTERNAL, "%s", big);
    ns_error_prefix("%s", big);
    ck_assert_uint_eq(strlen(ns_error_message()), sizeof(e->message) - 1);
}
END_TEST

static cJSON *log_one_line(ns_log_level level, const char *logger, const char *message, const ns_label *fields,
                           size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    ns_log_set_output(mem);
    ns_log_fields(level, logger, message, fields, n);
    ns_log_set_output(NULL);
    fclose(mem);
    ck_assert_uint_gt(len, 0);
    ck_assert_int_eq(buf[len - 1], '\n');
    ck_assert_ptr_null(memchr(buf, '\n', len - 1));
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    ck_assert_ptr_nonnull(j);
    return j;
}

START_TEST(log_lines_are_karpenter_shaped_and_redacted)
{
    ns_clock_use_simulated(1763719200123LL);
    ns_log_set_level(NS_LOG_INFO);
    ns_label fields[] = {{"nodeclaim", "default-abc"}, {"aws-secret-access-key", "wJalrXUtnFEMI"},
                         {"Authorization", "AWS4-HMAC-SHA256 Credential=..."}, {"message", "spoofed"},
                         {"session_token", "FwoGZX"}};
    cJSON *j = log_one_line(NS_LOG_INFO, "provisioner", "launched nodeclaim", fields, 5);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "level")->valuestring, "INFO");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "time")->valuestring, "2025-11-21T10:00:00.123Z");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "logger")->valuestring, "provisioner");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "message")->valuestring, "launched nodeclaim");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "nodeclaim")->valuestring, "default-abc");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "aws-secret-access-key")->valuestring, "<redacted>");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "Authorization")->valuestring, "<redacted>");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "session_token")->valuestring, "<redacted>");
    cJSON_Delete(j);
    ns_clock_use_real();
}
END_TEST

START_TEST(log_level_filters)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    ns_log_set_output(mem);
    ns_log_set_level(NS_LOG_WARN);
    ns_log(NS_LOG_INFO, "t", "hidden", NULL);
    ns_log(NS_LOG_ERROR, "t", "shown", "k", "v", NULL);
    ns_log_set_output(NULL);
    ns_log_set_level(NS_LOG_INFO);
    fclose(mem);
    ck_assert_ptr_null(strstr(buf, "hidden"));
    ck_assert_ptr_nonnull(strstr(buf, "\"shown\""));
    ck_assert_ptr_nonnull(strstr(buf, "\"k\":\"v\""));
    free(buf);
    ns_log_level level;
    ck_assert_int_eq(ns_log_parse_level("DEBUG", &level), NS_OK);
    ck_assert_int_eq(level, NS_LOG_DEBUG);
    ck_assert_int_eq(ns_log_parse_level("verbose", &level), NS_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(json_upcalls_build_and_read)
{
    ns_json *o = ns_host_json_new_object();
    ck_assert_int_eq(ns_host_json_add(o, "name", ns_host_json_new_string("m5.large")), NS_OK);
    ck_assert_int_eq(ns_host_json_add(o, "vcpu", ns_host_json_new_number(2)), NS_OK);
    ns_json *a = ns_host_json_new_array();
    ck_assert_int_eq(ns_host_json_add(a, NULL, ns_host_json_new_bool(true)), NS_OK);
    ck_assert_int_eq(ns_host_json_add(o, "flags", a), NS_OK);
    ck_assert_int_eq(ns_host_json_add(o, NULL, ns_host_json_new_bool(true)), NS_ERR_INVALID_ARGUMENT);
    char *text = ns_host_json_print(o);
    ck_assert_str_eq(text, "{\"name\":\"m5.large\",\"vcpu\":2,\"flags\":[true]}");
    ns_json *back = ns_host_json_parse(text, strlen(text));
    free(text);
    ck_assert_int_eq(ns_host_json_type(back), NS_JSON_OBJECT);
    ck_assert_uint_eq(ns_host_json_size(back), 3);
    ck_assert_str_eq(ns_host_json_key(ns_host_json_at(back, 1)), "vcpu");
    ck_assert_str_eq(ns_host_json_string(ns_host_json_get(back, "name")), "m5.large");
    ck_assert(ns_host_json_number(ns_host_json_get(back, "vcpu")) == 2.0);
    ck_assert(ns_host_json_bool(ns_host_json_at(ns_host_json_get(back, "flags"), 0)));
    ck_assert_ptr_null(ns_host_json_string(ns_host_json_get(back, "vcpu")));
    ck_assert_ptr_null(ns_host_json_get(back, "absent"));
    ck_assert_ptr_null(ns_host_json_at(back, 3));
    ck_assert_ptr_null(ns_host_json_parse("{\"a\":", 5));
    ns_host_json_free(back);
    ns_host_json_free(o);
}
END_TEST

/* ---- A scripted HTTP server: each request pops the next status from a script. */

static atomic_int requests_seen;
static int script_status[8];
static int script_len;
static int delay_ms;

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
    int n = atomic_fetch_add(&requests_seen, 1);
    int status = n < script_len ? script_status[n] : 200;
    if (delay_ms)
        usleep((useconds_t)delay_ms * 1000);
    char body[128];
    snprintf(body, sizeof(body), "{\"request\":%d,\"method\":\"%s\",\"path\":\"%s\"}", n + 1, method, url);
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "X-Request-Count", "yes");
    if (status == 429)
        MHD_add_response_header(r, "Retry-After", "2");
    enum MHD_Result rc = MHD_queue_response(conn, (unsigned)status, r);
    MHD_destroy_response(r);
    return rc;
}

static struct MHD_Daemon *server;
static char server_url[64];

static void start_server(void)
{
    atomic_store(&requests_seen, 0);
    server = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
                              answer, NULL, MHD_OPTION_SOCK_ADDR, NULL, MHD_OPTION_END);
    ck_assert_ptr_nonnull(server);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(server, MHD_DAEMON_INFO_BIND_PORT);
    snprintf(server_url, sizeof(server_url), "http://127.0.0.1:%u/v1/things", info->port);
}

static void stop_server(void)
{
    MHD_stop_daemon(server);
    script_len = 0;
    delay_ms = 0;
}

static ns_http_request get_request(int retries)
{
    static const ns_http_header headers[] = {{"Accept", "application/json"}};
    return (ns_http_request){.struct_size = sizeof(ns_http_request), .method = "GET", .url = server_url,
                             .headers = headers, .n_headers = 1, .max_retries = retries};
}

START_TEST(http_returns_body_and_lowercased_headers)
{
    start_server();
    ns_http_request req = get_request(-1);
    req.method = "POST";
    req.body = "{\"x\":1}";
    req.body_len = 7;
    ns_http_response *resp = NULL;
    ck_assert_int_eq(ns_http_perform(&req, &resp), NS_OK);
    ck_assert_int_eq(resp->status, 200);
    ck_assert_str_eq(resp->body, "{\"request\":1,\"method\":\"POST\",\"path\":\"/v1/things\"}");
    ck_assert_str_eq(ns_http_response_header(resp, "x-request-count"), "yes");
    bool lower = false;
    for (size_t i = 0; i < resp->n_headers; i++)
        lower |= strcmp(resp->headers[i].name, "x-request-count") == 0;
    ck_assert(lower);
    ns_http_response_free(resp);
    stop_server();
}
END_TEST

START_TEST(http_retries_5xx_then_succeeds)
{
    script_status[0] = 503;
    script_status[1] = 500;
    script_len = 2;
    start_server();
    ns_clock_use_simulated(0);
    ns_http_request req = get_request(3);
    ns_http_response *resp = NULL;
    ck_assert_int_eq(ns_http_perform(&req, &resp), NS_OK);
    ck_assert_int_eq(resp->status, 200);
    ck_assert_int_eq(atomic_load(&requests_seen), 3);
    ns_http_response_free(resp);
    ns_clock_use_real();
    stop_server();
}
END_TEST

START_TEST(http_gives_up_after_retries_with_last_answer)
{
    for (int i = 0; i < 8; i++)
        script_status[i] = 503;
    script_len = 8;
    start_server();
    ns_clock_use_simulated(0);
    ns_http_request req = get_request(2);
    ns_http_response *resp = NULL;
    ck_assert_int_eq(ns_http_perform(&req, &resp), NS_OK);
    ck_assert_int_eq(resp->status, 503);
    ck_assert_int_eq(atomic_load(&requests_seen), 3);
    ns_http_response_free(resp);
    ns_clock_use_real();
    stop_server();
}
END_TEST

START_TEST(http_honours_retry_after)
{
    script_status[0] = 429;
    script_len = 1;
    start_server();
    ns_clock_use_simulated(1000000);
    ns_http_request req = get_request(1);
    ns_http_response *resp = NULL;
    ck_assert_int_eq(ns_http_perform(&req, &resp), NS_OK);
    ck_assert_int_eq(resp->status, 200);
    ck_assert_int_ge(ns_clock_now_ms() - 1000000, 2000);
    ns_http_response_free(resp);
    ns_clock_use_real();
    stop_server();
}
END_TEST

START_TEST(http_no_retries_means_one_request)
{
    script_status[0] = 503;
    script_len = 1;
    start_server();
    ns_http_request req = get_request(0);
    ns_http_response *resp = NULL;
    ck_assert_int_eq(ns_http_perform(&req, &resp), NS_OK);
    ck_assert_int_eq(resp->status, 503);
    ck_assert_int_eq(atomic_load(&requests_seen), 1);
    ns_http_response_free(resp);
    stop_server();
}
END_TEST

START_TEST(http_timeout_is_retryable_error)
{
    delay_ms = 600;
    start_server();
    ns_http_request req = get_request(0);
    req.timeout_ms = 100;
    ns_http_response *resp = NULL;
    ck_assert_int_eq(ns_http_perform(&req, &resp), NS_ERR_THROTTLED);
    ck_assert_ptr_null(resp);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), server_url));
    stop_server();
}
END_TEST

START_TEST(http_refused_connection_names_url)
{
    ns_http_request req = {.struct_size = sizeof(req), .method = "GET", .url = "http://127.0.0.1:1/nothing",
                           .max_retries = 0};
    ns_http_response *resp = NULL;
    ck_assert_int_eq(ns_http_perform(&req, &resp), NS_ERR_THROTTLED);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "GET http://127.0.0.1:1/nothing failed"));
    req.url = "gopher://127.0.0.1/";
    ck_assert_int_eq(ns_http_perform(&req, &resp), NS_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(backoff_is_bounded_full_jitter)
{
    for (int attempt = 1; attempt <= 12; attempt++) {
        int64_t ceiling = 100LL << attempt;
        if (ceiling > NS_HTTP_BACKOFF_CAP_MS)
            ceiling = NS_HTTP_BACKOFF_CAP_MS;
        int64_t max_seen = 0;
        for (int i = 0; i < 200; i++) {
            int64_t d = ns_http_backoff_ms(attempt);
            ck_assert_int_ge(d, 0);
            ck_assert_int_le(d, ceiling);
            if (d > max_seen)
                max_seen = d;
        }
        /* Jitter spreads over the whole window, not a fixed delay. */
        ck_assert_int_gt(max_seen, ceiling / 2);
    }
}
END_TEST

int main(void)
{
    ns_log_set_level(NS_LOG_ERROR);
    Suite *s = suite_create("host-services");
    TCase *parse = tcase_create("parse");
    tcase_add_test(parse, durations_parse_like_go);
    tcase_add_test(parse, bools_and_ints_parse_strictly);
    suite_add_tcase(s, parse);
    TCase *errors = tcase_create("errors-and-logs");
    tcase_add_test(errors, error_record_keeps_detail_and_prefixes);
    tcase_add_test(errors, log_lines_are_karpenter_shaped_and_redacted);
    tcase_add_test(errors, log_level_filters);
    tcase_add_test(errors, json_upcalls_build_and_read);
    suite_add_tcase(s, errors);
    TCase *http = tcase_create("http");
    tcase_set_timeout(http, 20);
    tcase_add_test(http, http_returns_body_and_lowercased_headers);
    tcase_add_test(http, http_retries_5xx_then_succeeds);
    tcase_add_test(http, http_gives_up_after_retries_with_last_answer);
    tcase_add_test(http, http_honours_retry_after);
    tcase_add_test(http, http_no_retries_means_one_request);
    tcase_add_test(http, http_timeout_is_retryable_error);
    tcase_add_test(http, http_refused_connection_names_url);
    tcase_add_test(http, backoff_is_bounded_full_jitter);
    suite_add_tcase(s, http);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
