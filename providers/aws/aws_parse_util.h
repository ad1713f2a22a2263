/* Helpers shared by the AWS response parsers: opening a document, and reading numbers, booleans and timestamps. */
#ifndef NS_AWS_PARSE_UTIL_H
#define NS_AWS_PARSE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aws_xml.h"

/* Parses xml and checks that the root element is `root_name`. NS_OK with *doc (the caller frees it), or an error
 * (NS_ERR_INVALID_ARGUMENT / NS_ERR_INTERNAL) with the reason in err and *doc NULL. */
int aws_parse_open(const char *xml, size_t len, const char *root_name, aws_xml_node **doc, char *err, size_t errlen);

/* Integer, floating-point and boolean text; `fallback` when text is NULL or not a complete number/boolean. */
int64_t aws_parse_i64(const char *text, int64_t fallback);
double aws_parse_double(const char *text, double fallback);
bool aws_parse_bool(const char *text, bool fallback);

/* An ISO 8601 UTC time ("2024-05-01T12:00:00Z", "2024-05-01T12:00:00.123Z", "...+00:00") in unix milliseconds.
 * Returns false when the text is NULL or not such a time. */
bool aws_parse_iso8601_ms(const char *text, int64_t *ms);
/* An RFC 1123 time, as AWS Health events carry ("Sat, 05 Jun 2021 08:00:00 GMT"; the weekday is optional and not
 * checked), in unix milliseconds. False when the text is NULL or not such a time. */
bool aws_parse_rfc1123_ms(const char *text, int64_t *ms);

/* The i-th child named `name` of node, or NULL. */
const aws_xml_node *aws_xml_nth(const aws_xml_node *node, const char *name, size_t i);

#endif
