/* Karpenter requirement semantics: every operator, intersection, compatibility and label matching, including the
 * cases where the naive answer is wrong. */
#include <check.h>
#include <string.h>

#include "errors/ns_error.h"
#include "model/intern.h"
#include "model/labels.h"
#include "model/requirements.h"

static ns_requirement req(const char *key, ns_req_op op, const char *v1, const char *v2)
{
    const char *values[2] = {v1, v2};
    size_t n = v2 ? 2 : v1 ? 1 : 0;
    ns_requirement r;
    ck_assert_int_eq(ns_requirement_init(&r, key, op, values, n, 0), 0);
    return r;
}

static bool has(ns_req_op op, const char *v1, const char *v2, const char *value)
{
    ns_requirement r = req("k", op, v1, v2);
    bool ok = ns_requirement_has(&r, value);
    ns_requirement_free(&r);
    return ok;
}

START_TEST(test_every_operator)
{
    ck_assert(has(NS_OP_IN, "a", "b", "a"));
    ck_assert(!has(NS_OP_IN, "a", "b", "c"));
    ck_assert(!has(NS_OP_NOT_IN, "a", "b", "a"));
    ck_assert(has(NS_OP_NOT_IN, "a", "b", "c"));
    ck_assert(has(NS_OP_EXISTS, NULL, NULL, "anything"));
    ck_assert(!has(NS_OP_DOES_NOT_EXIST, NULL, NULL, "anything"));
    ck_assert(has(NS_OP_GT, "4", NULL, "5"));
    ck_assert(!has(NS_OP_GT, "4", NULL, "4"));
    ck_assert(!has(NS_OP_GT, "4", NULL, "five")); /* bounds only match integers */
    ck_assert(has(NS_OP_LT, "4", NULL, "3"));
    ck_assert(!has(NS_OP_LT, "4", NULL, "4"));
    ck_assert(has(NS_OP_GTE, "4", NULL, "4"));
    ck_assert(!has(NS_OP_GTE, "4", NULL, "3"));
    ck_assert(has(NS_OP_LTE, "4", NULL, "4"));
    ck_assert(!has(NS_OP_LTE, "4", NULL, "5"));
    ck_assert(has(NS_OP_GT, "-3", NULL, "-2"));

    ns_requirement r = req("k", NS_OP_GT, "9223372036854775807", NULL); /* Gt MaxInt matches nothing */
    ck_assert_int_eq(ns_requirement_operator(&r), NS_OP_DOES_NOT_EXIST);
    ns_requirement_free(&r);

    const char *bad[] = {"x"};
    ck_assert_int_eq(ns_requirement_init(&r, "k", NS_OP_GT, bad, 1, 0), NS_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_operator_names_and_format)
{
    ns_req_op op;
    ck_assert(ns_req_op_parse("Gte", &op) && op == NS_OP_GTE);
    ck_assert(!ns_req_op_parse("Equals", &op));
    ck_assert_str_eq(ns_req_op_name(NS_OP_DOES_NOT_EXIST), "DoesNotExist");
    char buf[128];
    ns_requirement r = req("zone", NS_OP_IN, "b", "a");
    ck_assert_str_eq(ns_requirement_format(&r, buf, sizeof(buf)), "zone In [a b]");
    ns_requirement_free(&r);
    r = req("cpu", NS_OP_GT, "4", NULL);
    ck_assert_str_eq(ns_requirement_format(&r, buf, sizeof(buf)), "cpu Exists >=5");
    ck_assert_int_eq(ns_requirement_operator(&r), NS_OP_EXISTS);
    ns_requirement_free(&r);
}
END_TEST

START_TEST(test_legacy_aliases_normalised)
{
    ns_requirements s = {0};
    const char *v = "amd64";
    ck_assert_int_eq(ns_requirements_add_op(&s, "beta.kubernetes.io/arch", NS_OP_IN, &v, 1, 0), 0);
    ck_assert_ptr_nonnull(ns_requirements_get(&s, "kubernetes.io/arch"));
    ck_assert_ptr_nonnull(ns_requirements_get(&s, "beta.kubernetes.io/arch"));
    ck_assert_str_eq(ns_label_normalize("failure-domain.beta.kubernetes.io/zone"), "topology.kubernetes.io/zone");
    ck_assert_str_eq(ns_label_normalize("failure-domain.beta.kubernetes.io/region"), "topology.kubernetes.io/region");
    ck_assert_str_eq(ns_label_normalize("beta.kubernetes.io/instance-type"), "node.kubernetes.io/instance-type");
    ck_assert_str_eq(ns_label_normalize("beta.kubernetes.io/os"), "kubernetes.io/os");
    ck_assert_str_eq(ns_label_normalize("example.com/x"), "example.com/x");
    ns_requirements_free(&s);
}
END_TEST

/* Karpenter 1.14: IsRestrictedLabel (pkg/apis/v1/labels.go) has RestrictedLabelDomains {karpenter.sh} and
 * RestrictedLabels {kubernetes.io/hostname}, well-known labels passing first; the NodePool CRD's CEL rule refuses a key
 * whose part before the first '/' (all of it without one) ends with "karpenter.sh", but capacity-type and nodepool.
 * The kubernetes.io and k8s.io domains, restricted before v1.10, are allowed. */
START_TEST(test_well_known_and_restricted)
{
    const char *why = NULL;
    ck_assert(ns_label_is_well_known("karpenter.sh/capacity-type"));
    ck_assert(ns_label_is_well_known("topology.kubernetes.io/zone"));
    ck_assert(!ns_label_is_well_known("kubernetes.io/hostname"));
    ck_assert(ns_label_is_restricted("kubernetes.io/hostname", &why));
    ck_assert_ptr_nonnull(strstr(why, "outside the karpenter.sh domain"));
    ck_assert(ns_label_is_restricted("karpenter.sh/custom", &why));
    ck_assert(ns_label_is_restricted("sub.karpenter.sh/custom", &why));
    ck_assert(ns_label_is_restricted("notkarpenter.sh/custom", &why)); /* CEL's endsWith, not a sub-domain test */
    ck_assert(ns_label_is_restricted("karpenter.sh", &why));           /* CEL's find("^([^/]+)") is the whole key */
    ck_assert(!ns_label_is_restricted("example.com/karpenter.sh", &why));
    ck_assert(!ns_label_is_restricted("karpenter.sh/capacity-type", &why));
    ck_assert(!ns_label_is_restricted("karpenter.sh/nodepool", &why)); /* well-known; decoders refuse it apart */
    ck_assert(!ns_label_is_restricted("foo.k8s.io/x", &why));
    ck_assert(!ns_label_is_restricted("kubernetes.io/role", &why));
    ck_assert(!ns_label_is_restricted("example.kubernetes.io/team", &why));
    ck_assert(!ns_label_is_restricted("node.kubernetes.io/role", &why));
    ck_assert(!ns_label_is_restricted("team", &why));
    ck_assert(!ns_label_is_restricted("kubernetes.io/arch", &why));
}
END_TEST

static bool intersects(ns_requirement a, ns_requirement b)
{
    bool ok = ns_requirement_has_intersection(&a, &b);
    ns_requirement out;
    ck_assert_int_eq(ns_requirement_intersection(&a, &b, &out), 0);
    /* The allocation-free check agrees with the computed intersection being non-empty. */
    ns_req_op op = ns_requirement_operator(&out);
    ck_assert_int_eq(ok, op != NS_OP_DOES_NOT_EXIST);
    ns_requirement_free(&out);
    ns_requirement_free(&a);
    ns_requirement_free(&b);
    return ok;
}

START_TEST(test_intersection)
{
    ck_assert(intersects(req("k", NS_OP_IN, "a", "b"), req("k", NS_OP_IN, "b", "c")));
    ck_assert(!intersects(req("k", NS_OP_IN, "a", NULL), req("k", NS_OP_IN, "b", NULL)));
    ck_assert(!intersects(req("k", NS_OP_IN, "a", NULL), req("k", NS_OP_NOT_IN, "a", NULL)));
    ck_assert(intersects(req("k", NS_OP_NOT_IN, "a", NULL), req("k", NS_OP_NOT_IN, "b", NULL)));
    ck_assert(intersects(req("k", NS_OP_EXISTS, NULL, NULL), req("k", NS_OP_IN, "x", NULL)));
    ck_assert(!intersects(req("k", NS_OP_DOES_NOT_EXIST, NULL, NULL), req("k", NS_OP_IN, "x", NULL)));
    /* Bounds combine with In values: only integers inside the bounds survive. */
    ck_assert(intersects(req("k", NS_OP_GT, "4", NULL), req("k", NS_OP_IN, "2", "8")));
    ck_assert(!intersects(req("k", NS_OP_GT, "4", NULL), req("k", NS_OP_IN, "2", "four")));
    /* Gt 4 and Lt 5 leave no integer: the naive "both are Exists" answer is wrong. */
    ck_assert(!intersects(req("k", NS_OP_GT, "4", NULL), req("k", NS_OP_LT, "5", NULL)));
    ck_assert(intersects(req("k", NS_OP_GT, "4", NULL), req("k", NS_OP_LT, "6", NULL)));
    ck_assert(intersects(req("k", NS_OP_GTE, "5", NULL), req("k", NS_OP_LTE, "5", NULL)));

    ns_requirement a = req("k", NS_OP_GT, "4", NULL), b = req("k", NS_OP_IN, "3", "10"), out;
    ck_assert_int_eq(ns_requirement_intersection(&a, &b, &out), 0);
    char buf[64];
    ck_assert_str_eq(ns_requirement_format(&out, buf, sizeof(buf)), "k In [10]"); /* bounds dropped */
    ns_requirement_free(&out);
    ns_requirement c = req("k", NS_OP_NOT_IN, "7", NULL);
    ck_assert_int_eq(ns_requirement_intersection(&a, &c, &out), 0);
    ck_assert_str_eq(ns_requirement_format(&out, buf, sizeof(buf)), "k NotIn [7] >=5");
    ns_requirement_free(&out);
    ns_requirement_free(&a);
    ns_requirement_free(&b);
    ns_requirement_free(&c);
}
END_TEST

START_TEST(test_set_add_intersects_and_min_values)
{
    ns_requirements s = {0};
    const char *zones[] = {"a", "b", "c"};
    ck_assert_int_eq(ns_requirements_add_op(&s, "zone", NS_OP_IN, zones, 3, 2), 0);
    ck_assert_int_eq(ns_requirements_add_op(&s, "zone", NS_OP_NOT_IN, zones, 1, 0), 0);
    const ns_requirement *z = ns_requirements_get(&s, "zone");
    ck_assert_uint_eq(z->n_values, 2);
    ck_assert_int_eq(z->min_values, 2); /* the larger minValues wins */
    ck_assert(ns_requirements_has_min_values(&s));
    char buf[128];
    ck_assert_str_eq(ns_requirements_format(&s, buf, sizeof(buf)), "zone In [b c] minValues 2");
    ns_requirements copy;
    ck_assert_int_eq(ns_requirements_copy(&s, &copy), 0);
    ck_assert_uint_eq(copy.n, 1);
    ns_requirements_free(&copy);
    ns_requirements_free(&s);
    ns_requirements_free(NULL);
}
END_TEST

/* existing = what a NodePool or node offers; incoming = what the pod asks for. */
static bool compatible(const char *ek, ns_req_op eop, const char *ev, const char *ik, ns_req_op iop, const char *iv,
                       bool well_known, char *reason)
{
    ns_requirements e = {0}, i = {0};
    if (ek)
        ck_assert_int_eq(ns_requirements_add_op(&e, ek, eop, &ev, ev ? 1 : 0, 0), 0);
    ck_assert_int_eq(ns_requirements_add_op(&i, ik, iop, &iv, iv ? 1 : 0, 0), 0);
    ns_compat_opts opts = {.allow_undefined_well_known = well_known};
    bool ok = ns_requirements_compatible(&e, &i, &opts, reason, 256);
    ns_requirements_free(&e);
    ns_requirements_free(&i);
    return ok;
}

START_TEST(test_compatibility)
{
    char reason[256];
    /* A custom label the NodePool does not define cannot be required... */
    ck_assert(!compatible(NULL, 0, NULL, "team", NS_OP_IN, "a", true, reason));
    ck_assert_str_eq(reason, "label \"team\" does not have known values");
    ck_assert(!compatible(NULL, 0, NULL, "team", NS_OP_EXISTS, NULL, true, reason));
    /* ...but NotIn and DoesNotExist are met by leaving it off the node. */
    ck_assert(compatible(NULL, 0, NULL, "team", NS_OP_NOT_IN, "a", true, reason));
    ck_assert(compatible(NULL, 0, NULL, "team", NS_OP_DOES_NOT_EXIST, NULL, true, reason));
    /* Undefined well-known labels are allowed only with the option. */
    ck_assert(compatible(NULL, 0, NULL, "topology.kubernetes.io/zone", NS_OP_IN, "a", true, reason));
    ck_assert(!compatible(NULL, 0, NULL, "topology.kubernetes.io/zone", NS_OP_IN, "a", false, reason));
    /* Empty intersections that are still compatible: both sides can be met without the label. */
    ck_assert(compatible("zone", NS_OP_DOES_NOT_EXIST, NULL, "zone", NS_OP_NOT_IN, "a", false, reason));
    ck_assert(compatible("zone", NS_OP_DOES_NOT_EXIST, NULL, "zone", NS_OP_DOES_NOT_EXIST, NULL, false, reason));
    /* ...but not when one side needs the label. */
    ck_assert(!compatible("zone", NS_OP_DOES_NOT_EXIST, NULL, "zone", NS_OP_IN, "a", false, reason));
    ck_assert_str_eq(reason, "key zone, zone In [a] not in zone DoesNotExist");
    ck_assert(!compatible("zone", NS_OP_IN, "a", "zone", NS_OP_NOT_IN, "a", false, reason));
    ck_assert(compatible("zone", NS_OP_IN, "a", "zone", NS_OP_NOT_IN, "b", false, reason));
    /* Bounded existing vs In values. */
    ck_assert(compatible("cpu", NS_OP_GT, "4", "cpu", NS_OP_IN, "8", false, reason));
    ck_assert(!compatible("cpu", NS_OP_GT, "4", "cpu", NS_OP_IN, "4", false, reason));
    /* Extra well-known keys from the caller. */
    ns_requirements e = {0}, i = {0};
    const char *v = "c5";
    ck_assert_int_eq(ns_requirements_add_op(&i, "karpenter.k8s.aws/instance-family", NS_OP_IN, &v, 1, 0), 0);
    const char *extra[] = {"karpenter.k8s.aws/instance-family"};
    ns_compat_opts opts = {.allow_undefined_well_known = true, .extra_well_known = extra, .n_extra_well_known = 1};
    ck_assert(ns_requirements_compatible(&e, &i, &opts, NULL, 0));
    ck_assert(!ns_requirements_compatible(&e, &i, NULL, NULL, 0));
    ns_requirements_free(&i);
}
END_TEST

START_TEST(test_match_labels)
{
    ns_label labels[] = {{"zone", "a"}, {"cpu", "8"}};
    ns_requirements s = {0};
    char reason[256];
    const char *v = "b";
    ck_assert(ns_requirements_match_labels(&s, labels, 2, NULL, 0));
    ck_assert_int_eq(ns_requirements_add_op(&s, "team", NS_OP_NOT_IN, &v, 1, 0), 0); /* missing label: fine */
    ck_assert_int_eq(ns_requirements_add_op(&s, "gpu", NS_OP_DOES_NOT_EXIST, NULL, 0, 0), 0);
    ck_assert(ns_requirements_match_labels(&s, labels, 2, reason, sizeof(reason)));
    v = "4";
    ck_assert_int_eq(ns_requirements_add_op(&s, "cpu", NS_OP_GT, &v, 1, 0), 0);
    ck_assert(ns_requirements_match_labels(&s, labels, 2, reason, sizeof(reason)));
    ck_assert_int_eq(ns_requirements_add_op(&s, "memory", NS_OP_LT, &v, 1, 0), 0); /* missing label: Lt fails */
    ck_assert(!ns_requirements_match_labels(&s, labels, 2, reason, sizeof(reason)));
    ck_assert_str_eq(reason, "label memory is missing, required by memory Exists <=3");
    ns_requirements_free(&s);
    v = "b";
    ck_assert_int_eq(ns_requirements_add_op(&s, "zone", NS_OP_IN, &v, 1, 0), 0);
    ck_assert(!ns_requirements_match_labels(&s, labels, 2, reason, sizeof(reason)));
    ck_assert_str_eq(reason, "label zone=a does not satisfy zone In [b]");
    ns_requirements_free(&s);
}
END_TEST

START_TEST(test_selector_req_validation)
{
    char *vals[] = {"a", "b"};
    ns_selector_req r = {.key = "k", .op = NS_OP_IN, .values = NULL, .n_values = 0};
    ck_assert_int_eq(ns_selector_req_validate(&r, "spec.requirements[0]"), NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(), "spec.requirements[0]: operator In needs at least one value (key k)");
    r = (ns_selector_req){.key = "k", .op = NS_OP_EXISTS, .values = vals, .n_values = 1};
    ck_assert_int_eq(ns_selector_req_validate(&r, "f"), NS_ERR_INVALID_CONFIG);
    r = (ns_selector_req){.key = "k", .op = NS_OP_LT, .values = vals, .n_values = 1};
    ck_assert_int_eq(ns_selector_req_validate(&r, "f"), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "exactly one integer value"));
    r = (ns_selector_req){.key = "k", .op = NS_OP_IN, .values = vals, .n_values = 2, .min_values = 3};
    ck_assert_int_eq(ns_selector_req_validate(&r, "f"), NS_ERR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ns_error_message(), "minValues 3 needs at least that many values"));
    r.min_values = 2;
    ck_assert_int_eq(ns_selector_req_validate(&r, "f"), 0);
    r.min_values = 51;
    r.op = NS_OP_EXISTS;
    r.n_values = 0;
    ck_assert_int_eq(ns_selector_req_validate(&r, "f"), NS_ERR_INVALID_CONFIG);
}
END_TEST

/* Interned values (a NodeClaim's launch options): the entries are the interned texts, and replacing, copying and
 * freeing them leaves those texts alone (the sanitizer build checks nothing leaks or is freed twice). */
START_TEST(test_selector_values_interned)
{
    char a[] = "m5.large", b[] = "c5.xlarge";
    char *vals[] = {a, b};
    ns_selector_req r = {0}, copy = {0};
    ck_assert_int_eq(ns_selector_req_set_values(&r, vals, 2), 0);
    ck_assert_int_eq(ns_selector_req_set_interned(&r, vals, 2), 0);
    ck_assert_uint_eq(r.n_values, 2);
    ck_assert_ptr_eq(r.values[0], ns_intern("m5.large"));
    ck_assert_ptr_eq(r.values[1], ns_intern("c5.xlarge"));
    a[0] = 'x'; /* the caller's texts were not kept */
    ck_assert_str_eq(r.values[0], "m5.large");
    r.key = strdup("node.kubernetes.io/instance-type");
    ck_assert_int_eq(ns_selector_req_copy(&r, &copy), 0);
    ck_assert_str_eq(copy.values[1], "c5.xlarge");
    ck_assert_ptr_ne(copy.values[1], r.values[1]);
    ns_selector_req_free(&r);
    ck_assert_str_eq(ns_intern("c5.xlarge"), "c5.xlarge");
    ck_assert_int_eq(ns_selector_req_set_interned(&copy, NULL, 0), 0);
    ck_assert_uint_eq(copy.n_values, 0);
    ns_selector_req_free(&copy);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model-requirements");
    TCase *tc = tcase_create("requirements");
    tcase_add_test(tc, test_every_operator);
    tcase_add_test(tc, test_operator_names_and_format);
    tcase_add_test(tc, test_legacy_aliases_normalised);
    tcase_add_test(tc, test_well_known_and_restricted);
    tcase_add_test(tc, test_intersection);
    tcase_add_test(tc, test_set_add_intersects_and_min_values);
    tcase_add_test(tc, test_compatibility);
    tcase_add_test(tc, test_selector_values_interned);
    tcase_add_test(tc, test_match_labels);
    tcase_add_test(tc, test_selector_req_validation);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
