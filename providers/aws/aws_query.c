#include "aws_query.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>


void aws_query_init(aws_query *q, const char *action, const char *version)
{
    q->body = (prov_buf)PROV_BUF_INIT;
    aws_query_add(q, "Action", action);
    aws_query_add(q, "Version", version);
}

void aws_query_add(aws_query *q, const char *key, const char *value)
{
    if (q->body.len)
        prov_buf_putc(&q->body, '&');
    prov_buf_percent_encode(&q->body, key, strlen(key), false);
    prov_buf_putc(&q->body, '=');
    prov_buf_percent_encode(&q->body, value ? value : "", value ? strlen(value) : 0, false);
}

void aws_query_addf(aws_query *q, const char *value, const char *key_fmt, ...)
{
    char key[256];
    va_list ap;
    va_start(ap, key_fmt);
    int n = vsnprintf(key, sizeof(key), key_fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(key)) {
        q->body.failed = true;
        return;
    }
    aws_query_add(q, key, value);
}

const char *aws_query_body(const aws_query *q)
{
    return prov_buf_str(&q->body);
}

size_t aws_query_len(const aws_query *q)
{
    return q->body.len;
}

bool aws_query_failed(const aws_query *q)
{
    return prov_buf_failed(&q->body);
}

void aws_query_free(aws_query *q)
{
    if (q)
        prov_buf_free(&q->body);
}
