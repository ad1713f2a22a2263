/* /metrics, /healthz and /readyz on libmicrohttpd. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "controller/endpoints.h"
#include "errors/ns_error.h"

struct ns_endpoints {
    struct MHD_Daemon *metrics, *health;
    ns_metrics *registry;
    pthread_mutex_t mu;
    bool ready;
    char reason[512];
};

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, const char *type, const char *body,
                             bool owned)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
                                                             owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
    if (!r) {
        if (owned)
            free((void *)body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result on_metrics(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **state)
{
    ns_endpoints *ep = cls;
    (void)version, (void)upload, (void)upload_size, (void)state;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "method not allowed\n", false);
    if (strcmp(url, "/metrics") != 0)
        return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain", "404 page not found\n", false);
    char *text = ns_metrics_render(ep->registry);
    if (!text)
        return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", "out of memory\n", false);
    return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text, true);
}

static enum MHD_Result on_health(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *upload, size_t *upload_size, void **state)
{
    ns_endpoints *ep = cls;
    (void)version, (void)upload, (void)upload_size, (void)state;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "method not allowed\n", false);
    if (strcmp(url, "/healthz") == 0)
        return reply(conn, MHD_HTTP_OK, "text/plain", "ok", false);
    if (strcmp(url, "/readyz") != 0)
        return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain", "404 page not found\n", false);
    char body[600];
    pthread_mutex_lock(&ep->mu);
    bool ready = ep->ready;
    snprintf(body, sizeof(body), ready ? "ok" : "not ready: %s\n", ep->reason);
    pthread_mutex_unlock(&ep->mu);
    return reply(conn, ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", body, false);
}

static struct MHD_Daemon *serve(const struct sockaddr_in *addr, MHD_AccessHandlerCallback fn, ns_endpoints *ep)
{
    return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, ntohs(addr->sin_port),
                            NULL, NULL, fn, ep, MHD_OPTION_SOCK_ADDR, addr, MHD_OPTION_CONNECTION_TIMEOUT,
                            (unsigned int)30, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)64, MHD_OPTION_END);
}

int ns_endpoints_start(const char *bind_address, int metrics_port, int health_port, ns_metrics *metrics,
                       ns_endpoints **out)
{
    *out = NULL;
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    if (inet_pton(AF_INET, bind_address, &a.sin_addr) != 1)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "bind address \"%s\" is not an IPv4 address", bind_address);
    ns_endpoints *ep = calloc(1, sizeof(*ep));
    if (!ep)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory starting the HTTP endpoints");
    pthread_mutex_init(&ep->mu, NULL);
    ep->registry = metrics;
    snprintf(ep->reason, sizeof(ep->reason), "starting");
    a.sin_port = htons((uint16_t)metrics_port);
    if (!(ep->metrics = serve(&a, on_metrics, ep))) {
        ns_endpoints_stop(ep);
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "setting METRICS_PORT (--metrics-port): cannot serve /metrics on %s:%d "
                       "(in use, or not permitted)", bind_address, metrics_port);
    }
    a.sin_port = htons((uint16_t)health_port);
    if (!(ep->health = serve(&a, on_health, ep))) {
        ns_endpoints_stop(ep);
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "setting HEALTH_PROBE_PORT (--health-probe-port): cannot serve /healthz "
                       "and /readyz on %s:%d (in use, or not permitted)", bind_address, health_port);
    }
    *out = ep;
    return 0;
}

void ns_endpoints_stop(ns_endpoints *ep)
{
    if (!ep)
        return;
    if (ep->metrics)
        MHD_stop_daemon(ep->metrics);
    if (ep->health)
        MHD_stop_daemon(ep->health);
    pthread_mutex_destroy(&ep->mu);
    free(ep);
}

void ns_endpoints_set_ready(ns_endpoints *ep, bool ready, const char *reason)
{
    pthread_mutex_lock(&ep->mu);
    ep->ready = ready;
    snprintf(ep->reason, sizeof(ep->reason), "%s", reason ? reason : "");
    pthread_mutex_unlock(&ep->mu);
}
