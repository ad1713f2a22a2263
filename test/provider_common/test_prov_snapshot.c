/* The catalog cache the aws, alibaba and azure providers share: one fetch per TTL, a replaced copy kept for the
 * calls still reading it and freed by the last of them, a failed fetch keeping the current copy. */
#include <check.h>
#include <stdlib.h>

#include "prov_snapshot.h"

typedef struct fake {
    int64_t now;
    int fetches, frees;
    int fail_next; /* the next fetch returns this error */
    int64_t fetch_takes_ms;
} fake;

typedef struct value {
    int serial;
    prov_snapshot snap; /* not the first member: prov_snapshot_of must subtract the offset */
} value;

static fake f;

static int64_t now_ms(ns_host_ctx *ctx)
{
    (void)ctx;
    return f.now;
}

static int fetch(void *owner, prov_snapshot **out)
{
    fake *k = owner;
    if (k->fail_next) {
        int rc = k->fail_next;
        k->fail_next = 0;
        return rc;
    }
    k->now += k->fetch_takes_ms;
    value *v = calloc(1, sizeof(*v));
    ck_assert_ptr_nonnull(v);
    v->serial = ++k->fetches;
    *out = &v->snap;
    return NS_OK;
}

static void free_value(prov_snapshot *snap)
{
    f.frees++;
    free(prov_snapshot_of(snap, value, snap));
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ns_host host;
static prov_snapshot_cache cache;

static void setup(void)
{
    f = (fake){.now = 1000000};
    host = (ns_host){.struct_size = sizeof(host), .now_ms = now_ms};
    cache = (prov_snapshot_cache){&lock, NULL, 60000, fetch, free_value, &f, &host, NULL};
}

static void teardown(void)
{
    prov_snapshot_cache_clear(&cache);
    ck_assert_int_eq(f.frees, f.fetches);
}

static int serial_of(prov_snapshot *s)
{
    return prov_snapshot_of(s, value, snap)->serial;
}

START_TEST(shared_within_ttl_refetched_after)
{
    prov_snapshot *a = NULL, *b = NULL, *c = NULL;
    ck_assert_int_eq(prov_snapshot_acquire(&cache, &a), NS_OK);
    f.now += 59999;
    ck_assert_int_eq(prov_snapshot_acquire(&cache, &b), NS_OK);
    ck_assert_ptr_eq(a, b);
    ck_assert_int_eq(f.fetches, 1);
    prov_snapshot_release(&cache, a);
    prov_snapshot_release(&cache, b);
    f.now += 1;
    ck_assert_int_eq(prov_snapshot_acquire(&cache, &c), NS_OK);
    ck_assert_int_eq(serial_of(c), 2);
    ck_assert_int_eq(f.frees, 1); /* the first copy had no reader left */
    prov_snapshot_release(&cache, c);
    ck_assert_int_eq(f.frees, 1); /* the current copy stays cached */
}
END_TEST

START_TEST(replaced_copy_lives_until_its_last_reader_releases)
{
    prov_snapshot *old = NULL, *fresh = NULL;
    ck_assert_int_eq(prov_snapshot_acquire(&cache, &old), NS_OK);
    f.now += 60000;
    ck_assert_int_eq(prov_snapshot_acquire(&cache, &fresh), NS_OK);
    ck_assert_ptr_ne(old, fresh);
    ck_assert_int_eq(f.frees, 0);
    ck_assert_int_eq(serial_of(old), 1); /* still readable */
    prov_snapshot_release(&cache, old);
    ck_assert_int_eq(f.frees, 1);
    prov_snapshot_release(&cache, fresh);
    ck_assert_ptr_eq(cache.current, fresh);
}
END_TEST

START_TEST(age_counts_from_the_end_of_the_fetch)
{
    f.fetch_takes_ms = 30000; /* a slow cloud must not eat into the TTL */
    prov_snapshot *a = NULL, *b = NULL;
    ck_assert_int_eq(prov_snapshot_acquire(&cache, &a), NS_OK);
    f.now += 59999;
    ck_assert_int_eq(prov_snapshot_acquire(&cache, &b), NS_OK);
    ck_assert_ptr_eq(a, b);
    prov_snapshot_release(&cache, a);
    prov_snapshot_release(&cache, b);
}
END_TEST

START_TEST(failed_fetch_keeps_the_current_copy)
{
    prov_snapshot *a = NULL, *b = (prov_snapshot *)&f, *c = NULL;
    ck_assert_int_eq(prov_snapshot_acquire(&cache, &a), NS_OK);
    prov_snapshot_release(&cache, a);
    f.now += 60000;
    f.fail_next = NS_ERR_THROTTLED;
    ck_assert_int_eq(prov_snapshot_acquire(&cache, &b), NS_ERR_THROTTLED);
    ck_assert_ptr_eq(b, (prov_snapshot *)&f); /* untouched */
    ck_assert_ptr_eq(cache.current, a);
    ck_assert_int_eq(f.frees, 0);
    ck_assert_int_eq(prov_snapshot_acquire(&cache, &c), NS_OK); /* the next call tries again */
    ck_assert_int_eq(serial_of(c), 2);
    prov_snapshot_release(&cache, c);
}
END_TEST

START_TEST(expire_forces_the_next_fetch)
{
    prov_snapshot *a = NULL, *b = NULL;
    ck_assert_int_eq(prov_snapshot_acquire(&cache, &a), NS_OK);
    prov_snapshot_release(&cache, a);
    prov_snapshot_expire(&cache);
    ck_assert_int_eq(prov_snapshot_acquire(&cache, &b), NS_OK);
    ck_assert_int_eq(serial_of(b), 2);
    prov_snapshot_release(&cache, b);
    prov_snapshot_release(&cache, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("prov_snapshot");
    TCase *tc = tcase_create("cache");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, shared_within_ttl_refetched_after);
    tcase_add_test(tc, replaced_copy_lives_until_its_last_reader_releases);
    tcase_add_test(tc, age_counts_from_the_end_of_the_fetch);
    tcase_add_test(tc, failed_fetch_keeps_the_current_copy);
    tcase_add_test(tc, expire_forces_the_next_fetch);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_ENV);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
