/*
 * Runs an exec credential plugin once (`aws eks get-token`, ...): the command with its args and env, stdin from
 * /dev/null, KUBERNETES_EXEC_INFO describing the request, at most 60 s and 1 MiB of output. Caching is the caller's
 * (kube_auth.c).
 */
#ifndef NS_KUBE_EXEC_H
#define NS_KUBE_EXEC_H

#include <stdint.h>

#include "kube/kube_auth.h"
#include "kube/kube_config.h"

/* cfg->exec must be set. Fills creds (the caller's) and *expiry_ms (0 = no expirationTimestamp). 0 or
 * NS_ERR_UNAUTHORIZED naming the command, its exit status and the last line of its stderr. */
int ns_kube_exec_run(const ns_kube_config *cfg, ns_kube_creds *creds, int64_t *expiry_ms);

#endif
