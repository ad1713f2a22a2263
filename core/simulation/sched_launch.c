#include "simulation/sched_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "model/intern.h"
#include "model/labels.h"
#include "model/resources.h"
#include "plugin/plugin_resources.h"

/* The claim's options cut to the cheapest NS_SCHED_MAX_LAUNCH_TYPES distinct types, as ABI structs. */
static size_t launch_options(const ns_sched_claim *c, ns_launch_option *out)
{
    const ns_itype *types[NS_SCHED_MAX_LAUNCH_TYPES];
    size_t n_types = 0, n = 0;
    for (size_t i = 0; i < c->n_options; i++) {
        const ns_itype *t = c->options[i].type;
        bool known = false;
        for (size_t j = 0; j < n_types && !known; j++)
            known = types[j] == t;
        if (!known) {
            if (n_types == NS_SCHED_MAX_LAUNCH_TYPES)
                continue;
            types[n_types++] = t;
        }
        out[n++] = (ns_launch_option){sizeof(ns_launch_option), t->name, c->options[i].zone,
                                      c->options[i].capacity_type, c->options[i].price_per_hour};
    }
    return n;
}

/* Node labels from the claim's single-valued requirements (Karpenter's requirement labels). */
static size_t claim_labels(const ns_sched_claim *c, ns_label *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < c->requirements.n && n < cap; i++) {
        const ns_requirement *r = &c->requirements.items[i];
        if (!r->complement && r->n_values == 1)
            out[n++] = (ns_label){r->key, r->values[0]};
    }
    return n;
}

static void type_list(const ns_sched_claim *c, char *buf, size_t len)
{
    size_t off = 0, shown = 0, total = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->n_options; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = c->options[j].type == c->options[i].type;
        if (seen)
            continue;
        total++;
        if (shown < 5 && off < len) {
            int w = snprintf(buf + off, len - off, "%s%s", shown ? ", " : "", c->options[i].type->name);
            off += w > 0 ? (size_t)w : 0;
            shown++;
        }
    }
    if (total > shown && off < len)
        snprintf(buf + off, len - off, " and %zu other(s)", total - shown);
}

static double launched_price(const ns_sched_claim *c, const ns_launch_result *res)
{
    for (size_t i = 0; i < c->n_options; i++)
        if (strcmp(c->options[i].type->name, res->instance_type) == 0 && strcmp(c->options[i].zone, res->zone) == 0 &&
            strcmp(c->options[i].capacity_type, res->capacity_type) == 0)
            return c->options[i].price_per_hour;
    return -1;
}

static void launch_one(ns_plugin *plugin, const ns_cluster *cl, const ns_nodeclass *nc, const char *cluster_name,
                       const ns_sched_claim *c, ns_launch_option *opts, ns_sched_launch *out)
{
    const ns_nodepool *np = cl->nodepools[c->nodepool];
    char token[256], requests[256], types[512];
    ns_label labels[64];
    snprintf(token, sizeof(token), "%s/%s", cluster_name, c->name);
    ns_res total = {0};
    if (ns_res_copy(&total, &c->pod_requests) < 0 || ns_res_add(&total, &c->daemon_overhead) < 0)
        snprintf(requests, sizeof(requests), "(out of memory)");
    else
        ns_res_format(&total, requests, sizeof(requests));
    ns_res_free(&total);
    type_list(c, types, sizeof(types));
    ns_log(NS_LOG_INFO, "provisioner", "created nodeclaim", "nodeclaim", c->name, "nodepool", np->meta.name,
           "requests", requests, "instance-types", types, NULL);
    ns_launch_request req = {
        .struct_size = sizeof(req),
        .cluster_name = cluster_name,
        .nodeclaim_name = c->name,
        .nodepool_name = np->meta.name,
        .client_token = token,
        .nodeclass = nc,
        .options = opts,
        .n_options = launch_options(c, opts),
        .labels = labels,
        .n_labels = claim_labels(c, labels, sizeof(labels) / sizeof(labels[0])),
        .taints = np->taints,
        .n_taints = np->n_taints,
        .startup_taints = np->startup_taints,
        .n_startup_taints = np->n_startup_taints,
    };
    out->price_per_hour = -1;
    ns_launch_result res = {.struct_size = sizeof(res)};
    out->code = nc ? ns_plugin_launch(plugin, &req, &res)
                   : NS_FAIL(NS_ERR_INVALID_CONFIG, "NodePool %s has no node class", np->meta.name);
    if (out->code == NS_OK && (!(out->provider_id = strdup(res.provider_id)) ||
                               !(out->instance_type = ns_intern(res.instance_type)) ||
                               !(out->zone = ns_intern(res.zone)) || !(out->capacity_type = ns_intern(res.capacity_type))))
        out->code = NS_FAIL(NS_ERR_INTERNAL, "out of memory recording the launch of nodeclaim %s", c->name);
    if (out->code == NS_OK && ns_res_from_abi(&res.allocatable, &out->allocatable, "allocatable") < 0)
        out->code = ns_error_prefix("launch of nodeclaim %s: ", c->name);
    if (out->code != NS_OK) {
        out->error = strdup(ns_error_message());
        ns_log(NS_LOG_ERROR, "provisioner", "failed launching nodeclaim", "nodeclaim", c->name, "nodepool",
               np->meta.name, "error", ns_error_message(), NULL);
        return;
    }
    out->price_per_hour = launched_price(c, &res);
    char alloc[256];
    ns_log(NS_LOG_INFO, "provisioner", "launched nodeclaim", "nodeclaim", c->name, "nodepool", np->meta.name,
           "provider-id", out->provider_id, "instance-type", out->instance_type, "zone", out->zone, "capacity-type",
           out->capacity_type, "allocatable", ns_res_format(&out->allocatable, alloc, sizeof(alloc)), NULL);
}

void ns_sched_launches_free(ns_sched_launch *l, size_t n)
{
    for (size_t i = 0; l && i < n; i++) {
        free(l[i].error);
        free(l[i].provider_id);
        ns_res_free(&l[i].allocatable);
    }
    free(l);
}

int ns_sched_launch_claims(ns_plugin *plugin, const ns_cluster *cl, const ns_nodeclass *const *pool_nodeclass,
                           const char *cluster_name, const ns_sched_result *r, ns_sched_launch *out)
{
    if (!plugin || !cl || !pool_nodeclass || !cluster_name || !r || (!out && r->n_claims))
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "launching node claims: a required argument is NULL");
    size_t max = 1;
    for (size_t i = 0; i < r->n_claims; i++)
        max = r->claims[i].n_options > max ? r->claims[i].n_options : max;
    ns_launch_option *opts = calloc(max, sizeof(*opts));
    if (!opts)
        return NS_FAIL(NS_ERR_INTERNAL, "launching node claims: out of memory for %zu options", max);
    for (size_t i = 0; i < r->n_claims; i++) {
        memset(&out[i], 0, sizeof(out[i]));
        launch_one(plugin, cl, pool_nodeclass[r->claims[i].nodepool], cluster_name, &r->claims[i], opts, &out[i]);
    }
    free(opts);
    return NS_OK;
}
