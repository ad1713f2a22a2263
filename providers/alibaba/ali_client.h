/*
 * Calls to Alibaba Cloud OpenAPI products, signed with ACS3-HMAC-SHA256: ECS and VPC in RPC style (POST /, every
 * parameter in the query string), ACK (CS) in ROA style (a real path, a JSON body). Every call is retried on
 * throttling, 5xx answers and lost answers (exponential backoff with full jitter on the host's clock), re-signed for
 * each attempt with fresh credentials, and its error is reported with host->error in a category (ali_api_category).
 */
#ifndef NS_ALI_CLIENT_H
#define NS_ALI_CLIENT_H

#include <nodesmith/provider.h>

#include "ali_credentials.h"
#include "ali_sign.h"

typedef enum ali_product { ALI_ECS = 0, ALI_VPC, ALI_CS, ALI_N_PRODUCTS } ali_product;

typedef struct ali_client ali_client;

typedef struct ali_client_config {
    const ns_host *host;
    ns_host_ctx *ctx;
    ali_credentials *credentials; /* borrowed */
    const char *region;
    const char *endpoint_url; /* NULL = each product's public endpoint; else every product at this URL (tests) */
    bool vpc_network;         /* the VPC endpoints (ecs-vpc.<region>...), for controllers without Internet access */
    int max_attempts;
    int64_t timeout_ms;
} ali_client_config;

/* The API's own error code of a failed call ("OperationDenied.NoStock"), for callers that act on one. */
typedef struct ali_api_error {
    char code[96];
    long status; /* 0 = no answer */
} ali_api_error;

int ali_client_new(const ali_client_config *cfg, ali_client **out);
void ali_client_free(ali_client *c); /* accepts NULL */
const char *ali_client_endpoint(const ali_client *c, ali_product p);

/* One RPC action of ECS or VPC with `params` (the action's own parameters; RegionId is added when absent). On
 * NS_OK, *out is the answer (free with host->json_free). err may be NULL. */
int ali_rpc(ali_client *c, ali_product p, const char *action, ali_params *params, ns_json **out, ali_api_error *err);
/* One ROA action of ACK: method, path ("/clusters/c123/attachscript"), query parameters (may be NULL) and a JSON
 * body or NULL. */
int ali_roa(ali_client *c, const char *action, const char *method, const char *path, ali_params *query,
            const char *body, ns_json **out, ali_api_error *err);

/* The category an API error code stands for (throttling and 5xx: NS_ERR_THROTTLED, and so on). Pure. */
ns_err ali_api_category(const char *code, long status);

#endif
