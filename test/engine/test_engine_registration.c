/* The registration TTL: a claim whose node never registers is deleted after 15 minutes (its instance terminated)
 * and its pods are re-planned; a slow but timely registration is kept. The simulated kubelet's Node turns Ready in
 * an order a control plane's node lifecycle controller leaves alone, and the Nodes' writes go out at once. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock/ns_clock.h"
#include "engine/write_jobs.h"
#include "engine_fixture.h"

#define WEB2                                                                                                           \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n"                            \
    "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n" EFX_TOLERATE \
    "      containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n"

START_TEST(test_never_registers)
{
    ns_engine_config cfg;
    ns_engine_config_default(&cfg);
    cfg.registration_delay_ms = -1;
    efx *x = efx_new(EFX_BASE, WEB2, &cfg);
    efx_step(x);
    char a[128];
    snprintf(a, sizeof(a), "%s", efx_claim(x, 0)->meta.name);
    ck_assert_uint_eq(efx_instances(x), 1);
    efx_run_for(x, EFX_S(15 * 60) - 1000);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_REGISTRATION_TIMEOUT, NULL), 0);
    ck_assert_ptr_nonnull(ns_cluster_find_nodeclaim(x->cluster, a));
    efx_run_for(x, EFX_S(1));
    const ns_decision *d = efx_first(x, NS_DECISION_REGISTRATION_TIMEOUT, a);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->time_ms - EFX_T0, EFX_S(15 * 60));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_TERMINATED_INSTANCE, a), 1);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_DELETED_NODECLAIM, a), 1);
    ck_assert_ptr_null(ns_cluster_find_nodeclaim(x->cluster, a));
    /* The pods were re-planned in the same step onto a new claim, with a new instance. */
    ck_assert_uint_eq(x->cluster->n_nodeclaims, 1);
    ck_assert_str_ne(efx_claim(x, 0)->meta.name, a);
    ck_assert_uint_eq(efx_instances(x), 1);
    ck_assert_uint_eq(efx_pending(x), 2);
    efx_free(x);
}
END_TEST

START_TEST(test_slow_registration_within_ttl)
{
    ns_engine_config cfg;
    ns_engine_config_default(&cfg);
    cfg.registration_delay_ms = EFX_S(14 * 60);
    efx *x = efx_new(EFX_BASE, WEB2, &cfg);
    efx_run_for(x, EFX_S(15 * 60));
    ck_assert_uint_eq(efx_count(x, NS_DECISION_REGISTRATION_TIMEOUT, NULL), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_REGISTERED_NODECLAIM, NULL), 1);
    ck_assert_uint_eq(efx_pending(x), 0);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    efx_free(x);
}
END_TEST

/* kube-controller-manager's node lifecycle controller, as a controller watching the cluster sees it: a Node whose
 * status is not Ready gets the not-ready NoSchedule taint back whenever it is taken off (its removal once the Node is
 * Ready comes on a later pass, outside this test). The other writes pass through. */
static const ns_cluster_writes_ops *lifecycle_inner;
static ns_cluster_writes_ops lifecycle_ops;

static int lifecycle_remove_node_taint(void *ctx, ns_node *node, const char *key, const char *effect)
{
    static const ns_taint not_ready = {NS_TAINT_NOT_READY_KEY, NULL, NS_EFFECT_NO_SCHEDULE};
    int rc = lifecycle_inner->remove_node_taint(ctx, node, key, effect);
    if (rc == NS_OK && !node->ready && strcmp(key, NS_TAINT_NOT_READY_KEY) == 0)
        rc = lifecycle_inner->add_node_taint(ctx, node, &not_ready);
    return rc;
}

static bool initialized(efx *x)
{
    return efx_initialized(x) == 1;
}

/* The Node reports Ready before the not-ready taint comes off, so the controller above does not put it back: the
 * claim is initialized, untainted, and takes both pods. Taken off first (as before), the taint came back, the claim
 * never initialized, and in controller-e2e Test10 a round in that window launched a claim too many. */
START_TEST(test_ready_before_untainted)
{
    efx *x = efx_new(EFX_BASE, WEB2, NULL);
    ns_cluster_writes saved = x->engine->writes;
    lifecycle_inner = saved.ops;
    lifecycle_ops = *saved.ops;
    lifecycle_ops.remove_node_taint = lifecycle_remove_node_taint;
    ns_engine_set_writes(x->engine, &(ns_cluster_writes){&lifecycle_ops, saved.ctx});
    bool ok = efx_run_until(x, initialized, EFX_S(120));
    ns_engine_set_writes(x->engine, &saved);
    ck_assert_msg(ok, "the NodeClaim was not initialized within 120 s");
    const ns_node *n = efx_node_of(x, efx_claim(x, 0));
    ck_assert_ptr_nonnull(n);
    ck_assert(n->ready);
    for (size_t i = 0; i < n->n_taints; i++)
        ck_assert_str_ne(n->taints[i].key, NS_TAINT_NOT_READY_KEY);
    char name[256];
    snprintf(name, sizeof(name), "%s", n->meta.name);
    efx_run_for(x, EFX_S(5));
    ck_assert_uint_eq(efx_pending(x), 0);
    ck_assert_uint_eq(efx_pods_on(x, name), 2);
    ck_assert_uint_eq(efx_count(x, NS_DECISION_CREATED_NODECLAIM, NULL), 1);
    efx_free(x);
}
END_TEST

#define WEB3_APART                                                                                                     \
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n"                            \
    "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n" EFX_TOLERATE \
    "      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution:\n"                             \
    "        [{labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}]}}\n"                    \
    "      containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n"

/* A store whose writes wait on a slow API server, as the controller's does: its concurrently op runs the jobs on the
 * threads the Kubernetes store uses (engine/write_jobs.h), and within such a batch a Node status write or a NodeClaim
 * update waits until `expect` writes of its kind are in flight at once (or, when they come one at a time, gives up
 * waiting after a while). Every write then reaches the in-memory store, which is not thread-safe, one at a time. The
 * most in flight at once is what the test looks at, not how long anything took. */
enum { SLOW_NODE_STATUS, SLOW_CLAIM_UPDATE, SLOW_KINDS };
static struct {
    ns_cluster_writes inner;
    pthread_mutex_t lock;
    pthread_cond_t more;
    bool in_batch;
    size_t expect, in_flight[SLOW_KINDS], max_in_flight[SLOW_KINDS];
} slow = {.lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER};
static ns_cluster_writes_ops slow_ops;

static int slow_concurrently(void *ctx, size_t n, int (*job)(void *arg, size_t i), void *arg)
{
    (void)ctx;
    slow.in_batch = true;
    int rc = ns_write_jobs_run(n, NS_WRITE_JOBS_THREADS, INT64_MAX, job, arg);
    slow.in_batch = false;
    return rc;
}

/* Called with slow.lock held: a write of kind k of a batch waits for `expect` of its kind to be in flight. */
static void slow_wait(int k)
{
    if (!slow.in_batch)
        return;
    if (++slow.in_flight[k] > slow.max_in_flight[k])
        slow.max_in_flight[k] = slow.in_flight[k];
    pthread_cond_broadcast(&slow.more);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    while (slow.in_flight[k] < slow.expect && pthread_cond_timedwait(&slow.more, &slow.lock, &until) == 0)
        ;
}

static void slow_done(int k)
{
    if (slow.in_batch)
        slow.in_flight[k]--;
    pthread_mutex_unlock(&slow.lock);
}

static int slow_update_node_status(void *ctx, ns_node *node)
{
    (void)ctx;
    pthread_mutex_lock(&slow.lock);
    slow_wait(SLOW_NODE_STATUS);
    int rc = slow.inner.ops->update_node_status(slow.inner.ctx, node);
    slow_done(SLOW_NODE_STATUS);
    return rc;
}

static int slow_update_nodeclaim(void *ctx, ns_nodeclaim *claim)
{
    (void)ctx;
    pthread_mutex_lock(&slow.lock);
    slow_wait(SLOW_CLAIM_UPDATE);
    int rc = slow.inner.ops->update_nodeclaim(slow.inner.ctx, claim);
    slow_done(SLOW_CLAIM_UPDATE);
    return rc;
}

/* The other writes jobs make reach the in-memory store one at a time too. */
#define SLOW_LOCKED(op, params, args)                                                                                  \
    static int slow_##op params                                                                                        \
    {                                                                                                                  \
        (void)ctx;                                                                                                     \
        pthread_mutex_lock(&slow.lock);                                                                                \
        int rc = slow.inner.ops->op args;                                                                              \
        pthread_mutex_unlock(&slow.lock);                                                                              \
        return rc;                                                                                                     \
    }
SLOW_LOCKED(create_node, (void *ctx, ns_node *n), (slow.inner.ctx, n))
SLOW_LOCKED(remove_node_taint, (void *ctx, ns_node *n, const char *k, const char *eff), (slow.inner.ctx, n, k, eff))
SLOW_LOCKED(set_node_label, (void *ctx, ns_node *n, const char *k, const char *v), (slow.inner.ctx, n, k, v))
SLOW_LOCKED(set_node_annotation, (void *ctx, ns_node *n, const char *k, const char *v), (slow.inner.ctx, n, k, v))

static bool all_initialized(efx *x)
{
    return efx_initialized(x) == 3;
}

/* Three Nodes turn Ready in one step: their status writes are in flight together, and so are their claims' updates
 * at registration and initialization, so one slow write holds up no other Node (in the controller each is a round
 * trip to the API server; one at a time on the main loop, 20,000 pods' Nodes were not initialized for minutes).
 * Written one after another, at most one of each is in flight. */
START_TEST(test_node_writes_at_once)
{
    efx *x = efx_new(EFX_BASE, WEB3_APART, NULL);
    ns_cluster_writes saved = x->engine->writes;
    slow.inner = saved;
    slow.expect = 3;
    slow_ops = *saved.ops;
    slow_ops.concurrently = slow_concurrently;
    slow_ops.update_node_status = slow_update_node_status;
    slow_ops.update_nodeclaim = slow_update_nodeclaim;
    slow_ops.create_node = slow_create_node;
    slow_ops.remove_node_taint = slow_remove_node_taint;
    slow_ops.set_node_label = slow_set_node_label;
    slow_ops.set_node_annotation = slow_set_node_annotation;
    ns_engine_set_writes(x->engine, &(ns_cluster_writes){&slow_ops, saved.ctx});
    bool ok = efx_run_until(x, all_initialized, EFX_S(120));
    ns_engine_set_writes(x->engine, &saved);
    ck_assert_msg(ok, "the 3 NodeClaims were not initialized within 120 s");
    ck_assert_uint_eq(x->cluster->n_nodes, 3);
    ck_assert_uint_eq(slow.max_in_flight[SLOW_NODE_STATUS], 3);
    ck_assert_uint_eq(slow.max_in_flight[SLOW_CLAIM_UPDATE], 3);
    efx_run_for(x, EFX_S(5));
    ck_assert_uint_eq(efx_pending(x), 0);
    ck_assert_uint_eq(efx_bound(x), 3);
    efx_free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine-registration");
    TCase *tc = tcase_create("registration");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_never_registers);
    tcase_add_test(tc, test_slow_registration_within_ttl);
    tcase_add_test(tc, test_ready_before_untainted);
    tcase_add_test(tc, test_node_writes_at_once);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
