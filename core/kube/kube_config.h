/*
 * Where the Kubernetes API is and how to authenticate to it: a kubeconfig (current context or a named one) or the
 * in-cluster service account, as client-go's clientcmd and rest.InClusterConfig read them.
 *
 * TLS is always verified. A kubeconfig asking to skip verification (insecure-skip-tls-verify) is refused: a node
 * autoscaler holds credentials that create and delete machines, so talking to an unverified server is never safe.
 *
 * Memory: an ns_kube_config owns every string it points to; ns_kube_config_free releases it all (accepts NULL).
 */
#ifndef NS_KUBE_CONFIG_H
#define NS_KUBE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* An exec credential plugin (users[].user.exec), e.g. `aws eks get-token`. */
typedef struct ns_kube_exec {
    char *api_version; /* client.authentication.k8s.io/v1 or v1beta1 */
    char *command;
    char **args; /* NULL-ended */
    char **env;  /* "NAME=value" pairs added to the plugin's environment; NULL-ended */
    bool provide_cluster_info;
    char *install_hint;
} ns_kube_exec;

typedef struct ns_kube_config {
    char *source;    /* "kubeconfig FILE context NAME" or "in-cluster": named in messages */
    char *server;    /* https://host:port (http:// only for a plain loopback test server) */
    char *tls_server_name;
    char *ca_pem;    /* the CA bundle (certificate-authority-data, or the file's bytes); NULL = system CAs */
    size_t ca_len;
    char *cert_pem;  /* client certificate and key, PEM; both or neither */
    size_t cert_len;
    char *key_pem;
    size_t key_len;
    char *cert_file; /* when the certificate and key come from files: re-read at each connection by libcurl */
    char *key_file;
    char *token;      /* static bearer token */
    char *token_file; /* a bearer token file, re-read when it changes (rotating service-account tokens) */
    char *username;   /* basic auth (legacy; never logged) */
    char *password;
    ns_kube_exec *exec;
    char *namespace_; /* the context's namespace, or the service account's; "default" when none */
} ns_kube_config;

/* Reads kubeconfig `path` and resolves `context` (NULL = current-context). Relative file paths in it are relative
 * to the kubeconfig's folder, as clientcmd resolves them. 0, NS_ERR_NOT_FOUND (no file, no such context/cluster/
 * user) or NS_ERR_INVALID_CONFIG (a malformed file, an unsupported or insecure setting) with FILE:LINE: FIELD in the
 * message. *out is the caller's (ns_kube_config_free). */
int ns_kube_config_from_kubeconfig(const char *path, const char *context, ns_kube_config **out);

/* The in-cluster configuration: KUBERNETES_SERVICE_HOST/PORT, the service account's token file (re-read as it
 * rotates), CA bundle and namespace under `sa_dir` (NULL = /var/run/secrets/kubernetes.io/serviceaccount).
 * NS_ERR_NOT_FOUND when not running in a cluster. */
int ns_kube_config_in_cluster(const char *sa_dir, ns_kube_config **out);

/* The usual order: `kubeconfig` when given, else $KUBECONFIG (the first existing file of a colon list), else
 * in-cluster when KUBERNETES_SERVICE_HOST is set, else ~/.kube/config. `context` applies to kubeconfig files. */
int ns_kube_config_load(const char *kubeconfig, const char *context, ns_kube_config **out);

void ns_kube_config_free(ns_kube_config *c);

/* Base64 (standard alphabet, padding optional, whitespace ignored) into a new NUL-terminated buffer. 0 or
 * NS_ERR_INVALID_CONFIG naming `what`. */
int ns_kube_base64_decode(const char *what, const char *in, char **out, size_t *out_len);

#endif
