/*
 * One wrapper per provider method (libvirt's public API layer): check arguments, clear the thread's error, call or
 * report "unsupported", copy what comes back into full-size structs, and make sure every failure carries a message
 * that names the provider and the method.
 *
 * Every call goes through the watchdog (plugin_call_args.h): it runs on a worker thread with a deadline, on copies
 * of its inputs and into outputs the call owns (a call_args), which the wrapper copies back only when the call
 * finished in time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "errors/ns_error.h"
#include "plugin/plugin_call_args.h"
#include "plugin/plugin_copies.h"
#include "plugin/plugin_internal.h"
#include "plugin/plugin_status.h"
#include "plugin/plugin_watchdog.h"

/* Whether the calling thread's last failed wrapper call got its message from the core because the provider gave
 * none (the conformance suite's error-message rule): set where the default message is made, and cleared as each
 * call starts. */
static _Thread_local bool tl_error_defaulted;

bool ns_plugin_error_defaulted(void)
{
    return tl_error_defaulted;
}

/* Normalises a provider's return: unknown codes become NS_ERR_INTERNAL, and an error without a message gets one. */
static int finish(const ns_plugin *p, const char *method, const char *object, int rc)
{
    if (rc == NS_OK)
        return NS_OK;
    const ns_error_record *e = ns_error_last();
    if (rc > 0 || rc < NS_ERR_INVALID_ARGUMENT) {
        tl_error_defaulted = e->code == NS_OK;
        NS_FAIL(NS_ERR_INTERNAL, "returned %d, which is not an error category%s%s", rc, e->code ? ": " : "",
                e->code ? e->message : "");
        rc = NS_ERR_INTERNAL;
    } else if (e->code == NS_OK) {
        tl_error_defaulted = true;
        NS_FAIL(rc, "failed (%s) without saying why", ns_err_name(rc));
    } else if (e->code != rc) {
        /* The provider's recorded message is for a different category than it returned; keep its words and
         * the category it returned, which is what callers act on. */
        ns_error_record copy = *e;
        ns_error_set(rc, copy.file, copy.line, "%s", copy.message);
        ns_error_set_retry_after(copy.retry_after_ms);
        for (size_t i = 0; i < copy.n_unavailable; i++)
            ns_error_add_unavailable(copy.unavailable[i].instance_type, copy.unavailable[i].zone,
                                     copy.unavailable[i].capacity_type);
    }
    if (object)
        return ns_error_prefix("provider %s: %s %s: ", p->table.name, method, object);
    return ns_error_prefix("provider %s: %s: ", p->table.name, method);
}

static int unsupported(const ns_plugin *p, const char *method)
{
    return NS_FAIL(NS_ERR_UNSUPPORTED, "provider %s (ABI %u) does not support %s", p->table.name, p->table.abi_version,
                   method);
}

#define CHECK_PLUGIN(p, method)                                                                                        \
    do {                                                                                                               \
        ns_error_clear();                                                                                              \
        tl_error_defaulted = false;                                                                                    \
        if (!(p))                                                                                                      \
            return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "%s: no provider given", method);                                  \
        if (ns_fault_layer_enter((p)->faults, method) < 0)                                                             \
            return ns_error_prefix("provider %s: ", (p)->table.name);                                                  \
    } while (0)

static int passed_back(const trampoline *t, int rc)
{
    return t->stopped_with != 0 && rc == t->stopped_with;
}

int ns_plugin_list_instance_types(ns_plugin *p, const ns_nodeclass *nodeclass, ns_instance_type_cb cb, void *cb_ctx)
{
    CHECK_PLUGIN(p, "list_instance_types");
    if (!nodeclass || !cb)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "list_instance_types: node class and callback are required");
    call_args *a = ns_call_args_new(p, M_LIST_INSTANCE_TYPES);
    if (!a || ns_copy_nodeclass(&a->copies, nodeclass, &a->nodeclass) < 0) {
        ns_call_args_free(a);
        return ns_error_prefix("provider %s: list_instance_types: ", p->table.name);
    }
    a->t.cb.instance_type = cb;
    a->t.cb_ctx = cb_ctx;
    ns_call *h;
    int rc = ns_call_args_run(p, a, &h);
    if (!h)
        return rc;
    rc = passed_back(&a->t, rc) ? rc : finish(p, "list_instance_types", nodeclass->name, rc);
    ns_call_release(h);
    return rc;
}

/* The limits provider.h promises providers: a client token of 1 to NS_CLIENT_TOKEN_MAX printable ASCII characters,
 * and names that fit the NS_NAME_MAX buffers of ns_instance. */
static int check_launch_limits(const ns_launch_request *req)
{
    size_t n = strlen(req->client_token);
    if (n > NS_CLIENT_TOKEN_MAX)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "launch %s: client token \"%s\" is %zu characters, more than the %d "
                       "the provider ABI allows", req->nodeclaim_name, req->client_token, n, NS_CLIENT_TOKEN_MAX);
    for (size_t i = 0; i < n; i++)
        if (req->client_token[i] < 0x20 || req->client_token[i] > 0x7e)
            return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "launch %s: client token has a character that is not printable "
                           "ASCII at position %zu", req->nodeclaim_name, i);
    const struct {
        const char *what, *value;
    } names[] = {{"node claim", req->nodeclaim_name}, {"NodePool", req->nodepool_name},
                 {"cluster", req->cluster_name}, {"node class", req->nodeclass->name}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].value && strlen(names[i].value) >= NS_NAME_MAX)
            return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "launch %s: %s name \"%.40s...\" is %zu characters; the provider "
                           "ABI allows at most %d", req->nodeclaim_name, names[i].what, names[i].value,
                           strlen(names[i].value), NS_NAME_MAX - 1);
    return NS_OK;
}

/* Options on offerings an injected fault emptied are dropped, as a cloud would refuse them; with none left the launch
 * fails as the cloud's would, naming each one, and the provider is not called. */
static int drop_faulted_options(ns_plugin *p, ns_launch_request *req, ns_launch_option **open)
{
    *open = calloc(req->n_options, sizeof(**open));
    if (!*open)
        return NS_FAIL(NS_ERR_INTERNAL, "launch %s: out of memory", req->nodeclaim_name);
    size_t n = 0;
    for (size_t i = 0; i < req->n_options; i++) {
        const ns_launch_option *o = NS_AT(req->options, i);
        if (ns_fault_layer_no_capacity(p->faults, o->instance_type, o->zone, o->capacity_type))
            continue;
        COPY_VERSIONED((*open)[n], o);
        n++;
    }
    if (n > 0) {
        req->options = *open;
        req->n_options = n;
        return NS_OK;
    }
    NS_FAIL(NS_ERR_INSUFFICIENT_CAPACITY, "provider %s: launch %s: no capacity in any of its %zu offerings (injected "
            "fault)", p->table.name, req->nodeclaim_name, req->n_options);
    for (size_t i = 0; i < req->n_options; i++) {
        const ns_launch_option *o = NS_AT(req->options, i);
        ns_error_add_unavailable(o->instance_type, o->zone, o->capacity_type);
    }
    return NS_ERR_INSUFFICIENT_CAPACITY;
}

int ns_plugin_launch(ns_plugin *p, const ns_launch_request *req, ns_launch_result *result)
{
    CHECK_PLUGIN(p, "launch");
    if (!req || !result || !req->client_token || !*req->client_token || !req->options || req->n_options == 0 ||
        !req->nodeclass || !req->nodeclaim_name)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT,
                       "launch: a request with a node claim, a client token, a node class and at least one option "
                       "is required");
    memset(result, 0, sizeof(*result));
    result->struct_size = sizeof(*result);
    if (check_launch_limits(req) < 0)
        return ns_error_prefix("provider %s: ", p->table.name);
    ns_launch_request kept = *req;
    ns_launch_option *open = NULL;
    int rc = ns_fault_layer_has_capacity_faults(p->faults) ? drop_faulted_options(p, &kept, &open) : NS_OK;
    call_args *a = rc == NS_OK ? ns_call_args_new(p, M_LAUNCH) : NULL;
    if (rc == NS_OK && (!a || ns_copy_launch_request(&a->copies, &kept, &a->request) < 0)) {
        ns_call_args_free(a);
        rc = ns_error_prefix("provider %s: launch %s: ", p->table.name, req->nodeclaim_name);
    } else if (rc == NS_OK) {
        ns_call *h;
        rc = ns_call_args_run(p, a, &h);
        if (h) {
            rc = finish(p, "launch", req->nodeclaim_name, rc);
            memcpy(result, &a->result, sizeof(*result));
            result->struct_size = sizeof(*result);
            ns_call_release(h);
        }
    }
    free(open);
    if (rc == NS_OK && (!result->provider_id[0] || !result->instance_type[0] || !result->zone[0] ||
                        !result->capacity_type[0]))
        return NS_FAIL(NS_ERR_INTERNAL,
                       "provider %s: launch %s: reported success without a provider ID, instance type, zone and "
                       "capacity type",
                       p->table.name, req->nodeclaim_name);
    return rc;
}

/* A call_args for a method given a provider ID (terminate, get_instance). */
static call_args *args_with_id(ns_plugin *p, method_id m, const char *provider_id)
{
    call_args *a = ns_call_args_new(p, m);
    if (a && ns_copy_string(&a->copies, provider_id, &a->provider_id) < 0) {
        ns_call_args_free(a);
        a = NULL;
    }
    return a;
}

int ns_plugin_terminate(ns_plugin *p, const char *provider_id, bool *already_gone)
{
    CHECK_PLUGIN(p, "terminate");
    if (!provider_id || !*provider_id)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "terminate: a provider ID is required");
    if (already_gone)
        *already_gone = false;
    call_args *a = args_with_id(p, M_TERMINATE, provider_id);
    if (!a)
        return ns_error_prefix("provider %s: terminate %s: ", p->table.name, provider_id);
    ns_call *h;
    int rc = ns_call_args_run(p, a, &h);
    if (!h)
        return rc;
    rc = finish(p, "terminate", provider_id, rc);
    if (already_gone)
        *already_gone = rc == NS_OK && a->flag;
    ns_call_release(h);
    return rc;
}

/* The methods whose only input is a callback: list_instances, poll_events, list_repair_policies,
 * v1alpha5_defaults. */
static int call_with_callback(ns_plugin *p, call_args *a, const char *method)
{
    ns_call *h;
    int rc = ns_call_args_run(p, a, &h);
    if (!h)
        return rc;
    rc = passed_back(&a->t, rc) ? rc : finish(p, method, NULL, rc);
    ns_call_release(h);
    return rc;
}

int ns_plugin_list_instances(ns_plugin *p, ns_instance_cb cb, void *cb_ctx)
{
    CHECK_PLUGIN(p, "list_instances");
    if (!cb)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "list_instances: a callback is required");
    call_args *a = ns_call_args_new(p, M_LIST_INSTANCES);
    if (!a)
        return ns_error_prefix("provider %s: list_instances: ", p->table.name);
    a->t.cb.instance = cb;
    a->t.cb_ctx = cb_ctx;
    return call_with_callback(p, a, "list_instances");
}

/* Stops the scan at the match: 1 is "stop", not an error; the fallback turns it back into NS_OK. */
static int find_instance(void *ctx, const ns_instance *inst)
{
    find_ctx *f = ctx;
    if (strcmp(inst->provider_id, f->provider_id) != 0)
        return 0;
    *f->out = *inst;
    f->found = true;
    return 1;
}

int ns_plugin_get_instance(ns_plugin *p, const char *provider_id, ns_instance *out)
{
    CHECK_PLUGIN(p, "get_instance");
    if (!provider_id || !*provider_id || !out)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "get_instance: a provider ID and a result are required");
    memset(out, 0, sizeof(*out));
    out->struct_size = sizeof(*out);
    /* ABI 1 providers have no get: find it in the list instead (SQLite's fallback for a missing xMethod). */
    bool by_list = !p->table.get_instance;
    call_args *a = args_with_id(p, by_list ? M_LIST_INSTANCES : M_GET_INSTANCE, provider_id);
    if (!a)
        return ns_error_prefix("provider %s: get_instance %s: ", p->table.name, provider_id);
    a->find = (find_ctx){a->provider_id, &a->out, false};
    a->t.cb.instance = find_instance;
    a->t.cb_ctx = &a->find;
    ns_call *h;
    int rc = ns_call_args_run(p, a, &h);
    if (!h)
        return rc;
    if (!by_list) {
        rc = finish(p, "get_instance", provider_id, rc);
    } else if (a->find.found) {
        rc = NS_OK;
    } else if (rc != NS_OK) {
        rc = finish(p, "get_instance (via list_instances)", provider_id, rc);
    } else {
        rc = NS_FAIL(NS_ERR_NOT_FOUND, "provider %s: get_instance %s: no such instance", p->table.name, provider_id);
    }
    if (rc == NS_OK)
        memcpy(out, &a->out, sizeof(*out));
    out->struct_size = sizeof(*out);
    ns_call_release(h);
    return rc;
}

int ns_plugin_poll_events(ns_plugin *p, ns_event_cb cb, void *cb_ctx)
{
    CHECK_PLUGIN(p, "poll_events");
    if (!cb)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "poll_events: a callback is required");
    call_args *a = ns_call_args_new(p, M_POLL_EVENTS);
    if (!a)
        return ns_error_prefix("provider %s: poll_events: ", p->table.name);
    a->t.cb.event = cb;
    a->t.cb_ctx = cb_ctx;
    return call_with_callback(p, a, "poll_events");
}

int ns_plugin_check_drift(ns_plugin *p, const ns_instance *instance, const ns_nodeclass *nodeclass, bool *drifted,
                          char *reason, size_t reason_len)
{
    CHECK_PLUGIN(p, "check_drift");
    if (!instance || !nodeclass || !drifted || !reason || reason_len == 0)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "check_drift: instance, node class and results are required");
    *drifted = false;
    reason[0] = '\0';
    if (!p->table.check_drift)
        return unsupported(p, "check_drift");
    call_args *a = ns_call_args_new(p, M_CHECK_DRIFT);
    if (!a || ns_copy_nodeclass(&a->copies, nodeclass, &a->nodeclass) < 0) {
        ns_call_args_free(a);
        return ns_error_prefix("provider %s: check_drift: ", p->table.name);
    }
    COPY_VERSIONED(a->instance, instance);
    ns_call *h;
    int rc = ns_call_args_run(p, a, &h);
    if (!h)
        return rc;
    a->reason[sizeof(a->reason) - 1] = '\0';
    rc = finish(p, "check_drift", instance->provider_id, rc);
    if (rc == NS_OK) {
        *drifted = a->flag;
        snprintf(reason, reason_len, "%s", a->reason);
    }
    ns_call_release(h);
    return rc;
}

int ns_plugin_validate_nodeclass(ns_plugin *p, const ns_nodeclass *nodeclass)
{
    CHECK_PLUGIN(p, "validate_nodeclass");
    if (!nodeclass)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "validate_nodeclass: a node class is required");
    if (!p->table.validate_nodeclass)
        return unsupported(p, "validate_nodeclass");
    call_args *a = ns_call_args_new(p, M_VALIDATE_NODECLASS);
    if (!a || ns_copy_nodeclass(&a->copies, nodeclass, &a->nodeclass) < 0) {
        ns_call_args_free(a);
        return ns_error_prefix("provider %s: validate_nodeclass: ", p->table.name);
    }
    ns_call *h;
    int rc = ns_call_args_run(p, a, &h);
    if (!h)
        return rc;
    rc = finish(p, "validate_nodeclass", nodeclass->name, rc);
    ns_call_release(h);
    return rc;
}

int ns_plugin_nodeclass_status(ns_plugin *p, const ns_nodeclass *nodeclass, struct cJSON **status)
{
    CHECK_PLUGIN(p, "nodeclass_status");
    if (!nodeclass || !status)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "nodeclass_status: a node class and a result are required");
    *status = NULL;
    if (!p->table.nodeclass_status)
        return unsupported(p, "nodeclass_status");
    call_args *a = ns_call_args_new(p, M_NODECLASS_STATUS);
    if (!a || ns_copy_nodeclass(&a->copies, nodeclass, &a->nodeclass) < 0) {
        ns_call_args_free(a);
        return ns_error_prefix("provider %s: nodeclass_status: ", p->table.name);
    }
    ns_call *h;
    int rc = ns_call_args_run(p, a, &h);
    if (!h)
        return rc;
    cJSON *doc = (cJSON *)a->status;
    a->status = NULL; /* ours now, whatever happens to it below */
    ns_call_release(h);
    if (rc != NS_OK) {
        cJSON_Delete(doc); /* provider.h: anything left beside an error is freed and ignored */
        return finish(p, "nodeclass_status", nodeclass->name, rc);
    }
    if (!doc)
        rc = NS_FAIL(NS_ERR_INTERNAL, "returned NS_OK without a status");
    else
        rc = ns_nodeclass_status_complete(doc);
    if (rc != NS_OK) {
        cJSON_Delete(doc);
        return ns_error_prefix("provider %s: nodeclass_status %s: ", p->table.name, nodeclass->name);
    }
    *status = doc;
    return NS_OK;
}

/* The rules provider.h sets for an event read from a node condition: a known kind, an id, the condition's instance
 * and no negative time. */
static int check_condition_event(const ns_node_condition *c, const ns_event *ev)
{
    if (!ns_event_kind_known(ev->kind))
        return NS_FAIL(NS_ERR_INTERNAL, "event kind %d is not an ns_event_kind", (int)ev->kind);
    if (!memchr(ev->id, 0, sizeof(ev->id)) || !memchr(ev->provider_id, 0, sizeof(ev->provider_id)) ||
        !memchr(ev->detail, 0, sizeof(ev->detail)))
        return NS_FAIL(NS_ERR_INTERNAL, "the event's id, provider_id or detail is not NUL-terminated");
    if (!ev->id[0])
        return NS_FAIL(NS_ERR_INTERNAL, "the event has no id");
    if (strcmp(ev->provider_id, c->provider_id) != 0)
        return NS_FAIL(NS_ERR_INTERNAL, "the event names instance %s, not the node's %s", ev->provider_id,
                       c->provider_id);
    if (ev->time_ms < 0 || ev->deadline_ms < 0)
        return NS_FAIL(NS_ERR_INTERNAL, "the event's time or deadline is negative");
    return NS_OK;
}

int ns_plugin_event_from_node_condition(ns_plugin *p, const ns_node_condition *condition, ns_event *event,
                                        bool *is_event)
{
    CHECK_PLUGIN(p, "event_from_node_condition");
    const ns_node_condition *c = condition;
    if (!c || !event || !is_event || !c->node_name || !c->provider_id || !c->type || !c->status || !c->reason ||
        !c->message)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "event_from_node_condition: a complete condition, an event and a "
                                                "result are required");
    *is_event = false;
    if (!p->table.event_from_node_condition)
        return unsupported(p, "event_from_node_condition");
    char object[NS_NAME_MAX * 2 + 8];
    snprintf(object, sizeof(object), "%s condition %s", c->node_name, c->type);
    call_args *a = ns_call_args_new(p, M_EVENT_FROM_NODE_CONDITION);
    if (!a || ns_copy_node_condition(&a->copies, c, &a->condition) < 0) {
        ns_call_args_free(a);
        return ns_error_prefix("provider %s: event_from_node_condition %s: ", p->table.name, object);
    }
    a->event.struct_size = sizeof(a->event);
    ns_call *h;
    int rc = ns_call_args_run(p, a, &h);
    if (!h)
        return rc;
    ns_event out = a->event;
    bool yes = a->flag;
    ns_call_release(h);
    if (rc != NS_OK)
        return finish(p, "event_from_node_condition", object, rc);
    if (yes && check_condition_event(c, &out) != NS_OK)
        return ns_error_prefix("provider %s: event_from_node_condition %s: ", p->table.name, object);
    if (yes)
        *event = out;
    *is_event = yes;
    return NS_OK;
}

int ns_plugin_v1alpha5_defaults(ns_plugin *p, ns_requirement_default_cb cb, void *cb_ctx)
{
    CHECK_PLUGIN(p, "v1alpha5_defaults");
    if (!cb)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "v1alpha5_defaults: a callback is required");
    if (!p->table.v1alpha5_defaults)
        return unsupported(p, "v1alpha5_defaults");
    call_args *a = ns_call_args_new(p, M_V1ALPHA5_DEFAULTS);
    if (!a)
        return ns_error_prefix("provider %s: v1alpha5_defaults: ", p->table.name);
    a->t.cb.requirement_default = cb;
    a->t.cb_ctx = cb_ctx;
    return call_with_callback(p, a, "v1alpha5_defaults");
}

int ns_plugin_list_repair_policies(ns_plugin *p, ns_repair_policy_cb cb, void *cb_ctx)
{
    CHECK_PLUGIN(p, "list_repair_policies");
    if (!cb)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "list_repair_policies: a callback is required");
    if (!p->table.list_repair_policies)
        return unsupported(p, "list_repair_policies");
    call_args *a = ns_call_args_new(p, M_LIST_REPAIR_POLICIES);
    if (!a)
        return ns_error_prefix("provider %s: list_repair_policies: ", p->table.name);
    a->t.cb.repair_policy = cb;
    a->t.cb_ctx = cb_ctx;
    return call_with_callback(p, a, "list_repair_policies");
}

/* The provider's own test_inject_fault, on a copy of the fault. */
static int provider_inject(ns_plugin *p, const ns_fault *fault)
{
    call_args *a = ns_call_args_new(p, M_TEST_INJECT_FAULT);
    if (!a || ns_copy_fault(&a->copies, fault, &a->fault) < 0) {
        ns_call_args_free(a);
        return ns_error_prefix("provider %s: test_inject_fault: ", p->table.name);
    }
    ns_call *h;
    int rc = ns_call_args_run(p, a, &h);
    if (!h)
        return rc;
    rc = finish(p, "test_inject_fault", NULL, rc);
    ns_call_release(h);
    return rc;
}

int ns_plugin_inject_fault(ns_plugin *p, const ns_fault *fault)
{
    ns_error_clear();
    tl_error_defaulted = false;
    if (!p || !fault)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "inject fault: a provider and a fault are required");
    if (fault->kind != NS_FAULT_INTERRUPT && fault->kind != NS_FAULT_CLEAR)
        return ns_fault_layer_add(p->faults, fault);
    if (fault->kind == NS_FAULT_CLEAR)
        ns_fault_layer_clear(p->faults);
    if (!p->table.test_inject_fault)
        return fault->kind == NS_FAULT_CLEAR ? NS_OK : unsupported(p, "test_inject_fault (interruption events)");
    int rc = provider_inject(p, fault);
    /* A provider with its hooks off has nothing of its own to clear. */
    return fault->kind == NS_FAULT_CLEAR && rc == NS_ERR_UNSUPPORTED ? NS_OK : rc;
}

int ns_plugin_inject_hang(ns_plugin *p, const char *method, uint32_t count)
{
    ns_error_clear();
    if (!p)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "inject hang: no provider given");
    if (p->call_timeout_ms <= 0)
        return NS_FAIL(NS_ERR_INVALID_CONFIG, "inject hang: the calls of provider %s have no deadline "
                       "(--provider-timeout), so a hung %s would never end", p->table.name, method ? method : "call");
    return ns_fault_layer_add_hang(p->faults, method, count, p->call_timeout_ms);
}

int ns_plugin_test_inject_fault(ns_plugin *p, const ns_fault *fault)
{
    ns_error_clear();
    tl_error_defaulted = false;
    if (!p)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "test_inject_fault: no provider given");
    if (!fault)
        return NS_FAIL(NS_ERR_INVALID_ARGUMENT, "test_inject_fault: a fault is required");
    if (!p->table.test_inject_fault)
        return unsupported(p, "test_inject_fault");
    return provider_inject(p, fault);
}
