/* The node class status document shared by the providers; see status_doc.h. */
#include "status_doc.h"

bool status_doc_open(status_doc *d, const ns_host *h)
{
    *d = (status_doc){.h = h, .status = h->json_new_object()};
    if (!d->status) {
        d->oom = true;
        return false;
    }
    d->conditions = status_doc_put(d, d->status, "conditions", h->json_new_array());
    return !d->oom;
}

ns_json *status_doc_put(status_doc *d, ns_json *container, const char *key, ns_json *item)
{
    if (!container || !item || d->h->json_add(container, key, item) != NS_OK) {
        d->h->json_free(item);
        d->oom = true;
        return NULL;
    }
    return item;
}

void status_doc_put_string(status_doc *d, ns_json *container, const char *key, const char *value)
{
    status_doc_put(d, container, key, d->h->json_new_string(value));
}

void status_doc_condition(status_doc *d, const char *type, const char *status, const char *reason,
                          const char *message)
{
    ns_json *c = status_doc_put(d, d->conditions, NULL, d->h->json_new_object());
    status_doc_put_string(d, c, "type", type);
    status_doc_put_string(d, c, "status", status);
    status_doc_put_string(d, c, "reason", reason);
    status_doc_put_string(d, c, "message", message);
}

void status_doc_ready(status_doc *d, const char *type)
{
    status_doc_condition(d, type, "True", type, "");
}

void status_doc_check(status_doc *d, const char *type, const char *reason_false, const char *why)
{
    if (why)
        status_doc_condition(d, type, "False", reason_false, why);
    else
        status_doc_ready(d, type);
}

void status_doc_requirement(status_doc *d, ns_json *reqs, const char *key, const char *op, const char *value)
{
    ns_json *r = status_doc_put(d, reqs, NULL, d->h->json_new_object());
    status_doc_put_string(d, r, "key", key);
    status_doc_put_string(d, r, "operator", op);
    if (value)
        status_doc_put_string(d, status_doc_put(d, r, "values", d->h->json_new_array()), NULL, value);
}

ns_json *status_doc_take(status_doc *d)
{
    ns_json *status = d->status;
    d->status = d->conditions = NULL;
    return status;
}

void status_doc_close(status_doc *d)
{
    d->h->json_free(d->status);
    d->status = d->conditions = NULL;
}
