/* check_drift (ImageDrift, VSwitchDrift, SecurityGroupDrift: the instance against what the node class's selectors
 * resolve to now; other node class changes are the core's NodeClassDrift through its hash), validate_nodeclass and
 * list_repair_policies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ali_json.h"
#include "ali_provider.h"

static bool has_vswitch(const ali_nodeclass_view *v, const char *id)
{
    for (size_t i = 0; id && i < v->n_vswitches; i++)
        if (strcmp(v->vswitches[i].id, id) == 0)
            return true;
    return false;
}

static bool has_image(const ali_nodeclass_view *v, const char *id)
{
    for (size_t i = 0; id && i < v->n_images; i++)
        if (strcmp(v->images[i].id, id) == 0)
            return true;
    return false;
}

static bool groups_differ(const ns_host *h, const ali_nodeclass_view *v, const ns_json *inst)
{
    const ns_json *ids = ali_json_list(h, inst, "SecurityGroupIds", "SecurityGroupId");
    if (h->json_size(ids) != v->n_groups)
        return true;
    for (size_t i = 0; i < h->json_size(ids); i++) {
        const char *id = h->json_string(h->json_at(ids, i));
        bool found = false;
        for (size_t k = 0; id && k < v->n_groups; k++)
            found |= strcmp(v->groups[k], id) == 0;
        if (!found)
            return true;
    }
    return false;
}

int ali_check_drift(void *state, const ns_instance *instance, const ns_nodeclass *nc, bool *drifted, char *reason,
                    size_t reason_len)
{
    ali_state *s = state;
    const ns_host *h = s->host;
    *drifted = false;
    const char *id = ali_instance_id_of(s, instance->provider_id);
    if (!id)
        return NS_ERROR(h, s->ctx, NS_ERR_NOT_FOUND, "%s is not an alibaba provider ID", instance->provider_id);
    ali_nodeclass_view v;
    int rc = ali_nodeclass_resolve(s, nc, &v);
    if (rc < 0)
        return rc;
    ns_json *doc = NULL;
    const ns_json *inst = NULL;
    if ((rc = ali_describe_instance(s, id, &doc, &inst)) < 0) {
        ali_view_free(&v);
        return rc;
    }
    const char *image = ali_json_str(h, inst, "ImageId");
    const char *vsw = ali_json_str(h, h->json_get(inst, "VpcAttributes"), "VSwitchId");
    const char *why = NULL;
    if (!has_image(&v, image))
        why = "ImageDrift";
    else if (!has_vswitch(&v, vsw))
        why = "VSwitchDrift";
    else if (groups_differ(h, &v, inst))
        why = "SecurityGroupDrift";
    if (why) {
        *drifted = true;
        snprintf(reason, reason_len, "%s", why);
    }
    h->json_free(doc);
    ali_view_free(&v);
    return NS_OK;
}

int ali_validate_nodeclass(void *state, const ns_nodeclass *nc)
{
    ali_state *s = state;
    ali_nodeclass_spec *spec = NULL;
    int rc = ali_nodeclass_parse(s, nc, &spec);
    if (rc == NS_OK && !s->ack && !spec->user_data)
        rc = NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "ECSNodeClass %s: spec.userData is required in "
                      "cluster_mode custom: it is how nodes join a cluster that is not ACK", nc->name);
    free(spec);
    return rc;
}

int ali_list_repair_policies(void *state, ns_repair_policy_cb cb, void *cb_ctx)
{
    (void)state;
    static const ns_repair_policy POLICIES[] = {
        {sizeof(ns_repair_policy), "Ready", "False", 30 * 60 * 1000},
        {sizeof(ns_repair_policy), "Ready", "Unknown", 30 * 60 * 1000},
    };
    for (size_t i = 0; i < sizeof(POLICIES) / sizeof(POLICIES[0]); i++) {
        int rc = cb(cb_ctx, &POLICIES[i]);
        if (rc != 0)
            return rc;
    }
    return NS_OK;
}
