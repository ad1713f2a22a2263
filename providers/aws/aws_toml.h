/*
 * A small TOML document model, enough to merge Bottlerocket user data the way Karpenter does: read the user's
 * settings, overwrite or add the keys the provider owns, and write the whole document back.
 *
 * It reads tables ([a.b."c"]), dotted and quoted keys, and every value kind: values are kept as the TOML text they
 * were written as (strings, numbers, booleans, dates, arrays including multi-line ones), except inline tables, which
 * become tables so that keys can be merged into them. Arrays of tables ([[x]]) are refused. Comments are dropped.
 * Inline tables nest at most AWS_TOML_MAX_NESTING deep and keys have at most 16 dotted parts, so a document's tables
 * are at most 16 + 32 x 16 levels deep whatever the input (the reader, free and writer recurse per level).
 * Pure: no host upcalls.
 */
#ifndef NS_AWS_TOML_H
#define NS_AWS_TOML_H

#include <stdbool.h>
#include <stddef.h>

#define AWS_TOML_MAX_NESTING 32

typedef struct aws_toml aws_toml; /* a table; the document is the root table */

/* Parses text (may be NULL or empty). NS_OK with *out (free with aws_toml_free), NS_ERR_INVALID_ARGUMENT with the
 * line and reason in err, or NS_ERR_INTERNAL when memory runs out. */
int aws_toml_parse(const char *text, aws_toml **out, char *err, size_t errlen);
void aws_toml_free(aws_toml *t); /* accepts NULL */

/* The table at path (path[0..depth-1]) under t, created when `create` (NULL when absent, or when a value sits there). */
aws_toml *aws_toml_table(aws_toml *t, const char *const *path, size_t depth, bool create);
/* Sets key in table t to a raw TOML value ("\"text\"", "42", "false", "[\"a\", \"b\"]"), replacing a value of that
 * key. NS_OK, NS_ERR_INVALID_ARGUMENT when key names a table, NS_ERR_INTERNAL when memory runs out. */
int aws_toml_set(aws_toml *t, const char *key, const char *raw_value);
/* The raw text of key's value in t, or NULL (absent, or a table). */
const char *aws_toml_get(const aws_toml *t, const char *key);
/* Removes every key of t (values and sub-tables). */
void aws_toml_clear(aws_toml *t);

/* Writes the document: root values first, then each table under a [header], depth first, in the order keys were
 * first seen. Returns a malloc'd string (free with free()), or NULL when memory runs out. */
char *aws_toml_serialize(const aws_toml *t);

/* Writes s as a TOML basic string ("..." with escapes) into a malloc'd string, or NULL when memory runs out. */
char *aws_toml_quote(const char *s);

#endif
