/* The text summary `nodesmith simulate --timeline` prints after the log lines. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "errors/ns_error.h"
#include "report/report.h"
#include "report/report_util.h"

/* A step's warm headroom (timeline_state.c), under its row. */
static void headroom_line(FILE *out, const cJSON *state)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(state, "headroom");
    if (h)
        fprintf(out, "%-4s %9s  headroom: %g of %g chunk(s) ready, %g placed, %.4f/h of the nodes' cost\n", "", "",
                rp_num(h, "ready"), rp_num(h, "wanted"), rp_num(h, "placed"), rp_num(h, "cost_per_hour"));
}

int ns_report_text(FILE *out, const cJSON *doc)
{
    fprintf(out, "\n%-4s %9s  %-58s %5s %6s %6s %7s %9s  %s\n", "STEP", "TIME", "ACTION", "NODES", "CLAIMS",
            "PLACED", "PENDING", "COST/H", "INVARIANTS");
    const cJSON *s;
    int violated = 0;
    cJSON_ArrayForEach(s, rp_array(doc, "steps"))
    {
        const cJSON *state = cJSON_GetObjectItemCaseSensitive(s, "state");
        const cJSON *inv = cJSON_GetObjectItemCaseSensitive(state, "invariants");
        const cJSON *violations = rp_array(inv, "violations");
        bool ok = !inv || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(inv, "ok"));
        char when[32];
        rp_seconds(rp_num(state, "time_s"), when, sizeof(when));
        fprintf(out, "%-4d %9s  %-58.58s %5d %6d %6g %7g %9.4f  ", (int)rp_num(s, "index"), when,
                rp_str(s, "description"), cJSON_GetArraySize(rp_array(state, "nodes")),
                cJSON_GetArraySize(rp_array(state, "nodeclaims")), rp_num(state, "pods_placed"),
                rp_num(state, "pods_pending"), rp_num(state, "cost_per_hour"));
        if (ok) {
            fputs("ok\n", out);
            headroom_line(out, state);
            continue;
        }
        violated++;
        const cJSON *v;
        fputs("VIOLATED", out);
        cJSON_ArrayForEach(v, violations)
        fprintf(out, "\n%-4s %9s  - %s", "", "", cJSON_IsString(v) ? v->valuestring : "");
        fputc('\n', out);
        headroom_line(out, state);
    }
    double peak_nodes = 0, peak_cost = 0, last_cost = 0;
    cJSON_ArrayForEach(s, rp_array(doc, "cost_over_time"))
    {
        peak_nodes = fmax(peak_nodes, rp_num(s, "nodes"));
        peak_cost = fmax(peak_cost, rp_num(s, "cost_per_hour"));
        last_cost = rp_num(s, "cost_per_hour");
    }
    char end[32];
    rp_seconds(rp_num(doc, "end_s"), end, sizeof(end));
    fprintf(out, "\n%s simulated, %d decision(s); cost per hour %.4f at the end, peak %.4f; peak %g node(s); "
                 "invariants %s\n",
            end, cJSON_GetArraySize(rp_array(doc, "decisions")), last_cost, peak_cost, peak_nodes,
            violated ? "VIOLATED" : "held at every step");
    return ferror(out) ? NS_FAIL(NS_ERR_INTERNAL, "writing the timeline summary failed") : 0;
}
