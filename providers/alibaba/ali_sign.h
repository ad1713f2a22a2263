/*
 * Alibaba Cloud OpenAPI request signing, with OpenSSL. Pure: no host upcalls, no clock, no I/O, so the published
 * vectors and the official SDK (npm @alicloud/openapi-util, inside the emulator) can check it byte for byte.
 *
 *   ACS3-HMAC-SHA256 (V3): what the current SDKs send for ECS, VPC and ACK, RPC style (POST /, every parameter in the
 *   query) and ROA style (a real path, a JSON body). Canonical request = method, canonical URI, canonical query
 *   (keys sorted byte-wise, values percent-encoded the RFC 3986 way), canonical headers (host, content-type and
 *   x-acs-*, lower-cased, trimmed, sorted), signed header names, hex SHA-256 of the body.
 *   RPC V1 (HMAC-SHA1): the older query signature, still accepted by RPC products.
 */
#ifndef NS_ALI_SIGN_H
#define NS_ALI_SIGN_H

#include <stddef.h>
#include <stdint.h>

#include "prov_buf.h"

/* An ordered list of owned key/value strings: a request's query parameters or headers. */
typedef struct ali_kv {
    char *key;
    char *value;
} ali_kv;

typedef struct ali_params {
    ali_kv *items;
    size_t n, cap;
    bool failed; /* an allocation failed: the list is incomplete */
} ali_params;

void ali_params_add(ali_params *p, const char *key, const char *value);
void ali_params_addf(ali_params *p, const char *value, const char *key_fmt, ...) NS_PRINTF(3, 4);
/* The value of `key`, or NULL. */
const char *ali_params_get(const ali_params *p, const char *key);
/* Sorts by key, byte-wise (what both signatures and the SDKs do). */
void ali_params_sort(ali_params *p);
void ali_params_free(ali_params *p);

/* Appends the sorted, encoded query "k=v&k=v" of params (sorted first). */
void ali_query_string(prov_buf *out, ali_params *params);

typedef struct ali_acs3_input {
    const char *method;
    const char *path;          /* canonical URI as sent: "/" for RPC, "/clusters/c123/attachscript" for ROA */
    ali_params *query;         /* sorted here */
    ali_params *headers;       /* every header sent; those named host, content-type or x-acs-* are signed */
    const char *payload_hash;  /* hex SHA-256 of the body, the x-acs-content-sha256 header */
    const char *access_key_id;
    const char *secret;
} ali_acs3_input;

/* Writes the Authorization header value into *authorization (appended) and, when not NULL, the hex SHA-256 of the
 * canonical request into hashed_canonical. NS_OK or NS_ERR_INTERNAL. */
int ali_acs3_sign(const ali_acs3_input *in, prov_buf *authorization, char hashed_canonical[65]);

/* RPC V1: Base64(HMAC-SHA1(secret + "&", METHOD + "&%2F&" + encode(canonical query))), into sig (at least 29 bytes).
 * params must already hold Signature* fields, AccessKeyId, Timestamp and the action's own parameters. */
int ali_rpc_v1_sign(const char *method, ali_params *params, const char *secret, char *sig, size_t sig_len);

/* "2023-10-26T10:22:32Z" for a unix time (21 bytes with the NUL). */
void ali_iso8601(int64_t epoch_s, char out[21]);
/* Parses "YYYY-MM-DDTHH:MM:SSZ" (seconds optional, as some metadata answers omit them) into unix milliseconds;
 * -1 when it is not one. */
int64_t ali_parse_iso8601_ms(const char *s);
/* A random nonce: 32 hex digits (33 bytes with the NUL). NS_OK or NS_ERR_INTERNAL. */
int ali_nonce(char out[33]);

/* MNS (Message Service) request signature: Base64(HMAC-SHA1(secret, METHOD\nContent-MD5\nContent-Type\nDate\n
 * x-mns-* headers "k:v\n" sorted\nresource)) into sig (at least 29 bytes); mns_headers is sorted here. */
int ali_mns_sign(const char *method, const char *content_md5, const char *content_type, const char *date,
                 ali_params *mns_headers, const char *resource, const char *secret, char *sig, size_t sig_len);
/* "Mon, 23 Nov 2026 19:00:00 GMT" (30 bytes with the NUL). */
void ali_http_date(int64_t epoch_s, char out[30]);

#endif
