/* The HTML report and its SVG chart, rendered from report documents built here. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "errors/ns_error.h"
#include "report/report.h"

/* samples: time_s, nodes, cost triples. */
static cJSON *make_doc(const double *samples, size_t n)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "timeline", "examples/t.yaml");
    cJSON_AddStringToObject(doc, "description", "scale <up> & down");
    cJSON_AddStringToObject(doc, "start_time", "2026-01-01T00:00:00.000Z");
    cJSON_AddNumberToObject(doc, "end_s", n ? samples[3 * (n - 1)] : 0);
    cJSON *series = cJSON_AddArrayToObject(doc, "cost_over_time");
    for (size_t i = 0; i < n; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddNumberToObject(s, "time_s", samples[3 * i]);
        cJSON_AddNumberToObject(s, "nodes", samples[3 * i + 1]);
        cJSON_AddNumberToObject(s, "cost_per_hour", samples[3 * i + 2]);
        cJSON_AddItemToArray(series, s);
    }
    cJSON *steps = cJSON_AddArrayToObject(doc, "steps");
    for (int i = 1; i <= 3; i++) {
        cJSON *s = cJSON_CreateObject(), *state = cJSON_CreateObject(), *inv = cJSON_CreateObject();
        cJSON_AddNumberToObject(s, "index", i);
        cJSON_AddNumberToObject(s, "line", 2 * i);
        cJSON_AddNumberToObject(s, "time_s", i == 3 ? 60 : 0);
        cJSON_AddStringToObject(s, "description", "scale Deployment default/inflate to 10 replicas");
        cJSON_AddNumberToObject(state, "time_s", i == 3 ? 60 : 0);
        cJSON_AddNumberToObject(state, "pods_placed", 10);
        cJSON_AddNumberToObject(state, "cost_per_hour", 0.5);
        cJSON_AddBoolToObject(inv, "ok", i != 2);
        cJSON *v = cJSON_AddArrayToObject(inv, "violations");
        if (i == 2)
            cJSON_AddItemToArray(v, cJSON_CreateString("PodDisruptionBudget default/web violated"));
        cJSON_AddItemToObject(state, "invariants", inv);
        cJSON *nodes = cJSON_AddArrayToObject(state, "nodes"), *node = cJSON_CreateObject();
        cJSON_AddStringToObject(node, "name", "default-abcde");
        cJSON_AddStringToObject(node, "instance_type", "m5.large");
        cJSON_AddNumberToObject(node, "price_per_hour", 0.5);
        cJSON_AddItemToArray(nodes, node);
        cJSON_AddItemToObject(s, "state", state);
        cJSON_AddItemToArray(steps, s);
    }
    cJSON *decisions = cJSON_AddArrayToObject(doc, "decisions"), *d = cJSON_CreateObject();
    cJSON_AddNumberToObject(d, "time_s", 31);
    cJSON_AddStringToObject(d, "message", "disrupting node(s)");
    cJSON_AddStringToObject(d, "method", "emptiness");
    cJSON_AddStringToObject(d, "reason", "<script>alert(1)</script>");
    cJSON_AddItemToArray(decisions, d);
    return doc;
}

static char *render(const cJSON *doc, int (*fn)(FILE *, const cJSON *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_eq(fn(fp, doc), 0);
    fclose(fp);
    return buf;
}

/* The points attribute of the polyline of class cls, copied. */
static char *points_of(const char *svg, const char *cls)
{
    char key[64];
    snprintf(key, sizeof(key), "<polyline class=\"%s\"", cls);
    const char *p = strstr(svg, key);
    ck_assert_ptr_nonnull(p);
    p = strstr(p, "points=\"");
    ck_assert_ptr_nonnull(p);
    p += strlen("points=\"");
    const char *end = strchr(p, '"');
    return strndup(p, (size_t)(end - p));
}

static size_t count_points(const char *points)
{
    size_t n = 0;
    for (const char *p = points; *p; p++)
        n += *p == ',';
    return n;
}

START_TEST(step_lines)
{
    static const double samples[] = {0, 0, 0, 30, 2, 0.2, 90, 3, 0.3, 120, 0, 0};
    cJSON *doc = make_doc(samples, 4);
    char *svg = render(doc, ns_report_svg_chart);
    char *nodes = points_of(svg, "series-nodes"), *cost = points_of(svg, "series-cost");
    ck_assert_uint_eq(count_points(nodes), 7);
    ck_assert_uint_eq(count_points(cost), 7);
    /* t=0 at the plot's left edge (x 56), zero at its bottom (y 296); 3 nodes at the top of a 0..3 axis; 120 s at
     * the right edge (x 884) over a plot 828 wide. The second point holds the first value until the next sample (a step line). */
    ck_assert_str_eq(nodes, "56.0,296.0 263.0,296.0 263.0,121.3 677.0,121.3 677.0,34.0 884.0,34.0 884.0,296.0");
    /* cost axis 0..0.3 over three gridlines: 0.3 is the top too */
    ck_assert_ptr_nonnull(strstr(cost, "677.0,34.0"));
    ck_assert_ptr_nonnull(strstr(svg, ">$0.30</text>"));
    ck_assert_ptr_nonnull(strstr(svg, ">2m</text>"));
    /* Steps 1 and 2 share time 0 and one marker; step 3 has its own. */
    ck_assert_ptr_nonnull(strstr(svg, "<text class=\"step-label\" x=\"56.0\" y=\"30.0\" text-anchor=\"middle\">1,2</text>"));
    ck_assert_ptr_nonnull(strstr(svg, "<text class=\"step-label\" x=\"470.0\" y=\"30.0\" text-anchor=\"middle\">3</text>"));
    free(nodes);
    free(cost);
    free(svg);
    cJSON_Delete(doc);
}
END_TEST

START_TEST(empty_series)
{
    cJSON *doc = make_doc(NULL, 0);
    char *svg = render(doc, ns_report_svg_chart);
    char *nodes = points_of(svg, "series-nodes");
    ck_assert_str_eq(nodes, "");
    free(nodes);
    free(svg);
    cJSON_Delete(doc);
    /* A document with nothing in it still renders a page. */
    cJSON *empty = cJSON_CreateObject();
    char *page = render(empty, ns_report_html_write);
    ck_assert_ptr_nonnull(strstr(page, "Decision log (0)"));
    free(page);
    cJSON_Delete(empty);
}
END_TEST

START_TEST(page_is_self_contained_and_escaped)
{
    static const double samples[] = {0, 0, 0, 60, 1, 0.5};
    cJSON *doc = make_doc(samples, 2);
    char *page = render(doc, ns_report_html_write);
    ck_assert(strncmp(page, "<!DOCTYPE html>\n", 16) == 0);
    ck_assert_ptr_null(strstr(page, "http"));
    ck_assert_ptr_null(strstr(page, "src="));
    ck_assert_ptr_null(strstr(page, "href="));
    ck_assert_ptr_null(strstr(page, "url("));
    ck_assert_ptr_null(strstr(page, "<script"));
    ck_assert_ptr_nonnull(strstr(page, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    ck_assert_ptr_nonnull(strstr(page, "scale &lt;up&gt; &amp; down"));
    ck_assert_ptr_nonnull(strstr(page, "Decision log (1)"));
    ck_assert_ptr_nonnull(strstr(page, "PodDisruptionBudget default/web violated"));
    ck_assert_ptr_nonnull(strstr(page, "1 step(s) violated"));
    ck_assert_ptr_nonnull(strstr(page, "m5.large"));
    ck_assert(strstr(page, "</html>\n") != NULL && strstr(page, "</html>\n")[8] == '\0');
    free(page);
    cJSON_Delete(doc);
}
END_TEST

START_TEST(report_file_errors)
{
    cJSON *doc = cJSON_CreateObject();
    ck_assert_int_eq(ns_report_html_file("/nonexistent-dir/r.html", doc), NS_ERR_INVALID_CONFIG);
    ck_assert_str_eq(ns_error_message(),
                     "cannot write the report /nonexistent-dir/r.html: No such file or directory");
    cJSON_Delete(doc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("timeline-report");
    TCase *tc = tcase_create("report");
    tcase_add_test(tc, step_lines);
    tcase_add_test(tc, empty_series);
    tcase_add_test(tc, page_is_self_contained_and_escaped);
    tcase_add_test(tc, report_file_errors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
