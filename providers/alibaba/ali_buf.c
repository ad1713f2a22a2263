#include "ali_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(ali_buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *data = realloc(b->data, cap);
    if (!data) {
        b->failed = true;
        return false;
    }
    b->data = data;
    b->cap = cap;
    return true;
}

void ali_buf_append(ali_buf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void ali_buf_puts(ali_buf *b, const char *s)
{
    ali_buf_append(b, s, strlen(s));
}

void ali_buf_printf(ali_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (!reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

bool ali_buf_failed(const ali_buf *b)
{
    return b->failed;
}

const char *ali_buf_str(const ali_buf *b)
{
    return b->data && !b->failed ? b->data : "";
}

char *ali_buf_take(ali_buf *b)
{
    char *s = NULL;
    if (!b->failed)
        s = b->data ? b->data : strdup("");
    else
        free(b->data);
    *b = (ali_buf)ALI_BUF_INIT;
    return s;
}

void ali_buf_free(ali_buf *b)
{
    free(b->data);
    *b = (ali_buf)ALI_BUF_INIT;
}
