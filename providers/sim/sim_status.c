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

typedef struct sim_status_doc {
    const ns_host *h;
    ns_json *status;
    ns_json *conditions;
    bool oom;
} sim_status_doc;

static ns_json *sim_add(sim_status_doc *d, ns_json *container, const char *key, ns_json *item)
{
    if (!item || d->h->json_add(container, key, item) != NS_OK) {
        d->h->json_free(item);
        d->oom = true;
        return NULL;
    }
    return item;
}

static void sim_condition(sim_status_doc *d, const char *type, const char *status, const char *reason,
                          const char *message)
{
    ns_json *c = sim_add(d, d->conditions, NULL, d->h->json_new_object());
    if (!c)
        return;
    sim_add(d, c, "type", d->h->json_new_string(type));
    sim_add(d, c, "status", d->h->json_new_string(status));
    sim_add(d, c, "reason", d->h->json_new_string(reason));
    sim_add(d, c, "message", d->h->json_new_string(message));
}

static bool sim_image_runs_somewhere(const sim_state *s, const sim_nc *nc)
{
    if (nc->os == SIM_OS_LINUX)
        return true;
    for (size_t i = 0; i < s->catalog.n; i++)
        if (s->catalog.types[i].windows_capable)
            return true;
    return false;
}

static void sim_resolved(sim_status_doc *d, const sim_state *s, const sim_nc *nc)
{
    const char *images = nc->aws_kind ? "amis" : "images";
    const char *ready = nc->aws_kind ? "AMIsReady" : "ImagesReady";
    if (sim_image_runs_somewhere(s, nc)) {
        ns_json *list = sim_add(d, d->status, images, d->h->json_new_array());
        ns_json *image = list ? sim_add(d, list, NULL, d->h->json_new_object()) : NULL;
        if (image) {
            sim_add(d, image, "id", d->h->json_new_string(nc->image_id));
            sim_add(d, image, "os", d->h->json_new_string(sim_os_label(nc->os)));
        }
        sim_condition(d, ready, "True", ready, "");
    } else {
        char message[NS_NAME_MAX + 160];
        snprintf(message, sizeof(message), "image %s is a %s image and no instance type of the catalog can run it "
                 "(none is Windows-capable)", nc->image_id, sim_os_label(nc->os));
        sim_condition(d, ready, "False", nc->aws_kind ? "AMINotFound" : "ImageNotFound", message);
    }
    ns_json *zones = sim_add(d, d->status, "zones", d->h->json_new_array());
    for (size_t z = 0; zones && z < s->n_zones; z++)
        if (nc->zone_allowed[z])
            sim_add(d, zones, NULL, d->h->json_new_string(s->zones[z]));
    sim_condition(d, "ZonesReady", "True", "ZonesReady", "");
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
    sim_status_doc d = {.h = s->host, .status = s->host->json_new_object()};
    if (d.status)
        d.conditions = sim_add(&d, d.status, "conditions", s->host->json_new_array());
    if (!d.conditions) {
        s->host->json_free(d.status);
        return SIM_FAIL(s, NS_ERR_INTERNAL, "nodeclass_status %s: out of memory", nodeclass->name);
    }
    sim_nc nc;
    if (sim_nc_parse(s, nodeclass, &nc) == NS_OK) {
        sim_condition(&d, "ValidationSucceeded", "True", "ValidationSucceeded", "");
        sim_resolved(&d, s, &nc);
    } else {
        /* The parse recorded its message as the thread's error: it becomes the condition's, and the call succeeds. */
        char message[NS_DETAIL_MAX];
        snprintf(message, sizeof(message), "%s", sim_last_error());
        sim_condition(&d, "ValidationSucceeded", "False", "ValidationFailed", message);
    }
    if (s->violation == SIM_VIOLATION_STATUS_READY)
        sim_condition(&d, "Ready", "True", "Ready", "");
    if (d.oom) {
        s->host->json_free(d.status);
        return SIM_FAIL(s, NS_ERR_INTERNAL, "nodeclass_status %s: out of memory", nodeclass->name);
    }
    *status = d.status;
    return NS_OK;
}
