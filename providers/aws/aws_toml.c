#include "aws_toml.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodesmith/provider.h>

#include "prov_buf.h"

#define MAX_KEY_PARTS 16

struct aws_toml {
    char *key;  /* NULL for the root */
    char *raw;  /* a value's TOML text; NULL for a table */
    aws_toml **children;
    size_t n, cap;
};

typedef struct parser {
    const char *p;
    int line;
    char *err;
    size_t errlen;
    int rc;
    int nesting; /* inline tables open around the current position */
} parser;

static int fail(parser *ps, const char *fmt, ...) NS_PRINTF(2, 3);
static int fail(parser *ps, const char *fmt, ...)
{
    if (ps->rc != NS_OK)
        return ps->rc;
    int n = snprintf(ps->err, ps->errlen, "TOML line %d: ", ps->line);
    if (n >= 0 && (size_t)n < ps->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    ps->rc = NS_ERR_INVALID_ARGUMENT;
    return ps->rc;
}

void aws_toml_free(aws_toml *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        aws_toml_free(t->children[i]);
    free(t->children);
    free(t->key);
    free(t->raw);
    free(t);
}

void aws_toml_clear(aws_toml *t)
{
    for (size_t i = 0; i < t->n; i++)
        aws_toml_free(t->children[i]);
    t->n = 0;
}

static aws_toml *child(const aws_toml *t, const char *key)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->children[i]->key, key) == 0)
            return t->children[i];
    return NULL;
}

static aws_toml *add_child(aws_toml *t, const char *key, const char *raw)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        aws_toml **grown = realloc(t->children, cap * sizeof(*grown));
        if (!grown)
            return NULL;
        t->children = grown;
        t->cap = cap;
    }
    aws_toml *c = calloc(1, sizeof(*c));
    if (!c || !(c->key = strdup(key)) || (raw && !(c->raw = strdup(raw)))) {
        aws_toml_free(c);
        return NULL;
    }
    t->children[t->n++] = c;
    return c;
}

aws_toml *aws_toml_table(aws_toml *t, const char *const *path, size_t depth, bool create)
{
    for (size_t i = 0; t && i < depth; i++) {
        aws_toml *c = child(t, path[i]);
        if (!c && create)
            c = add_child(t, path[i], NULL);
        t = c && !c->raw ? c : NULL;
    }
    return t;
}

int aws_toml_set(aws_toml *t, const char *key, const char *raw_value)
{
    aws_toml *c = child(t, key);
    if (c && !c->raw)
        return NS_ERR_INVALID_ARGUMENT;
    if (!c)
        return add_child(t, key, raw_value) ? NS_OK : NS_ERR_INTERNAL;
    char *copy = strdup(raw_value);
    if (!copy)
        return NS_ERR_INTERNAL;
    free(c->raw);
    c->raw = copy;
    return NS_OK;
}

const char *aws_toml_get(const aws_toml *t, const char *key)
{
    const aws_toml *c = child(t, key);
    return c ? c->raw : NULL;
}

/* ---- reading ---- */

static void skip_blank(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t')
        ps->p++;
}

/* Skips blanks, comments and newlines (between statements, and inside arrays). */
static void skip_space(parser *ps)
{
    for (;;) {
        skip_blank(ps);
        if (*ps->p == '#')
            while (*ps->p && *ps->p != '\n')
                ps->p++;
        if (*ps->p == '\r' || *ps->p == '\n') {
            ps->line += *ps->p == '\n';
            ps->p++;
            continue;
        }
        return;
    }
}

static bool bare_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* One key part: bare, "basic" (escapes \" \\ \t \n only) or 'literal'. Appends to buf. */
static int key_part(parser *ps, prov_buf *buf)
{
    char q = *ps->p;
    if (q == '"' || q == '\'') {
        ps->p++;
        while (*ps->p && *ps->p != q && *ps->p != '\n') {
            char c = *ps->p++;
            if (q == '"' && c == '\\' && *ps->p) {
                char e = *ps->p++;
                c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
            }
            prov_buf_putc(buf, c);
        }
        if (*ps->p != q)
            return fail(ps, "unterminated quoted key");
        ps->p++;
        return NS_OK;
    }
    const char *start = ps->p;
    while (bare_char(*ps->p))
        ps->p++;
    if (ps->p == start)
        return fail(ps, "expected a key");
    prov_buf_append(buf, start, (size_t)(ps->p - start));
    return NS_OK;
}

static void free_parts(char **parts, size_t n);

/* A dotted key into parts[] (each malloc'd). On failure none is left allocated and *n is 0 (a key that fails on its
 * third part leaked the first two: found by fuzz/fuzz_userdata.c). */
static int key_path(parser *ps, char **parts, size_t *n)
{
    *n = 0;
    for (;;) {
        skip_blank(ps);
        int rc = *n == MAX_KEY_PARTS ? fail(ps, "key has too many parts") : NS_OK;
        prov_buf b = PROV_BUF_INIT;
        prov_buf_puts(&b, "");
        if (rc == NS_OK)
            rc = key_part(ps, &b);
        if (rc != NS_OK || prov_buf_failed(&b)) {
            prov_buf_free(&b);
            free_parts(parts, *n);
            *n = 0;
            return rc != NS_OK ? rc : (ps->rc = NS_ERR_INTERNAL);
        }
        parts[(*n)++] = prov_buf_take(&b);
        skip_blank(ps);
        if (*ps->p != '.')
            return NS_OK;
        ps->p++;
    }
}

static void free_parts(char **parts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(parts[i]);
}

/* Moves past a string starting at ps->p (", """, ', '''). */
static int scan_string(parser *ps)
{
    char q = *ps->p;
    bool multi = ps->p[1] == q && ps->p[2] == q;
    ps->p += multi ? 3 : 1;
    for (;;) {
        char c = *ps->p;
        if (!c || (!multi && c == '\n'))
            return fail(ps, "unterminated string");
        if (c == '\n')
            ps->line++;
        if (q == '"' && c == '\\' && ps->p[1]) {
            ps->p += 2;
            continue;
        }
        if (c == q && (!multi || (ps->p[1] == q && ps->p[2] == q))) {
            ps->p += multi ? 3 : 1;
            while (multi && *ps->p == q) /* up to two quotes may close a multi-line string */
                ps->p++;
            return NS_OK;
        }
        ps->p++;
    }
}

static int scan_array(parser *ps)
{
    int depth = 0;
    do {
        char c = *ps->p;
        if (!c)
            return fail(ps, "unterminated array");
        if (c == '"' || c == '\'') {
            if (scan_string(ps) != NS_OK)
                return ps->rc;
            continue;
        }
        if (c == '#' || c == '\n' || c == '\r') {
            skip_space(ps);
            continue;
        }
        depth += c == '[' ? 1 : c == ']' ? -1 : 0;
        ps->p++;
    } while (depth > 0);
    return NS_OK;
}

static int parse_value_into(parser *ps, aws_toml *table, const char *key);

static int parse_inline_table_body(parser *ps, aws_toml *t);

/* key = value into table t, a dotted key making or entering the tables it names. */
static int parse_key_value(parser *ps, aws_toml *t)
{
    char *parts[MAX_KEY_PARTS];
    size_t n = 0;
    if (key_path(ps, parts, &n) != NS_OK)
        return ps->rc;
    aws_toml *target = aws_toml_table(t, (const char *const *)parts, n - 1, true);
    skip_blank(ps);
    int rc = !target ? fail(ps, "key %s is both a value and a table", parts[0])
             : *ps->p != '=' ? fail(ps, "expected '=' after key %s", parts[n - 1])
                             : NS_OK;
    if (rc == NS_OK) {
        ps->p++;
        rc = parse_value_into(ps, target, parts[n - 1]);
    }
    free_parts(parts, n);
    return rc;
}

/* Inline tables nest by recursion (and the tree they build is freed and written by recursion): the depth is bounded
 * so that user data cannot exhaust the stack. */
static int parse_inline_table(parser *ps, aws_toml *t)
{
    if (ps->nesting >= AWS_TOML_MAX_NESTING)
        return fail(ps, "inline tables nested more than %d deep", AWS_TOML_MAX_NESTING);
    ps->nesting++;
    int rc = parse_inline_table_body(ps, t);
    ps->nesting--;
    return rc;
}

static int parse_inline_table_body(parser *ps, aws_toml *t)
{
    ps->p++; /* { */
    skip_blank(ps);
    if (*ps->p == '}') {
        ps->p++;
        return NS_OK;
    }
    for (;;) {
        int rc = parse_key_value(ps, t);
        if (rc != NS_OK)
            return rc;
        skip_blank(ps);
        if (*ps->p == '}') {
            ps->p++;
            return NS_OK;
        }
        if (*ps->p != ',')
            return fail(ps, "expected ',' or '}' in an inline table");
        ps->p++;
    }
}

static int parse_value_into(parser *ps, aws_toml *table, const char *key)
{
    skip_blank(ps);
    if (child(table, key))
        return fail(ps, "key %s is defined twice", key);
    if (*ps->p == '{') {
        aws_toml *sub = add_child(table, key, NULL);
        return sub ? parse_inline_table(ps, sub) : (ps->rc = NS_ERR_INTERNAL);
    }
    const char *start = ps->p;
    int rc = NS_OK;
    if (*ps->p == '"' || *ps->p == '\'')
        rc = scan_string(ps);
    else if (*ps->p == '[')
        rc = scan_array(ps);
    else
        while (*ps->p && !strchr(" \t\r\n#,]}", *ps->p))
            ps->p++;
    if (rc != NS_OK)
        return rc;
    if (ps->p == start)
        return fail(ps, "key %s has no value", key);
    char *raw = strndup(start, (size_t)(ps->p - start));
    rc = raw && add_child(table, key, raw) ? NS_OK : (ps->rc = NS_ERR_INTERNAL);
    free(raw);
    return rc;
}

static int end_of_line(parser *ps)
{
    skip_blank(ps);
    if (*ps->p == '#')
        while (*ps->p && *ps->p != '\n')
            ps->p++;
    if (*ps->p == '\r')
        ps->p++;
    if (*ps->p && *ps->p != '\n')
        return fail(ps, "unexpected text after a value");
    return NS_OK;
}

static int parse_statement(parser *ps, aws_toml *root, aws_toml **current)
{
    char *parts[MAX_KEY_PARTS];
    size_t n = 0;
    if (*ps->p == '[') {
        if (ps->p[1] == '[')
            return fail(ps, "arrays of tables ([[...]]) are not supported");
        ps->p++;
        if (key_path(ps, parts, &n) != NS_OK)
            return ps->rc;
        skip_blank(ps);
        *current = *ps->p == ']' ? aws_toml_table(root, (const char *const *)parts, n, true) : NULL;
        int rc = *ps->p != ']' ? fail(ps, "expected ']' after a table name")
                 : !*current  ? fail(ps, "table %s is already a value", parts[n - 1])
                              : NS_OK;
        free_parts(parts, n);
        if (rc != NS_OK)
            return rc;
        ps->p++;
        return end_of_line(ps);
    }
    int rc = parse_key_value(ps, *current);
    return rc == NS_OK ? end_of_line(ps) : rc;
}

int aws_toml_parse(const char *text, aws_toml **out, char *err, size_t errlen)
{
    *out = NULL;
    aws_toml *root = calloc(1, sizeof(*root));
    if (!root) {
        snprintf(err, errlen, "out of memory");
        return NS_ERR_INTERNAL;
    }
    parser ps = {text ? text : "", 1, err, errlen, NS_OK, 0};
    aws_toml *current = root;
    for (;;) {
        skip_space(&ps);
        if (!*ps.p || parse_statement(&ps, root, &current) != NS_OK)
            break;
    }
    if (ps.rc != NS_OK) {
        if (ps.rc == NS_ERR_INTERNAL)
            snprintf(err, errlen, "out of memory");
        aws_toml_free(root);
        return ps.rc;
    }
    *out = root;
    return NS_OK;
}

/* ---- writing ---- */

char *aws_toml_quote(const char *s)
{
    prov_buf b = PROV_BUF_INIT;
    prov_buf_putc(&b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            prov_buf_printf(&b, "\\%c", c);
        else if (c == '\n')
            prov_buf_puts(&b, "\\n");
        else if (c == '\t')
            prov_buf_puts(&b, "\\t");
        else if (c < 0x20 || c == 0x7f)
            prov_buf_printf(&b, "\\u%04x", c);
        else
            prov_buf_putc(&b, (char)c);
    }
    prov_buf_putc(&b, '"');
    return prov_buf_take(&b);
}

static void put_key(prov_buf *b, const char *key)
{
    bool bare = *key != '\0';
    for (const char *k = key; *k; k++)
        bare &= bare_char(*k);
    if (bare) {
        prov_buf_puts(b, key);
        return;
    }
    char *q = aws_toml_quote(key);
    if (!q) {
        b->failed = true;
        return;
    }
    prov_buf_puts(b, q);
    free(q);
}

static void write_table(prov_buf *b, const aws_toml *t, prov_buf *path)
{
    size_t values = 0;
    for (size_t i = 0; i < t->n; i++)
        values += t->children[i]->raw != NULL;
    if (path->len && (values || t->n == 0))
        prov_buf_printf(b, "%s[%s]\n", b->len ? "\n" : "", prov_buf_str(path));
    for (size_t i = 0; i < t->n; i++)
        if (t->children[i]->raw) {
            put_key(b, t->children[i]->key);
            prov_buf_printf(b, " = %s\n", t->children[i]->raw);
        }
    for (size_t i = 0; i < t->n; i++) {
        if (t->children[i]->raw)
            continue;
        size_t mark = path->len;
        if (path->len)
            prov_buf_putc(path, '.');
        put_key(path, t->children[i]->key);
        write_table(b, t->children[i], path);
        path->len = mark;
        if (path->data)
            path->data[mark] = '\0';
    }
}

char *aws_toml_serialize(const aws_toml *t)
{
    prov_buf b = PROV_BUF_INIT, path = PROV_BUF_INIT;
    prov_buf_puts(&b, "");
    write_table(&b, t, &path);
    bool failed = prov_buf_failed(&path);
    prov_buf_free(&path);
    if (failed) {
        prov_buf_free(&b);
        return NULL;
    }
    return prov_buf_take(&b);
}
