/*
 * Karpenter's default topology spread (SCHEDULER_CONFIG podTopologySpread.defaultConstraints), each case from
 * kubernetes-sigs/karpenter 65fc69436: the selector deduction of defaultconstraints_test.go
 * ("DefaultTopologySpreadInjector", read back through sched_default_selector as Karpenter reads back the injected
 * constraint), and the scheduling outcomes of topology_test.go ("DefaultConstraints", through ns_sched_run).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "sched/sched_internal.h"
#include "sched_test_util.h"

/* "k=v,k2=v2" into l ("" leaves it empty). */
static void labels_from(ns_labels *l, const char *text)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", text);
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        ck_assert_ptr_nonnull(eq);
        *eq = '\0';
        ck_assert_int_eq(ns_labels_set(l, kv, eq + 1), NS_OK);
    }
}

/* A Service in namespace ns; selector NULL: none (selects nothing), "": empty (selects every pod). */
static void add_service(ns_cluster *c, const char *ns, const char *name, const char *selector)
{
    ns_service *svc = ns_service_new();
    ck_assert_ptr_nonnull(svc);
    svc->meta.name = strdup(name);
    svc->meta.namespace_ = strdup(ns);
    if (selector) {
        svc->has_selector = true;
        labels_from(&svc->selector, selector);
    }
    ck_assert_int_eq(ns_cluster_add_service(c, svc), NS_OK);
}

/* A ReplicaSet, StatefulSet or ReplicationController in "default" whose selector has matchLabels match_labels. */
static ns_workload *add_controller(ns_cluster *c, const char *kind, const char *name, const char *match_labels)
{
    ns_workload *w = calloc(1, sizeof(*w));
    ck_assert_ptr_nonnull(w);
    w->kind = kind;
    w->meta.name = strdup(name);
    w->meta.namespace_ = strdup("default");
    w->selector.present = true;
    labels_from(&w->selector.match_labels, match_labels);
    ck_assert_int_eq(ns_cluster_add_pod_controller(c, w), NS_OK);
    return w;
}

/* A small pending pod in "default" with labels, controlled by owner_kind/owner_name (NULL: no owner). */
static ns_pod *owned_pod(ns_cluster *c, const char *name, const char *labels, const char *owner_kind,
                         const char *owner_name)
{
    ns_pod *p = fx_pod(c, name, 100, 128 * FX_MI, labels);
    if (owner_kind) {
        p->meta.owner_kind = strdup(owner_kind);
        p->meta.owner_name = strdup(owner_name);
    }
    return p;
}

/* The deduced selector of pod `name`; false when the pod would get no default. */
static bool deduce(const ns_cluster *c, const char *name, ns_label_selector *out)
{
    long i = fx_pod_index(c, name);
    ck_assert_int_ge(i, 0);
    bool found = false;
    ck_assert_int_eq(sched_default_selector(c, c->pods[i], out, &found), NS_OK);
    return found;
}

static bool has_in(const ns_label_selector *s, const char *key, const char *value)
{
    for (size_t i = 0; i < s->n_exprs; i++)
        if (strcmp(s->exprs[i].key, key) == 0 && s->exprs[i].op == NS_OP_IN && s->exprs[i].n_values == 1 &&
            strcmp(s->exprs[i].values[0], value) == 0)
            return true;
    return false;
}

static const char *ml(const ns_label_selector *s, const char *key)
{
    return ns_labels_get(&s->match_labels, key);
}

/* ---- owner selectors ---- */

START_TEST(replicaset_selector_not_pod_labels)
{
    ns_cluster *c = ns_cluster_new();
    add_controller(c, "ReplicaSet", "rs", "app=web,pod-template-hash=abc123");
    owned_pod(c, "p", "app=web,pod-template-hash=abc123,extra=ignored", "ReplicaSet", "rs");
    ns_label_selector s;
    ck_assert(deduce(c, "p", &s));
    ck_assert_uint_eq(s.match_labels.n, 0);
    ck_assert_uint_eq(s.n_exprs, 2);
    ck_assert(has_in(&s, "app", "web") && has_in(&s, "pod-template-hash", "abc123"));
    ns_label_selector_free(&s);
    ns_cluster_free(c);
}
END_TEST

START_TEST(statefulset_selector_ignores_volatile_pod_labels)
{
    ns_cluster *c = ns_cluster_new();
    add_controller(c, "StatefulSet", "db", "app=db");
    owned_pod(c, "db-0",
              "app=db,controller-revision-hash=db-6f8c,statefulset.kubernetes.io/pod-name=db-0,"
              "apps.kubernetes.io/pod-index=0",
              "StatefulSet", "db");
    ns_label_selector s;
    ck_assert(deduce(c, "db-0", &s));
    ck_assert_uint_eq(s.n_exprs, 1);
    ck_assert(has_in(&s, "app", "db"));
    ns_label_selector_free(&s);
    ns_cluster_free(c);
}
END_TEST

START_TEST(replicaset_match_expressions_verbatim)
{
    ns_cluster *c = ns_cluster_new();
    ns_workload *rs = add_controller(c, "ReplicaSet", "rs", "");
    char *other = "other";
    ns_selector_req notin = {.key = "app", .op = NS_OP_NOT_IN, .values = &other, .n_values = 1};
    rs->selector.exprs = calloc(1, sizeof(*rs->selector.exprs));
    ck_assert_int_eq(ns_selector_req_copy(&notin, &rs->selector.exprs[0]), NS_OK);
    rs->selector.n_exprs = 1;
    owned_pod(c, "p", "app=web", "ReplicaSet", "rs");
    ns_label_selector s;
    ck_assert(deduce(c, "p", &s));
    ck_assert_uint_eq(s.n_exprs, 1);
    ck_assert_int_eq(s.exprs[0].op, NS_OP_NOT_IN);
    ck_assert_str_eq(s.exprs[0].key, "app");
    ck_assert_str_eq(s.exprs[0].values[0], "other");
    ns_label_selector_free(&s);
    ns_cluster_free(c);
}
END_TEST

START_TEST(replicationcontroller_selector_is_match_labels)
{
    ns_cluster *c = ns_cluster_new();
    add_controller(c, "ReplicationController", "legacy", "app=legacy");
    owned_pod(c, "p", "app=legacy", "ReplicationController", "legacy");
    ns_label_selector s;
    ck_assert(deduce(c, "p", &s));
    ck_assert_uint_eq(s.match_labels.n, 1);
    ck_assert_str_eq(ml(&s, "app"), "legacy");
    ck_assert_uint_eq(s.n_exprs, 0);
    ns_label_selector_free(&s);
    ns_cluster_free(c);
}
END_TEST

START_TEST(unsupported_or_missing_owner_gives_nothing)
{
    ns_cluster *c = ns_cluster_new();
    owned_pod(c, "job-pod", "app=batch", "Job", "test-job");
    owned_pod(c, "orphan", "app=web", "ReplicaSet", "does-not-exist");
    ns_label_selector s;
    ck_assert(!deduce(c, "job-pod", &s));
    ns_label_selector_free(&s);
    ck_assert(!deduce(c, "orphan", &s));
    ns_label_selector_free(&s);
    ns_cluster_free(c);
}
END_TEST

/* ---- service selectors ---- */

START_TEST(matching_services_merge_as_match_labels)
{
    ns_cluster *c = ns_cluster_new();
    add_service(c, "default", "web", "app=web");
    add_service(c, "default", "frontend", "tier=frontend");
    owned_pod(c, "one", "app=web,extra=ignored", NULL, NULL);
    owned_pod(c, "both", "app=web,tier=frontend", NULL, NULL);
    ns_label_selector s;
    ck_assert(deduce(c, "one", &s));
    ck_assert_uint_eq(s.match_labels.n, 1);
    ck_assert_str_eq(ml(&s, "app"), "web");
    ck_assert_uint_eq(s.n_exprs, 0);
    ns_label_selector_free(&s);
    ck_assert(deduce(c, "both", &s));
    ck_assert_uint_eq(s.match_labels.n, 2);
    ck_assert_str_eq(ml(&s, "tier"), "frontend");
    ns_label_selector_free(&s);
    ns_cluster_free(c);
}
END_TEST

START_TEST(services_that_contribute_nothing)
{
    ns_cluster *c = ns_cluster_new();
    add_service(c, "default", "other", "app=other"); /* does not match */
    add_service(c, "default", "headless", NULL);     /* nil selector: matches nothing */
    add_service(c, "default", "everything", "");     /* empty selector: matches, adds no label */
    add_service(c, "elsewhere", "web", "app=web");   /* another namespace */
    owned_pod(c, "p", "app=web", NULL, NULL);
    ns_label_selector s;
    ck_assert(!deduce(c, "p", &s));
    ns_label_selector_free(&s);
    ns_cluster_free(c);
}
END_TEST

START_TEST(service_and_owner_combine)
{
    ns_cluster *c = ns_cluster_new();
    add_controller(c, "ReplicaSet", "rs", "app=web,pod-template-hash=abc123");
    add_service(c, "default", "frontend", "tier=frontend");
    owned_pod(c, "p", "app=web,pod-template-hash=abc123,tier=frontend", "ReplicaSet", "rs");
    ns_label_selector s;
    ck_assert(deduce(c, "p", &s));
    ck_assert_uint_eq(s.match_labels.n, 1);
    ck_assert_str_eq(ml(&s, "tier"), "frontend");
    ck_assert_uint_eq(s.n_exprs, 2);
    ck_assert(has_in(&s, "app", "web") && has_in(&s, "pod-template-hash", "abc123"));
    ns_label_selector_free(&s);
    ns_cluster_free(c);
}
END_TEST

START_TEST(conflicting_service_and_owner)
{
    ns_cluster *c = ns_cluster_new();
    add_controller(c, "ReplicationController", "legacy", "app=legacy");
    add_controller(c, "ReplicaSet", "rs", "app=other");
    add_service(c, "default", "web", "app=web");
    owned_pod(c, "rc-pod", "app=web", "ReplicationController", "legacy");
    owned_pod(c, "rs-pod", "app=web", "ReplicaSet", "rs");
    ns_label_selector s;
    /* labels.Merge: the ReplicationController's value wins. */
    ck_assert(deduce(c, "rc-pod", &s));
    ck_assert_str_eq(ml(&s, "app"), "legacy");
    ck_assert_uint_eq(s.n_exprs, 0);
    ns_label_selector_free(&s);
    /* selector.Add: the ReplicaSet's requirement is ANDed on, and the selector matches nothing. */
    ck_assert(deduce(c, "rs-pod", &s));
    ck_assert_str_eq(ml(&s, "app"), "web");
    ck_assert(has_in(&s, "app", "other"));
    ns_labels web = {0}, other = {0};
    labels_from(&web, "app=web");
    labels_from(&other, "app=other");
    ck_assert(!ns_label_selector_matches(&s, &web));
    ck_assert(!ns_label_selector_matches(&s, &other));
    ns_labels_free(&web);
    ns_labels_free(&other);
    ns_label_selector_free(&s);
    ns_cluster_free(c);
}
END_TEST

/* Pods of one owner with different labels, and pods with the same labels in different namespaces, do not share a
 * selector (Karpenter's "selector caching" cases). */
START_TEST(selector_per_pod_inputs)
{
    ns_cluster *c = ns_cluster_new();
    add_controller(c, "ReplicaSet", "rs", "app=web");
    add_service(c, "default", "frontend", "tier=frontend");
    add_service(c, "default", "web", "app=web");
    owned_pod(c, "frontend", "app=web,tier=frontend", "ReplicaSet", "rs");
    owned_pod(c, "plain", "app=web", "ReplicaSet", "rs");
    ns_pod *other = owned_pod(c, "other", "app=web", NULL, NULL);
    free(other->meta.namespace_);
    other->meta.namespace_ = strdup("elsewhere");
    ns_label_selector s;
    ck_assert(deduce(c, "frontend", &s));
    ck_assert_str_eq(ml(&s, "tier"), "frontend");
    ns_label_selector_free(&s);
    ck_assert(deduce(c, "plain", &s));
    ck_assert_ptr_null(ml(&s, "tier"));
    ns_label_selector_free(&s);
    ck_assert(!deduce(c, "other", &s));
    ns_label_selector_free(&s);
    ns_cluster_free(c);
}
END_TEST

/* ---- scheduling with the defaults ---- */

static const ns_topology_spread ZONE_DEFAULT = {.max_skew = 1, .topology_key = "topology.kubernetes.io/zone",
                                                .when_unsatisfiable = NS_DO_NOT_SCHEDULE,
                                                .node_taints_policy = NS_POLICY_IGNORE};
static const ns_topology_spread HOST_DEFAULT = {.max_skew = 1, .topology_key = "kubernetes.io/hostname",
                                                .when_unsatisfiable = NS_DO_NOT_SCHEDULE,
                                                .node_taints_policy = NS_POLICY_IGNORE};

static void run_defaults(sched_env *e, const ns_topology_spread *defaults, size_t n)
{
    const ns_itype_set *all[8];
    for (size_t i = 0; i < e->c->n_nodepools && i < 8; i++)
        all[i] = &e->set;
    ns_sched_input in = {.cluster = e->c, .pool_types = all, .default_spread = defaults, .n_default_spread = n};
    ck_assert_msg(ns_sched_run(&in, &e->r) == NS_OK, "%s", ns_error_message());
}

/* Pods named PREFIX-i placed per zone z-a, z-b, z-c (on claims or nodes), and how many were placed. */
static size_t zone_counts(const sched_env *e, const char *prefix, int counts[3])
{
    size_t placed = 0;
    memset(counts, 0, 3 * sizeof(int));
    for (size_t i = 0; i < e->c->n_pods; i++) {
        const ns_pod *p = e->c->pods[i];
        if (strncmp(p->meta.name, prefix, strlen(prefix)) != 0)
            continue;
        const char *zone = NULL;
        if (p->node_name) {
            zone = ns_labels_get(&ns_cluster_find_node(e->c, p->node_name)->meta.labels, "topology.kubernetes.io/zone");
        } else {
            size_t at = e->r.placement[i];
            if (at == NS_SCHED_UNPLACED)
                continue;
            zone = at < e->c->n_nodes
                       ? ns_labels_get(&e->c->nodes[at]->meta.labels, "topology.kubernetes.io/zone")
                       : fx_claim_zone(&e->r.claims[at - e->c->n_nodes]);
        }
        ck_assert_ptr_nonnull(zone);
        counts[zone[2] - 'a']++;
        placed++;
    }
    return placed;
}

/* Counts sorted, to compare as Gomega's ConsistOf does. */
static void ck_counts(int counts[3], int a, int b, int c)
{
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (counts[j] < counts[i]) {
                int t = counts[i];
                counts[i] = counts[j];
                counts[j] = t;
            }
    ck_assert_msg(counts[0] == a && counts[1] == b && counts[2] == c, "counts %d %d %d, want %d %d %d", counts[0],
                  counts[1], counts[2], a, b, c);
}

/* The test's ReplicaSet (selector test=test) and n pods of it named PREFIX-i. */
static void rs_pods(sched_env *e, const char *rs, const char *labels, const char *prefix, int n)
{
    if (!ns_cluster_find_pod_controller(e->c, "ReplicaSet", "default", rs))
        add_controller(e->c, "ReplicaSet", rs, labels);
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%s-%d", prefix, i);
        owned_pod(e->c, name, labels, "ReplicaSet", rs);
    }
}

/* A scheduling environment with one pool "default" of `requirements`, and n pods p-i of ReplicaSet rs (test=test). */
static void rs_env(sched_env *e, const char *requirements, int n)
{
    sched_env_init(e, true);
    fx_pool(e->c, "default", 0, requirements);
    rs_pods(e, "rs", "test=test", "p", n);
}

START_TEST(default_zonal_spread)
{
    sched_env e;
    rs_env(&e, "", 4);
    run_defaults(&e, &ZONE_DEFAULT, 1);
    int counts[3];
    ck_assert_uint_eq(zone_counts(&e, "p-", counts), 4);
    ck_counts(counts, 1, 1, 2);
    sched_env_free(&e);
}
END_TEST

START_TEST(default_hostname_spread)
{
    sched_env e;
    rs_env(&e, "", 3);
    run_defaults(&e, &HOST_DEFAULT, 1);
    ck_assert_uint_eq(e.r.n_claims, 3);
    for (size_t i = 0; i < e.r.n_claims; i++)
        ck_assert_uint_eq(e.r.claims[i].n_pods, 1);
    sched_env_free(&e);
}
END_TEST

/* The default would force one pod per node; the pod's own maxSkew 3 lets all three share one. */
START_TEST(own_constraints_win)
{
    sched_env e;
    rs_env(&e, "", 3);
    for (size_t i = 0; i < e.c->n_pods; i++)
        fx_pod_spread(e.c->pods[i], "kubernetes.io/hostname", 3, false, "test=test");
    run_defaults(&e, &HOST_DEFAULT, 1);
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_uint_eq(e.r.claims[0].n_pods, 3);
    sched_env_free(&e);
}
END_TEST

/* No defaults, or a pod nothing selects: the pods share one node as before. */
START_TEST(no_default_applied)
{
    sched_env e;
    rs_env(&e, "", 3);
    run_defaults(&e, NULL, 0);
    ck_assert_uint_eq(e.r.n_claims, 1);
    sched_env_free(&e);

    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p-%d", i);
        owned_pod(e.c, name, "test=test", NULL, NULL);
    }
    run_defaults(&e, &HOST_DEFAULT, 1);
    ck_assert_uint_eq(e.r.n_claims, 1);
    sched_env_free(&e);
}
END_TEST

START_TEST(min_domains_carried)
{
    sched_env e;
    rs_env(&e, "topology.kubernetes.io/zone In z-a|z-b", 3);
    ns_topology_spread d = ZONE_DEFAULT;
    d.min_domains = 3;
    run_defaults(&e, &d, 1);
    int counts[3];
    ck_assert_uint_eq(zone_counts(&e, "p-", counts), 2);
    ck_counts(counts, 0, 1, 1);
    sched_env_free(&e);
}
END_TEST

/* One zone and minDomains 3: DoNotSchedule places one pod; ScheduleAnyway is relaxed and places all three. */
START_TEST(single_zone_min_domains)
{
    for (int anyway = 0; anyway < 2; anyway++) {
        sched_env e;
        rs_env(&e, "topology.kubernetes.io/zone In z-a", 3);
        ns_topology_spread d = ZONE_DEFAULT;
        d.min_domains = 3;
        d.when_unsatisfiable = anyway ? NS_SCHEDULE_ANYWAY : NS_DO_NOT_SCHEDULE;
        run_defaults(&e, &d, 1);
        int counts[3];
        ck_assert_uint_eq(zone_counts(&e, "p-", counts), (anyway ? 3u : 1u));
        sched_env_free(&e);
    }
}
END_TEST

/* Two pods of the ReplicaSet already run in z-a: the deduced selector counts them, so both new pods go to z-b. */
START_TEST(counts_existing_pods)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "topology.kubernetes.io/zone In z-a|z-b");
    fx_node(e.c, "existing", 4000, 8 * FX_GI, 20, "topology.kubernetes.io/zone=z-a");
    rs_pods(&e, "rs", "test=test", "old", 2);
    for (size_t i = 0; i < e.c->n_pods; i++)
        ck_assert_ptr_nonnull(e.c->pods[i]->node_name = strdup("existing"));
    rs_pods(&e, "rs", "test=test", "new", 2);
    run_defaults(&e, &ZONE_DEFAULT, 1);
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), "new-%d", i);
        const ns_sched_claim *cl = fx_claim_of(e.c, &e.r, name);
        ck_assert_ptr_nonnull(cl);
        ck_assert_str_eq(fx_claim_zone(cl), "z-b");
    }
    sched_env_free(&e);
}
END_TEST

/* Two ReplicaSets, and two revisions (pod-template-hash) of one Deployment: each spreads 1/1/1 on its own. */
START_TEST(each_workload_and_revision_spreads_alone)
{
    static const char *const sets[2][2][2] = {{{"rs-a", "test=test"}, {"rs-b", "test=other"}},
                                              {{"web-old", "test=test,pod-template-hash=old"},
                                               {"web-new", "test=test,pod-template-hash=new"}}};
    for (int k = 0; k < 2; k++) {
        sched_env e;
        sched_env_init(&e, true);
        fx_pool(e.c, "default", 0, "");
        rs_pods(&e, sets[k][0][0], sets[k][0][1], "a", 3);
        rs_pods(&e, sets[k][1][0], sets[k][1][1], "b", 3);
        run_defaults(&e, &ZONE_DEFAULT, 1);
        int counts[3];
        ck_assert_uint_eq(zone_counts(&e, "a-", counts), 3);
        ck_counts(counts, 1, 1, 1);
        ck_assert_uint_eq(zone_counts(&e, "b-", counts), 3);
        ck_counts(counts, 1, 1, 1);
        sched_env_free(&e);
    }
}
END_TEST

/* A Job's pods get no owner selector, but a Service that selects them still gives one. */
START_TEST(service_selects_job_pods)
{
    sched_env e;
    sched_env_init(&e, true);
    fx_pool(e.c, "default", 0, "");
    add_service(e.c, "default", "svc", "test=test");
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p-%d", i);
        owned_pod(e.c, name, "test=test", "Job", "test-job");
    }
    run_defaults(&e, &ZONE_DEFAULT, 1);
    int counts[3];
    ck_assert_uint_eq(zone_counts(&e, "p-", counts), 4);
    ck_counts(counts, 1, 1, 2);
    sched_env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-default-spread");
    TCase *sel = tcase_create("selector");
    tcase_add_test(sel, replicaset_selector_not_pod_labels);
    tcase_add_test(sel, statefulset_selector_ignores_volatile_pod_labels);
    tcase_add_test(sel, replicaset_match_expressions_verbatim);
    tcase_add_test(sel, replicationcontroller_selector_is_match_labels);
    tcase_add_test(sel, unsupported_or_missing_owner_gives_nothing);
    tcase_add_test(sel, matching_services_merge_as_match_labels);
    tcase_add_test(sel, services_that_contribute_nothing);
    tcase_add_test(sel, service_and_owner_combine);
    tcase_add_test(sel, conflicting_service_and_owner);
    tcase_add_test(sel, selector_per_pod_inputs);
    suite_add_tcase(s, sel);
    TCase *run = tcase_create("scheduling");
    tcase_add_test(run, default_zonal_spread);
    tcase_add_test(run, default_hostname_spread);
    tcase_add_test(run, own_constraints_win);
    tcase_add_test(run, no_default_applied);
    tcase_add_test(run, min_domains_carried);
    tcase_add_test(run, single_zone_min_domains);
    tcase_add_test(run, counts_existing_pods);
    tcase_add_test(run, each_workload_and_revision_spreads_alone);
    tcase_add_test(run, service_selects_job_pods);
    suite_add_tcase(s, run);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
