#include "aws_sigv4.h"
#include "prov_digest.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decodes s[0..n) into out; a '%' not followed by two hex digits stays literal. */
static void percent_decode(prov_buf *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n) {
            int hi = hex_value(s[i + 1]);
            int lo = hex_value(s[i + 2]);
            if (hi >= 0 && lo >= 0) {
                prov_buf_putc(out, (char)(hi * 16 + lo));
                i += 2;
                continue;
            }
        }
        prov_buf_putc(out, s[i]);
    }
}

typedef struct query_pair {
    char *key;   /* canonically encoded */
    char *value; /* canonically encoded */
} query_pair;

static int compare_pairs(const void *a, const void *b)
{
    const query_pair *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : strcmp(x->value, y->value);
}

static char *canonical_component(const char *s, size_t n)
{
    prov_buf raw = PROV_BUF_INIT, enc = PROV_BUF_INIT;
    percent_decode(&raw, s, n);
    prov_buf_percent_encode(&enc, prov_buf_str(&raw), raw.len, false);
    bool failed = prov_buf_failed(&raw);
    prov_buf_free(&raw);
    if (failed) {
        prov_buf_free(&enc);
        return NULL;
    }
    return prov_buf_take(&enc);
}

int aws_sigv4_canonical_query(prov_buf *out, const char *query)
{
    if (!query || !*query)
        return NS_OK;
    size_t cap = 1;
    for (const char *p = query; *p; p++)
        cap += *p == '&';
    query_pair *pairs = calloc(cap, sizeof(*pairs));
    size_t n = 0;
    int rc = NS_ERR_INTERNAL;
    if (!pairs)
        return NS_ERR_INTERNAL;
    for (const char *p = query; *p;) {
        const char *end = strchr(p, '&');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0) {
            const char *eq = memchr(p, '=', len);
            size_t klen = eq ? (size_t)(eq - p) : len;
            pairs[n].key = canonical_component(p, klen);
            pairs[n].value = eq ? canonical_component(eq + 1, len - klen - 1) : strdup("");
            n++;
            if (!pairs[n - 1].key || !pairs[n - 1].value)
                goto cleanup;
        }
        p += len;
        if (*p == '&')
            p++;
    }
    qsort(pairs, n, sizeof(*pairs), compare_pairs);
    for (size_t i = 0; i < n; i++) {
        if (i)
            prov_buf_putc(out, '&');
        prov_buf_printf(out, "%s=%s", pairs[i].key, pairs[i].value);
    }
    rc = prov_buf_failed(out) ? NS_ERR_INTERNAL : NS_OK;
cleanup:
    for (size_t i = 0; i < n; i++) {
        free(pairs[i].key);
        free(pairs[i].value);
    }
    free(pairs);
    return rc;
}

int aws_sigv4_canonical_path(prov_buf *out, const char *path)
{
    if (!path || !*path) {
        prov_buf_putc(out, '/');
        return prov_buf_failed(out) ? NS_ERR_INTERNAL : NS_OK;
    }
    size_t plen = strlen(path);
    /* Segments are kept as (start, length) into `path`; ".." drops the last one kept. */
    size_t cap = 1;
    for (const char *p = path; *p; p++)
        cap += *p == '/';
    size_t *start = calloc(cap, sizeof(*start));
    size_t *len = calloc(cap, sizeof(*len));
    size_t n = 0;
    int rc = NS_ERR_INTERNAL;
    if (!start || !len)
        goto cleanup;
    for (size_t i = 0; i <= plen;) {
        size_t j = i;
        while (j < plen && path[j] != '/')
            j++;
        size_t seg = j - i;
        if (seg == 2 && path[i] == '.' && path[i + 1] == '.') {
            if (n)
                n--;
        } else if (seg > 0 && !(seg == 1 && path[i] == '.')) {
            start[n] = i;
            len[n] = seg;
            n++;
        }
        i = j + 1;
    }
    prov_buf enc = PROV_BUF_INIT;
    if (path[0] == '/')
        prov_buf_putc(&enc, '/');
    for (size_t k = 0; k < n; k++) {
        if (k)
            prov_buf_putc(&enc, '/');
        prov_buf_append(&enc, path + start[k], len[k]);
    }
    if (n && path[plen - 1] == '/')
        prov_buf_putc(&enc, '/');
    if (enc.len == 0)
        prov_buf_putc(&enc, '/');
    prov_buf_percent_encode(out, prov_buf_str(&enc), enc.len, true);
    rc = prov_buf_failed(&enc) || prov_buf_failed(out) ? NS_ERR_INTERNAL : NS_OK;
    prov_buf_free(&enc);
cleanup:
    free(start);
    free(len);
    return rc;
}

typedef struct canon_header {
    char *name; /* lower-cased */
    const char *value;
    size_t order;
} canon_header;

static int compare_headers(const void *a, const void *b)
{
    const canon_header *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Appends a header value with leading and trailing whitespace removed and inner runs collapsed to one space. */
static void append_trimmed(prov_buf *b, const char *v)
{
    bool pending_space = false, any = false;
    for (; *v; v++) {
        if (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r') {
            pending_space = any;
            continue;
        }
        if (pending_space)
            prov_buf_putc(b, ' ');
        pending_space = false;
        any = true;
        prov_buf_putc(b, *v);
    }
}

static char *lower_dup(const char *s)
{
    char *d = strdup(s);
    if (d)
        for (char *p = d; *p; p++)
            *p = (char)tolower((unsigned char)*p);
    return d;
}

/* Appends "name:value\n" lines to canon and "name;name" to signed_list. */
static int canonical_headers(const aws_sigv4_request *req, const char *amz_date, const char *token, prov_buf *canon,
                             prov_buf *signed_list)
{
    size_t total = req->n_headers + 3;
    canon_header *h = calloc(total, sizeof(*h));
    size_t n = 0;
    int rc = NS_ERR_INTERNAL;
    if (!h)
        return NS_ERR_INTERNAL;
    for (size_t i = 0; i < req->n_headers; i++) {
        if (!req->headers[i].name || !req->headers[i].value) {
            rc = NS_ERR_INVALID_ARGUMENT;
            goto cleanup;
        }
        h[n].name = lower_dup(req->headers[i].name);
        h[n].value = req->headers[i].value;
        h[n].order = n;
        if (!h[n++].name)
            goto cleanup;
    }
    const char *fixed[3][2] = {{"host", req->host}, {"x-amz-date", amz_date}, {"x-amz-security-token", token}};
    for (size_t i = 0; i < 3; i++) {
        if (!fixed[i][1])
            continue;
        h[n].name = strdup(fixed[i][0]);
        h[n].value = fixed[i][1];
        h[n].order = n;
        if (!h[n++].name)
            goto cleanup;
    }
    qsort(h, n, sizeof(*h), compare_headers);
    for (size_t i = 0; i < n; i++) {
        bool same_as_previous = i > 0 && strcmp(h[i].name, h[i - 1].name) == 0;
        if (same_as_previous) {
            prov_buf_putc(canon, ',');
        } else {
            if (i > 0) {
                prov_buf_putc(canon, '\n');
                prov_buf_putc(signed_list, ';');
            }
            prov_buf_printf(canon, "%s:", h[i].name);
            prov_buf_puts(signed_list, h[i].name);
        }
        append_trimmed(canon, h[i].value);
    }
    prov_buf_putc(canon, '\n');
    rc = prov_buf_failed(canon) || prov_buf_failed(signed_list) ? NS_ERR_INTERNAL : NS_OK;
cleanup:
    for (size_t i = 0; i < n; i++)
        free(h[i].name);
    free(h);
    return rc;
}

static bool hmac(const void *key, size_t keylen, const char *msg, unsigned char out[32])
{
    unsigned int outlen = 0;
    return HMAC(EVP_sha256(), key, (int)keylen, (const unsigned char *)msg, strlen(msg), out, &outlen) && outlen == 32;
}

/* signature = HMAC(kSigning, string_to_sign), kSigning derived from the secret through date, region, service. */
static int compute_signature(const char *secret, const char *date, const char *region, const char *service,
                             const char *string_to_sign, char hex[65])
{
    prov_buf k = PROV_BUF_INIT;
    prov_buf_printf(&k, "AWS4%s", secret);
    unsigned char a[32], b[32];
    int rc = NS_ERR_INTERNAL;
    if (prov_buf_failed(&k))
        goto cleanup;
    if (!hmac(k.data, k.len, date, a) || !hmac(a, 32, region, b) || !hmac(b, 32, service, a) ||
        !hmac(a, 32, "aws4_request", b) || !hmac(b, 32, string_to_sign, a))
        goto cleanup;
    prov_hex(a, 32, hex);
    rc = NS_OK;
cleanup:
    if (k.data)
        OPENSSL_cleanse(k.data, k.len);
    prov_buf_free(&k);
    OPENSSL_cleanse(a, sizeof(a));
    OPENSSL_cleanse(b, sizeof(b));
    return rc;
}

int aws_sigv4_sign(const aws_sigv4_request *req, const aws_sigv4_credentials *creds, const char *region,
                   const char *service, int64_t epoch_seconds, aws_sigv4_signature *out)
{
    if (!req || !creds || !out || !req->method || !req->host || !region || !service || !creds->access_key_id ||
        !creds->secret_access_key || (!req->payload && req->payload_len))
        return NS_ERR_INVALID_ARGUMENT;
    time_t t = (time_t)epoch_seconds;
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(out->amz_date, sizeof(out->amz_date), "%Y%m%dT%H%M%SZ", &tm) != 16)
        return NS_ERR_INVALID_ARGUMENT;
    char date[9];
    memcpy(date, out->amz_date, 8);
    date[8] = '\0';
    const char *token = creds->session_token && *creds->session_token ? creds->session_token : NULL;

    prov_buf creq = PROV_BUF_INIT, signed_list = PROV_BUF_INIT, sts = PROV_BUF_INIT, authz = PROV_BUF_INIT;
    int rc = prov_sha256_hex(req->payload, req->payload_len, out->payload_hash);
    if (rc)
        goto cleanup;
    prov_buf_printf(&creq, "%s\n", req->method);
    if ((rc = aws_sigv4_canonical_path(&creq, req->path)))
        goto cleanup;
    prov_buf_putc(&creq, '\n');
    if ((rc = aws_sigv4_canonical_query(&creq, req->query)))
        goto cleanup;
    prov_buf_putc(&creq, '\n');
    if ((rc = canonical_headers(req, out->amz_date, token, &creq, &signed_list)))
        goto cleanup;
    prov_buf_printf(&creq, "\n%s\n%s", prov_buf_str(&signed_list), out->payload_hash);

    char creq_hash[65];
    rc = NS_ERR_INTERNAL;
    if (prov_buf_failed(&creq) || prov_sha256_hex(creq.data, creq.len, creq_hash))
        goto cleanup;
    prov_buf_printf(&sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", out->amz_date, date, region, service,
                   creq_hash);
    if (prov_buf_failed(&sts) ||
        compute_signature(creds->secret_access_key, date, region, service, sts.data, out->signature))
        goto cleanup;
    prov_buf_printf(&authz, "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=%s, Signature=%s",
                   creds->access_key_id, date, region, service, prov_buf_str(&signed_list), out->signature);
    if (prov_buf_failed(&authz))
        goto cleanup;
    out->canonical_request = prov_buf_take(&creq);
    out->string_to_sign = prov_buf_take(&sts);
    out->signed_headers = prov_buf_take(&signed_list);
    out->authorization = prov_buf_take(&authz);
    rc = out->canonical_request && out->string_to_sign && out->signed_headers && out->authorization ? NS_OK
                                                                                                      : NS_ERR_INTERNAL;
cleanup:
    prov_buf_free(&creq);
    prov_buf_free(&signed_list);
    prov_buf_free(&sts);
    prov_buf_free(&authz);
    return rc;
}

void aws_sigv4_signature_clear(aws_sigv4_signature *sig)
{
    if (!sig)
        return;
    free(sig->canonical_request);
    free(sig->string_to_sign);
    free(sig->signed_headers);
    free(sig->authorization);
    memset(sig, 0, sizeof(*sig));
}
