#include "config/yaml_flat_map.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "errors/ns_error.h"
#include "model/model_util.h"

void ns_flat_map_free(ns_flat_map *map)
{
    if (!map)
        return;
    for (size_t i = 0; i < map->n; i++) {
        free(map->entries[i].key);
        free(map->entries[i].value);
    }
    free(map->entries);
    map->entries = NULL;
    map->n = 0;
}

static int add_entry(ns_flat_map *map, const char *path, const yaml_node_t *key, const yaml_node_t *value)
{
    int line = (int)key->start_mark.line + 1;
    if (key->type != YAML_SCALAR_NODE)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%d: option keys must be plain strings", path, line);
    const char *k = (const char *)key->data.scalar.value;
    if (value->type != YAML_SCALAR_NODE)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%d: option '%s' must be a single value, not a list or a map",
                       path, line, k);
    for (size_t i = 0; i < map->n; i++) {
        if (strcmp(map->entries[i].key, k) == 0)
            return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%d: option '%s' is set twice (first on line %d)", path, line,
                           k, map->entries[i].line);
    }
    ns_flat_entry *grown = realloc(map->entries, (map->n + 1) * sizeof(*grown));
    if (!grown)
        return NS_FAIL(NS_ERR_INTERNAL, "%s: out of memory", path);
    map->entries = grown;
    ns_flat_entry *e = &map->entries[map->n];
    e->key = strdup(k);
    e->value = strdup((const char *)value->data.scalar.value);
    e->line = line;
    if (!e->key || !e->value) {
        free(e->key);
        free(e->value);
        return NS_FAIL(NS_ERR_INTERNAL, "%s: out of memory", path);
    }
    map->n++;
    return NS_OK;
}

/* libyaml's reader (NUL and other control characters, bad UTF-8) gives a byte offset and no mark: count lines. */
static int syntax_error(const char *path, const yaml_parser_t *p, const char *text, size_t len)
{
    size_t line = p->problem_mark.line + 1, column = p->problem_mark.column + 1;
    if (p->error == YAML_READER_ERROR)
        ns_text_position(text, len, p->problem_offset, &line, &column);
    return NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%zu:%zu: YAML syntax error: %s", path, line, column,
                   p->problem ? p->problem : "unknown");
}

int ns_flat_map_read(const char *path, ns_flat_map *out)
{
    char *text = NULL;
    size_t len = 0;
    memset(out, 0, sizeof(*out));
    int rc = ns_read_file(path, "options", &text, &len);
    if (rc == NS_OK)
        rc = ns_flat_map_parse(path, text, len, out);
    free(text);
    return rc;
}

int ns_flat_map_parse(const char *path, const char *text, size_t len, ns_flat_map *out)
{
    int rc = NS_OK;
    yaml_parser_t parser;
    yaml_document_t doc;
    bool have_doc = false;
    memset(out, 0, sizeof(*out));
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = syntax_error(path, &parser, text, len);
        goto cleanup;
    }
    have_doc = true;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root)
        goto cleanup;
    if (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0)
        goto cleanup;
    if (root->type != YAML_MAPPING_NODE) {
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s:%zu: expected a mapping of option names to values", path,
                     root->start_mark.line + 1);
        goto cleanup;
    }
    for (yaml_node_pair_t *pair = root->data.mapping.pairs.start; pair < root->data.mapping.pairs.top; pair++) {
        rc = add_entry(out, path, yaml_document_get_node(&doc, pair->key), yaml_document_get_node(&doc, pair->value));
        if (rc != NS_OK)
            goto cleanup;
    }
    yaml_document_t extra;
    if (!yaml_parser_load(&parser, &extra)) {
        rc = syntax_error(path, &parser, text, len);
        goto cleanup;
    }
    bool more = yaml_document_get_root_node(&extra) != NULL;
    yaml_document_delete(&extra);
    if (more)
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: holds more than one YAML document; options take exactly one", path);
cleanup:
    if (have_doc)
        yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (rc != NS_OK)
        ns_flat_map_free(out);
    return rc;
}
