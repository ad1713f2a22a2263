/*
 * Which planned claim takes a pod. Karpenter's Scheduler.add sorts the round's new NodeClaims by pod count before
 * each pod and offers the pod to them in that order (addToInflightNode takes the first that accepts), so the claim
 * with the fewest pods that can hold a pod gets it, not the first one created. Among claims with equal counts
 * Karpenter's order is that of an unstable sort; nodesmith offers the earlier claim first.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/labels.h"
#include "sched_test_util.h"

/* Claim A (zone z-a) gets three 1-cpu pods, claim B (zone z-b) one 900m pod: pods are handled largest cpu first, and
 * their zone selectors keep them apart. The small pods that follow fit on either. */
static void two_claims(sched_env *e, int small_pods)
{
    sched_env_init(e, true);
    fx_pool(e->c, "default", 0, "");
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "a%d", i);
        fx_pod_selector(fx_pod(e->c, name, 1000, FX_GI, "app=a"), NS_LABEL_ZONE "=z-a");
    }
    fx_pod_selector(fx_pod(e->c, "b0", 900, FX_GI, "app=b"), NS_LABEL_ZONE "=z-b");
    for (int i = 0; i < small_pods; i++) {
        char name[16];
        snprintf(name, sizeof(name), "c%d", i);
        fx_pod(e->c, name, 100, 128 * FX_MI, "app=c");
    }
    sched_env_run(e);
    ck_assert_uint_eq(e->r.n_claims, 2);
    ck_assert_uint_eq(e->r.n_unschedulable, 0);
}

START_TEST(the_claim_with_fewer_pods_takes_the_next_pod)
{
    sched_env e;
    two_claims(&e, 2);
    const ns_sched_claim *a = fx_claim_of(e.c, &e.r, "a0"), *b = fx_claim_of(e.c, &e.r, "b0");
    ck_assert_ptr_ne(a, b);
    /* B has 1 pod, then 2: each small pod goes there although A was created first and has room. */
    ck_assert_ptr_eq(fx_claim_of(e.c, &e.r, "c0"), b);
    ck_assert_ptr_eq(fx_claim_of(e.c, &e.r, "c1"), b);
    ck_assert_uint_eq(a->n_pods, 3);
    ck_assert_uint_eq(b->n_pods, 3);
    sched_env_free(&e);
}
END_TEST

START_TEST(claims_with_equal_counts_take_pods_in_turn)
{
    sched_env e;
    two_claims(&e, 6);
    const ns_sched_claim *a = fx_claim_of(e.c, &e.r, "a0"), *b = fx_claim_of(e.c, &e.r, "b0");
    /* c0, c1 -> B (1, 2 < 3); then counts are equal and alternate: c2 -> A (the earlier claim), c3 -> B, c4 -> A,
     * c5 -> B. */
    static const char *const on_a[] = {"c2", "c4"}, *const on_b[] = {"c0", "c1", "c3", "c5"};
    for (size_t i = 0; i < sizeof(on_a) / sizeof(on_a[0]); i++)
        ck_assert_msg(fx_claim_of(e.c, &e.r, on_a[i]) == a, "%s is not on the first claim", on_a[i]);
    for (size_t i = 0; i < sizeof(on_b) / sizeof(on_b[0]); i++)
        ck_assert_msg(fx_claim_of(e.c, &e.r, on_b[i]) == b, "%s is not on the second claim", on_b[i]);
    ck_assert_uint_eq(a->n_pods, 5);
    ck_assert_uint_eq(b->n_pods, 5);
    sched_env_free(&e);
}
END_TEST

/* A claim that cannot take the pod is passed over, however few pods it has. */
START_TEST(a_claim_that_refuses_the_pod_is_passed_over)
{
    sched_env e;
    two_claims(&e, 0);
    fx_pod_selector(fx_pod(e.c, "za", 100, 128 * FX_MI, "app=z"), NS_LABEL_ZONE "=z-a");
    ns_sched_result_free(&e.r);
    sched_env_run(&e);
    ck_assert_ptr_eq(fx_claim_of(e.c, &e.r, "za"), fx_claim_of(e.c, &e.r, "a0"));
    ck_assert_uint_eq(fx_claim_of(e.c, &e.r, "b0")->n_pods, 1);
    sched_env_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sched-claim-order");
    TCase *tc = tcase_create("fewest-pods");
    tcase_add_test(tc, the_claim_with_fewer_pods_takes_the_next_pod);
    tcase_add_test(tc, claims_with_equal_counts_take_pods_in_turn);
    tcase_add_test(tc, a_claim_that_refuses_the_pod_is_passed_over);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
