#include "curl_body.h"

#include <stdlib.h>
#include <string.h>

size_t curl_body_collect(char *ptr, size_t size, size_t n, void *body)
{
    curl_body *b = body;
    char *grown = realloc(b->data, b->len + size * n + 1);
    if (!grown)
        return 0;
    b->data = grown;
    memcpy(b->data + b->len, ptr, size * n);
    b->len += size * n;
    b->data[b->len] = '\0';
    return size * n;
}
