#include "manifest/json_tree.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"

#define BLOCK_BYTES 16384
#define MAX_DEPTH 200

/* Every node, item array and number text of one tree lives in a chain of blocks freed together. */
typedef struct block {
    struct block *next;
    size_t used, cap;
    _Alignas(max_align_t) unsigned char data[];
} block;

struct ns_jtree {
    block *blocks;
    const ns_ynode *root;
};

static void *arena_alloc(ns_jtree *t, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!t->blocks || t->blocks->used + n > t->blocks->cap) {
        size_t cap = n > BLOCK_BYTES ? n : BLOCK_BYTES;
        block *b = malloc(sizeof(block) + cap);
        if (!b)
            return NULL;
        b->next = t->blocks;
        b->used = 0;
        b->cap = cap;
        t->blocks = b;
    }
    void *p = t->blocks->data + t->blocks->used;
    t->blocks->used += n;
    return p;
}

static ns_ynode *scalar(ns_jtree *t, ns_yscalar_type type, const char *str)
{
    ns_ynode *n = arena_alloc(t, sizeof(*n));
    if (!n)
        return NULL;
    memset(n, 0, sizeof(*n));
    n->kind = NS_Y_SCALAR;
    n->type = type;
    n->text = str ? str : "null";
    n->str = str;
    return n;
}

static ns_ynode *number(ns_jtree *t, double v)
{
    char buf[40];
    bool integral = isfinite(v) && v == floor(v) && fabs(v) < 9.2e18;
    if (integral)
        snprintf(buf, sizeof(buf), "%lld", (long long)v);
    else
        snprintf(buf, sizeof(buf), "%.17g", v);
    char *text = arena_alloc(t, strlen(buf) + 1);
    if (!text)
        return NULL;
    strcpy(text, buf);
    ns_ynode *n = scalar(t, integral ? NS_YS_INT : NS_YS_FLOAT, text);
    if (n) {
        n->i = integral ? (int64_t)v : 0;
        n->f = v;
    }
    return n;
}

static ns_ynode *convert(ns_jtree *t, const cJSON *j, int depth)
{
    if (depth > MAX_DEPTH)
        return NULL;
    if (cJSON_IsString(j)) {
        ns_ynode *n = scalar(t, NS_YS_STRING, j->valuestring);
        if (n)
            n->quoted = true;
        return n;
    }
    if (cJSON_IsNumber(j))
        return number(t, j->valuedouble);
    if (cJSON_IsBool(j)) {
        ns_ynode *n = scalar(t, NS_YS_BOOL, cJSON_IsTrue(j) ? "true" : "false");
        if (n)
            n->b = cJSON_IsTrue(j);
        return n;
    }
    if (!cJSON_IsArray(j) && !cJSON_IsObject(j))
        return scalar(t, NS_YS_NULL, NULL);
    size_t count = (size_t)cJSON_GetArraySize(j);
    bool map = cJSON_IsObject(j);
    ns_ynode *n = arena_alloc(t, sizeof(*n));
    ns_ynode **items = count ? arena_alloc(t, count * (map ? 2 : 1) * sizeof(*items)) : NULL;
    if (!n || (count && !items))
        return NULL;
    memset(n, 0, sizeof(*n));
    n->kind = map ? NS_Y_MAP : NS_Y_SEQ;
    n->items = items;
    n->n = count;
    size_t i = 0;
    for (const cJSON *c = j->child; c; c = c->next, i++) {
        ns_ynode *v = convert(t, c, depth + 1);
        if (!v)
            return NULL;
        if (map) {
            ns_ynode *k = scalar(t, NS_YS_STRING, c->string);
            if (!k)
                return NULL;
            k->quoted = true;
            items[2 * i] = k;
            items[2 * i + 1] = v;
        } else {
            items[i] = v;
        }
    }
    return n;
}

int ns_jtree_new(const cJSON *value, ns_jtree **out)
{
    ns_jtree *t = calloc(1, sizeof(*t));
    *out = NULL;
    if (!t || !(t->root = convert(t, value, 0))) {
        ns_jtree_free(t);
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory (or nested more than %d deep) reading a JSON object",
                       MAX_DEPTH);
    }
    *out = t;
    return 0;
}

const ns_ynode *ns_jtree_root(const ns_jtree *t)
{
    return t->root;
}

void ns_jtree_free(ns_jtree *t)
{
    if (!t)
        return;
    for (block *b = t->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(t);
}
