/*
 * What an AWS error code means to nodesmith: the ABI category the provider returns, whether and how the call may be
 * retried (the SDKs' "standard" retry classes), and whether the credentials themselves were refused.
 * Pure: no host upcalls.
 */
#ifndef NS_AWS_ERRORS_H
#define NS_AWS_ERRORS_H

#include <stdbool.h>

#include <nodesmith/provider.h>

typedef enum aws_retry_kind {
    AWS_RETRY_NO = 0,         /* retrying cannot help */
    AWS_RETRY_TRANSIENT = 1,  /* 5xx and transient codes: retry, costs 5 quota tokens */
    AWS_RETRY_THROTTLING = 2, /* rate limited: retry, costs 5 quota tokens */
    AWS_RETRY_TIMEOUT = 3,    /* the request timed out or the connection failed: retry, costs 10 tokens */
} aws_retry_kind;

typedef struct aws_error_class {
    ns_err category;
    aws_retry_kind retry;
    bool bad_credentials; /* refresh the credentials before trying again (expired or rejected token) */
} aws_error_class;

/* Classifies an error answer by its code (may be NULL or "" when the body named none) and HTTP status. A code the
 * table does not know falls back on the status: 429 throttled, 5xx transient, 401/403 unauthorized, 404 not found,
 * anything else internal. */
aws_error_class aws_classify_error(const char *code, long http_status);

/* True for the CreateFleet per-override error codes that mean "this offering cannot be had now" (Karpenter's
 * unfulfillable-capacity set): the offering is reported with error_unavailable_offering and the others may still
 * work. */
bool aws_fleet_error_unfulfillable(const char *code);

/* A short name for a retry kind, for log fields. */
const char *aws_retry_kind_name(aws_retry_kind kind);

#endif
