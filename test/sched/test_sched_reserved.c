/*
 * Capacity reservations counted as Karpenter 1.14's scheduler counts them (ReservationManager, reserved offerings in
 * NodeClaim.offeringsToReserve). Each case is one of Karpenter's "Reserved Instance Types" cases in
 * pkg/controllers/provisioning/scheduling/suite_test.go, written from what it asserts, with the same instance types:
 * large 6 cpu, medium 3 cpu and small 2 cpu, spot and on-demand in three zones, and one reserved offering in z-1 for
 * medium and small (reservations r-medium and r-small, one instance each, cheapest of all). Karpenter's fake cloud
 * provider takes an instance from a reservation at launch and marks the offering unavailable when none is left;
 * next_round() does the same between rounds here.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "errors/ns_error.h"
#include "model/labels.h"
#include "sched_fixture.h"

typedef struct env {
    ns_cluster *c;
    ns_itype_set set, other; /* other: a second pool's own types, when a case gives it some */
    const ns_itype_set *sets[4];
    ns_sched_result r;
} env;

/* One type with spot and on-demand in every zone and n_resv reserved offerings in z-1 (reservation() names them). */
static ns_itype *add_type(ns_itype_set *set, const char *name, int64_t cpu, int n_resv)
{
    double p = (double)cpu / 1000.0;
    char offers[512];
    int n = snprintf(offers, sizeof(offers), "z-1:spot:%.4f,z-1:on-demand:%.4f,z-2:spot:%.4f,z-2:on-demand:%.4f,"
                     "z-3:spot:%.4f,z-3:on-demand:%.4f", p / 3, p, p / 3, p, p / 3, p);
    for (int i = 0; i < n_resv; i++)
        n += snprintf(offers + n, sizeof(offers) - (size_t)n, ",z-1:reserved:%.8f", p / 100000.0);
    return fx_type(set, name, cpu, cpu * FX_MI, 110, "kubernetes.io/arch=amd64,kubernetes.io/os=linux", offers);
}

/* Gives type t's i-th reserved offering reservation id and count (available while count > 0, as Karpenter's fake
 * provider marks it). */
static void reservation(ns_itype_set *set, const char *type, size_t i, const char *id, int64_t count)
{
    ns_itype *t = (ns_itype *)ns_itype_set_find(set, type);
    ck_assert_ptr_nonnull(t);
    for (size_t o = 0; o < t->n_offerings; o++) {
        ns_itype_offering *of = &t->offerings[o];
        if (strcmp(of->capacity_type, NS_CAPACITY_RESERVED) != 0 || i--)
            continue;
        free(of->reservation_id);
        of->reservation_id = strdup(id);
        of->reservation_capacity = count;
        of->available = count > 0;
        return;
    }
    ck_abort_msg("type %s has no such reserved offering", type);
}

static void std_set(ns_itype_set *set)
{
    add_type(set, "large", 6000, 0);
    add_type(set, "medium", 3000, 1);
    add_type(set, "small", 2000, 1);
    reservation(set, "medium", 0, "r-medium", 1);
    reservation(set, "small", 0, "r-small", 1);
}

static void env_init(env *e)
{
    memset(e, 0, sizeof(*e));
    e->c = ns_cluster_new();
    ck_assert_ptr_nonnull(e->c);
    std_set(&e->set);
}

/* One round; pools named in `other_pool` use e->other, the rest e->set. */
static void run_mode(env *e, const char *other_pool, ns_sched_reserved_mode mode)
{
    ns_sched_result_free(&e->r);
    for (size_t i = 0; i < e->c->n_nodepools; i++)
        e->sets[i] = other_pool && strcmp(e->c->nodepools[i]->meta.name, other_pool) == 0 ? &e->other : &e->set;
    ns_sched_input in = {.cluster = e->c, .pool_types = e->sets, .reserved_mode = mode};
    int rc = ns_sched_run(&in, &e->r);
    ck_assert_msg(rc == 0, "scheduling failed (%d): %s", rc, ns_error_message());
}

static void run(env *e, const char *other_pool)
{
    run_mode(e, other_pool, NS_SCHED_RESERVED_STRICT);
}

static void env_free(env *e)
{
    ns_sched_result_free(&e->r);
    ns_itype_set_free(&e->set);
    ns_itype_set_free(&e->other);
    ns_cluster_free(e->c);
}

/* The pods placed this round leave the cluster's pending set (they are bound in Karpenter's test). */
static void drop_placed(env *e)
{
    size_t k = 0;
    for (size_t i = 0; i < e->c->n_pods; i++)
        if (e->r.placement[i] == NS_SCHED_UNPLACED)
            e->c->pods[k++] = e->c->pods[i];
        else
            ns_pod_free(e->c->pods[i]);
    e->c->n_pods = k;
}

/* The claim's launch: its first (cheapest) option's type and capacity type, and the reservation of that offering. */
static const ns_itype_offering *first_offering(const ns_sched_claim *cl)
{
    ck_assert_uint_gt(cl->n_options, 0);
    const ns_sched_option *o = &cl->options[0];
    for (size_t i = 0; i < o->type->n_offerings; i++)
        if (o->type->offerings[i].zone == o->zone && strcmp(o->type->offerings[i].capacity_type, o->capacity_type) == 0)
            return &o->type->offerings[i];
    ck_abort_msg("option without its offering");
    return NULL;
}

/* Asserts the claim launches reserved into `id` (NULL: any held reservation) on `type`, or not reserved when
 * reserved is false; every launch option agrees. */
static void expect_launch(const ns_sched_claim *cl, bool reserved, const char *type, const char *id)
{
    const ns_requirement *ct = ns_requirements_get(&cl->requirements, NS_LABEL_CAPACITY_TYPE);
    ck_assert_ptr_nonnull(ct);
    ck_assert_int_eq(ns_requirement_has(ct, NS_CAPACITY_RESERVED), reserved);
    ck_assert_int_eq(ns_requirement_has(ct, NS_CAPACITY_ON_DEMAND), !reserved);
    for (size_t i = 0; i < cl->n_options; i++)
        ck_assert_int_eq(strcmp(cl->options[i].capacity_type, NS_CAPACITY_RESERVED) == 0, reserved);
    const ns_itype_offering *of = first_offering(cl);
    ck_assert_str_eq(cl->options[0].type->name, type);
    if (reserved && id)
        ck_assert_str_eq(of->reservation_id, id);
}

static size_t n_deferred(const env *e)
{
    size_t n = 0;
    for (size_t i = 0; i < e->r.n_unschedulable; i++)
        n += e->r.unschedulable[i].deferred;
    return n;
}

static ns_pod *anti_pod(env *e, const char *name, const char *reqs)
{
    ns_pod *p = fx_pod(e->c, name, 100, 64 * FX_MI, "app=test");
    fx_pod_affinity(p, NS_LABEL_HOSTNAME, "app=test", true, 0);
    fx_pod_required(p, reqs);
    return p;
}

/* n pods p0.., one per node (anti_pod), that need small. */
static void small_anti_pods(env *e, int n)
{
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        anti_pod(e, name, NS_LABEL_INSTANCE_TYPE " In small");
    }
}

/* Three 1800m pods p0..p2: each fits small or medium alone, all three large. */
static void three_1800m_pods(env *e)
{
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        fx_pod(e->c, name, 1800, 64 * FX_MI, "");
    }
}

/* Pools np-1 and np-2, and one-per-node pods a (in np-1) and b (in np-2) that need small. */
static void a_in_np1_b_in_np2(env *e)
{
    fx_pool(e->c, "np-1", 0, "");
    fx_pool(e->c, "np-2", 0, "");
    anti_pod(e, "a", NS_LABEL_INSTANCE_TYPE " In small;" NS_LABEL_NODEPOOL " In np-1");
    anti_pod(e, "b", NS_LABEL_INSTANCE_TYPE " In small;" NS_LABEL_NODEPOOL " In np-2");
}

/* The next round: the pods placed are bound and reservation `id` (type's i-th) used up. */
static void next_round_with_used(env *e, const char *type, size_t i, const char *id, const char *other_pool)
{
    drop_placed(e);
    reservation(&e->set, type, i, id, 0);
    run(e, other_pool);
}

/* Asserts the round made one claim, launching as expect_launch says. */
static void expect_one_launch(const env *e, bool reserved, const char *type, const char *id)
{
    ck_assert_uint_eq(e->r.n_claims, 1);
    expect_launch(&e->r.claims[0], reserved, type, id);
}

/* "shouldn't fallback to on-demand or spot when compatible reserved offerings are available": three 1800m pods fit
 * small and medium one each; the round's one claim holds both reservations, so one pod goes per round, reserved,
 * until both are used and the last falls back to on-demand or spot on small. */
START_TEST(no_fallback_while_a_compatible_reservation_is_available)
{
    env e;
    env_init(&e);
    fx_pool(e.c, "default", 0, "");
    three_1800m_pods(&e);
    run(&e, NULL);
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_uint_eq(e.r.claims[0].n_pods, 1);
    expect_launch(&e.r.claims[0], true, "small", "r-small");
    ck_assert_uint_eq(e.r.n_unschedulable, 2);
    ck_assert_uint_eq(n_deferred(&e), 2);
    /* The claim may launch into either reservation it holds, and no other type. */
    ck_assert_uint_eq(e.r.claims[0].n_options, 2);
    ck_assert_str_eq(e.r.claims[0].options[1].type->name, "medium");

    next_round_with_used(&e, "small", 0, "r-small", NULL);
    expect_one_launch(&e, true, "medium", "r-medium");
    ck_assert_uint_eq(n_deferred(&e), 1);

    next_round_with_used(&e, "medium", 0, "r-medium", NULL);
    expect_one_launch(&e, false, "small", NULL);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    env_free(&e);
}
END_TEST

/* "should correctly track reservations shared across nodepools": np-1 and np-2 list the same reservation; a pod for
 * each, on small, gets one reserved claim, the other waits, then falls back once the reservation is used. */
START_TEST(a_reservation_shared_by_two_pools_counts_once)
{
    env e;
    env_init(&e);
    a_in_np1_b_in_np2(&e);
    run(&e, NULL);
    expect_one_launch(&e, true, "small", "r-small");
    ck_assert_uint_eq(n_deferred(&e), 1);

    next_round_with_used(&e, "small", 0, "r-small", NULL);
    expect_one_launch(&e, false, "small", NULL);
    env_free(&e);
}
END_TEST

/* "should correctly track reservations for multiple nodepools with distinct reservations for the same instance
 * pool": np-2's small is in its own reservation, so both pods launch reserved at once, into different ones. */
START_TEST(distinct_reservations_of_one_type_count_apart)
{
    env e;
    env_init(&e);
    add_type(&e.other, "small", 2000, 1);
    reservation(&e.other, "small", 0, "r-distinct", 1);
    a_in_np1_b_in_np2(&e);
    run(&e, "np-2");
    ck_assert_uint_eq(e.r.n_claims, 2);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    expect_launch(&e.r.claims[0], true, "small", NULL);
    expect_launch(&e.r.claims[1], true, "small", NULL);
    ck_assert_str_ne(first_offering(&e.r.claims[0])->reservation_id, first_offering(&e.r.claims[1])->reservation_id);
    env_free(&e);
}
END_TEST

/* "should correctly track multiple reservations for the same instance pool": small is also in r-small-2 (two
 * instances). Four one-per-node pods: two claims this round (the first holds both reservations), one the next (one
 * instance left, still held pessimistically by one claim), then on-demand or spot. */
START_TEST(two_reservations_of_one_type_hold_three)
{
    env e;
    memset(&e, 0, sizeof(e));
    e.c = ns_cluster_new();
    add_type(&e.set, "large", 6000, 0);
    add_type(&e.set, "medium", 3000, 1);
    add_type(&e.set, "small", 2000, 2);
    reservation(&e.set, "medium", 0, "r-medium", 1);
    reservation(&e.set, "small", 0, "r-small", 1);
    reservation(&e.set, "small", 1, "r-small-2", 2);
    fx_pool(e.c, "default", 0, "");
    small_anti_pods(&e, 4);
    run(&e, NULL);
    ck_assert_uint_eq(e.r.n_claims, 2);
    for (size_t i = 0; i < 2; i++)
        expect_launch(&e.r.claims[i], true, "small", NULL);
    ck_assert_uint_eq(n_deferred(&e), 2);

    /* One launch went into each reservation: r-small-2 has one instance left. */
    drop_placed(&e);
    reservation(&e.set, "small", 0, "r-small", 0);
    reservation(&e.set, "small", 1, "r-small-2", 1);
    run(&e, NULL);
    expect_one_launch(&e, true, "small", "r-small-2");
    ck_assert_uint_eq(n_deferred(&e), 1);

    drop_placed(&e);
    reservation(&e.set, "small", 1, "r-small-2", 0);
    run(&e, NULL);
    expect_one_launch(&e, false, "small", NULL);
    env_free(&e);
}
END_TEST

/* "shouldn't fallback to a lower weight NodePool if a reserved offering is available": np-primary (weight 100) has
 * r-small, np-fallback (50) its own r-fallback. The second pod waits rather than use the lower pool, then goes to
 * np-primary on-demand or spot. */
START_TEST(no_fallback_to_a_lower_weight_pool)
{
    env e;
    env_init(&e);
    add_type(&e.other, "small", 2000, 1);
    reservation(&e.other, "small", 0, "r-fallback", 1);
    fx_pool(e.c, "np-primary", 100, "");
    fx_pool(e.c, "np-fallback", 50, "");
    anti_pod(&e, "a", NS_LABEL_INSTANCE_TYPE " In small");
    anti_pod(&e, "b", NS_LABEL_INSTANCE_TYPE " In small");
    run(&e, "np-fallback");
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_str_eq(e.c->nodepools[e.r.claims[0].nodepool]->meta.name, "np-primary");
    expect_launch(&e.r.claims[0], true, "small", "r-small");
    ck_assert_uint_eq(n_deferred(&e), 1);
    ck_assert_ptr_nonnull(strstr(e.r.unschedulable[0].reason, "could not be reserved"));

    next_round_with_used(&e, "small", 0, "r-small", "np-fallback");
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_str_eq(e.c->nodepools[e.r.claims[0].nodepool]->meta.name, "np-primary");
    expect_launch(&e.r.claims[0], false, "small", NULL);
    env_free(&e);
}
END_TEST

/* "shouldn't relax preferences when a pod fails to schedule due to a reserved offering error": both pods prefer np-1;
 * np-2 has a reservation of its own. Relaxing would send the second pod to np-2 now; Karpenter defers it instead,
 * and next round it still goes to np-1, on-demand or spot. */
START_TEST(a_deferred_pod_keeps_its_preferences)
{
    env e;
    env_init(&e);
    add_type(&e.other, "small", 2000, 1);
    reservation(&e.other, "small", 0, "r-distinct", 1);
    fx_pool(e.c, "np-1", 0, "");
    fx_pool(e.c, "np-2", 0, "");
    for (int i = 0; i < 2; i++) {
        ns_pod *p = anti_pod(&e, i ? "b" : "a", NS_LABEL_INSTANCE_TYPE " In small");
        fx_pod_preferred(p, 1, NS_LABEL_NODEPOOL " In np-1");
    }
    run(&e, "np-2");
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_str_eq(e.c->nodepools[e.r.claims[0].nodepool]->meta.name, "np-1");
    expect_launch(&e.r.claims[0], true, "small", "r-small");
    ck_assert_uint_eq(n_deferred(&e), 1);

    next_round_with_used(&e, "small", 0, "r-small", "np-2");
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_str_eq(e.c->nodepools[e.r.claims[0].nodepool]->meta.name, "np-1");
    expect_launch(&e.r.claims[0], false, "small", NULL);
    env_free(&e);
}
END_TEST

/* "should handle multiple pods on reserved nodes": two pods that ask for reserved small in z-1 and zonal affinity to
 * each other share one claim, which holds r-small once. */
START_TEST(pods_share_a_reserved_claim)
{
    env e;
    env_init(&e);
    fx_pool(e.c, "np-1", 0, "");
    for (int i = 0; i < 2; i++) {
        ns_pod *p = fx_pod(e.c, i ? "b" : "a", 100, 64 * FX_MI, "app=test");
        fx_pod_required(p, NS_LABEL_INSTANCE_TYPE " In small;" NS_LABEL_NODEPOOL " In np-1;" NS_LABEL_CAPACITY_TYPE
                           " In reserved;" NS_LABEL_ZONE " In z-1");
        fx_pod_affinity(p, NS_LABEL_ZONE, "app=test", false, 0);
    }
    run(&e, NULL);
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_uint_eq(e.r.claims[0].n_pods, 2);
    expect_launch(&e.r.claims[0], true, "small", "r-small");
    env_free(&e);
}
END_TEST

/* Karpenter's default mode (consolidation's simulations, no DisableReservedCapacityFallback): a planned claim takes
 * a pod that leaves it no reservation, and gives its reservations back. The three 1800m pods then share one large
 * node, on-demand or spot, where strict mode placed one reserved pod. */
START_TEST(fallback_mode_lets_a_claim_give_its_reservations_up)
{
    env e;
    env_init(&e);
    fx_pool(e.c, "default", 0, "");
    three_1800m_pods(&e);
    run_mode(&e, NULL, NS_SCHED_RESERVED_FALLBACK);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_uint_eq(e.r.n_claims, 1);
    ck_assert_uint_eq(e.r.claims[0].n_pods, 3);
    expect_launch(&e.r.claims[0], false, "large", NULL);
    env_free(&e);
}
END_TEST

/* With the ReservedCapacity gate off nothing is counted: each one-per-node pod gets a reserved claim of small. */
START_TEST(gate_off_counts_nothing)
{
    env e;
    env_init(&e);
    fx_pool(e.c, "default", 0, "");
    small_anti_pods(&e, 3);
    run_mode(&e, NULL, NS_SCHED_RESERVED_OFF);
    ck_assert_uint_eq(e.r.n_unschedulable, 0);
    ck_assert_uint_eq(e.r.n_claims, 3);
    for (size_t i = 0; i < 3; i++)
        ck_assert_str_eq(e.r.claims[i].options[0].capacity_type, NS_CAPACITY_RESERVED);
    env_free(&e);
}
END_TEST

/* Offerings whose provider states no count (-1) are not counted: every claim may use them. */
START_TEST(uncounted_reservations_are_unlimited)
{
    env e;
    env_init(&e);
    reservation(&e.set, "small", 0, "r-small", -1);
    reservation(&e.set, "medium", 0, "r-medium", -1);
    ns_itype *small = (ns_itype *)ns_itype_set_find(&e.set, "small");
    for (size_t o = 0; o < small->n_offerings; o++)
        small->offerings[o].available = true;
    ns_itype *medium = (ns_itype *)ns_itype_set_find(&e.set, "medium");
    for (size_t o = 0; o < medium->n_offerings; o++)
        medium->offerings[o].available = true;
    fx_pool(e.c, "default", 0, "");
    small_anti_pods(&e, 3);
    run(&e, NULL);
    ck_assert_uint_eq(e.r.n_claims, 3);
    for (size_t i = 0; i < 3; i++)
        ck_assert_str_eq(e.r.claims[i].options[0].capacity_type, NS_CAPACITY_RESERVED);
    env_free(&e);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sched-reserved");
    TCase *tc = tcase_create("reserved");
    tcase_add_test(tc, no_fallback_while_a_compatible_reservation_is_available);
    tcase_add_test(tc, a_reservation_shared_by_two_pools_counts_once);
    tcase_add_test(tc, distinct_reservations_of_one_type_count_apart);
    tcase_add_test(tc, two_reservations_of_one_type_hold_three);
    tcase_add_test(tc, no_fallback_to_a_lower_weight_pool);
    tcase_add_test(tc, a_deferred_pod_keeps_its_preferences);
    tcase_add_test(tc, pods_share_a_reserved_claim);
    tcase_add_test(tc, fallback_mode_lets_a_claim_give_its_reservations_up);
    tcase_add_test(tc, gate_off_counts_nothing);
    tcase_add_test(tc, uncounted_reservations_are_unlimited);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
