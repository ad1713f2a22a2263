#include "kube/kube_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "errors/ns_error.h"
#include "model/model_util.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

static void strv_free_null_ended(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

void ns_kube_config_free(ns_kube_config *c)
{
    if (!c)
        return;
    if (c->exec) {
        free(c->exec->api_version);
        free(c->exec->command);
        strv_free_null_ended(c->exec->args);
        strv_free_null_ended(c->exec->env);
        free(c->exec->install_hint);
        free(c->exec);
    }
    free(c->source);
    free(c->server);
    free(c->tls_server_name);
    free(c->ca_pem);
    free(c->cert_pem);
    free(c->key_pem);
    free(c->cert_file);
    free(c->key_file);
    free(c->token);
    free(c->token_file);
    free(c->username);
    free(c->password);
    free(c->namespace_);
    free(c);
}

int ns_kube_base64_decode(const char *what, const char *in, char **out, size_t *out_len)
{
    size_t len = strlen(in);
    char *clean = malloc(len + 4);
    unsigned char *buf = malloc(len / 4 * 3 + 8);
    int rc = 0;
    size_t n = 0;
    if (!clean || !buf) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", what);
        goto done;
    }
    for (size_t i = 0; i < len; i++) {
        if (in[i] != ' ' && in[i] != '\n' && in[i] != '\r' && in[i] != '\t')
            clean[n++] = in[i];
    }
    size_t pad = 0;
    while (n > 0 && clean[n - 1] == '=' && pad < 2) {
        n--;
        pad++;
    }
    size_t missing = (4 - n % 4) % 4;
    if (missing == 3) {
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: not valid base64 (bad length)", what);
        goto done;
    }
    for (size_t i = 0; i < missing; i++)
        clean[n + i] = '=';
    clean[n + missing] = '\0';
    int decoded = EVP_DecodeBlock(buf, (const unsigned char *)clean, (int)(n + missing));
    if (decoded < 0) {
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: not valid base64", what);
        goto done;
    }
    /* EVP_DecodeBlock counts the padding as zero bytes. */
    size_t real = (size_t)decoded - missing;
    buf[real] = '\0';
    *out = (char *)buf;
    *out_len = real;
    buf = NULL;
done:
    free(clean);
    free(buf);
    return rc;
}

static char *join(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s/%s", dir, name);
    return p;
}

int ns_kube_config_in_cluster(const char *sa_dir, ns_kube_config **out)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *dir = sa_dir ? sa_dir : SA_DIR;
    char *ns_path = NULL, *ca_path = NULL;
    ns_kube_config *c = NULL;
    int rc;
    *out = NULL;
    if (!host || !*host || !port || !*port)
        return NS_FAIL(NS_ERR_NOT_FOUND, "in-cluster configuration: KUBERNETES_SERVICE_HOST and "
                                         "KUBERNETES_SERVICE_PORT must be set (not running in a pod?)");
    if (!(c = calloc(1, sizeof(*c))) || !(c->token_file = join(dir, "token")) || !(ca_path = join(dir, "ca.crt")) ||
        !(ns_path = join(dir, "namespace")) || !(c->source = ns_strdup("in-cluster"))) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory building the in-cluster configuration");
        goto done;
    }
    size_t len = strlen(host) + strlen(port) + 16;
    if (!(c->server = malloc(len))) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory building the in-cluster configuration");
        goto done;
    }
    /* An IPv6 service address needs brackets in a URL. */
    snprintf(c->server, len, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
    struct stat st;
    if (stat(c->token_file, &st) != 0) {
        rc = NS_FAIL(NS_ERR_NOT_FOUND, "in-cluster configuration: no service-account token at %s", c->token_file);
        goto done;
    }
    if ((rc = ns_read_file(ca_path, "in-cluster CA bundle", &c->ca_pem, &c->ca_len)) < 0)
        goto done;
    size_t ns_len = 0;
    if (ns_read_file(ns_path, "in-cluster namespace", &c->namespace_, &ns_len) < 0) {
        ns_error_clear();
        if (!(c->namespace_ = ns_strdup("default"))) {
            rc = NS_ERR_INTERNAL;
            goto done;
        }
    }
    c->namespace_[strcspn(c->namespace_, " \r\n")] = '\0';
    *out = c;
    c = NULL;
    rc = 0;
done:
    free(ns_path);
    free(ca_path);
    ns_kube_config_free(c);
    return rc;
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int ns_kube_config_load(const char *kubeconfig, const char *context, ns_kube_config **out)
{
    if (kubeconfig)
        return ns_kube_config_from_kubeconfig(kubeconfig, context, out);
    const char *env = getenv("KUBECONFIG");
    if (env && *env) {
        char *list = ns_strdup(env), *save = NULL;
        if (!list)
            return NS_ERR_INTERNAL;
        for (char *p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
            if (file_exists(p)) {
                int rc = ns_kube_config_from_kubeconfig(p, context, out);
                free(list);
                return rc;
            }
        }
        free(list);
        return NS_FAIL(NS_ERR_NOT_FOUND, "KUBECONFIG=%s: none of its files exists", env);
    }
    if (getenv("KUBERNETES_SERVICE_HOST") && !context)
        return ns_kube_config_in_cluster(NULL, out);
    const char *home = getenv("HOME");
    char *path = home ? join(home, ".kube/config") : NULL;
    if (!path || !file_exists(path)) {
        free(path);
        return NS_FAIL(NS_ERR_NOT_FOUND, "no Kubernetes configuration: no --kubeconfig, no KUBECONFIG, not in a "
                                         "cluster and no ~/.kube/config");
    }
    int rc = ns_kube_config_from_kubeconfig(path, context, out);
    free(path);
    return rc;
}
