/*
 * Interruption and maintenance events. The skeleton's only source is the test hook; a real provider drains its
 * cloud's notification queue (an SQS queue fed by EventBridge on AWS, Scheduled Events on Azure) here.
 */
#include <stdlib.h>

#include "skeleton.h"

int sk_events_push_locked(sk_state *st, const ns_event *event)
{
    sk_event_node *node = calloc(1, sizeof(*node));

    if (!node)
        return NS_ERROR(st->host, st->ctx, NS_ERR_INTERNAL, "queueing event %s for %s: out of memory", event->id,
                        event->provider_id);
    node->event = *event;
    if (st->events_tail)
        st->events_tail->next = node;
    else
        st->events_head = node;
    st->events_tail = node;
    return NS_OK;
}

/* Puts undelivered events back at the front, ahead of any that arrived during delivery, so order is kept. */
static void sk_events_requeue(sk_state *st, sk_event_node *head, sk_event_node *tail)
{
    pthread_mutex_lock(&st->lock);
    tail->next = st->events_head;
    if (!st->events_head)
        st->events_tail = tail;
    st->events_head = head;
    pthread_mutex_unlock(&st->lock);
}

int sk_poll_events(void *state, ns_event_cb cb, void *cb_ctx)
{
    sk_state *st = state;
    sk_event_node *node, *tail;
    int rc = sk_faults_before_call(st, "poll_events");

    if (rc != NS_OK)
        return rc;
    /* Take the whole queue so callbacks run without the lock held. */
    pthread_mutex_lock(&st->lock);
    node = st->events_head;
    tail = st->events_tail;
    st->events_head = st->events_tail = NULL;
    pthread_mutex_unlock(&st->lock);
    while (node) {
        sk_event_node *next = node->next;

        rc = cb(cb_ctx, &node->event);
        if (rc != 0) {
            /* The core could not take this event: keep it and the rest for the next poll. */
            sk_events_requeue(st, node, tail);
            return rc;
        }
        free(node);
        node = next;
    }
    return NS_OK;
}

void sk_events_free(sk_state *st)
{
    sk_event_node *node = st->events_head;

    while (node) {
        sk_event_node *next = node->next;

        free(node);
        node = next;
    }
    st->events_head = st->events_tail = NULL;
}
