/* The chart of node count (left axis) and cost per hour (right axis) over simulated time. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "errors/ns_error.h"
#include "report/report.h"
#include "report/report_util.h"

#define CHART_W 960.0
#define CHART_H 340.0
#define MARGIN_L 56.0
#define MARGIN_R 76.0
#define MARGIN_T 34.0
#define MARGIN_B 44.0
#define PLOT_W (CHART_W - MARGIN_L - MARGIN_R)
#define PLOT_H (CHART_H - MARGIN_T - MARGIN_B)

/* The smallest 1, 2 or 5 times a power of ten that is >= v (v > 0). */
static double nice_ceil(double v)
{
    double p = pow(10, floor(log10(v)));
    double f = v / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

typedef struct axes {
    double t_max;  /* seconds at the right edge */
    double n_max;  /* nodes at the top */
    double c_max;  /* cost per hour at the top */
    int gridlines; /* horizontal divisions, shared by both axes */
    double t_step; /* seconds between time ticks */
} axes;

static void compute_axes(const cJSON *doc, const cJSON *samples, axes *a)
{
    double t_max = rp_num(doc, "end_s"), n_max = 0, c_max = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, samples)
    {
        t_max = fmax(t_max, rp_num(s, "time_s"));
        n_max = fmax(n_max, rp_num(s, "nodes"));
        c_max = fmax(c_max, rp_num(s, "cost_per_hour"));
    }
    a->t_max = t_max > 0 ? t_max : 1;
    /* Whole nodes per gridline, at most six gridlines. */
    double n_step = n_max > 6 ? nice_ceil(n_max / 6) : 1;
    a->gridlines = n_max > 0 ? (int)ceil(n_max / n_step) : 1;
    if (a->gridlines < 2)
        a->gridlines = 2;
    a->n_max = n_step * a->gridlines;
    a->c_max = c_max > 0 ? nice_ceil(c_max / a->gridlines) * a->gridlines : a->gridlines * 0.01;
    static const double steps[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
                                   43200, 86400};
    a->t_step = steps[sizeof(steps) / sizeof(steps[0]) - 1];
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (a->t_max / steps[i] <= 8) {
            a->t_step = steps[i];
            break;
        }
}

static double x_of(const axes *a, double t)
{
    return MARGIN_L + t / a->t_max * PLOT_W;
}

static double y_of(double v, double max)
{
    return MARGIN_T + PLOT_H - v / max * PLOT_H;
}

static void cost_label(double v, double step, char *buf, size_t len)
{
    snprintf(buf, len, step >= 0.01 ? "$%.2f" : "$%.4f", v);
}

static void draw_grid(FILE *out, const axes *a)
{
    char label[32];
    double c_step = a->c_max / a->gridlines;
    for (int i = 0; i <= a->gridlines; i++) {
        double y = y_of(i, a->gridlines);
        fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", MARGIN_L, y,
                MARGIN_L + PLOT_W, y);
        fprintf(out, "<text class=\"axis-nodes\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                MARGIN_L - 6, y + 4, a->n_max / a->gridlines * i);
        cost_label(c_step * i, c_step, label, sizeof(label));
        fprintf(out, "<text class=\"axis-cost\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", MARGIN_L + PLOT_W + 6, y + 4,
                label);
    }
    for (double t = 0; t <= a->t_max + 1e-9; t += a->t_step) {
        double x = x_of(a, t);
        rp_seconds(t, label, sizeof(label));
        fprintf(out, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x,
                MARGIN_T + PLOT_H, x, MARGIN_T + PLOT_H + 5);
        fprintf(out, "<text class=\"axis-time\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x,
                MARGIN_T + PLOT_H + 18, label);
    }
    fprintf(out, "<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">simulated time</text>\n",
            MARGIN_L + PLOT_W / 2, CHART_H - 6);
}

/* A dashed line at each distinct step time, labelled with the step numbers that start there. */
static void draw_steps(FILE *out, const axes *a, const cJSON *steps)
{
    const cJSON *s = steps ? steps->child : NULL;
    while (s) {
        double t = rp_num(s, "time_s"), x = x_of(a, t);
        fprintf(out, "<line class=\"step-marker\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x, MARGIN_T,
                x, MARGIN_T + PLOT_H);
        fprintf(out, "<text class=\"step-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, MARGIN_T - 4);
        bool first = true;
        for (; s && rp_num(s, "time_s") == t; s = s->next, first = false)
            fprintf(out, "%s%d", first ? "" : ",", (int)rp_num(s, "index"));
        fputs("</text>\n", out);
    }
}

/* A step line: each value holds until the next sample. */
static void draw_series(FILE *out, const axes *a, const cJSON *samples, const char *key, double max,
                        const char *cls)
{
    fprintf(out, "<polyline class=\"%s\" fill=\"none\" points=\"", cls);
    const cJSON *s;
    bool first = true;
    double prev_y = 0;
    cJSON_ArrayForEach(s, samples)
    {
        double x = x_of(a, rp_num(s, "time_s")), y = y_of(rp_num(s, key), max);
        if (!first)
            fprintf(out, " %.1f,%.1f", x, prev_y);
        fprintf(out, "%s%.1f,%.1f", first ? "" : " ", x, y);
        prev_y = y;
        first = false;
    }
    fputs("\"/>\n", out);
}

int ns_report_svg_chart(FILE *out, const cJSON *doc)
{
    const cJSON *samples = rp_array(doc, "cost_over_time");
    axes a;
    compute_axes(doc, samples, &a);
    fprintf(out,
            "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
            "aria-label=\"nodes and cost per hour over simulated time\">\n",
            CHART_W, CHART_H);
    fprintf(out, "<rect class=\"plot\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n", MARGIN_L,
            MARGIN_T, PLOT_W, PLOT_H);
    draw_grid(out, &a);
    draw_steps(out, &a, rp_array(doc, "steps"));
    /* Cost last and dashed, so it stays visible where the two lines coincide. */
    draw_series(out, &a, samples, "nodes", a.n_max, "series-nodes");
    draw_series(out, &a, samples, "cost_per_hour", a.c_max, "series-cost");
    fprintf(out,
            "<g class=\"legend\"><line class=\"series-nodes\" x1=\"%.1f\" y1=\"12\" x2=\"%.1f\" y2=\"12\"/>"
            "<text x=\"%.1f\" y=\"16\">nodes (left)</text>"
            "<line class=\"series-cost\" x1=\"%.1f\" y1=\"12\" x2=\"%.1f\" y2=\"12\"/>"
            "<text x=\"%.1f\" y=\"16\">cost per hour (right)</text></g>\n",
            MARGIN_L, MARGIN_L + 24, MARGIN_L + 30, MARGIN_L + 150, MARGIN_L + 174, MARGIN_L + 180);
    fputs("</svg>\n", out);
    return ferror(out) ? NS_FAIL(NS_ERR_INTERNAL, "writing the report chart failed") : 0;
}
