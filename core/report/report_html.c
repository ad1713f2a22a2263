/* The self-contained HTML page of a simulation report: summary, chart, state after each step, decision log. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"
#include "report/report.h"
#include "report/report_util.h"

static const char page_css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1f2937;background:#fff}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}"
    ".sub{color:#6b7280;margin:0 0 16px}"
    ".cards{display:flex;flex-wrap:wrap;gap:10px}"
    ".card{border:1px solid #e5e7eb;border-radius:6px;padding:8px 12px;min-width:120px}"
    ".card b{display:block;font-size:18px}.card span{color:#6b7280;font-size:12px}"
    ".bad{color:#b91c1c}.good{color:#15803d}"
    "table{border-collapse:collapse;font-size:13px;width:100%}"
    "th,td{border-bottom:1px solid #e5e7eb;padding:4px 8px;text-align:left;vertical-align:top}"
    "th{background:#f9fafb;position:sticky;top:0}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}"
    "details{margin:0}summary{cursor:pointer;color:#374151}"
    ".chart{width:100%;max-width:960px;height:auto;font-size:11px}"
    ".chart .plot{fill:#fcfcfd;stroke:#d1d5db}.chart .grid{stroke:#eef0f3}.chart .tick{stroke:#9ca3af}"
    ".chart text{fill:#4b5563}.chart .axis-nodes{fill:#1d4ed8}.chart .axis-cost{fill:#b45309}"
    ".chart .step-marker{stroke:#9ca3af;stroke-dasharray:3 3}.chart .step-label{fill:#6b7280;font-size:10px}"
    ".chart .series-nodes{stroke:#2563eb;stroke-width:2.5;fill:none}"
    ".chart .series-cost{stroke:#d97706;stroke-width:2;stroke-dasharray:7 4;fill:none}";

static void cell(FILE *out, const char *text)
{
    fputs("<td>", out);
    rp_escape(out, text);
    fputs("</td>", out);
}

static void time_cell(FILE *out, double seconds)
{
    char buf[32];
    rp_seconds(seconds, buf, sizeof(buf));
    fprintf(out, "<td class=\"num\">%s</td>", buf);
}

static void card(FILE *out, const char *value, const char *label, const char *cls)
{
    fprintf(out, "<div class=\"card\"><b class=\"%s\">", cls);
    rp_escape(out, value);
    fputs("</b><span>", out);
    rp_escape(out, label);
    fputs("</span></div>\n", out);
}

static bool state_ok(const cJSON *state)
{
    const cJSON *inv = cJSON_GetObjectItemCaseSensitive(state, "invariants");
    return !inv || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(inv, "ok"));
}

static void summary(FILE *out, const cJSON *doc)
{
    const cJSON *steps = rp_array(doc, "steps"), *samples = rp_array(doc, "cost_over_time"), *s;
    double peak_nodes = 0, peak_cost = 0, last_nodes = 0, last_cost = 0;
    cJSON_ArrayForEach(s, samples)
    {
        peak_nodes = fmax(peak_nodes, rp_num(s, "nodes"));
        peak_cost = fmax(peak_cost, rp_num(s, "cost_per_hour"));
        last_nodes = rp_num(s, "nodes");
        last_cost = rp_num(s, "cost_per_hour");
    }
    int violations = 0;
    cJSON_ArrayForEach(s, steps)
    violations += !state_ok(cJSON_GetObjectItemCaseSensitive(s, "state"));
    char buf[64];
    fputs("<div class=\"cards\">\n", out);
    rp_seconds(rp_num(doc, "end_s"), buf, sizeof(buf));
    card(out, buf, "simulated", "");
    snprintf(buf, sizeof(buf), "%d", cJSON_GetArraySize(steps));
    card(out, buf, "steps", "");
    snprintf(buf, sizeof(buf), "%d", cJSON_GetArraySize(rp_array(doc, "decisions")));
    card(out, buf, "decisions", "");
    snprintf(buf, sizeof(buf), "%g / %g", last_nodes, peak_nodes);
    card(out, buf, "nodes at the end / peak", "");
    snprintf(buf, sizeof(buf), "$%.4f / $%.4f", last_cost, peak_cost);
    card(out, buf, "cost per hour at the end / peak", "");
    if (violations)
        snprintf(buf, sizeof(buf), "%d step(s) violated", violations);
    else
        snprintf(buf, sizeof(buf), "held at every step");
    card(out, buf, "invariants", violations ? "bad" : "good");
    fputs("</div>\n", out);
}

static void nodes_table(FILE *out, const cJSON *state)
{
    const cJSON *nodes = rp_array(state, "nodes"), *n;
    if (cJSON_GetArraySize(nodes) == 0) {
        fputs("no nodes", out);
        return;
    }
    fprintf(out, "<details><summary>%d node(s)</summary><table><tr><th>node</th><th>nodepool</th><th>instance "
                 "type</th><th>zone</th><th>capacity</th><th class=\"num\">price/h</th><th class=\"num\">pods</th>"
                 "<th>state</th></tr>\n",
            cJSON_GetArraySize(nodes));
    cJSON_ArrayForEach(n, nodes)
    {
        fputs("<tr>", out);
        cell(out, rp_str(n, "name"));
        cell(out, rp_str(n, "nodepool"));
        cell(out, rp_str(n, "instance_type"));
        cell(out, rp_str(n, "zone"));
        cell(out, rp_str(n, "capacity_type"));
        fprintf(out, "<td class=\"num\">%.4f</td><td class=\"num\">%g</td>", rp_num(n, "price_per_hour"),
                rp_num(n, "pods"));
        cell(out, rp_str(n, "status"));
        fputs("</tr>\n", out);
    }
    fputs("</table></details>", out);
}

static void violations_cell(FILE *out, const cJSON *state)
{
    const cJSON *inv = cJSON_GetObjectItemCaseSensitive(state, "invariants");
    if (state_ok(state)) {
        fputs("<td class=\"good\">ok</td>", out);
        return;
    }
    fputs("<td class=\"bad\">", out);
    const cJSON *v;
    cJSON_ArrayForEach(v, rp_array(inv, "violations"))
    {
        rp_escape(out, cJSON_IsString(v) ? v->valuestring : "");
        fputs("<br>", out);
    }
    fputs("</td>", out);
}

static void steps_table(FILE *out, const cJSON *doc)
{
    fputs("<h2>State after each step</h2>\n<table><tr><th class=\"num\">#</th><th class=\"num\">time</th>"
          "<th>step</th><th class=\"num\">pods placed</th><th class=\"num\">pending</th><th class=\"num\">cost/h"
          "</th><th>nodes</th><th>invariants</th></tr>\n",
          out);
    const cJSON *s;
    cJSON_ArrayForEach(s, rp_array(doc, "steps"))
    {
        const cJSON *state = cJSON_GetObjectItemCaseSensitive(s, "state");
        fprintf(out, "<tr><td class=\"num\">%d</td>", (int)rp_num(s, "index"));
        time_cell(out, rp_num(state, "time_s"));
        fputs("<td>", out);
        if (*rp_str(s, "name")) {
            fputs("<b>", out);
            rp_escape(out, rp_str(s, "name"));
            fputs("</b>: ", out);
        }
        rp_escape(out, rp_str(s, "description"));
        fprintf(out, " <span class=\"sub\">(line %d)</span></td>", (int)rp_num(s, "line"));
        fprintf(out, "<td class=\"num\">%g</td><td class=\"num\">%g</td><td class=\"num\">%.4f</td><td>",
                rp_num(state, "pods_placed"), rp_num(state, "pods_pending"), rp_num(state, "cost_per_hour"));
        nodes_table(out, state);
        fputs("</td>", out);
        violations_cell(out, state);
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
}

static void decisions_table(FILE *out, const cJSON *doc)
{
    const cJSON *decisions = rp_array(doc, "decisions"), *d;
    fprintf(out, "<h2>Decision log (%d)</h2>\n<table class=\"decisions\"><tr><th class=\"num\">time</th>"
                 "<th>decision</th><th>method</th><th>nodes</th><th>node claims</th><th>pods</th><th>reason</th>"
                 "<th>detail</th></tr>\n",
            cJSON_GetArraySize(decisions));
    cJSON_ArrayForEach(d, decisions)
    {
        fputs("<tr>", out);
        time_cell(out, rp_num(d, "time_s"));
        cell(out, rp_str(d, "message"));
        cell(out, rp_str(d, "method"));
        cell(out, rp_str(d, "nodes"));
        cell(out, rp_str(d, "nodeclaims"));
        cell(out, rp_str(d, "pods"));
        cell(out, rp_str(d, "reason"));
        cell(out, rp_str(d, "detail"));
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
}

int ns_report_html_write(FILE *out, const cJSON *doc)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>nodesmith simulation: ",
          out);
    rp_escape(out, rp_str(doc, "timeline"));
    fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>nodesmith simulation</h1>\n<p class=\"sub\">",
            page_css);
    rp_escape(out, rp_str(doc, "timeline"));
    if (*rp_str(doc, "description")) {
        fputs(" &mdash; ", out);
        rp_escape(out, rp_str(doc, "description"));
    }
    fputs(" &middot; simulated from ", out);
    rp_escape(out, rp_str(doc, "start_time"));
    fputs("</p>\n", out);
    summary(out, doc);
    fputs("<h2>Nodes and cost per hour</h2>\n", out);
    int rc = ns_report_svg_chart(out, doc);
    if (rc < 0)
        return rc;
    steps_table(out, doc);
    decisions_table(out, doc);
    fputs("</body>\n</html>\n", out);
    return ferror(out) ? NS_FAIL(NS_ERR_INTERNAL, "writing the HTML report failed") : 0;
}

int ns_report_html_file(const char *path, const cJSON *doc)
{
    FILE *fp = fopen(path, "w");
    if (!fp)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "cannot write the report %s: %s", path, strerror(errno));
    int rc = ns_report_html_write(fp, doc);
    if (fclose(fp) != 0 && rc == 0)
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "cannot write the report %s: %s", path, strerror(errno));
    if (rc < 0)
        ns_error_prefix("report %s: ", path);
    return rc;
}
