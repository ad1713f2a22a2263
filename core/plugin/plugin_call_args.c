/* Provider calls on the watchdog: running one, the provider's callbacks into the caller, init and destroy. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "plugin/plugin_call_args.h"

/* A callback of a call the watchdog gave up on reaches nothing of the caller's: the provider is told to stop. */
static int abandoned_callback(const char *what)
{
    return NS_FAIL(NS_ERR_INTERNAL, "%s after the call was abandoned by the watchdog; stop", what);
}

void ns_call_args_free(void *arg)
{
    call_args *a = arg;
    if (!a)
        return;
    ns_copies_free(&a->copies);
    cJSON_Delete((cJSON *)a->status);
    free(a);
}

call_args *ns_call_args_new(ns_plugin *p, method_id method)
{
    call_args *a = calloc(1, sizeof(*a));
    if (!a) {
        NS_FAIL(NS_ERR_INTERNAL, "provider %s: out of memory", p->table.name);
        return NULL;
    }
    a->method = method;
    a->table = p->table;
    a->state = p->state;
    a->host_ctx = &p->ctx;
    a->t.p = p;
    a->result.struct_size = sizeof(a->result);
    a->out.struct_size = sizeof(a->out);
    return a;
}


/* The offerings an injected insufficient-capacity fault empties read as unavailable: a full-size copy of them. */
static ns_offering *offerings_with_faults(ns_plugin *p, const ns_instance_type *type)
{
    ns_offering *out = calloc(type->n_offerings ? type->n_offerings : 1, sizeof(*out));
    if (!out) {
        NS_FAIL(NS_ERR_INTERNAL, "out of memory copying the offerings of %s", type->name);
        return NULL;
    }
    for (size_t i = 0; i < type->n_offerings; i++) {
        const ns_offering *src = NS_AT(type->offerings, i);
        COPY_VERSIONED(out[i], src);
        /* The copy is full-size: a field the provider's offering lacks must keep its "absent" meaning, not read 0. */
        if (!NS_HAS_FIELD(src, ns_offering, reservation_capacity))
            out[i].reservation_capacity = NS_RESERVATION_CAPACITY_UNKNOWN;
        if (ns_fault_layer_no_capacity(p->faults, type->name, out[i].zone, out[i].capacity_type)) {
            out[i].available = false;
            out[i].reservation_capacity = 0;
        }
    }
    return out;
}

static int instance_type_to_caller(trampoline *t, const ns_instance_type *src)
{
    if (!src)
        return NS_FAIL(NS_ERR_INTERNAL, "list_instance_types passed a NULL instance type");
    /* Every field of ns_instance_type is ABI 1's: a smaller struct_size is a provider bug, not an older version. */
    if (src->struct_size < sizeof(ns_instance_type))
        return t->stopped_with = NS_FAIL(NS_ERR_INTERNAL, "provider %s: list_instance_types passed an instance type "
                                         "whose struct_size is %u, smaller than the %zu bytes of ns_instance_type",
                                         t->p->table.name, (unsigned)src->struct_size, sizeof(ns_instance_type));
    ns_instance_type copy;
    COPY_VERSIONED(copy, src);
    ns_offering *faulted = NULL;
    if (copy.n_offerings && copy.offerings && ns_fault_layer_has_capacity_faults(t->p->faults)) {
        if (!(faulted = offerings_with_faults(t->p, &copy)))
            return t->stopped_with = NS_ERR_INTERNAL;
        copy.offerings = faulted;
    }
    t->stopped_with = t->cb.instance_type(t->cb_ctx, &copy);
    free(faulted);
    return t->stopped_with;
}

/* Each callback the provider calls: refused once the watchdog abandoned the call, otherwise the caller's, with the
 * time it takes not counted against the deadline. */
static int on_instance_type(void *ctx, const ns_instance_type *src)
{
    if (!ns_call_callback_enter())
        return abandoned_callback("list_instance_types called back");
    int rc = instance_type_to_caller(ctx, src);
    ns_call_callback_leave();
    return rc;
}

static int instance_to_caller(trampoline *t, const ns_instance *src)
{
    if (!src)
        return NS_FAIL(NS_ERR_INTERNAL, "list_instances passed a NULL instance");
    ns_instance copy;
    COPY_VERSIONED(copy, src);
    return t->stopped_with = t->cb.instance(t->cb_ctx, &copy);
}

static int on_instance(void *ctx, const ns_instance *src)
{
    if (!ns_call_callback_enter())
        return abandoned_callback("list_instances called back");
    int rc = instance_to_caller(ctx, src);
    ns_call_callback_leave();
    return rc;
}

static const char *kind_text(int kind)
{
    static _Thread_local char text[16];
    snprintf(text, sizeof(text), "%d", kind);
    return text;
}

static int event_to_caller(trampoline *t, const ns_event *src)
{
    if (!src)
        return NS_FAIL(NS_ERR_INTERNAL, "poll_events passed a NULL event");
    ns_event copy;
    COPY_VERSIONED(copy, src);
    if (!ns_event_kind_known(copy.kind)) {
        /* Consumed, not passed on: nothing can act on it, and refusing it would bring it back at every poll. */
        ns_log(NS_LOG_WARN, t->p->table.name, "dropped a provider event of a kind this nodesmith does not know",
               "kind", kind_text((int)copy.kind), "provider-id", copy.provider_id, "id", copy.id, NULL);
        return 0;
    }
    return t->stopped_with = t->cb.event(t->cb_ctx, &copy);
}

static int on_event(void *ctx, const ns_event *src)
{
    if (!ns_call_callback_enter())
        return abandoned_callback("poll_events called back");
    int rc = event_to_caller(ctx, src);
    ns_call_callback_leave();
    return rc;
}

static int repair_policy_to_caller(trampoline *t, const ns_repair_policy *src)
{
    if (!src)
        return NS_FAIL(NS_ERR_INTERNAL, "list_repair_policies passed a NULL policy");
    ns_repair_policy copy;
    COPY_VERSIONED(copy, src);
    return t->stopped_with = t->cb.repair_policy(t->cb_ctx, &copy);
}

static int on_repair_policy(void *ctx, const ns_repair_policy *src)
{
    if (!ns_call_callback_enter())
        return abandoned_callback("list_repair_policies called back");
    int rc = repair_policy_to_caller(ctx, src);
    ns_call_callback_leave();
    return rc;
}

static int requirement_default_to_caller(trampoline *t, const ns_requirement_default *src)
{
    if (!src)
        return NS_FAIL(NS_ERR_INTERNAL, "v1alpha5_defaults passed a NULL default");
    /* every field of a default is ABI 6's: a shorter struct would read as a default without unless keys */
    if (src->struct_size < sizeof(ns_requirement_default))
        return NS_FAIL(NS_ERR_INTERNAL, "v1alpha5_defaults passed a default of struct_size %u, less than ABI 6's %zu",
                       src->struct_size, sizeof(ns_requirement_default));
    ns_requirement_default copy;
    COPY_VERSIONED(copy, src);
    return t->stopped_with = t->cb.requirement_default(t->cb_ctx, &copy);
}

static int on_requirement_default(void *ctx, const ns_requirement_default *src)
{
    if (!ns_call_callback_enter())
        return abandoned_callback("v1alpha5_defaults called back");
    int rc = requirement_default_to_caller(ctx, src);
    ns_call_callback_leave();
    return rc;
}

static int run_method(void *arg)
{
    call_args *a = arg;
    const ns_provider *t = &a->table;
    switch (a->method) {
    case M_INIT: return t->init(ns_plugin_host_table(), a->host_ctx, &a->new_state);
    case M_DESTROY: t->destroy(a->state); return NS_OK;
    case M_LIST_INSTANCE_TYPES: return t->list_instance_types(a->state, &a->nodeclass, on_instance_type, &a->t);
    case M_LAUNCH: return t->launch(a->state, &a->request, &a->result);
    case M_TERMINATE: return t->terminate(a->state, a->provider_id, &a->flag);
    case M_LIST_INSTANCES: return t->list_instances(a->state, on_instance, &a->t);
    case M_GET_INSTANCE: return t->get_instance(a->state, a->provider_id, &a->out);
    case M_POLL_EVENTS: return t->poll_events(a->state, on_event, &a->t);
    case M_CHECK_DRIFT:
        return t->check_drift(a->state, &a->instance, &a->nodeclass, &a->flag, a->reason, sizeof(a->reason));
    case M_VALIDATE_NODECLASS: return t->validate_nodeclass(a->state, &a->nodeclass);
    case M_LIST_REPAIR_POLICIES: return t->list_repair_policies(a->state, on_repair_policy, &a->t);
    case M_TEST_INJECT_FAULT: return t->test_inject_fault(a->state, &a->fault);
    case M_NODECLASS_STATUS: return t->nodeclass_status(a->state, &a->nodeclass, &a->status);
    case M_EVENT_FROM_NODE_CONDITION:
        return t->event_from_node_condition(a->state, &a->condition, &a->event, &a->flag);
    case M_V1ALPHA5_DEFAULTS: return t->v1alpha5_defaults(a->state, on_requirement_default, &a->t);
    }
    return NS_FAIL(NS_ERR_INTERNAL, "unknown provider method %d", (int)a->method);
}

static const char *method_name(method_id m)
{
    static const char *const names[] = {
        [M_INIT] = "init",
        [M_DESTROY] = "destroy",
        [M_LIST_INSTANCE_TYPES] = "list_instance_types",
        [M_LAUNCH] = "launch",
        [M_TERMINATE] = "terminate",
        [M_LIST_INSTANCES] = "list_instances",
        [M_GET_INSTANCE] = "get_instance",
        [M_POLL_EVENTS] = "poll_events",
        [M_CHECK_DRIFT] = "check_drift",
        [M_VALIDATE_NODECLASS] = "validate_nodeclass",
        [M_LIST_REPAIR_POLICIES] = "list_repair_policies",
        [M_TEST_INJECT_FAULT] = "test_inject_fault",
        [M_NODECLASS_STATUS] = "nodeclass_status",
        [M_EVENT_FROM_NODE_CONDITION] = "event_from_node_condition",
        [M_V1ALPHA5_DEFAULTS] = "v1alpha5_defaults",
    };
    return names[m];
}

int ns_call_args_run(ns_plugin *p, call_args *a, ns_call **h)
{
    bool abandoned = false;
    int rc = ns_call_run(p->table.name, method_name(a->method), p->call_timeout_ms, run_method, a, ns_call_args_free, h,
                         &abandoned);
    if (!*h) { /* not started (out of memory): a is still ours */
        ns_call_args_free(a);
        return rc;
    }
    if (abandoned)
        atomic_fetch_add(&p->abandoned_calls, 1);
    return rc;
}

int ns_plugin_call_init(ns_plugin *p)
{
    call_args *a = ns_call_args_new(p, M_INIT);
    if (!a)
        return NS_ERR_INTERNAL;
    ns_call *h;
    int rc = ns_call_args_run(p, a, &h);
    if (!h)
        return rc;
    p->state = atomic_load(&p->abandoned_calls) == 0 ? a->new_state : NULL;
    ns_call_release(h);
    return rc;
}

void ns_plugin_call_destroy(ns_plugin *p)
{
    if (!p->state || atomic_load(&p->abandoned_calls) > 0)
        return;
    call_args *a = ns_call_args_new(p, M_DESTROY);
    if (!a)
        return;
    /* destroy reports nothing: the error being reported when a failed load destroys its provider stays. */
    ns_error_record *kept = malloc(sizeof(*kept));
    if (kept)
        *kept = *ns_error_last();
    ns_call *h;
    ns_call_args_run(p, a, &h);
    ns_call_release(h);
    if (kept)
        ns_error_restore(kept);
    free(kept);
    if (atomic_load(&p->abandoned_calls) == 0)
        p->state = NULL;
}
