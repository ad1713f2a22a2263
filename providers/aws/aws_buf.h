/*
 * A growable, always NUL-terminated byte buffer for the AWS provider's pure modules (signing, request encoding, XML).
 * Appends never fail silently: after an allocation failure the buffer is marked failed, further appends are no-ops,
 * and aws_buf_failed() reports it, so callers check once at the end instead of after every append.
 */
#ifndef NS_AWS_BUF_H
#define NS_AWS_BUF_H

#include <stdbool.h>
#include <stddef.h>

#include <nodesmith/provider.h>

typedef struct aws_buf {
    char *data; /* NUL-terminated when len > 0 or after the first append; may be NULL when empty */
    size_t len;
    size_t cap;
    bool failed;
} aws_buf;

#define AWS_BUF_INIT {NULL, 0, 0, false}

void aws_buf_append(aws_buf *b, const char *s, size_t n);
void aws_buf_puts(aws_buf *b, const char *s);
void aws_buf_putc(aws_buf *b, char c);
void aws_buf_printf(aws_buf *b, const char *fmt, ...) NS_PRINTF(2, 3);
bool aws_buf_failed(const aws_buf *b);
/* The buffer's string ("" when empty); owned by the buffer. */
const char *aws_buf_str(const aws_buf *b);
/* Hands the string to the caller (free with free()); the buffer is left empty. NULL after a failure. */
char *aws_buf_take(aws_buf *b);
/* Frees the contents; accepts a zeroed or already-freed buffer. */
void aws_buf_free(aws_buf *b);

#endif
