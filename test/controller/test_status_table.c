/* The status last written per object (controller/status_table.h), which buffer_status.c, nodepool_status.c and
 * nodeclass_status.c keep: an entry found again by its key with what the caller stored in it, a new key a zeroed
 * entry, a body recorded only when it changed, removal keeping the others, and the caller's clear run on each
 * entry freed. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/status_table.h"

typedef struct entry {
    ns_status_entry e;
    int extra;
    char *owned;
} entry;

static int cleared;

static void clear(void *p)
{
    entry *x = p;
    free(x->owned);
    cleared++;
}

START_TEST(find_add_keep_remove)
{
    ns_status_table t;
    ns_status_table_init(&t, sizeof(entry), clear);
    cleared = 0;
    entry *a = ns_status_table_find(&t, "shop/a");
    ck_assert_ptr_nonnull(a);
    ck_assert_str_eq(a->e.key, "shop/a");
    ck_assert(a->e.body == NULL && a->extra == 0 && a->owned == NULL);
    a->extra = 7;
    a->owned = strdup("x");
    /* nothing written yet: any body is a change; once kept, the same body is not */
    char *body = strdup("{\"status\":1}");
    ck_assert(ns_status_changed(&a->e, body));
    ns_status_keep(&a->e, &body);
    ck_assert_ptr_null(body);
    ck_assert(!ns_status_changed(&a->e, "{\"status\":1}"));
    ck_assert(ns_status_changed(&a->e, "{\"status\":2}"));
    /* more keys: entries move as the table grows, and each is found again with what it holds */
    for (int i = 0; i < 40; i++) {
        char key[16];
        snprintf(key, sizeof(key), "k%d", i);
        entry *x = ns_status_table_find(&t, key);
        ck_assert_ptr_nonnull(x);
        x->extra = i;
    }
    ck_assert_uint_eq(t.n, 41);
    a = ns_status_table_find(&t, "shop/a");
    ck_assert_int_eq(a->extra, 7);
    ck_assert_str_eq(a->e.body, "{\"status\":1}");
    ck_assert_uint_eq(t.n, 41);
    /* removing the first puts the last in its place; the rest are still found */
    ns_status_table_remove(&t, 0);
    ck_assert_int_eq(cleared, 1);
    ck_assert_uint_eq(t.n, 40);
    ck_assert_int_eq(((entry *)ns_status_table_at(&t, 0))->extra, 39);
    entry *again = ns_status_table_find(&t, "shop/a");
    ck_assert(again->extra == 0 && again->e.body == NULL); /* a removed object starts over */
    ck_assert_int_eq(((entry *)ns_status_table_find(&t, "k12"))->extra, 12);
    ns_status_table_free(&t);
    ck_assert_int_eq(cleared, 1 + 41);
    ck_assert_uint_eq(t.n, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("status-table");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, find_add_keep_remove);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
