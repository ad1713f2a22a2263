/*
 * A set of AWS credentials, owned: each string is a private copy, wiped (OPENSSL_cleanse) before it is freed.
 * Pure: no host upcalls.
 */
#ifndef NS_AWS_CREDS_H
#define NS_AWS_CREDS_H

#include <stdint.h>

typedef struct aws_creds {
    char *access_key_id;
    char *secret_access_key;
    char *session_token;   /* NULL for long-term credentials */
    int64_t expiration_ms; /* unix ms; 0 = does not expire */
} aws_creds;

/* Replaces *c with copies of the given values (token may be NULL or ""). NS_OK, NS_ERR_INVALID_ARGUMENT when the key
 * ID or secret is missing or empty, NS_ERR_INTERNAL on allocation failure (then *c is cleared). */
int aws_creds_set(aws_creds *c, const char *access_key_id, const char *secret_access_key, const char *session_token,
                  int64_t expiration_ms);

/* aws_creds_set(dst, src's fields). */
int aws_creds_copy(aws_creds *dst, const aws_creds *src);

/* Wipes and frees the strings and zeroes *c; accepts NULL and a zeroed struct. */
void aws_creds_clear(aws_creds *c);

/* True when c holds a key pair. */
int aws_creds_present(const aws_creds *c);

#endif
