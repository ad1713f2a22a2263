/* A pod's volumes that are backed by PersistentVolumeClaims (volume topology, sched_volumes.c): a
 * persistentVolumeClaim source names its claim; an ephemeral source makes a claim named POD-VOLUME. Other volume
 * sources do not constrain where the pod runs and are not kept. */
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "manifest/decoders.h"

static int decode_volume(const ns_dec *d, const ns_ynode *item, const char *p, const void *arg, void *out)
{
    (void)arg;
    ns_pod_volume *v = out;
    int rc = 0;
    char *name = NULL;
    if (item->kind != NS_Y_MAP)
        return ns_dec_fail(d, item, p, "expected a volume object");
    if ((rc = ns_dec_string_required(d, item, p, "name", &name)) < 0)
        return rc;
    char q[NS_PATH_MAX];
    ns_path_key(q, sizeof(q), p, "persistentVolumeClaim");
    const ns_ynode *pvc = ns_dec_child(d, item, p, "persistentVolumeClaim", NS_Y_MAP, &rc);
    const ns_ynode *eph = rc == 0 ? ns_dec_child(d, item, p, "ephemeral", NS_Y_MAP, &rc) : NULL;
    if (rc == 0 && pvc) {
        rc = ns_dec_string_required(d, pvc, q, "claimName", &v->claim);
    } else if (rc == 0 && eph) {
        v->claim = name;
        v->ephemeral = true;
        name = NULL;
    }
    free(name);
    return rc;
}

static void volumes_free(void *v, size_t n)
{
    ns_pod_volume *vols = v;
    for (size_t i = 0; vols && i < n; i++)
        free(vols[i].claim);
    free(vols);
}

int ns_decode_pod_volumes(const ns_dec *d, const ns_ynode *spec, const char *path, ns_pod *pod)
{
    ns_pod_volume *all = NULL;
    size_t n = 0;
    int rc = ns_dec_seq(d, spec, path, "volumes", sizeof(*all), decode_volume, NULL, volumes_free, (void **)&all, &n);
    if (rc < 0)
        return rc;
    /* Only the volumes backed by a claim are kept, in their order. */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (all[i].claim)
            all[kept++] = all[i];
    if (kept == 0) {
        free(all);
        return 0;
    }
    pod->volumes = all;
    pod->n_volumes = kept;
    return 0;
}
