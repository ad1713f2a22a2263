/* The MNS queue of ECS system events: ReceiveMessage (batch, a 1-second long poll) and DeleteMessage, signed with
 * MNS's own HMAC-SHA1 scheme; answers are XML (read with expat). */
#ifndef NS_ALI_MNS_H
#define NS_ALI_MNS_H

#include <nodesmith/provider.h>

#include "ali_credentials.h"

#define ALI_MNS_MAX_BATCH 16

typedef struct ali_mns_message {
    char id[128];
    char receipt[256];
    char *body; /* owned */
} ali_mns_message;

/* Receives up to 16 messages from queue_url ("https://<account>.mns.<region>.aliyuncs.com/queues/<name>"); *n = 0
 * when the queue is empty. Free the bodies with ali_mns_messages_free. */
int ali_mns_receive(const ns_host *h, ns_host_ctx *ctx, ali_credentials *cr, const char *queue_url,
                    ali_mns_message *out, size_t *n);
int ali_mns_delete(const ns_host *h, ns_host_ctx *ctx, ali_credentials *cr, const char *queue_url,
                   const char *receipt);
void ali_mns_messages_free(ali_mns_message *m, size_t n);

/* Pure: the messages of a ReceiveMessage answer. NS_OK or NS_ERR_INTERNAL (malformed XML). */
int ali_mns_parse(const char *xml, size_t len, ali_mns_message *out, size_t *n, char *err_code, size_t code_len);

#endif
