/*
 * EventBridge messages from the interruption queue, read into the core's events as Karpenter's interruption controller
 * reads them: spot interruption warnings, rebalance recommendations, instance state changes, capacity reservation
 * interruption warnings and AWS Health scheduled changes (one event per affected instance). Only the host's JSON upcalls are used, so the reader is fuzzed alone
 * (fuzz/fuzz_sqs_event.c); aws_events.c does the SQS calls around it.
 */
#ifndef NS_AWS_SQS_EVENT_H
#define NS_AWS_SQS_EVENT_H

#include <stdbool.h>

#include <nodesmith/provider.h>

/* One event of a message and the instance it concerns ("i-..."); ev.provider_id is left empty (it needs EC2). */
typedef struct aws_sqs_event {
    ns_event ev;
    char instance[64];
} aws_sqs_event;

typedef struct aws_sqs_events {
    aws_sqs_event *items; /* owned; aws_sqs_events_free */
    size_t n;
} aws_sqs_events;

/* Reads one message body (EventBridge JSON). False, with nothing allocated, when the body is not JSON (*not_json set)
 * or not an event nodesmith acts on; true with out->n >= 1 events otherwise. `detail_type` receives the message's
 * detail-type ("" when it has none) for the log line of an ignored message. */
bool aws_sqs_event_read(const ns_host *h, const char *body, aws_sqs_events *out, bool *not_json, char *detail_type,
                        size_t detail_type_len);
void aws_sqs_events_free(aws_sqs_events *e); /* accepts an empty one */

#endif
