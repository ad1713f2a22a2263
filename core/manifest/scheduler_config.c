#include "manifest/scheduler_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "manifest/decoders.h"
#include "model/names.h"

static const char *const top_fields[] = {"podTopologySpread", NULL};
static const char *const pts_fields[] = {"defaultConstraints", NULL};

void ns_scheduler_config_free(ns_scheduler_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->n_default_spread; i++)
        ns_topology_spread_free(&cfg->default_spread[i]);
    free(cfg->default_spread);
    cfg->default_spread = NULL;
    cfg->n_default_spread = 0;
}

/* What kube-scheduler refuses on a default constraint beyond what a pod's constraint may hold. */
static int validate_default(const ns_dec *d, const ns_ynode *t, const char *p, const ns_topology_spread *c)
{
    char fp[NS_PATH_MAX];
    const char *why = NULL;
    if (!ns_label_key_is_valid(c->topology_key, &why)) {
        ns_path_key(fp, sizeof(fp), p, "topologyKey");
        return ns_dec_fail(d, ns_ymap_get(t, "topologyKey"), fp, "\"%s\" is not a valid label name: %s",
                           c->topology_key, why ? why : "invalid");
    }
    const ns_ynode *sel = ns_ymap_get(t, "labelSelector");
    if (sel && !ns_ynode_is_null(sel)) {
        ns_path_key(fp, sizeof(fp), p, "labelSelector");
        return ns_dec_fail(d, sel, fp, "must not be set, as selectors are deduced for each pod");
    }
    const ns_ynode *keys = ns_ymap_get(t, "matchLabelKeys");
    if (keys && !ns_ynode_is_null(keys)) {
        ns_path_key(fp, sizeof(fp), p, "matchLabelKeys");
        return ns_dec_fail(d, keys, fp, "must not be set, as it has no effect on default constraints");
    }
    return 0;
}

static int decode_constraints(const ns_dec *d, const ns_ynode *seq, ns_scheduler_config *out)
{
    if (seq->n == 0)
        return 0;
    if (!(out->default_spread = calloc(seq->n, sizeof(*out->default_spread))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory reading podTopologySpread.defaultConstraints");
    for (size_t i = 0; i < seq->n; i++) {
        char p[NS_PATH_MAX];
        ns_path_index(p, sizeof(p), "podTopologySpread.defaultConstraints", i);
        ns_topology_spread *c = &out->default_spread[i];
        out->n_default_spread++;
        const ns_ynode *t = seq->items[i];
        if (t->kind != NS_Y_MAP)
            return ns_dec_fail(d, t, p, "expected a mapping, got %s", ns_ynode_type_name(t));
        int rc = ns_decode_topology_spread(d, t, p, c);
        if (rc == 0)
            rc = validate_default(d, t, p, c);
        for (size_t j = 0; rc == 0 && j < i; j++)
            if (strcmp(c->topology_key, out->default_spread[j].topology_key) == 0 &&
                c->when_unsatisfiable == out->default_spread[j].when_unsatisfiable)
                rc = ns_dec_fail(d, t, p, "is a duplicate of [%zu], {%s, %s}", j, c->topology_key,
                                 c->when_unsatisfiable == NS_SCHEDULE_ANYWAY ? "ScheduleAnyway" : "DoNotSchedule");
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int decode_root(const ns_dec *d, const ns_ynode *root, ns_scheduler_config *out)
{
    if (ns_ynode_is_null(root))
        return 0;
    if (root->kind != NS_Y_MAP)
        return ns_dec_fail(d, root, NULL, "expected a mapping, got %s", ns_ynode_type_name(root));
    int rc;
    if ((rc = ns_dec_fields(d, root, "", top_fields)) < 0)
        return rc;
    const ns_ynode *pts = ns_dec_child(d, root, "", "podTopologySpread", NS_Y_MAP, &rc);
    if (rc < 0 || !pts || (rc = ns_dec_fields(d, pts, "podTopologySpread", pts_fields)) < 0)
        return rc;
    const ns_ynode *seq = ns_dec_child(d, pts, "podTopologySpread", "defaultConstraints", NS_Y_SEQ, &rc);
    if (rc < 0 || !seq)
        return rc;
    return decode_constraints(d, seq, out);
}

int ns_scheduler_config_parse(const char *source, const char *text, ns_scheduler_config *out)
{
    ns_yreader *r = NULL;
    ns_ydoc *doc = NULL;
    ns_dec d = {.file = source};
    snprintf(d.object, sizeof(d.object), "scheduler config");
    int rc = ns_yreader_open_string(source, text, strlen(text), &r);
    if (rc == 0)
        rc = ns_yreader_next(r, &doc);
    if (rc == 0 && doc)
        rc = decode_root(&d, ns_ydoc_root(doc), out);
    ns_ydoc_free(doc);
    ns_yreader_close(r);
    if (rc < 0)
        ns_scheduler_config_free(out);
    return rc;
}
