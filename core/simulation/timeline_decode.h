/*
 * Internal to the timeline parser: the decoding context and one decoder per action (timeline_actions.c).
 * Decoders fill the step from the action's value node and return 0 or NS_ERR_INVALID_CONFIG with a
 * "FILE:LINE: timeline step N: PATH: ..." message recorded.
 */
#ifndef NS_TIMELINE_DECODE_H
#define NS_TIMELINE_DECODE_H

#include "simulation/timeline.h"
#include "manifest/decode.h"
#include "manifest/yaml_doc.h"

typedef struct tl_ctx {
    ns_dec dec;
    const char *text; /* the timeline's source, to tell block scalars from flow scalars */
    size_t len;
    const char *dir; /* where relative manifest paths start; "" for the current directory */
    const struct ns_nodeclass_kinds *kinds; /* the loaded providers' node-class kinds (borrowed) */
} tl_ctx;

int tl_decode_scale(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s);
int tl_decode_add(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s);
int tl_decode_delete(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s);
int tl_decode_patch(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s);
int tl_decode_interrupt(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s);
int tl_decode_node_condition(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s);
int tl_decode_launch_failure(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s);
/* Sets s->end_ms from s->at_ms. */
int tl_decode_advance(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s);

#endif
