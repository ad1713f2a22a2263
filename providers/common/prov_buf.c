#include "prov_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(prov_buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void prov_buf_append(prov_buf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void prov_buf_puts(prov_buf *b, const char *s)
{
    prov_buf_append(b, s, strlen(s));
}

void prov_buf_putc(prov_buf *b, char c)
{
    prov_buf_append(b, &c, 1);
}

void prov_buf_printf(prov_buf *b, const char *fmt, ...)
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

void prov_buf_percent_encode(prov_buf *b, const char *s, size_t n, bool keep_slash)
{
    static const char HEX[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
            c == '.' || c == '~' || (keep_slash && c == '/')) {
            prov_buf_putc(b, (char)c);
        } else {
            char esc[3] = {'%', HEX[c >> 4], HEX[c & 15]};
            prov_buf_append(b, esc, 3);
        }
    }
}

bool prov_buf_failed(const prov_buf *b)
{
    return b->failed;
}

const char *prov_buf_str(const prov_buf *b)
{
    return b->data && !b->failed ? b->data : "";
}

char *prov_buf_take(prov_buf *b)
{
    if (b->failed) {
        prov_buf_free(b);
        return NULL;
    }
    char *s = b->data ? b->data : strdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}

void prov_buf_free(prov_buf *b)
{
    if (!b)
        return;
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}
