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

/* Frees an array of n owned strings and the array itself. Accepts NULL. */
void ns_strv_free(char **v, size_t n);

/* Deep copy of an array of n strings into *out; 0 or NS_ERR_INTERNAL. */
int ns_strv_copy(char *const *v, size_t n, char ***out);

#endif
