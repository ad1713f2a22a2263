/*
 * Structured logging: one JSON object a line, in Karpenter's (zap) shape:
 *   {"level":"INFO","time":"2026-11-21T10:00:00.000Z","logger":"controller","message":"...","nodeclaim":"..."}
 * Values of fields whose key names a secret are replaced by "<redacted>".
 */
#ifndef NS_LOG_H
#define NS_LOG_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "nodesmith/provider.h"

/* Where the current context's lines go (default stderr) and the lowest level written (default INFO): lines are
 * written to the calling thread's current context (context/ns_ctx.h). Set before the context is shared. */
void ns_log_set_output(FILE *out);
void ns_log_set_level(ns_log_level level);
/* Parses "debug", "info", "warn", "error"; returns 0 or NS_ERR_INVALID_ARGUMENT. */
int ns_log_parse_level(const char *text, ns_log_level *out);

/* Writes one line to the current context's log, timed by its clock. fields: n_fields key/value pairs. Thread-safe; a
 * line is written whole. */
void ns_log_fields(ns_log_level level, const char *logger, const char *message, const ns_label *fields,
                   size_t n_fields);

/* Writes one line whose fields are the members of `fields` (a JSON object, taken and freed; NULL for none), so a
 * field can be an object or a number as Karpenter's zap lines have them: {"NodeClaim":{"name":"x"},"pods":3}. */
void ns_log_json(ns_log_level level, const char *logger, const char *message, cJSON *fields);
/* {"name": name, "namespace": ns}, as controller-runtime's zap writes a klog object reference (no namespace member
 * when ns is NULL or empty). A new object (the caller's), or NULL when out of memory. */
cJSON *ns_log_ref(const char *ns, const char *name);

/* Convenience: key/value const char* pairs ending with NULL, e.g.
 *   ns_log(NS_LOG_INFO, "provisioner", "launched nodeclaim", "nodeclaim", name, "instance-type", type, NULL); */
void ns_log(ns_log_level level, const char *logger, const char *message, ...);

/* True when the key names something secret. */
int ns_log_key_is_secret(const char *key);

#endif
