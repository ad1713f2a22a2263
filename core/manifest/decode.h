/*
 * Helpers for decoding Kubernetes objects from YAML trees, strictly: unknown fields, wrong types and malformed
 * values are errors of the form
 *   FILE:LINE: KIND NAME: FIELD.PATH: what is wrong
 * recorded with NS_FAIL (category NS_ERR_INVALID_CONFIG).
 *
 * Scalars are read the way sigs.k8s.io/yaml decodes into typed Go structs: a string field accepts any scalar and
 * takes its Go-string form (an unquoted 8 becomes "8", yes becomes "true"); integer fields need an integer (or a
 * float with no fraction); boolean fields need a boolean. Null counts as absent.
 */
#ifndef NS_MANIFEST_DECODE_H
#define NS_MANIFEST_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manifest/yaml_doc.h"
#include "model/labels.h"
#include "model/resources.h"
#include "nodesmith/provider.h"

#define NS_PATH_MAX 512

typedef struct ns_dec {
    const char *file;
    char object[256]; /* "Pod default/web" once the name is known, else the kind */
    /* An object of the API server's watch (ns_manifest_load_tree), decoded again on each of its events: what its
     * content warns about once per version is the controller's to log (a CapacityBuffer's ResolutionFailed or ignored
     * percentage, controller/buffer_status.h), not the decoder's. */
    bool from_api_server;
} ns_dec;

/* Records "FILE:LINE: OBJECT: PATH: message" for the node `at` and returns NS_ERR_INVALID_CONFIG. */
int ns_dec_fail(const ns_dec *d, const ns_ynode *at, const char *path, const char *fmt, ...) NS_PRINTF(4, 5);
/* Prefixes the current error (one whose message starts with a field path) with "FILE:LINE: OBJECT: ". */
int ns_dec_wrap(const ns_dec *d, const ns_ynode *at);

/* path + "." + key (or key alone when path is empty), and path + "[i]". */
void ns_path_key(char *buf, size_t len, const char *path, const char *key);
void ns_path_index(char *buf, size_t len, const char *path, size_t i);

/* Checks that node is a mapping with string keys, no duplicate keys and only keys listed in `known` (a NULL-ended
 * list; NULL accepts any key). The first unknown key is reported as: unknown field "PATH.KEY". */
int ns_dec_fields(const ns_dec *d, const ns_ynode *node, const char *path, const char *const *known);

/* The child map[key] when it is of `kind` (NULL and 0 when absent or null; NULL and an error for another kind). */
const ns_ynode *ns_dec_child(const ns_dec *d, const ns_ynode *map, const char *path, const char *key,
                             ns_ynode_kind kind, int *rc);
/* A field found in a mapping: its node and its path ("spec.template.metadata"). */
typedef struct ns_dec_field {
    const ns_ynode *node;
    char path[NS_PATH_MAX];
} ns_dec_field;
/* The object (mapping) map[key] with its keys checked against `known` as ns_dec_fields does: 1 with *f filled when it
 * is present, 0 when absent or null, or the error when it is not a mapping or has an unknown key. */
int ns_dec_object(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, const char *const *known,
                  ns_dec_field *f);

/* Typed fields of a mapping. Absent (or null) fields leave the outputs untouched and set *present (may be NULL)
 * to false. Strings are allocated; the caller frees them. */
int ns_dec_string(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, char **out);
int ns_dec_string_required(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, char **out);
int ns_dec_int(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, int64_t min, int64_t max,
               int64_t *out, bool *present);
int ns_dec_int32(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, int32_t min, int32_t max,
                 int32_t *out, bool *present);
int ns_dec_bool(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, bool *out, bool *present);
/* A map of strings (annotations, kubelet thresholds), added to *out. */
int ns_dec_labels(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, ns_labels *out);
/* A label map (metadata.labels, nodeSelector, matchLabels, template labels): as ns_dec_labels, and each key must be a
 * qualified name and each value a label value within Kubernetes' limits (model/names.h), else FILE:LINE names it. */
int ns_dec_label_map(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, ns_labels *out);
/* Decodes one item of a sequence (at path p) into out, an element of the new array; arg is the caller's. */
typedef int (*ns_dec_item_fn)(const ns_dec *d, const ns_ynode *item, const char *p, const void *arg, void *out);
/* The sequence at path.key decoded item by item into a new array of elements of `size` bytes, which replaces *out
 * (the old one freed with free_items) once every item decoded; absent or empty, *out is left as it is. On an error
 * the new array is freed with free_items, items not reached being zero. */
int ns_dec_seq(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, size_t size, ns_dec_item_fn fn,
               const void *arg, void (*free_items)(void *v, size_t n), void **out, size_t *n);
/* A list of strings; *out allocated (free with ns_strv_free). */
int ns_dec_strings(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, char ***out,
                   size_t *n);
/* A resource list (requests, limits, capacity, reserved, ...): name -> quantity, each at least zero, as Kubernetes'
 * validation requires of pod requests, limits and overhead, node capacity and the kubelet's reservations. */
int ns_dec_resources(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, ns_res *out,
                     bool *present);
/* The same where Kubernetes takes any sign (a NodePool's limits). */
int ns_dec_resources_signed(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, ns_res *out,
                            bool *present);
/* A Go duration ("30s", "720h"; "Never" when allow_never) in milliseconds. */
int ns_dec_duration(const ns_dec *d, const ns_ynode *map, const char *path, const char *key, bool allow_never,
                    int64_t *out_ms, bool *present);

/* The Go-string form of a scalar node, or an error naming path when the node is not a scalar. */
int ns_dec_scalar_string(const ns_dec *d, const ns_ynode *node, const char *path, const char **out);

#endif
