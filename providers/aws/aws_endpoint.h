/*
 * Where the AWS provider sends requests, following the SDKs' conventions so an emulator can stand in:
 *   AWS_ENDPOINT_URL_<SERVICE> (EC2, STS, SSM, SQS, PRICING, EKS, SSO), then AWS_ENDPOINT_URL, then the public endpoint;
 *   AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true ignores both variables;
 *   AWS_EC2_METADATA_SERVICE_ENDPOINT (default http://169.254.169.254) and AWS_EC2_METADATA_DISABLED for IMDS.
 * Pure: no host upcalls; the environment is read through aws_env so tests can supply their own.
 */
#ifndef NS_AWS_ENDPOINT_H
#define NS_AWS_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>

/* Looks up an environment variable; returns NULL when unset. The string must live as long as the caller uses it. */
typedef const char *(*aws_getenv_fn)(void *ctx, const char *name);
typedef struct aws_env {
    aws_getenv_fn get; /* NULL = the process environment */
    void *ctx;
} aws_env;

/* The variable's value, or NULL when it is unset or empty. env may be NULL (the process environment). */
const char *aws_env_get(const aws_env *env, const char *name);
/* True when the variable is "true" (any case). */
bool aws_env_true(const aws_env *env, const char *name);

/* An endpoint split the way signing and the Host header need it. */
typedef struct aws_url {
    char scheme[8];  /* "https" or "http" */
    char host[256];  /* "ec2.us-east-1.amazonaws.com" or "127.0.0.1:4566"; the default port is left out */
    char path[512];  /* the endpoint's base path without a trailing '/', usually "" */
} aws_url;

/* Parses "scheme://host[:port][/path]". NS_OK or NS_ERR_INVALID_CONFIG (unknown scheme, empty host, too long). */
int aws_url_parse(const char *url, aws_url *out);

/* Resolves the endpoint URL of `service` ("ec2", "sts", "ssm", "sqs", "pricing", "eks", "sso": the SSO portal) in
 * `region` into url. NS_OK, or
 * NS_ERR_INVALID_CONFIG when the result does not fit or does not parse. */
int aws_endpoint_resolve(const aws_env *env, const char *service, const char *region, char *url, size_t url_len);

/* The region whose Pricing API serves `region` (the Pricing API lives in a few regions only), which is also the
 * region a Pricing request is signed for. */
const char *aws_pricing_region(const char *region);

/* The IMDS base URL (AWS_EC2_METADATA_SERVICE_ENDPOINT without a trailing '/', or http://169.254.169.254), or NULL
 * when AWS_EC2_METADATA_DISABLED is true. Written into url. */
const char *aws_imds_endpoint(const aws_env *env, char *url, size_t url_len);

#endif
