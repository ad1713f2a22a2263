/*
 * Signed calls to AWS APIs over the host's HTTP upcall: the Query protocol (EC2, STS: a form body, an XML answer), the
 * JSON protocol (SQS, SSM, Pricing: X-Amz-Target and a JSON body) and REST-JSON GETs (EKS). Each attempt is signed afresh with SigV4 at the
 * host clock's time and sent with the host's own retries off; failed attempts are retried by the SDKs' standard
 * policy (aws_retry.h) with one retry quota per client. An answer refusing the credentials (expired token, signature
 * rejected) makes the credential chain refresh once before the call gives up.
 *
 * Thread-safe: the client may be shared by all of a provider's threads.
 */
#ifndef NS_AWS_CLIENT_H
#define NS_AWS_CLIENT_H

#include <nodesmith/provider.h>

#include "aws_api_error.h"
#include "aws_credentials.h"
#include "aws_endpoint.h"

typedef struct aws_client_config {
    const ns_host *host;
    ns_host_ctx *ctx;
    aws_credentials_provider *credentials; /* borrowed; must outlive the client */
    const aws_env *env;                    /* NULL = the process environment; must outlive the client */
    const char *region;                    /* copied */
    int max_attempts;                      /* 0 = AWS_RETRY_DEFAULT_MAX_ATTEMPTS */
    int64_t timeout_ms;                    /* per attempt; 0 = 30 s */
} aws_client_config;

typedef struct aws_client aws_client;

/* NS_OK with *out (free with aws_client_free), or an error reported with host->error. */
int aws_client_new(const aws_client_config *config, aws_client **out);
void aws_client_free(aws_client *c); /* accepts NULL */

/* A Query-protocol call of `service` ("ec2", "sts") with a form body (aws_query.h); `op` names the action in
 * messages. On NS_OK *resp is the 2xx answer (free with host->http_response_free). On failure the error is reported
 * with host->error ("EC2 DescribeInstances failed: CODE: message (HTTP 503, request ..., 3 attempts)") and, when
 * api_error is not NULL, the code AWS returned is copied there ("" for transport failures). */
int aws_client_query(aws_client *c, const char *service, const char *op, const char *body, size_t body_len,
                     ns_http_response **resp, aws_api_error *api_error);

/* A JSON-protocol call: `target` is the X-Amz-Target ("AmazonSQS.ReceiveMessage"), `json_version` "1.0" or "1.1".
 * Same results as aws_client_query. */
int aws_client_json(aws_client *c, const char *service, const char *target, const char *json_version,
                    const char *body, ns_http_response **resp, aws_api_error *api_error);

/* A REST-JSON GET ("eks", "DescribeCluster", "/clusters/demo"): path is below the endpoint and already URI-encoded.
 * Same results as aws_client_query. */
int aws_client_rest_get(aws_client *c, const char *service, const char *op, const char *path,
                        ns_http_response **resp, aws_api_error *api_error);

/* The endpoint URL the client uses for a service (for messages and tests). */
const char *aws_client_endpoint(aws_client *c, const char *service);

#endif
