/*
 * Internal to timelines: the `launchError` action, launches failing with an error other than insufficient capacity
 * (docs/timeline.md). Errors are NS_ERR_INVALID_CONFIG with "FILE:LINE: timeline step N: PATH: ...".
 */
#ifndef NS_TIMELINE_LAUNCH_ERROR_H
#define NS_TIMELINE_LAUNCH_ERROR_H

#include "simulation/timeline_decode.h"

int tl_decode_launch_error(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s);
/* `launchTimeout: {count: N}` (count defaults to 1). */
int tl_decode_launch_timeout(tl_ctx *c, const ns_ynode *v, const char *path, ns_tl_step *s);
/* The timeline's name of an ns_err category ("Internal", ...), or "unknown". */
const char *tl_launch_error_name(int error);

#endif
