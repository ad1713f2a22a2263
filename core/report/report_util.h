/*
 * Internal to core/report: reading the report document forgivingly and writing text safely into HTML and SVG.
 */
#ifndef NS_REPORT_UTIL_H
#define NS_REPORT_UTIL_H

#include <stdio.h>

#include <cjson/cJSON.h>

/* obj[key] as a number, or 0 when absent or not a number. */
double rp_num(const cJSON *obj, const char *key);
/* obj[key] as a string, or "" when absent or not a string. */
const char *rp_str(const cJSON *obj, const char *key);
/* obj[key] when it is an array, else NULL. */
const cJSON *rp_array(const cJSON *obj, const char *key);
/* Writes s with &, <, >, " and ' escaped (safe in text and in quoted attributes). */
void rp_escape(FILE *out, const char *s);
/* "1h30m", "45s": seconds as Go writes durations (whole seconds; "0s" for zero). */
void rp_seconds(double s, char *buf, size_t len);

#endif
