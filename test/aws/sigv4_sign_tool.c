/*
 * Signs requests read from stdin with the provider's SigV4 code and prints the results, for sigv4_botocore_check.py.
 *
 * Input: a JSON array of {"method", "host", "path", "query", "headers": [[name, value], ...], "body", "access_key",
 * "secret_key", "token", "region", "service", "time"} ("query", "body" and "token" may be null; "time" is unix
 * seconds). Output: a JSON array of {"authorization", "amz_date", "canonical_request"} in the same order.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_sigv4.h"

static const char *str_field(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static cJSON *sign_one(const cJSON *in)
{
    const cJSON *hs = cJSON_GetObjectItemCaseSensitive(in, "headers");
    size_t n = (size_t)cJSON_GetArraySize(hs);
    aws_sigv4_header *headers = calloc(n ? n : 1, sizeof(*headers));
    if (!headers)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const cJSON *pair = cJSON_GetArrayItem(hs, (int)i);
        headers[i].name = cJSON_GetArrayItem(pair, 0)->valuestring;
        headers[i].value = cJSON_GetArrayItem(pair, 1)->valuestring;
    }
    const char *body = str_field(in, "body");
    aws_sigv4_request req = {str_field(in, "method"), str_field(in, "host"), str_field(in, "path"),
                             str_field(in, "query"),  headers,                n,
                             body,                    body ? strlen(body) : 0};
    aws_sigv4_credentials creds = {str_field(in, "access_key"), str_field(in, "secret_key"), str_field(in, "token")};
    aws_sigv4_signature sig = {0};
    cJSON *out = NULL;
    int rc = aws_sigv4_sign(&req, &creds, str_field(in, "region"), str_field(in, "service"),
                            (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(in, "time")), &sig);
    if (rc == NS_OK) {
        out = cJSON_CreateObject();
        cJSON_AddStringToObject(out, "authorization", sig.authorization);
        cJSON_AddStringToObject(out, "amz_date", sig.amz_date);
        cJSON_AddStringToObject(out, "canonical_request", sig.canonical_request);
    } else {
        fprintf(stderr, "signing failed with %d\n", rc);
    }
    aws_sigv4_signature_clear(&sig);
    free(headers);
    return out;
}

int main(void)
{
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    size_t got;
    while (text && (got = fread(text + len, 1, cap - len - 1, stdin)) > 0) {
        len += got;
        if (len + 1 == cap) {
            cap *= 2;
            text = realloc(text, cap);
        }
    }
    if (!text)
        return 2;
    text[len] = '\0';
    cJSON *in = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsArray(in)) {
        fprintf(stderr, "stdin is not a JSON array\n");
        return 2;
    }
    cJSON *results = cJSON_CreateArray();
    int status = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, in)
    {
        cJSON *r = sign_one(item);
        if (!r) {
            status = 1;
            r = cJSON_CreateNull();
        }
        cJSON_AddItemToArray(results, r);
    }
    char *printed = cJSON_PrintUnformatted(results);
    puts(printed);
    free(printed);
    cJSON_Delete(results);
    cJSON_Delete(in);
    return status;
}
