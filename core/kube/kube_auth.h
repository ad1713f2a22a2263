/*
 * The credentials a request carries, kept fresh the way client-go keeps them:
 *   - a static token;
 *   - a token file, re-read when it changes on disk (kubelet rotates projected service-account tokens) and after a
 *     401;
 *   - an exec plugin (client.authentication.k8s.io/v1 or v1beta1 ExecCredential), whose answer is cached until its
 *     status.expirationTimestamp passes (forever when it has none) and dropped after a 401.
 *
 * Thread-safe: one ns_kube_auth is shared by every thread of a client.
 */
#ifndef NS_KUBE_AUTH_H
#define NS_KUBE_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "kube/kube_config.h"

typedef struct ns_kube_auth ns_kube_auth;

/* The credentials for one request; every member is the caller's (ns_kube_creds_clear). */
typedef struct ns_kube_creds {
    char *token;    /* bearer token, or NULL */
    char *cert_pem; /* client certificate and key from an exec plugin, or NULL */
    size_t cert_len;
    char *key_pem;
    size_t key_len;
} ns_kube_creds;

/* Keeps a pointer to cfg, which must outlive the auth. 0 or NS_ERR_INTERNAL. */
int ns_kube_auth_new(const ns_kube_config *cfg, ns_kube_auth **out);
void ns_kube_auth_free(ns_kube_auth *a); /* accepts NULL */

/* Fills creds for a request now. NS_ERR_UNAUTHORIZED when the token file cannot be read or the exec plugin fails
 * (the message names the command, its exit status, its stderr's last line and the installHint). */
int ns_kube_auth_get(ns_kube_auth *a, ns_kube_creds *creds);
void ns_kube_creds_clear(ns_kube_creds *creds);

/* The server said 401: the next ns_kube_auth_get re-reads the token file and re-runs the exec plugin. */
void ns_kube_auth_invalidate(ns_kube_auth *a);

/* How many times the exec plugin ran (tests check the caching rules). */
unsigned ns_kube_auth_exec_runs(const ns_kube_auth *a);

#endif
