/* A node class's .status document (provider ABI 4, nodeclass_status), built through the host's JSON calls.
 *
 * Every cloud's status controller writes the same shape: resolved fields beside a `conditions` list whose entries are
 * {type, status, reason, message}. Building it is a long run of small additions, each of which can fail for want of
 * memory; the document records the first failure (`oom`) and every later call is a no-op on a NULL container, so a
 * builder checks once at the end instead of after each call. Compiled into each provider .so (providers/common). */
#ifndef NS_PROVIDERS_STATUS_DOC_H
#define NS_PROVIDERS_STATUS_DOC_H

#include <stdbool.h>

#include "nodesmith/provider.h"

typedef struct status_doc {
    const ns_host *h;
    ns_json *status;     /* owned by the document until status_doc_take */
    ns_json *conditions; /* borrowed: inside status */
    bool oom;            /* some addition failed: the document is incomplete */
} status_doc;

/* An empty status object with an empty conditions list; false (and oom set) when memory ran out. Release with
 * status_doc_close in every case. */
bool status_doc_open(status_doc *d, const ns_host *h);

/* Adds item to container (an object when key is set, else an array) and returns it, borrowed. Takes ownership of
 * item: it is freed when container is NULL or the addition fails, which sets oom. */
ns_json *status_doc_put(status_doc *d, ns_json *container, const char *key, ns_json *item);

void status_doc_put_string(status_doc *d, ns_json *container, const char *key, const char *value);

/* One condition. status is "True", "False" or "Unknown"; message "" when there is nothing to say. */
void status_doc_condition(status_doc *d, const char *type, const char *status, const char *reason,
                          const char *message);

/* A True condition whose reason is its type, as Karpenter's providers set a ready condition. */
void status_doc_ready(status_doc *d, const char *type);

/* True (status_doc_ready) when why is NULL, else False with reason_false and why as the message. */
void status_doc_check(status_doc *d, const char *type, const char *reason_false, const char *why);

/* Appends a node selector requirement {key, operator[, values: [value]]} to the array reqs; value NULL for the
 * operators that take none (Exists, DoesNotExist). */
void status_doc_requirement(status_doc *d, ns_json *reqs, const char *key, const char *op, const char *value);

/* The document, now the caller's (free with host->json_free); the document is left empty. */
ns_json *status_doc_take(status_doc *d);

/* Frees what the document still owns. */
void status_doc_close(status_doc *d);

#endif
