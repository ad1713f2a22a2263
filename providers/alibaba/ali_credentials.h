/*
 * The credential chain of Alibaba Cloud's SDKs (aliyun/credentials-go's default provider), decided once at init from
 * what the environment offers, in this order:
 *   1. ALIBABA_CLOUD_ACCESS_KEY_ID / ALIBABA_CLOUD_ACCESS_KEY_SECRET (+ ALIBABA_CLOUD_SECURITY_TOKEN: STS);
 *   2. RRSA (ACK's OIDC): ALIBABA_CLOUD_ROLE_ARN, ALIBABA_CLOUD_OIDC_PROVIDER_ARN, ALIBABA_CLOUD_OIDC_TOKEN_FILE
 *      (+ ALIBABA_CLOUD_ROLE_SESSION_NAME, ALIBABA_CLOUD_STS_REGION) -> STS AssumeRoleWithOIDC, unsigned;
 *   3. the CLI's profile, ~/.aliyun/config.json (ALIBABA_CLOUD_PROFILE, else its "current"): modes AK, StsToken,
 *      EcsRamRole, OIDC;
 *   4. the credentials file, ALIBABA_CLOUD_CREDENTIALS_FILE or ~/.alibabacloud/credentials (ini; [default] or
 *      ALIBABA_CLOUD_PROFILE): types access_key, sts, ecs_ram_role;
 *   5. the ECS RAM role through the instance metadata service (a session token first; ALIBABA_CLOUD_ECS_METADATA names
 *      the role, ALIBABA_CLOUD_ECS_METADATA_DISABLED=true turns it off, ALIBABA_CLOUD_IMDSV1_DISABLED=true refuses to
 *      go on without the token).
 * Temporary credentials are fetched again 3 minutes before they expire. No secret is ever logged.
 */
#ifndef NS_ALI_CREDENTIALS_H
#define NS_ALI_CREDENTIALS_H

#include <stdint.h>

#include <nodesmith/provider.h>

typedef struct ali_creds {
    char access_key_id[128];
    char secret[128];
    char token[4096]; /* "" for long-term keys */
    int64_t expires_ms; /* 0 = does not expire */
} ali_creds;

typedef struct ali_credentials ali_credentials;

typedef struct ali_credentials_config {
    const ns_host *host;
    ns_host_ctx *ctx;
    const char *region;       /* the STS region when ALIBABA_CLOUD_STS_REGION is unset */
    const char *sts_url;      /* "http(s)://host[:port]" for AssumeRoleWithOIDC; NULL = the public STS endpoint */
    const char *metadata_url; /* the instance metadata service; NULL = METADATA_ENDPOINT, else 100.100.100.200 */
} ali_credentials_config;

/* Decides the source; NS_ERR_INVALID_CONFIG (naming the variable or file) when a source is present but broken. */
int ali_credentials_new(const ali_credentials_config *cfg, ali_credentials **out);
/* Current credentials, refreshed when needed. Thread-safe. NS_ERR_UNAUTHORIZED when none can be had. */
int ali_credentials_get(ali_credentials *c, ali_creds *out);
/* "environment", "rrsa", "cli-profile", "credentials-file" or "ecs-ram-role". */
const char *ali_credentials_source(const ali_credentials *c);
void ali_credentials_free(ali_credentials *c); /* accepts NULL */

/* One instance metadata path ("region-id", "instance-id", ...) into out, with the session token. */
int ali_metadata_get(ali_credentials *c, const char *path, char *out, size_t len);

#endif
