#include "kube/kube_lease.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock/ns_clock.h"
#include "errors/ns_error.h"
#include "kube/kube_decode.h"
#include "kube/kube_writes.h"
#include "model/lease.h"

void ns_kube_micro_time(int64_t ms, char *buf, size_t len)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    /* strftime bounds the date by the buffer where a %04d of tm_year cannot be (a release build's
     * -Wformat-truncation refuses that); the microseconds are 0..999000, six digits */
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%06uZ", (unsigned)(((ms % 1000) + 1000) % 1000) * 1000u);
}

/* Through the one Lease decoder the informers use; the resourceVersion is the client's precondition. */
static int lease_from(const cJSON *obj, ns_kube_lease *out)
{
    void *typed = NULL;
    int rc = NS_KUBE_DECODE_LEASE.decode(obj, "Lease", NULL, &typed);
    if (rc < 0)
        return rc;
    const ns_lease *l = typed;
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
                                                       "resourceVersion");
    memset(out, 0, sizeof(*out));
    out->exists = true;
    snprintf(out->holder, sizeof(out->holder), "%s", l->holder ? l->holder : "");
    out->duration_s = l->duration_s;
    out->transitions = l->transitions;
    out->acquire_ms = l->acquire_ms;
    out->renew_ms = l->renew_ms;
    if (cJSON_IsString(rv))
        snprintf(out->resource_version, sizeof(out->resource_version), "%s", rv->valuestring);
    NS_KUBE_DECODE_LEASE.free(typed);
    return 0;
}

int ns_kube_lease_read(ns_kube_client *c, const char *ns, const char *name, ns_kube_lease *out)
{
    cJSON *obj = NULL;
    long status = 0;
    int rc = ns_kube_get(c, &NS_KUBE_LEASES, ns, name, &status, &obj);
    memset(out, 0, sizeof(*out));
    if (rc < 0 && status == 404) {
        ns_error_clear();
        return 0;
    }
    if (rc == 0)
        rc = lease_from(obj, out);
    cJSON_Delete(obj);
    return rc;
}

static cJSON *lease_body(const char *ns, const char *name, const char *identity, int32_t duration_s,
                         int64_t acquire_ms, int64_t renew_ms, int32_t transitions, const char *rv)
{
    char acquire[40], renew[40];
    ns_kube_micro_time(acquire_ms, acquire, sizeof(acquire));
    ns_kube_micro_time(renew_ms, renew, sizeof(renew));
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddStringToObject(obj, "apiVersion", "coordination.k8s.io/v1");
    cJSON_AddStringToObject(obj, "kind", "Lease");
    cJSON *meta = cJSON_AddObjectToObject(obj, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", ns);
    if (rv)
        cJSON_AddStringToObject(meta, "resourceVersion", rv);
    cJSON *spec = cJSON_AddObjectToObject(obj, "spec");
    cJSON_AddStringToObject(spec, "holderIdentity", identity);
    cJSON_AddNumberToObject(spec, "leaseDurationSeconds", duration_s);
    cJSON_AddStringToObject(spec, "acquireTime", acquire);
    cJSON_AddStringToObject(spec, "renewTime", renew);
    cJSON_AddNumberToObject(spec, "leaseTransitions", transitions);
    return obj;
}

int ns_kube_lease_try(ns_kube_client *c, const char *ns, const char *name, const char *identity, int32_t duration_s,
                      bool *leader)
{
    ns_kube_lease cur;
    long status = 0;
    int64_t now = ns_clock_now_ms();
    cJSON *body = NULL;
    int rc;
    *leader = false;
    if ((rc = ns_kube_lease_read(c, ns, name, &cur)) < 0)
        return rc;
    if (!cur.exists) {
        body = lease_body(ns, name, identity, duration_s, now, now, 0, NULL);
        rc = ns_kube_create(c, &NS_KUBE_LEASES, ns, body, &status, NULL);
    } else {
        bool ours = strcmp(cur.holder, identity) == 0;
        bool expired = !cur.holder[0] || cur.renew_ms + (int64_t)cur.duration_s * 1000 <= now;
        if (!ours && !expired)
            return 0;
        body = lease_body(ns, name, identity, duration_s, ours ? cur.acquire_ms : now, now,
                          ours ? cur.transitions : cur.transitions + 1, cur.resource_version);
        rc = ns_kube_update(c, &NS_KUBE_LEASES, ns, name, NULL, body, &status, NULL);
    }
    cJSON_Delete(body);
    if (rc < 0 && (status == 409 || status == 422)) {
        /* Another candidate wrote between our read and our write. */
        ns_error_clear();
        return 0;
    }
    if (rc == 0)
        *leader = true;
    return rc;
}

int ns_kube_lease_release(ns_kube_client *c, const char *ns, const char *name, const char *identity)
{
    ns_kube_lease cur;
    long status = 0;
    int rc = ns_kube_lease_read(c, ns, name, &cur);
    if (rc < 0 || !cur.exists || strcmp(cur.holder, identity) != 0)
        return rc;
    int64_t now = ns_clock_now_ms();
    cJSON *body = lease_body(ns, name, "", 1, now, now, cur.transitions, cur.resource_version);
    rc = ns_kube_update(c, &NS_KUBE_LEASES, ns, name, NULL, body, &status, NULL);
    cJSON_Delete(body);
    if (rc < 0 && status == 409) {
        ns_error_clear();
        return 0;
    }
    return rc;
}
