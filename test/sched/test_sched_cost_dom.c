/*
 * The types cost packing's LP prices patterns on (sched_cost_dom.c): a type is left out only when another holds k
 * copies of anything it holds for the class at no more than k times its price. A family priced linearly in size keeps
 * its largest member only when the class's pods are many; a small type stays when the larger one's pods capacity
 * cannot take k copies of what the small one holds, when the class has too few pods of a group to fill k copies, and
 * when the larger type costs more than k of it.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "sched/sched_cost.h"

#define DIMS (SCHED_PODS + 1)

typedef struct fam {
    sched s;
    int64_t alloc[3][DIMS], req[2][DIMS];
    sched_vec av[3];
    sched_group g[2];
    cost_item items[2];
    cost_cand c[3], out[3];
} fam;

/* Three sizes of one family: 2, 4 and 8 cpu with 4 GiB per cpu, priced 0.1 per 2 cpu; pods capacities as given.
 * One pod group of cpu_m / mem_mi, n pods (a second group of none). */
static void make(fam *f, const int64_t pods[3], int64_t cpu_m, int64_t mem_mi, int64_t n)
{
    memset(f, 0, sizeof(*f));
    f->s.n_dims = DIMS;
    for (size_t t = 0; t < 3; t++) {
        f->alloc[t][SCHED_CPU] = 2000 << t;
        f->alloc[t][SCHED_MEM] = 8192 << t;
        f->alloc[t][SCHED_PODS] = pods[t];
        f->av[t].v = f->alloc[t];
        f->c[t] = (cost_cand){t, 0.1 * (double)(1 << t)};
    }
    for (size_t j = 0; j < 2; j++) {
        f->req[j][SCHED_CPU] = cpu_m;
        f->req[j][SCHED_MEM] = mem_mi;
        f->req[j][SCHED_PODS] = 1;
        f->g[j].req.v = f->req[j];
        f->items[j] = (cost_item){&f->g[j], j == 0 ? n : 0, 0};
    }
}

static size_t kept(fam *f)
{
    size_t n = 99;
    ck_assert_int_eq(sched_cost_undominated(&f->s, f->av, f->c, 3, f->items, 2, f->out, &n), 0);
    return n;
}

START_TEST(linear_family_keeps_its_largest)
{
    fam f;
    static const int64_t pods[3] = {110, 110, 110};
    make(&f, pods, 500, 1024, 200);
    ck_assert_uint_eq(kept(&f), 1);
    ck_assert_uint_eq(f.out[0].type, 2);
}
END_TEST

START_TEST(pods_capacity_keeps_a_small_type)
{
    fam f;
    /* 8 cpu takes 20 pods; 4 cpu holds 32 pods of 125m, and 2 copies do not fit in 20: 4 cpu stays (2 cpu is half
     * of it, and goes) */
    static const int64_t pods[3] = {110, 110, 20};
    make(&f, pods, 125, 128, 1000);
    ck_assert_uint_eq(kept(&f), 2);
    ck_assert_uint_eq(f.out[0].type, 1);
    ck_assert_uint_eq(f.out[1].type, 2);
    /* the same pods capacities with pods of 1 cpu: 4 cpu holds 3, 2 copies fit in 20 pods */
    make(&f, pods, 1000, 1024, 1000);
    ck_assert_uint_eq(kept(&f), 1);
    ck_assert_uint_eq(f.out[0].type, 2);
}
END_TEST

START_TEST(few_pods_keep_the_small_types)
{
    fam f;
    static const int64_t pods[3] = {110, 110, 110};
    /* every size holds the whole group of 3 pods of 500m: 2 copies would ask for 6 */
    make(&f, pods, 500, 1024, 3);
    ck_assert_uint_eq(kept(&f), 3);
    /* 8 pods: 2 cpu holds 4 and 4 cpu 8, so 4 cpu is 2 copies of 2 cpu; 8 cpu would be 2 copies of 4 cpu (16) */
    make(&f, pods, 500, 1024, 8);
    ck_assert_uint_eq(kept(&f), 2);
    ck_assert_uint_eq(f.out[0].type, 1);
    ck_assert_uint_eq(f.out[1].type, 2);
}
END_TEST

START_TEST(a_dearer_large_type_leaves_the_small)
{
    fam f;
    static const int64_t pods[3] = {110, 110, 110};
    make(&f, pods, 500, 1024, 200);
    f.c[1].price = 0.21; /* more than two 2-cpu nodes, and still more than half of 8 cpu's */
    f.c[2].price = 0.41; /* more than four 2-cpu nodes */
    ck_assert_uint_eq(kept(&f), 2);
    ck_assert_uint_eq(f.out[0].type, 0);
    ck_assert_uint_eq(f.out[1].type, 2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-cost-dom");
    TCase *tc = tcase_create("dominance");
    tcase_add_test(tc, linear_family_keeps_its_largest);
    tcase_add_test(tc, pods_capacity_keeps_a_small_type);
    tcase_add_test(tc, few_pods_keep_the_small_types);
    tcase_add_test(tc, a_dearer_large_type_leaves_the_small);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
