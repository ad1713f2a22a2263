/*
 * A stand-in for the core's ns_host table, for the AWS provider's tests: JSON through cJSON, HTTP through libcurl (or
 * through a scripted responder), a clock the test controls, options from a table, and every log line and error kept
 * so tests can inspect them (for example, that no secret was logged). Not thread-safe; tests drive it from one thread.
 */
#ifndef NS_AWS_FAKE_HOST_H
#define NS_AWS_FAKE_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include <nodesmith/provider.h>

/* Answers a request instead of the network. Fill *resp's status and body (the fake host copies them). Return NS_OK,
 * or an error category to simulate a transport failure. */
typedef struct fake_response {
    long status;
    const char *body;
    const char *headers[8][2]; /* name (lower-case), value; unused entries NULL */
} fake_response;
typedef int (*fake_responder)(void *ctx, const ns_http_request *req, fake_response *resp);

typedef struct fake_host {
    ns_host table;
    int64_t clock_ms;       /* the host clock; starts at the real time */
    int64_t slept_ms;       /* total of sleep_ms calls (which advance clock_ms instead of sleeping) */
    fake_responder responder; /* NULL = real HTTP with libcurl */
    void *responder_ctx;
    const char *options[32][2]; /* key, value */
    char log[65536];          /* every log line: "LEVEL message key=value ...\n" */
    int last_error;
    char last_error_message[1024];
    int64_t last_retry_after_ms;
    char unavailable[16][3][64]; /* offerings named with error_unavailable_offering */
    int n_unavailable;
    int http_requests; /* how many http_request calls were made */
} fake_host;

/* Initialises *h. The ns_host_ctx to pass to the code under test is (ns_host_ctx *)h. */
void fake_host_init(fake_host *h);
/* Clears the recorded error and unavailable offerings. */
void fake_host_clear_error(fake_host *h);
/* Sets an option (pointers must outlive the host). */
void fake_host_set_option(fake_host *h, const char *key, const char *value);

#endif
