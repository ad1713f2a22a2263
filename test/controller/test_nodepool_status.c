/* The NodePool status the controller writes (controller/nodepool_status.h): the pool's NodeClaims counted, and each
 * condition's observedGeneration the pool's metadata.generation, so that an edit of the pool's spec is written again
 * (the status is written only when its text changes). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/nodepool_status.h"
#include "model/cluster.h"
#include "model/labels.h"

static char *status_text(const ns_nodepool *np, const ns_cluster *c)
{
    cJSON *o = ns_nodepool_status_json(np, c, 1000);
    ck_assert_ptr_nonnull(o);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    ck_assert_ptr_nonnull(text);
    return text;
}

/* The observedGeneration of every condition in text, which must all be equal; -1 when none has one. */
static double observed(const char *text)
{
    cJSON *o = cJSON_Parse(text), *k;
    const cJSON *conds = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "status"), "conditions");
    ck_assert_int_eq(cJSON_GetArraySize(conds), 3);
    double g = -2;
    cJSON_ArrayForEach(k, conds) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(k, "observedGeneration");
        double this = cJSON_IsNumber(n) ? n->valuedouble : -1;
        ck_assert_msg(g == -2 || g == this, "%s", text);
        g = this;
    }
    cJSON_Delete(o);
    return g;
}

START_TEST(conditions_carry_the_pools_generation)
{
    ns_cluster *c = ns_cluster_new();
    ns_nodepool *np = ns_nodepool_new();
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(np);
    np->meta.name = strdup("default");
    ck_assert_int_eq(ns_cluster_add_nodepool(c, np), 0);
    ns_nodeclaim *claim = ns_nodeclaim_new();
    ck_assert_ptr_nonnull(claim);
    claim->meta.name = strdup("default-abcde");
    ck_assert_int_eq(ns_labels_set(&claim->meta.labels, "karpenter.sh/nodepool", "default"), 0);
    ck_assert_int_eq(ns_cluster_add_nodeclaim(c, claim), 0);

    /* a pool from a manifest, which has no generation: none written (omitempty) */
    char *text = status_text(np, c);
    ck_assert_msg(strstr(text, "\"nodes\":1"), "%s", text);
    ck_assert_msg(observed(text) == -1, "%s", text);
    free(text);

    np->meta.generation = 2;
    char *before = status_text(np, c);
    ck_assert_msg(observed(before) == 2, "%s", before);
    /* a spec edit moves the generation: what would be written differs, so it is written */
    np->meta.generation = 3;
    char *after = status_text(np, c);
    ck_assert_msg(observed(after) == 3, "%s", after);
    ck_assert_str_ne(before, after);
    free(before);
    free(after);
    ns_cluster_free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("controller-nodepool-status");
    TCase *tc = tcase_create("nodepool-status");
    tcase_add_test(tc, conditions_carry_the_pools_generation);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
