/*
 * Error rules, driven through the provider's test hook: an injected fault comes back in its documented category,
 * with a message, and for insufficient capacity with the unavailable offerings named in the core's error record.
 * A provider without test hooks gets these tests reported as skipped (or failed under --require-hooks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "errors/ns_error.h"

static bool names_offering(const ns_error_record *e, const conf_choice *c)
{
    for (size_t i = 0; i < e->n_unavailable; i++)
        if (strcmp(e->unavailable[i].instance_type, c->instance_type) == 0 &&
            strcmp(e->unavailable[i].zone, c->zone) == 0 &&
            strcmp(e->unavailable[i].capacity_type, c->capacity_type) == 0)
            return true;
    return false;
}

static void clear_faults(void)
{
    ns_fault clear = {.struct_size = sizeof(clear), .kind = NS_FAULT_CLEAR};
    int rc = ns_plugin_test_inject_fault(conf_plugin, &clear);

    CONF_CHECK("test-hooks", rc == NS_OK, "clearing injected faults failed: %s", conf_last_error());
}

static void launch_fresh(const conf_choice *choices, size_t n, ns_launch_result *r, int *rc)
{
    char token[NS_NAME_MAX];

    conf_token(token, sizeof(token));
    *rc = conf_launch(choices, n, token, r);
}

START_TEST(test_insufficient_capacity)
{
    const conf_choice *all;
    conf_choice pair[2];
    ns_launch_result r;
    size_t n;
    int rc;

    all = conf_choices(&n);
    ns_fault f = {.struct_size = sizeof(f),
                  .kind = NS_FAULT_INSUFFICIENT_CAPACITY,
                  .instance_type = all[0].instance_type,
                  .zone = all[0].zone,
                  .capacity_type = all[0].capacity_type};
    if (conf_inject_or_skip("faults: insufficient capacity", &f)) {
        launch_fresh(&all[0], 1, &r, &rc);
        CONF_CHECK("error-insufficient-capacity", rc == NS_ERR_INSUFFICIENT_CAPACITY,
                   "launching only %s/%s/%s, which has no capacity, returned %d: %s", all[0].instance_type,
                   all[0].zone, all[0].capacity_type, rc, rc == NS_OK ? r.provider_id : conf_last_error());
        CONF_CHECK("error-insufficient-capacity", names_offering(ns_error_last(), &all[0]),
                   "the insufficient-capacity error names %zu unavailable offerings, not %s/%s/%s "
                   "(host->error_unavailable_offering)",
                   ns_error_last()->n_unavailable, all[0].instance_type, all[0].zone, all[0].capacity_type);
        CONF_CHECK("error-message", !ns_plugin_error_defaulted(), "the insufficient-capacity error has no message "
                   "of the provider's (host->error): %s", conf_last_error());
        if (n > 1) {
            pair[0] = all[0];
            pair[1] = all[1];
            launch_fresh(pair, 2, &r, &rc);
            CONF_CHECK("capacity-fallback", rc == NS_OK, "launching %s/%s/%s or %s/%s/%s, where only the first has no "
                       "capacity, failed: %s", pair[0].instance_type, pair[0].zone, pair[0].capacity_type,
                       pair[1].instance_type, pair[1].zone, pair[1].capacity_type, conf_last_error());
            CONF_CHECK("capacity-fallback", strcmp(r.instance_type, pair[1].instance_type) == 0 &&
                                                strcmp(r.zone, pair[1].zone) == 0 &&
                                                strcmp(r.capacity_type, pair[1].capacity_type) == 0,
                       "with %s/%s/%s out of capacity the launch reported %s/%s/%s, not the other option %s/%s/%s",
                       pair[0].instance_type, pair[0].zone, pair[0].capacity_type, r.instance_type, r.zone,
                       r.capacity_type, pair[1].instance_type, pair[1].zone, pair[1].capacity_type);
        }
        clear_faults();
        launch_fresh(&all[0], 1, &r, &rc);
        CONF_CHECK("test-hooks", rc == NS_OK, "after clearing faults, launching %s/%s/%s still fails: %s",
                   all[0].instance_type, all[0].zone, all[0].capacity_type, conf_last_error());
    }
    conf_release_all();
}
END_TEST

START_TEST(test_throttled)
{
    size_t n;
    const conf_choice *all;
    conf_ids before, after;
    char token[NS_NAME_MAX];
    ns_launch_result r;
    int rc;
    ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_THROTTLE, .method = "launch", .count = 1};

    all = conf_choices(&n);
    conf_list(&before);
    if (conf_inject_or_skip("faults: throttled", &f)) {
        conf_token(token, sizeof(token));
        rc = conf_launch(&all[0], 1, token, &r);
        CONF_CHECK("error-throttled", rc == NS_ERR_THROTTLED, "a launch under an injected throttle returned %d: %s",
                   rc, rc == NS_OK ? r.provider_id : conf_last_error());
        CONF_CHECK("error-message", !ns_plugin_error_defaulted(), "the throttled error has no message of the "
                   "provider's (host->error): %s", conf_last_error());
        rc = conf_launch(&all[0], 1, token, &r);
        CONF_CHECK("error-throttled", rc == NS_OK, "the retry after a one-call throttle failed: %s",
                   conf_last_error());
        conf_list(&after);
        size_t fresh = 0;
        for (size_t i = 0; i < after.n; i++)
            fresh += !conf_ids_contains(&before, after.ids[i]);
        CONF_CHECK("idempotent-launch", fresh == 1, "a throttled launch and its retry left %zu instances (want 1)",
                   fresh);
        conf_ids_free(&after);
    }
    conf_ids_free(&before);
    conf_release_all();
}
END_TEST

static int on_type(void *ctx, const ns_instance_type *t)
{
    return 0;
}

static int on_instance(void *ctx, const ns_instance *i)
{
    return 0;
}

static int on_event(void *ctx, const ns_event *e)
{
    return 0;
}

/* Calls one method by its ns_provider field name. */
static int call(const char *method, const conf_choice *choice, const char *provider_id)
{
    ns_launch_result r;
    ns_instance inst;
    int rc;

    if (strcmp(method, "list_instance_types") == 0)
        return ns_plugin_list_instance_types(conf_plugin, &conf_cfg.nodeclass, on_type, NULL);
    if (strcmp(method, "list_instances") == 0)
        return ns_plugin_list_instances(conf_plugin, on_instance, NULL);
    if (strcmp(method, "get_instance") == 0)
        return ns_plugin_get_instance(conf_plugin, provider_id, &inst);
    if (strcmp(method, "poll_events") == 0)
        return ns_plugin_poll_events(conf_plugin, on_event, NULL);
    if (strcmp(method, "launch") == 0) {
        launch_fresh(choice, 1, &r, &rc);
        return rc;
    }
    return conf_terminate(provider_id, NULL);
}

/* terminate comes last: the call that checks its fault was used up really terminates the instance. */
static const char *const methods[] = {"list_instance_types", "list_instances", "get_instance",
                                      "poll_events",         "launch",         "terminate"};
static const ns_err categories[] = {NS_ERR_NOT_FOUND, NS_ERR_UNAUTHORIZED, NS_ERR_INVALID_CONFIG, NS_ERR_UNSUPPORTED,
                                    NS_ERR_INTERNAL};

START_TEST(test_fail_categories)
{
    size_t n;
    const conf_choice *all;
    ns_launch_result victim;
    int rc;

    all = conf_choices(&n);
    launch_fresh(&all[0], 1, &victim, &rc);
    CONF_CHECK("launch", rc == NS_OK, "launching %s: %s", all[0].instance_type, conf_last_error());
    for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++) {
        for (size_t c = 0; c < sizeof(categories) / sizeof(categories[0]); c++) {
            ns_fault f = {.struct_size = sizeof(f), .kind = NS_FAULT_FAIL, .method = methods[m], .count = 1,
                          .error = categories[c]};

            if (!conf_inject_or_skip("faults: failures in each category", &f))
                goto out;
            rc = call(methods[m], &all[0], victim.provider_id);
            CONF_CHECK("error-category", rc == (int)categories[c],
                       "%s under an injected '%s' failure returned %d (%s): %s", methods[m],
                       ns_err_name(categories[c]), rc, ns_err_name(rc), conf_last_error());
            CONF_CHECK("error-message", !ns_plugin_error_defaulted(),
                       "%s failed with '%s' without a message of the provider's (host->error): %s", methods[m],
                       ns_err_name(rc), conf_last_error());
            rc = call(methods[m], &all[0], victim.provider_id);
            CONF_CHECK("error-category", rc == NS_OK, "%s still fails after its one-call fault was used: %s",
                       methods[m], conf_last_error());
        }
    }
    ns_fault every = {.struct_size = sizeof(every), .kind = NS_FAULT_FAIL, .count = 1, .error = NS_ERR_UNAUTHORIZED};
    if (conf_inject_or_skip("faults: a failure for every method", &every)) {
        rc = call("list_instances", NULL, NULL);
        CONF_CHECK("error-category", rc == NS_ERR_UNAUTHORIZED,
                   "list_instances under an injected failure for every method returned %d (%s)", rc, ns_err_name(rc));
    }
out:
    conf_release_all();
}
END_TEST

Suite *conf_suite_faults(void)
{
    Suite *s = suite_create("faults");
    TCase *tc = tcase_create("errors");

    tcase_add_checked_fixture(tc, conf_setup, conf_teardown);
    tcase_set_timeout(tc, conf_cfg.timeout_s);
    tcase_add_test(tc, test_insufficient_capacity);
    tcase_add_test(tc, test_throttled);
    tcase_add_test(tc, test_fail_categories);
    suite_add_tcase(s, tc);
    return s;
}
