/* MIME multipart user data: splitting a user's multipart document into its parts and writing parts back out with
 * the boundary Karpenter uses ("//"). Carriage returns are dropped, as Karpenter drops them. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "prov_buf.h"
#include "aws_userdata.h"

int aws_mime_is_mime(const char *text)
{
    while (text && isspace((unsigned char)*text))
        text++;
    return text && (strncmp(text, "MIME-Version:", 13) == 0 || strncmp(text, "Content-Type:", 13) == 0);
}

void aws_mime_parts_free(aws_mime_parts *parts)
{
    for (size_t i = 0; i < parts->n; i++) {
        free(parts->items[i].headers);
        free(parts->items[i].content_type);
        free(parts->items[i].body);
    }
    parts->n = 0;
}

static char *dup_range(const char *start, size_t len)
{
    char *s = malloc(len + 1);
    if (s) {
        memcpy(s, start, len);
        s[len] = '\0';
    }
    return s;
}

/* The value of header `name` in a block of header lines ("Name: value\n" ...), unfolded and trimmed; malloc'd, or
 * NULL when absent or out of memory (*oom tells which). */
static char *header_value(const char *headers, const char *name, bool *oom)
{
    size_t nlen = strlen(name);
    *oom = false;
    for (const char *line = headers; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > nlen && strncasecmp(line, name, nlen) == 0 && line[nlen] == ':') {
            prov_buf v = PROV_BUF_INIT;
            const char *p = line + nlen + 1;
            prov_buf_append(&v, p, len - nlen - 1);
            /* folded continuation lines start with a blank */
            while (end && (end[1] == ' ' || end[1] == '\t')) {
                const char *next = strchr(end + 1, '\n');
                size_t clen = next ? (size_t)(next - end - 1) : strlen(end + 1);
                prov_buf_append(&v, end + 1, clen);
                end = next;
            }
            char *s = prov_buf_take(&v);
            if (!s) {
                *oom = true;
                return NULL;
            }
            char *a = s;
            while (isspace((unsigned char)*a))
                a++;
            size_t alen = strlen(a);
            while (alen && isspace((unsigned char)a[alen - 1]))
                a[--alen] = '\0';
            memmove(s, a, alen + 1);
            return s;
        }
        line += len + (end ? 1 : 0);
    }
    return NULL;
}

/* The boundary parameter of a multipart Content-Type value, into buf. */
static bool boundary_of(const char *content_type, char *buf, size_t len)
{
    if (strncasecmp(content_type, "multipart/", 10) != 0)
        return false;
    for (const char *p = strchr(content_type, ';'); p; p = strchr(p + 1, ';')) {
        const char *q = p + 1;
        while (isspace((unsigned char)*q))
            q++;
        if (strncasecmp(q, "boundary=", 9) != 0)
            continue;
        q += 9;
        size_t n;
        if (*q == '"') {
            q++;
            n = strcspn(q, "\"");
        } else {
            n = strcspn(q, "; \t");
        }
        if (n == 0 || n >= len)
            return false;
        memcpy(buf, q, n);
        buf[n] = '\0';
        return true;
    }
    return false;
}

/* 0 = not a delimiter line, 1 = a part delimiter, 2 = the closing delimiter. */
static int delimiter(const char *line, size_t len, const char *boundary)
{
    size_t blen = strlen(boundary);
    while (len && (line[len - 1] == ' ' || line[len - 1] == '\t'))
        len--;
    if (len < blen + 2 || line[0] != '-' || line[1] != '-' || strncmp(line + 2, boundary, blen) != 0)
        return 0;
    if (len == blen + 2)
        return 1;
    return len == blen + 4 && line[blen + 2] == '-' && line[blen + 3] == '-' ? 2 : 0;
}

static int add_part_text(aws_mime_parts *out, const char *text, size_t len, char *err, size_t errlen)
{
    const char *blank = NULL;
    if (len > 0 && text[0] == '\n')
        blank = text;
    for (size_t i = 0; !blank && i + 1 < len; i++)
        if (text[i] == '\n' && text[i + 1] == '\n')
            blank = text + i + 1;
    if (!blank) {
        snprintf(err, errlen, "user data: MIME part %zu has no blank line after its headers", out->n + 1);
        return NS_ERR_INVALID_CONFIG;
    }
    size_t hlen = (size_t)(blank - text);
    char *headers = dup_range(text, hlen);
    char *body = dup_range(blank + 1, len - hlen - 1);
    bool oom = false;
    char *type = headers ? header_value(headers, "Content-Type", &oom) : NULL;
    if (!type && !oom && headers)
        type = strdup("");
    if (!headers || !body || !type || out->n == AWS_MIME_MAX_PARTS) {
        free(headers);
        free(body);
        free(type);
        if (out->n == AWS_MIME_MAX_PARTS) {
            snprintf(err, errlen, "user data: more than %d MIME parts", AWS_MIME_MAX_PARTS);
            return NS_ERR_INVALID_CONFIG;
        }
        snprintf(err, errlen, "out of memory");
        return NS_ERR_INTERNAL;
    }
    out->items[out->n++] = (aws_mime_part){headers, type, body};
    return NS_OK;
}

static int split_body(const char *body, const char *boundary, aws_mime_parts *out, char *err, size_t errlen)
{
    const char *part = NULL; /* start of the current part's text */
    for (const char *line = body; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        int d = delimiter(line, len, boundary);
        if (d && part) {
            /* the newline before a delimiter belongs to the delimiter */
            size_t plen = line > part ? (size_t)(line - part - 1) : 0;
            int rc = add_part_text(out, part, plen, err, errlen);
            if (rc != NS_OK)
                return rc;
        }
        if (d == 2)
            return NS_OK;
        if (d == 1)
            part = end ? end + 1 : line + len;
        line += len + (end ? 1 : 0);
    }
    snprintf(err, errlen, "user data: the MIME document has no closing boundary --%s--", boundary);
    return NS_ERR_INVALID_CONFIG;
}

int aws_mime_split(const char *text, aws_mime_parts *out, char *err, size_t errlen)
{
    prov_buf clean = PROV_BUF_INIT;
    for (const char *p = text; *p; p++)
        if (*p != '\r')
            prov_buf_putc(&clean, *p);
    char *doc = prov_buf_take(&clean);
    if (!doc) {
        snprintf(err, errlen, "out of memory");
        return NS_ERR_INTERNAL;
    }
    char *start = doc;
    while (isspace((unsigned char)*start))
        start++;
    char *blank = strstr(start, "\n\n");
    int rc = NS_OK;
    char boundary[128];
    bool oom = false;
    char *type = NULL;
    if (!blank) {
        snprintf(err, errlen, "user data: the MIME headers are not followed by a blank line");
        rc = NS_ERR_INVALID_CONFIG;
    } else {
        blank[1] = '\0';
        type = header_value(start, "Content-Type", &oom);
        if (oom) {
            snprintf(err, errlen, "out of memory");
            rc = NS_ERR_INTERNAL;
        } else if (!type || !boundary_of(type, boundary, sizeof(boundary))) {
            snprintf(err, errlen, "user data: MIME user data must be multipart with a boundary (Content-Type: %s)",
                     type ? type : "missing");
            rc = NS_ERR_INVALID_CONFIG;
        } else {
            rc = split_body(blank + 2, boundary, out, err, errlen);
        }
    }
    free(type);
    free(doc);
    return rc;
}

int aws_mime_add(aws_mime_parts *parts, const char *content_type, const char *headers, const char *body)
{
    if (parts->n == AWS_MIME_MAX_PARTS)
        return NS_ERR_INTERNAL;
    prov_buf h = PROV_BUF_INIT;
    if (headers)
        prov_buf_puts(&h, headers);
    else
        prov_buf_printf(&h, "Content-Type: %s\n", content_type);
    aws_mime_part p = {prov_buf_take(&h), strdup(content_type), strdup(body)};
    if (!p.headers || !p.content_type || !p.body) {
        free(p.headers);
        free(p.content_type);
        free(p.body);
        return NS_ERR_INTERNAL;
    }
    parts->items[parts->n++] = p;
    return NS_OK;
}

char *aws_mime_join(const aws_mime_parts *parts)
{
    prov_buf b = PROV_BUF_INIT;
    prov_buf_puts(&b, "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n");
    for (size_t i = 0; i < parts->n; i++)
        prov_buf_printf(&b, "%s--//\n%s\n%s", i ? "\n" : "", parts->items[i].headers, parts->items[i].body);
    prov_buf_puts(&b, "\n--//--\n");
    return prov_buf_take(&b);
}
