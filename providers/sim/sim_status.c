/*
 * nodeclass_status (ABI 4): what the simulated cloud resolves for a node class, in the shape Karpenter's providers
 * give a node class's .status. The sim has no subnets, security groups or instance profiles; it resolves an image
 * (named "amis" for the AWS kinds, "images" for SimNodeClass) and the zones it launches in, and reports whether the
 * node class passes its validation.
 *
 * Conditions: ValidationSucceeded; AMIsReady or ImagesReady (False when no instance type of the catalog can run the
 * image, as a Windows image on a catalog without Windows-capable types); ZonesReady.
 */
#include <stdio.h>
#include <string.h>

#include "sim_nodeclass.h"
#include "sim_state.h"
#include "status_doc.h"

/* Can an instance type of the catalog run the node class's image? */
static bool sim_type_runs(const sim_itype *t, const sim_nc *nc)
{
    return nc->os == SIM_OS_LINUX || t->windows_capable;
}

static bool sim_image_runs_somewhere(const sim_state *s, const sim_nc *nc)
{
    for (size_t i = 0; i < s->catalog.n; i++)
        if (sim_type_runs(&s->catalog.types[i], nc))
            return true;
    return false;
}

/* The AWS kinds' amis: one entry per architecture that can run the image, each with the kubernetes.io/arch
 * requirement Karpenter's EC2NodeClass status requires (a status without it is refused by the CRD). */
static void sim_amis(status_doc *d, const sim_state *s, const sim_nc *nc, ns_json *list)
{
    const char *seen[8];
    size_t n = 0;
    for (size_t i = 0; i < s->catalog.n && n < sizeof(seen) / sizeof(seen[0]); i++) {
        const sim_itype *t = &s->catalog.types[i];
        bool known = false;
        for (size_t k = 0; k < n && !known; k++)
            known = strcmp(seen[k], t->arch) == 0;
        if (known || !sim_type_runs(t, nc))
            continue;
        seen[n++] = t->arch;
        ns_json *ami = status_doc_put(d, list, NULL, d->h->json_new_object());
        status_doc_put_string(d, ami, "id", nc->image_id);
        status_doc_requirement(d, status_doc_put(d, ami, "requirements", d->h->json_new_array()),
                               "kubernetes.io/arch", "In", t->arch);
    }
}

static void sim_resolved(status_doc *d, const sim_state *s, const sim_nc *nc)
{
    const char *images = nc->aws_kind ? "amis" : "images";
    const char *ready = nc->aws_kind ? "AMIsReady" : "ImagesReady";
    if (sim_image_runs_somewhere(s, nc)) {
        ns_json *list = status_doc_put(d, d->status, images, d->h->json_new_array());
        if (nc->aws_kind) {
            sim_amis(d, s, nc, list);
        } else {
            ns_json *image = status_doc_put(d, list, NULL, d->h->json_new_object());
            status_doc_put_string(d, image, "id", nc->image_id);
            status_doc_put_string(d, image, "os", sim_os_label(nc->os));
        }
        status_doc_ready(d, ready);
    } else {
        char message[NS_NAME_MAX + 160];
        snprintf(message, sizeof(message), "image %s is a %s image and no instance type of the catalog can run it "
                 "(none is Windows-capable)", nc->image_id, sim_os_label(nc->os));
        status_doc_condition(d, ready, "False", nc->aws_kind ? "AMINotFound" : "ImageNotFound", message);
    }
    ns_json *zones = status_doc_put(d, d->status, "zones", d->h->json_new_array());
    for (size_t z = 0; zones && z < s->n_zones; z++)
        if (nc->zone_allowed[z])
            status_doc_put(d, zones, NULL, d->h->json_new_string(s->zones[z]));
    status_doc_ready(d, "ZonesReady");
}

int sim_nodeclass_status(void *state, const ns_nodeclass *nodeclass, ns_json **status)
{
    sim_state *s = state;
    if (!nodeclass || !status)
        return SIM_FAIL(s, NS_ERR_INVALID_ARGUMENT, "nodeclass_status: node class or result is NULL");
    *status = NULL;
    int rc = sim_fault_enter(s, "nodeclass_status");
    if (rc != NS_OK)
        return rc;
    status_doc d;
    if (!status_doc_open(&d, s->host)) {
        status_doc_close(&d);
        return SIM_FAIL(s, NS_ERR_INTERNAL, "nodeclass_status %s: out of memory", nodeclass->name);
    }
    sim_nc nc;
    if (sim_nc_parse(s, nodeclass, &nc) == NS_OK) {
        status_doc_ready(&d, "ValidationSucceeded");
        sim_resolved(&d, s, &nc);
    } else {
        /* The parse recorded its message as the thread's error: it becomes the condition's, and the call succeeds. */
        char message[NS_DETAIL_MAX];
        snprintf(message, sizeof(message), "%s", sim_last_error());
        status_doc_condition(&d, "ValidationSucceeded", "False", "ValidationFailed", message);
    }
    if (s->violation == SIM_VIOLATION_STATUS_READY)
        status_doc_ready(&d, "Ready");
    if (d.oom) {
        status_doc_close(&d);
        return SIM_FAIL(s, NS_ERR_INTERNAL, "nodeclass_status %s: out of memory", nodeclass->name);
    }
    *status = status_doc_take(&d);
    return NS_OK;
}
