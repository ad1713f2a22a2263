/*
 * Small helpers shared by the model and manifest code: growable arrays and owned-string handling. Internal to the
 * core; not part of the provider ABI.
 */
#ifndef NS_MODEL_UTIL_H
#define NS_MODEL_UTIL_H

#include <stdbool.h>
#include <stddef.h>

/* Makes room for `need` elements of `elem` bytes in *items (capacity *cap). Returns 0 or NS_ERR_INTERNAL with the
 * error recorded; on failure *items and *cap are unchanged. */
int ns_grow(void **items, size_t *cap, size_t need, size_t elem);

/* Binary search for key in n structs of `stride` bytes sorted by the string member at `key_offset`: the index of the
 * match (*found true), or where key would be inserted (*found false). */
size_t ns_sorted_find(const void *items, size_t n, size_t stride, size_t key_offset, const char *key, bool *found);

/* strdup that records NS_ERR_INTERNAL on allocation failure. NULL in, NULL out (not an error). */
char *ns_strdup(const char *s);

/* A whole input file (manifest, timeline, options) into *text, NUL-terminated and owned by the caller, its length in
 * *len. `what` names the file in messages ("cannot open manifest x.yaml: ..."). NS_ERR_NOT_FOUND when it does not
 * exist; NS_ERR_INVALID_CONFIG for a directory ("x is a directory, not a manifest file"), a file larger than
 * NS_INPUT_FILE_MAX or a read error. The largest file: Kubernetes refuses objects above 1.5 MB and etcd requests above
 * 2 MiB, so 256 MiB leaves room for any real list of objects. */
#define NS_INPUT_FILE_MAX (256 << 20)
int ns_read_file(const char *path, const char *what, char **text, size_t *len);

/* The 1-based line and column of byte `offset` of text (len bytes): for parsers that report only an offset, such as
 * libyaml's reader (a NUL byte, bad UTF-8) and expat. */
void ns_text_position(const char *text, size_t len, size_t offset, size_t *line, size_t *column);

/* Frees an array of n owned strings and the array itself. Accepts NULL. */
void ns_strv_free(char **v, size_t n);

/* Deep copy of an array of n strings into *out; 0 or NS_ERR_INTERNAL. */
int ns_strv_copy(char *const *v, size_t n, char ***out);

#endif
