/* Prices from the public Retail Prices API (unauthenticated; paged by NextPageLink): Linux consumption meters of
 * Virtual Machines in the location, on-demand and spot ("... Spot" SKU names), skipping Windows products and Low
 * Priority meters. Cached for pricing_ttl; while the API has never answered, the built-in table stands in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "azure_pricing_builtin.h"
#include "azure_provider.h"

#define MAX_PAGES 200

void az_price_list_free(az_price_list *l)
{
    if (!l)
        return;
    free(l->items);
    free(l);
}

static az_price *slot(az_price_list *l, size_t *cap, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].name, name) == 0)
            return &l->items[i];
    if (l->n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        az_price *grown = realloc(l->items, c * sizeof(*grown));
        if (!grown)
            return NULL;
        l->items = grown;
        *cap = c;
    }
    az_price *p = &l->items[l->n++];
    snprintf(p->name, sizeof(p->name), "%s", name);
    p->on_demand = p->spot = -1;
    return p;
}

static int take_item(const ns_host *h, const ns_json *it, az_price_list *l, size_t *cap)
{
    const char *sku = h->json_string(h->json_get(it, "armSkuName"));
    const char *sku_name = h->json_string(h->json_get(it, "skuName"));
    const char *meter = h->json_string(h->json_get(it, "meterName"));
    const char *product = h->json_string(h->json_get(it, "productName"));
    const char *type = h->json_string(h->json_get(it, "type"));
    const ns_json *price = h->json_get(it, "retailPrice");
    if (!sku || !sku_name || !type || strcmp(type, "Consumption") != 0 || h->json_type(price) != NS_JSON_NUMBER ||
        strlen(sku) >= 64 || (product && strstr(product, "Windows")) || (meter && strstr(meter, "Low Priority")))
        return NS_OK;
    size_t n = strlen(sku_name);
    bool spot = n > 5 && strcmp(sku_name + n - 5, " Spot") == 0;
    az_price *p = slot(l, cap, sku);
    if (!p)
        return -1;
    if (spot)
        p->spot = h->json_number(price);
    else
        p->on_demand = h->json_number(price);
    return NS_OK;
}

static int fetch(az_state *s, az_price_list **out)
{
    const ns_host *h = s->host;
    char *url = malloc(4096);
    az_price_list *l = calloc(1, sizeof(*l));
    size_t cap = 0;
    int rc = NS_OK;
    if (!url || !l) {
        rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "out of memory reading prices");
        goto done;
    }
    snprintf(url, 4096, "%s/api/retail/prices?api-version=%s&$filter=serviceName%%20eq%%20%%27Virtual%%20Machines%%27"
             "%%20and%%20priceType%%20eq%%20%%27Consumption%%27%%20and%%20currencyCode%%20eq%%20%%27USD%%27%%20and"
             "%%20armRegionName%%20eq%%20%%27%s%%27", s->prices, AZ_API_PRICES, s->location);
    for (int page = 0; url[0]; page++) {
        if (page == MAX_PAGES) {
            rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "Retail Prices: more than %d pages", MAX_PAGES);
            goto done;
        }
        ns_http_header headers[] = {{"Accept", "application/json"}};
        ns_http_request req = {.struct_size = sizeof(req), .method = "GET", .url = url, .headers = headers,
                               .n_headers = 1, .timeout_ms = s->timeout_ms, .max_retries = -1};
        ns_http_response *r = NULL;
        if ((rc = h->http_request(s->ctx, &req, &r)) < 0)
            goto done;
        ns_json *doc = r->status == 200 ? h->json_parse(r->body, r->body_len) : NULL;
        const ns_json *items = h->json_get(doc, "Items");
        if (!doc || h->json_type(items) != NS_JSON_ARRAY) {
            rc = NS_ERROR(h, s->ctx, NS_ERR_THROTTLED, "Retail Prices answered HTTP %ld without an Items list",
                          r->status);
            h->json_free(doc);
            h->http_response_free(r);
            goto done;
        }
        for (size_t i = 0; rc == NS_OK && i < h->json_size(items); i++)
            if (take_item(h, h->json_at(items, i), l, &cap) < 0)
                rc = NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "out of memory reading prices");
        const char *next = h->json_string(h->json_get(doc, "NextPageLink"));
        bool same_host = next && strncmp(next, s->prices, strlen(s->prices)) == 0;
        snprintf(url, 4096, "%s", same_host ? next : "");
        h->json_free(doc);
        h->http_response_free(r);
        if (rc < 0)
            goto done;
    }
    l->fetched_ms = h->now_ms(s->ctx);
    *out = l;
    l = NULL;
done:
    free(url);
    az_price_list_free(l);
    return rc;
}

void az_pricing_refresh(az_state *s)
{
    if (!s->prices[0])
        return;
    pthread_mutex_lock(&s->lock);
    bool due = !s->price_list || s->host->now_ms(s->ctx) - s->price_list->fetched_ms >= s->pricing_ttl_ms;
    pthread_mutex_unlock(&s->lock);
    if (!due)
        return;
    az_price_list *fresh = NULL;
    if (fetch(s, &fresh) < 0) {
        ns_label fields[] = {{"location", s->location}};
        s->host->log(s->ctx, NS_LOG_WARN, "Retail Prices API unreachable; using the built-in prices", fields, 1);
        return;
    }
    pthread_mutex_lock(&s->lock);
    az_price_list_free(s->price_list);
    s->price_list = fresh;
    pthread_mutex_unlock(&s->lock);
}

void az_price_of(az_state *s, const char *sku, double *on_demand, double *spot)
{
    *on_demand = *spot = -1;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; s->price_list && i < s->price_list->n; i++)
        if (strcmp(s->price_list->items[i].name, sku) == 0) {
            *on_demand = s->price_list->items[i].on_demand;
            *spot = s->price_list->items[i].spot;
            break;
        }
    const az_sku *k = az_catalog_find(az_catalog_current(s), sku);
    double estimate = k ? az_estimated_price(k->vcpus, k->memory_gib) : 0;
    pthread_mutex_unlock(&s->lock);
    if (*on_demand < 0)
        *on_demand = az_builtin_price(sku);
    if (*on_demand < 0)
        *on_demand = estimate;
    if (*spot < 0)
        *spot = *on_demand * AZ_BUILTIN_SPOT_FRACTION;
}
