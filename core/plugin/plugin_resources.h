/*
 * The one place the ABI's frozen ns_resources (from a provider: instance types, launch results) becomes the core's
 * ns_res (model/resources.h).
 */
#ifndef NS_PLUGIN_RESOURCES_H
#define NS_PLUGIN_RESOURCES_H

#include "model/resources.h"
#include "nodesmith/provider.h"

/* *dst = src as the core keeps it (dst's previous contents freed). A provider's name that fills its 128-byte slot
 * without a terminator, or more than NS_MAX_EXTENDED_RESOURCES entries, is refused with NS_ERR_INVALID_CONFIG naming
 * `what`; NS_ERR_INTERNAL when out of memory. On failure *dst is empty. */
int ns_res_from_abi(const ns_resources *src, ns_res *dst, const char *what);

#endif
