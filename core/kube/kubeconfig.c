#include "kube/kube_config.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "manifest/decode.h"
#include "model/model_util.h"

static const char *const top_fields[] = {"apiVersion", "kind", "current-context", "clusters", "users", "contexts",
                                         "preferences", "extensions", NULL};
static const char *const named_cluster_fields[] = {"name", "cluster", NULL};
static const char *const cluster_fields[] = {"server", "certificate-authority", "certificate-authority-data",
                                             "insecure-skip-tls-verify", "tls-server-name", "proxy-url",
                                             "disable-compression", "extensions", NULL};
static const char *const named_user_fields[] = {"name", "user", NULL};
static const char *const user_fields[] = {"client-certificate", "client-certificate-data", "client-key",
                                          "client-key-data", "token", "tokenFile", "username", "password", "exec",
                                          "auth-provider", "as", "as-uid", "as-groups", "as-user-extra",
                                          "extensions", NULL};
static const char *const exec_fields[] = {"apiVersion", "command", "args", "env", "provideClusterInfo",
                                          "installHint", "interactiveMode", NULL};
static const char *const env_fields[] = {"name", "value", NULL};
static const char *const named_context_fields[] = {"name", "context", NULL};
static const char *const context_fields[] = {"cluster", "user", "namespace", "extensions", NULL};

/* The entry of list `key` (clusters, users, contexts) whose name is `name`; its inner mapping in *inner. */
static int find_named(const ns_dec *d, const ns_ynode *root, const char *key, const char *inner_key,
                      const char *const *outer_fields, const char *name, const ns_ynode **inner, char *path,
                      size_t path_len)
{
    int rc;
    const ns_ynode *seq = ns_dec_child(d, root, "", key, NS_Y_SEQ, &rc);
    for (size_t i = 0; seq && i < seq->n; i++) {
        char p[NS_PATH_MAX];
        ns_path_index(p, sizeof(p), key, i);
        if ((rc = ns_dec_fields(d, seq->items[i], p, outer_fields)) < 0)
            return rc;
        const ns_ynode *n = ns_ymap_get(seq->items[i], "name");
        const char *s = NULL;
        if (!n || (rc = ns_dec_scalar_string(d, n, p, &s)) < 0 || strcmp(s, name) != 0)
            continue;
        ns_path_key(path, path_len, p, inner_key);
        *inner = ns_dec_child(d, seq->items[i], p, inner_key, NS_Y_MAP, &rc);
        if (rc < 0)
            return rc;
        if (!*inner)
            return ns_dec_fail(d, seq->items[i], p, "missing \"%s\"", inner_key);
        return 0;
    }
    if (rc < 0)
        return rc;
    return NS_FAIL(NS_ERR_NOT_FOUND, "%s: no %s named \"%s\" in %s", d->file, key, name, key);
}

/* A path from the kubeconfig, made absolute against the kubeconfig's folder. */
static int resolve_path(const char *dir, char **p)
{
    if (!*p || (*p)[0] == '/')
        return 0;
    size_t len = strlen(dir) + strlen(*p) + 2;
    char *abs = malloc(len);
    if (!abs)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory resolving %s", *p);
    snprintf(abs, len, "%s/%s", dir, *p);
    free(*p);
    *p = abs;
    return 0;
}

/* data (base64) or file for one PEM item; data wins, as in clientcmd. */
static int pem_item(const ns_dec *d, const ns_ynode *map, const char *path, const char *data_key,
                    const char *file_key, const char *dir, char **out, size_t *out_len, char **file_out)
{
    char *data = NULL, *file = NULL;
    char p[NS_PATH_MAX];
    int rc;
    if ((rc = ns_dec_string(d, map, path, data_key, &data)) < 0 ||
        (rc = ns_dec_string(d, map, path, file_key, &file)) < 0)
        goto done;
    if (data) {
        ns_path_key(p, sizeof(p), path, data_key);
        if ((rc = ns_kube_base64_decode(p, data, out, out_len)) < 0)
            rc = ns_dec_wrap(d, ns_ymap_get(map, data_key));
    } else if (file) {
        ns_path_key(p, sizeof(p), path, file_key);
        if ((rc = resolve_path(dir, &file)) < 0 || (rc = ns_read_file(file, p, out, out_len)) < 0)
            goto done;
        if (file_out) {
            *file_out = file;
            file = NULL;
        }
    }
done:
    free(data);
    free(file);
    return rc;
}

static int decode_cluster(const ns_dec *d, const ns_ynode *c, const char *path, const char *dir,
                          ns_kube_config *out)
{
    int rc;
    bool insecure = false;
    if ((rc = ns_dec_fields(d, c, path, cluster_fields)) < 0 ||
        (rc = ns_dec_string_required(d, c, path, "server", &out->server)) < 0 ||
        (rc = ns_dec_string(d, c, path, "tls-server-name", &out->tls_server_name)) < 0 ||
        (rc = ns_dec_bool(d, c, path, "insecure-skip-tls-verify", &insecure, NULL)) < 0)
        return rc;
    if (insecure)
        return ns_dec_fail(d, ns_ymap_get(c, "insecure-skip-tls-verify"), path,
                           "insecure-skip-tls-verify is refused: nodesmith always verifies the API server's "
                           "certificate, since its credentials create and delete machines; give the cluster's CA "
                           "(certificate-authority or certificate-authority-data) instead");
    if (ns_ymap_get(c, "proxy-url"))
        return ns_dec_fail(d, ns_ymap_get(c, "proxy-url"), path, "proxy-url is not supported");
    if (strncmp(out->server, "https://", 8) != 0 && strncmp(out->server, "http://", 7) != 0)
        return ns_dec_fail(d, ns_ymap_get(c, "server"), path, "server \"%s\" is not an http(s) URL", out->server);
    size_t n = strlen(out->server);
    while (n > 0 && out->server[n - 1] == '/')
        out->server[--n] = '\0';
    return pem_item(d, c, path, "certificate-authority-data", "certificate-authority", dir, &out->ca_pem,
                    &out->ca_len, NULL);
}

static int decode_exec(const ns_dec *d, const ns_ynode *e, const char *path, ns_kube_exec **out)
{
    int rc;
    ns_kube_exec *x = calloc(1, sizeof(*x));
    size_t n_args = 0;
    char p[NS_PATH_MAX];
    if (!x)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", path);
    *out = x;
    if ((rc = ns_dec_fields(d, e, path, exec_fields)) < 0 ||
        (rc = ns_dec_string_required(d, e, path, "apiVersion", &x->api_version)) < 0 ||
        (rc = ns_dec_string_required(d, e, path, "command", &x->command)) < 0 ||
        (rc = ns_dec_string(d, e, path, "installHint", &x->install_hint)) < 0 ||
        (rc = ns_dec_bool(d, e, path, "provideClusterInfo", &x->provide_cluster_info, NULL)) < 0 ||
        (rc = ns_dec_strings(d, e, path, "args", &x->args, &n_args)) < 0)
        return rc;
    if (strcmp(x->api_version, "client.authentication.k8s.io/v1") != 0 &&
        strcmp(x->api_version, "client.authentication.k8s.io/v1beta1") != 0) {
        ns_path_key(p, sizeof(p), path, "apiVersion");
        return ns_dec_fail(d, ns_ymap_get(e, "apiVersion"), p,
                           "\"%s\" is not supported (client.authentication.k8s.io/v1 or v1beta1)", x->api_version);
    }
    char **grown = realloc(x->args, (n_args + 1) * sizeof(char *));
    if (!grown)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", path);
    x->args = grown;
    x->args[n_args] = NULL;
    const ns_ynode *env = ns_dec_child(d, e, path, "env", NS_Y_SEQ, &rc);
    if (rc < 0)
        return rc;
    size_t n_env = env ? env->n : 0;
    if (!(x->env = calloc(n_env + 1, sizeof(char *))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", path);
    for (size_t i = 0; i < n_env; i++) {
        char *name = NULL, *value = NULL;
        ns_path_key(p, sizeof(p), path, "env");
        ns_path_index(p, sizeof(p), p, i);
        if ((rc = ns_dec_fields(d, env->items[i], p, env_fields)) == 0 &&
            (rc = ns_dec_string_required(d, env->items[i], p, "name", &name)) == 0 &&
            (rc = ns_dec_string(d, env->items[i], p, "value", &value)) == 0) {
            size_t len = strlen(name) + (value ? strlen(value) : 0) + 2;
            if ((x->env[i] = malloc(len)))
                snprintf(x->env[i], len, "%s=%s", name, value ? value : "");
            else
                rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", p);
        }
        free(name);
        free(value);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int decode_user(const ns_dec *d, const ns_ynode *u, const char *path, const char *dir, ns_kube_config *out)
{
    int rc;
    char p[NS_PATH_MAX];
    if ((rc = ns_dec_fields(d, u, path, user_fields)) < 0)
        return rc;
    static const char *const unsupported[] = {"auth-provider", "as", "as-uid", "as-groups", "as-user-extra"};
    for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
        if (ns_ymap_get(u, unsupported[i])) {
            ns_path_key(p, sizeof(p), path, unsupported[i]);
            return ns_dec_fail(d, ns_ymap_get(u, unsupported[i]), p,
                               "is not supported (use a token, a client certificate or an exec plugin)");
        }
    }
    if ((rc = pem_item(d, u, path, "client-certificate-data", "client-certificate", dir, &out->cert_pem,
                       &out->cert_len, &out->cert_file)) < 0 ||
        (rc = pem_item(d, u, path, "client-key-data", "client-key", dir, &out->key_pem, &out->key_len,
                       &out->key_file)) < 0 ||
        (rc = ns_dec_string(d, u, path, "token", &out->token)) < 0 ||
        (rc = ns_dec_string(d, u, path, "tokenFile", &out->token_file)) < 0 ||
        (rc = resolve_path(dir, &out->token_file)) < 0 ||
        (rc = ns_dec_string(d, u, path, "username", &out->username)) < 0 ||
        (rc = ns_dec_string(d, u, path, "password", &out->password)) < 0)
        return rc;
    if (!out->cert_pem != !out->key_pem)
        return ns_dec_fail(d, u, path, "a client certificate needs both client-certificate and client-key");
    const ns_ynode *exec = ns_dec_child(d, u, path, "exec", NS_Y_MAP, &rc);
    if (rc < 0)
        return rc;
    if (exec) {
        ns_path_key(p, sizeof(p), path, "exec");
        return decode_exec(d, exec, p, &out->exec);
    }
    return 0;
}

static int decode_root(ns_dec *d, const ns_ynode *root, const char *context, const char *dir, ns_kube_config *out)
{
    int rc;
    char *current = NULL, *cluster = NULL, *user = NULL;
    char path[NS_PATH_MAX];
    const ns_ynode *ctx, *cl, *us;
    if ((rc = ns_dec_fields(d, root, "", top_fields)) < 0 ||
        (rc = ns_dec_string(d, root, "", "current-context", &current)) < 0)
        goto done;
    const char *want = context ? context : current;
    if (!want || !*want) {
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "%s: no current-context and no --context given", d->file);
        goto done;
    }
    snprintf(d->object, sizeof(d->object), "context %s", want);
    if ((rc = find_named(d, root, "contexts", "context", named_context_fields, want, &ctx, path, sizeof(path))) < 0 ||
        (rc = ns_dec_fields(d, ctx, path, context_fields)) < 0 ||
        (rc = ns_dec_string_required(d, ctx, path, "cluster", &cluster)) < 0 ||
        (rc = ns_dec_string(d, ctx, path, "user", &user)) < 0 ||
        (rc = ns_dec_string(d, ctx, path, "namespace", &out->namespace_)) < 0)
        goto done;
    snprintf(d->object, sizeof(d->object), "cluster %s", cluster);
    if ((rc = find_named(d, root, "clusters", "cluster", named_cluster_fields, cluster, &cl, path, sizeof(path))) < 0 ||
        (rc = decode_cluster(d, cl, path, dir, out)) < 0)
        goto done;
    if (user && *user) {
        snprintf(d->object, sizeof(d->object), "user %s", user);
        if ((rc = find_named(d, root, "users", "user", named_user_fields, user, &us, path, sizeof(path))) < 0 ||
            (rc = decode_user(d, us, path, dir, out)) < 0)
            goto done;
    }
    size_t len = strlen(d->file) + strlen(want) + 32;
    if (!(out->source = malloc(len))) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory reading %s", d->file);
        goto done;
    }
    snprintf(out->source, len, "kubeconfig %s context %s", d->file, want);
done:
    free(current);
    free(cluster);
    free(user);
    return rc;
}

int ns_kube_config_from_kubeconfig(const char *path, const char *context, ns_kube_config **out)
{
    ns_yreader *r = NULL;
    ns_ydoc *doc = NULL;
    char *dir_copy = NULL;
    ns_kube_config *c = calloc(1, sizeof(*c));
    int rc;
    *out = NULL;
    if (!c || !(dir_copy = ns_strdup(path))) {
        rc = NS_FAIL(NS_ERR_INTERNAL, "out of memory reading kubeconfig %s", path);
        goto done;
    }
    if ((rc = ns_yreader_open_file(path, &r)) < 0) {
        rc = NS_FAIL(rc, "kubeconfig %s cannot be read: %s", path, strerror(errno));
        goto done;
    }
    if ((rc = ns_yreader_next(r, &doc)) < 0)
        goto done;
    if (!doc) {
        rc = NS_FAIL(NS_ERR_INVALID_CONFIG, "kubeconfig %s is empty", path);
        goto done;
    }
    ns_dec d = {.file = path};
    snprintf(d.object, sizeof(d.object), "kubeconfig");
    if ((rc = decode_root(&d, ns_ydoc_root(doc), context, dirname(dir_copy), c)) < 0)
        goto done;
    if (!c->namespace_ && !(c->namespace_ = ns_strdup("default"))) {
        rc = NS_ERR_INTERNAL;
        goto done;
    }
    *out = c;
    c = NULL;
done:
    ns_kube_config_free(c);
    free(dir_copy);
    ns_ydoc_free(doc);
    ns_yreader_close(r);
    return rc;
}
