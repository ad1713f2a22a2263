/* The controller's settings: Karpenter's defaults, environment variables, flags over variables, and bad values
 * refused with the setting's name, its variable and flag, the value and why. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/commitment_report.h"
#include "controller/controller_settings.h"
#include "controller/metrics.h"
#include "controller/kube_objects.h"
#include "errors/ns_error.h"

static const char *const *fake_env;

static const char *fake_getenv(const char *name)
{
    for (const char *const *e = fake_env; e && *e; e += 2)
        if (strcmp(e[0], name) == 0)
            return e[1];
    return NULL;
}

static int from_env(ns_controller_settings *s, const char *const *env)
{
    fake_env = env;
    ck_assert_int_eq(ns_controller_settings_default(s), 0);
    return ns_controller_settings_from_env(s, fake_getenv);
}

START_TEST(defaults_are_karpenters)
{
    ns_controller_settings s;
    ck_assert_int_eq(from_env(&s, NULL), 0);
    ck_assert_int_eq(s.batch_max_ms, 10000);
    ck_assert_int_eq(s.batch_idle_ms, 1000);
    ck_assert(s.kube_qps == 200);
    ck_assert_int_eq(s.kube_burst, 300);
    ck_assert_int_eq(s.metrics_port, 8080);
    ck_assert_int_eq(s.health_port, 8081);
    ck_assert(s.leader_election);
    ck_assert_str_eq(s.leader_election_name, "karpenter-leader-election");
    ck_assert_ptr_null(s.leader_election_namespace);
    ck_assert_int_eq(s.log_level, NS_LOG_INFO);
    ck_assert(!s.gates.node_repair && s.gates.reserved_capacity && !s.gates.spot_to_spot);
    ck_assert_int_eq(s.min_values_policy, NS_SCHED_MIN_VALUES_STRICT);
    ck_assert_int_eq(s.preference_policy, NS_SCHED_PREFERENCES_RESPECT);
    ck_assert_int_eq(ns_controller_settings_check(&s), 0);
    ns_controller_settings_free(&s);
}
END_TEST

START_TEST(environment_then_flags)
{
    static const char *const env[] = {"BATCH_MAX_DURATION", "30s", "BATCH_IDLE_DURATION", "500ms",
                                      "FEATURE_GATES", "SpotToSpotConsolidation=true,NodeRepair=true",
                                      "LOG_LEVEL", "debug", "KUBE_CLIENT_QPS", "50.5", "KUBE_CLIENT_BURST", "75",
                                      "METRICS_PORT", "9090", "HEALTH_PROBE_PORT", "9091",
                                      "LEADER_ELECTION_NAME", "my-lease", "LEADER_ELECTION_NAMESPACE", "kube-system",
                                      "DISABLE_LEADER_ELECTION", "true", "MIN_VALUES_POLICY", "BestEffort",
                                      "PREFERENCE_POLICY", "Ignore", NULL};
    ns_controller_settings s;
    ck_assert_int_eq(from_env(&s, env), 0);
    ck_assert_int_eq(s.batch_max_ms, 30000);
    ck_assert_int_eq(s.batch_idle_ms, 500);
    ck_assert(s.gates.spot_to_spot && s.gates.node_repair && s.gates.reserved_capacity);
    ck_assert_int_eq(s.log_level, NS_LOG_DEBUG);
    ck_assert(s.kube_qps == 50.5);
    ck_assert_int_eq(s.kube_burst, 75);
    ck_assert_int_eq(s.metrics_port, 9090);
    ck_assert_int_eq(s.health_port, 9091);
    ck_assert_str_eq(s.leader_election_name, "my-lease");
    ck_assert_str_eq(s.leader_election_namespace, "kube-system");
    ck_assert(!s.leader_election);
    ck_assert_int_eq(s.min_values_policy, NS_SCHED_MIN_VALUES_BEST_EFFORT);
    ck_assert_int_eq(s.preference_policy, NS_SCHED_PREFERENCES_IGNORE);
    /* a flag overrides its variable */
    ck_assert_int_eq(ns_controller_settings_flag(&s, "min-values-policy", "Strict"), 0);
    ck_assert_int_eq(s.min_values_policy, NS_SCHED_MIN_VALUES_STRICT);
    ck_assert_int_eq(ns_controller_settings_flag(&s, "preference-policy", "Respect"), 0);
    ck_assert_int_eq(s.preference_policy, NS_SCHED_PREFERENCES_RESPECT);
    ck_assert_int_eq(ns_controller_settings_flag(&s, "batch-max-duration", "1m"), 0);
    ck_assert_int_eq(s.batch_max_ms, 60000);
    ck_assert_int_eq(ns_controller_settings_flag(&s, "disable-leader-election", "false"), 0);
    ck_assert(s.leader_election);
    ck_assert_int_eq(ns_controller_settings_flag(&s, "disable-leader-election", NULL), 0);
    ck_assert(!s.leader_election);
    ck_assert_int_eq(ns_controller_settings_flag(&s, "feature-gates", "SpotToSpotConsolidation=false"), 0);
    ck_assert(!s.gates.spot_to_spot && s.gates.node_repair);
    ck_assert_int_eq(ns_controller_settings_flag(&s, "no-such-flag", "x"), 1);
    ns_controller_settings_free(&s);
}
END_TEST

/* SCHEDULER_CONFIG holds the document itself, as Karpenter's does; the flag replaces it; a bad one names where it
 * came from, the line and the field. */
START_TEST(scheduler_config_document)
{
    static const char *const env[] = {"SCHEDULER_CONFIG",
                                      "podTopologySpread:\n  defaultConstraints:\n"
                                      "    - {maxSkew: 1, topologyKey: kubernetes.io/hostname, "
                                      "whenUnsatisfiable: DoNotSchedule}\n",
                                      NULL};
    ns_controller_settings s;
    ck_assert_int_eq(ns_controller_settings_default(&s), 0);
    ck_assert_uint_eq(s.sched_config.n_default_spread, 0);
    ns_controller_settings_free(&s);
    ck_assert_int_eq(from_env(&s, env), 0);
    ck_assert_uint_eq(s.sched_config.n_default_spread, 1);
    ck_assert_str_eq(s.sched_config.default_spread[0].topology_key, "kubernetes.io/hostname");
    ck_assert_int_eq(s.sched_config.default_spread[0].when_unsatisfiable, NS_DO_NOT_SCHEDULE);
    ck_assert_int_eq(ns_controller_settings_flag(&s, "scheduler-config",
                                                 "{\"podTopologySpread\": {\"defaultConstraints\": ["
                                                 "{\"maxSkew\": 2, \"topologyKey\": \"topology.kubernetes.io/zone\", "
                                                 "\"whenUnsatisfiable\": \"ScheduleAnyway\"}, "
                                                 "{\"maxSkew\": 1, \"topologyKey\": \"kubernetes.io/hostname\", "
                                                 "\"whenUnsatisfiable\": \"ScheduleAnyway\"}]}}"),
                     0);
    ck_assert_uint_eq(s.sched_config.n_default_spread, 2);
    ck_assert_int_eq(s.sched_config.default_spread[0].max_skew, 2);
    ck_assert_int_eq(s.sched_config.default_spread[1].when_unsatisfiable, NS_SCHEDULE_ANYWAY);
    ck_assert_int_eq(ns_controller_settings_flag(&s, "scheduler-config",
                                                 "podTopologySpread:\n  defaultConstraints:\n"
                                                 "    - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Sometimes}\n"),
                     NS_ERR_INVALID_CONFIG);
    const char *m = ns_error_message();
    ck_assert_msg(strstr(m, "setting SCHEDULER_CONFIG (--scheduler-config)") && strstr(m, "--scheduler-config:3:") &&
                      strstr(m, "podTopologySpread.defaultConstraints[0]") && strstr(m, "Sometimes"),
                  "%s", m);
    ck_assert_uint_eq(s.sched_config.n_default_spread, 2); /* a refused value leaves the setting as it was */
    ns_controller_settings_free(&s);
    static const char *const bad[] = {"SCHEDULER_CONFIG", "podTopologySpread: {defaultConstraints: "
                                      "[{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, "
                                      "matchLabelKeys: [app]}]}", NULL};
    ck_assert_int_eq(from_env(&s, bad), NS_ERR_INVALID_CONFIG);
    m = ns_error_message();
    ck_assert_msg(strstr(m, "SCHEDULER_CONFIG:1:") &&
                      strstr(m, "podTopologySpread.defaultConstraints[0].matchLabelKeys: must not be set"), "%s", m);
    ns_controller_settings_free(&s);
}
END_TEST

/* Each bad value: the message names the setting, its flag, the value and why. */
static void refused(const char *var, const char *value, const char *why)
{
    const char *const env[] = {var, value, NULL};
    ns_controller_settings s;
    ck_assert_int_eq(from_env(&s, env), NS_ERR_INVALID_CONFIG);
    const char *m = ns_error_message();
    ck_assert_msg(strstr(m, var) && strstr(m, "(--") && strstr(m, why), "%s=%s: %s", var, value, m);
    if (*value)
        ck_assert_msg(strstr(m, value), "%s", m);
    ns_controller_settings_free(&s);
}

START_TEST(bad_values_name_the_setting)
{
    refused("BATCH_MAX_DURATION", "ten", "not a positive duration");
    refused("BATCH_IDLE_DURATION", "-1s", "not a positive duration");
    refused("BATCH_IDLE_DURATION", "0s", "not a positive duration");
    refused("FEATURE_GATES", "Drift=true", "unknown feature gate \"Drift\"");
    refused("FEATURE_GATES", "NodeRepair", "not Name=true or Name=false");
    refused("FEATURE_GATES", "NodeRepair=yes", "is not true or false");
    refused("LOG_LEVEL", "verbose", "not debug, info, warn or error");
    refused("KUBE_CLIENT_QPS", "0", "not a positive number");
    refused("KUBE_CLIENT_QPS", "fast", "not a positive number");
    refused("KUBE_CLIENT_BURST", "1.5", "not a whole number");
    refused("METRICS_PORT", "65536", "not a port number");
    refused("HEALTH_PROBE_PORT", "http", "not a port number");
    refused("DISABLE_LEADER_ELECTION", "maybe", "not true or false");
    refused("MIN_VALUES_POLICY", "Relaxed", "it is Strict or BestEffort");
    refused("PREFERENCE_POLICY", "ignore", "it is Respect or Ignore");
    ns_controller_settings s;
    ck_assert_int_eq(ns_controller_settings_default(&s), 0);
    ck_assert_int_eq(ns_controller_settings_flag(&s, "metrics-port", "8081"), 0);
    ck_assert_int_eq(ns_controller_settings_check(&s), NS_ERR_INVALID_CONFIG);
    ck_assert_msg(strstr(ns_error_message(), "METRICS_PORT") && strstr(ns_error_message(), "HEALTH_PROBE_PORT"),
                  "%s", ns_error_message());
    ck_assert_int_eq(ns_controller_settings_flag(&s, "leader-election-name", ""), NS_ERR_INVALID_CONFIG);
    ck_assert_msg(strstr(ns_error_message(), "--leader-election-name") && strstr(ns_error_message(), "empty"), "%s",
                  ns_error_message());
    ns_controller_settings_free(&s);
}
END_TEST

/* A NodeClaim as the controller creates it: Karpenter's shape. */
/* COMMITMENTS_FILE is read at once: a good file fills the settings, an empty variable is unset, and a bad file stops
 * start-up naming the setting, then the file, line, commitment, field and why. */
START_TEST(commitments_file)
{
    char good[] = "/tmp/ns-commit-good-XXXXXX", bad[] = "/tmp/ns-commit-bad-XXXXXX";
    int fg = mkstemp(good), fb = mkstemp(bad);
    ck_assert(fg >= 0 && fb >= 0);
    FILE *f = fdopen(fg, "w");
    fputs("commitments:\n- name: ri\n  kind: instances\n  amount: 4\n  discount: 0.4\n", f);
    fclose(f);
    f = fdopen(fb, "w");
    fputs("commitments:\n- name: sp\n  kind: spend\n  amount: 0\n  discount: 0.4\n", f);
    fclose(f);
    ns_controller_settings s;
    const char *env[] = {"COMMITMENTS_FILE", good, NULL};
    ck_assert_int_eq(from_env(&s, env), 0);
    ck_assert_uint_eq(s.commitments.n, 1);
    ck_assert_str_eq(s.commitments.items[0].name, "ri");
    ns_controller_settings_free(&s);
    const char *empty[] = {"COMMITMENTS_FILE", "", NULL};
    ck_assert_int_eq(from_env(&s, empty), 0);
    ck_assert_uint_eq(s.commitments.n, 0);
    ck_assert_int_eq(ns_controller_settings_flag(&s, "commitments-file", bad), NS_ERR_INVALID_CONFIG);
    char want[256];
    snprintf(want, sizeof(want), "setting COMMITMENTS_FILE (--commitments-file): %s:4: commitment sp: amount: must be "
                                 "above 0, not 0", bad);
    ck_assert_str_eq(ns_error_message(), want);
    ns_controller_settings_free(&s);
    unlink(good);
    unlink(bad);
}
END_TEST

/* The report is NodePool-independent: one set of gauges per commitment, labelled by name and kind. */
START_TEST(commitment_gauges)
{
    static const char yaml[] = "commitments:\n- name: sp\n  kind: spend\n  amount: 0.08\n  discount: 0.5\n";
    ns_commitments c;
    ck_assert_int_eq(ns_commitments_parse("c.yaml", yaml, strlen(yaml), &c), NS_OK);
    ns_commit_ledger *l;
    ck_assert_int_eq(ns_commit_ledger_new(&c, &l), NS_OK);
    /* two on-demand nodes of $0.10/h: the first uses $0.05 of the plan, the second the $0.03 left (60% of its
     * discounted $0.05) and pays 40% of $0.10 = $0.04/h on-demand */
    ns_commit_subject n = {.instance_type = "t", .zone = "z", .capacity_type = "on-demand", .price_per_hour = 0.10};
    ns_commit_ledger_consume(l, &n);
    ns_commit_ledger_consume(l, &n);
    ns_metrics *m = ns_metrics_new();
    ns_commitment_report *r;
    ck_assert_int_eq(ns_commitment_report_new(m, &r), NS_OK);
    ck_assert_int_eq(ns_commitment_report_update(r, l), NS_OK);
    char *text = ns_metrics_render(m);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "nodesmith_commitment_utilisation{commitment=\"sp\",kind=\"spend\"} 1"), "%s", text);
    ck_assert_msg(strstr(text, "nodesmith_commitment_nodes{commitment=\"sp\",kind=\"spend\"} 2\n"), "%s", text);
    ck_assert_msg(strstr(text, "nodesmith_commitment_spilled_per_hour{commitment=\"sp\",kind=\"spend\"} 0.04"), "%s",
                  text);
    free(text);
    ns_commitment_report_free(r);
    ns_metrics_free(m);
    ns_commit_ledger_free(l);
    ns_commitments_free(&c);
}
END_TEST

START_TEST(nodeclaim_json_as_karpenter_writes_it)
{
    ns_nodeclaim *c = ns_nodeclaim_new();
    ck_assert_ptr_nonnull(c);
    c->meta.name = strdup("default-abcde");
    ck_assert_int_eq(ns_labels_set(&c->meta.labels, "karpenter.sh/nodepool", "default"), 0);
    ck_assert_int_eq(ns_meta_add_finalizer(&c->meta, "karpenter.sh/termination"), 0);
    c->nodeclass_ref.group = strdup("nodesmith.io");
    c->nodeclass_ref.kind = strdup("SimNodeClass");
    c->nodeclass_ref.name = strdup("default");
    ck_assert_int_eq(ns_res_set(&c->requests, "cpu", 1500), 0);
    c->expire_after_ms = 720LL * 3600 * 1000;
    ck_assert_int_eq(ns_conditions_set(&c->conditions, "Launched", "True", "Launched", NULL, 1000), 0);
    ck_assert_int_eq(ns_conditions_set(&c->conditions, "Registered", "Unknown", "NodeNotFound", NULL, 1000), 0);
    ns_kube_owner pool = {.api_version = "karpenter.sh/v1", .kind = "NodePool", .name = "default", .uid = "uid-1"};
    cJSON *o = ns_kube_nodeclaim_json(c, &pool);
    char *text = cJSON_PrintUnformatted(o);
    ck_assert_msg(strstr(text, "\"generateName\":\"default-\"") &&
                  strstr(text, "\"ownerReferences\":[{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\","
                               "\"name\":\"default\",\"uid\":\"uid-1\",\"blockOwnerDeletion\":true}]") &&
                  strstr(text, "\"finalizers\":[\"karpenter.sh/termination\"]") &&
                  strstr(text, "\"resources\":{\"requests\":{\"cpu\":\"1500m\"}}") &&
                  strstr(text, "\"expireAfter\":\"720h\"") && !strstr(text, "terminationGracePeriod") &&
                  !strstr(text, "\"name\":\"default-abcde\""), "%s", text);
    free(text);
    cJSON_Delete(o);
    /* a pool converted from a v1alpha5 Provisioner: the claim belongs to the Provisioner */
    pool = (ns_kube_owner){.api_version = "karpenter.sh/v1alpha5", .kind = "Provisioner", .name = "default",
                           .uid = "uid-2"};
    o = ns_kube_nodeclaim_json(c, &pool);
    text = cJSON_PrintUnformatted(o);
    ck_assert_msg(strstr(text, "\"ownerReferences\":[{\"apiVersion\":\"karpenter.sh/v1alpha5\",\"kind\":\"Provisioner\","
                               "\"name\":\"default\",\"uid\":\"uid-2\",\"blockOwnerDeletion\":true}]"), "%s", text);
    free(text);
    cJSON_Delete(o);
    o = ns_kube_nodeclaim_status_json(c);
    text = cJSON_PrintUnformatted(o);
    /* the root Ready follows the first condition that is not True */
    ck_assert_msg(strstr(text, "{\"type\":\"Ready\",\"status\":\"Unknown\",\"reason\":\"NodeNotFound\""), "%s", text);
    /* a claim the API server has not numbered yet: no observedGeneration (omitempty) */
    ck_assert_msg(!strstr(text, "observedGeneration"), "%s", text);
    free(text);
    cJSON_Delete(o);
    /* each condition, the root Ready too, carries the claim's generation, as operatorpkg's SetCondition writes it */
    c->meta.generation = 3;
    o = ns_kube_nodeclaim_status_json(c);
    text = cJSON_PrintUnformatted(o);
    const cJSON *k, *st = cJSON_GetObjectItemCaseSensitive(o, "status");
    const cJSON *conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
    ck_assert_int_eq(cJSON_GetArraySize(conds), 3);
    cJSON_ArrayForEach(k, conds) {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(k, "observedGeneration");
        ck_assert_msg(cJSON_IsNumber(g) && g->valuedouble == 3, "%s", text);
    }
    free(text);
    cJSON_Delete(o);
    ck_assert_int_eq(ns_conditions_set(&c->conditions, "Registered", "True", "Registered", NULL, 2000), 0);
    ck_assert_int_eq(ns_conditions_set(&c->conditions, "Initialized", "True", "Initialized", NULL, 3000), 0);
    o = ns_kube_nodeclaim_status_json(c);
    text = cJSON_PrintUnformatted(o);
    ck_assert_msg(strstr(text, "{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Ready\""), "%s", text);
    free(text);
    cJSON_Delete(o);
    ns_nodeclaim_free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("controller-settings");
    TCase *tc = tcase_create("settings");
    tcase_add_test(tc, defaults_are_karpenters);
    tcase_add_test(tc, environment_then_flags);
    tcase_add_test(tc, bad_values_name_the_setting);
    tcase_add_test(tc, scheduler_config_document);
    tcase_add_test(tc, nodeclaim_json_as_karpenter_writes_it);
    tcase_add_test(tc, commitments_file);
    tcase_add_test(tc, commitment_gauges);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
