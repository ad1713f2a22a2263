#include "kc_util.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors/ns_error.h"
#include "kube/kube_config.h"
#include "kube_bed.h"

ns_kube_client *kc_admin(void)
{
    ns_kube_config *cfg = NULL;
    ns_kube_client *c = NULL;
    ck_assert_msg(ns_kube_config_from_kubeconfig(getenv("NS_TEST_KUBECONFIG"), NULL, &cfg) == 0, "%s",
                  ns_error_message());
    ck_assert_msg(ns_kube_client_new(cfg, NULL, &c) == 0, "%s", ns_error_message());
    return c;
}

const char *kc_temp_file(const char *text, int mode)
{
    static char paths[4][64];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, 64, "/tmp/ns-kc-XXXXXX");
    int fd = mkstemp(p);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    chmod(p, (mode_t)mode);
    return p;
}

void kc_kubeconfig(char *buf, size_t len, const char *server, const char *user_yaml)
{
    snprintf(buf, len,
             "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
             "clusters: [{name: bed, cluster: {server: '%s', certificate-authority: '%s'}}]\n"
             "contexts: [{name: t, context: {cluster: bed, user: u}}]\n"
             "users:\n- name: u\n  user:\n%s\n",
             server, getenv("NS_TEST_KUBE_CA"), user_yaml);
}

int kc_from_kubeconfig_text(const char *text, const char *context, ns_kube_client **out)
{
    ns_kube_config *cfg = NULL;
    const char *path = kc_temp_file(text, 0600);
    *out = NULL;
    int rc = ns_kube_config_from_kubeconfig(path, context, &cfg);
    if (rc == 0)
        rc = ns_kube_client_new(cfg, NULL, out);
    unlink(path);
    return rc;
}

cJSON *kc_json(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    ck_assert_msg(j != NULL, "not JSON: %s", text);
    return j;
}

bool kc_wait(bool (*fn)(void *ud), void *ud, int timeout_ms)
{
    for (int waited = 0; waited <= timeout_ms; waited += 50) {
        if (fn(ud))
            return true;
        usleep(50000);
    }
    return false;
}

char *kc_kubectl(const char *first, ...)
{
    const char *argv[32];
    size_t n = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && n < 31; a = va_arg(ap, const char *))
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    char *out = NULL;
    if (kube_bed_kubectl(&out, NULL, argv) != 0) {
        free(out);
        return NULL;
    }
    return out;
}
