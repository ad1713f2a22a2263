/* The credential chain (environment, web identity through STS, IMDSv2), its order, refresh and secrecy, driven through
 * a fake host whose HTTP answers are scripted here and whose clock the tests move. Also the endpoint resolution. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "aws_credentials.h"
#include "aws_endpoint.h"
#include "fake_env.h"
#include "fake_host.h"
#include "test_files.h"

/* ---- a scripted STS and IMDS ---- */
typedef struct script {
    int64_t *clock;        /* the fake host's clock, for expirations relative to "now" */
    int64_t lifetime_ms;   /* how long issued credentials live */
    int sts_calls, imds_token_calls, imds_role_calls, imds_cred_calls;
    int fail_status;       /* when non-zero, STS and IMDS credential calls answer this status */
    char last_body[4096];  /* the last request body */
    bool saw_authorization;
    char last_imds_token[128];
    int serial;            /* distinguishes successive credentials */
    char body[4096];
} script;

static void iso8601(int64_t ms, char *out, size_t len)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static const char *header(const ns_http_request *req, const char *name)
{
    for (size_t i = 0; i < req->n_headers; i++)
        if (strcasecmp(req->headers[i].name, name) == 0)
            return req->headers[i].value;
    return NULL;
}

static int respond(void *ctx, const ns_http_request *req, fake_response *resp)
{
    script *s = ctx;
    snprintf(s->last_body, sizeof(s->last_body), "%.*s", (int)req->body_len, req->body ? req->body : "");
    s->saw_authorization |= header(req, "Authorization") != NULL;
    char exp[32];
    iso8601(*s->clock + s->lifetime_ms, exp, sizeof(exp));
    if (strncmp(req->url, "http://sts.test", 15) == 0) {
        s->sts_calls++;
        if (s->fail_status) {
            resp->status = s->fail_status;
            resp->body = s->fail_status >= 500 ? "" : "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>"
                         "<Message>token rejected</Message></Error><RequestId>r-1</RequestId></ErrorResponse>";
            return NS_OK;
        }
        s->serial++;
        snprintf(s->body, sizeof(s->body),
                 "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
                 "<SessionToken>sts-token-%d</SessionToken><SecretAccessKey>sts-secret-%d</SecretAccessKey>"
                 "<Expiration>%s</Expiration><AccessKeyId>ASIASTS%d</AccessKeyId></Credentials>"
                 "</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>",
                 s->serial, s->serial, exp, s->serial);
        resp->status = 200;
        resp->body = s->body;
        return NS_OK;
    }
    if (strcmp(req->url, "http://imds.test/latest/api/token") == 0) {
        ck_assert_str_eq(req->method, "PUT");
        ck_assert_str_eq(header(req, "X-aws-ec2-metadata-token-ttl-seconds"), "21600");
        s->imds_token_calls++;
        snprintf(s->body, sizeof(s->body), "imds-session-%d", s->imds_token_calls);
        resp->status = 200;
        resp->body = s->body;
        return NS_OK;
    }
    if (strncmp(req->url, "http://imds.test/latest/meta-data/", 34) == 0) {
        const char *token = header(req, "X-aws-ec2-metadata-token");
        char expected[64];
        snprintf(expected, sizeof(expected), "imds-session-%d", s->imds_token_calls);
        if (!token || strcmp(token, expected) != 0) {
            resp->status = 401;
            resp->body = "";
            return NS_OK;
        }
        const char *path = req->url + 34;
        if (strcmp(path, "iam/security-credentials/") == 0) {
            s->imds_role_calls++;
            resp->status = 200;
            resp->body = "nodesmith-node-role\n";
        } else if (strcmp(path, "iam/security-credentials/nodesmith-node-role") == 0) {
            s->imds_cred_calls++;
            if (s->fail_status) {
                resp->status = s->fail_status;
                resp->body = "";
                return NS_OK;
            }
            s->serial++;
            snprintf(s->body, sizeof(s->body),
                     "{\"Code\":\"Success\",\"LastUpdated\":\"2024-05-01T12:00:00Z\",\"Type\":\"AWS-HMAC\","
                     "\"AccessKeyId\":\"ASIAIMDS%d\",\"SecretAccessKey\":\"imds-secret-%d\",\"Token\":\"imds-token-%d\","
                     "\"Expiration\":\"%s\"}",
                     s->serial, s->serial, s->serial, exp);
            resp->status = 200;
            resp->body = s->body;
        } else if (strcmp(path, "placement/region") == 0) {
            resp->status = 200;
            resp->body = "eu-west-3";
        } else {
            resp->status = 404;
            resp->body = "";
        }
        return NS_OK;
    }
    if (strcmp(req->url, "http://169.254.170.2/v2/credentials/task-1234") == 0) { /* ECS's agent */
        const char *auth = header(req, "Authorization");
        s->serial++;
        snprintf(s->body, sizeof(s->body),
                 "{\"AccessKeyId\":\"ASIAECS%d\",\"SecretAccessKey\":\"ecs-secret-%d\",\"Token\":\"ecs-token-%d\","
                 "\"Expiration\":\"%s\",\"RoleArn\":\"arn:aws:iam::111122223333:role/task\"}",
                 s->serial, s->serial, s->serial, exp);
        resp->status = auth && strcmp(auth, "ecs-auth") == 0 ? 200 : 403;
        resp->body = resp->status == 200 ? s->body : "{}";
        return NS_OK;
    }
    resp->status = 404;
    resp->body = "not found";
    return NS_OK;
}

static fake_host host;
static fake_env env;
static aws_env env_handle;
static script sc;
static char token_file[64];

static void setup(void)
{
    fake_host_init(&host);
    memset(&env, 0, sizeof(env));
    memset(&sc, 0, sizeof(sc));
    sc.clock = &host.clock_ms;
    sc.lifetime_ms = 3600 * 1000;
    host.responder = respond;
    host.responder_ctx = &sc;
    env_handle = (aws_env){fake_env_get, &env};
    fake_env_set(&env, "AWS_ENDPOINT_URL_STS", "http://sts.test");
    fake_env_set(&env, "AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://imds.test/");
    snprintf(token_file, sizeof(token_file), "/tmp/nodesmith-aws-token-XXXXXX");
    int fd = mkstemp(token_file);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "oidc-jwt-ONE\n", 13), 13);
    close(fd);
}

static void teardown(void)
{
    unlink(token_file);
    /* No secret ever reaches a log line or an error message. */
    const char *secrets[] = {"secret-", "sts-token", "imds-token-", "imds-session", "oidc-jwt", "ENVSECRET",
                             "ENVTOKEN", "ASIA", "AKIDENV"};
    for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++)
        ck_assert_msg(strstr(host.log, secrets[i]) == NULL, "log contains %s:\n%s", secrets[i], host.log);
}

static aws_credentials_provider *chain(void)
{
    aws_credentials_config cfg = {&host.table, (ns_host_ctx *)&host, &env_handle, "us-west-2", 0, 0, 0};
    aws_credentials_provider *p = NULL;
    ck_assert_int_eq(aws_credentials_provider_new(&cfg, &p), NS_OK);
    return p;
}

START_TEST(test_environment_first)
{
    fake_env_set(&env, "AWS_ACCESS_KEY_ID", "AKIDENV");
    fake_env_set(&env, "AWS_SECRET_ACCESS_KEY", "ENVSECRET");
    fake_env_set(&env, "AWS_SESSION_TOKEN", "ENVTOKEN");
    fake_env_set(&env, "AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/nodesmith");
    fake_env_set(&env, "AWS_WEB_IDENTITY_TOKEN_FILE", token_file);
    aws_credentials_provider *p = chain();
    aws_creds c = {0};
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    ck_assert_str_eq(c.access_key_id, "AKIDENV");
    ck_assert_str_eq(c.secret_access_key, "ENVSECRET");
    ck_assert_str_eq(c.session_token, "ENVTOKEN");
    ck_assert_int_eq(c.expiration_ms, 0);
    ck_assert_int_eq(aws_credentials_source(p), AWS_CREDS_ENVIRONMENT);
    ck_assert_int_eq(host.http_requests, 0);
    aws_creds_clear(&c);
    host.clock_ms += 365LL * 24 * 3600 * 1000; /* long-term credentials never expire */
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    ck_assert_int_eq(host.http_requests, 0);
    aws_creds_clear(&c);
    aws_credentials_provider_free(p);
}
END_TEST

START_TEST(test_environment_half_set)
{
    fake_env_set(&env, "AWS_ACCESS_KEY_ID", "AKIDENV");
    aws_credentials_provider *p = chain();
    aws_creds c = {0};
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(host.last_error_message, "AWS_SECRET_ACCESS_KEY is not"));
    ck_assert(!aws_creds_present(&c));
    aws_credentials_provider_free(p);
}
END_TEST

START_TEST(test_web_identity_and_refresh)
{
    fake_env_set(&env, "AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/nodesmith");
    fake_env_set(&env, "AWS_WEB_IDENTITY_TOKEN_FILE", token_file);
    fake_env_set(&env, "AWS_ROLE_SESSION_NAME", "node smith");
    aws_credentials_provider *p = chain();
    aws_creds c = {0};
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    ck_assert_int_eq(aws_credentials_source(p), AWS_CREDS_WEB_IDENTITY);
    ck_assert_str_eq(c.access_key_id, "ASIASTS1");
    ck_assert_str_eq(c.session_token, "sts-token-1");
    ck_assert_int_eq(c.expiration_ms, (host.clock_ms + 3600 * 1000) / 1000 * 1000);
    ck_assert(!sc.saw_authorization); /* AssumeRoleWithWebIdentity is not signed */
    ck_assert_ptr_nonnull(strstr(sc.last_body, "Action=AssumeRoleWithWebIdentity"));
    ck_assert_ptr_nonnull(strstr(sc.last_body, "RoleArn=arn%3Aaws%3Aiam%3A%3A111122223333%3Arole%2Fnodesmith"));
    ck_assert_ptr_nonnull(strstr(sc.last_body, "RoleSessionName=node%20smith"));
    ck_assert_ptr_nonnull(strstr(sc.last_body, "WebIdentityToken=oidc-jwt-ONE"));
    aws_creds_clear(&c);

    /* 50 minutes on: still more than 5 minutes left, no call. */
    host.clock_ms += 50 * 60 * 1000;
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    ck_assert_int_eq(sc.sts_calls, 1);
    ck_assert_str_eq(c.access_key_id, "ASIASTS1");
    aws_creds_clear(&c);

    /* 56 minutes on: inside the refresh window; the rotated token file is read again. */
    FILE *f = fopen(token_file, "w");
    fputs("oidc-jwt-TWO", f);
    fclose(f);
    host.clock_ms += 6 * 60 * 1000;
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    ck_assert_int_eq(sc.sts_calls, 2);
    ck_assert_str_eq(c.access_key_id, "ASIASTS2");
    ck_assert_ptr_nonnull(strstr(sc.last_body, "WebIdentityToken=oidc-jwt-TWO"));
    aws_creds_clear(&c);
    ck_assert_ptr_nonnull(strstr(host.log, "aws credentials refreshed source=web-identity"));
    aws_credentials_provider_free(p);
}
END_TEST

START_TEST(test_refresh_failure_keeps_valid_credentials)
{
    fake_env_set(&env, "AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/nodesmith");
    fake_env_set(&env, "AWS_WEB_IDENTITY_TOKEN_FILE", token_file);
    aws_credentials_provider *p = chain();
    aws_creds c = {0};
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    aws_creds_clear(&c);
    sc.fail_status = 400;
    host.clock_ms += 57 * 60 * 1000; /* refresh window, not yet expired */
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    ck_assert_str_eq(c.access_key_id, "ASIASTS1");
    ck_assert_ptr_nonnull(strstr(host.log, "WARN aws credentials refresh failed"));
    aws_creds_clear(&c);
    host.clock_ms += 4 * 60 * 1000; /* now expired */
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_ERR_UNAUTHORIZED);
    ck_assert_ptr_nonnull(strstr(host.last_error_message, "InvalidIdentityToken"));
    ck_assert_ptr_nonnull(strstr(host.last_error_message, "role arn:aws:iam::111122223333:role/nodesmith"));
    ck_assert(!aws_creds_present(&c));
    sc.fail_status = 503;
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_ERR_THROTTLED);
    aws_credentials_provider_free(p);
}
END_TEST

START_TEST(test_web_identity_unreadable_token_file)
{
    fake_env_set(&env, "AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/nodesmith");
    fake_env_set(&env, "AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent/token");
    aws_credentials_provider *p = chain();
    aws_creds c = {0};
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(host.last_error_message, "/nonexistent/token"));
    ck_assert_int_eq(host.http_requests, 0);
    aws_credentials_provider_free(p);
}
END_TEST

/* ECS: the relative URI is resolved against the task agent's fixed address; the container endpoint comes after the
 * environment, web identity and the profile, and before IMDS. */
START_TEST(test_ecs_relative_uri)
{
    fake_env_set(&env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/task-1234");
    fake_env_set(&env, "AWS_CONTAINER_AUTHORIZATION_TOKEN", "ecs-auth");
    aws_credentials_provider *p = chain();
    aws_creds c = {0};
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    ck_assert_int_eq(aws_credentials_source(p), AWS_CREDS_CONTAINER);
    ck_assert_str_eq(c.access_key_id, "ASIAECS1");
    ck_assert_str_eq(c.session_token, "ecs-token-1");
    ck_assert_int_eq(c.expiration_ms / 1000, (host.clock_ms + sc.lifetime_ms) / 1000);
    ck_assert_int_eq(sc.imds_token_calls, 0);
    aws_creds_clear(&c);
    aws_credentials_provider_free(p);
}
END_TEST

START_TEST(test_imds_v2_and_token_reuse)
{
    aws_credentials_provider *p = chain();
    aws_creds c = {0};
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    ck_assert_int_eq(aws_credentials_source(p), AWS_CREDS_IMDS);
    ck_assert_str_eq(c.access_key_id, "ASIAIMDS1");
    ck_assert_str_eq(c.secret_access_key, "imds-secret-1");
    ck_assert_str_eq(c.session_token, "imds-token-1");
    ck_assert_int_eq(sc.imds_token_calls, 1);
    aws_creds_clear(&c);
    host.clock_ms += 56 * 60 * 1000;
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    ck_assert_str_eq(c.access_key_id, "ASIAIMDS2");
    ck_assert_int_eq(sc.imds_token_calls, 1); /* the session token lives 6 hours */
    ck_assert_int_eq(sc.imds_cred_calls, 2);
    aws_creds_clear(&c);

    /* 6 hours on the session token has expired: a new one is fetched first. */
    host.clock_ms += 6 * 3600 * 1000;
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    ck_assert_int_eq(sc.imds_token_calls, 2);
    aws_creds_clear(&c);

    char region[32];
    ck_assert_int_eq(aws_credentials_imds_metadata(p, "placement/region", region, sizeof(region)), NS_OK);
    ck_assert_str_eq(region, "eu-west-3");
    aws_credentials_provider_free(p);
}
END_TEST

START_TEST(test_imds_refused_session_token_is_renewed)
{
    aws_credentials_provider *p = chain();
    aws_creds c = {0};
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    aws_creds_clear(&c);
    /* The IMDS forgets the session (as after a reboot): the next GET is refused with 401, and a new token is used. */
    sc.imds_token_calls = 7;
    aws_credentials_invalidate(p);
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    ck_assert_int_eq(sc.imds_token_calls, 8);
    ck_assert_str_eq(c.access_key_id, "ASIAIMDS2");
    aws_creds_clear(&c);
    aws_credentials_provider_free(p);
}
END_TEST

START_TEST(test_no_source)
{
    fake_env_set(&env, "AWS_EC2_METADATA_DISABLED", "true");
    aws_credentials_provider *p = chain();
    aws_creds c = {0};
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_ERR_UNAUTHORIZED);
    ck_assert_ptr_nonnull(strstr(host.last_error_message, "no AWS credentials"));
    char region[32];
    ck_assert_int_eq(aws_credentials_imds_metadata(p, "placement/region", region, sizeof(region)),
                     NS_ERR_UNSUPPORTED);
    aws_credentials_provider_free(p);
    aws_credentials_provider_free(NULL);
}
END_TEST

START_TEST(test_invalidate_forces_refresh)
{
    fake_env_set(&env, "AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/nodesmith");
    fake_env_set(&env, "AWS_WEB_IDENTITY_TOKEN_FILE", token_file);
    aws_credentials_provider *p = chain();
    aws_creds c = {0};
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    aws_creds_clear(&c);
    aws_credentials_invalidate(p);
    ck_assert_int_eq(aws_credentials_get(p, &c), NS_OK);
    ck_assert_int_eq(sc.sts_calls, 2);
    ck_assert_str_eq(c.access_key_id, "ASIASTS2");
    aws_creds_clear(&c);
    aws_credentials_provider_free(p);
}
END_TEST

START_TEST(test_endpoints)
{
    fake_env e = {0};
    aws_env h = {fake_env_get, &e};
    char url[256];
    ck_assert_int_eq(aws_endpoint_resolve(&h, "ec2", "us-west-2", url, sizeof(url)), NS_OK);
    ck_assert_str_eq(url, "https://ec2.us-west-2.amazonaws.com");
    ck_assert_int_eq(aws_endpoint_resolve(&h, "sqs", "cn-north-1", url, sizeof(url)), NS_OK);
    ck_assert_str_eq(url, "https://sqs.cn-north-1.amazonaws.com.cn");
    ck_assert_int_eq(aws_endpoint_resolve(&h, "pricing", "eu-west-3", url, sizeof(url)), NS_OK);
    ck_assert_str_eq(url, "https://api.pricing.eu-central-1.amazonaws.com");
    ck_assert_str_eq(aws_pricing_region("us-west-2"), "us-east-1");
    fake_env_set(&e, "AWS_ENDPOINT_URL", "http://127.0.0.1:4566");
    fake_env_set(&e, "AWS_ENDPOINT_URL_SQS", "http://127.0.0.1:9324/");
    ck_assert_int_eq(aws_endpoint_resolve(&h, "ec2", "us-west-2", url, sizeof(url)), NS_OK);
    ck_assert_str_eq(url, "http://127.0.0.1:4566");
    ck_assert_int_eq(aws_endpoint_resolve(&h, "sqs", "us-west-2", url, sizeof(url)), NS_OK);
    ck_assert_str_eq(url, "http://127.0.0.1:9324/");
    fake_env_set(&e, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "TRUE");
    ck_assert_int_eq(aws_endpoint_resolve(&h, "ec2", "us-west-2", url, sizeof(url)), NS_OK);
    ck_assert_str_eq(url, "https://ec2.us-west-2.amazonaws.com");
    fake_env_set(&e, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "false");
    fake_env_set(&e, "AWS_ENDPOINT_URL_EC2", "ftp://nope");
    ck_assert_int_eq(aws_endpoint_resolve(&h, "ec2", "us-west-2", url, sizeof(url)), NS_ERR_INVALID_CONFIG);

    aws_url u;
    ck_assert_int_eq(aws_url_parse("HTTPS://ec2.us-east-1.amazonaws.com:443/base/", &u), NS_OK);
    ck_assert_str_eq(u.scheme, "https");
    ck_assert_str_eq(u.host, "ec2.us-east-1.amazonaws.com");
    ck_assert_str_eq(u.path, "/base");
    ck_assert_int_eq(aws_url_parse("http://127.0.0.1:4566", &u), NS_OK);
    ck_assert_str_eq(u.host, "127.0.0.1:4566");
    ck_assert_str_eq(u.path, "");
    ck_assert_int_eq(aws_url_parse("http://[::1]:80", &u), NS_OK);
    ck_assert_str_eq(u.host, "[::1]");
    ck_assert_int_eq(aws_url_parse("http://", &u), NS_ERR_INVALID_CONFIG);
    ck_assert_int_eq(aws_url_parse("no-scheme", &u), NS_ERR_INVALID_CONFIG);

    ck_assert_str_eq(aws_imds_endpoint(&h, url, sizeof(url)), "http://169.254.169.254");
    fake_env_set(&e, "AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1338//");
    ck_assert_str_eq(aws_imds_endpoint(&h, url, sizeof(url)), "http://127.0.0.1:1338");
    fake_env_set(&e, "AWS_EC2_METADATA_DISABLED", "true");
    ck_assert_ptr_null(aws_imds_endpoint(&h, url, sizeof(url)));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("aws_credentials");
    TCase *tc = tcase_create("chain");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_environment_first);
    tcase_add_test(tc, test_environment_half_set);
    tcase_add_test(tc, test_web_identity_and_refresh);
    tcase_add_test(tc, test_refresh_failure_keeps_valid_credentials);
    tcase_add_test(tc, test_web_identity_unreadable_token_file);
    tcase_add_test(tc, test_imds_v2_and_token_reuse);
    tcase_add_test(tc, test_ecs_relative_uri);
    tcase_add_test(tc, test_imds_refused_session_token_is_renewed);
    tcase_add_test(tc, test_no_source);
    tcase_add_test(tc, test_invalidate_forces_refresh);
    suite_add_tcase(s, tc);
    TCase *ep = tcase_create("endpoints");
    tcase_add_test(ep, test_endpoints);
    suite_add_tcase(s, ep);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
