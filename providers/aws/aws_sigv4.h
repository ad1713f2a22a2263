/*
 * AWS Signature Version 4 (HMAC-SHA256) request signing, with OpenSSL.
 *
 * Pure: no host upcalls, no clock (the caller passes the signing time), no I/O, so the published test-suite vectors and
 * botocore can check it byte for byte. The canonical form follows the generic (non-S3) rules: the path is normalised
 * (dot segments and empty segments removed) and URI-encoded once more on top of its wire form, the query is decoded and
 * re-encoded strictly and sorted by key then value, header values are trimmed with inner runs of spaces collapsed, and
 * repeated headers are joined with commas in the order given.
 */
#ifndef NS_AWS_SIGV4_H
#define NS_AWS_SIGV4_H

#include <stddef.h>
#include <stdint.h>

#include "prov_buf.h"

typedef struct aws_sigv4_header {
    const char *name;
    const char *value;
} aws_sigv4_header;

typedef struct aws_sigv4_credentials {
    const char *access_key_id;
    const char *secret_access_key;
    const char *session_token; /* NULL or "" when the credentials are long-term */
} aws_sigv4_credentials;

typedef struct aws_sigv4_request {
    const char *method;
    const char *host;  /* the Host header as it will be sent: "ec2.us-east-1.amazonaws.com" or "127.0.0.1:4567" */
    const char *path;  /* the path as sent on the wire; NULL or "" means "/" */
    const char *query; /* the query as sent on the wire, without '?'; NULL when none */
    /* Further headers to sign and send. Host, X-Amz-Date and X-Amz-Security-Token come from the fields above and the
     * credentials; the caller does not repeat them. */
    const aws_sigv4_header *headers;
    size_t n_headers;
    const void *payload; /* may be NULL when payload_len is 0 */
    size_t payload_len;
} aws_sigv4_request;

/* The signing result. The caller sends Authorization and X-Amz-Date, plus X-Amz-Security-Token (the credentials'
 * session token) when there is one. */
typedef struct aws_sigv4_signature {
    char amz_date[17];      /* "20150830T123600Z" */
    char payload_hash[65];  /* lower-case hex SHA-256 of the payload */
    char signature[65];     /* lower-case hex */
    char *canonical_request; /* owned; freed by aws_sigv4_signature_clear */
    char *string_to_sign;    /* owned */
    char *signed_headers;    /* owned: "host;x-amz-date" */
    char *authorization;     /* owned: the Authorization header value */
} aws_sigv4_signature;

/* Signs `req` for `region`/`service` at unix time `epoch_seconds`. Fills *out (zero it first, or clear a previous
 * result); the caller releases it with aws_sigv4_signature_clear, also after a failure. Returns NS_OK,
 * NS_ERR_INVALID_ARGUMENT for a missing field or NS_ERR_INTERNAL when memory or OpenSSL fails. */
int aws_sigv4_sign(const aws_sigv4_request *req, const aws_sigv4_credentials *creds, const char *region,
                   const char *service, int64_t epoch_seconds, aws_sigv4_signature *out);

/* Frees what aws_sigv4_sign allocated and zeroes *sig; accepts NULL. */
void aws_sigv4_signature_clear(aws_sigv4_signature *sig);

/* Appends the canonical query string of a wire query (NULL or "" gives nothing). NS_OK or NS_ERR_INTERNAL. */
int aws_sigv4_canonical_query(prov_buf *out, const char *query);

/* Appends the canonical URI of a wire path. NS_OK or NS_ERR_INTERNAL. */
int aws_sigv4_canonical_path(prov_buf *out, const char *path);

#endif
