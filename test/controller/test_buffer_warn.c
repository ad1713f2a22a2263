/* When the controller warns about a CapacityBuffer's spec (controller/buffer_status.h), a scalableRef that does not
 * resolve or a percentage beside a podTemplateRef: once per generation of the buffer, not on every watch event that
 * decodes it again (its own status writes among them), again when its spec changes (a new generation) and still has
 * something to warn about, never for a buffer that has nothing. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "controller/buffer_status.h"

START_TEST(once_per_generation)
{
    ns_buffer b = {.meta.generation = 1};
    bool warned = false;
    int64_t generation = 0;
    b.resolution_failed = "unsupported kind \"Job\"";
    ck_assert(ns_buffer_warn_due(&warned, &generation, &b));
    /* every later pass over the same generation: its status write, the Provisioning condition, a relist */
    for (int i = 0; i < 5; i++)
        ck_assert(!ns_buffer_warn_due(&warned, &generation, &b));
    /* the spec changed (scalableRef to another unsupported group): a new generation, warned again once */
    b.meta.generation = 2;
    b.resolution_failed = "unsupported scalableRef API group \"batch\"";
    ck_assert(ns_buffer_warn_due(&warned, &generation, &b));
    ck_assert(!ns_buffer_warn_due(&warned, &generation, &b));
    /* a buffer that resolves is never warned about, whatever its generation */
    b.meta.generation = 3;
    b.resolution_failed = NULL;
    ck_assert(!ns_buffer_warn_due(&warned, &generation, &b));
    /* failing again at a later generation warns */
    b.meta.generation = 4;
    b.resolution_failed = "unsupported kind \"CronJob\"";
    ck_assert(ns_buffer_warn_due(&warned, &generation, &b));
}
END_TEST

START_TEST(ignored_percentage)
{
    char tmpl[] = "web";
    ns_buffer b = {.meta.generation = 1, .pod_template = tmpl, .has_replicas = true, .replicas = 2};
    bool warned = false;
    int64_t generation = 0;
    ck_assert(!ns_buffer_warn_due(&warned, &generation, &b)); /* a podTemplateRef with replicas alone */
    b.meta.generation = 2;
    b.has_percentage = true;
    b.percentage = 50;
    ck_assert(ns_buffer_warn_due(&warned, &generation, &b));
    ck_assert(!ns_buffer_warn_due(&warned, &generation, &b));
    /* a percentage with a scalableRef is what it is for: nothing to warn about */
    b.meta.generation = 3;
    b.pod_template = NULL;
    b.scalable_kind = "Deployment";
    ck_assert(!ns_buffer_warn_due(&warned, &generation, &b));
}
END_TEST

START_TEST(generation_zero_warned_once)
{
    /* a buffer whose generation is not given (0) is still warned about once, not taken as already warned */
    ns_buffer b = {.resolution_failed = "unsupported kind \"Job\""};
    bool warned = false;
    int64_t generation = 0;
    ck_assert(ns_buffer_warn_due(&warned, &generation, &b));
    ck_assert(!ns_buffer_warn_due(&warned, &generation, &b));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("buffer-warn");
    TCase *tc = tcase_create("warn");
    tcase_add_test(tc, once_per_generation);
    tcase_add_test(tc, ignored_percentage);
    tcase_add_test(tc, generation_zero_warned_once);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
