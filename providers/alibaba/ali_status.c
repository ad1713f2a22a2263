/* nodeclass_status (ABI 4): an ECSNodeClass's .status as the reference port's status controller writes it:
 * vSwitches [{id, zoneID}] (most free addresses first, then by ID), securityGroups [{id, name}] (by ID), images
 * [{id, name, requirements}] (one per architecture, kubernetes.io/arch In [arch]) and the conditions VSwitchesReady,
 * SecurityGroupsReady and ImagesReady, each resolved on its own so one selector that selects nothing leaves the
 * others' fields in place. An invalid node class makes the three False with the refusal's message. Read only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ali_provider.h"
#include "status_doc.h"

static int by_free_ips(const void *a, const void *b)
{
    const ali_vswitch *x = a, *y = b;
    if (x->free_ips != y->free_ips)
        return x->free_ips > y->free_ips ? -1 : 1;
    return strcmp(x->id, y->id);
}

static void vswitches(status_doc *d, ali_nodeclass_view *v)
{
    if (!v->n_vswitches)
        return;
    qsort(v->vswitches, v->n_vswitches, sizeof(v->vswitches[0]), by_free_ips);
    ns_json *list = status_doc_put(d, d->status, "vSwitches", d->h->json_new_array());
    for (size_t i = 0; list && i < v->n_vswitches; i++) {
        ns_json *w = status_doc_put(d, list, NULL, d->h->json_new_object());
        status_doc_put_string(d, w, "id", v->vswitches[i].id);
        status_doc_put_string(d, w, "zoneID", v->vswitches[i].zone);
    }
}

static void groups(status_doc *d, const ali_nodeclass_view *v)
{
    if (!v->n_groups)
        return;
    size_t order[ALI_MAX_GROUPS];
    for (size_t i = 0; i < v->n_groups; i++) {
        size_t k = i;
        for (; k > 0 && strcmp(v->groups[order[k - 1]], v->groups[i]) > 0; k--)
            order[k] = order[k - 1];
        order[k] = i;
    }
    ns_json *list = status_doc_put(d, d->status, "securityGroups", d->h->json_new_array());
    for (size_t i = 0; list && i < v->n_groups; i++) {
        ns_json *g = status_doc_put(d, list, NULL, d->h->json_new_object());
        status_doc_put_string(d, g, "id", v->groups[order[i]]);
        if (v->group_names[order[i]][0])
            status_doc_put_string(d, g, "name", v->group_names[order[i]]);
    }
}

static void images(status_doc *d, const ali_nodeclass_view *v)
{
    if (!v->n_images)
        return;
    ns_json *list = status_doc_put(d, d->status, "images", d->h->json_new_array());
    for (size_t i = 0; list && i < v->n_images; i++) {
        ns_json *im = status_doc_put(d, list, NULL, d->h->json_new_object());
        status_doc_put_string(d, im, "id", v->images[i].id);
        if (v->images[i].name[0])
            status_doc_put_string(d, im, "name", v->images[i].name);
        ns_json *reqs = status_doc_put(d, im, "requirements", d->h->json_new_array());
        ns_json *r = status_doc_put(d, reqs, NULL, d->h->json_new_object());
        status_doc_put_string(d, r, "key", "kubernetes.io/arch");
        status_doc_put_string(d, r, "operator", "In");
        status_doc_put_string(d, status_doc_put(d, r, "values", d->h->json_new_array()), NULL, v->images[i].arch);
    }
}

/* Resolves the three parts into d; an error only when the cloud could not be asked. */
static int resolve(ali_state *s, status_doc *d, ali_nodeclass_view *v)
{
    char why[3][320] = {"", "", ""};
    int rc = ali_resolve_vswitches(s, v, why[0], sizeof(why[0]));
    if (rc == NS_OK)
        rc = ali_resolve_groups(s, v, why[1], sizeof(why[1]));
    if (rc == NS_OK)
        rc = ali_resolve_images(s, v, why[2], sizeof(why[2]));
    if (rc < 0)
        return rc;
    vswitches(d, v);
    groups(d, v);
    images(d, v);
    status_doc_check(d, "VSwitchesReady", "vSwitchesNotFound", why[0][0] ? why[0] : NULL);
    status_doc_check(d, "SecurityGroupsReady", "SecurityGroupsNotFound", why[1][0] ? why[1] : NULL);
    status_doc_check(d, "ImagesReady", "ImagesNotFound", why[2][0] ? why[2] : NULL);
    return NS_OK;
}

int ali_nodeclass_status(void *state, const ns_nodeclass *nc, ns_json **status)
{
    ali_state *s = state;
    const ns_host *h = s->host;
    *status = NULL;
    ali_nodeclass_view v;
    memset(&v, 0, sizeof(v));
    status_doc d;
    bool opened = status_doc_open(&d, h);
    int rc = NS_OK;
    if (!opened || !(v.spec = calloc(1, sizeof(*v.spec)))) {
        rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "alibaba nodeclass_status %s: out of memory", nc->name);
        goto fail;
    }
    if (ali_nodeclass_spec_parse(h, s->ctx, nc, v.spec) < 0) {
        /* the refusal is the node class's state, not a failure to find it out */
        status_doc_check(&d, "VSwitchesReady", "NodeClassInvalid", v.spec->refusal);
        status_doc_check(&d, "SecurityGroupsReady", "NodeClassInvalid", v.spec->refusal);
        status_doc_check(&d, "ImagesReady", "NodeClassInvalid", v.spec->refusal);
    } else if ((rc = resolve(s, &d, &v)) < 0) {
        goto fail;
    }
    if (d.oom) {
        rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "alibaba nodeclass_status %s: out of memory", nc->name);
        goto fail;
    }
    *status = status_doc_take(&d);
fail:
    status_doc_close(&d);
    ali_view_free(&v);
    return rc;
}
