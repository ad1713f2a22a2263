/*
 * Instance life-cycle rules: launch stays within the options it was given, the client token makes launch
 * idempotent, terminate is idempotent, and list/get agree with what was launched and terminated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

#define MAX_PROBES 8
#define MAX_SET 3

static bool same_choice(const ns_launch_result *r, const conf_choice *c)
{
    return strcmp(r->instance_type, c->instance_type) == 0 && strcmp(r->zone, c->zone) == 0 &&
           strcmp(r->capacity_type, c->capacity_type) == 0;
}

static bool result_within(const ns_launch_result *r, const conf_choice *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (same_choice(r, &set[i]))
            return true;
    return false;
}

/* Up to max choices matching zone and capacity type (NULL: any). */
static size_t pick(const conf_choice *all, size_t n, const char *zone, const char *capacity_type, size_t max,
                   conf_choice *out)
{
    size_t k = 0;

    for (size_t i = 0; i < n && k < max; i++) {
        if (zone && strcmp(all[i].zone, zone) != 0)
            continue;
        if (capacity_type && strcmp(all[i].capacity_type, capacity_type) != 0)
            continue;
        out[k++] = all[i];
    }
    return k;
}

static void describe_set(const conf_choice *set, size_t n, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s/%s/%s", i ? ", " : "", set[i].instance_type,
                                 set[i].zone, set[i].capacity_type);
}

/* What launch reported is plausible, and get_instance and list_instances see the same instance. */
static void check_launched(const ns_launch_result *r, const ns_itype_set *set)
{
    const ns_itype *t = ns_itype_set_find(set, r->instance_type);
    ns_instance got;
    conf_ids listed;
    int rc;

    CONF_CHECK("launch-result", t != NULL, "launch returned instance type %s, which list_instance_types does not "
               "report", r->instance_type);
    CONF_CHECK("launch-result", r->launch_time_ms > 0, "instance %s: launch_time_ms is %lld", r->provider_id,
               (long long)r->launch_time_ms);
    CONF_CHECK("launch-result", r->allocatable.cpu_milli >= 0 && r->allocatable.memory_bytes >= 0 &&
                                    r->allocatable.cpu_milli <= t->capacity.cpu_milli &&
                                    r->allocatable.memory_bytes <= t->capacity.memory_bytes,
               "instance %s: allocatable cpu %lldm memory %lld B is not within the type's capacity (%lldm, %lld B)",
               r->provider_id, (long long)r->allocatable.cpu_milli, (long long)r->allocatable.memory_bytes,
               (long long)t->capacity.cpu_milli, (long long)t->capacity.memory_bytes);
    rc = ns_plugin_get_instance(conf_plugin, r->provider_id, &got);
    CONF_CHECK("list-get", rc == NS_OK, "get_instance of just-launched %s failed: %s", r->provider_id,
               conf_last_error());
    CONF_CHECK("list-get", strcmp(got.provider_id, r->provider_id) == 0 &&
                               strcmp(got.instance_type, r->instance_type) == 0 && strcmp(got.zone, r->zone) == 0 &&
                               strcmp(got.capacity_type, r->capacity_type) == 0,
               "launch reported %s as %s/%s/%s; get_instance says %s is %s/%s/%s", r->provider_id, r->instance_type,
               r->zone, r->capacity_type, got.provider_id, got.instance_type, got.zone, got.capacity_type);
    CONF_CHECK("list-get", got.state == NS_INSTANCE_PENDING || got.state == NS_INSTANCE_RUNNING,
               "just-launched %s is in state %d, not pending (1) or running (2)", r->provider_id, (int)got.state);
    conf_list(&listed);
    CONF_CHECK("list-get", conf_ids_count(&listed, r->provider_id) == 1,
               "list_instances shows just-launched %s %zu times (want once)", r->provider_id,
               conf_ids_count(&listed, r->provider_id));
    conf_ids_free(&listed);
}

/* One launch per distinct zone x capacity type, each with that single option: whatever a provider that ignores
 * the request would pick, one of these probes names something else. */
START_TEST(test_launch_single_option)
{
    const conf_choice *all;
    conf_choice probes[MAX_PROBES];
    size_t n, n_probes = 0, launched = 0;

    all = conf_choices(&n);
    for (size_t i = 0; i < n && n_probes < MAX_PROBES; i++) {
        bool seen = false;

        for (size_t j = 0; j < n_probes; j++)
            seen |= strcmp(probes[j].zone, all[i].zone) == 0 &&
                    strcmp(probes[j].capacity_type, all[i].capacity_type) == 0;
        if (!seen)
            probes[n_probes++] = all[i];
    }
    for (size_t i = 0; i < n_probes; i++) {
        char token[NS_NAME_MAX];
        ns_launch_result r;
        int rc;

        conf_token(token, sizeof(token));
        rc = conf_launch(&probes[i], 1, token, &r);
        /* A real cloud may be out of one offering right now; that proves nothing either way. */
        if (rc == NS_ERR_INSUFFICIENT_CAPACITY)
            continue;
        CONF_CHECK("launch", rc == NS_OK, "launching %s in %s as %s: %s", probes[i].instance_type, probes[i].zone,
                   probes[i].capacity_type, conf_last_error());
        CONF_CHECK("launch-within-options", same_choice(&r, &probes[i]),
                   "asked for only %s in %s as %s, got %s (%s) in %s as %s", probes[i].instance_type, probes[i].zone,
                   probes[i].capacity_type, r.provider_id, r.instance_type, r.zone, r.capacity_type);
        check_launched(&r, conf_catalog());
        launched++;
    }
    CONF_CHECK("launch", launched > 0, "none of %zu single-offering launches found capacity", n_probes);
    conf_release_all();
}
END_TEST

/* Two narrow sets of several options: the first zone's offerings, then the last zone's of one capacity type. */
START_TEST(test_launch_option_sets)
{
    const conf_choice *all;
    conf_choice sets[2][MAX_SET];
    size_t n, sizes[2];

    all = conf_choices(&n);
    sizes[0] = pick(all, n, all[0].zone, NULL, MAX_SET, sets[0]);
    sizes[1] = pick(all, n, all[n - 1].zone, all[n - 1].capacity_type, MAX_SET, sets[1]);
    for (size_t s = 0; s < 2; s++) {
        char token[NS_NAME_MAX], wanted[1024];
        ns_launch_result r;
        int rc;

        describe_set(sets[s], sizes[s], wanted, sizeof(wanted));
        conf_token(token, sizeof(token));
        rc = conf_launch(sets[s], sizes[s], token, &r);
        CONF_CHECK("launch", rc == NS_OK, "launching one of {%s}: %s", wanted, conf_last_error());
        CONF_CHECK("launch-within-options", result_within(&r, sets[s], sizes[s]),
                   "asked for one of {%s}, got %s (%s) in %s as %s", wanted, r.provider_id, r.instance_type, r.zone,
                   r.capacity_type);
        check_launched(&r, conf_catalog());
    }
    conf_release_all();
}
END_TEST

static size_t count_new(const conf_ids *before, const conf_ids *after)
{
    size_t n = 0;

    for (size_t i = 0; i < after->n; i++)
        n += !conf_ids_contains(before, after->ids[i]);
    return n;
}

START_TEST(test_idempotent_launch)
{
    size_t n;
    const conf_choice *all;
    conf_ids before, after;
    char token[NS_NAME_MAX];
    ns_launch_result first, second;
    int rc;

    all = conf_choices(&n);
    conf_list(&before);
    conf_token(token, sizeof(token));
    rc = conf_launch(&all[0], 1, token, &first);
    CONF_CHECK("launch", rc == NS_OK, "launching %s: %s", all[0].instance_type, conf_last_error());
    rc = conf_launch(&all[0], 1, token, &second);
    CONF_CHECK("idempotent-launch", rc == NS_OK, "a second launch with client token %s failed: %s", token,
               conf_last_error());
    CONF_CHECK("idempotent-launch", strcmp(first.provider_id, second.provider_id) == 0,
               "two launches with client token %s gave two instances, %s and %s", token, first.provider_id,
               second.provider_id);
    conf_list(&after);
    CONF_CHECK("idempotent-launch", count_new(&before, &after) == 1,
               "after two launches with client token %s, list_instances shows %zu new instances (want 1)", token,
               count_new(&before, &after));
    conf_ids_free(&before);
    conf_ids_free(&after);
    conf_release_all();
}
END_TEST

START_TEST(test_terminate_idempotent)
{
    ns_launch_result r;
    bool gone = true;
    int rc;

    conf_launch_one(&r);
    rc = conf_terminate(r.provider_id, &gone);
    CONF_CHECK("terminate-idempotent", rc == NS_OK, "terminating running %s failed: %s", r.provider_id,
               conf_last_error());
    CONF_CHECK("terminate-idempotent", !gone, "terminating running %s reported already_gone", r.provider_id);
    gone = false;
    rc = conf_terminate(r.provider_id, &gone);
    CONF_CHECK("terminate-idempotent", rc == NS_OK, "terminating %s a second time failed (it must succeed with "
               "already_gone): %s", r.provider_id, conf_last_error());
    CONF_CHECK("terminate-idempotent", gone, "terminating %s a second time did not report already_gone",
               r.provider_id);
    rc = conf_terminate(r.provider_id, NULL);
    CONF_CHECK("terminate-idempotent", rc == NS_OK, "terminating %s with already_gone NULL failed: %s",
               r.provider_id, conf_last_error());
    conf_release_all();
}
END_TEST

START_TEST(test_terminated_disappear)
{
    ns_launch_result kept, gone;
    ns_instance got;
    conf_ids listed;
    int rc;

    conf_launch_one(&kept);
    conf_launch_one(&gone);
    rc = conf_terminate(gone.provider_id, NULL);
    CONF_CHECK("terminate-idempotent", rc == NS_OK, "terminating %s failed: %s", gone.provider_id, conf_last_error());
    rc = ns_plugin_get_instance(conf_plugin, gone.provider_id, &got);
    CONF_CHECK("terminated-disappear", rc == NS_ERR_NOT_FOUND,
               "get_instance of terminated %s returned %d (want NS_ERR_NOT_FOUND): %s", gone.provider_id, rc,
               rc == NS_OK ? "it still answers" : conf_last_error());
    conf_list(&listed);
    CONF_CHECK("terminated-disappear", !conf_ids_contains(&listed, gone.provider_id),
               "list_instances still shows terminated %s", gone.provider_id);
    CONF_CHECK("list-get", conf_ids_contains(&listed, kept.provider_id),
               "list_instances lost running %s after another instance was terminated", kept.provider_id);
    conf_ids_free(&listed);
    rc = ns_plugin_get_instance(conf_plugin, kept.provider_id, &got);
    CONF_CHECK("list-get", rc == NS_OK, "get_instance of running %s failed: %s", kept.provider_id, conf_last_error());
    conf_release_all();
}
END_TEST

Suite *conf_suite_launch(void)
{
    Suite *s = suite_create("launch");
    TCase *tc = tcase_create("lifecycle");

    tcase_add_checked_fixture(tc, conf_setup, conf_teardown);
    tcase_set_timeout(tc, conf_cfg.timeout_s);
    tcase_add_test(tc, test_launch_single_option);
    tcase_add_test(tc, test_launch_option_sets);
    tcase_add_test(tc, test_idempotent_launch);
    tcase_add_test(tc, test_terminate_idempotent);
    tcase_add_test(tc, test_terminated_disappear);
    suite_add_tcase(s, tc);
    return s;
}
