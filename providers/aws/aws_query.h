/*
 * Builds the form body of an AWS Query-protocol request (EC2, STS): "Action=...&Version=...&Key=Value...", every key
 * and value URI-encoded the SigV4 way. Pure: no host upcalls.
 */
#ifndef NS_AWS_QUERY_H
#define NS_AWS_QUERY_H

#include "prov_buf.h"

typedef struct aws_query {
    prov_buf body;
} aws_query;

/* Starts a body with Action and Version. Release with aws_query_free. */
void aws_query_init(aws_query *q, const char *action, const char *version);
/* Appends key=value. */
void aws_query_add(aws_query *q, const char *key, const char *value);
/* Appends a key built from a printf format ("Filter.%d.Value.%d") and a value. */
void aws_query_addf(aws_query *q, const char *value, const char *key_fmt, ...) NS_PRINTF(3, 4);
/* The body so far, and whether an allocation failed on the way. */
const char *aws_query_body(const aws_query *q);
size_t aws_query_len(const aws_query *q);
bool aws_query_failed(const aws_query *q);
void aws_query_free(aws_query *q);

#endif
