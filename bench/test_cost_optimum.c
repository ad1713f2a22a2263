/*
 * The cost benchmark's LP lower bound (cost_optimum.c, co_lp_bound) against the optimum side it stands in for at
 * scale, on 80 seeded small scenarios: instance families priced linearly in size with pod capacities that are not
 * (so the scaled dominance has types to drop), 2 to 4 pod groups of 1 to 16 pods (few pods are where dropping a small
 * type would be wrong), some of the same shape. The bound must never exceed the exact integer optimum (co_exact) nor
 * the LP relaxation over every maximal pattern (co_exact_lp, GLPK on the full enumeration, no column generation), and
 * once converged it must be that LP optimum within the stated 0.2%.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cost_optimum.h"

#define MI (1024 * 1024)

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

typedef struct scen {
    co_type types[16];
    co_group groups[4];
    size_t nt, ng;
} scen;

/* 2 or 3 families of sizes 1, 2, 4 and 8, pods 4 to 18 growing slower than size, sometimes a discount for the
 * larger sizes; pods of 250m to 2 cpu and 256 MiB to 4 GiB. */
static void make(scen *s, uint64_t seed)
{
    uint64_t r = seed * 2654435761u + 5;
    memset(s, 0, sizeof(*s));
    size_t nf = 2 + rng_next(&r) % 2;
    for (size_t f = 0; f < nf; f++) {
        int64_t cpu = 1000 * (int64_t)(1 + rng_next(&r) % 2), gib = 1 + (int64_t)(rng_next(&r) % 4);
        double price = 0.0125 * (double)(1 + rng_next(&r) % 8);
        bool discount = rng_next(&r) % 3 == 0;
        for (int64_t m = 1; m <= 8; m *= 2)
            s->types[s->nt++] = (co_type){cpu * m, gib * m * 1024 * MI, m == 1 ? 4 : m == 2 ? 6 : m == 4 ? 10 : 18,
                                          price * (double)m * (discount && m > 2 ? 0.97 : 1)};
    }
    static const int64_t cpus[] = {250, 500, 1000, 2000}, mibs[] = {256, 512, 1024, 2048, 4096};
    s->ng = 2 + rng_next(&r) % 3;
    int64_t most = rng_next(&r) % 2 ? 6 : 16;
    for (size_t g = 0; g < s->ng; g++) {
        s->groups[g] = (co_group){cpus[rng_next(&r) % 4], mibs[rng_next(&r) % 5] * MI, 1 + (int64_t)(rng_next(&r) % most)};
        if (g > 0 && rng_next(&r) % 3 == 0) /* a second group of the same shape, which the bound merges */
            s->groups[g].cpu = s->groups[g - 1].cpu, s->groups[g].mem = s->groups[g - 1].mem;
    }
}

START_TEST(bound_below_optimum_and_equal_to_lp_when_converged)
{
    size_t solved = 0, converged_n = 0, dropped = 0;
    for (uint64_t seed = 1; seed <= 80; seed++) {
        scen s;
        make(&s, seed);
        double bound = 0, opt = 0, lp = 0;
        int converged = 0;
        co_lp_stats st;
        ck_assert_int_eq(co_lp_bound(s.types, s.nt, s.groups, s.ng, 60, &bound, &converged, &st), 0);
        dropped += s.nt - st.types_used;
        int r_lp = co_exact_lp(s.types, s.nt, s.groups, s.ng, 300000, 60, &lp);
        int r_opt = co_exact(s.types, s.nt, s.groups, s.ng, 300000, 2, &opt);
        ck_assert_int_ge(r_lp, 0);
        ck_assert_int_ge(r_opt, 0);
        if (r_opt == 0)
            ck_assert_msg(bound <= opt * (1 + 1e-9), "seed %llu: bound %.6f above the optimum %.6f",
                          (unsigned long long)seed, bound, opt);
        if (r_lp == 0) {
            solved++;
            ck_assert_msg(bound <= lp * (1 + 1e-9), "seed %llu: bound %.6f above the LP optimum %.6f",
                          (unsigned long long)seed, bound, lp);
            if (converged) {
                converged_n++;
                ck_assert_msg(bound >= lp * (1 - 2e-3) - 1e-9, "seed %llu: converged bound %.6f, LP optimum %.6f",
                              (unsigned long long)seed, bound, lp);
            }
        }
    }
    /* the check must have had something to check: most scenarios enumerable, converged, with types dropped */
    ck_assert_uint_ge(solved, 60);
    ck_assert_uint_ge(converged_n, solved - 5);
    ck_assert_uint_gt(dropped, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cost-optimum");
    TCase *tc = tcase_create("lp-bound");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, bound_below_optimum_and_equal_to_lp_when_converged);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
