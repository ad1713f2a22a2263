/*
 * A growable, always NUL-terminated byte buffer for the providers' pure modules (signing, request encoding, XML,
 * JSON bodies), built into each provider that uses it. Appends never fail silently: after an allocation failure the buffer is marked failed, further appends are no-ops,
 * and prov_buf_failed() reports it, so callers check once at the end instead of after every append.
 */
#ifndef NS_PROV_BUF_H
#define NS_PROV_BUF_H

#include <stdbool.h>
#include <stddef.h>

#include <nodesmith/provider.h>

typedef struct prov_buf {
    char *data; /* NUL-terminated when len > 0 or after the first append; may be NULL when empty */
    size_t len;
    size_t cap;
    bool failed;
} prov_buf;

#define PROV_BUF_INIT {NULL, 0, 0, false}

void prov_buf_append(prov_buf *b, const char *s, size_t n);
void prov_buf_puts(prov_buf *b, const char *s);
void prov_buf_putc(prov_buf *b, char c);
void prov_buf_printf(prov_buf *b, const char *fmt, ...) NS_PRINTF(2, 3);
/* Appends s[0..n) percent-encoded as RFC 3986 asks of signed requests (AWS SigV4 and its Query protocol, Alibaba
 * ACS3 and RPC): every byte but A-Z a-z 0-9 - _ . ~ becomes %XX (upper-case hex); '/' is kept when keep_slash. */
void prov_buf_percent_encode(prov_buf *b, const char *s, size_t n, bool keep_slash);
bool prov_buf_failed(const prov_buf *b);
/* The buffer's string ("" when empty or after a failure); owned by the buffer. */
const char *prov_buf_str(const prov_buf *b);
/* Hands the string to the caller (free with free()); the buffer is left empty. NULL after a failure. */
char *prov_buf_take(prov_buf *b);
/* Frees the contents; accepts a zeroed or already-freed buffer. */
void prov_buf_free(prov_buf *b);

#endif
