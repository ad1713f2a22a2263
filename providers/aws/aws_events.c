/* poll_events: EventBridge messages from the interruption queue (SQS, JSON protocol), read by aws_sqs_event.c as
 * Karpenter's interruption controller reads them, then the unhealthy instances EC2's DescribeInstanceStatus reports
 * (aws_instance_status.c; polled with or without a queue, as Karpenter's instance status controller is). A message
 * is deleted once its events were delivered (or when it concerns nothing we can act on); an event the core refuses
 * is kept in the provider's state and delivered first at the next poll. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_provider.h"
#include "aws_query.h"
#include "aws_sqs_event.h"

static int queue_url(aws_state *s, char *url, size_t len)
{
    pthread_mutex_lock(&s->lock);
    bool known = aws_copy(url, len, s->queue_url) && url[0];
    pthread_mutex_unlock(&s->lock);
    if (known)
        return NS_OK;
    char body[400];
    snprintf(body, sizeof(body), "{\"QueueName\":\"%s\"}", s->queue_name);
    ns_http_response *resp = NULL;
    int rc = aws_client_json(s->client, "sqs", "AmazonSQS.GetQueueUrl", "1.0", body, &resp, NULL);
    if (rc != NS_OK)
        return rc;
    ns_json *doc = s->host->json_parse(resp->body, resp->body_len);
    const char *value = s->host->json_string(s->host->json_get(doc, "QueueUrl"));
    if (!value || !aws_copy(url, len, value))
        rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "sqs GetQueueUrl %s: no usable QueueUrl", s->queue_name);
    s->host->json_free(doc);
    s->host->http_response_free(resp);
    if (rc == NS_OK) {
        pthread_mutex_lock(&s->lock);
        aws_copy(s->queue_url, sizeof(s->queue_url), url);
        pthread_mutex_unlock(&s->lock);
    }
    return rc;
}

/* Builds {"QueueUrl": url, key: value} with the host's JSON, so values are escaped. Free with host->free. */
static char *queue_request(aws_state *s, const char *url, const char *key, const char *value)
{
    ns_json *o = s->host->json_new_object();
    s->host->json_add(o, "QueueUrl", s->host->json_new_string(url));
    if (key)
        s->host->json_add(o, key, s->host->json_new_string(value));
    char *text = s->host->json_print(o);
    s->host->json_free(o);
    return text;
}

static int queue_call(aws_state *s, const char *target, const char *url, const char *key, const char *value)
{
    char *body = queue_request(s, url, key, value);
    if (!body)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory building an SQS request");
    ns_http_response *resp = NULL;
    int rc = aws_client_json(s->client, "sqs", target, "1.0", body, &resp, NULL);
    s->host->free(body);
    s->host->http_response_free(resp);
    return rc;
}

/* The provider ID of an instance, which needs its zone: NS_OK, NS_ERR_NOT_FOUND when EC2 no longer knows it, or
 * another error (reported) when EC2 could not be asked. */
static int provider_id_of(aws_state *s, const char *instance, char *out, size_t len)
{
    char guess[NS_PROVIDER_ID_MAX];
    snprintf(guess, sizeof(guess), "aws:///unknown/%s", instance);
    ns_instance inst = {.struct_size = sizeof(inst)};
    int rc = aws_get_instance(s, guess, &inst);
    if (rc == NS_OK && !aws_copy(out, len, inst.provider_id))
        rc = NS_ERR_INTERNAL;
    return rc;
}

/* Keeps a refused event for the next poll (or refreshes the receipt of one already kept). */
static void keep(aws_state *s, const ns_event *ev, const char *receipt)
{
    pthread_mutex_lock(&s->lock);
    size_t i = 0;
    while (i < s->n_pending && strcmp(s->pending[i].event.id, ev->id) != 0)
        i++;
    if (i == s->n_pending && s->n_pending < AWS_MAX_PENDING_EVENTS)
        s->pending[s->n_pending++].event = *ev;
    if (i < s->n_pending)
        aws_copy(s->pending[i].receipt, sizeof(s->pending[i].receipt), receipt);
    pthread_mutex_unlock(&s->lock);
}

static bool forget(aws_state *s, const char *id, char *receipt, size_t len)
{
    bool found = false;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_pending && !found; i++) {
        if (strcmp(s->pending[i].event.id, id) != 0)
            continue;
        found = true;
        aws_copy(receipt, len, s->pending[i].receipt);
        memmove(&s->pending[i], &s->pending[i + 1], (s->n_pending - i - 1) * sizeof(s->pending[0]));
        s->n_pending--;
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}

/* True while another kept event came from the message this receipt deletes (a Health event about several
 * instances): the message is deleted with the last of them. */
static bool receipt_kept(aws_state *s, const char *receipt)
{
    bool found = false;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_pending && !found; i++)
        found = strcmp(s->pending[i].receipt, receipt) == 0;
    pthread_mutex_unlock(&s->lock);
    return found;
}

/* Delivers the events kept from earlier polls, oldest first. NS_OK when every one was taken. */
static int deliver_kept(aws_state *s, const char *url, ns_event_cb cb, void *cb_ctx)
{
    for (;;) {
        ns_event ev;
        pthread_mutex_lock(&s->lock);
        bool any = s->n_pending > 0;
        if (any)
            ev = s->pending[0].event;
        pthread_mutex_unlock(&s->lock);
        if (!any)
            return NS_OK;
        int verdict = cb(cb_ctx, &ev); /* never with the lock held: the callback may call back in */
        if (verdict != 0)
            return verdict;
        char receipt[1024];
        if (forget(s, ev.id, receipt, sizeof(receipt)) && !receipt_kept(s, receipt)) {
            int rc = queue_call(s, "AmazonSQS.DeleteMessage", url, "ReceiptHandle", receipt);
            if (rc != NS_OK)
                return rc;
        }
    }
}

static bool kept(aws_state *s, const char *id)
{
    bool found = false;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_pending && !found; i++)
        found = strcmp(s->pending[i].event.id, id) == 0;
    pthread_mutex_unlock(&s->lock);
    return found;
}

static int poll_queue(aws_state *s, ns_event_cb cb, void *cb_ctx)
{
    char url[512];
    int rc = queue_url(s, url, sizeof(url));
    if (rc == NS_OK)
        rc = deliver_kept(s, url, cb, cb_ctx);
    if (rc != NS_OK)
        return rc;
    char body[700];
    snprintf(body, sizeof(body),
             "{\"QueueUrl\":\"%s\",\"MaxNumberOfMessages\":10,\"WaitTimeSeconds\":1,\"VisibilityTimeout\":30}", url);
    ns_http_response *resp = NULL;
    if ((rc = aws_client_json(s->client, "sqs", "AmazonSQS.ReceiveMessage", "1.0", body, &resp, NULL)) != NS_OK)
        return rc;
    ns_json *doc = s->host->json_parse(resp->body, resp->body_len);
    s->host->http_response_free(resp);
    const ns_json *messages = s->host->json_get(doc, "Messages");
    size_t n = s->host->json_size(messages);
    bool refused = false;
    bool stop = false;
    for (size_t i = 0; i < n && !stop; i++) {
        const ns_json *m = s->host->json_at(messages, i);
        const char *receipt = s->host->json_string(s->host->json_get(m, "ReceiptHandle"));
        const char *text = s->host->json_string(s->host->json_get(m, "Body"));
        if (!receipt)
            continue;
        aws_sqs_events events;
        bool not_json = false;
        char type[128];
        if (!aws_sqs_event_read(s->host, text, &events, &not_json, type, sizeof(type))) {
            const char *id = s->host->json_string(s->host->json_get(m, "MessageId"));
            ns_label fields[] = {{"queue", s->queue_name}, {"message", id ? id : ""}, {"detail_type", type}};
            s->host->log(s->ctx, not_json ? NS_LOG_WARN : NS_LOG_INFO,
                         not_json ? "aws interruption message is not JSON; deleted"
                                  : "aws interruption message about nothing nodesmith acts on; deleted",
                         fields, 3);
        }
        bool keep_message = false;
        for (size_t k = 0; k < events.n; k++) {
            ns_event *ev = &events.items[k].ev;
            if (kept(s, ev->id)) { /* its visibility ran out while kept: the newer receipt deletes it */
                keep(s, ev, receipt);
                keep_message = true;
                continue;
            }
            int found = provider_id_of(s, events.items[k].instance, ev->provider_id, sizeof(ev->provider_id));
            if (found != NS_OK && found != NS_ERR_NOT_FOUND) {
                rc = found; /* EC2 could not be asked: this message and the rest come back after their visibility */
                stop = keep_message = true;
                break;
            }
            if (found == NS_ERR_NOT_FOUND)
                continue; /* an instance EC2 no longer knows: nothing to act on */
            if (refused) {
                keep(s, ev, receipt); /* polling stopped: the rest are for the next poll */
                keep_message = true;
                continue;
            }
            int verdict = cb(cb_ctx, ev);
            if (verdict != 0) {
                keep(s, ev, receipt);
                keep_message = true;
                refused = true;
                rc = verdict;
            }
        }
        aws_sqs_events_free(&events);
        if (keep_message)
            continue;
        /* every event delivered, or about nothing nodesmith acts on (an instance EC2 no longer knows, a malformed
         * message) */
        int deleted = queue_call(s, "AmazonSQS.DeleteMessage", url, "ReceiptHandle", receipt);
        if (deleted != NS_OK) {
            rc = deleted;
            break;
        }
    }
    s->host->json_free(doc);
    return rc;
}

int aws_poll_events(void *state, ns_event_cb cb, void *cb_ctx)
{
    aws_state *s = state;
    int rc = s->queue_name[0] ? poll_queue(s, cb, cb_ctx) : NS_OK;
    return rc == NS_OK ? aws_instance_status_poll(s, cb, cb_ctx) : rc;
}
