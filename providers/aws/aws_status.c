/* nodeclass_status (ABI 4): an EC2NodeClass's .status as Karpenter's nodeclass controller writes it: subnets
 * [{id, zone, zoneID}], securityGroups [{id, name}], amis [{id, name, requirements}] (kubernetes.io/arch, and for the
 * EKS-optimized variants Karpenter's GPU and accelerator requirements), instanceProfile, capacityReservations
 * [{id, instanceType, availabilityZone, ownerID, instanceMatchCriteria, reservationType, state, interruptible,
 * endTime}], and the conditions SubnetsReady, SecurityGroupsReady, AMIsReady, InstanceProfileReady,
 * CapacityReservationsReady and ValidationSucceeded. Each selector is resolved on its own, so one that selects
 * nothing leaves the others' fields in place. A spec Karpenter's CRD would refuse makes ValidationSucceeded False with
 * the refusal. Read only: Describe* and SSM calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aws_provider.h"
#include "status_doc.h"

static void subnets(status_doc *d, const aws_nodeclass_view *v)
{
    ns_json *list = v->n_subnet_ids ? status_doc_put(d, d->status, "subnets", d->h->json_new_array()) : NULL;
    for (size_t i = 0; list && i < v->n_subnet_ids; i++) {
        ns_json *o = status_doc_put(d, list, NULL, d->h->json_new_object());
        status_doc_put_string(d, o, "id", v->subnet_ids[i]);
        status_doc_put_string(d, o, "zone", v->subnet_zones[i]);
        if (v->subnet_zone_ids[i][0])
            status_doc_put_string(d, o, "zoneID", v->subnet_zone_ids[i]);
    }
}

static void groups(status_doc *d, const aws_nodeclass_view *v)
{
    ns_json *list = v->n_security_groups ? status_doc_put(d, d->status, "securityGroups", d->h->json_new_array()) : NULL;
    for (size_t i = 0; list && i < v->n_security_groups; i++) {
        ns_json *o = status_doc_put(d, list, NULL, d->h->json_new_object());
        status_doc_put_string(d, o, "id", v->security_groups[i]);
        if (v->security_group_names[i][0])
            status_doc_put_string(d, o, "name", v->security_group_names[i]);
    }
}

/* Karpenter's requirements of an image: its architecture, and for an EKS-optimized variant found through an alias
 * the variant's (standard: no GPU and no accelerator; nvidia: a GPU). */
static void images(status_doc *d, const aws_nodeclass_view *v)
{
    ns_json *list = v->n_images ? status_doc_put(d, d->status, "amis", d->h->json_new_array()) : NULL;
    for (size_t i = 0; list && i < v->n_images; i++) {
        const aws_image *m = &v->images[i];
        ns_json *o = status_doc_put(d, list, NULL, d->h->json_new_object());
        status_doc_put_string(d, o, "id", m->id);
        if (m->name[0])
            status_doc_put_string(d, o, "name", m->name);
        ns_json *reqs = status_doc_put(d, o, "requirements", d->h->json_new_array());
        status_doc_requirement(d, reqs, "kubernetes.io/arch", "In", m->arch);
        if (strcmp(m->variant, "standard") == 0) {
            status_doc_requirement(d, reqs, "karpenter.k8s.aws/instance-accelerator-count", "DoesNotExist", NULL);
            status_doc_requirement(d, reqs, "karpenter.k8s.aws/instance-gpu-count", "DoesNotExist", NULL);
        } else if (strcmp(m->variant, "nvidia") == 0) {
            status_doc_requirement(d, reqs, "karpenter.k8s.aws/instance-gpu-count", "Exists", NULL);
        }
    }
}

static void reservations(status_doc *d, const aws_reservation_set *set)
{
    ns_json *list = set->n ? status_doc_put(d, d->status, "capacityReservations", d->h->json_new_array()) : NULL;
    for (size_t i = 0; list && i < set->n; i++) {
        const aws_reservation *r = &set->items[i];
        ns_json *o = status_doc_put(d, list, NULL, d->h->json_new_object());
        status_doc_put_string(d, o, "id", r->id);
        status_doc_put_string(d, o, "instanceType", r->instance_type);
        status_doc_put_string(d, o, "availabilityZone", r->zone);
        status_doc_put_string(d, o, "ownerID", r->owner_id);
        status_doc_put_string(d, o, "instanceMatchCriteria", r->match_criteria);
        status_doc_put_string(d, o, "reservationType", r->reservation_type);
        status_doc_put_string(d, o, "state", r->state);
        status_doc_put(d, o, "interruptible", d->h->json_new_bool(r->interruptible));
        if (r->end_ms) {
            time_t t = (time_t)(r->end_ms / 1000);
            struct tm tm;
            char when[32];
            gmtime_r(&t, &tm);
            strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
            status_doc_put_string(d, o, "endTime", when);
        }
    }
}

/* Resolves every part into d; an error only when AWS could not be asked. */
static int resolve(aws_state *s, status_doc *d, aws_nodeclass_view *v)
{
    aws_reservation_set set = {0};
    int rc = aws_nodeclass_resolve_subnets(s, v);
    if (rc == NS_OK)
        rc = aws_nodeclass_resolve_groups(s, v);
    if (rc == NS_OK)
        rc = aws_nodeclass_resolve_images(s, true, v);
    if (rc == NS_OK)
        rc = aws_reservations_resolve(s, &v->spec, &set);
    if (rc != NS_OK)
        return rc;
    v->instance_profile = v->spec.instance_profile ? v->spec.instance_profile : v->spec.role;
    subnets(d, v);
    groups(d, v);
    images(d, v);
    status_doc_put_string(d, d->status, "instanceProfile", v->instance_profile);
    reservations(d, &set);
    aws_reservation_set_free(&set);
    char why[256];
    snprintf(why, sizeof(why), "no available subnet matches spec.subnetSelectorTerms (%zu terms)", v->spec.n_subnets);
    status_doc_check(d, "SubnetsReady", "SubnetsNotFound", v->n_subnet_ids ? NULL : why);
    snprintf(why, sizeof(why), "no security group matches spec.securityGroupSelectorTerms (%zu terms)",
             v->spec.n_security_groups);
    status_doc_check(d, "SecurityGroupsReady", "SecurityGroupsNotFound", v->n_security_groups ? NULL : why);
    if (v->spec.alias_version)
        snprintf(why, sizeof(why), "the %s images of spec.amiSelectorTerms' alias (version %s) for Kubernetes %s "
                 "are not published", aws_ami_family_name(v->spec.family), v->spec.alias_version,
                 s->kubernetes_version);
    else
        snprintf(why, sizeof(why), "no available x86_64 or arm64 image matches spec.amiSelectorTerms (%zu terms)",
                 v->spec.n_amis);
    status_doc_check(d, "AMIsReady", "AMINotFound", v->n_images ? NULL : why);
    /* aws.so creates no instance profile: spec.role is used through the profile of the same name */
    status_doc_check(d, "InstanceProfileReady", NULL, NULL);
    status_doc_check(d, "CapacityReservationsReady", NULL, NULL);
    status_doc_check(d, "ValidationSucceeded", NULL, NULL);
    return NS_OK;
}

int aws_nodeclass_status(void *state, const ns_nodeclass *nc, ns_json **status)
{
    aws_state *s = state;
    const ns_host *h = s->host;
    *status = NULL;
    status_doc d;
    bool opened = status_doc_open(&d, h);
    aws_nodeclass_view *v = calloc(1, sizeof(*v));
    int rc = NS_OK;
    char refusal[512];
    if (!opened || !v) {
        rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "aws nodeclass_status %s: out of memory", nc->name);
        goto fail;
    }
    if (aws_nodeclass_spec_parse(h, nc, &v->spec, refusal, sizeof(refusal)) != NS_OK) {
        /* the refusal is the node class's state, not a failure to find it out */
        status_doc_check(&d, "ValidationSucceeded", "NodeClassInvalid", refusal);
    } else if ((rc = resolve(s, &d, v)) != NS_OK) {
        goto fail;
    }
    if (d.oom) {
        rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "aws nodeclass_status %s: out of memory", nc->name);
        goto fail;
    }
    *status = status_doc_take(&d);
fail:
    status_doc_close(&d);
    free(v);
    return rc;
}
