/*
 * ABI 6's v1alpha5_defaults: asked once, right after init, checked and kept with the plugin, so the manifest decoder
 * applies them without calling into the provider (model/req_defaults.h). A provider whose answer breaks a rule is
 * refused at load time with the default named, as a malformed node-class kind is.
 */
#include <stdio.h>

#include "errors/ns_error.h"
#include "model/req_defaults.h"
#include "plugin/plugin_internal.h"

typedef struct collect_ctx {
    ns_req_defaults *d;
    size_t index;
} collect_ctx;

static int on_default(void *arg, const ns_requirement_default *def)
{
    collect_ctx *c = arg;
    char what[64];
    snprintf(what, sizeof(what), "v1alpha5_defaults[%zu]", c->index++);
    return ns_req_defaults_add(c->d, what, def->key, def->op, def->values, def->n_values, def->unless_keys,
                               def->n_unless_keys);
}

int ns_plugin_collect_v1alpha5_defaults(ns_plugin *p)
{
    if (p->table.abi_version < 6 || !p->table.v1alpha5_defaults)
        return NS_OK;
    collect_ctx c = {.d = ns_req_defaults_new()};
    if (!c.d)
        return NS_ERR_INTERNAL;
    int rc = ns_plugin_v1alpha5_defaults(p, on_default, &c);
    if (rc != NS_OK) {
        ns_req_defaults_free(c.d);
        return rc < 0 ? rc : NS_FAIL(NS_ERR_INTERNAL, "v1alpha5_defaults returned %d", rc);
    }
    p->v1alpha5_defaults = c.d;
    return NS_OK;
}

const struct ns_req_defaults *ns_plugin_v1alpha5_defaults_of(const ns_plugin *p)
{
    return p ? p->v1alpha5_defaults : NULL;
}
