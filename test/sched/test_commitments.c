/*
 * Commitments (cost/commitments.h): the settings file's errors name the commitment, the field and why; a round picks
 * covered offerings first while a commitment has room and spills to the cheapest own price once it is used up, in
 * both packing modes; nodes already running consume first. Prices are worked out by hand in each test's comment.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cost/commitments.h"
#include "errors/ns_error.h"
#include "sched_fixture.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static void parse(const char *yaml, ns_commitments *out)
{
    int rc = ns_commitments_parse("c.yaml", yaml, strlen(yaml), out);
    ck_assert_msg(rc == NS_OK, "parse failed: %s", ns_error_message());
}

static void parse_fails(const char *yaml, const char *want)
{
    ns_commitments c;
    int rc = ns_commitments_parse("c.yaml", yaml, strlen(yaml), &c);
    ck_assert_int_eq(rc, NS_ERR_INVALID_CONFIG);
    ck_assert_msg(strstr(ns_error_message(), want), "error \"%s\" lacks \"%s\"", ns_error_message(), want);
    ck_assert_uint_eq(c.n, 0);
}

START_TEST(decodes_both_kinds)
{
    ns_commitments c;
    parse("commitments:\n"
          "- name: ri\n  kind: instances\n  amount: 3\n  effectivePrice: 0.062\n  instanceType: 'm5.*'\n"
          "  zone: z-a\n"
          "- name: sp\n  kind: spend\n  amount: 1.5\n  discount: 0.28\n  family: m5\n"
          "  familyLabel: example.com/family\n  region: r-1\n",
          &c);
    ck_assert_uint_eq(c.n, 2);
    ck_assert_int_eq(c.items[0].kind, NS_COMMIT_INSTANCES);
    ck_assert(NEAR(c.items[0].amount, 3) && NEAR(c.items[0].effective_price, 0.062));
    ck_assert_str_eq(c.items[0].instance_type, "m5.*");
    ck_assert_str_eq(c.items[0].zone, "z-a");
    ck_assert_int_eq(c.items[1].kind, NS_COMMIT_SPEND);
    ck_assert(NEAR(c.items[1].discount, 0.28) && c.items[1].effective_price < 0);
    ck_assert_str_eq(c.items[1].family_label, "example.com/family");
    ck_assert_str_eq(c.items[1].region, "r-1");
    ns_commitments_free(&c);
}
END_TEST

START_TEST(errors_name_commitment_field_and_why)
{
    const char *head = "commitments:\n- name: ri\n";
    static const struct {
        const char *body, *want;
    } cases[] = {
        {"  kind: reserved\n  amount: 1\n  discount: 0.3\n", "c.yaml:3: commitment ri: kind: must be instances"},
        {"  kind: instances\n  discount: 0.3\n", "commitment ri: amount: is required (the number of instances)"},
        {"  kind: instances\n  amount: 2.5\n  discount: 0.3\n", "commitment ri: amount: must be a whole number"},
        {"  kind: spend\n  amount: -1\n  discount: 0.3\n", "commitment ri: amount: must be above 0, not -1"},
        {"  kind: instances\n  amount: 1\n  discount: 1.5\n", "c.yaml:5: commitment ri: discount: must be a fraction above 0"},
        {"  kind: instances\n  amount: 1\n  discount: '0.3'\n", "commitment ri: discount: must be a number"},
        {"  kind: instances\n  amount: 1\n", "commitment ri: discount: is required (or effectivePrice)"},
        {"  kind: instances\n  amount: 1\n  discount: 0.3\n  effectivePrice: 0.1\n",
         "commitment ri: effectivePrice: and discount are exclusive"},
        {"  kind: spend\n  amount: 1\n  effectivePrice: 0.1\n",
         "commitment ri: effectivePrice: applies to kind instances only"},
        {"  kind: instances\n  amount: 1\n  discount: 0.3\n  family: m5\n",
         "commitment ri: familyLabel: family and familyLabel go together"},
        {"  kind: instances\n  amount: 1\n  discount: 0.3\n  scope: m5\n", "unknown field \"scope\""},
        {"  kind: instances\n  amount: 1\n  discount: 0.3\n- name: ri\n  kind: spend\n  amount: 1\n  discount: 0.2\n",
         "c.yaml:6: commitment ri: name: is used by another commitment already"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char yaml[512];
        snprintf(yaml, sizeof(yaml), "%s%s", head, cases[i].body);
        parse_fails(yaml, cases[i].want);
    }
    parse_fails("commitment:\n- name: x\n", "unknown field \"commitment\"");
    parse_fails("commitments:\n- kind: spend\n", "c.yaml:2: commitments[0]: missing required field \"name\"");
}
END_TEST

/* Two 2-cpu types in zone z-a: cheap-od at $0.09/h on-demand and ri-type at $0.10/h on-demand, $0.03/h spot. Three
 * pods of 1.5 cpu need one node each. */
static void two_types(ns_itype_set *set)
{
    /* in name order, as the loader keeps a set */
    fx_type(set, "cheap-od", 2000, 8 * FX_GI, 20, "example.com/family=od,topology.kubernetes.io/region=r-1",
            "z-a:on-demand:0.09");
    fx_type(set, "ri-type", 2000, 8 * FX_GI, 20, "example.com/family=ri,topology.kubernetes.io/region=r-1",
            "z-a:on-demand:0.10,z-a:spot:0.03");
}

/* The pool allows on-demand only: ri-type's spot offering would undercut everything. */
static ns_cluster *three_pods(void)
{
    ns_cluster *c = ns_cluster_new();
    ck_assert_ptr_nonnull(c);
    fx_pool(c, "default", 0, "karpenter.sh/capacity-type In on-demand");
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        fx_pod(c, name, 1500, FX_GI, "");
    }
    return c;
}

/* The round as the engine runs it: types priced with the ledger, the scheduler, the claims played in order. Returns
 * the total of each claim's cheapest option; writes the chosen types, comma-separated, into `chosen`. */
static double round_with(ns_commit_ledger *l, const ns_cluster *c, const ns_itype_set *set, ns_sched_packing packing,
                         char *chosen, size_t len)
{
    ns_itype_set priced;
    ck_assert_int_eq(ns_commit_priced_set(l, set, &priced), NS_OK);
    ns_sched_result r;
    fx_run_packing(c, &priced, NULL, packing, &r);
    const ns_itype_set *pools[] = {set};
    ck_assert_int_eq(ns_commit_ledger_play_round(l, pools, &r), NS_OK);
    double total = 0;
    chosen[0] = '\0';
    for (size_t i = 0; i < r.n_claims; i++) {
        ck_assert_uint_gt(r.claims[i].n_options, 0);
        total += r.claims[i].options[0].price_per_hour;
        snprintf(chosen + strlen(chosen), len - strlen(chosen), "%s%s", i ? "," : "",
                 r.claims[i].options[0].type->name);
    }
    ck_assert_uint_eq(r.n_claims, 3);
    ns_sched_result_free(&r);
    ns_commit_priced_set_free(&priced);
    return total;
}

/* Two reserved instances of ri-type at half price ($0.05/h): the first two claims take them at $0.05, the third
 * spills to the cheapest own price, cheap-od at $0.09: 0.05 + 0.05 + 0.09 = $0.19/h (no commitment: 3 x 0.09 =
 * $0.27/h). Both packing modes, since pricing changes prices only. */
START_TEST(instances_used_first_then_spill)
{
    ns_sched_packing modes[] = {NS_SCHED_PACKING_KARPENTER, NS_SCHED_PACKING_COST};
    for (size_t m = 0; m < 2; m++) {
        ns_commitments cm;
        parse("commitments:\n- name: ri\n  kind: instances\n  amount: 2\n  discount: 0.5\n  instanceType: 'ri-*'\n",
              &cm);
        ns_itype_set set = {0};
        two_types(&set);
        ns_cluster *c = three_pods();
        ns_commit_ledger *l;
        ck_assert_int_eq(ns_commit_ledger_new(&cm, &l), NS_OK);
        char chosen[128];
        double total = round_with(l, c, &set, modes[m], chosen, sizeof(chosen));
        ck_assert_msg(NEAR(total, 0.19), "mode %zu: total %.4f, chosen %s", m, total, chosen);
        ck_assert_str_eq(chosen, "ri-type,ri-type,cheap-od");
        const ns_commit_usage *u = ns_commit_ledger_usage(l, 0);
        ck_assert(NEAR(u->used, 2));
        ck_assert_uint_eq(u->nodes, 2);
        ns_commit_ledger_free(l);
        ns_cluster_free(c);
        ns_itype_set_free(&set);
        ns_commitments_free(&cm);
    }
}
END_TEST

/* A node already running on ri-type consumes one of the two reservations first: one claim gets $0.05, two pay
 * cheap-od's $0.09: 0.05 + 0.09 + 0.09 = $0.23/h. A spot node of ri-type consumes nothing (commitments cover
 * on-demand only), nor does a node of another region. */
START_TEST(running_nodes_consume_first)
{
    ns_commitments cm;
    parse("commitments:\n- name: ri\n  kind: instances\n  amount: 2\n  discount: 0.5\n  family: ri\n"
          "  familyLabel: example.com/family\n  region: r-1\n",
          &cm);
    ns_itype_set set = {0};
    two_types(&set);
    ns_cluster *c = three_pods();
    ns_commit_ledger *l;
    ck_assert_int_eq(ns_commit_ledger_new(&cm, &l), NS_OK);
    const ns_itype *t = ns_itype_set_find(&set, "ri-type");
    ns_commit_subject running = {.instance_type = "ri-type", .labels = t->labels, .n_labels = t->n_labels,
                                 .zone = "z-a", .capacity_type = "on-demand", .price_per_hour = 0.10};
    ck_assert(NEAR(ns_commit_ledger_consume(l, &running), 0.05));
    ns_commit_subject spot = running;
    spot.capacity_type = "spot";
    spot.price_per_hour = 0.03;
    ck_assert(NEAR(ns_commit_ledger_consume(l, &spot), 0.03));
    ns_label elsewhere[] = {{"example.com/family", "ri"}, {"topology.kubernetes.io/region", "r-2"}};
    ns_commit_subject other = running;
    other.labels = elsewhere;
    other.n_labels = 2;
    ck_assert(NEAR(ns_commit_ledger_consume(l, &other), 0.10));
    char chosen[128];
    double total = round_with(l, c, &set, NS_SCHED_PACKING_KARPENTER, chosen, sizeof(chosen));
    ck_assert_msg(NEAR(total, 0.23), "total %.4f, chosen %s", total, chosen);
    ck_assert_str_eq(chosen, "ri-type,cheap-od,cheap-od");
    const ns_commit_usage *u = ns_commit_ledger_usage(l, 0);
    ck_assert(NEAR(u->used, 2));
    ck_assert_uint_eq(u->nodes, 2);
    ns_commit_ledger_free(l);
    ns_cluster_free(c);
    ns_itype_set_free(&set);
    ns_commitments_free(&cm);
}
END_TEST

/* A savings plan of $0.08/h at 50% off ri-type (rate $0.05/h per node): the first claim uses $0.05 of it at $0.05;
 * the second gets the $0.03 left, which buys 0.03 / 0.05 = 60% of a node, and pays the other 40% at $0.10:
 * 0.03 + 0.04 = $0.07, still below cheap-od's $0.09; the third has nothing left and takes cheap-od at $0.09. Total
 * 0.05 + 0.07 + 0.09 = $0.21/h; the plan is used in full ($0.08 of $0.08) and $0.04/h of its scope spilled. */
START_TEST(spend_used_first_then_spill)
{
    ns_commitments cm;
    parse("commitments:\n- name: sp\n  kind: spend\n  amount: 0.08\n  discount: 0.5\n  instanceType: ri-type\n"
          "  zone: z-a\n",
          &cm);
    ns_itype_set set = {0};
    two_types(&set);
    ns_cluster *c = three_pods();
    ns_commit_ledger *l;
    ck_assert_int_eq(ns_commit_ledger_new(&cm, &l), NS_OK);
    char chosen[128];
    double total = round_with(l, c, &set, NS_SCHED_PACKING_KARPENTER, chosen, sizeof(chosen));
    ck_assert_msg(NEAR(total, 0.21), "total %.4f, chosen %s", total, chosen);
    ck_assert_str_eq(chosen, "ri-type,ri-type,cheap-od");
    const ns_commit_usage *u = ns_commit_ledger_usage(l, 0);
    ck_assert(NEAR(u->used, 0.08));
    ck_assert(NEAR(u->spilled_per_hour, 0.04));
    /* The text names the commitment, its use and the spill. */
    char buf[512] = "";
    FILE *f = fmemopen(buf, sizeof(buf), "w");
    ck_assert_int_eq(ns_commit_ledger_text(f, l), NS_OK);
    fclose(f);
    ck_assert_msg(strstr(buf, "commitment sp (spend): 0.08 of 0.08 $/h used (100%), 2 nodes; spilled to "
                              "on-demand: 0 nodes, $0.0400/h"),
                  "%s", buf);
    ns_commit_ledger_free(l);
    ns_cluster_free(c);
    ns_itype_set_free(&set);
    ns_commitments_free(&cm);
}
END_TEST

/* A reservation nobody can use (a zone no offering has) changes nothing: 3 x cheap-od = $0.27/h. */
START_TEST(out_of_scope_changes_nothing)
{
    ns_commitments cm;
    parse("commitments:\n- name: ri\n  kind: instances\n  amount: 5\n  effectivePrice: 0\n  zone: z-q\n", &cm);
    ns_itype_set set = {0};
    two_types(&set);
    ns_cluster *c = three_pods();
    ns_commit_ledger *l;
    ck_assert_int_eq(ns_commit_ledger_new(&cm, &l), NS_OK);
    char chosen[128];
    double total = round_with(l, c, &set, NS_SCHED_PACKING_KARPENTER, chosen, sizeof(chosen));
    ck_assert_msg(NEAR(total, 0.27), "total %.4f, chosen %s", total, chosen);
    ck_assert_uint_eq(ns_commit_ledger_usage(l, 0)->nodes, 0);
    ns_commit_ledger_free(l);
    ns_cluster_free(c);
    ns_itype_set_free(&set);
    ns_commitments_free(&cm);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("commitments");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, decodes_both_kinds);
    tcase_add_test(tc, errors_name_commitment_field_and_why);
    tcase_add_test(tc, instances_used_first_then_spill);
    tcase_add_test(tc, running_nodes_consume_first);
    tcase_add_test(tc, spend_used_first_then_spill);
    tcase_add_test(tc, out_of_scope_changes_nothing);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
