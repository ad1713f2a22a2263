/*
 * Warm headroom objects: CapacityBuffer (autoscaling.x-k8s.io, the API Karpenter's CapacityBuffer feature reads) and
 * the core/v1 PodTemplates buffers name. The CRD's validation rules are checked with its messages; what nodesmith
 * does not implement (other provisioning strategies) is refused naming the field. A scalableRef Karpenter cannot
 * resolve (a kind other than apps Deployment, StatefulSet, ReplicaSet) is kept with Karpenter's error, unprovisioned.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "manifest/decoders.h"
#include "model/model_util.h"

static const char *const buffer_spec_fields[] = {"provisioningStrategy", "podTemplateRef", "scalableRef", "replicas",
                                                 "percentage", "limits", NULL};
static const char *const ref_fields[] = {"name", NULL};
static const char *const scalable_ref_fields[] = {"apiGroup", "kind", "name", NULL};
/* The kinds Karpenter's ResolveScalableRef reads (group apps), spelled as the model keeps them (model/workload.h). */
static const char *const scalable_kinds[] = {"Deployment", "StatefulSet", "ReplicaSet", NULL};

/* Which base resources spec.limits lists: ns_res cannot tell a listed 0 from an absent resource. */
static unsigned limits_listed(const ns_ynode *limits)
{
    static const struct {
        const char *name;
        unsigned bit;
    } base[] = {{NS_RES_CPU, NS_BUFFER_LIMIT_CPU}, {NS_RES_MEMORY, NS_BUFFER_LIMIT_MEMORY},
                {NS_RES_PODS, NS_BUFFER_LIMIT_PODS}, {NS_RES_EPHEMERAL_STORAGE, NS_BUFFER_LIMIT_STORAGE}};
    unsigned set = 0;
    for (size_t i = 0; limits && i < sizeof(base) / sizeof(base[0]); i++)
        if (ns_ymap_get(limits, base[i].name))
            set |= base[i].bit;
    return set;
}

static int buffer_strategy(const ns_dec *d, const ns_ynode *spec)
{
    char *strategy = NULL;
    int rc = ns_dec_string(d, spec, "spec", "provisioningStrategy", &strategy);
    if (rc == 0 && strategy && strcmp(strategy, NS_BUFFER_ACTIVE_STRATEGY) != 0)
        rc = ns_dec_fail(d, ns_ymap_get(spec, "provisioningStrategy"), "spec.provisioningStrategy",
                         "\"%s\" is not supported (nodesmith, like Karpenter, keeps only active buffers: \"%s\")",
                         strategy, NS_BUFFER_ACTIVE_STRATEGY);
    free(strategy);
    return rc;
}

/* Keeps Karpenter's resolver's error for a scalableRef it cannot read: the buffer stays, not ready for provisioning
 * (ResolutionFailed, as Karpenter's controller writes it), with no chunk. Logged here for a manifest; for the API
 * server's object the controller logs it once per generation (controller/buffer_status.h). */
static int unresolvable(const ns_dec *d, ns_buffer *b, const char *unsupported, const char *what)
{
    size_t len = strlen(unsupported) + strlen(what) + 4;
    if (!(b->resolution_failed = malloc(len)))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding %s", d->object);
    snprintf(b->resolution_failed, len, "%s \"%s\"", unsupported, what);
    if (!d->from_api_server)
        ns_log(NS_LOG_WARN, "manifest", NS_BUFFER_UNRESOLVABLE_MESSAGE, "file", d->file, "object", d->object, "reason",
               "ResolutionFailed", "error", b->resolution_failed, NULL);
    return 0;
}

/* spec.scalableRef: a workload of group apps whose pod template is the chunk and whose replicas the percentage takes;
 * another group or kind is checked in the order Karpenter's ResolveScalableRef checks them. */
static int scalable_ref(const ns_dec *d, const ns_dec_field *ref, ns_buffer *b)
{
    char *group = NULL, *kind = NULL;
    int rc = ns_dec_string(d, ref->node, ref->path, "apiGroup", &group);
    if (rc == 0)
        rc = ns_dec_string_required(d, ref->node, ref->path, "kind", &kind);
    if (rc == 0 && (rc = ns_dec_string_required(d, ref->node, ref->path, "name", &b->scalable_name)) == 0 &&
        !*b->scalable_name)
        rc = ns_dec_fail(d, ref->node, "spec.scalableRef.name", "must not be empty");
    for (size_t i = 0; rc == 0 && scalable_kinds[i] && !b->scalable_kind; i++)
        if (strcmp(kind, scalable_kinds[i]) == 0)
            b->scalable_kind = scalable_kinds[i];
    if (rc == 0 && group && *group && strcmp(group, "apps") != 0) {
        b->scalable_kind = NULL;
        rc = unresolvable(d, b, "unsupported scalableRef API group", group);
    } else if (rc == 0 && !b->scalable_kind) {
        rc = unresolvable(d, b, "unsupported kind", kind);
    }
    free(group);
    free(kind);
    return rc;
}

static int buffer_spec(const ns_dec *d, const ns_ynode *root, const ns_ynode *spec, ns_buffer *b)
{
    int rc;
    ns_dec_field ref, scalable;
    int has_ref = ns_dec_object(d, spec, "spec", "podTemplateRef", ref_fields, &ref);
    if (has_ref < 0)
        return has_ref;
    int has_scalable = ns_dec_object(d, spec, "spec", "scalableRef", scalable_ref_fields, &scalable);
    if (has_scalable < 0)
        return has_scalable;
    if ((rc = buffer_strategy(d, spec)) < 0 ||
        (rc = ns_dec_int32(d, spec, "spec", "replicas", 0, INT32_MAX, &b->replicas, &b->has_replicas)) < 0 ||
        (rc = ns_dec_int32(d, spec, "spec", "percentage", 0, INT32_MAX, &b->percentage, &b->has_percentage)) < 0 ||
        (rc = ns_dec_resources(d, spec, "spec", "limits", &b->limits, &b->has_limits)) < 0)
        return rc;
    b->limits_set = limits_listed(ns_ymap_get(spec, "limits"));
    /* The CRD's rules, with its messages. */
    if (has_ref && has_scalable)
        return ns_dec_fail(d, spec, "spec", "You must define either PodTemplateRef or ScalableRef, but not both");
    if (has_scalable)
        return scalable_ref(d, &scalable, b);
    if (!has_ref)
        return ns_dec_fail(d, root, "spec", "neither podTemplateRef nor scalableRef is set: the buffer has no shape");
    if (!b->has_replicas && !b->has_limits)
        return ns_dec_fail(d, spec, "spec", "If podTemplateRef is set, replicas or limits must also be set");
    if ((rc = ns_dec_string_required(d, ref.node, ref.path, "name", &b->pod_template)) < 0)
        return rc;
    if (!*b->pod_template)
        return ns_dec_fail(d, ref.node, "spec.podTemplateRef.name", "must not be empty");
    if (b->has_percentage && !d->from_api_server) /* the controller's once per generation (buffer_status.h) */
        ns_log(NS_LOG_WARN, "manifest", NS_BUFFER_PERCENTAGE_IGNORED_MESSAGE, "file", d->file, "object", d->object,
               NULL);
    return 0;
}

int ns_load_capacity_buffer(ns_dec *d, const ns_ynode *root, ns_cluster *c)
{
    ns_buffer *b = ns_buffer_new();
    if (!b)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding a CapacityBuffer");
    int rc;
    const ns_ynode *spec = NULL;
    if ((rc = ns_decode_top_fields(d, root, NULL)) < 0 ||
        (rc = ns_decode_meta(d, root, "CapacityBuffer", true, &b->meta)) < 0)
        goto done;
    if (!(spec = ns_dec_child(d, root, "", "spec", NS_Y_MAP, &rc))) {
        rc = rc < 0 ? rc : ns_dec_fail(d, root, NULL, "missing required field \"spec\"");
        goto done;
    }
    if ((rc = ns_dec_fields(d, spec, "spec", buffer_spec_fields)) == 0)
        rc = buffer_spec(d, root, spec, b);
done:
    if (rc < 0) {
        ns_buffer_free(b);
        return rc;
    }
    return ns_cluster_add_buffer(c, b);
}

static const char *const pod_template_fields[] = {"apiVersion", "kind", "metadata", "template", NULL};

int ns_load_pod_template(ns_dec *d, const ns_ynode *root, ns_cluster *c)
{
    ns_pod_template *t = ns_pod_template_new();
    if (!t)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory decoding a PodTemplate");
    int rc;
    const ns_ynode *tmpl = NULL;
    /* metadata first, so that an unknown field is reported on the named object */
    if ((rc = ns_decode_meta(d, root, "PodTemplate", true, &t->meta)) < 0 ||
        (rc = ns_dec_fields(d, root, "", pod_template_fields)) < 0)
        goto done;
    if (!(tmpl = ns_dec_child(d, root, "", "template", NS_Y_MAP, &rc))) {
        rc = rc < 0 ? rc : ns_dec_fail(d, root, NULL, "missing required field \"template\"");
        goto done;
    }
    rc = ns_decode_pod_template(d, tmpl, "template", t->meta.namespace_, &t->pod);
done:
    if (rc < 0) {
        ns_pod_template_free(t);
        return rc;
    }
    return ns_cluster_add_pod_template(c, t);
}
