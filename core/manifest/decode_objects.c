/*
 * Nodes, PodDisruptionBudgets and node classes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "manifest/decoders.h"
#include "manifest/yaml_json.h"
#include "model/model_util.h"

static const char *const node_spec_fields[] = {"podCIDR", "podCIDRs", "providerID", "taints", "unschedulable",
                                               "configSource", "externalID", NULL};

/* Ready from status.conditions (a manifest without conditions describes a ready node) with its transition time, and
 * the other conditions: a provider may read a True one as an interruption notice, a repair policy any of them. */
static int node_conditions(const ns_dec *d, const ns_ynode *status, ns_node *node)
{
    ns_conditions all = {0};
    int rc = ns_decode_conditions(d, status, "status", "conditions", &all);
    for (size_t i = 0; rc == 0 && i < all.n; i++) {
        const ns_condition *c = &all.items[i];
        if (strcmp(c->type, "Ready") == 0) {
            node->ready = strcmp(c->status, "True") == 0;
            node->ready_unknown = strcmp(c->status, "Unknown") == 0;
            node->ready_since_ms = c->last_transition_ms;
        } else
            rc = ns_conditions_set(&node->conditions, c->type, c->status, c->reason, c->message,
                                   c->last_transition_ms);
    }
    ns_conditions_free(&all);
    return rc;
}

int ns_load_node(ns_dec *d, const ns_ynode *root, ns_cluster *c)
{
    ns_node *node = ns_node_new();
    if (!node)
        return NS_ERR_INTERNAL;
    int rc;
    const ns_ynode *spec, *status;
    bool has_alloc = false;
    if ((rc = ns_decode_top_fields(d, root, NULL)) < 0 || (rc = ns_decode_meta(d, root, "Node", false, &node->meta)) < 0)
        goto done;
    if ((spec = ns_dec_child(d, root, "", "spec", NS_Y_MAP, &rc)) &&
        ((rc = ns_dec_fields(d, spec, "spec", node_spec_fields)) < 0 ||
         (rc = ns_dec_string(d, spec, "spec", "providerID", &node->provider_id)) < 0 ||
         (rc = ns_decode_taints(d, spec, "spec", "taints", &node->taints, &node->n_taints)) < 0 ||
         (rc = ns_dec_bool(d, spec, "spec", "unschedulable", &node->unschedulable, NULL)) < 0))
        goto done;
    if (rc < 0)
        goto done;
    if ((status = ns_dec_child(d, root, "", "status", NS_Y_MAP, &rc)) &&
        (rc = ns_dec_resources(d, status, "status", "capacity", &node->capacity, NULL)) == 0 &&
        (rc = ns_dec_resources(d, status, "status", "allocatable", &node->allocatable, &has_alloc)) == 0)
        rc = node_conditions(d, status, node);
    if (rc == 0 && !has_alloc)
        rc = ns_res_copy(&node->allocatable, &node->capacity);
done:
    if (rc < 0) {
        ns_node_free(node);
        return rc;
    }
    return ns_cluster_add_node(c, node);
}

/* ---- PodDisruptionBudget ---- */

static const char *const pdb_spec_fields[] = {"minAvailable", "maxUnavailable", "selector",
                                              "unhealthyPodEvictionPolicy", NULL};

static int decode_int_or_percent(const ns_dec *d, const ns_ynode *spec, const char *key, ns_int_or_percent *out)
{
    const ns_ynode *v = ns_ymap_get(spec, key);
    if (!v)
        return 0;
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), "spec", key);
    if (v->kind == NS_Y_SCALAR && v->type == NS_YS_INT) {
        if (v->i < 0 || v->i > INT32_MAX)
            return ns_dec_fail(d, v, p, "%lld must be between 0 and %d", (long long)v->i, INT32_MAX);
        *out = (ns_int_or_percent){true, false, v->i};
        return 0;
    }
    if (v->kind == NS_Y_SCALAR && v->type == NS_YS_STRING) {
        size_t len = strlen(v->text), digits = 0;
        while (digits < len && v->text[digits] >= '0' && v->text[digits] <= '9')
            digits++;
        if (digits > 0 && digits < 10 && digits == len - 1 && v->text[len - 1] == '%') {
            long long pct = strtoll(v->text, NULL, 10);
            if (pct <= 100) {
                *out = (ns_int_or_percent){true, true, pct};
                return 0;
            }
        }
        return ns_dec_fail(d, v, p, "\"%s\" is not an integer or a percentage between 0%% and 100%%", v->text);
    }
    return ns_dec_fail(d, v, p, "expected an integer or a percentage, got %s", ns_ynode_type_name(v));
}

int ns_load_pdb(ns_dec *d, const ns_ynode *root, const char *api_version, ns_cluster *c)
{
    ns_pdb *pdb = ns_pdb_new();
    if (!pdb)
        return NS_ERR_INTERNAL;
    int rc;
    const ns_ynode *spec = NULL;
    if ((rc = ns_decode_top_fields(d, root, NULL)) < 0 ||
        (rc = ns_decode_meta(d, root, "PodDisruptionBudget", true, &pdb->meta)) < 0)
        goto done;
    if (!(spec = ns_dec_child(d, root, "", "spec", NS_Y_MAP, &rc))) {
        rc = rc < 0 ? rc : ns_dec_fail(d, root, NULL, "missing required field \"spec\"");
        goto done;
    }
    if ((rc = ns_dec_fields(d, spec, "spec", pdb_spec_fields)) < 0 ||
        (rc = decode_int_or_percent(d, spec, "minAvailable", &pdb->min_available)) < 0 ||
        (rc = decode_int_or_percent(d, spec, "maxUnavailable", &pdb->max_unavailable)) < 0 ||
        (rc = ns_decode_label_selector(d, spec, "spec", "selector", &pdb->selector)) < 0 ||
        (rc = ns_dec_string(d, spec, "spec", "unhealthyPodEvictionPolicy", &pdb->unhealthy_pod_eviction_policy)) < 0)
        goto done;
    if (pdb->min_available.set && pdb->max_unavailable.set) {
        rc = ns_dec_fail(d, spec, "spec", "minAvailable and maxUnavailable cannot both be set");
    } else if (pdb->unhealthy_pod_eviction_policy && strcmp(pdb->unhealthy_pod_eviction_policy, "IfHealthyBudget") &&
               strcmp(pdb->unhealthy_pod_eviction_policy, "AlwaysAllow")) {
        rc = ns_dec_fail(d, ns_ymap_get(spec, "unhealthyPodEvictionPolicy"), "spec.unhealthyPodEvictionPolicy",
                         "\"%s\" is not IfHealthyBudget or AlwaysAllow", pdb->unhealthy_pod_eviction_policy);
    } else if (strcmp(api_version, "policy/v1beta1") == 0 && pdb->selector.present && pdb->selector.match_labels.n == 0 &&
               pdb->selector.n_exprs == 0) {
        /* policy/v1beta1: an empty selector selects no pods (policy/v1 changed it to all pods). */
        pdb->selector.present = false;
    }
done:
    if (rc < 0) {
        ns_pdb_free(pdb);
        return rc;
    }
    return ns_cluster_add_pdb(c, pdb);
}

/* ---- node classes ---- */

int ns_load_nodeclass(ns_dec *d, const ns_ynode *root, const char *api_version, const char *kind,
                      const ns_nodeclass_kind_info *info, ns_cluster *c)
{
    ns_meta meta = {0};
    cJSON *spec_json = NULL;
    ns_nodeclass_def *def = NULL;
    int rc;
    if ((rc = ns_decode_top_fields(d, root, NULL)) < 0 || (rc = ns_decode_meta(d, root, kind, false, &meta)) < 0 ||
        (rc = ns_decode_name_max(d, root, meta.name, NS_NAME_MAX - 1,
                                 "nodesmith's provider ABI carries node class names of at most 127 bytes "
                                 "(Kubernetes allows 253)")) < 0)
        goto done;
    const ns_ynode *spec = ns_dec_child(d, root, "", "spec", NS_Y_MAP, &rc);
    if (rc < 0 || (spec && (rc = ns_yaml_to_json(d, spec, "spec", &spec_json)) < 0))
        goto done;
    if (!(def = ns_nodeclass_def_new(api_version, kind, meta.name, spec_json))) {
        spec_json = NULL;
        rc = NS_ERR_INTERNAL;
        goto done;
    }
    spec_json = NULL;
    free(def->meta.name);
    def->meta = meta;
    memset(&meta, 0, sizeof(meta));
    def->abi.name = def->meta.name;
    /* Only kinds their provider declares with Karpenter's kubelet settings in spec.kubelet are read for them. */
    if ((info->flags & NS_NODECLASS_KUBELET) && spec &&
        (rc = ns_decode_kubelet(d, spec, "spec", "kubelet", false, &def->kubelet)) < 0)
        goto done;
    if (info->validate && (rc = info->validate(info->owner, &def->abi)) < 0)
        rc = ns_dec_wrap(d, root);
done:
    ns_meta_free(&meta);
    cJSON_Delete(spec_json);
    if (rc < 0) {
        ns_nodeclass_def_free(def);
        return rc;
    }
    return ns_cluster_add_nodeclass(c, def);
}
