/*
 * A growable, always NUL-terminated byte buffer for the Alibaba Cloud provider. After an allocation failure the
 * buffer is marked failed and further appends do nothing, so a caller checks ali_buf_failed() once at the end.
 */
#ifndef NS_ALI_BUF_H
#define NS_ALI_BUF_H

#include <stdbool.h>
#include <stddef.h>

#include <nodesmith/provider.h>

typedef struct ali_buf {
    char *data;
    size_t len;
    size_t cap;
    bool failed;
} ali_buf;

#define ALI_BUF_INIT {NULL, 0, 0, false}

void ali_buf_append(ali_buf *b, const char *s, size_t n);
void ali_buf_puts(ali_buf *b, const char *s);
void ali_buf_printf(ali_buf *b, const char *fmt, ...) NS_PRINTF(2, 3);
bool ali_buf_failed(const ali_buf *b);
/* The string ("" when empty); owned by the buffer. */
const char *ali_buf_str(const ali_buf *b);
/* Hands the string to the caller (free with free()); NULL after a failure. The buffer is left empty. */
char *ali_buf_take(ali_buf *b);
void ali_buf_free(ali_buf *b); /* accepts an empty buffer */

#endif
