/*
 * Zone labels of offerings (ns_offering.labels, ABI 4): copied into the core's instance types, and requirements on
 * their keys rewritten into topology.kubernetes.io/zone ones (cloud/instance_types.c), for every operator.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cloud/instance_types.h"
#include "model/labels.h"
#include "model/requirements.h"

#define ZID "topology.k8s.example/zone-id"

/* Type t1 in zones a (id za), b (id zb) and c (no id); type t2 in zone d (id zd). */
static void build(ns_itype_set *set)
{
    static const ns_label la[] = {{ZID, "za"}}, lb[] = {{ZID, "zb"}}, ld[] = {{ZID, "zd"}};
    const ns_offering o1[] = {
        {.struct_size = sizeof(ns_offering), .zone = "a", .capacity_type = "spot", .available = true, .labels = la,
         .n_labels = 1},
        {.struct_size = sizeof(ns_offering), .zone = "a", .capacity_type = "on-demand", .available = true,
         .labels = la, .n_labels = 1},
        {.struct_size = sizeof(ns_offering), .zone = "b", .capacity_type = "spot", .available = true, .labels = lb,
         .n_labels = 1},
        {.struct_size = sizeof(ns_offering), .zone = "c", .capacity_type = "spot", .available = true},
    };
    const ns_offering o2[] = {{.struct_size = sizeof(ns_offering), .zone = "d", .capacity_type = "spot",
                               .available = true, .labels = ld, .n_labels = 1}};
    ns_instance_type t1 = {.struct_size = sizeof(t1), .name = "t1", .offerings = o1, .n_offerings = 4};
    ns_instance_type t2 = {.struct_size = sizeof(t2), .name = "t2", .offerings = o2, .n_offerings = 1};
    t1.capacity.cpu_milli = t2.capacity.cpu_milli = 1000;
    t1.capacity.memory_bytes = t2.capacity.memory_bytes = 1 << 30;
    t1.capacity.pods = t2.capacity.pods = 10;
    set->n = 2;
    set->items = calloc(2, sizeof(ns_itype));
    ck_assert_int_eq(ns_itype_copy(&t1, &set->items[0]), NS_OK);
    ck_assert_int_eq(ns_itype_copy(&t2, &set->items[1]), NS_OK);
}

/* The zones `reqs` allows after the rewrite, as "a,b", or "-" when the zone requirement is gone. */
static const char *zones_after(ns_zone_labels *z, ns_req_op op, const char *value, const char *zone_in)
{
    static char out[64];
    ns_requirements reqs = {0};
    const char *values[] = {value};
    ck_assert_int_eq(ns_requirements_add_op(&reqs, ZID, op, values, value ? 1 : 0, 0), NS_OK);
    ck_assert_int_eq(ns_requirements_add_op(&reqs, "team", NS_OP_IN, (const char *[]){"web"}, 1, 0), NS_OK);
    if (zone_in)
        ck_assert_int_eq(ns_requirements_add_op(&reqs, NS_LABEL_ZONE, NS_OP_IN, (const char *[]){zone_in}, 1, 0),
                         NS_OK);
    ck_assert_int_eq(ns_zone_labels_rewrite(z, &reqs), NS_OK);
    ck_assert_ptr_null(ns_requirements_get(&reqs, ZID));
    ck_assert_ptr_nonnull(ns_requirements_get(&reqs, "team"));
    const ns_requirement *r = ns_requirements_get(&reqs, NS_LABEL_ZONE);
    out[0] = '\0';
    for (size_t i = 0; r && i < r->n_values; i++)
        strcat(strcat(out, i ? "," : ""), r->values[i]);
    if (!r)
        strcpy(out, "-");
    ns_requirements_free(&reqs);
    return out;
}

START_TEST(test_copied_and_rewritten)
{
    ns_itype_set set = {0};
    build(&set);
    size_t n;
    const ns_label *l = ns_itype_zone_labels(&set.items[0], "b", &n);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(l[0].key, ZID);
    ck_assert_str_eq(l[0].value, "zb");
    ck_assert_ptr_null(ns_itype_zone_labels(&set.items[0], "c", &n));
    ck_assert_int_eq(n, 0);

    const ns_itype_set *sets[] = {&set, NULL};
    ns_zone_labels *z = NULL;
    ck_assert_int_eq(ns_zone_labels_new(sets, 2, &z), NS_OK);
    ck_assert_ptr_nonnull(z);
    ck_assert_str_eq(zones_after(z, NS_OP_IN, "zb", NULL), "b");
    ck_assert_str_eq(zones_after(z, NS_OP_IN, "nowhere", NULL), "");
    ck_assert_str_eq(zones_after(z, NS_OP_NOT_IN, "za", NULL), "b,c,d"); /* c has no ID: NotIn allows it */
    ck_assert_str_eq(zones_after(z, NS_OP_EXISTS, NULL, NULL), "a,b,d");
    ck_assert_str_eq(zones_after(z, NS_OP_DOES_NOT_EXIST, NULL, NULL), "c");
    ck_assert_str_eq(zones_after(z, NS_OP_NOT_IN, "za", "a"), ""); /* intersected with the zone requirement */
    ck_assert_str_eq(zones_after(z, NS_OP_IN, "zd", "d"), "d");

    /* requirements without a zone label key are left as they are */
    ns_requirements reqs = {0};
    ck_assert_int_eq(ns_requirements_add_op(&reqs, "team", NS_OP_IN, (const char *[]){"web"}, 1, 0), NS_OK);
    ck_assert_int_eq(ns_zone_labels_rewrite(z, &reqs), NS_OK);
    ck_assert_int_eq(reqs.n, 1);
    ns_requirements_free(&reqs);
    ns_zone_labels_free(z);
    ns_itype_set_free(&set);
}
END_TEST

START_TEST(test_none_without_labels)
{
    const ns_offering o[] = {{.struct_size = sizeof(ns_offering), .zone = "a", .capacity_type = "spot",
                              .available = true}};
    ns_instance_type t = {.struct_size = sizeof(t), .name = "t", .offerings = o, .n_offerings = 1};
    t.capacity.cpu_milli = 1000;
    t.capacity.memory_bytes = 1 << 30;
    t.capacity.pods = 10;
    ns_itype_set set = {calloc(1, sizeof(ns_itype)), 1};
    ck_assert_int_eq(ns_itype_copy(&t, &set.items[0]), NS_OK);
    const ns_itype_set *sets[] = {&set};
    ns_zone_labels *z = (ns_zone_labels *)1;
    ck_assert_int_eq(ns_zone_labels_new(sets, 1, &z), NS_OK);
    ck_assert_ptr_null(z);
    ns_requirements reqs = {0};
    ck_assert_int_eq(ns_requirements_add_op(&reqs, ZID, NS_OP_IN, (const char *[]){"za"}, 1, 0), NS_OK);
    ck_assert_int_eq(ns_zone_labels_rewrite(NULL, &reqs), NS_OK);
    ck_assert_ptr_nonnull(ns_requirements_get(&reqs, ZID));
    ns_requirements_free(&reqs);
    ns_itype_set_free(&set);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("zone_labels");
    TCase *tc = tcase_create("zone_labels");
    tcase_add_test(tc, test_copied_and_rewritten);
    tcase_add_test(tc, test_none_without_labels);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
