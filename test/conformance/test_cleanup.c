/*
 * Runs last: every instance the run launched is terminated, including what a failed test left behind in the
 * provider's cloud, and list_instances shows none of them.
 */
#include <stdio.h>

#include "conf.h"

START_TEST(test_cleanup)
{
    conf_ids live, all, listed;
    int rc = conf_ledger_live(&live);

    ck_assert_msg(rc == NS_OK, "conformance: %s", conf_last_error());
    for (size_t i = 0; i < live.n; i++) {
        rc = conf_terminate(live.ids[i], NULL);
        CONF_CHECK("cleanup", rc == NS_OK, "terminating %s, left by an earlier test, failed: %s", live.ids[i],
                   conf_last_error());
    }
    rc = conf_ledger_all_since(0, &all);
    ck_assert_msg(rc == NS_OK, "conformance: %s", conf_last_error());
    conf_list(&listed);
    for (size_t i = 0; i < all.n; i++)
        CONF_CHECK("cleanup", !conf_ids_contains(&listed, all.ids[i]),
                   "instance %s, launched by this run, is still listed after the final clean-up", all.ids[i]);
    printf("conformance: clean-up: %zu instances launched in this run, all terminated (%zu left by failed tests)\n",
           all.n, live.n);
    conf_ids_free(&live);
    conf_ids_free(&all);
    conf_ids_free(&listed);
}
END_TEST

Suite *conf_suite_cleanup(void)
{
    Suite *s = suite_create("cleanup");
    TCase *tc = tcase_create("final");

    tcase_add_checked_fixture(tc, conf_setup, conf_teardown);
    tcase_set_timeout(tc, conf_cfg.timeout_s);
    tcase_add_test(tc, test_cleanup);
    suite_add_tcase(s, tc);
    return s;
}
