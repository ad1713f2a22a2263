/*
 * Reads a YAML file whose document is one mapping of scalar keys to scalar values (a provider's options file).
 * An empty file or one holding only comments is an empty map.
 */
#ifndef NS_YAML_FLAT_MAP_H
#define NS_YAML_FLAT_MAP_H

#include <stddef.h>

typedef struct ns_flat_entry {
    char *key;
    char *value;
    int line; /* 1-based line of the key */
} ns_flat_entry;

typedef struct ns_flat_map {
    ns_flat_entry *entries;
    size_t n;
} ns_flat_map;

/* Fills *out (the caller's; free with ns_flat_map_free). Errors name the file and line: a syntax error, a nested
 * value, a duplicate key, more than one document. */
int ns_flat_map_read(const char *path, ns_flat_map *out);
/* The same from text in memory (not copied); `path` names it in messages. */
int ns_flat_map_parse(const char *path, const char *text, size_t len, ns_flat_map *out);
void ns_flat_map_free(ns_flat_map *map);

#endif
