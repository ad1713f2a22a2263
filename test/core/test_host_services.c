/* The core services providers reach through the host table: options parsing, the error record, structured
 * logging, JSON, and the HTTP client (against a real HTTP server on loopback, libmicrohttpd). */
#include <check.h>
#include <math.h>
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
#include "plugin/plugin_internal.h"

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

/* Fields given as JSON keep their types (objects, numbers); the frame and secrets are protected as for text fields. */
START_TEST(log_json_fields_keep_their_shape)
{
    cJSON *f = cJSON_CreateObject();
    cJSON_AddItemToObject(f, "NodeClaim", ns_log_ref(NULL, "default-abc"));
    cJSON_AddItemToObject(f, "Pod", ns_log_ref("shop", "web-1"));
    cJSON_AddNumberToObject(f, "pods", 3);
    cJSON_AddItemToObject(f, "client_secret", ns_log_ref(NULL, "hunter2"));
    cJSON_AddStringToObject(f, "level", "spoofed");
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    ns_log_set_output(mem);
    ns_log_set_level(NS_LOG_INFO);
    ns_log_json(NS_LOG_INFO, "provisioner", "created nodeclaim", f);
    ns_log_json(NS_LOG_DEBUG, "provisioner", "hidden", cJSON_CreateObject());
    ns_log_set_output(NULL);
    fclose(mem);
    ck_assert_ptr_null(strstr(buf, "hidden"));
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "level")->valuestring, "INFO");
    const cJSON *claim = cJSON_GetObjectItem(j, "NodeClaim");
    ck_assert(cJSON_IsObject(claim) && cJSON_GetArraySize(claim) == 1);
    ck_assert_str_eq(cJSON_GetObjectItem(claim, "name")->valuestring, "default-abc");
    const cJSON *pod = cJSON_GetObjectItem(j, "Pod");
    ck_assert_str_eq(cJSON_GetObjectItem(pod, "namespace")->valuestring, "shop");
    ck_assert_str_eq(cJSON_GetObjectItem(pod, "name")->valuestring, "web-1");
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(j, "pods")) && cJSON_GetObjectItem(j, "pods")->valueint == 3);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "client_secret")->valuestring, "<redacted>");
    cJSON_Delete(j);
}
END_TEST

/* ABI 7's log_typed, through the host table providers get: the line log writes, each value of its own JSON type (an
 * integer with every digit, a double, a boolean, a copied object, null for what JSON cannot hold or a type this host
 * does not know), the frame kept, the first of a repeated key kept, and secrets redacted whatever their type. */
START_TEST(log_typed_fields_are_json_typed_and_redacted)
{
    const ns_host *h = ns_plugin_host_table();
    ck_assert_uint_eq(h->abi_version, NS_PROVIDER_ABI_VERSION);
    ck_assert_uint_eq(h->struct_size, sizeof(ns_host));
    ck_assert(NS_HAS_FIELD(h, ns_host, log_typed));
    ns_host cut = *h;
    cut.struct_size = 248; /* a core of ABI 1 to 6 */
    ck_assert(!NS_HAS_FIELD(&cut, ns_host, log_typed));

    ns_clock_use_simulated(1763719200123LL);
    cJSON *ref = ns_log_ref("kube-system", "web-1");
    ns_log_field f[] = {
        {"instance-types", NS_LOG_FIELD_INT, {.integer = 12}},
        {"huge", NS_LOG_FIELD_INT, {.integer = 9007199254740993LL}}, /* 2^53 + 1: a double would round it */
        {"negative", NS_LOG_FIELD_INT, {.integer = -7}},
        {"ratio", NS_LOG_FIELD_NUMBER, {.number = 0.25}},
        {"nan", NS_LOG_FIELD_NUMBER, {.number = NAN}},
        {"spot", NS_LOG_FIELD_BOOL, {.boolean = true}},
        {"zone", NS_LOG_FIELD_STRING, {.string = "us-west-2a"}},
        {"empty", NS_LOG_FIELD_STRING, {.string = NULL}},
        {"Pod", NS_LOG_FIELD_JSON, {.json = (const ns_json *)ref}},
        {"absent", NS_LOG_FIELD_JSON, {.json = NULL}},
        {"future", (ns_log_field_type)99, {.integer = 1}},
        {"aws-secret-access-key", NS_LOG_FIELD_STRING, {.string = "wJalrXUtnFEMI"}},
        {"client_token", NS_LOG_FIELD_INT, {.integer = 424242}},
        {"session_token", NS_LOG_FIELD_JSON, {.json = (const ns_json *)ref}},
        {"message", NS_LOG_FIELD_STRING, {.string = "spoofed"}},
        {"instance-types", NS_LOG_FIELD_INT, {.integer = 99}},
        {NULL, NS_LOG_FIELD_STRING, {.string = "keyless"}},
    };
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    ns_log_set_output(mem);
    ns_log_set_level(NS_LOG_INFO);
    h->log_typed(NULL, NS_LOG_INFO, "listed instance types", f, sizeof(f) / sizeof(f[0]));
    h->log_typed(NULL, NS_LOG_DEBUG, "hidden", f, 1);
    ns_log_set_output(NULL);
    fclose(mem);
    ns_clock_use_real();
    /* The caller still owns the object it logged twice. */
    ck_assert_str_eq(cJSON_GetObjectItem(ref, "name")->valuestring, "web-1");
    cJSON_Delete(ref);

    ck_assert_uint_gt(len, 0);
    ck_assert_int_eq(buf[len - 1], '\n');
    ck_assert_ptr_null(memchr(buf, '\n', len - 1)); /* one line: the DEBUG one was filtered */
    ck_assert_ptr_nonnull(strstr(buf, "\"huge\":9007199254740993,"));
    ck_assert_ptr_null(strstr(buf, "424242"));
    ck_assert_ptr_null(strstr(buf, "wJalrXUtnFEMI"));
    ck_assert_ptr_null(strstr(buf, "keyless"));
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "level")->valuestring, "INFO");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "time")->valuestring, "2025-11-21T10:00:00.123Z");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "logger")->valuestring, "provider");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "message")->valuestring, "listed instance types");
    const cJSON *n = cJSON_GetObjectItem(j, "instance-types");
    ck_assert(cJSON_IsNumber(n) && n->valuedouble == 12);
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(j, "negative")) && cJSON_GetObjectItem(j, "negative")->valueint == -7);
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(j, "ratio")) && cJSON_GetObjectItem(j, "ratio")->valuedouble == 0.25);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "nan")));
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "spot")));
    ck_assert_str_eq(cJSON_GetObjectItem(j, "zone")->valuestring, "us-west-2a");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "empty")->valuestring, "");
    const cJSON *pod = cJSON_GetObjectItem(j, "Pod");
    ck_assert(cJSON_IsObject(pod));
    ck_assert_str_eq(cJSON_GetObjectItem(pod, "namespace")->valuestring, "kube-system");
    ck_assert_str_eq(cJSON_GetObjectItem(pod, "name")->valuestring, "web-1");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "absent")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "future")));
    ck_assert_str_eq(cJSON_GetObjectItem(j, "aws-secret-access-key")->valuestring, "<redacted>");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "client_token")->valuestring, "<redacted>");
    ck_assert_str_eq(cJSON_GetObjectItem(j, "session_token")->valuestring, "<redacted>");
    /* level, time, logger, message and the 14 distinct keyed fields ("message" is the frame's) */
    ck_assert_int_eq(cJSON_GetArraySize(j), 4 + 14);
    cJSON_Delete(j);
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
static atomic_int connections_opened;
static int script_status[8];
static int script_len;
static int delay_ms;
static char last_user_agent[256];

static char big_body[100000];

/* An answer of unknown length (sent chunked, no Content-Length): the limit must hold while reading. */
static ssize_t stream_big(void *cls, uint64_t pos, char *buf, size_t max)
{
    if (pos >= sizeof(big_body))
        return MHD_CONTENT_READER_END_OF_STREAM;
    size_t n = sizeof(big_body) - pos < max ? sizeof(big_body) - pos : max;
    memset(buf, 'x', n);
    return (ssize_t)n;
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
    int n = atomic_fetch_add(&requests_seen, 1);
    int status = n < script_len ? script_status[n] : 200;
    if (delay_ms)
        usleep((useconds_t)delay_ms * 1000);
    const char *ua = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "User-Agent");
    snprintf(last_user_agent, sizeof(last_user_agent), "%s", ua ? ua : "");
    if (strcmp(url, "/big") == 0 || strcmp(url, "/big-chunked") == 0) {
        memset(big_body, 'x', sizeof(big_body));
        struct MHD_Response *big =
            url[4] ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_big, NULL, NULL)
                   : MHD_create_response_from_buffer(sizeof(big_body), big_body, MHD_RESPMEM_PERSISTENT);
        enum MHD_Result brc = MHD_queue_response(conn, 200, big);
        MHD_destroy_response(big);
        return brc;
    }
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

static void count_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
                             enum MHD_ConnectionNotificationCode code)
{
    if (code == MHD_CONNECTION_NOTIFY_STARTED)
        atomic_fetch_add(&connections_opened, 1);
}

static struct MHD_Daemon *server;
static char server_url[128];
static char server_base[64];
static char *tls_key_pem, *tls_cert_pem;

static char *read_pki(const char *name)
{
    const char *dir = getenv("NS_TEST_PKI");
    ck_assert_msg(dir != NULL, "NS_TEST_PKI (the generated test PKI) is not set");
    static char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char *buf = calloc(1, 16384);
    ck_assert_uint_gt(fread(buf, 1, 16383, f), 0);
    fclose(f);
    return buf;
}

static const char *pki_path(const char *name)
{
    static char path[4][512];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof(path[0]), "%s/%s", getenv("NS_TEST_PKI"), name);
    return p;
}

static void start_server_tls(bool tls)
{
    atomic_store(&requests_seen, 0);
    atomic_store(&connections_opened, 0);
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD;
    if (tls) {
        tls_key_pem = read_pki("server.key");
        tls_cert_pem = read_pki("server.pem");
        server = MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, answer, NULL, MHD_OPTION_SOCK_ADDR, NULL,
                                  MHD_OPTION_NOTIFY_CONNECTION, count_connection, NULL, MHD_OPTION_HTTPS_MEM_KEY,
                                  tls_key_pem, MHD_OPTION_HTTPS_MEM_CERT, tls_cert_pem, MHD_OPTION_END);
    } else {
        server = MHD_start_daemon(flags, 0, NULL, NULL, answer, NULL, MHD_OPTION_SOCK_ADDR, NULL,
                                  MHD_OPTION_NOTIFY_CONNECTION, count_connection, NULL, MHD_OPTION_END);
    }
    ck_assert_ptr_nonnull(server);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(server, MHD_DAEMON_INFO_BIND_PORT);
    snprintf(server_base, sizeof(server_base), "%s://127.0.0.1:%u", tls ? "https" : "http", info->port);
    snprintf(server_url, sizeof(server_url), "%s/v1/things", server_base);
}

static void start_server(void)
{
    start_server_tls(false);
}

static void stop_server(void)
{
    MHD_stop_daemon(server);
    script_len = 0;
    delay_ms = 0;
    free(tls_key_pem);
    free(tls_cert_pem);
    tls_key_pem = tls_cert_pem = NULL;
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

START_TEST(http_reuses_the_connection)
{
    start_server();
    for (int i = 0; i < 5; i++) {
        ns_http_request req = get_request(0);
        ns_http_response *resp = NULL;
        ck_assert_int_eq(ns_http_perform(&req, &resp), NS_OK);
        ck_assert_int_eq(resp->status, 200);
        ns_http_response_free(resp);
    }
    ck_assert_int_eq(atomic_load(&requests_seen), 5);
    ck_assert_int_eq(atomic_load(&connections_opened), 1);
    stop_server();
}
END_TEST

START_TEST(http_sends_a_user_agent_unless_given_one)
{
    start_server();
    ns_http_request req = get_request(0);
    ns_http_response *resp = NULL;
    ck_assert_int_eq(ns_http_perform(&req, &resp), NS_OK);
    ns_http_response_free(resp);
    ck_assert_str_eq(last_user_agent, "nodesmith/0.1.0");
    ck_assert_int_eq(ns_http_perform_as(&req, "nodesmith/0.1.0 aws/1.2.3", &resp), NS_OK);
    ns_http_response_free(resp);
    ck_assert_str_eq(last_user_agent, "nodesmith/0.1.0 aws/1.2.3");
    ns_http_header own[] = {{"User-Agent", "custom/9"}};
    req.headers = own;
    ck_assert_int_eq(ns_http_perform_as(&req, "nodesmith/0.1.0 aws/1.2.3", &resp), NS_OK);
    ns_http_response_free(resp);
    ck_assert_str_eq(last_user_agent, "custom/9");
    stop_server();
}
END_TEST

START_TEST(http_refuses_an_answer_over_the_limit)
{
    start_server();
    const char *paths[] = {"/big", "/big-chunked"};
    for (int i = 0; i < 2; i++) {
        char url[128];
        snprintf(url, sizeof(url), "%s%s", server_base, paths[i]);
        ns_http_request req = {.struct_size = sizeof(req), .method = "GET", .url = url, .max_retries = 3,
                               .max_response_bytes = 1000};
        ns_http_response *resp = NULL;
        atomic_store(&requests_seen, 0);
        ck_assert_int_eq(ns_http_perform(&req, &resp), NS_ERR_INTERNAL);
        ck_assert_ptr_null(resp);
        ck_assert_ptr_nonnull(strstr(ns_error_message(), "answer larger than 1000 bytes; refused"));
        ck_assert_int_eq(atomic_load(&requests_seen), 1); /* not retried */
        req.max_response_bytes = 0; /* the default limit (64 MiB) lets it through */
        ck_assert_int_eq(ns_http_perform(&req, &resp), NS_OK);
        ck_assert_uint_eq(resp->body_len, sizeof(big_body));
        ns_http_response_free(resp);
    }
    stop_server();
}
END_TEST

/* ---- TLS against a loopback HTTPS server whose certificate a generated test CA signed. */

START_TEST(tls_untrusted_certificate_is_a_certificate_error_not_retried)
{
    unsetenv(NS_HTTP_CA_BUNDLE_ENV);
    start_server_tls(true);
    ns_clock_use_simulated(5000);
    ns_http_request req = get_request(3);
    ns_http_response *resp = NULL;
    ck_assert_int_eq(ns_http_perform(&req, &resp), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_null(resp);
    const char *m = ns_error_message();
    ck_assert_msg(strstr(m, "TLS certificate error") && strstr(m, server_url) && strstr(m, "the system store"), "%s",
                  m);
    ck_assert_ptr_null(strstr(m, "timed out"));
    ck_assert_int_eq(ns_clock_now_ms(), 5000); /* no backoff: not retried */
    ck_assert_int_eq(atomic_load(&requests_seen), 0);
    /* Trusting an unrelated CA does not help, and the message names the bundle and where it came from. */
    setenv(NS_HTTP_CA_BUNDLE_ENV, pki_path("other-ca.pem"), 1);
    ck_assert_int_eq(ns_http_perform(&req, &resp), NS_ERR_INVALID_CONFIG);
    m = ns_error_message();
    ck_assert_msg(strstr(m, "TLS certificate error") && strstr(m, "other-ca.pem") &&
                      strstr(m, "$" NS_HTTP_CA_BUNDLE_ENV),
                  "%s", m);
    unsetenv(NS_HTTP_CA_BUNDLE_ENV);
    ns_clock_use_real();
    stop_server();
}
END_TEST

START_TEST(tls_ca_bundle_from_the_host_environment)
{
    start_server_tls(true);
    setenv(NS_HTTP_CA_BUNDLE_ENV, pki_path("ca.pem"), 1);
    for (int i = 0; i < 3; i++) {
        ns_http_request req = get_request(0);
        ns_http_response *resp = NULL;
        ck_assert_int_eq(ns_http_perform(&req, &resp), NS_OK);
        ck_assert_int_eq(resp->status, 200);
        ns_http_response_free(resp);
    }
    ck_assert_int_eq(atomic_load(&connections_opened), 1); /* TLS connections are reused too */
    unsetenv(NS_HTTP_CA_BUNDLE_ENV);
    stop_server();
}
END_TEST

START_TEST(tls_ca_bundle_of_the_request_comes_first)
{
    start_server_tls(true);
    setenv(NS_HTTP_CA_BUNDLE_ENV, pki_path("other-ca.pem"), 1);
    ns_http_request req = get_request(0);
    req.ca_bundle = pki_path("ca.pem");
    ns_http_response *resp = NULL;
    ck_assert_int_eq(ns_http_perform(&req, &resp), NS_OK);
    ck_assert_int_eq(resp->status, 200);
    ns_http_response_free(resp);
    /* A bundle that cannot be read is a configuration error naming the file and its source. */
    req.ca_bundle = "/nonexistent/ca.pem";
    ck_assert_int_eq(ns_http_perform(&req, &resp), NS_ERR_INVALID_CONFIG);
    const char *m = ns_error_message();
    ck_assert_msg(strstr(m, "CA bundle /nonexistent/ca.pem (from the provider's CA bundle setting) cannot be read"),
                  "%s", m);
    /* A request built before these fields existed (shorter struct_size) is read without them by the host; here the
     * field is simply NULL: the environment's bundle (an unrelated CA) applies and the certificate is refused. */
    req.ca_bundle = NULL;
    ck_assert_int_eq(ns_http_perform(&req, &resp), NS_ERR_INVALID_CONFIG);
    unsetenv(NS_HTTP_CA_BUNDLE_ENV);
    stop_server();
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
    tcase_add_test(errors, log_json_fields_keep_their_shape);
    tcase_add_test(errors, log_typed_fields_are_json_typed_and_redacted);
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
    tcase_add_test(http, http_reuses_the_connection);
    tcase_add_test(http, http_sends_a_user_agent_unless_given_one);
    tcase_add_test(http, http_refuses_an_answer_over_the_limit);
    tcase_add_test(http, tls_untrusted_certificate_is_a_certificate_error_not_retried);
    tcase_add_test(http, tls_ca_bundle_from_the_host_environment);
    tcase_add_test(http, tls_ca_bundle_of_the_request_comes_first);
    suite_add_tcase(s, http);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
