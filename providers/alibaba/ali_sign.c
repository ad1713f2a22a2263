#include "ali_sign.h"
#include "prov_digest.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void ali_params_add(ali_params *p, const char *key, const char *value)
{
    if (p->failed)
        return;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        ali_kv *items = realloc(p->items, cap * sizeof(*items));
        if (!items) {
            p->failed = true;
            return;
        }
        p->items = items;
        p->cap = cap;
    }
    char *k = strdup(key), *v = strdup(value ? value : "");
    if (!k || !v) {
        free(k);
        free(v);
        p->failed = true;
        return;
    }
    p->items[p->n++] = (ali_kv){k, v};
}

void ali_params_addf(ali_params *p, const char *value, const char *key_fmt, ...)
{
    char key[256];
    va_list ap;
    va_start(ap, key_fmt);
    int n = vsnprintf(key, sizeof(key), key_fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(key)) {
        p->failed = true;
        return;
    }
    ali_params_add(p, key, value);
}

const char *ali_params_get(const ali_params *p, const char *key)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->items[i].key, key) == 0)
            return p->items[i].value;
    return NULL;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const ali_kv *)a)->key, ((const ali_kv *)b)->key);
}

void ali_params_sort(ali_params *p)
{
    if (p->n > 1)
        qsort(p->items, p->n, sizeof(*p->items), by_key);
}

void ali_params_free(ali_params *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->items[i].key);
        free(p->items[i].value);
    }
    free(p->items);
    *p = (ali_params){0};
}

void ali_query_string(prov_buf *out, ali_params *params)
{
    ali_params_sort(params);
    for (size_t i = 0; i < params->n; i++) {
        if (i)
            prov_buf_puts(out, "&");
        prov_buf_percent_encode(out, params->items[i].key, strlen(params->items[i].key), false);
        prov_buf_puts(out, "=");
        prov_buf_percent_encode(out, params->items[i].value, strlen(params->items[i].value), false);
    }
}

static bool signed_header(const char *lower)
{
    return strcmp(lower, "host") == 0 || strcmp(lower, "content-type") == 0 || strncmp(lower, "x-acs-", 6) == 0;
}

/* The signed headers, lower-cased and trimmed, sorted by name. */
static int canonical_headers(const ali_params *headers, ali_params *out)
{
    for (size_t i = 0; i < headers->n; i++) {
        char name[128];
        size_t n = strlen(headers->items[i].key);
        if (n >= sizeof(name))
            return NS_ERR_INTERNAL;
        for (size_t j = 0; j <= n; j++) {
            char c = headers->items[i].key[j];
            name[j] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        }
        if (!signed_header(name))
            continue;
        const char *v = headers->items[i].value;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t len = strlen(v);
        while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
            len--;
        char *value = strndup(v, len);
        if (!value)
            return NS_ERR_INTERNAL;
        ali_params_add(out, name, value);
        free(value);
    }
    ali_params_sort(out);
    return out->failed ? NS_ERR_INTERNAL : NS_OK;
}

int ali_acs3_sign(const ali_acs3_input *in, prov_buf *authorization, char hashed_canonical[65])
{
    ali_params hs = {0};
    prov_buf canon = PROV_BUF_INIT, names = PROV_BUF_INIT;
    int rc = canonical_headers(in->headers, &hs);
    if (rc < 0)
        goto fail;
    prov_buf_printf(&canon, "%s\n%s\n", in->method, in->path && *in->path ? in->path : "/");
    ali_params_sort(in->query);
    for (size_t i = 0; i < in->query->n; i++) {
        prov_buf_printf(&canon, "%s%s=", i ? "&" : "", in->query->items[i].key);
        prov_buf_percent_encode(&canon, in->query->items[i].value, strlen(in->query->items[i].value), false);
    }
    prov_buf_puts(&canon, "\n");
    for (size_t i = 0; i < hs.n; i++) {
        prov_buf_printf(&canon, "%s:%s\n", hs.items[i].key, hs.items[i].value);
        prov_buf_printf(&names, "%s%s", i ? ";" : "", hs.items[i].key);
    }
    prov_buf_printf(&canon, "\n%s\n%s", prov_buf_str(&names), in->payload_hash);
    rc = NS_ERR_INTERNAL;
    if (prov_buf_failed(&canon) || prov_buf_failed(&names))
        goto fail;
    char hashed[65], to_sign[100], sig_hex[65];
    if (prov_sha256_hex(canon.data, canon.len, hashed) < 0)
        goto fail;
    snprintf(to_sign, sizeof(to_sign), "ACS3-HMAC-SHA256\n%s", hashed);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    if (!HMAC(EVP_sha256(), in->secret, (int)strlen(in->secret), (const unsigned char *)to_sign, strlen(to_sign), mac,
              &mac_len))
        goto fail;
    prov_hex(mac, mac_len, sig_hex);
    prov_buf_printf(authorization, "ACS3-HMAC-SHA256 Credential=%s,SignedHeaders=%s,Signature=%s", in->access_key_id,
                   prov_buf_str(&names), sig_hex);
    if (hashed_canonical)
        memcpy(hashed_canonical, hashed, 65);
    rc = prov_buf_failed(authorization) ? NS_ERR_INTERNAL : NS_OK;
fail:
    ali_params_free(&hs);
    prov_buf_free(&canon);
    prov_buf_free(&names);
    return rc;
}

int ali_rpc_v1_sign(const char *method, ali_params *params, const char *secret, char *sig, size_t sig_len)
{
    prov_buf query = PROV_BUF_INIT, to_sign = PROV_BUF_INIT;
    int rc = NS_ERR_INTERNAL;
    ali_query_string(&query, params);
    prov_buf_printf(&to_sign, "%s&%%2F&", method);
    prov_buf_percent_encode(&to_sign, prov_buf_str(&query), strlen(prov_buf_str(&query)), false);
    char key[256];
    if (prov_buf_failed(&to_sign) || prov_buf_failed(&query) || (size_t)snprintf(key, sizeof(key), "%s&", secret) >=
                                                                    sizeof(key))
        goto fail;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    if (!HMAC(EVP_sha1(), key, (int)strlen(key), (const unsigned char *)to_sign.data, to_sign.len, mac, &mac_len))
        goto fail;
    if (sig_len < 4 * ((mac_len + 2) / 3) + 1)
        goto fail;
    EVP_EncodeBlock((unsigned char *)sig, mac, (int)mac_len);
    rc = NS_OK;
fail:
    prov_buf_free(&query);
    prov_buf_free(&to_sign);
    return rc;
}

void ali_iso8601(int64_t epoch_s, char out[21])
{
    time_t t = (time_t)epoch_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int64_t ali_parse_iso8601_ms(const char *s)
{
    int y, mo, d, h, mi, sec = 0;
    char z = 0;
    if (!s)
        return -1;
    int n = sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &sec, &z);
    if (n != 7) {
        sec = 0;
        if (sscanf(s, "%4d-%2d-%2dT%2d:%2d%c", &y, &mo, &d, &h, &mi, &z) != 6)
            return -1;
    }
    if (z != 'Z' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return -1;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi, .tm_sec = sec};
    return (int64_t)timegm(&tm) * 1000;
}

int ali_nonce(char out[33])
{
    unsigned char r[16];
    if (RAND_bytes(r, sizeof(r)) != 1)
        return NS_ERR_INTERNAL;
    prov_hex(r, sizeof(r), out);
    return NS_OK;
}

int ali_mns_sign(const char *method, const char *content_md5, const char *content_type, const char *date,
                 ali_params *mns_headers, const char *resource, const char *secret, char *sig, size_t sig_len)
{
    prov_buf s = PROV_BUF_INIT;
    int rc = NS_ERR_INTERNAL;
    prov_buf_printf(&s, "%s\n%s\n%s\n%s\n", method, content_md5 ? content_md5 : "", content_type ? content_type : "",
                   date);
    ali_params_sort(mns_headers);
    for (size_t i = 0; i < mns_headers->n; i++)
        prov_buf_printf(&s, "%s:%s\n", mns_headers->items[i].key, mns_headers->items[i].value);
    prov_buf_puts(&s, resource);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    if (prov_buf_failed(&s) ||
        !HMAC(EVP_sha1(), secret, (int)strlen(secret), (const unsigned char *)s.data, s.len, mac, &mac_len) ||
        sig_len < 4 * ((mac_len + 2) / 3) + 1)
        goto fail;
    EVP_EncodeBlock((unsigned char *)sig, mac, (int)mac_len);
    rc = NS_OK;
fail:
    prov_buf_free(&s);
    return rc;
}

void ali_http_date(int64_t epoch_s, char out[30])
{
    static const char *const DAYS[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *const MONTHS[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t t = (time_t)epoch_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    char buf[64];
    snprintf(buf, sizeof(buf), "%s, %02d %s %04d %02d:%02d:%02d GMT", DAYS[tm.tm_wday], tm.tm_mday % 100,
             MONTHS[tm.tm_mon % 12], (tm.tm_year + 1900) % 10000, tm.tm_hour % 100, tm.tm_min % 100, tm.tm_sec % 100);
    memcpy(out, buf, 29);
    out[29] = '\0';
}
