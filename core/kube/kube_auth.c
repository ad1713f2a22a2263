#include "kube/kube_auth.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "kube/kube_exec.h"
#include "model/model_util.h"

struct ns_kube_auth {
    const ns_kube_config *cfg;
    pthread_mutex_t lock;
    /* token file: the token and the file's identity when read */
    char *file_token;
    struct timespec file_mtime;
    ino_t file_ino;
    off_t file_size;
    bool file_valid;
    /* exec plugin: the cached answer */
    ns_kube_creds exec_creds;
    int64_t exec_expiry_ms; /* 0 = no expiry */
    bool exec_valid;
    unsigned exec_runs;
};

int ns_kube_auth_new(const ns_kube_config *cfg, ns_kube_auth **out)
{
    ns_kube_auth *a = calloc(1, sizeof(*a));
    if (!a)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory creating the Kubernetes credentials");
    a->cfg = cfg;
    pthread_mutex_init(&a->lock, NULL);
    *out = a;
    return 0;
}

void ns_kube_creds_clear(ns_kube_creds *c)
{
    free(c->token);
    free(c->cert_pem);
    free(c->key_pem);
    memset(c, 0, sizeof(*c));
}

void ns_kube_auth_free(ns_kube_auth *a)
{
    if (!a)
        return;
    free(a->file_token);
    ns_kube_creds_clear(&a->exec_creds);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

/* Re-reads the token file when it changed (kubelet swaps the projected token's symlink, so inode, size or mtime
 * move) or after invalidation. */
static int refresh_file_token(ns_kube_auth *a)
{
    struct stat st;
    if (stat(a->cfg->token_file, &st) != 0)
        return NS_FAIL(NS_ERR_UNAUTHORIZED, "%s: bearer token file %s cannot be read", a->cfg->source,
                       a->cfg->token_file);
    if (a->file_valid && st.st_ino == a->file_ino && st.st_size == a->file_size &&
        st.st_mtim.tv_sec == a->file_mtime.tv_sec && st.st_mtim.tv_nsec == a->file_mtime.tv_nsec)
        return 0;
    char *text = NULL;
    size_t len = 0;
    int rc = ns_read_file(a->cfg->token_file, "bearer token file", &text, &len);
    if (rc < 0)
        return NS_FAIL(NS_ERR_UNAUTHORIZED, "%s", ns_error_message());
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
        text[--len] = '\0';
    free(a->file_token);
    a->file_token = text;
    a->file_ino = st.st_ino;
    a->file_size = st.st_size;
    a->file_mtime = st.st_mtim;
    a->file_valid = true;
    return 0;
}

/* client-go reuses an exec answer until expirationTimestamp is reached, and one without expiry until a 401. */
static int refresh_exec(ns_kube_auth *a)
{
    if (a->exec_valid && (a->exec_expiry_ms == 0 || ns_clock_now_ms() < a->exec_expiry_ms))
        return 0;
    ns_kube_creds fresh = {0};
    int64_t expiry = 0;
    a->exec_runs++;
    int rc = ns_kube_exec_run(a->cfg, &fresh, &expiry);
    if (rc < 0)
        return ns_error_prefix("%s: ", a->cfg->source);
    ns_kube_creds_clear(&a->exec_creds);
    a->exec_creds = fresh;
    a->exec_expiry_ms = expiry;
    a->exec_valid = true;
    return 0;
}

static int dup_mem(const char *src, size_t len, char **out, size_t *out_len)
{
    if (!src)
        return 0;
    if (!(*out = malloc(len + 1)))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory copying credentials");
    memcpy(*out, src, len);
    (*out)[len] = '\0';
    if (out_len)
        *out_len = len;
    return 0;
}

int ns_kube_auth_get(ns_kube_auth *a, ns_kube_creds *creds)
{
    const ns_kube_config *cfg = a->cfg;
    int rc = 0;
    memset(creds, 0, sizeof(*creds));
    pthread_mutex_lock(&a->lock);
    const char *token = cfg->token;
    if (cfg->exec) {
        if ((rc = refresh_exec(a)) < 0)
            goto done;
        token = a->exec_creds.token;
        rc = dup_mem(a->exec_creds.cert_pem, a->exec_creds.cert_len, &creds->cert_pem, &creds->cert_len);
        if (rc == 0)
            rc = dup_mem(a->exec_creds.key_pem, a->exec_creds.key_len, &creds->key_pem, &creds->key_len);
    } else if (!token && cfg->token_file) {
        if ((rc = refresh_file_token(a)) < 0)
            goto done;
        token = a->file_token;
    }
    if (rc == 0 && token)
        rc = dup_mem(token, strlen(token), &creds->token, NULL);
done:
    pthread_mutex_unlock(&a->lock);
    if (rc < 0)
        ns_kube_creds_clear(creds);
    return rc;
}

void ns_kube_auth_invalidate(ns_kube_auth *a)
{
    pthread_mutex_lock(&a->lock);
    a->file_valid = false;
    a->exec_valid = false;
    pthread_mutex_unlock(&a->lock);
}

unsigned ns_kube_auth_exec_runs(const ns_kube_auth *a)
{
    return a->exec_runs;
}
