/*
 * Entra ID (AAD) access tokens for ARM, as azidentity's DefaultAzureCredential chain gets them:
 *   client secret      POST {authority}/{tenant}/oauth2/v2.0/token, grant client_credentials, client_secret
 *   workload identity  the same endpoint with client_assertion = the projected service account token, read afresh
 *                      from the federated token file at every request (the kubelet rotates it)
 *   managed identity   GET {imds}/metadata/identity/oauth2/token (header Metadata: true), optionally for one
 *                      user-assigned identity's client ID
 * The token is cached and fetched again before it expires (at five minutes before expiry, or half its lifetime when
 * that is shorter), or at once after ARM refused it. Tokens and secrets are never logged or put in messages.
 * Thread-safe.
 */
#ifndef NS_AZURE_AUTH_H
#define NS_AZURE_AUTH_H

#include <stdbool.h>
#include <stdint.h>

#include <nodesmith/provider.h>

typedef enum az_auth_mode {
    AZ_AUTH_AUTO = 0, /* client secret if one is set, else workload identity if a token file is, else IMDS */
    AZ_AUTH_CLIENT_SECRET,
    AZ_AUTH_WORKLOAD_IDENTITY,
    AZ_AUTH_MANAGED_IDENTITY,
} az_auth_mode;

typedef struct az_auth_config {
    const ns_host *host;
    ns_host_ctx *ctx;
    az_auth_mode mode;
    const char *tenant;        /* required for secret and workload identity */
    const char *client_id;     /* required for secret and workload identity; optional for IMDS */
    const char *client_secret; /* never copied into messages */
    const char *token_file;    /* workload identity's federated token file */
    const char *authority;     /* "https://login.microsoftonline.com" (national clouds: their own) */
    const char *imds;          /* "http://169.254.169.254" */
    const char *resource;      /* "https://management.azure.com/" */
    int64_t timeout_ms;
    int max_attempts;
} az_auth_config;

typedef struct az_auth az_auth;

/* Checks the configuration (NS_ERR_INVALID_CONFIG naming what is missing) and picks the mode; fetches nothing. */
int az_auth_new(const az_auth_config *config, az_auth **out);
void az_auth_free(az_auth *a); /* accepts NULL */
/* The mode in use, for logs: "client-secret", "workload-identity" or "managed-identity". */
const char *az_auth_mode_name(const az_auth *a);
/* A valid access token into out (NS_OK), fetching one when none is cached or the cached one is due for refresh. */
int az_auth_token(az_auth *a, char *out, size_t len);
/* Drops the cached token if it is still `token` (ARM refused it): the next az_auth_token fetches a new one. */
void az_auth_invalidate(az_auth *a, const char *token);
/* Parses a mode name ("auto", "client-secret", "workload-identity", "managed-identity"); -1 when unknown. */
int az_auth_mode_parse(const char *name);

#endif
