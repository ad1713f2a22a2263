/*
 * Internal to timelines: the `patch` action on Nodes, NodeClaims and Pods (labels, annotations; a Node's taints and
 * unschedulable flag). Decoding errors are NS_ERR_INVALID_CONFIG with "FILE:LINE: timeline step N: PATH: ..."; applying
 * names the object and the field that could not change (the runner prefixes the step).
 */
#ifndef NS_TIMELINE_OBJECT_PATCH_H
#define NS_TIMELINE_OBJECT_PATCH_H

#include <stdbool.h>

#include "engine/engine.h"
#include "simulation/timeline_decode.h"

/* True for the kinds this file patches ("Node", "NodeClaim", "Pod"). */
bool tl_object_patch_kind(const char *kind);
/* Fills s->target, labels, annotations, taints and unschedulable from the patch's value node. */
int tl_decode_object_patch(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s);
/* Applies the step's patch to each object it picks; NS_ERR_NOT_FOUND when it picks none. */
int tl_apply_object_patch(ns_engine *e, const ns_tl_step *s);
void tl_kvs_free(ns_tl_kv *v, size_t n); /* keys, values and the array; accepts NULL */

#endif
