#include "ali_credentials.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "prov_buf.h"
#include "ali_sign.h"

#define REFRESH_EARLY_MS (3 * 60 * 1000)
#define IMDS_TOKEN_TTL "21600"

typedef enum source { SRC_STATIC, SRC_OIDC, SRC_IMDS } source;

struct ali_credentials {
    const ns_host *host;
    ns_host_ctx *ctx;
    pthread_mutex_t lock;
    source kind;
    const char *name; /* for logs */
    ali_creds cached;
    bool have;
    /* RRSA */
    char role_arn[256], provider_arn[256], token_file[1024], session_name[64], sts_url[256];
    /* ECS RAM role */
    char metadata_url[256], role_name[128];
    bool imds_v1_disabled;
};

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static bool env_true(const char *name)
{
    const char *v = env(name);
    return v && strcasecmp(v, "true") == 0;
}

static bool copy(char *dst, size_t len, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= len)
        return false;
    memcpy(dst, src ? src : "", n + 1);
    return true;
}

static int set_static(ali_credentials *c, const char *where, const char *id, const char *secret, const char *token)
{
    if (!id || !*id || !secret || !*secret)
        return NS_ERROR(c->host, c->ctx, NS_ERR_INVALID_CONFIG,
                        "alibaba credentials from %s: an access key ID and its secret are both needed", where);
    if (!copy(c->cached.access_key_id, sizeof(c->cached.access_key_id), id) ||
        !copy(c->cached.secret, sizeof(c->cached.secret), secret) ||
        !copy(c->cached.token, sizeof(c->cached.token), token))
        return NS_ERROR(c->host, c->ctx, NS_ERR_INVALID_CONFIG, "alibaba credentials from %s: a value is too long",
                        where);
    c->kind = SRC_STATIC;
    c->have = true;
    return NS_OK;
}

static int set_oidc(ali_credentials *c, const char *where, const char *role, const char *provider, const char *file)
{
    if (!role || !provider || !file)
        return NS_ERROR(c->host, c->ctx, NS_ERR_INVALID_CONFIG,
                        "alibaba credentials from %s: RRSA needs the role ARN, the OIDC provider ARN and the OIDC "
                        "token file (ALIBABA_CLOUD_ROLE_ARN, ALIBABA_CLOUD_OIDC_PROVIDER_ARN, "
                        "ALIBABA_CLOUD_OIDC_TOKEN_FILE)", where);
    const char *session = env("ALIBABA_CLOUD_ROLE_SESSION_NAME");
    if (!copy(c->role_arn, sizeof(c->role_arn), role) || !copy(c->provider_arn, sizeof(c->provider_arn), provider) ||
        !copy(c->token_file, sizeof(c->token_file), file) ||
        !copy(c->session_name, sizeof(c->session_name), session ? session : "nodesmith"))
        return NS_ERROR(c->host, c->ctx, NS_ERR_INVALID_CONFIG, "alibaba credentials from %s: a value is too long",
                        where);
    c->kind = SRC_OIDC;
    return NS_OK;
}

static int set_imds(ali_credentials *c, const char *role)
{
    if (role && !copy(c->role_name, sizeof(c->role_name), role))
        return NS_ERROR(c->host, c->ctx, NS_ERR_INVALID_CONFIG, "alibaba: the ECS RAM role name is too long");
    c->kind = SRC_IMDS;
    return NS_OK;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    prov_buf b = PROV_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && b.len < (1u << 20))
        prov_buf_append(&b, chunk, n);
    fclose(f);
    return prov_buf_take(&b);
}

static const char *jstr(const ns_host *h, const ns_json *o, const char *key)
{
    return h->json_string(h->json_get(o, key));
}

/* ~/.aliyun/config.json, the CLI's profiles. Returns 1 when the file is absent (try the next source). */
static int from_cli_profile(ali_credentials *c)
{
    const char *home = env("HOME");
    char path[1024];
    if (!home || (size_t)snprintf(path, sizeof(path), "%s/.aliyun/config.json", home) >= sizeof(path))
        return 1;
    char *text = read_file(path);
    if (!text)
        return 1;
    const ns_host *h = c->host;
    int rc;
    ns_json *doc = h->json_parse(text, strlen(text));
    if (!doc) {
        rc = NS_ERROR(h, c->ctx, NS_ERR_INVALID_CONFIG, "alibaba credentials: %s is not valid JSON", path);
        goto out;
    }
    const char *want = env("ALIBABA_CLOUD_PROFILE");
    if (!want)
        want = jstr(h, doc, "current");
    const ns_json *profiles = h->json_get(doc, "profiles"), *p = NULL;
    for (size_t i = 0; i < h->json_size(profiles); i++) {
        const char *name = jstr(h, h->json_at(profiles, i), "name");
        if (name && want && strcmp(name, want) == 0)
            p = h->json_at(profiles, i);
    }
    if (!p) {
        rc = NS_ERROR(h, c->ctx, NS_ERR_INVALID_CONFIG, "alibaba credentials: %s has no profile '%s'", path,
                      want ? want : "(none named current)");
        goto out;
    }
    const char *mode = jstr(h, p, "mode");
    char where[1200];
    snprintf(where, sizeof(where), "%s profile %s", path, want);
    if (mode && (strcmp(mode, "AK") == 0 || strcmp(mode, "StsToken") == 0))
        rc = set_static(c, where, jstr(h, p, "access_key_id"), jstr(h, p, "access_key_secret"),
                        strcmp(mode, "StsToken") == 0 ? jstr(h, p, "sts_token") : NULL);
    else if (mode && strcmp(mode, "EcsRamRole") == 0)
        rc = set_imds(c, jstr(h, p, "ram_role_name"));
    else if (mode && strcmp(mode, "OIDC") == 0)
        rc = set_oidc(c, where, jstr(h, p, "ram_role_arn"), jstr(h, p, "oidc_provider_arn"),
                      jstr(h, p, "oidc_token_file"));
    else
        rc = NS_ERROR(h, c->ctx, NS_ERR_INVALID_CONFIG,
                      "alibaba credentials: %s: mode '%s' is not supported (AK, StsToken, EcsRamRole, OIDC are)",
                      where, mode ? mode : "(missing)");
    c->name = "cli-profile";
out:
    h->json_free(doc);
    free(text);
    return rc;
}

/* Finds `key` in the ini section `section` of text; the value is trimmed into out. */
static bool ini_get(const char *text, const char *section, const char *key, char *out, size_t len)
{
    bool in = false;
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        while (n && isspace((unsigned char)*line)) {
            line++;
            n--;
        }
        while (n && isspace((unsigned char)line[n - 1]))
            n--;
        if (n >= 2 && line[0] == '[' && line[n - 1] == ']')
            in = n - 2 == strlen(section) && strncmp(line + 1, section, n - 2) == 0;
        else if (in && n > strlen(key) && strncmp(line, key, strlen(key)) == 0) {
            const char *v = line + strlen(key);
            while (v < line + n && (*v == ' ' || *v == '\t'))
                v++;
            if (v < line + n && *v == '=') {
                v++;
                while (v < line + n && (*v == ' ' || *v == '\t'))
                    v++;
                size_t vn = (size_t)(line + n - v);
                if (vn >= len)
                    return false;
                memcpy(out, v, vn);
                out[vn] = '\0';
                return true;
            }
        }
        line = end ? end + 1 : NULL;
    }
    return false;
}

static int from_credentials_file(ali_credentials *c)
{
    const char *path = env("ALIBABA_CLOUD_CREDENTIALS_FILE");
    char def[1024];
    const char *home = env("HOME");
    if (!path) {
        if (!home || (size_t)snprintf(def, sizeof(def), "%s/.alibabacloud/credentials", home) >= sizeof(def))
            return 1;
        path = def;
    }
    char *text = read_file(path);
    if (!text) {
        if (path != def)
            return NS_ERROR(c->host, c->ctx, NS_ERR_INVALID_CONFIG,
                            "alibaba credentials: ALIBABA_CLOUD_CREDENTIALS_FILE %s cannot be read", path);
        return 1;
    }
    const char *section = env("ALIBABA_CLOUD_PROFILE");
    if (!section)
        section = "default";
    char type[32] = "", id[128] = "", secret[128] = "", token[4096] = "", role[128] = "", where[1200];
    snprintf(where, sizeof(where), "%s [%s]", path, section);
    ini_get(text, section, "type", type, sizeof(type));
    ini_get(text, section, "access_key_id", id, sizeof(id));
    ini_get(text, section, "access_key_secret", secret, sizeof(secret));
    ini_get(text, section, "security_token", token, sizeof(token));
    ini_get(text, section, "role_name", role, sizeof(role));
    free(text);
    c->name = "credentials-file";
    if (strcmp(type, "access_key") == 0 || strcmp(type, "sts") == 0)
        return set_static(c, where, id, secret, strcmp(type, "sts") == 0 ? token : NULL);
    if (strcmp(type, "ecs_ram_role") == 0)
        return set_imds(c, role[0] ? role : NULL);
    return NS_ERROR(c->host, c->ctx, NS_ERR_INVALID_CONFIG,
                    "alibaba credentials: %s: type '%s' is not supported (access_key, sts, ecs_ram_role are)", where,
                    type[0] ? type : "(missing)");
}

static int choose(ali_credentials *c, const ali_credentials_config *cfg)
{
    const char *id = env("ALIBABA_CLOUD_ACCESS_KEY_ID"), *secret = env("ALIBABA_CLOUD_ACCESS_KEY_SECRET");
    if (id || secret) {
        c->name = "environment";
        return set_static(c, "the environment (ALIBABA_CLOUD_ACCESS_KEY_ID, ALIBABA_CLOUD_ACCESS_KEY_SECRET)", id,
                          secret, env("ALIBABA_CLOUD_SECURITY_TOKEN"));
    }
    const char *role = env("ALIBABA_CLOUD_ROLE_ARN"), *provider = env("ALIBABA_CLOUD_OIDC_PROVIDER_ARN"),
               *file = env("ALIBABA_CLOUD_OIDC_TOKEN_FILE");
    if (role || provider || file) {
        c->name = "rrsa";
        return set_oidc(c, "the environment (RRSA)", role, provider, file);
    }
    int rc = from_cli_profile(c);
    if (rc <= 0)
        return rc;
    if ((rc = from_credentials_file(c)) <= 0)
        return rc;
    (void)cfg;
    if (env_true("ALIBABA_CLOUD_ECS_METADATA_DISABLED"))
        return NS_ERROR(c->host, c->ctx, NS_ERR_UNAUTHORIZED,
                        "alibaba: no credentials: set ALIBABA_CLOUD_ACCESS_KEY_ID/SECRET, RRSA's variables, a CLI "
                        "profile or a credentials file (the ECS RAM role is off: ALIBABA_CLOUD_ECS_METADATA_DISABLED)");
    c->name = "ecs-ram-role";
    return set_imds(c, env("ALIBABA_CLOUD_ECS_METADATA"));
}

int ali_credentials_new(const ali_credentials_config *cfg, ali_credentials **out)
{
    *out = NULL;
    ali_credentials *c = calloc(1, sizeof(*c));
    if (!c)
        return NS_ERROR(cfg->host, cfg->ctx, NS_ERR_INTERNAL, "out of memory creating the alibaba credentials");
    c->host = cfg->host;
    c->ctx = cfg->ctx;
    pthread_mutex_init(&c->lock, NULL);
    const char *md = cfg->metadata_url ? cfg->metadata_url : env("METADATA_ENDPOINT");
    char mdbuf[256];
    if (md && !strstr(md, "://") && (size_t)snprintf(mdbuf, sizeof(mdbuf), "http://%s", md) < sizeof(mdbuf))
        md = mdbuf;
    copy(c->metadata_url, sizeof(c->metadata_url), md ? md : "http://100.100.100.200");
    c->imds_v1_disabled = env_true("ALIBABA_CLOUD_IMDSV1_DISABLED");
    const char *sts_region = env("ALIBABA_CLOUD_STS_REGION");
    if (!sts_region)
        sts_region = cfg->region;
    if (cfg->sts_url)
        copy(c->sts_url, sizeof(c->sts_url), cfg->sts_url);
    else if (sts_region)
        snprintf(c->sts_url, sizeof(c->sts_url), "https://sts%s.%s.aliyuncs.com",
                 env_true("ALIBABA_CLOUD_VPC_ENDPOINT_ENABLED") ? "-vpc" : "", sts_region);
    else
        copy(c->sts_url, sizeof(c->sts_url), "https://sts.aliyuncs.com");
    int rc = choose(c, cfg);
    if (rc < 0) {
        ali_credentials_free(c);
        return rc;
    }
    *out = c;
    return NS_OK;
}

const char *ali_credentials_source(const ali_credentials *c)
{
    return c->name;
}

void ali_credentials_free(ali_credentials *c)
{
    if (!c)
        return;
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static int http(ali_credentials *c, const char *method, const char *url, const ns_http_header *hs, size_t n,
                const char *body, ns_http_response **resp)
{
    ns_http_request req = {.struct_size = sizeof(req),
                           .method = method,
                           .url = url,
                           .headers = hs,
                           .n_headers = n,
                           .body = body,
                           .body_len = body ? strlen(body) : 0,
                           .timeout_ms = 10000,
                           .max_retries = 2};
    return c->host->http_request(c->ctx, &req, resp);
}

/* Reads Credentials{AccessKeyId, AccessKeySecret, SecurityToken, Expiration} (STS) or the same members at the top
 * level (metadata). */
static int take_temporary(ali_credentials *c, const ns_json *o, const char *from)
{
    const ns_host *h = c->host;
    const char *id = jstr(h, o, "AccessKeyId"), *secret = jstr(h, o, "AccessKeySecret"),
               *token = jstr(h, o, "SecurityToken"), *exp = jstr(h, o, "Expiration");
    int64_t expires = ali_parse_iso8601_ms(exp);
    ali_creds n = {0};
    if (!id || !secret || !token || expires < 0 || !copy(n.access_key_id, sizeof(n.access_key_id), id) ||
        !copy(n.secret, sizeof(n.secret), secret) || !copy(n.token, sizeof(n.token), token))
        return NS_ERROR(h, c->ctx, NS_ERR_UNAUTHORIZED,
                        "alibaba credentials: %s answered without AccessKeyId, AccessKeySecret, SecurityToken and an "
                        "Expiration", from);
    n.expires_ms = expires;
    c->cached = n;
    c->have = true;
    ns_label fields[] = {{"source", c->name}, {"expiration", exp}};
    h->log(c->ctx, NS_LOG_DEBUG, "refreshed alibaba credentials", fields, 2);
    return NS_OK;
}

static void form_add(prov_buf *b, const char *key, const char *value)
{
    prov_buf_printf(b, "%s%s=", b->len ? "&" : "", key);
    prov_buf_percent_encode(b, value, strlen(value), false);
}

static int refresh_oidc(ali_credentials *c)
{
    const ns_host *h = c->host;
    char *token = read_file(c->token_file);
    if (!token || !*token) {
        free(token);
        return NS_ERROR(h, c->ctx, NS_ERR_UNAUTHORIZED, "alibaba RRSA: the OIDC token file %s cannot be read",
                        c->token_file);
    }
    size_t tl = strlen(token);
    while (tl && isspace((unsigned char)token[tl - 1]))
        token[--tl] = '\0';
    char ts[21], url[512];
    ali_iso8601(h->now_ms(c->ctx) / 1000, ts);
    prov_buf q = PROV_BUF_INIT, body = PROV_BUF_INIT;
    prov_buf_percent_encode(&q, ts, strlen(ts), false);
    snprintf(url, sizeof(url), "%s/?Action=AssumeRoleWithOIDC&Format=JSON&Version=2015-04-01&Timestamp=%s",
             c->sts_url, prov_buf_str(&q));
    form_add(&body, "RoleArn", c->role_arn);
    form_add(&body, "OIDCProviderArn", c->provider_arn);
    form_add(&body, "OIDCToken", token);
    form_add(&body, "RoleSessionName", c->session_name);
    form_add(&body, "DurationSeconds", "3600");
    free(token);
    ns_http_header hs[] = {{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}};
    ns_http_response *resp = NULL;
    int rc = prov_buf_failed(&body) ? NS_ERR_INTERNAL : http(c, "POST", url, hs, 2, prov_buf_str(&body), &resp);
    prov_buf_free(&q);
    prov_buf_free(&body);
    if (rc < 0)
        return NS_ERROR(h, c->ctx, rc, "alibaba RRSA: STS AssumeRoleWithOIDC at %s could not be reached", c->sts_url);
    ns_json *doc = h->json_parse(resp->body, resp->body_len);
    if (resp->status != 200) {
        const char *code = jstr(h, doc, "Code"), *msg = jstr(h, doc, "Message");
        rc = NS_ERROR(h, c->ctx, resp->status >= 500 || resp->status == 429 ? NS_ERR_THROTTLED : NS_ERR_UNAUTHORIZED,
                      "alibaba RRSA: AssumeRoleWithOIDC for %s failed: HTTP %ld %s: %s", c->role_arn, resp->status,
                      code ? code : "", msg ? msg : "");
    } else {
        rc = take_temporary(c, h->json_get(doc, "Credentials"), "STS AssumeRoleWithOIDC");
    }
    h->json_free(doc);
    h->http_response_free(resp);
    return rc;
}

/* The metadata session token ("" when the service gave none and IMDSv1 is allowed). */
static int imds_token(ali_credentials *c, char *token, size_t len)
{
    char url[320];
    snprintf(url, sizeof(url), "%s/latest/api/token", c->metadata_url);
    ns_http_header hs[] = {{"X-aliyun-ecs-metadata-token-ttl-seconds", IMDS_TOKEN_TTL}};
    ns_http_response *resp = NULL;
    int rc = http(c, "PUT", url, hs, 1, NULL, &resp);
    token[0] = '\0';
    if (rc == NS_OK && resp->status == 200 && resp->body_len < len)
        memcpy(token, resp->body, resp->body_len + 1);
    c->host->http_response_free(resp);
    if (!token[0] && c->imds_v1_disabled)
        return NS_ERROR(c->host, c->ctx, NS_ERR_UNAUTHORIZED,
                        "alibaba: the instance metadata service at %s gave no session token and "
                        "ALIBABA_CLOUD_IMDSV1_DISABLED forbids going on without one", c->metadata_url);
    return NS_OK;
}

static int imds_get_locked(ali_credentials *c, const char *path, ns_http_response **resp)
{
    char token[256], url[640];
    int rc = imds_token(c, token, sizeof(token));
    if (rc < 0)
        return rc;
    snprintf(url, sizeof(url), "%s/latest/meta-data/%s", c->metadata_url, path);
    ns_http_header hs[] = {{"X-aliyun-ecs-metadata-token", token}};
    rc = http(c, "GET", url, hs, token[0] ? 1 : 0, NULL, resp);
    if (rc < 0)
        return NS_ERROR(c->host, c->ctx, NS_ERR_UNAUTHORIZED, "alibaba: the instance metadata service at %s could "
                        "not be reached for %s", c->metadata_url, path);
    if ((*resp)->status != 200) {
        long status = (*resp)->status;
        c->host->http_response_free(*resp);
        *resp = NULL;
        return NS_ERROR(c->host, c->ctx, status == 404 ? NS_ERR_NOT_FOUND : NS_ERR_UNAUTHORIZED,
                        "alibaba: the instance metadata service answered HTTP %ld for %s", status, path);
    }
    return NS_OK;
}

int ali_metadata_get(ali_credentials *c, const char *path, char *out, size_t len)
{
    ns_http_response *resp = NULL;
    pthread_mutex_lock(&c->lock);
    int rc = imds_get_locked(c, path, &resp);
    pthread_mutex_unlock(&c->lock);
    if (rc < 0)
        return rc;
    size_t n = resp->body_len;
    while (n && isspace((unsigned char)resp->body[n - 1]))
        n--;
    if (n >= len)
        rc = NS_ERROR(c->host, c->ctx, NS_ERR_INTERNAL, "alibaba: metadata %s is too long", path);
    else {
        memcpy(out, resp->body, n);
        out[n] = '\0';
    }
    c->host->http_response_free(resp);
    return rc;
}

static int refresh_imds(ali_credentials *c)
{
    ns_http_response *resp = NULL;
    int rc;
    if (!c->role_name[0]) {
        if ((rc = imds_get_locked(c, "ram/security-credentials/", &resp)) < 0)
            return rc;
        size_t n = strcspn(resp->body, "\r\n");
        if (n == 0 || n >= sizeof(c->role_name)) {
            c->host->http_response_free(resp);
            return NS_ERROR(c->host, c->ctx, NS_ERR_UNAUTHORIZED, "alibaba: the instance has no RAM role attached");
        }
        memcpy(c->role_name, resp->body, n);
        c->role_name[n] = '\0';
        c->host->http_response_free(resp);
    }
    char path[200];
    snprintf(path, sizeof(path), "ram/security-credentials/%s", c->role_name);
    if ((rc = imds_get_locked(c, path, &resp)) < 0)
        return rc;
    ns_json *doc = c->host->json_parse(resp->body, resp->body_len);
    const char *code = jstr(c->host, doc, "Code");
    if (!code || strcmp(code, "Success") != 0)
        rc = NS_ERROR(c->host, c->ctx, NS_ERR_UNAUTHORIZED, "alibaba: the metadata service refused the credentials "
                      "of RAM role %s (Code %s)", c->role_name, code ? code : "missing");
    else
        rc = take_temporary(c, doc, "the instance metadata service");
    c->host->json_free(doc);
    c->host->http_response_free(resp);
    return rc;
}

int ali_credentials_get(ali_credentials *c, ali_creds *out)
{
    pthread_mutex_lock(&c->lock);
    int rc = NS_OK;
    bool stale = !c->have || (c->cached.expires_ms &&
                              c->host->now_ms(c->ctx) + REFRESH_EARLY_MS >= c->cached.expires_ms);
    if (stale && c->kind == SRC_OIDC)
        rc = refresh_oidc(c);
    else if (stale && c->kind == SRC_IMDS)
        rc = refresh_imds(c);
    /* an early refresh that failed leaves the current credentials in use until they really expire */
    if (rc < 0 && c->have && c->host->now_ms(c->ctx) < c->cached.expires_ms) {
        ns_label f[] = {{"source", c->name}};
        c->host->log(c->ctx, NS_LOG_WARN, "refreshing alibaba credentials failed; the current ones are still valid", f,
                     1);
        rc = NS_OK;
    }
    if (rc == NS_OK)
        *out = c->cached;
    pthread_mutex_unlock(&c->lock);
    return rc;
}
