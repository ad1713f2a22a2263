#include "manifest/yaml_doc.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "errors/ns_error.h"
#include "model/hash.h"
#include "model/model_util.h"

#define MAX_DEPTH NS_YAML_MAX_DEPTH
#define HASH_BUDGET 1000000

typedef struct anchor {
    char *name;
    ns_ynode *node;
} anchor;

struct ns_ydoc {
    ns_ynode *root;
    ns_ynode **nodes; /* every node of the document, each once */
    size_t n_nodes, cap_nodes;
    anchor *anchors;
    size_t n_anchors, cap_anchors;
};

typedef struct frame {
    ns_ynode *node;
    size_t count; /* items appended so far */
    size_t cap;
    char *anchor;
} frame;

struct ns_yreader {
    yaml_parser_t parser;
    char *owned;      /* a file's content, read whole so a reader error's byte offset can be given a line */
    const char *text; /* the input */
    size_t len;
    char *name;
    bool done;
};

/* ---- reader ---- */

static int open_common(const char *name, ns_yreader **out, ns_yreader **r)
{
    *out = NULL;
    *r = calloc(1, sizeof(**r));
    if (!*r)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory opening %s", name);
    (*r)->name = ns_strdup(name);
    if (!(*r)->name || !yaml_parser_initialize(&(*r)->parser)) {
        free((*r)->name);
        free(*r);
        return NS_FAIL(NS_ERR_INTERNAL, "cannot initialise the YAML parser for %s", name);
    }
    return 0;
}

int ns_yreader_open_file(const char *path, ns_yreader **out)
{
    char *text = NULL;
    size_t len = 0;
    int rc = ns_read_file(path, "manifest", &text, &len);
    if (rc < 0)
        return rc;
    ns_yreader *r;
    if ((rc = open_common(path, out, &r)) < 0) {
        free(text);
        return rc;
    }
    r->owned = text;
    r->text = text;
    r->len = len;
    yaml_parser_set_input_string(&r->parser, (const unsigned char *)text, len);
    *out = r;
    return 0;
}

int ns_yreader_open_string(const char *name, const char *text, size_t len, ns_yreader **out)
{
    ns_yreader *r;
    int rc = open_common(name, out, &r);
    if (rc < 0)
        return rc;
    r->text = text;
    r->len = len;
    yaml_parser_set_input_string(&r->parser, (const unsigned char *)text, len);
    *out = r;
    return 0;
}

const char *ns_yreader_name(const ns_yreader *r)
{
    return r->name;
}

void ns_yreader_close(ns_yreader *r)
{
    if (!r)
        return;
    yaml_parser_delete(&r->parser);
    free(r->owned);
    free(r->name);
    free(r);
}

/* ---- documents ---- */

static void node_free(ns_ynode *n)
{
    if (n->str != n->text)
        free((void *)n->str);
    free((void *)n->text);
    free(n->items);
    free(n);
}

void ns_ydoc_free(ns_ydoc *doc)
{
    if (!doc)
        return;
    for (size_t i = 0; i < doc->n_nodes; i++)
        node_free(doc->nodes[i]);
    free(doc->nodes);
    for (size_t i = 0; i < doc->n_anchors; i++)
        free(doc->anchors[i].name);
    free(doc->anchors);
    free(doc);
}

const ns_ynode *ns_ydoc_root(const ns_ydoc *doc)
{
    return doc->root;
}

static ns_ynode *new_node(ns_ydoc *doc, ns_ynode_kind kind, const yaml_mark_t *mark)
{
    ns_ynode *n = calloc(1, sizeof(*n));
    if (!n || ns_grow((void **)&doc->nodes, &doc->cap_nodes, doc->n_nodes + 1, sizeof(*doc->nodes)) < 0) {
        free(n);
        NS_FAIL(NS_ERR_INTERNAL, "out of memory reading YAML");
        return NULL;
    }
    doc->nodes[doc->n_nodes++] = n;
    n->kind = kind;
    n->line = (int)mark->line + 1;
    n->column = (int)mark->column + 1;
    return n;
}

/* ---- scalar typing (go-yaml v2's resolve) ---- */

static bool in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

/* Go's strconv.ParseInt(s, 0, 64) after underscores were removed. */
static bool parse_go_int(const char *s, int64_t *out)
{
    const char *p = s;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    int base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        base = 16, p += 2;
    else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O'))
        base = 8, p += 2;
    else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
        base = 2, p += 2;
    else if (p[0] == '0' && p[1])
        base = 8, p += 1;
    if (!*p)
        return false;
    unsigned __int128 v = 0;
    for (; *p; p++) {
        int d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (*p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else if (*p >= 'A' && *p <= 'F')
            d = *p - 'A' + 10;
        else
            return false;
        if (d >= base)
            return false;
        v = v * (unsigned)base + (unsigned)d;
        if (v > (unsigned __int128)INT64_MAX + 1)
            return false;
    }
    if (!neg && v > (unsigned __int128)INT64_MAX)
        return false;
    *out = neg ? (int64_t)(0 - (uint64_t)v) : (int64_t)v;
    return true;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    int before = 0, after = 0;
    while (*p >= '0' && *p <= '9')
        p++, before++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, after++;
        if (before == 0 && after == 0)
            return false;
    } else if (before == 0) {
        return false;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        int exp = 0;
        while (*p >= '0' && *p <= '9')
            p++, exp++;
        if (exp == 0)
            return false;
    }
    return *p == '\0';
}

/* Go's strconv.FormatFloat(f, 'g', -1, 64), which sigs.k8s.io/yaml uses to turn a float into a string field:
 * the shortest digits that round-trip, in exponent form only when the exponent is < -4 or >= 6. */
static char *format_float(double f)
{
    char buf[64];
    if (isnan(f)) {
        snprintf(buf, sizeof(buf), "NaN");
    } else if (isinf(f)) {
        snprintf(buf, sizeof(buf), f > 0 ? "+Inf" : "-Inf");
    } else {
        int prec = 1;
        for (; prec < 17; prec++) {
            snprintf(buf, sizeof(buf), "%.*e", prec - 1, f);
            if (strtod(buf, NULL) == f)
                break;
        }
        snprintf(buf, sizeof(buf), "%.*e", prec - 1, f);
        int exp = atoi(strchr(buf, 'e') + 1);
        if (exp >= -4 && exp < 6)
            snprintf(buf, sizeof(buf), "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0, f);
    }
    return ns_strdup(buf);
}

static void type_plain(ns_ynode *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", NULL};
    static const char *const falses[] = {"n",     "N",     "no",  "No",  "NO",  "false",
                                         "False", "FALSE", "off", "Off", "OFF", NULL};
    static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
    static const char *const infs[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
    static const char *const ninfs[] = {"-.inf", "-.Inf", "-.INF", NULL};
    const char *t = n->text;
    if (in_list(t, nulls)) {
        n->type = NS_YS_NULL;
        return;
    }
    if (in_list(t, trues) || in_list(t, falses)) {
        n->type = NS_YS_BOOL;
        n->b = in_list(t, trues);
        return;
    }
    if (in_list(t, nans) || in_list(t, infs) || in_list(t, ninfs)) {
        n->type = NS_YS_FLOAT;
        n->f = in_list(t, nans) ? NAN : in_list(t, infs) ? INFINITY : -INFINITY;
        return;
    }
    if (!((t[0] >= '0' && t[0] <= '9') || t[0] == '-' || t[0] == '+' || t[0] == '.'))
        return;
    char plain[128];
    size_t w = 0;
    for (const char *p = t; *p && w + 1 < sizeof(plain); p++)
        if (*p != '_')
            plain[w++] = *p;
    plain[w] = '\0';
    if (strlen(t) >= sizeof(plain))
        return;
    if (parse_go_int(plain, &n->i)) {
        n->type = NS_YS_INT;
        return;
    }
    if (yaml_style_float(plain)) {
        n->type = NS_YS_FLOAT;
        n->f = strtod(plain, NULL);
        return;
    }
    if (strncmp(plain, "0b", 2) == 0 || strncmp(plain, "-0b", 3) == 0) {
        int64_t v;
        if (parse_go_int(plain, &v)) {
            n->type = NS_YS_INT;
            n->i = v;
        }
    }
}

/* Sets type and the Go-string view of a scalar. */
static int type_scalar(ns_ynode *n, const yaml_event_t *ev)
{
    const char *tag = (const char *)ev->data.scalar.tag;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    n->quoted = !plain;
    n->type = NS_YS_STRING;
    bool typed = tag ? (strcmp(tag, "tag:yaml.org,2002:int") == 0 || strcmp(tag, "tag:yaml.org,2002:float") == 0 ||
                        strcmp(tag, "tag:yaml.org,2002:bool") == 0 || strcmp(tag, "tag:yaml.org,2002:null") == 0)
                     : plain;
    if (typed)
        type_plain(n);
    switch (n->type) {
    case NS_YS_STRING:
        n->str = n->text;
        return 0;
    case NS_YS_NULL:
        n->str = NULL;
        return 0;
    case NS_YS_BOOL:
        n->str = ns_strdup(n->b ? "true" : "false");
        break;
    case NS_YS_INT: {
        char buf[32];
        snprintf(buf, sizeof(buf), "%" PRId64, n->i);
        n->str = ns_strdup(buf);
        break;
    }
    case NS_YS_FLOAT:
        n->str = format_float(n->f);
        break;
    }
    return n->str ? 0 : NS_ERR_INTERNAL;
}

/* ---- building ---- */

static int add_anchor(ns_ydoc *doc, const char *name, ns_ynode *node)
{
    if (!name)
        return 0;
    char *copy = ns_strdup(name);
    if (!copy || ns_grow((void **)&doc->anchors, &doc->cap_anchors, doc->n_anchors + 1, sizeof(anchor)) < 0) {
        free(copy);
        return NS_ERR_INTERNAL;
    }
    doc->anchors[doc->n_anchors++] = (anchor){copy, node};
    return 0;
}

static ns_ynode *find_anchor(const ns_ydoc *doc, const char *name)
{
    for (size_t i = doc->n_anchors; i > 0; i--) /* the latest definition wins */
        if (strcmp(doc->anchors[i - 1].name, name) == 0)
            return doc->anchors[i - 1].node;
    return NULL;
}

static int attach(ns_ydoc *doc, frame *stack, int depth, ns_ynode *node)
{
    if (depth == 0) {
        doc->root = node;
        return 0;
    }
    frame *f = &stack[depth - 1];
    if (ns_grow((void **)&f->node->items, &f->cap, f->count + 1, sizeof(ns_ynode *)) < 0)
        return NS_ERR_INTERNAL;
    f->node->items[f->count++] = node;
    return 0;
}

static bool is_merge_key(const ns_ynode *k)
{
    return k->kind == NS_Y_SCALAR && !k->quoted && strcmp(k->text, "<<") == 0;
}

static bool has_key(ns_ynode **items, size_t pairs, const ns_ynode *key)
{
    if (key->kind != NS_Y_SCALAR)
        return false;
    for (size_t i = 0; i < pairs; i++)
        if (items[2 * i]->kind == NS_Y_SCALAR && strcmp(items[2 * i]->text, key->text) == 0)
            return true;
    return false;
}

static int merge_error(const char *file, const ns_ynode *at)
{
    return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%d: YAML merge key << needs a mapping or a list of mappings", file,
                   at->line);
}

/* Rewrites a mapping whose keys include <<: explicit keys first, then merged keys not already present, earlier
 * merge sources first. */
static int resolve_merges(const char *file, ns_ynode *map)
{
    bool any = false;
    for (size_t i = 0; i < map->n && !any; i++)
        any = is_merge_key(map->items[2 * i]);
    if (!any)
        return 0;
    size_t total = 0;
    for (size_t i = 0; i < map->n; i++) {
        const ns_ynode *k = map->items[2 * i], *v = map->items[2 * i + 1];
        if (!is_merge_key(k)) {
            total++;
            continue;
        }
        if (v->kind == NS_Y_MAP)
            total += v->n;
        else if (v->kind == NS_Y_SEQ)
            for (size_t j = 0; j < v->n; j++) {
                if (v->items[j]->kind != NS_Y_MAP)
                    return merge_error(file, v->items[j]);
                total += v->items[j]->n;
            }
        else
            return merge_error(file, v);
    }
    ns_ynode **out = calloc(total * 2 + 1, sizeof(*out));
    if (!out)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory merging YAML keys");
    size_t pairs = 0;
    for (size_t i = 0; i < map->n; i++) {
        if (!is_merge_key(map->items[2 * i])) {
            out[2 * pairs] = map->items[2 * i];
            out[2 * pairs + 1] = map->items[2 * i + 1];
            pairs++;
        }
    }
    for (size_t i = 0; i < map->n; i++) {
        const ns_ynode *v = map->items[2 * i + 1];
        if (!is_merge_key(map->items[2 * i]))
            continue;
        size_t n_sources = v->kind == NS_Y_MAP ? 1 : v->n;
        for (size_t s = 0; s < n_sources; s++) {
            const ns_ynode *src = v->kind == NS_Y_MAP ? v : v->items[s];
            for (size_t j = 0; j < src->n; j++) {
                if (has_key(out, pairs, src->items[2 * j]))
                    continue;
                out[2 * pairs] = src->items[2 * j];
                out[2 * pairs + 1] = src->items[2 * j + 1];
                pairs++;
            }
        }
    }
    free(map->items);
    map->items = out;
    map->n = pairs;
    return 0;
}

/* libyaml's reader (encoding, control characters such as NUL) reports a byte offset and no mark. */
static int reader_error(ns_yreader *r)
{
    const yaml_parser_t *p = &r->parser;
    size_t line, column;
    ns_text_position(r->text, r->len, p->problem_offset, &line, &column);
    if (p->problem_value >= 0)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%zu: YAML syntax error: %s (byte 0x%02x at column %zu)", r->name,
                       line, p->problem ? p->problem : "unreadable input", (unsigned)p->problem_value & 0xffu, column);
    return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%zu: YAML syntax error: %s (at column %zu)", r->name, line,
                   p->problem ? p->problem : "unreadable input", column);
}

static int syntax_error(ns_yreader *r)
{
    const yaml_parser_t *p = &r->parser;
    if (p->error == YAML_READER_ERROR)
        return reader_error(r);
    const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->mark;
    if (p->context)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%zu: YAML syntax error: %s (%s, line %zu)", r->name, m->line + 1,
                       p->problem ? p->problem : "unknown problem", p->context, p->context_mark.line + 1);
    return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%zu: YAML syntax error: %s", r->name, m->line + 1,
                   p->problem ? p->problem : "unknown problem");
}

/* Handles one event inside a document. Sets *finished at DOCUMENT_END. */
static int on_event(ns_yreader *r, ns_ydoc *doc, frame *stack, int *depth, const yaml_event_t *ev, bool *finished)
{
    ns_ynode *n;
    int rc;
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        if (!(n = new_node(doc, NS_Y_SCALAR, &ev->start_mark)))
            return NS_ERR_INTERNAL;
        if (!(n->text = ns_strdup((const char *)ev->data.scalar.value)) || type_scalar(n, ev) < 0)
            return NS_ERR_INTERNAL;
        if ((rc = add_anchor(doc, (const char *)ev->data.scalar.anchor, n)) < 0)
            return rc;
        return attach(doc, stack, *depth, n);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        bool seq = ev->type == YAML_SEQUENCE_START_EVENT;
        if (*depth >= MAX_DEPTH)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%zu: YAML nesting is deeper than %d levels", r->name,
                           ev->start_mark.line + 1, MAX_DEPTH);
        if (!(n = new_node(doc, seq ? NS_Y_SEQ : NS_Y_MAP, &ev->start_mark)))
            return NS_ERR_INTERNAL;
        if ((rc = attach(doc, stack, *depth, n)) < 0)
            return rc;
        const char *a = (const char *)(seq ? ev->data.sequence_start.anchor : ev->data.mapping_start.anchor);
        stack[*depth] = (frame){n, 0, 0, NULL};
        if (a && !(stack[*depth].anchor = ns_strdup(a)))
            return NS_ERR_INTERNAL;
        (*depth)++;
        return 0;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: {
        frame *f = &stack[--(*depth)];
        n = f->node;
        n->n = n->kind == NS_Y_MAP ? f->count / 2 : f->count;
        rc = n->kind == NS_Y_MAP ? resolve_merges(r->name, n) : 0;
        if (rc == 0)
            rc = add_anchor(doc, f->anchor, n);
        free(f->anchor);
        f->anchor = NULL;
        return rc;
    }
    case YAML_ALIAS_EVENT:
        n = find_anchor(doc, (const char *)ev->data.alias.anchor);
        if (!n)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%zu: YAML alias *%s refers to no earlier anchor", r->name,
                           ev->start_mark.line + 1, (const char *)ev->data.alias.anchor);
        return attach(doc, stack, *depth, n);
    case YAML_DOCUMENT_END_EVENT:
        *finished = true;
        return 0;
    default:
        return 0;
    }
}

int ns_yreader_next(ns_yreader *r, ns_ydoc **out)
{
    *out = NULL;
    ns_ydoc *doc = NULL;
    frame stack[MAX_DEPTH];
    int depth = 0, rc = 0;
    while (!r->done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&r->parser, &ev)) {
            rc = syntax_error(r);
            r->done = true;
            break;
        }
        bool finished = false;
        if (ev.type == YAML_STREAM_END_EVENT) {
            r->done = true;
        } else if (ev.type == YAML_DOCUMENT_START_EVENT) {
            if (!(doc = calloc(1, sizeof(*doc))))
                rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory reading %s", r->name);
        } else if (doc) {
            rc = on_event(r, doc, stack, &depth, &ev, &finished);
        }
        if (rc == 0 && finished && !doc->root) {
            ns_ynode *null_root = new_node(doc, NS_Y_SCALAR, &ev.start_mark);
            rc = null_root ? 0 : NS_ERR_INTERNAL;
            if (null_root) {
                null_root->type = NS_YS_NULL;
                doc->root = null_root;
            }
        }
        yaml_event_delete(&ev);
        if (rc < 0) {
            r->done = true;
            break;
        }
        if (finished) {
            *out = doc;
            return 0;
        }
    }
    for (int i = 0; i < depth; i++)
        free(stack[i].anchor);
    ns_ydoc_free(doc);
    return rc;
}

/* ---- access ---- */

const ns_ynode *ns_ymap_get(const ns_ynode *map, const char *key)
{
    if (!map || map->kind != NS_Y_MAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++) {
        const ns_ynode *k = map->items[2 * i];
        if (k->kind == NS_Y_SCALAR && k->str && strcmp(k->str, key) == 0)
            return ns_ynode_is_null(map->items[2 * i + 1]) ? NULL : map->items[2 * i + 1];
    }
    return NULL;
}

const ns_ynode *ns_ymap_key(const ns_ynode *map, size_t i)
{
    return map->items[2 * i];
}

const ns_ynode *ns_ymap_value(const ns_ynode *map, size_t i)
{
    return map->items[2 * i + 1];
}

bool ns_ynode_is_null(const ns_ynode *n)
{
    return !n || (n->kind == NS_Y_SCALAR && n->type == NS_YS_NULL);
}

const char *ns_ynode_type_name(const ns_ynode *n)
{
    if (!n)
        return "nothing";
    if (n->kind == NS_Y_MAP)
        return "a mapping";
    if (n->kind == NS_Y_SEQ)
        return "a list";
    switch (n->type) {
    case NS_YS_NULL:
        return "null";
    case NS_YS_BOOL:
        return "a boolean";
    case NS_YS_INT:
        return "an integer";
    case NS_YS_FLOAT:
        return "a float";
    default:
        return "a string";
    }
}

static uint64_t hash_rec(const ns_ynode *n, uint64_t h, size_t *budget, int depth)
{
    if (*budget == 0 || depth > MAX_DEPTH) /* a hash of the first part is still deterministic */
        return h;
    (*budget)--;
    unsigned char kind = (unsigned char)n->kind;
    h = ns_hash_step(h, kind);
    if (n->kind == NS_Y_SCALAR) {
        const char *s = n->str ? n->str : "";
        return ns_hash_bytes(h, s, strlen(s) + 1);
    }
    size_t items = n->kind == NS_Y_MAP ? n->n * 2 : n->n;
    for (size_t i = 0; i < items; i++)
        h = hash_rec(n->items[i], h, budget, depth + 1);
    return ns_hash_step(h, '}');
}

uint64_t ns_ynode_hash(const ns_ynode *n, uint64_t seed)
{
    size_t budget = HASH_BUDGET;
    return hash_rec(n, seed ^ NS_HASH_SEED, &budget, 0);
}
