/* Spot-to-spot consolidation through the engine: never with the SpotToSpotConsolidation feature gate off; with it on,
 * a single spot node is replaced only when at least 15 cheaper instance types could replace it, and the replacement
 * launches as spot from the 15 cheapest. Decisions asserted from the log; the invariants checked after every step. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disruption_fixture.h"
#include "errors/ns_error.h"
#include "model/labels.h"

#define CONSOLIDATE "    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 30s\n"
#define CATEGORIES "        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}\n"

/* Broad: every c, m and r type (dozens cheaper than an 8-vCPU node). Narrow: five types, three of them cheaper. */
static const char broad[] = DFX_CLASS("{}") DFX_POOL("", DFX_CAPACITY("spot") CATEGORIES DFX_AMD64, CONSOLIDATE)
    "---\n" DFX_DEPLOY("a", 4, "1", "1Gi", "");
static const char narrow[] =
    DFX_CLASS("{}") DFX_POOL("", DFX_CAPACITY("spot") DFX_TYPES("m5.large, m5.xlarge, m5.2xlarge, c5.xlarge, c5.2xlarge"),
                             CONSOLIDATE) "---\n" DFX_DEPLOY("a", 4, "1", "1Gi", "");

/* One spot node sized for four 1-CPU pods, then three of them gone: one pod on an 8-vCPU node. */
static efx *oversized_spot_node(const char *yaml, bool gate, char *name, size_t len)
{
    efx *x = dfx_new(yaml, NULL, gate);
    dfx_settle(x, EFX_S(120));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    const ns_nodeclaim *c = efx_claim(x, 0);
    ck_assert_str_eq(dfx_label(c, NS_LABEL_CAPACITY_TYPE), "spot");
    ck_assert_str_eq(dfx_label(c, "karpenter.k8s.aws/instance-cpu"), "8");
    snprintf(name, len, "%s", c->meta.name);
    dfx_scale(x, "a", 1);
    return x;
}

/* The pools' instance types, as their requirements select them. */
static bool in_broad(const ns_itype *t)
{
    const char *cat = ns_itype_label(t, "karpenter.k8s.aws/instance-category");
    const char *arch = ns_itype_label(t, "kubernetes.io/arch");
    return cat && arch && strchr("cmr", cat[0]) && !cat[1] && strcmp(arch, "amd64") == 0;
}

static bool in_narrow(const ns_itype *t)
{
    static const char *const names[] = {"m5.large", "m5.xlarge", "m5.2xlarge", "c5.xlarge", "c5.2xlarge"};
    for (size_t i = 0; i < 5; i++)
        if (strcmp(t->name, names[i]) == 0)
            return true;
    return false;
}

/* The pool's spot instance types cheaper than the node's offering that fit one 1-CPU pod, counted from the
 * provider's listing. */
static size_t cheaper_types(efx *x, const ns_nodeclaim *c, bool (*in_pool)(const ns_itype *))
{
    ck_assert_int_eq(ns_engine_refresh_types(x->engine), NS_OK);
    const ns_itype_set *set = x->engine->types.pool_types[0];
    ck_assert_ptr_nonnull(set);
    double price = strtod(ns_labels_get(&c->meta.annotations, NS_ANNOTATION_PRICE), NULL);
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        const ns_itype *t = &set->items[i];
        if (!in_pool(t) || t->allocatable.cpu_milli < 1000)
            continue;
        bool cheaper = false;
        for (size_t o = 0; o < t->n_offerings && !cheaper; o++)
            cheaper = strcmp(t->offerings[o].capacity_type, "spot") == 0 && t->offerings[o].price_per_hour < price;
        n += cheaper;
    }
    return n;
}

START_TEST(test_gate_off)
{
    char name[64];
    efx *x = oversized_spot_node(broad, false, name, sizeof(name));
    ck_assert_uint_ge(cheaper_types(x, efx_claim(x, 0), in_broad), 15);
    efx_run_for(x, EFX_S(900));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTION_INFO, NULL), 0);
    ck_assert_str_eq(efx_claim(x, 0)->meta.name, name);
    efx_free(x);
}
END_TEST

START_TEST(test_gate_on_fewer_than_15_types)
{
    char name[64];
    efx *x = oversized_spot_node(narrow, true, name, sizeof(name));
    size_t cheaper = cheaper_types(x, efx_claim(x, 0), in_narrow);
    ck_assert_uint_ge(cheaper, 1);
    ck_assert_uint_lt(cheaper, 15);
    efx_run_for(x, EFX_S(900));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 0);
    ck_assert_str_eq(efx_claim(x, 0)->meta.name, name);
    efx_free(x);
}
END_TEST

START_TEST(test_gate_on_15_or_more_types)
{
    char name[64];
    efx *x = oversized_spot_node(broad, true, name, sizeof(name));
    double old_price = strtod(ns_labels_get(&efx_claim(x, 0)->meta.annotations, NS_ANNOTATION_PRICE), NULL);
    ck_assert_uint_gt(cheaper_types(x, efx_claim(x, 0), in_broad), 15);
    efx_run_for(x, EFX_S(300));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DISRUPTING, NULL), 1);
    const ns_decision *d = dfx_nth_method(x, NS_DECISION_DISRUPTING, "underutilized", 0);
    ck_assert_str_eq(d->nodeclaims, name);
    const ns_decision *info = efx_first(x, NS_DECISION_DISRUPTION_INFO, "consolidation-type=single");
    ck_assert_ptr_nonnull(info);
    ck_assert(strstr(info->detail, "decision=replace") != NULL);
    ck_assert(strstr(info->detail, "replacement-capacity-type=spot") != NULL);
    ck_assert(dfx_settled(x));
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    const ns_nodeclaim *repl = efx_claim(x, 0);
    ck_assert_str_ne(repl->meta.name, name);
    ck_assert_str_eq(dfx_label(repl, NS_LABEL_CAPACITY_TYPE), "spot");
    ck_assert_double_lt(strtod(ns_labels_get(&repl->meta.annotations, NS_ANNOTATION_PRICE), NULL), old_price);
    /* Launched from exactly the 15 cheapest types, spot only. */
    size_t types = 0, cts = 0;
    for (size_t i = 0; i < repl->n_requirements; i++) {
        const ns_selector_req *r = &repl->requirements[i];
        if (strcmp(r->key, NS_LABEL_INSTANCE_TYPE) == 0)
            types = r->n_values;
        if (strcmp(r->key, NS_LABEL_CAPACITY_TYPE) == 0) {
            cts = r->n_values;
            ck_assert_str_eq(r->values[0], "spot");
        }
    }
    ck_assert_uint_eq(types, 15);
    ck_assert_uint_eq(cts, 1);
    ck_assert_uint_eq(efx_pods_on(x, repl->meta.name), 1);
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("disruption-spot");
    TCase *tc = tcase_create("spot-to-spot");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_gate_off);
    tcase_add_test(tc, test_gate_on_fewer_than_15_types);
    tcase_add_test(tc, test_gate_on_15_or_more_types);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
