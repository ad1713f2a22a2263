/*
 * Unhealthy instances in aws.so's poll_events from EC2 DescribeInstanceStatus, against the emulator (whose answers
 * botocore's DescribeInstanceStatus parser reads, test_emulator_botocore.py). Expected behaviour from Karpenter's AWS
 * provider (pkg/providers/instancestatus, pkg/controllers/interruption/instancestatus_controller.go and utils.go):
 * a failed instance or system check counts once impaired for 120 s and means forceful termination
 * (NS_EVENT_INSTANCE_UNHEALTHY, no deadline); a scheduled event counts at once and means cordon and drain
 * (NS_EVENT_SCHEDULED_MAINTENANCE); EC2 is asked at most once a minute; only the cluster's instances are reported; an
 * (instance, category) is reported once while it lasts and again after it cleared.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider_fixture.h"

#define MAX_SEEN 16

typedef struct seen {
    ns_event events[MAX_SEEN];
    int n;
    int refuse; /* refuse this many calls first */
} seen;

static int collect(void *ctx, const ns_event *ev)
{
    seen *s = ctx;
    if (s->refuse > 0) {
        s->refuse--;
        return 5;
    }
    ck_assert_int_lt(s->n, MAX_SEEN);
    s->events[s->n++] = *ev;
    return 0;
}

/* The events of this poll about one instance. */
static int about(const seen *s, const char *provider_id, ns_event_kind kind, const ns_event **first)
{
    int n = 0;
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->events[i].provider_id, provider_id) == 0 && s->events[i].kind == kind && n++ == 0 && first)
            *first = &s->events[i];
    return n;
}

static void launch(char *provider_id, size_t len)
{
    cJSON *spec;
    ns_nodeclass nc = pf_nodeclass(&spec, "EC2NodeClass", "default", PF_SPEC_AL2023);
    ns_launch_option options[] = {{sizeof(ns_launch_option), "m5.large", "us-east-1b", NS_CAPACITY_ON_DEMAND, 0.1}};
    char token[64];
    pf_token(token, sizeof(token), "health");
    ns_launch_request req = pf_request(&nc, options, 1, token);
    ns_launch_result r = {.struct_size = sizeof(r)};
    ck_assert_msg(pf_provider->launch(pf_state, &req, &r) == NS_OK, "launch: %s", pf_host.last_error_message);
    snprintf(provider_id, len, "%s", r.provider_id);
    cJSON_Delete(spec);
}

/* What DescribeInstanceStatus reports of an instance: `checks` is the JSON members after instance_id. */
static void status(const char *provider_id, const char *checks)
{
    char body[512];
    snprintf(body, sizeof(body), "{\"instance_id\":\"%s\"%s%s}", strrchr(provider_id, '/') + 1, checks[0] ? "," : "",
             checks);
    pf_control("/_emulator/instance_status", body);
}

static void impaired(const char *provider_id, const char *check, int64_t seconds_ago)
{
    char body[160];
    snprintf(body, sizeof(body), "\"%s\":\"impaired\",\"impaired_since\":%lld", check,
             (long long)(pf_host.clock_ms / 1000 - seconds_ago));
    status(provider_id, body);
}

static void terminate(const char *provider_id)
{
    ck_assert_int_eq(pf_provider->terminate(pf_state, provider_id, NULL), NS_OK);
}

static int status_calls(void)
{
    cJSON *st = pf_control_get("/_emulator/state");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "requests"),
                                                      "DescribeInstanceStatus");
    int count = cJSON_IsNumber(n) ? n->valueint : 0;
    cJSON_Delete(st);
    return count;
}

/* Moves the host clock and the emulator's (it refuses requests signed more than 5 minutes off its own). */
static void advance(int64_t ms)
{
    static int64_t total;
    total += ms;
    pf_host.clock_ms += ms;
    char body[64];
    snprintf(body, sizeof(body), "{\"offset_s\":%lld}", (long long)(total / 1000));
    pf_control("/_emulator/clock", body);
}

static void poll(seen *s)
{
    s->n = 0;
    ck_assert_msg(pf_provider->poll_events(pf_state, collect, s) == NS_OK, "poll_events: %s",
                  pf_host.last_error_message);
}

START_TEST(test_impaired_checks_threshold_ownership_and_cadence)
{
    char young[NS_PROVIDER_ID_MAX], old[NS_PROVIDER_ID_MAX], retiring[NS_PROVIDER_ID_MAX], foreign[NS_PROVIDER_ID_MAX];
    pf_control("/_emulator/clusters", "{\"name\":\"someone-else\"}");
    pf_option("cluster_name", "someone-else");
    pf_reinit();
    launch(foreign, sizeof(foreign));
    pf_option("cluster_name", "demo");
    pf_reinit();
    launch(young, sizeof(young));
    launch(old, sizeof(old));
    launch(retiring, sizeof(retiring));
    seen s = {0};
    poll(&s); /* nothing impaired yet */
    ck_assert_int_eq(s.n, 0);
    impaired(young, "systemStatus", 30);
    impaired(old, "instanceStatus", 300);
    impaired(foreign, "instanceStatus", 300);
    char body[160];
    snprintf(body, sizeof(body), "\"events\":[{\"code\":\"instance-retirement\",\"not_before\":%lld}]",
             (long long)(pf_host.clock_ms / 1000 + 3600));
    status(retiring, body);

    advance(60000);
    int calls = status_calls();
    poll(&s);
    ck_assert_int_eq(status_calls() - calls, 3); /* Karpenter's three filter sets */
    const ns_event *ev = NULL;
    ck_assert_int_eq(about(&s, old, NS_EVENT_INSTANCE_UNHEALTHY, &ev), 1);
    ck_assert_int_eq(ev->deadline_ms, 0);
    ck_assert_int_eq(ev->time_ms, (pf_host.clock_ms - 60000) / 1000 * 1000 - 300000);
    ck_assert_ptr_nonnull(strstr(ev->detail, "instance_status"));
    ck_assert_int_eq(about(&s, retiring, NS_EVENT_SCHEDULED_MAINTENANCE, &ev), 1);
    ck_assert_int_eq(ev->deadline_ms, (pf_host.clock_ms - 60000) / 1000 * 1000 + 3600000);
    ck_assert_int_eq(about(&s, young, NS_EVENT_INSTANCE_UNHEALTHY, NULL), 0); /* 90 s */
    ck_assert_int_eq(about(&s, foreign, NS_EVENT_INSTANCE_UNHEALTHY, NULL), 0);
    ck_assert_int_eq(s.n, 2);

    /* within the minute EC2 is not asked again, and nothing is delivered twice */
    advance(30000);
    calls = status_calls();
    poll(&s);
    ck_assert_int_eq(status_calls(), calls);
    ck_assert_int_eq(s.n, 0);

    /* a minute after the last poll: the young impairment is 150 s old */
    advance(30000);
    poll(&s);
    ck_assert_int_eq(status_calls() - calls, 3);
    ck_assert_int_eq(about(&s, young, NS_EVENT_INSTANCE_UNHEALTHY, &ev), 1);
    ck_assert_ptr_nonnull(strstr(ev->detail, "system_status"));
    ck_assert_int_eq(s.n, 1);

    /* healthy again, then impaired again: a new impairment, reported again */
    status(old, "");
    advance(60000);
    poll(&s);
    ck_assert_int_eq(s.n, 0);
    impaired(old, "instanceStatus", 200);
    advance(60000);
    poll(&s);
    ck_assert_int_eq(about(&s, old, NS_EVENT_INSTANCE_UNHEALTHY, NULL), 1);
    ck_assert_int_eq(s.n, 1);
    ck_assert_ptr_nonnull(strstr(pf_host.log, "INFO aws detected an unhealthy instance owned by the cluster"));
    const char *const all[] = {young, old, retiring};
    for (size_t i = 0; i < 3; i++)
        terminate(all[i]);
    pf_option("cluster_name", "someone-else");
    pf_reinit();
    terminate(foreign);
}
END_TEST

/* The core refusing an unhealthy instance's event gets it again at the next poll, without asking EC2 again. */
START_TEST(test_refused_event_comes_back)
{
    char id[NS_PROVIDER_ID_MAX];
    launch(id, sizeof(id));
    seen s = {0};
    poll(&s);
    impaired(id, "instanceStatus", 600);
    advance(60000);
    s.refuse = 1;
    ck_assert_int_eq(pf_provider->poll_events(pf_state, collect, &s), 5);
    int calls = status_calls();
    poll(&s);
    ck_assert_int_eq(status_calls(), calls);
    ck_assert_int_eq(about(&s, id, NS_EVENT_INSTANCE_UNHEALTHY, NULL), 1);
    poll(&s);
    ck_assert_int_eq(about(&s, id, NS_EVENT_INSTANCE_UNHEALTHY, NULL), 0);
    terminate(id);
}
END_TEST

/* Without ec2:DescribeInstanceStatus the poll says so at ERROR and the interruption queue still delivers, as
 * Karpenter's controller logs the missing permission and carries on. Without an interruption queue EC2 is still
 * asked: Karpenter's instance status controller does not need one. */
START_TEST(test_unauthorized_is_logged_and_queue_still_works)
{
    char id[NS_PROVIDER_ID_MAX];
    launch(id, sizeof(id));
    pf_control("/_emulator/faults", "{\"kind\":\"error\",\"code\":\"UnauthorizedOperation\",\"status\":403,"
                                    "\"count\":1,\"action\":\"DescribeInstanceStatus\"}");
    char body[160];
    snprintf(body, sizeof(body), "{\"kind\":\"rebalance\",\"instance_id\":\"%s\"}", strrchr(id, '/') + 1);
    pf_control("/_emulator/events", body);
    seen s = {0};
    for (int i = 0; i < 3 && s.n == 0; i++)
        poll(&s);
    ck_assert_int_eq(about(&s, id, NS_EVENT_REBALANCE_RECOMMENDATION, NULL), 1);
    ck_assert_ptr_nonnull(strstr(pf_host.log, "ERROR aws ec2:DescribeInstanceStatus is not allowed"));
    ck_assert_ptr_nonnull(strstr(pf_host.log, "code=UnauthorizedOperation"));

    pf_option("interruption_queue", "");
    pf_reinit();
    impaired(id, "systemStatus", 600);
    poll(&s);
    ck_assert_int_eq(about(&s, id, NS_EVENT_INSTANCE_UNHEALTHY, NULL), 1);
    terminate(id);
}
END_TEST

int main(void)
{
    if (pf_start() != 0)
        return EXIT_FAILURE;
    Suite *s = suite_create("aws_provider_health");
    TCase *tc = tcase_create("health");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, pf_setup, pf_teardown);
    tcase_add_test(tc, test_impaired_checks_threshold_ownership_and_cadence);
    tcase_add_test(tc, test_refused_event_comes_back);
    tcase_add_test(tc, test_unauthorized_is_logged_and_queue_still_works);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    pf_stop();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
