/*
 * YAML documents as trees with line numbers, read with libyaml's event API.
 *
 * Scalars are typed the way Kubernetes' sigs.k8s.io/yaml (go-yaml v2, YAML 1.1 rules) reads plain scalars: null
 * ("", "~", null), booleans (true/false, yes/no, y/n, on/off in their three spellings), integers (decimal, 0x hex,
 * 0o and leading-0 octal, 0b binary, underscores ignored), floats (1.5, .5, 1e3, .inf, .nan) and otherwise
 * strings. Quoted scalars and scalars tagged !!str are strings. Anchors, aliases and merge keys (<<) are supported;
 * an alias shares the anchored node.
 *
 * Memory: every node belongs to its document; ns_ydoc_free releases them all.
 */
#ifndef NS_YAML_DOC_H
#define NS_YAML_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The deepest nesting of a document, and of any tree walked from it with aliases expanded (an alias inside 200
 * levels that names a node of 200 levels is 400 deep once expanded). */
#define NS_YAML_MAX_DEPTH 256

typedef enum ns_ynode_kind { NS_Y_SCALAR = 0, NS_Y_SEQ, NS_Y_MAP } ns_ynode_kind;

typedef enum ns_yscalar_type {
    NS_YS_NULL = 0,
    NS_YS_BOOL,
    NS_YS_INT,
    NS_YS_FLOAT,
    NS_YS_STRING,
} ns_yscalar_type;

typedef struct ns_ynode {
    ns_ynode_kind kind;
    int line;   /* 1-based */
    int column; /* 1-based */
    /* Scalars */
    ns_yscalar_type type;
    bool quoted;      /* written quoted or as a block scalar (never typed, never a merge key) */
    const char *text; /* as written */
    /* The value as a Go string field would receive it: the text for strings, "true"/"false", the decimal integer,
     * the shortest float; NULL for null. */
    const char *str;
    bool b;
    int64_t i;
    double f;
    /* Sequences: n items. Mappings: n key/value pairs stored as items[2k], items[2k+1] (merge keys resolved). */
    struct ns_ynode **items;
    size_t n;
} ns_ynode;

typedef struct ns_ydoc ns_ydoc;
typedef struct ns_yreader ns_yreader;

/* Opens a file, or an in-memory buffer named `name` in messages (the text is not copied and must outlive the
 * reader). 0, or NS_ERR_NOT_FOUND / NS_ERR_INTERNAL with the error recorded. */
int ns_yreader_open_file(const char *path, ns_yreader **out);
int ns_yreader_open_string(const char *name, const char *text, size_t len, ns_yreader **out);
/* The next document: 0 with *doc set, or 0 with *doc NULL at the end of the stream. A syntax error is
 * NS_ERR_INVALID_CONFIG "FILE:LINE: YAML syntax error: <problem>". Free each document with ns_ydoc_free. */
int ns_yreader_next(ns_yreader *r, ns_ydoc **doc);
const char *ns_yreader_name(const ns_yreader *r);
void ns_yreader_close(ns_yreader *r); /* accepts NULL */

/* The document's root node (a null scalar for an empty document) and the line its content starts on. */
const ns_ynode *ns_ydoc_root(const ns_ydoc *doc);
void ns_ydoc_free(ns_ydoc *doc); /* accepts NULL */

/* Mapping helpers. ns_ymap_get returns the value for a string key, NULL when the key is absent or its value null. */
const ns_ynode *ns_ymap_get(const ns_ynode *map, const char *key);
const ns_ynode *ns_ymap_key(const ns_ynode *map, size_t i);
const ns_ynode *ns_ymap_value(const ns_ynode *map, size_t i);
bool ns_ynode_is_null(const ns_ynode *n);
/* "mapping", "sequence", "string", "integer", "float", "boolean", "null" for messages. */
const char *ns_ynode_type_name(const ns_ynode *n);

/* Feeds the node's content (kinds, keys, scalar strings) into a 64-bit FNV-1a hash; used for deterministic names. */
uint64_t ns_ynode_hash(const ns_ynode *n, uint64_t seed);

#endif
