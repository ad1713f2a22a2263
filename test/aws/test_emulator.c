/*
 * Integration: the provider's client code (credential chain, SigV4, retries, Query and JSON protocols, parsers)
 * against the AWS emulator, which checks every signature with botocore. The emulator is started once for the suite
 * and stopped at the end.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "aws_client.h"
#include "aws_credentials.h"
#include "aws_ec2_parse.h"
#include "aws_query.h"
#include "aws_emulator.h"
#include "fake_env.h"
#include "fake_host.h"
#include "test_files.h"

static emulator emu;

static fake_host host;
static fake_env env;
static aws_env env_handle;
static aws_credentials_provider *creds;
static aws_client *client;
static char err[256];

/* Environment pointing every service at the emulator, with the emulator's static key unless a test changes it. */
static void setup(void)
{
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/clear", "{}", NULL), 200);
    fake_host_init(&host);
    memset(&env, 0, sizeof(env));
    env_handle = (aws_env){fake_env_get, &env};
    fake_env_set(&env, "AWS_ENDPOINT_URL", emu.url);
    fake_env_set(&env, "AWS_EC2_METADATA_DISABLED", "true");
    fake_env_set(&env, "AWS_ACCESS_KEY_ID", "AKIDEMULATOR");
    fake_env_set(&env, "AWS_SECRET_ACCESS_KEY", "emulator/secret/key+EXAMPLE");
    creds = NULL;
    client = NULL;
}

static void teardown(void)
{
    aws_client_free(client);
    aws_credentials_provider_free(creds);
}

static void make_client(int64_t timeout_ms)
{
    aws_credentials_config cc = {&host.table, (ns_host_ctx *)&host, &env_handle, "us-east-1", 0, 0, 0};
    ck_assert_int_eq(aws_credentials_provider_new(&cc, &creds), NS_OK);
    aws_client_config c = {&host.table, (ns_host_ctx *)&host, creds, &env_handle, "us-east-1", 0, timeout_ms};
    ck_assert_int_eq(aws_client_new(&c, &client), NS_OK);
}

/* One EC2 call with a prepared query; returns the category and leaves the answer in *resp. */
static int ec2(aws_query *q, const char *op, ns_http_response **resp, aws_api_error *e)
{
    ck_assert(!aws_query_failed(q));
    int rc = aws_client_query(client, "ec2", op, aws_query_body(q), aws_query_len(q), resp, e);
    aws_query_free(q);
    return rc;
}

static int request_count(const char *action)
{
    char *state = NULL;
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/state", NULL, &state), 200);
    char key[128];
    snprintf(key, sizeof(key), "\"%s\": ", action);
    const char *at = strstr(state, key);
    int n = at ? atoi(at + strlen(key)) : 0;
    free(state);
    return n;
}

static int describe_zones(ns_http_response **resp, aws_api_error *e)
{
    aws_query q;
    aws_query_init(&q, "DescribeAvailabilityZones", "2016-11-15");
    return ec2(&q, "DescribeAvailabilityZones", resp, e);
}

START_TEST(test_zones_with_static_keys)
{
    make_client(0);
    ns_http_response *resp = NULL;
    ck_assert_int_eq(describe_zones(&resp, NULL), NS_OK);
    aws_ec2_zone_page z;
    ck_assert_int_eq(aws_ec2_parse_zones(resp->body, resp->body_len, &z, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(z.n, 3);
    ck_assert_str_eq(z.items[0].name, "us-east-1a");
    aws_ec2_zone_page_free(&z);
    host.table.http_response_free(resp);
}
END_TEST

START_TEST(test_instance_type_pagination)
{
    make_client(0);
    const char *token = NULL;
    char *saved_token = NULL;
    size_t total = 0, pages = 0;
    bool saw_m5 = false;
    do {
        aws_query q;
        aws_query_init(&q, "DescribeInstanceTypes", "2016-11-15");
        aws_query_add(&q, "MaxResults", "100");
        if (token)
            aws_query_add(&q, "NextToken", token);
        ns_http_response *resp = NULL;
        ck_assert_int_eq(ec2(&q, "DescribeInstanceTypes", &resp, NULL), NS_OK);
        aws_ec2_instance_type_page p;
        ck_assert_int_eq(aws_ec2_parse_instance_types(resp->body, resp->body_len, &p, err, sizeof(err)), NS_OK);
        for (size_t i = 0; i < p.n; i++)
            if (strcmp(p.items[i].name, "m5.large") == 0) {
                saw_m5 = true;
                ck_assert_int_eq(p.items[i].vcpus, 2);
                ck_assert_int_eq(p.items[i].memory_mib, 8192);
                ck_assert_str_eq(p.items[i].architectures[0], "x86_64");
            }
        total += p.n;
        pages++;
        free(saved_token);
        saved_token = p.next_token ? strdup(p.next_token) : NULL;
        token = saved_token;
        aws_ec2_instance_type_page_free(&p);
        host.table.http_response_free(resp);
    } while (token);
    ck_assert(saw_m5);
    ck_assert_uint_gt(total, 1000);
    ck_assert_uint_eq(pages, (total + 99) / 100);
}
END_TEST

START_TEST(test_offerings_and_spot_prices)
{
    make_client(0);
    aws_query q;
    aws_query_init(&q, "DescribeInstanceTypeOfferings", "2016-11-15");
    aws_query_add(&q, "LocationType", "availability-zone");
    aws_query_add(&q, "Filter.1.Name", "instance-type");
    aws_query_add(&q, "Filter.1.Value.1", "m5.large");
    ns_http_response *resp = NULL;
    ck_assert_int_eq(ec2(&q, "DescribeInstanceTypeOfferings", &resp, NULL), NS_OK);
    aws_ec2_offering_page o;
    ck_assert_int_eq(aws_ec2_parse_offerings(resp->body, resp->body_len, &o, err, sizeof(err)), NS_OK);
    ck_assert_uint_ge(o.n, 2);
    ck_assert_str_eq(o.items[0].instance_type, "m5.large");
    ck_assert_str_eq(o.items[0].location, "us-east-1a");
    aws_ec2_offering_page_free(&o);
    host.table.http_response_free(resp);

    aws_query_init(&q, "DescribeSpotPriceHistory", "2016-11-15");
    aws_query_add(&q, "InstanceType.1", "m5.large");
    aws_query_add(&q, "ProductDescription.1", "Linux/UNIX");
    ck_assert_int_eq(ec2(&q, "DescribeSpotPriceHistory", &resp, NULL), NS_OK);
    aws_ec2_spot_price_page s;
    ck_assert_int_eq(aws_ec2_parse_spot_prices(resp->body, resp->body_len, &s, err, sizeof(err)), NS_OK);
    ck_assert_uint_ge(s.n, 2);
    ck_assert(s.items[0].price > 0.01 && s.items[0].price < 0.096); /* below the on-demand price */
    ck_assert_int_gt(s.items[0].timestamp_ms, 0);
    aws_ec2_spot_price_page_free(&s);
    host.table.http_response_free(resp);
}
END_TEST

static void create_template(char *id, size_t len)
{
    aws_query q;
    aws_query_init(&q, "CreateLaunchTemplate", "2016-11-15");
    char name[64];
    snprintf(name, sizeof(name), "nodesmith/test/%d-%lld", getpid(), (long long)host.clock_ms);
    aws_query_add(&q, "LaunchTemplateName", name);
    aws_query_add(&q, "LaunchTemplateData.ImageId", "ami-0e000000000000a64");
    ns_http_response *resp = NULL;
    ck_assert_int_eq(ec2(&q, "CreateLaunchTemplate", &resp, NULL), NS_OK);
    aws_ec2_launch_template_page t;
    ck_assert_int_eq(aws_ec2_parse_create_launch_template(resp->body, resp->body_len, &t, err, sizeof(err)), NS_OK);
    snprintf(id, len, "%s", t.items[0].id);
    aws_ec2_launch_template_page_free(&t);
    host.table.http_response_free(resp);
}

static void fleet_query(aws_query *q, const char *template_id, const char *token)
{
    aws_query_init(q, "CreateFleet", "2016-11-15");
    aws_query_add(q, "Type", "instant");
    aws_query_add(q, "ClientToken", token);
    aws_query_add(q, "TargetCapacitySpecification.TotalTargetCapacity", "1");
    aws_query_add(q, "TargetCapacitySpecification.DefaultTargetCapacityType", "spot");
    aws_query_add(q, "LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateId", template_id);
    aws_query_add(q, "LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version", "$Latest");
    aws_query_add(q, "LaunchTemplateConfigs.1.Overrides.1.InstanceType", "m5.large");
    aws_query_add(q, "LaunchTemplateConfigs.1.Overrides.1.AvailabilityZone", "us-east-1a");
    aws_query_add(q, "LaunchTemplateConfigs.1.Overrides.2.InstanceType", "m5.large");
    aws_query_add(q, "LaunchTemplateConfigs.1.Overrides.2.AvailabilityZone", "us-east-1b");
    aws_query_add(q, "TagSpecification.1.ResourceType", "instance");
    aws_query_add(q, "TagSpecification.1.Tag.1.Key", "karpenter.sh/nodepool");
    aws_query_add(q, "TagSpecification.1.Tag.1.Value", "emulated");
    aws_query_add(q, "TagSpecification.1.Tag.2.Key", "karpenter.sh/nodeclaim");
    aws_query_add(q, "TagSpecification.1.Tag.2.Value", token);
}

START_TEST(test_fleet_capacity_idempotency_and_lifecycle)
{
    make_client(0);
    char template_id[64];
    create_template(template_id, sizeof(template_id));
    /* Both zones' spot capacity for m5.large: the cheaper one has none. Find which is cheaper by trying both. */
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/faults",
                                      "{\"kind\":\"ice\",\"instance_type\":\"m5.large\",\"zone\":\"us-east-1a\","
                                      "\"capacity_type\":\"spot\"}",
                                      NULL),
                     200);
    char token[64];
    snprintf(token, sizeof(token), "claim-%d-%lld", getpid(), (long long)host.clock_ms);
    aws_query q;
    fleet_query(&q, template_id, token);
    ns_http_response *resp = NULL;
    ck_assert_int_eq(ec2(&q, "CreateFleet", &resp, NULL), NS_OK);
    aws_ec2_fleet_result f;
    ck_assert_int_eq(aws_ec2_parse_create_fleet(resp->body, resp->body_len, &f, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(f.n_instances, 1);
    ck_assert_str_eq(f.instances[0].zone, "us-east-1b");
    ck_assert_str_eq(f.instances[0].lifecycle, "spot");
    char instance_id[32];
    snprintf(instance_id, sizeof(instance_id), "%s", f.instances[0].instance_id);
    bool saw_ice = false;
    for (size_t i = 0; i < f.n_errors; i++)
        saw_ice |= strcmp(f.errors[i].code, "InsufficientInstanceCapacity") == 0 &&
                   strcmp(f.errors[i].zone, "us-east-1a") == 0;
    ck_assert_msg(saw_ice || f.n_errors == 0, "unexpected fleet errors");
    aws_ec2_fleet_result_free(&f);
    host.table.http_response_free(resp);

    /* The same client token returns the same instance, and launches nothing new. */
    fleet_query(&q, template_id, token);
    ck_assert_int_eq(ec2(&q, "CreateFleet", &resp, NULL), NS_OK);
    ck_assert_int_eq(aws_ec2_parse_create_fleet(resp->body, resp->body_len, &f, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(f.n_instances, 1);
    ck_assert_str_eq(f.instances[0].instance_id, instance_id);
    aws_ec2_fleet_result_free(&f);
    host.table.http_response_free(resp);

    /* DescribeInstances by tag finds it running, with its tags. */
    aws_query_init(&q, "DescribeInstances", "2016-11-15");
    aws_query_add(&q, "Filter.1.Name", "tag:karpenter.sh/nodeclaim");
    aws_query_add(&q, "Filter.1.Value.1", token);
    ck_assert_int_eq(ec2(&q, "DescribeInstances", &resp, NULL), NS_OK);
    aws_ec2_instance_page inst;
    ck_assert_int_eq(aws_ec2_parse_instances(resp->body, resp->body_len, &inst, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(inst.n, 1);
    ck_assert_str_eq(inst.items[0].instance_id, instance_id);
    ck_assert_str_eq(inst.items[0].state_name, "running");
    ck_assert_str_eq(inst.items[0].lifecycle, "spot");
    ck_assert_str_eq(aws_ec2_tag(inst.items[0].tags, "karpenter.sh/nodepool"), "emulated");
    aws_ec2_instance_page_free(&inst);
    host.table.http_response_free(resp);

    /* Terminate it; then terminating an unknown ID is NOT_FOUND with EC2's code. */
    aws_query_init(&q, "TerminateInstances", "2016-11-15");
    aws_query_add(&q, "InstanceId.1", instance_id);
    ck_assert_int_eq(ec2(&q, "TerminateInstances", &resp, NULL), NS_OK);
    aws_ec2_state_change_page t;
    ck_assert_int_eq(aws_ec2_parse_terminate(resp->body, resp->body_len, &t, err, sizeof(err)), NS_OK);
    ck_assert_uint_eq(t.n, 1);
    ck_assert_str_eq(t.items[0].current_state, "shutting-down");
    ck_assert_str_eq(t.items[0].previous_state, "running");
    aws_ec2_state_change_page_free(&t);
    host.table.http_response_free(resp);

    aws_api_error e;
    aws_query_init(&q, "TerminateInstances", "2016-11-15");
    aws_query_add(&q, "InstanceId.1", "i-0000000000000dead");
    ck_assert_int_eq(ec2(&q, "TerminateInstances", &resp, &e), NS_ERR_NOT_FOUND);
    ck_assert_ptr_null(resp);
    ck_assert_str_eq(e.code, "InvalidInstanceID.NotFound");
    ck_assert_ptr_nonnull(strstr(host.last_error_message, "ec2 TerminateInstances failed: InvalidInstanceID.NotFound"));
}
END_TEST

START_TEST(test_throttling_is_retried_with_fresh_signatures)
{
    make_client(0);
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/faults",
                                      "{\"kind\":\"throttle\",\"count\":2,\"action\":\"DescribeAvailabilityZones\"}",
                                      NULL),
                     200);
    int before = request_count("DescribeAvailabilityZones");
    ns_http_response *resp = NULL;
    ck_assert_int_eq(describe_zones(&resp, NULL), NS_OK);
    host.table.http_response_free(resp);
    ck_assert_int_eq(request_count("DescribeAvailabilityZones") - before, 3);
    ck_assert_int_ge(host.slept_ms, 0);
    ck_assert_ptr_nonnull(strstr(host.log, "aws request failed; retrying"));
    ck_assert_ptr_nonnull(strstr(host.log, "code=RequestLimitExceeded"));

    /* More throttling than the three attempts allowed: THROTTLED with a retry hint. */
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/faults",
                                      "{\"kind\":\"throttle\",\"count\":5,\"action\":\"DescribeAvailabilityZones\"}",
                                      NULL),
                     200);
    aws_api_error e;
    ck_assert_int_eq(describe_zones(&resp, &e), NS_ERR_THROTTLED);
    ck_assert_str_eq(e.code, "RequestLimitExceeded");
    ck_assert_ptr_nonnull(strstr(host.last_error_message, "3 attempts, attempts exhausted"));
    ck_assert_int_gt(host.last_retry_after_ms, 0);
}
END_TEST

START_TEST(test_server_errors_and_timeouts_are_retried)
{
    make_client(700);
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/faults",
                                      "{\"kind\":\"error5xx\",\"count\":1,\"status\":500}", NULL),
                     200);
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/faults", "{\"kind\":\"slow\",\"count\":1,\"delay_ms\":1500}",
                                      NULL),
                     200);
    ns_http_response *resp = NULL;
    ck_assert_int_eq(describe_zones(&resp, NULL), NS_OK);
    host.table.http_response_free(resp);
    ck_assert_ptr_nonnull(strstr(host.log, "code=timeout"));
    ck_assert_ptr_nonnull(strstr(host.log, "code=InternalError"));
}
END_TEST

START_TEST(test_bad_secret_is_refused_by_botocore)
{
    fake_env_set(&env, "AWS_SECRET_ACCESS_KEY", "not-the-right-secret");
    make_client(0);
    int before = request_count("signature_failures");
    aws_api_error e;
    ns_http_response *resp = NULL;
    ck_assert_int_eq(describe_zones(&resp, &e), NS_ERR_UNAUTHORIZED);
    ck_assert_str_eq(e.code, "SignatureDoesNotMatch");
    /* The refused signature made the chain refresh once before giving up. */
    ck_assert_int_eq(request_count("signature_failures") - before, 2);
    ck_assert_ptr_null(strstr(host.log, "not-the-right-secret"));

    fake_env_set(&env, "AWS_ACCESS_KEY_ID", "AKIDUNKNOWN");
    fake_env_set(&env, "AWS_SECRET_ACCESS_KEY", "emulator/secret/key+EXAMPLE");
    aws_client_free(client);
    aws_credentials_provider_free(creds);
    make_client(0);
    ck_assert_int_eq(describe_zones(&resp, &e), NS_ERR_UNAUTHORIZED);
    ck_assert_str_eq(e.code, "AuthFailure");
}
END_TEST

START_TEST(test_skewed_clock_is_request_expired)
{
    make_client(0);
    host.clock_ms -= 10 * 60 * 1000;
    aws_api_error e;
    ns_http_response *resp = NULL;
    ck_assert_int_eq(describe_zones(&resp, &e), NS_ERR_UNAUTHORIZED);
    ck_assert_str_eq(e.code, "RequestExpired");
    host.clock_ms += 10 * 60 * 1000;
    ck_assert_int_eq(describe_zones(&resp, &e), NS_OK);
    host.table.http_response_free(resp);
}
END_TEST

START_TEST(test_web_identity_credentials_from_emulated_sts)
{
    char token_file[] = "/tmp/nodesmith-aws-jwt-XXXXXX";
    int fd = mkstemp(token_file);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "eyJhbGciOiJSUzI1NiJ9.emulated.jwt", 33), 33);
    close(fd);
    fake_env_set(&env, "AWS_ACCESS_KEY_ID", "");
    fake_env_set(&env, "AWS_SECRET_ACCESS_KEY", "");
    fake_env_set(&env, "AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/nodesmith");
    fake_env_set(&env, "AWS_WEB_IDENTITY_TOKEN_FILE", token_file);
    make_client(0);
    ns_http_response *resp = NULL;
    int rc = describe_zones(&resp, NULL);
    unlink(token_file);
    ck_assert_int_eq(rc, NS_OK);
    host.table.http_response_free(resp);
    ck_assert_int_eq(aws_credentials_source(creds), AWS_CREDS_WEB_IDENTITY);
    ck_assert_ptr_null(strstr(host.log, "emulated.jwt"));
}
END_TEST

START_TEST(test_imds_credentials_from_emulated_metadata)
{
    fake_env_set(&env, "AWS_ACCESS_KEY_ID", "");
    fake_env_set(&env, "AWS_SECRET_ACCESS_KEY", "");
    fake_env_set(&env, "AWS_EC2_METADATA_DISABLED", "");
    fake_env_set(&env, "AWS_EC2_METADATA_SERVICE_ENDPOINT", emu.url);
    make_client(0);
    ns_http_response *resp = NULL;
    ck_assert_int_eq(describe_zones(&resp, NULL), NS_OK);
    host.table.http_response_free(resp);
    ck_assert_int_eq(aws_credentials_source(creds), AWS_CREDS_IMDS);
    char region[32];
    ck_assert_int_eq(aws_credentials_imds_metadata(creds, "placement/region", region, sizeof(region)), NS_OK);
    ck_assert_str_eq(region, "us-east-1");
}
END_TEST

/* ---- The shared config and credentials files, credential_process, SSO and the container endpoint. */

static char home[64];
static char written[8][512];
static int n_written;

/* Writes HOME-relative `rel` (its directories created), remembered for remove_home. */
static void write_home(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", home, rel);
    for (char *slash = strchr(path + strlen(home) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(path, 0700);
        *slash = '/';
    }
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    chmod(path, 0700);
    snprintf(written[n_written++], sizeof(written[0]), "%s", path);
}

static void make_home(void)
{
    snprintf(home, sizeof(home), "/tmp/nodesmith-aws-home-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(home));
    n_written = 0;
    fake_env_set(&env, "AWS_ACCESS_KEY_ID", NULL);
    fake_env_set(&env, "AWS_SECRET_ACCESS_KEY", NULL);
    fake_env_set(&env, "HOME", home);
}

static void remove_home(void)
{
    for (int i = n_written - 1; i >= 0; i--)
        unlink(written[i]);
    const char *dirs[] = {"/.aws/sso/cache", "/.aws/sso", "/.aws", ""};
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        char path[512];
        snprintf(path, sizeof(path), "%s%s", home, dirs[i]);
        rmdir(path);
    }
}

/* Makes one signed EC2 call with the chain as configured; returns its category. */
static int call_with_chain(void)
{
    aws_credentials_config cc = {&host.table, (ns_host_ctx *)&host, &env_handle, "us-east-1", 0, 0, 0};
    int rc = aws_credentials_provider_new(&cc, &creds);
    if (rc != NS_OK)
        return rc;
    aws_client_config c = {&host.table, (ns_host_ctx *)&host, creds, &env_handle, "us-east-1", 0, 0};
    ck_assert_int_eq(aws_client_new(&c, &client), NS_OK);
    ns_http_response *resp = NULL;
    rc = describe_zones(&resp, NULL);
    host.table.http_response_free(resp);
    return rc;
}

static void reset_chain(void)
{
    aws_client_free(client);
    aws_credentials_provider_free(creds);
    client = NULL;
    creds = NULL;
}

START_TEST(test_shared_credentials_file_profile)
{
    make_home();
    write_home(".aws/credentials", "[default]\naws_access_key_id = AKIDWRONG\naws_secret_access_key = nope\n\n"
                                   "# the emulator's key\n[team]\naws_access_key_id = AKIDEMULATOR\n"
                                   "aws_secret_access_key = emulator/secret/key+EXAMPLE\n");
    write_home(".aws/config", "[profile team]\nregion = us-east-1\ns3 =\n  max_concurrent_requests = 4\n");
    fake_env_set(&env, "AWS_PROFILE", "team");
    int rc = call_with_chain();
    ck_assert_msg(rc == NS_OK, "%s", host.last_error_message);
    ck_assert_int_eq(aws_credentials_source(creds), AWS_CREDS_PROFILE);
    reset_chain();
    /* A profile asked for by name that neither file has is a configuration error naming both files. */
    fake_env_set(&env, "AWS_PROFILE", "missing");
    ck_assert_int_eq(call_with_chain(), NS_ERR_INVALID_CONFIG);
    ck_assert_msg(strstr(host.last_error_message, "profile missing is in neither") &&
                      strstr(host.last_error_message, "/.aws/credentials") &&
                      strstr(host.last_error_message, "/.aws/config"),
                  "%s", host.last_error_message);
    /* A broken line is reported with its file and line. */
    write_home(".aws/config", "[profile team]\nthis line has no equals sign\n");
    fake_env_set(&env, "AWS_PROFILE", "team");
    ck_assert_int_eq(call_with_chain(), NS_ERR_INVALID_CONFIG);
    ck_assert_msg(strstr(host.last_error_message, "/.aws/config line 2: expected \"key = value\""), "%s",
                  host.last_error_message);
    remove_home();
}
END_TEST

START_TEST(test_credential_process)
{
    make_home();
    write_home("bin/creds.sh", "#!/bin/sh\nprintf '{\"Version\": 1, \"AccessKeyId\": \"AKIDEMULATOR\", "
                               "\"SecretAccessKey\": \"emulator/secret/key+EXAMPLE\", "
                               "\"Expiration\": \"2099-01-01T00:00:00Z\"}'\n");
    write_home("bin/fail.sh", "#!/bin/sh\necho 'no session' >&2\nexit 3\n");
    char config[1024];
    snprintf(config, sizeof(config), "[default]\ncredential_process = %s/bin/creds.sh --profile x\n\n"
                                     "[profile broken]\ncredential_process = %s/bin/fail.sh\n", home, home);
    write_home(".aws/config", config);
    int rc = call_with_chain();
    ck_assert_msg(rc == NS_OK, "%s", host.last_error_message);
    ck_assert_int_eq(aws_credentials_source(creds), AWS_CREDS_PROCESS);
    reset_chain();
    fake_env_set(&env, "AWS_PROFILE", "broken");
    ck_assert_int_eq(call_with_chain(), NS_ERR_UNAUTHORIZED);
    ck_assert_msg(strstr(host.last_error_message, "AWS profile broken: credential_process failed (exit status 3)"),
                  "%s", host.last_error_message);
    remove_home();
}
END_TEST

/* A credential_process that never finishes (waiting for a login, say) is killed at its time limit. */
START_TEST(test_credential_process_timeout)
{
    make_home();
    write_home("bin/stuck.sh", "#!/bin/sh\nsleep 30\n");
    char config[512];
    snprintf(config, sizeof(config), "[default]\ncredential_process = %s/bin/stuck.sh\n", home);
    write_home(".aws/config", config);
    aws_credentials_config cc = {&host.table, (ns_host_ctx *)&host, &env_handle, "us-east-1", 0, 0, 400};
    ck_assert_int_eq(aws_credentials_provider_new(&cc, &creds), NS_OK);
    aws_creds got = {0};
    time_t start = time(NULL);
    ck_assert_int_eq(aws_credentials_get(creds, &got), NS_ERR_UNAUTHORIZED);
    ck_assert_int_lt(time(NULL) - start, 10);
    ck_assert_msg(strstr(host.last_error_message, "AWS profile default: credential_process did not finish within "
                                                  "400 ms; it was killed"), "%s", host.last_error_message);
    aws_creds_clear(&got);
    reset_chain();
    remove_home();
}
END_TEST

static void write_sso_cache(const char *session, const char *token, const char *expires_at)
{
    unsigned char digest[SHA_DIGEST_LENGTH];
    SHA1((const unsigned char *)session, strlen(session), digest);
    char rel[128] = ".aws/sso/cache/";
    for (int i = 0; i < SHA_DIGEST_LENGTH; i++)
        snprintf(rel + strlen(rel), 3, "%02x", digest[i]);
    strcat(rel, ".json");
    char body[512];
    snprintf(body, sizeof(body), "{\"startUrl\": \"https://corp.awsapps.com/start\", \"region\": \"us-east-1\", "
                                 "\"accessToken\": \"%s\", \"expiresAt\": \"%s\"}", token, expires_at);
    write_home(rel, body);
}

START_TEST(test_sso_cached_token_and_get_role_credentials)
{
    make_home();
    write_home(".aws/config", "[profile dev]\nsso_session = corp\nsso_account_id = 111122223333\n"
                              "sso_role_name = NodesmithAdmin\n\n[sso-session corp]\n"
                              "sso_start_url = https://corp.awsapps.com/start\nsso_region = us-east-1\n"
                              "sso_registration_scopes = sso:account:access\n");
    write_sso_cache("corp", "emulator-sso-access-token", "2099-01-01T00:00:00Z");
    fake_env_set(&env, "AWS_PROFILE", "dev");
    int asked = request_count("GetRoleCredentials");
    int rc = call_with_chain();
    ck_assert_msg(rc == NS_OK, "%s", host.last_error_message);
    ck_assert_int_eq(aws_credentials_source(creds), AWS_CREDS_SSO);
    ck_assert_int_eq(request_count("GetRoleCredentials"), asked + 1);
    ck_assert_ptr_null(strstr(host.log, "emulator-sso-access-token"));
    reset_chain();
    /* An expired cached token: the message says to log in again, and the portal is not asked. */
    remove_home();
    make_home();
    write_home(".aws/config", "[profile dev]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = us-east-1\n"
                              "sso_account_id = 111122223333\nsso_role_name = NodesmithAdmin\n");
    write_sso_cache("https://corp.awsapps.com/start", "emulator-sso-access-token", "2020-01-01T00:00:00Z");
    ck_assert_int_eq(call_with_chain(), NS_ERR_UNAUTHORIZED);
    ck_assert_msg(strstr(host.last_error_message, "the cached SSO token expired; run `aws sso login --profile dev`"),
                  "%s", host.last_error_message);
    reset_chain();
    /* A token the portal does not know: refused (HTTP 401). */
    remove_home();
    make_home();
    write_home(".aws/config", "[profile dev]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = us-east-1\n"
                              "sso_account_id = 111122223333\nsso_role_name = NodesmithAdmin\n");
    write_sso_cache("https://corp.awsapps.com/start", "stale-token", "2099-01-01T00:00:00Z");
    ck_assert_int_eq(call_with_chain(), NS_ERR_UNAUTHORIZED);
    ck_assert_msg(strstr(host.last_error_message, "SSO GetRoleCredentials for role NodesmithAdmin in account "
                                                  "111122223333 failed with HTTP 401"),
                  "%s", host.last_error_message);
    remove_home();
}
END_TEST

START_TEST(test_container_credentials_pod_identity)
{
    make_home(); /* an empty HOME: no profile */
    char url[128], token_path[512];
    snprintf(url, sizeof(url), "%s/v1/credentials", emu.url);
    write_home("token", "emulator-pod-identity-token\n");
    snprintf(token_path, sizeof(token_path), "%s/token", home);
    fake_env_set(&env, "AWS_CONTAINER_CREDENTIALS_FULL_URI", url);
    fake_env_set(&env, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token_path);
    int rc = call_with_chain();
    ck_assert_msg(rc == NS_OK, "%s", host.last_error_message);
    ck_assert_int_eq(aws_credentials_source(creds), AWS_CREDS_CONTAINER);
    reset_chain();
    /* The token from the variable when there is no file; a wrong one is refused. */
    fake_env_set(&env, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", NULL);
    fake_env_set(&env, "AWS_CONTAINER_AUTHORIZATION_TOKEN", "not-the-token");
    ck_assert_int_eq(call_with_chain(), NS_ERR_UNAUTHORIZED);
    ck_assert_msg(strstr(host.last_error_message, "container credentials endpoint failed with HTTP 401"), "%s",
                  host.last_error_message);
    reset_chain();
    /* Plain HTTP to anything but loopback or the agents is refused before any request. */
    fake_env_set(&env, "AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://10.1.2.3/v1/credentials");
    ck_assert_int_eq(call_with_chain(), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(host.last_error_message, "plain HTTP is allowed only to loopback"));
    fake_env_set(&env, "AWS_CONTAINER_CREDENTIALS_FULL_URI", NULL);
    fake_env_set(&env, "AWS_CONTAINER_AUTHORIZATION_TOKEN", NULL);
    remove_home();
}
END_TEST

START_TEST(test_sqs_json_interruption_messages)
{
    make_client(0);
    ck_assert_int_eq(emulator_control(&emu, "/_emulator/events",
                                      "{\"kind\":\"spot-interruption\",\"instance_id\":\"i-0e1234567890abcde\"}", NULL),
                     200);
    ns_http_response *resp = NULL;
    aws_api_error e;
    ck_assert_int_eq(aws_client_json(client, "sqs", "AmazonSQS.GetQueueUrl", "1.0",
                                     "{\"QueueName\":\"nodesmith-interruptions\"}", &resp, &e),
                     NS_OK);
    ns_json *doc = host.table.json_parse(resp->body, resp->body_len);
    char queue_url[256];
    snprintf(queue_url, sizeof(queue_url), "%s", host.table.json_string(host.table.json_get(doc, "QueueUrl")));
    host.table.json_free(doc);
    host.table.http_response_free(resp);

    char body[512];
    snprintf(body, sizeof(body), "{\"QueueUrl\":\"%s\",\"MaxNumberOfMessages\":10,\"WaitTimeSeconds\":1}", queue_url);
    ck_assert_int_eq(aws_client_json(client, "sqs", "AmazonSQS.ReceiveMessage", "1.0", body, &resp, &e), NS_OK);
    doc = host.table.json_parse(resp->body, resp->body_len);
    const ns_json *messages = host.table.json_get(doc, "Messages");
    ck_assert_uint_eq(host.table.json_size(messages), 1);
    const ns_json *m = host.table.json_at(messages, 0);
    const char *event = host.table.json_string(host.table.json_get(m, "Body"));
    ck_assert_ptr_nonnull(strstr(event, "EC2 Spot Instance Interruption Warning"));
    ck_assert_ptr_nonnull(strstr(event, "i-0e1234567890abcde"));
    snprintf(body, sizeof(body), "{\"QueueUrl\":\"%s\",\"ReceiptHandle\":\"%s\"}", queue_url,
             host.table.json_string(host.table.json_get(m, "ReceiptHandle")));
    host.table.json_free(doc);
    host.table.http_response_free(resp);
    ck_assert_int_eq(aws_client_json(client, "sqs", "AmazonSQS.DeleteMessage", "1.0", body, &resp, &e), NS_OK);
    host.table.http_response_free(resp);

    /* A queue that does not exist: SQS's legacy code from x-amzn-query-error, mapped to NOT_FOUND. */
    ck_assert_int_eq(aws_client_json(client, "sqs", "AmazonSQS.GetQueueUrl", "1.0", "{\"QueueName\":\"missing\"}",
                                     &resp, &e),
                     NS_ERR_NOT_FOUND);
    ck_assert_str_eq(e.code, "AWS.SimpleQueueService.NonExistentQueue");
}
END_TEST

START_TEST(test_ssm_and_pricing_json)
{
    make_client(0);
    ns_http_response *resp = NULL;
    aws_api_error e;
    ck_assert_int_eq(aws_client_json(client, "ssm", "AmazonSSM.GetParameter", "1.1",
                                     "{\"Name\":\"/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/arm64/"
                                     "standard/recommended/image_id\"}",
                                     &resp, &e),
                     NS_OK);
    ck_assert_ptr_nonnull(strstr(resp->body, "ami-0e000000000000a32"));
    host.table.http_response_free(resp);
    ck_assert_int_eq(aws_client_json(client, "ssm", "AmazonSSM.GetParameter", "1.1", "{\"Name\":\"/nope\"}", &resp,
                                     &e),
                     NS_ERR_NOT_FOUND);
    ck_assert_str_eq(e.code, "ParameterNotFound");

    ck_assert_int_eq(aws_client_json(client, "pricing", "AWSPriceListService.GetProducts", "1.1",
                                     "{\"ServiceCode\":\"AmazonEC2\",\"Filters\":[{\"Type\":\"TERM_MATCH\","
                                     "\"Field\":\"instanceType\",\"Value\":\"m5.large\"},{\"Type\":\"TERM_MATCH\","
                                     "\"Field\":\"marketoption\",\"Value\":\"OnDemand\"}]}",
                                     &resp, &e),
                     NS_OK);
    ns_json *doc = host.table.json_parse(resp->body, resp->body_len);
    const ns_json *list = host.table.json_get(doc, "PriceList");
    ck_assert_uint_eq(host.table.json_size(list), 1);
    ck_assert_ptr_nonnull(strstr(host.table.json_string(host.table.json_at(list, 0)), "\"USD\": \"0.0960000000\""));
    host.table.json_free(doc);
    host.table.http_response_free(resp);
}
END_TEST

int main(void)
{
    if (emulator_start(&emu) != 0)
        return EXIT_FAILURE;
    Suite *s = suite_create("aws_emulator");
    TCase *tc = tcase_create("client");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_zones_with_static_keys);
    tcase_add_test(tc, test_instance_type_pagination);
    tcase_add_test(tc, test_offerings_and_spot_prices);
    tcase_add_test(tc, test_fleet_capacity_idempotency_and_lifecycle);
    tcase_add_test(tc, test_throttling_is_retried_with_fresh_signatures);
    tcase_add_test(tc, test_server_errors_and_timeouts_are_retried);
    tcase_add_test(tc, test_bad_secret_is_refused_by_botocore);
    tcase_add_test(tc, test_skewed_clock_is_request_expired);
    tcase_add_test(tc, test_web_identity_credentials_from_emulated_sts);
    tcase_add_test(tc, test_imds_credentials_from_emulated_metadata);
    tcase_add_test(tc, test_sqs_json_interruption_messages);
    tcase_add_test(tc, test_ssm_and_pricing_json);
    tcase_add_test(tc, test_shared_credentials_file_profile);
    tcase_add_test(tc, test_credential_process);
    tcase_add_test(tc, test_credential_process_timeout);
    tcase_add_test(tc, test_sso_cached_token_and_get_role_credentials);
    tcase_add_test(tc, test_container_credentials_pod_identity);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    emulator_stop(&emu);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
