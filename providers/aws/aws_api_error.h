/*
 * The error an AWS API returned, as read from its body: the EC2 document (<Response><Errors><Error><Code>), the
 * Query-protocol document of STS and others (<ErrorResponse><Error><Code>), or a JSON-protocol "__type".
 * Pure: no host upcalls.
 */
#ifndef NS_AWS_API_ERROR_H
#define NS_AWS_API_ERROR_H

#include <stdbool.h>
#include <stddef.h>

typedef struct aws_api_error {
    char code[128];    /* "InsufficientInstanceCapacity"; "" when the body named none */
    char message[512];
    char request_id[128];
} aws_api_error;

/* Reads an XML error body into *out (zeroed first). True when the body was an error document with a code. */
bool aws_api_error_parse_xml(const char *body, size_t len, aws_api_error *out);

/* Fills *out from a JSON-protocol error: `type` is "__type" ("com.amazonaws.sqs#QueueDoesNotExist" or
 * "QueueDoesNotExist"); the part after '#' is the code. `message` and `request_id` may be NULL. */
void aws_api_error_from_json(aws_api_error *out, const char *type, const char *message, const char *request_id);

#endif
