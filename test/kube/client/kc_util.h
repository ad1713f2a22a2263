/* Helpers shared by the client's tests against the real control plane (test/kube): clients built the way an
 * operator configures them, small object builders, and waiting on a condition. */
#ifndef NS_TEST_KC_UTIL_H
#define NS_TEST_KC_UTIL_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "kube/kube_client.h"

/* The admin kubeconfig's client (client certificate, embedded CA). Fails the test on error. */
ns_kube_client *kc_admin(void);
/* A client from kubeconfig text written to a temporary file (the caller's text may use %s for nothing: it is used
 * as is). Returns 0 or the error; *out NULL on error. */
int kc_from_kubeconfig_text(const char *text, const char *context, ns_kube_client **out);
/* A kubeconfig for SERVER with the bed's CA file and the given user block (YAML lines under "user:"). buf >= 4096. */
void kc_kubeconfig(char *buf, size_t len, const char *server, const char *user_yaml);

/* Parses JSON text (fails the test on error). */
cJSON *kc_json(const char *text);
/* Polls fn(ud) every 50 ms until it returns true or timeout_ms passes. */
bool kc_wait(bool (*fn)(void *ud), void *ud, int timeout_ms);
/* Writes TEXT to a new temporary file under /tmp and returns its path (static storage, 4 slots). */
const char *kc_temp_file(const char *text, int mode);
/* Runs kubectl ARGV... (NULL-ended, with the admin kubeconfig) and returns its stdout (the caller frees) or NULL. */
char *kc_kubectl(const char *first, ...);

#endif
