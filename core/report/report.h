/*
 * Reports of a simulation timeline: one JSON document (docs/timeline.md, "The JSON document") and a self-contained
 * HTML page rendered from that same document, so the page can never say something the JSON does not.
 *
 * The page has no external references: inline CSS, an inline SVG chart of node count and cost per hour over time
 * (from "cost_over_time", drawn as step lines because both only change at instants), the state after each step and
 * the decision log.
 */
#ifndef NS_REPORT_H
#define NS_REPORT_H

#include <stdio.h>

#include <cjson/cJSON.h>

/* Writes the page for doc to out. Missing fields read as empty or zero. 0, or NS_ERR_INTERNAL when writing failed. */
int ns_report_html_write(FILE *out, const cJSON *doc);
/* The same into a file (created or truncated). NS_ERR_INVALID_CONFIG naming the path when it cannot be written. */
int ns_report_html_file(const char *path, const cJSON *doc);

/* The text summary: one line per step (time, action, nodes, claims, pods placed and pending, cost per hour,
 * invariants, with each violation on a line of its own), then the totals. 0 or NS_ERR_INTERNAL. */
int ns_report_text(FILE *out, const cJSON *doc);

/* The chart alone (an <svg> element), for the page and for tests. Each series is one <polyline> with
 * class="series-nodes" or class="series-cost"; a series of n samples has 2n-1 points (a step line), none when the
 * document has no samples. */
int ns_report_svg_chart(FILE *out, const cJSON *doc);

#endif
