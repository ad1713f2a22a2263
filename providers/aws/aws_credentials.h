/*
 * The AWS credential chain, in the SDKs' order (the sources nodesmith supports):
 *   1. environment: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN);
 *   2. web identity: AWS_ROLE_ARN + AWS_WEB_IDENTITY_TOKEN_FILE (+ AWS_ROLE_SESSION_NAME), exchanged with STS
 *      AssumeRoleWithWebIdentity (the token file is read again at every refresh, since kubelet rotates it);
 *   3. the shared config and credentials files' profile (aws_profile.h: $AWS_PROFILE or "default"), as the Go SDK
 *      resolves one: its static keys; else SSO (the token `aws sso login` cached in ~/.aws/sso/cache, exchanged with
 *      the SSO portal's GetRoleCredentials); else credential_process (run with /bin/sh -c, its JSON read from stdout).
 *      A profile with only role_arn (assume-role chains) is refused by name;
 *   4. the container credentials endpoint: AWS_CONTAINER_CREDENTIALS_FULL_URI (EKS Pod Identity; http only to
 *      loopback or the EKS/ECS link-local agents) or http://169.254.170.2 + AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
 *      (ECS), with the Authorization header from AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (read again at every refresh)
 *      or AWS_CONTAINER_AUTHORIZATION_TOKEN;
 *   5. EC2 instance metadata, IMDSv2 only: PUT /latest/api/token (a 6-hour session token, reused until a minute
 *      before it expires), then the role name and its credentials under /latest/meta-data/iam/security-credentials/.
 * The first source that is configured is chosen at the first call and kept, as the SDKs do. Temporary credentials
 * are refreshed refresh_before_ms (default 5 minutes) before they expire, on the host clock; if a refresh fails while
 * the old credentials are still valid they keep being used (with a warning). No secret, token or key ID is ever
 * logged or put in an error message.
 *
 * Uses the host's HTTP, JSON, clock, log and error upcalls. Thread-safe.
 */
#ifndef NS_AWS_CREDENTIALS_H
#define NS_AWS_CREDENTIALS_H

#include <stdint.h>

#include <nodesmith/provider.h>

#include "aws_creds.h"
#include "aws_endpoint.h"

#define AWS_CREDENTIALS_DEFAULT_REFRESH_MS (5 * 60 * 1000)

typedef enum aws_creds_source {
    AWS_CREDS_NONE = 0,
    AWS_CREDS_ENVIRONMENT,
    AWS_CREDS_WEB_IDENTITY,
    AWS_CREDS_IMDS,
    AWS_CREDS_PROFILE,
    AWS_CREDS_SSO,
    AWS_CREDS_PROCESS,
    AWS_CREDS_CONTAINER,
} aws_creds_source;

typedef struct aws_credentials_config {
    const ns_host *host;
    ns_host_ctx *ctx;
    const aws_env *env;         /* NULL = the process environment; must outlive the provider */
    const char *region;         /* for the regional STS endpoint; copied */
    int64_t refresh_before_ms;  /* 0 = AWS_CREDENTIALS_DEFAULT_REFRESH_MS */
    int64_t http_timeout_ms;    /* per request to STS and IMDS; 0 = 5 s */
    int64_t process_timeout_ms; /* credential_process's time limit; 0 = 1 minute, the AWS SDKs' default */
} aws_credentials_config;

typedef struct aws_credentials_provider aws_credentials_provider;

/* Creates a chain. NS_OK with *out (free with aws_credentials_provider_free), or an error reported with host->error
 * (NS_ERR_INVALID_CONFIG for an endpoint that does not parse, NS_ERR_INTERNAL). */
int aws_credentials_provider_new(const aws_credentials_config *config, aws_credentials_provider **out);

/* Accepts NULL. Wipes the cached credentials. */
void aws_credentials_provider_free(aws_credentials_provider *p);

/* Copies the current credentials into *out (the caller clears it with aws_creds_clear), refreshing them first when
 * they expire within the refresh window. Errors are reported with host->error: NS_ERR_UNAUTHORIZED when no source
 * is configured or a source refused, NS_ERR_INVALID_CONFIG for a half-set environment or an unreadable token file,
 * NS_ERR_THROTTLED when STS or IMDS could not be reached or answered 5xx/throttling. */
int aws_credentials_get(aws_credentials_provider *p, aws_creds *out);

/* Forces the next aws_credentials_get to fetch new credentials (after an ExpiredToken or AuthFailure answer). */
void aws_credentials_invalidate(aws_credentials_provider *p);

/* The chosen source (AWS_CREDS_NONE before the first successful get), and its name for logs. */
aws_creds_source aws_credentials_source(aws_credentials_provider *p);
const char *aws_creds_source_name(aws_creds_source s);

/* The CA bundle of AWS_CA_BUNDLE, else of the profile's ca_bundle (once the chain read the profile), else NULL. */
const char *aws_credentials_ca_bundle(aws_credentials_provider *p);

/* Reads an IMDSv2 metadata path ("placement/region" under /latest/meta-data/) into buf. NS_OK, NS_ERR_UNSUPPORTED
 * when IMDS is disabled, or another error reported with host->error. */
int aws_credentials_imds_metadata(aws_credentials_provider *p, const char *path, char *buf, size_t buflen);

#endif
