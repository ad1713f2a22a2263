#include "aws_credentials.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "aws_api_error.h"
#include "prov_buf.h"
#include "aws_errors.h"
#include "aws_parse_util.h"
#include "aws_profile.h"
#include "aws_sts_parse.h"
#include "prov_log.h"

#define IMDS_TOKEN_TTL_S 21600
/* The SDKs' IMDS client settings: a short timeout and one retry, so a machine off EC2 finds out quickly. */
#define IMDS_TIMEOUT_MS 1000
#define IMDS_RETRIES 1
#define TOKEN_FILE_MAX (64 * 1024)
#define PROCESS_OUTPUT_MAX (64 * 1024)
/* credential_process's time limit when none is configured: the AWS SDKs' (processcreds' one minute). */
#define PROCESS_TIMEOUT_MS (60 * 1000)
#define ECS_AGENT "http://169.254.170.2"

extern char **environ;

struct aws_credentials_provider {
    const ns_host *host;
    ns_host_ctx *ctx;
    const aws_env *env;
    char *region;
    int64_t refresh_before_ms;
    int64_t timeout_ms;
    int64_t process_timeout_ms;
    pthread_mutex_t lock;
    aws_creds cached;
    aws_creds_source source;
    char sts_url[512];
    char imds_url[512];
    bool imds_enabled;
    char imds_token[512]; /* a secret: never logged */
    int64_t imds_token_expires_ms;
    aws_profile profile; /* read once at creation; profile.name NULL when neither file has it */
};

const char *aws_creds_source_name(aws_creds_source s)
{
    switch (s) {
    case AWS_CREDS_ENVIRONMENT:
        return "environment";
    case AWS_CREDS_WEB_IDENTITY:
        return "web-identity";
    case AWS_CREDS_IMDS:
        return "imds";
    case AWS_CREDS_PROFILE:
        return "shared-credentials-file";
    case AWS_CREDS_SSO:
        return "sso";
    case AWS_CREDS_PROCESS:
        return "credential-process";
    case AWS_CREDS_CONTAINER:
        return "container";
    case AWS_CREDS_NONE:
        break;
    }
    return "none";
}

int aws_credentials_provider_new(const aws_credentials_config *config, aws_credentials_provider **out)
{
    const ns_host *host = config->host;
    *out = NULL;
    aws_credentials_provider *p = calloc(1, sizeof(*p));
    if (!p || !(p->region = strdup(config->region ? config->region : "us-east-1"))) {
        free(p);
        return NS_ERROR(host, config->ctx, NS_ERR_INTERNAL, "out of memory creating the AWS credential chain");
    }
    p->host = host;
    p->ctx = config->ctx;
    p->env = config->env;
    p->refresh_before_ms = config->refresh_before_ms > 0 ? config->refresh_before_ms
                                                         : AWS_CREDENTIALS_DEFAULT_REFRESH_MS;
    p->timeout_ms = config->http_timeout_ms > 0 ? config->http_timeout_ms : 5000;
    p->process_timeout_ms = config->process_timeout_ms > 0 ? config->process_timeout_ms : PROCESS_TIMEOUT_MS;
    pthread_mutex_init(&p->lock, NULL);
    if (aws_endpoint_resolve(p->env, "sts", p->region, p->sts_url, sizeof(p->sts_url)) != NS_OK) {
        aws_credentials_provider_free(p);
        return NS_ERROR(host, config->ctx, NS_ERR_INVALID_CONFIG,
                        "AWS credential chain: the STS endpoint (AWS_ENDPOINT_URL_STS or AWS_ENDPOINT_URL) is not "
                        "an http(s) URL");
    }
    p->imds_enabled = aws_imds_endpoint(p->env, p->imds_url, sizeof(p->imds_url)) != NULL;
    char err[1200];
    int rc = aws_profile_load(p->env, &p->profile, err, sizeof(err));
    if (rc == NS_ERR_NOT_FOUND && !aws_env_get(p->env, "AWS_PROFILE")) {
        aws_profile_clear(&p->profile); /* no default profile: the chain goes on without one */
    } else if (rc != NS_OK) {
        aws_credentials_provider_free(p);
        return NS_ERROR(host, config->ctx, rc == NS_ERR_INTERNAL ? rc : NS_ERR_INVALID_CONFIG,
                        "AWS shared config: %s", err);
    }
    *out = p;
    return NS_OK;
}

void aws_credentials_provider_free(aws_credentials_provider *p)
{
    if (!p)
        return;
    aws_creds_clear(&p->cached);
    OPENSSL_cleanse(p->imds_token, sizeof(p->imds_token));
    aws_profile_clear(&p->profile);
    pthread_mutex_destroy(&p->lock);
    free(p->region);
    free(p);
}

/* Describes a non-2xx answer from STS or IMDS and returns its category. */
static int report_http_failure(aws_credentials_provider *p, const char *what, const ns_http_response *resp)
{
    aws_api_error e;
    bool have = aws_api_error_parse_xml(resp->body, resp->body_len, &e);
    aws_error_class c = aws_classify_error(have ? e.code : NULL, resp->status);
    int category = c.category == NS_ERR_NOT_FOUND || c.category == NS_ERR_INTERNAL ? NS_ERR_UNAUTHORIZED : c.category;
    if (have)
        return NS_ERROR(p->host, p->ctx, category, "%s failed with HTTP %ld: %s: %s (request %s)", what,
                        resp->status, e.code, e.message, e.request_id[0] ? e.request_id : "unknown");
    return NS_ERROR(p->host, p->ctx, category, "%s failed with HTTP %ld", what, resp->status);
}

static int from_environment(aws_credentials_provider *p, aws_creds *fresh)
{
    const char *akid = aws_env_get(p->env, "AWS_ACCESS_KEY_ID");
    const char *secret = aws_env_get(p->env, "AWS_SECRET_ACCESS_KEY");
    if (!akid || !secret)
        return NS_ERROR(p->host, p->ctx, NS_ERR_INVALID_CONFIG,
                        "AWS credentials from the environment: %s is set but %s is not", akid ? "AWS_ACCESS_KEY_ID"
                                                                                               : "AWS_SECRET_ACCESS_KEY",
                        akid ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
    if (aws_creds_set(fresh, akid, secret, aws_env_get(p->env, "AWS_SESSION_TOKEN"), 0) != NS_OK)
        return NS_ERROR(p->host, p->ctx, NS_ERR_INTERNAL, "out of memory copying the environment's AWS credentials");
    return NS_OK;
}

static char *read_token_file(aws_credentials_provider *p, const char *path, int *rc)
{
    FILE *f = fopen(path, "rb");
    char *buf = f ? malloc(TOKEN_FILE_MAX + 1) : NULL;
    size_t n = buf ? fread(buf, 1, TOKEN_FILE_MAX + 1, f) : 0;
    if (f)
        fclose(f);
    if (!buf || n == 0 || n > TOKEN_FILE_MAX) {
        if (buf)
            OPENSSL_cleanse(buf, n);
        free(buf);
        *rc = NS_ERROR(p->host, p->ctx, NS_ERR_INVALID_CONFIG,
                       "AWS web identity: cannot read the token file %s (AWS_WEB_IDENTITY_TOKEN_FILE): %s", path,
                       !f ? "cannot open it" : n == 0 ? "it is empty" : "it is larger than 64 KiB");
        return NULL;
    }
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        n--;
    buf[n] = '\0';
    *rc = NS_OK;
    return buf;
}

static void form_param(prov_buf *b, const char *key, const char *value)
{
    if (b->len)
        prov_buf_putc(b, '&');
    prov_buf_printf(b, "%s=", key);
    prov_buf_percent_encode(b, value, strlen(value), false);
}

static int from_web_identity(aws_credentials_provider *p, aws_creds *fresh)
{
    const char *role = aws_env_get(p->env, "AWS_ROLE_ARN");
    const char *file = aws_env_get(p->env, "AWS_WEB_IDENTITY_TOKEN_FILE");
    const char *session = aws_env_get(p->env, "AWS_ROLE_SESSION_NAME");
    char default_session[64];
    if (!session) {
        snprintf(default_session, sizeof(default_session), "nodesmith-%lld", (long long)p->host->now_ms(p->ctx));
        session = default_session;
    }
    int rc;
    char *token = read_token_file(p, file, &rc);
    if (!token)
        return rc;
    prov_buf body = PROV_BUF_INIT;
    form_param(&body, "Action", "AssumeRoleWithWebIdentity");
    form_param(&body, "Version", "2011-06-15");
    form_param(&body, "RoleArn", role);
    form_param(&body, "RoleSessionName", session);
    form_param(&body, "WebIdentityToken", token);
    OPENSSL_cleanse(token, strlen(token));
    free(token);
    char url[600];
    snprintf(url, sizeof(url), "%s/", p->sts_url);
    ns_http_header headers[] = {{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
                                {"Accept", "text/xml"}};
    ns_http_request req = {.struct_size = sizeof(req), .method = "POST", .url = url, .headers = headers,
                           .n_headers = 2, .body = prov_buf_str(&body), .body_len = body.len,
                           .timeout_ms = p->timeout_ms, .max_retries = -1,
                           .ca_bundle = aws_credentials_ca_bundle(p)};
    ns_http_response *resp = NULL;
    if (prov_buf_failed(&body)) {
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_INTERNAL, "out of memory building the STS request");
    } else if ((rc = p->host->http_request(p->ctx, &req, &resp)) != NS_OK) {
        if (rc == NS_ERR_THROTTLED) /* other categories (a rejected certificate) keep the host's description */
            rc = NS_ERROR(p->host, p->ctx, rc, "STS AssumeRoleWithWebIdentity for role %s: %s unreachable", role,
                          p->sts_url);
    } else if (resp->status != 200) {
        char what[400];
        snprintf(what, sizeof(what), "STS AssumeRoleWithWebIdentity for role %s", role);
        rc = report_http_failure(p, what, resp);
    } else {
        char err[256];
        rc = aws_sts_parse_web_identity(resp->body, resp->body_len, fresh, err, sizeof(err));
        if (rc != NS_OK)
            rc = NS_ERROR(p->host, p->ctx, rc == NS_ERR_INTERNAL ? NS_ERR_INTERNAL : NS_ERR_UNAUTHORIZED,
                          "STS AssumeRoleWithWebIdentity for role %s: unexpected answer: %s", role, err);
    }
    if (body.data)
        OPENSSL_cleanse(body.data, body.len);
    prov_buf_free(&body);
    p->host->http_response_free(resp);
    return rc;
}

/* One IMDS call. On NS_OK *resp is the answer (any status; the caller frees it). */
static int imds_call(aws_credentials_provider *p, const char *method, const char *path, const ns_http_header *headers,
                     size_t n_headers, ns_http_response **resp)
{
    char url[1024];
    snprintf(url, sizeof(url), "%s%s", p->imds_url, path);
    ns_http_request req = {.struct_size = sizeof(req), .method = method, .url = url, .headers = headers,
                           .n_headers = n_headers, .body = method[0] == 'P' ? "" : NULL, .timeout_ms = IMDS_TIMEOUT_MS,
                           .max_retries = IMDS_RETRIES};
    int rc = p->host->http_request(p->ctx, &req, resp);
    if (rc == NS_ERR_THROTTLED)
        return NS_ERROR(p->host, p->ctx, rc, "IMDS %s %s: %s unreachable", method, path, p->imds_url);
    return rc;
}

static int imds_refresh_token(aws_credentials_provider *p)
{
    char ttl[16];
    snprintf(ttl, sizeof(ttl), "%d", IMDS_TOKEN_TTL_S);
    ns_http_header h[] = {{"X-aws-ec2-metadata-token-ttl-seconds", ttl}};
    ns_http_response *resp = NULL;
    int rc = imds_call(p, "PUT", "/latest/api/token", h, 1, &resp);
    if (rc != NS_OK)
        return rc;
    if (resp->status != 200 || resp->body_len == 0 || resp->body_len >= sizeof(p->imds_token)) {
        rc = report_http_failure(p, "IMDSv2 token request (PUT /latest/api/token)", resp);
    } else {
        memcpy(p->imds_token, resp->body, resp->body_len + 1);
        p->imds_token_expires_ms = p->host->now_ms(p->ctx) + (IMDS_TOKEN_TTL_S - 60) * 1000LL;
    }
    p->host->http_response_free(resp);
    return rc;
}

/* GET of an IMDS path with a session token, fetching a new token when the cached one expired or was refused. */
static int imds_get(aws_credentials_provider *p, const char *path, ns_http_response **out)
{
    *out = NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        int rc;
        if ((!p->imds_token[0] || p->host->now_ms(p->ctx) >= p->imds_token_expires_ms) &&
            (rc = imds_refresh_token(p)) != NS_OK)
            return rc;
        ns_http_header h[] = {{"X-aws-ec2-metadata-token", p->imds_token}};
        ns_http_response *resp = NULL;
        if ((rc = imds_call(p, "GET", path, h, 1, &resp)) != NS_OK)
            return rc;
        if (resp->status == 401 && attempt == 0) {
            p->host->http_response_free(resp);
            p->imds_token[0] = '\0';
            continue;
        }
        if (resp->status != 200) {
            char what[300];
            snprintf(what, sizeof(what), "IMDS GET %s", path);
            rc = report_http_failure(p, what, resp);
            p->host->http_response_free(resp);
            return rc;
        }
        *out = resp;
        return NS_OK;
    }
    return NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED, "IMDS GET %s: a fresh session token was refused too",
                    path);
}

static const char *json_str(aws_credentials_provider *p, const ns_json *o, const char *key)
{
    return p->host->json_string(p->host->json_get(o, key));
}

static int from_imds(aws_credentials_provider *p, aws_creds *fresh)
{
    ns_http_response *resp = NULL;
    int rc = imds_get(p, "/latest/meta-data/iam/security-credentials/", &resp);
    if (rc != NS_OK)
        return rc;
    char role[256];
    size_t n = strcspn(resp->body, "\r\n");
    snprintf(role, sizeof(role), "%.*s", (int)(n < sizeof(role) - 1 ? n : sizeof(role) - 1), resp->body);
    p->host->http_response_free(resp);
    if (!role[0])
        return NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED,
                        "IMDS: the instance has no IAM role (security-credentials/ is empty)");
    char path[400];
    snprintf(path, sizeof(path), "/latest/meta-data/iam/security-credentials/%s", role);
    if ((rc = imds_get(p, path, &resp)) != NS_OK)
        return rc;
    ns_json *doc = p->host->json_parse(resp->body, resp->body_len);
    const char *code = json_str(p, doc, "Code");
    const char *akid = json_str(p, doc, "AccessKeyId");
    const char *secret = json_str(p, doc, "SecretAccessKey");
    const char *token = json_str(p, doc, "Token");
    int64_t expiration = 0;
    if (!doc)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED, "IMDS credentials of role %s are not JSON", role);
    else if (!code || strcmp(code, "Success") != 0)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED, "IMDS credentials of role %s: Code is %s", role,
                      code ? code : "missing");
    else if (!akid || !secret || !token)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED,
                      "IMDS credentials of role %s lack AccessKeyId, SecretAccessKey or Token", role);
    else if (!aws_parse_iso8601_ms(json_str(p, doc, "Expiration"), &expiration))
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED,
                      "IMDS credentials of role %s: Expiration is missing or not an ISO 8601 time", role);
    else if (aws_creds_set(fresh, akid, secret, token, expiration) != NS_OK)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_INTERNAL, "out of memory copying the IMDS credentials");
    /* The body holds the secret: wipe it before it goes back to the host's allocator. */
    OPENSSL_cleanse(resp->body, resp->body_len);
    p->host->json_free(doc);
    p->host->http_response_free(resp);
    return rc;
}

static int from_profile_keys(aws_credentials_provider *p, aws_creds *fresh)
{
    const aws_profile *pr = &p->profile;
    if (!pr->access_key_id || !pr->secret_access_key)
        return NS_ERROR(p->host, p->ctx, NS_ERR_INVALID_CONFIG,
                        "AWS profile %s: aws_access_key_id and aws_secret_access_key must both be set", pr->name);
    if (aws_creds_set(fresh, pr->access_key_id, pr->secret_access_key, pr->session_token, 0) != NS_OK)
        return NS_ERROR(p->host, p->ctx, NS_ERR_INTERNAL, "out of memory copying the profile's AWS credentials");
    return NS_OK;
}

/* Credentials in the SDKs' JSON shape: the key names differ between sources (Token vs SessionToken). */
static int creds_from_json(aws_credentials_provider *p, const char *what, const ns_json *doc, const char *token_key,
                           aws_creds *fresh)
{
    const char *akid = json_str(p, doc, "AccessKeyId");
    const char *secret = json_str(p, doc, "SecretAccessKey");
    const char *token = json_str(p, doc, token_key);
    const char *expiration = json_str(p, doc, "Expiration");
    int64_t expires = 0;
    if (!akid || !secret)
        return NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED, "%s: the answer lacks AccessKeyId or SecretAccessKey",
                        what);
    if (expiration && !aws_parse_iso8601_ms(expiration, &expires))
        return NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED, "%s: Expiration is not an ISO 8601 time", what);
    if (aws_creds_set(fresh, akid, secret, token, expires) != NS_OK)
        return NS_ERROR(p->host, p->ctx, NS_ERR_INTERNAL, "out of memory copying AWS credentials from %s", what);
    return NS_OK;
}

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads the process's output until it closes it or the deadline passes; true when it closed it in time. */
static bool read_until(int fd, char *buf, size_t *n, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - monotonic_ms();
        if (left <= 0)
            return false;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ready = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
        if (ready < 0 && errno != EINTR)
            return true;
        if (ready <= 0)
            continue;
        if (*n > PROCESS_OUTPUT_MAX) /* too much already: stop reading, the size check reports it */
            return true;
        ssize_t got = read(fd, buf + *n, PROCESS_OUTPUT_MAX + 1 - *n);
        if (got > 0)
            *n += (size_t)got;
        else if (got == 0 || errno != EINTR)
            return true;
    }
}

/* Runs `command` with /bin/sh -c (as the Go SDK does) and collects its standard output, within the time limit the
 * SDKs give it (a command that waits for a browser login must not hang the provider); the command runs in a
 * process group of its own, all of which is killed when it overruns. */
static int run_process(aws_credentials_provider *p, const char *command, char **output, size_t *len)
{
    int fds[2];
    *output = NULL;
    *len = 0;
    if (pipe(fds) != 0)
        return NS_ERROR(p->host, p->ctx, NS_ERR_INTERNAL, "credential_process: cannot create a pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    char *argv[] = {"/bin/sh", "-c", (char *)command, NULL};
    pid_t pid;
    int spawned = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(fds[1]);
    if (spawned != 0) {
        close(fds[0]);
        return NS_ERROR(p->host, p->ctx, NS_ERR_INVALID_CONFIG, "AWS profile %s: credential_process cannot be "
                        "started: %s", p->profile.name, strerror(spawned));
    }
    char *buf = malloc(PROCESS_OUTPUT_MAX + 1);
    size_t n = 0;
    bool in_time = !buf || read_until(fds[0], buf, &n, monotonic_ms() + p->process_timeout_ms);
    close(fds[0]);
    if (!in_time)
        kill(-pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    int rc = NS_OK;
    if (!buf)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_INTERNAL, "out of memory reading credential_process's output");
    else if (!in_time)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED, "AWS profile %s: credential_process did not finish "
                      "within %lld ms; it was killed", p->profile.name, (long long)p->process_timeout_ms);
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED,
                      "AWS profile %s: credential_process failed (exit status %d)", p->profile.name,
                      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    else if (n > PROCESS_OUTPUT_MAX)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED, "AWS profile %s: credential_process wrote more than "
                      "64 KiB", p->profile.name);
    if (rc != NS_OK) {
        if (buf)
            OPENSSL_cleanse(buf, n);
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *output = buf;
    *len = n;
    return NS_OK;
}

static int from_process(aws_credentials_provider *p, aws_creds *fresh)
{
    char *out = NULL;
    size_t len = 0;
    int rc = run_process(p, p->profile.credential_process, &out, &len);
    if (rc != NS_OK)
        return rc;
    ns_json *doc = p->host->json_parse(out, len);
    char what[300];
    snprintf(what, sizeof(what), "AWS profile %s: credential_process", p->profile.name);
    if (!doc)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED, "%s: its output is not JSON", what);
    else if (p->host->json_number(p->host->json_get(doc, "Version")) != 1)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED, "%s: its output's Version is not 1", what);
    else
        rc = creds_from_json(p, what, doc, "SessionToken", fresh);
    OPENSSL_cleanse(out, len);
    free(out);
    p->host->json_free(doc);
    return rc;
}

/* A GET for credentials (SSO portal, container endpoint); on NS_OK *resp is a 200 answer. */
static int credentials_get_url(aws_credentials_provider *p, const char *what, const char *url,
                               const ns_http_header *headers, size_t n_headers, ns_http_response **resp)
{
    ns_http_request req = {.struct_size = sizeof(req), .method = "GET", .url = url, .headers = headers,
                           .n_headers = n_headers, .timeout_ms = p->timeout_ms, .max_retries = -1,
                           .ca_bundle = aws_credentials_ca_bundle(p)};
    int rc = p->host->http_request(p->ctx, &req, resp);
    if (rc == NS_ERR_THROTTLED)
        return NS_ERROR(p->host, p->ctx, rc, "%s: %s unreachable", what, url);
    if (rc != NS_OK)
        return rc;
    if ((*resp)->status != 200) {
        long status = (*resp)->status;
        p->host->http_response_free(*resp);
        *resp = NULL;
        return NS_ERROR(p->host, p->ctx, status >= 500 || status == 429 ? NS_ERR_THROTTLED : NS_ERR_UNAUTHORIZED,
                        "%s failed with HTTP %ld", what, status);
    }
    return NS_OK;
}

static int from_sso(aws_credentials_provider *p, aws_creds *fresh)
{
    const aws_profile *pr = &p->profile;
    char path[1200];
    if (aws_profile_sso_cache_path(p->env, pr, path, sizeof(path)) != NS_OK || !pr->sso_region)
        return NS_ERROR(p->host, p->ctx, NS_ERR_INVALID_CONFIG,
                        "AWS profile %s: SSO needs sso_region and HOME (for ~/.aws/sso/cache)", pr->name);
    int rc;
    char *text = read_token_file(p, path, &rc);
    if (!text)
        return NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED, "AWS profile %s: no SSO token cached in %s; run "
                        "`aws sso login --profile %s`", pr->name, path, pr->name);
    ns_json *cache = p->host->json_parse(text, strlen(text));
    OPENSSL_cleanse(text, strlen(text));
    free(text);
    const char *token = json_str(p, cache, "accessToken");
    int64_t expires = 0;
    if (!token || !aws_parse_iso8601_ms(json_str(p, cache, "expiresAt"), &expires))
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED, "AWS profile %s: the SSO token cache %s lacks accessToken "
                      "or expiresAt", pr->name, path);
    else if (expires <= p->host->now_ms(p->ctx))
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED, "AWS profile %s: the cached SSO token expired; run "
                      "`aws sso login --profile %s`", pr->name, pr->name);
    char base[512], url[1400];
    if (rc == NS_OK && aws_endpoint_resolve(p->env, "sso", pr->sso_region, base, sizeof(base)) != NS_OK)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_INVALID_CONFIG, "AWS SSO endpoint for %s is not an http(s) URL",
                      pr->sso_region);
    ns_http_response *resp = NULL;
    if (rc == NS_OK) {
        prov_buf q = PROV_BUF_INIT;
        prov_buf_puts(&q, "account_id=");
        prov_buf_percent_encode(&q, pr->sso_account_id, strlen(pr->sso_account_id), false);
        prov_buf_puts(&q, "&role_name=");
        prov_buf_percent_encode(&q, pr->sso_role_name, strlen(pr->sso_role_name), false);
        snprintf(url, sizeof(url), "%s/federation/credentials?%s", base, prov_buf_str(&q));
        prov_buf_free(&q);
        ns_http_header h[] = {{"x-amz-sso_bearer_token", token}, {"Accept", "application/json"}};
        char what[300];
        snprintf(what, sizeof(what), "SSO GetRoleCredentials for role %s in account %s", pr->sso_role_name,
                 pr->sso_account_id);
        rc = credentials_get_url(p, what, url, h, 2, &resp);
    }
    p->host->json_free(cache);
    if (rc != NS_OK)
        return rc;
    ns_json *doc = p->host->json_parse(resp->body, resp->body_len);
    const ns_json *rc_doc = p->host->json_get(doc, "roleCredentials");
    const char *akid = json_str(p, rc_doc, "accessKeyId");
    const char *secret = json_str(p, rc_doc, "secretAccessKey");
    const char *session = json_str(p, rc_doc, "sessionToken");
    double expiration = p->host->json_number(p->host->json_get(rc_doc, "expiration")); /* unix ms */
    if (!akid || !secret || expiration <= 0)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED, "SSO GetRoleCredentials: the answer lacks roleCredentials");
    else if (aws_creds_set(fresh, akid, secret, session, (int64_t)expiration) != NS_OK)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_INTERNAL, "out of memory copying the SSO credentials");
    OPENSSL_cleanse(resp->body, resp->body_len);
    p->host->json_free(doc);
    p->host->http_response_free(resp);
    return rc;
}

/* The SDKs' rule for a full container URI: HTTPS anywhere, plain HTTP only to loopback or the ECS/EKS agents. */
static bool container_url_allowed(const char *url)
{
    aws_url u;
    if (aws_url_parse(url, &u) != NS_OK)
        return false;
    if (strcmp(u.scheme, "https") == 0)
        return true;
    char host[256];
    snprintf(host, sizeof(host), "%s", u.host);
    char *colon = host[0] == '[' ? strstr(host, "]:") : strrchr(host, ':');
    if (colon)
        colon[host[0] == '[' ? 1 : 0] = '\0';
    return strncmp(host, "127.", 4) == 0 || strcmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0 ||
           strcmp(host, "169.254.170.2") == 0 || strcmp(host, "169.254.170.23") == 0 ||
           strcmp(host, "[fd00:ec2::23]") == 0;
}

static int from_container(aws_credentials_provider *p, aws_creds *fresh)
{
    const char *full = aws_env_get(p->env, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
    const char *relative = aws_env_get(p->env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    char url[1200];
    if (relative)
        snprintf(url, sizeof(url), "%s%s%s", ECS_AGENT, relative[0] == '/' ? "" : "/", relative);
    else
        snprintf(url, sizeof(url), "%s", full);
    if (!relative && !container_url_allowed(url))
        return NS_ERROR(p->host, p->ctx, NS_ERR_INVALID_CONFIG,
                        "AWS_CONTAINER_CREDENTIALS_FULL_URI %s: plain HTTP is allowed only to loopback or the EKS/ECS "
                        "agents (169.254.170.2, 169.254.170.23, fd00:ec2::23)",
                        url);
    const char *token_file = aws_env_get(p->env, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
    const char *token_env = aws_env_get(p->env, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
    char *token = NULL;
    int rc = NS_OK;
    if (token_file && !(token = read_token_file(p, token_file, &rc)))
        return rc;
    ns_http_header h[] = {{"Authorization", token ? token : token_env}, {"Accept", "application/json"}};
    ns_http_response *resp = NULL;
    rc = credentials_get_url(p, "container credentials endpoint", url, token || token_env ? h : h + 1,
                             token || token_env ? 2 : 1, &resp);
    if (token)
        OPENSSL_cleanse(token, strlen(token));
    free(token);
    if (rc != NS_OK)
        return rc;
    ns_json *doc = p->host->json_parse(resp->body, resp->body_len);
    rc = doc ? creds_from_json(p, "container credentials endpoint", doc, "Token", fresh)
             : NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED, "container credentials endpoint %s: not JSON", url);
    OPENSSL_cleanse(resp->body, resp->body_len);
    p->host->json_free(doc);
    p->host->http_response_free(resp);
    return rc;
}

const char *aws_credentials_ca_bundle(aws_credentials_provider *p)
{
    const char *env = aws_env_get(p->env, "AWS_CA_BUNDLE");
    return env ? env : p->profile.ca_bundle;
}

/* The first configured source, in the SDKs' order; NS_OK with AWS_CREDS_NONE when there is none. */
static int choose_source(aws_credentials_provider *p, aws_creds_source *out)
{
    const aws_profile *pr = &p->profile;
    *out = AWS_CREDS_NONE;
    if (aws_env_get(p->env, "AWS_ACCESS_KEY_ID") || aws_env_get(p->env, "AWS_SECRET_ACCESS_KEY"))
        *out = AWS_CREDS_ENVIRONMENT;
    else if (aws_env_get(p->env, "AWS_ROLE_ARN") && aws_env_get(p->env, "AWS_WEB_IDENTITY_TOKEN_FILE"))
        *out = AWS_CREDS_WEB_IDENTITY;
    else if (pr->name && (pr->access_key_id || pr->secret_access_key))
        *out = AWS_CREDS_PROFILE;
    else if (pr->name && aws_profile_has_sso(pr))
        *out = AWS_CREDS_SSO;
    else if (pr->name && pr->credential_process)
        *out = AWS_CREDS_PROCESS;
    else if (pr->name && pr->role_arn)
        return NS_ERROR(p->host, p->ctx, NS_ERR_UNSUPPORTED,
                        "AWS profile %s: assume-role profiles (role_arn) are not supported; use web identity, SSO, "
                        "credential_process or static keys",
                        pr->name);
    else if (aws_env_get(p->env, "AWS_CONTAINER_CREDENTIALS_FULL_URI") ||
             aws_env_get(p->env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"))
        *out = AWS_CREDS_CONTAINER;
    else if (p->imds_enabled)
        *out = AWS_CREDS_IMDS;
    return NS_OK;
}

static bool fresh_enough(const aws_credentials_provider *p, int64_t now)
{
    return aws_creds_present(&p->cached) &&
           (p->cached.expiration_ms == 0 || now < p->cached.expiration_ms - p->refresh_before_ms);
}

static void log_refresh(aws_credentials_provider *p, ns_log_level level, const char *message, int64_t now)
{
    /* Credentials that never expire have no expires_in_s: the field stays a number when present. */
    ns_log_field fields[] = {prov_log_str("source", aws_creds_source_name(p->source)),
                             prov_log_int("expires_in_s", (p->cached.expiration_ms - now) / 1000)};
    prov_log(p->host, p->ctx, level, message, fields, p->cached.expiration_ms ? 2 : 1);
}

int aws_credentials_get(aws_credentials_provider *p, aws_creds *out)
{
    pthread_mutex_lock(&p->lock);
    int64_t now = p->host->now_ms(p->ctx);
    int rc = NS_OK;
    if (!fresh_enough(p, now)) {
        aws_creds_source source = p->source;
        aws_creds fresh = {0};
        if (!source)
            rc = choose_source(p, &source);
        switch (rc == NS_OK ? source : AWS_CREDS_NONE) {
        case AWS_CREDS_ENVIRONMENT:
            rc = from_environment(p, &fresh);
            break;
        case AWS_CREDS_WEB_IDENTITY:
            rc = from_web_identity(p, &fresh);
            break;
        case AWS_CREDS_IMDS:
            rc = from_imds(p, &fresh);
            break;
        case AWS_CREDS_PROFILE:
            rc = from_profile_keys(p, &fresh);
            break;
        case AWS_CREDS_SSO:
            rc = from_sso(p, &fresh);
            break;
        case AWS_CREDS_PROCESS:
            rc = from_process(p, &fresh);
            break;
        case AWS_CREDS_CONTAINER:
            rc = from_container(p, &fresh);
            break;
        case AWS_CREDS_NONE:
            if (rc == NS_OK)
                rc = NS_ERROR(p->host, p->ctx, NS_ERR_UNAUTHORIZED,
                              "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_ROLE_ARN "
                              "and AWS_WEB_IDENTITY_TOKEN_FILE, or a profile in ~/.aws/config or ~/.aws/credentials "
                              "(AWS_PROFILE), or a container credentials endpoint, or run on EC2 with an instance "
                              "role (IMDS is %s)",
                              p->imds_enabled ? "enabled" : "disabled by AWS_EC2_METADATA_DISABLED");
            break;
        }
        if (rc == NS_OK) {
            aws_creds_clear(&p->cached);
            p->cached = fresh;
            p->source = source;
            log_refresh(p, NS_LOG_INFO, "aws credentials refreshed", now);
        } else if (aws_creds_present(&p->cached) &&
                   (p->cached.expiration_ms == 0 || now < p->cached.expiration_ms)) {
            log_refresh(p, NS_LOG_WARN, "aws credentials refresh failed; the current ones are still valid", now);
            rc = NS_OK;
        }
    }
    if (rc == NS_OK && aws_creds_copy(out, &p->cached) != NS_OK)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_INTERNAL, "out of memory copying AWS credentials");
    pthread_mutex_unlock(&p->lock);
    return rc;
}

void aws_credentials_invalidate(aws_credentials_provider *p)
{
    pthread_mutex_lock(&p->lock);
    aws_creds_clear(&p->cached);
    pthread_mutex_unlock(&p->lock);
}

aws_creds_source aws_credentials_source(aws_credentials_provider *p)
{
    pthread_mutex_lock(&p->lock);
    aws_creds_source s = p->source;
    pthread_mutex_unlock(&p->lock);
    return s;
}

int aws_credentials_imds_metadata(aws_credentials_provider *p, const char *path, char *buf, size_t buflen)
{
    if (!p->imds_enabled)
        return NS_ERROR(p->host, p->ctx, NS_ERR_UNSUPPORTED,
                        "IMDS metadata %s: IMDS is disabled by AWS_EC2_METADATA_DISABLED", path);
    char full[400];
    snprintf(full, sizeof(full), "/latest/meta-data/%s", path);
    pthread_mutex_lock(&p->lock);
    ns_http_response *resp = NULL;
    int rc = imds_get(p, full, &resp);
    pthread_mutex_unlock(&p->lock);
    if (rc != NS_OK)
        return rc;
    if (resp->body_len >= buflen)
        rc = NS_ERROR(p->host, p->ctx, NS_ERR_INTERNAL, "IMDS metadata %s: %zu bytes do not fit in %zu", path,
                      resp->body_len, buflen);
    else
        memcpy(buf, resp->body, resp->body_len + 1);
    p->host->http_response_free(resp);
    return rc;
}
