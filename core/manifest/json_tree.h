/*
 * A JSON value (cJSON, as the API server sends objects) seen as the manifest decoders' tree (ns_ynode), so objects
 * from the API server and from manifest files go through the same decoders: one decoder per kind. No text is
 * produced or re-parsed; strings point into the cJSON value, which must outlive the tree.
 *
 * JSON scalars map to typed YAML scalars: strings are quoted strings, integral numbers integers, other numbers
 * floats, true/false booleans, null null. Nodes have no line (0): messages name the object and the field path.
 */
#ifndef NS_JSON_TREE_H
#define NS_JSON_TREE_H

#include <cjson/cJSON.h>

#include "manifest/yaml_doc.h"

typedef struct ns_jtree ns_jtree;

/* 0 with *out (the caller's, ns_jtree_free), or NS_ERR_INTERNAL on allocation failure or a value nested more than
 * 200 deep. */
int ns_jtree_new(const cJSON *value, ns_jtree **out);
const ns_ynode *ns_jtree_root(const ns_jtree *t);
void ns_jtree_free(ns_jtree *t); /* accepts NULL */

#endif
