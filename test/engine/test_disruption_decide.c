/* Consolidation decisions and disruption cost as pure functions: price filter, spot-to-spot, minValues,
 * filterOutSameType, the multi-node binary search, candidate ordering. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disruption/disruption_consolidate.h"
#include "engine/disruption_cost.h"
#include "errors/ns_error.h"
#include "model/labels.h"

#define MAX_TYPES 40

static ns_itype types[MAX_TYPES];
static char type_names[MAX_TYPES][32];
static ns_label type_labels[MAX_TYPES][1];
static char family[MAX_TYPES][16];

static void setup(void)
{
    memset(types, 0, sizeof(types));
    for (int i = 0; i < MAX_TYPES; i++) {
        snprintf(type_names[i], sizeof(type_names[i]), "t%02d", i);
        snprintf(family[i], sizeof(family[i]), "f%d", i % 2); /* two families */
        type_labels[i][0].key = "karpenter.k8s.aws/instance-family";
        type_labels[i][0].value = family[i];
        types[i].name = type_names[i];
        types[i].labels = type_labels[i];
        types[i].n_labels = 1;
    }
}

/* A scheduler claim whose options are (type index, capacity type, price), cheapest first as the scheduler lists. */
typedef struct opt {
    int type;
    const char *ct;
    double price;
} opt;

static ns_sched_claim make_claim(const opt *o, size_t n, const char *capacity_types)
{
    ns_sched_claim c;
    memset(&c, 0, sizeof(c));
    c.options = calloc(n ? n : 1, sizeof(*c.options));
    ck_assert_ptr_nonnull(c.options);
    for (size_t i = 0; i < n; i++) {
        c.options[i].type = &types[o[i].type];
        c.options[i].zone = "zone-a";
        c.options[i].capacity_type = o[i].ct;
        c.options[i].price_per_hour = o[i].price;
    }
    c.n_options = n;
    if (capacity_types) {
        const char *v[2];
        size_t nv = 0;
        char buf[64];
        snprintf(buf, sizeof(buf), "%s", capacity_types);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t && nv < 2; t = strtok_r(NULL, ",", &save))
            v[nv++] = t;
        ck_assert_int_eq(ns_requirements_add_op(&c.requirements, NS_LABEL_CAPACITY_TYPE, NS_OP_IN, v, nv, 0), 0);
    }
    return c;
}

static void free_claim(ns_sched_claim *c)
{
    free(c->options);
    ns_requirements_free(&c->requirements);
}

static ns_consol_result decide(const ns_consol_candidate *cands, size_t n, const ns_sched_claim *claim, bool s2s)
{
    ns_consol_sim sim = {.all_scheduled = true, .n_new_claims = claim ? 1 : 0, .claim = claim};
    ns_consol_result r;
    ck_assert_int_eq(ns_consol_compute(cands, n, &sim, s2s, &r), 0);
    return r;
}

START_TEST(test_delete_when_pods_fit_elsewhere)
{
    ns_consol_candidate c = {"a", "t05", "on-demand", 0.2};
    ns_consol_result r = decide(&c, 1, NULL, false);
    ck_assert_int_eq(r.decision, NS_CONSOL_DELETE);
    ck_assert_uint_eq(r.n_options, 0);
    ns_consol_result_free(&r);

    ns_consol_sim unplaced = {.all_scheduled = false,
                              .unscheduled_reason = "not all pods would schedule, default/web-1 => no node fits "};
    ck_assert_int_eq(ns_consol_compute(&c, 1, &unplaced, false, &r), 0);
    ck_assert_int_eq(r.decision, NS_CONSOL_NOOP);
    /* Karpenter's pretty.Sentence over NonPendingPodSchedulingErrors, its Unconsolidatable message */
    ck_assert_str_eq(r.why, "Not all pods would schedule, default/web-1 => no node fits ");
    ck_assert(r.published);

    ns_consol_sim two = {.all_scheduled = true, .n_new_claims = 2};
    ck_assert_int_eq(ns_consol_compute(&c, 1, &two, false, &r), 0);
    ck_assert_int_eq(r.decision, NS_CONSOL_NOOP);
    ck_assert_str_eq(r.why, "Can't remove without creating 2 candidates");
    ck_assert(r.published);
}
END_TEST

START_TEST(test_replace_only_strictly_cheaper)
{
    ns_consol_candidate c = {"a", "t09", "on-demand", 0.10};
    opt o[] = {{1, "on-demand", 0.05}, {2, "on-demand", 0.10}, {3, "on-demand", 0.20}};
    ns_sched_claim claim = make_claim(o, 3, "on-demand");
    ns_consol_result r = decide(&c, 1, &claim, false);
    ck_assert_int_eq(r.decision, NS_CONSOL_REPLACE);
    ck_assert_uint_eq(r.n_options, 1); /* the equal price is not cheaper */
    ck_assert_ptr_eq(r.options[0].type, &types[1]);
    ck_assert(!r.spot_only);
    ns_consol_result_free(&r);

    c.price = 0.05;
    r = decide(&c, 1, &claim, false);
    ck_assert_int_eq(r.decision, NS_CONSOL_NOOP);
    ck_assert_str_eq(r.why, "Can't replace with a cheaper node");
    ck_assert(r.published);
    ck_assert_ptr_null(r.options);

    /* Karpenter fails (an error log) rather than publishing an event */
    c.price = -1;
    r = decide(&c, 1, &claim, false);
    ck_assert_int_eq(r.decision, NS_CONSOL_NOOP);
    ck_assert_msg(strstr(r.why, "price of a (t09/on-demand) is unknown"), "%s", r.why);
    ck_assert(!r.published);
    free_claim(&claim);
}
END_TEST

/* Cost packing: two candidates (0.60 together) and three new claims whose cheapest options sum to 0.48. Each claim's
 * ceiling is its cheapest plus a third of the 0.12 saved (0.04), so any choice of options costs less than 0.60. */
START_TEST(test_several_claims_share_the_saving)
{
    ns_consol_candidate c[] = {{"a", "t09", "on-demand", 0.30}, {"b", "t09", "on-demand", 0.30}};
    opt o0[] = {{1, "on-demand", 0.10}, {2, "on-demand", 0.13}, {3, "on-demand", 0.15}};
    opt o1[] = {{4, "on-demand", 0.18}, {5, "on-demand", 0.21}, {6, "on-demand", 0.22}};
    opt o2[] = {{7, "on-demand", 0.20}, {8, "on-demand", 0.24}};
    ns_sched_claim claims[] = {make_claim(o0, 3, "on-demand"), make_claim(o1, 3, "on-demand"),
                               make_claim(o2, 2, "on-demand")};
    size_t needed[] = {0, 1, 2};
    ns_consol_sim sim = {.all_scheduled = true, .n_new_claims = 3, .multi_claim = true, .all_claims = claims,
                         .needed = needed};
    ns_consol_result r;
    ck_assert_int_eq(ns_consol_compute(c, 2, &sim, false, &r), 0);
    ck_assert_int_eq(r.decision, NS_CONSOL_REPLACE);
    ck_assert_uint_eq(ns_consol_n_replacements(&r), 3);
    const size_t kept[] = {2, 2, 1}; /* below 0.14, 0.22 and 0.24 */
    for (size_t i = 0; i < 3; i++) {
        const ns_consol_result *p = ns_consol_replacement(&r, i);
        ck_assert_int_eq(p->decision, NS_CONSOL_REPLACE);
        ck_assert_uint_eq(p->n_options, kept[i]);
        ck_assert_ptr_eq(p->options[0].type, claims[i].options[0].type);
    }
    ns_consol_result_free(&r);

    /* Karpenter's rule: never more than one new claim. */
    sim.multi_claim = false;
    ck_assert_int_eq(ns_consol_compute(c, 2, &sim, false, &r), 0);
    ck_assert_int_eq(r.decision, NS_CONSOL_NOOP);
    ck_assert_str_eq(r.why, "Can't remove without creating 3 candidates");

    /* Not cheaper in total: nothing. */
    sim.multi_claim = true;
    c[1].price = 0.18;
    ck_assert_int_eq(ns_consol_compute(c, 2, &sim, false, &r), 0);
    ck_assert_int_eq(r.decision, NS_CONSOL_NOOP);
    ck_assert_str_eq(r.why, "Can't replace with 3 cheaper nodes");
    ck_assert(r.published);
    for (size_t i = 0; i < 3; i++)
        free_claim(&claims[i]);
}
END_TEST

START_TEST(test_on_demand_to_mixed_is_held_to_spot)
{
    ns_consol_candidate c = {"a", "t09", "on-demand", 0.10};
    opt o[] = {{1, "spot", 0.03}, {1, "on-demand", 0.08}, {2, "on-demand", 0.09}, {3, "spot", 0.12}};
    ns_sched_claim claim = make_claim(o, 4, "on-demand,spot");
    ns_consol_result r = decide(&c, 1, &claim, false);
    ck_assert_int_eq(r.decision, NS_CONSOL_REPLACE);
    ck_assert(r.spot_only);
    ck_assert_uint_eq(r.n_options, 1);
    ck_assert_str_eq(r.options[0].capacity_type, "spot");
    ns_consol_result_free(&r);
    /* No requirement on capacity type at all allows both: same rule. */
    ns_requirements_free(&claim.requirements);
    r = decide(&c, 1, &claim, false);
    ck_assert(r.spot_only);
    ns_consol_result_free(&r);
    free_claim(&claim);
}
END_TEST

static ns_sched_claim spot_claim(int n_types, double base)
{
    opt o[MAX_TYPES];
    for (int i = 0; i < n_types; i++)
        o[i] = (opt){i, "spot", base + 0.001 * i};
    return make_claim(o, (size_t)n_types, "spot");
}

START_TEST(test_spot_to_spot)
{
    ns_consol_candidate c = {"a", "t39", "spot", 0.5};
    ns_sched_claim claim = spot_claim(20, 0.01);
    ns_consol_result r = decide(&c, 1, &claim, false);
    ck_assert_int_eq(r.decision, NS_CONSOL_NOOP);
    ck_assert_str_eq(r.why, "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node");

    r = decide(&c, 1, &claim, true);
    ck_assert_int_eq(r.decision, NS_CONSOL_REPLACE);
    ck_assert_uint_eq(r.n_types, NS_SPOT_TO_SPOT_MIN_TYPES); /* launch from the 15 cheapest only */
    ck_assert_uint_eq(r.n_options, 15);
    ck_assert_ptr_eq(r.options[14].type, &types[14]);
    ns_consol_result_free(&r);
    free_claim(&claim);

    /* 14 cheaper types are not enough for one node; a 15th that costs the same as the node does not count. */
    opt o[15];
    for (int i = 0; i < 14; i++)
        o[i] = (opt){i, "spot", 0.01 * (i + 1)};
    o[14] = (opt){14, "spot", 0.5};
    claim = make_claim(o, 15, "spot");
    r = decide(&c, 1, &claim, true);
    ck_assert_int_eq(r.decision, NS_CONSOL_NOOP);
    ck_assert_str_eq(r.why, "SpotToSpotConsolidation requires 15 cheaper instance type options than the current "
                            "candidate to consolidate, got 14");
    /* Several spot nodes into one: no flexibility rule. */
    ns_consol_candidate two[] = {{"a", "t39", "spot", 0.3}, {"b", "t39", "spot", 0.2}};
    r = decide(two, 2, &claim, true);
    ck_assert_int_eq(r.decision, NS_CONSOL_REPLACE);
    ck_assert_uint_eq(r.n_types, 14);
    ns_consol_result_free(&r);
    free_claim(&claim);

    /* A spot candidate whose replacement can only be on-demand is an ordinary replacement. */
    opt od[] = {{1, "on-demand", 0.2}};
    claim = make_claim(od, 1, "on-demand");
    r = decide(&c, 1, &claim, false);
    ck_assert_int_eq(r.decision, NS_CONSOL_REPLACE);
    ck_assert(!r.spot_only);
    ns_consol_result_free(&r);
    free_claim(&claim);
}
END_TEST

START_TEST(test_min_values_after_price_filter)
{
    /* Two families are required; the only cheaper types are both family f1. */
    ns_consol_candidate c = {"a", "t09", "on-demand", 0.10};
    opt o[] = {{1, "on-demand", 0.05}, {3, "on-demand", 0.06}, {2, "on-demand", 0.2}};
    ns_sched_claim claim = make_claim(o, 3, "on-demand");
    const char *fam[] = {"f0", "f1"};
    ck_assert_int_eq(
        ns_requirements_add_op(&claim.requirements, "karpenter.k8s.aws/instance-family", NS_OP_IN, fam, 2, 2), 0);
    ns_consol_result r = decide(&c, 1, &claim, false);
    ck_assert_int_eq(r.decision, NS_CONSOL_NOOP);
    ck_assert_str_eq(r.why, "Filtering by price: minValues requirement is not met for label(s) "
                            "(label(s)=[karpenter.k8s.aws/instance-family])");
    ck_assert(r.published);
    c.price = 0.3;
    r = decide(&c, 1, &claim, false);
    ck_assert_int_eq(r.decision, NS_CONSOL_REPLACE);
    ns_consol_result_free(&r);
    free_claim(&claim);

    /* Spot-to-spot with minValues 3 on instance type names keeps max(15, needed) types. */
    claim = spot_claim(20, 0.01);
    ck_assert_int_eq(ns_requirements_add_op(&claim.requirements, NS_LABEL_INSTANCE_TYPE, NS_OP_EXISTS, NULL, 0, 18), 0);
    ns_consol_candidate s = {"s", "t39", "spot", 0.5};
    r = decide(&s, 1, &claim, true);
    ck_assert_int_eq(r.decision, NS_CONSOL_REPLACE);
    ck_assert_uint_eq(r.n_types, 18);
    ns_consol_result_free(&r);
    free_claim(&claim);
}
END_TEST

START_TEST(test_filter_out_same_type)
{
    /* [2xlarge, 2xlarge, small] -> one of nano, small, xlarge, 2xlarge: only nano is worth it. */
    ns_consol_candidate c[] = {{"a", "t04", "on-demand", 0.30}, {"b", "t04", "on-demand", 0.30},
                               {"c", "t02", "on-demand", 0.02}};
    opt o[] = {{1, "on-demand", 0.005}, {2, "on-demand", 0.02}, {3, "on-demand", 0.15}, {4, "on-demand", 0.30}};
    ns_sched_claim claim = make_claim(o, 4, "on-demand");
    ns_consol_result r = decide(c, 3, &claim, false);
    ck_assert_int_eq(r.decision, NS_CONSOL_REPLACE);
    ck_assert_uint_eq(r.n_types, 4);
    ns_consol_filter_same_type(&r, c, 3);
    ck_assert_int_eq(r.decision, NS_CONSOL_REPLACE);
    ck_assert_uint_eq(r.n_options, 1);
    ck_assert_ptr_eq(r.options[0].type, &types[1]);
    ns_consol_result_free(&r);
    free_claim(&claim);

    /* Without the nano: nothing is left, so no command (deleting the two big ones alone would do). */
    claim = make_claim(o + 1, 3, "on-demand");
    r = decide(c, 3, &claim, false);
    ns_consol_filter_same_type(&r, c, 3);
    ck_assert_int_eq(r.decision, NS_CONSOL_NOOP);
    free_claim(&claim);
}
END_TEST

typedef struct fake_search {
    size_t works_up_to; /* prefixes of at most this many candidates consolidate */
    size_t calls;
    size_t largest_asked;
    int fail_at; /* > 0: return an error on that call */
} fake_search;

static int fake_prefix(void *ctx, size_t n_first, ns_consol_result *out)
{
    fake_search *f = ctx;
    f->calls++;
    ck_assert_uint_ge(n_first, 2);
    if (n_first > f->largest_asked)
        f->largest_asked = n_first;
    if (f->fail_at && (int)f->calls == f->fail_at)
        return NS_FAIL(NS_ERR_INTERNAL, "simulation failed");
    out->decision = n_first <= f->works_up_to ? NS_CONSOL_DELETE : NS_CONSOL_NOOP;
    return 0;
}

START_TEST(test_first_n_binary_search)
{
    for (size_t n = 0; n <= 130; n++) {
        for (size_t works = 0; works <= n + 1; works += (n > 20 ? 7 : 1)) {
            fake_search f = {.works_up_to = works};
            size_t chosen = 99;
            ns_consol_result r;
            ck_assert_int_eq(ns_consol_first_n(n, fake_prefix, &f, &chosen, &r), 0);
            size_t limit = n > NS_MULTI_NODE_MAX_CANDIDATES ? NS_MULTI_NODE_MAX_CANDIDATES : n;
            size_t expect = works >= 2 ? (works < limit ? works : limit) : 0;
            if (n < 2)
                expect = 0;
            ck_assert_msg(chosen == expect, "n=%zu works=%zu: chose %zu, expected %zu", n, works, chosen, expect);
            ck_assert_int_eq(r.decision, expect ? NS_CONSOL_DELETE : NS_CONSOL_NOOP);
            ck_assert_uint_le(f.calls, 8); /* log2(100) + 1 */
            ck_assert_uint_le(f.largest_asked, NS_MULTI_NODE_MAX_CANDIDATES);
            ns_consol_result_free(&r);
        }
    }
    fake_search f = {.works_up_to = 5, .fail_at = 2};
    size_t chosen;
    ns_consol_result r;
    ck_assert_int_eq(ns_consol_first_n(10, fake_prefix, &f, &chosen, &r), NS_ERR_INTERNAL);
}
END_TEST

START_TEST(test_eviction_cost)
{
    ns_pod *p = ns_pod_new();
    ck_assert_double_eq(ns_disruption_eviction_cost(p), 1.0);
    ck_assert_int_eq(ns_labels_set(&p->meta.annotations, NS_ANNOTATION_POD_DELETION_COST, "134217728"), 0);
    ck_assert_double_eq(ns_disruption_eviction_cost(p), 2.0);
    ck_assert_int_eq(ns_labels_set(&p->meta.annotations, NS_ANNOTATION_POD_DELETION_COST, "-2147483647"), 0);
    ck_assert_double_eq(ns_disruption_eviction_cost(p), -10.0); /* -15 clamped */
    ck_assert_int_eq(ns_labels_set(&p->meta.annotations, NS_ANNOTATION_POD_DELETION_COST, "lots"), 0);
    ck_assert_double_eq(ns_disruption_eviction_cost(p), 1.0);
    p->has_priority = true;
    p->priority = 1000000000;
    ck_assert_double_eq(ns_disruption_eviction_cost(p), 10.0); /* ~30.8 clamped */
    p->priority = 33554432;
    ck_assert_double_eq(ns_disruption_eviction_cost(p), 2.0);
    const ns_pod *pods[] = {p, p};
    ck_assert_double_eq(ns_disruption_rescheduling_cost(pods, 2), 4.0);
    ns_pod_free(p);
}
END_TEST

START_TEST(test_lifetime_and_order)
{
    const int64_t day = INT64_C(86400000);
    ck_assert_double_eq(ns_disruption_lifetime_remaining(15 * day, 0, 30 * day), 0.5);
    ck_assert_double_eq(ns_disruption_lifetime_remaining(40 * day, 0, 30 * day), 0.0);
    ck_assert_double_eq(ns_disruption_lifetime_remaining(40 * day, 0, -1), 1.0);
    ck_assert_double_eq(ns_disruption_lifetime_remaining(0, day, 30 * day), 1.0); /* clock skew: clamped */

    /* Three pods on a fresh node cost more than five on a node about to expire. */
    ns_disruption_rank r[] = {
        {3.0 * ns_disruption_lifetime_remaining(0, 0, 30 * day), "fresh", 0},
        {5.0 * ns_disruption_lifetime_remaining(27 * day, 0, 30 * day), "old", 1},
        {2.0, "b", 2},
        {2.0, "a", 3},
    };
    ns_disruption_rank_sort(r, 4);
    ck_assert_str_eq(r[0].name, "old");
    ck_assert_str_eq(r[1].name, "a");
    ck_assert_str_eq(r[2].name, "b");
    ck_assert_str_eq(r[3].name, "fresh");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("disruption-decide");
    TCase *tc = tcase_create("decide");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_delete_when_pods_fit_elsewhere);
    tcase_add_test(tc, test_replace_only_strictly_cheaper);
    tcase_add_test(tc, test_several_claims_share_the_saving);
    tcase_add_test(tc, test_on_demand_to_mixed_is_held_to_spot);
    tcase_add_test(tc, test_spot_to_spot);
    tcase_add_test(tc, test_min_values_after_price_filter);
    tcase_add_test(tc, test_filter_out_same_type);
    tcase_add_test(tc, test_first_n_binary_search);
    tcase_add_test(tc, test_eviction_cost);
    tcase_add_test(tc, test_lifetime_and_order);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
