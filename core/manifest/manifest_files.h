/*
 * Which files a manifest path names: the file itself, or a directory's *.yaml, *.yml and *.json files (not hidden
 * ones, not recursing) in name order, the order kubectl apply -f DIR uses.
 */
#ifndef NS_MANIFEST_FILES_H
#define NS_MANIFEST_FILES_H

/* Calls fn(ctx, file) for each file in order, stopping at the first non-zero return, which it returns. Errors
 * reading the path name it (NS_ERR_NOT_FOUND when it does not exist). The file name passed to fn is valid only
 * during the call. */
int ns_manifest_each_file(const char *path, int (*fn)(void *ctx, const char *file), void *ctx);

#endif
