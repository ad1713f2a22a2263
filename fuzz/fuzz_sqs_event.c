/* SQS interruption messages: an EventBridge message body (spot interruption, rebalance, state change, AWS Health
 * scheduled change) read by aws.so into the core's events, through the tests' stand-in host table. */
#include <stdlib.h>
#include <string.h>

#include "aws_sqs_event.h"
#include "fake_host.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fake_host host;
    fake_host_init(&host);
    char *text = fuzz_strndup(data, size);
    aws_sqs_events events;
    bool not_json = false;
    char type[128];
    bool relevant = aws_sqs_event_read(&host.table, text, &events, &not_json, type, sizeof(type));
    /* what aws_events.c relies on: an ignored message holds no events, a relevant one only named instances */
    if (!relevant && (events.n || events.items))
        abort();
    if (relevant && events.n == 0)
        abort();
    for (size_t i = 0; i < events.n; i++)
        if (strncmp(events.items[i].instance, "i-", 2) != 0 || !events.items[i].ev.id[0] ||
            events.items[i].ev.provider_id[0])
            abort();
    aws_sqs_events_free(&events);
    free(text);
    return 0;
}
