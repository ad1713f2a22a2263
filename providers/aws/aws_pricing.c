/* On-demand prices: the Pricing API's GetProducts (Linux, on-demand market, no pre-installed software), with the
 * filters Karpenter uses: shared tenancy in the "Compute Instance" family, and bare-metal types from their own family
 * ("Compute Instance (bare metal)", dedicated tenancy), so that *.metal types have on-demand prices too. Cached for
 * pricing_ttl on the host clock. When the API cannot be reached and has never answered, the built-in table and the
 * estimate of aws_pricing_builtin.h stand in; when it answered before, its last prices stay in use. Either way the
 * next catalog refresh asks again. GovCloud regions have no Pricing API: there the built-in table is the source and
 * the API is never called (a commercial Pricing endpoint would refuse GovCloud credentials anyway). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_parse_util.h"
#include "aws_pricing_builtin.h"
#include "aws_provider.h"
#include "prov_log.h"

void aws_price_list_free(aws_price_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i].name);
    free(l->items);
    free(l);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const aws_price *)a)->name, ((const aws_price *)b)->name);
}

/* The hourly price in one Pricing API product document ("terms.OnDemand.*.priceDimensions.*.pricePerUnit"). */
static double product_price(aws_state *s, const ns_json *product)
{
    const ns_json *terms = s->host->json_get(s->host->json_get(product, "terms"), "OnDemand");
    for (size_t i = 0; i < s->host->json_size(terms); i++) {
        const ns_json *dims = s->host->json_get(s->host->json_at(terms, i), "priceDimensions");
        for (size_t k = 0; k < s->host->json_size(dims); k++) {
            const ns_json *per_unit = s->host->json_get(s->host->json_at(dims, k), "pricePerUnit");
            const char *usd = s->host->json_string(s->host->json_get(per_unit, "USD"));
            const char *cny = s->host->json_string(s->host->json_get(per_unit, "CNY"));
            double v = aws_parse_double(usd ? usd : cny, -1);
            if (v > 0)
                return v;
        }
    }
    return -1;
}

static int add_price(aws_price_list *l, size_t *cap, const char *name, double price)
{
    if (l->n == *cap) {
        size_t grown = *cap ? *cap * 2 : 512;
        aws_price *items = realloc(l->items, grown * sizeof(*items));
        if (!items)
            return NS_ERR_INTERNAL;
        l->items = items;
        *cap = grown;
    }
    char *copy = strdup(name);
    if (!copy)
        return NS_ERR_INTERNAL;
    l->items[l->n++] = (aws_price){copy, price};
    return NS_OK;
}

/* The two product families on-demand prices come from, each with its tenancy. */
typedef struct price_family {
    const char *product_family;
    const char *tenancy;
} price_family;

static const price_family FAMILIES[] = {{"Compute Instance", "Shared"}, {"Compute Instance (bare metal)", "Dedicated"}};

/* One page of GetProducts into l; *next gets the page token (malloc'd), or NULL on the last page (no token, or an
 * empty one). */
static int fetch_page(aws_state *s, const price_family *f, const char *token, aws_price_list *l, size_t *cap,
                      char **next)
{
    char body[1536];
    *next = NULL;
    int n = snprintf(body, sizeof(body),
                     "{\"ServiceCode\":\"AmazonEC2\",\"FormatVersion\":\"aws_v1\",\"MaxResults\":100,\"Filters\":["
                     "{\"Type\":\"TERM_MATCH\",\"Field\":\"regionCode\",\"Value\":\"%s\"},"
                     "{\"Type\":\"TERM_MATCH\",\"Field\":\"serviceCode\",\"Value\":\"AmazonEC2\"},"
                     "{\"Type\":\"TERM_MATCH\",\"Field\":\"preInstalledSw\",\"Value\":\"NA\"},"
                     "{\"Type\":\"TERM_MATCH\",\"Field\":\"operatingSystem\",\"Value\":\"Linux\"},"
                     "{\"Type\":\"TERM_MATCH\",\"Field\":\"capacitystatus\",\"Value\":\"Used\"},"
                     "{\"Type\":\"TERM_MATCH\",\"Field\":\"marketoption\",\"Value\":\"OnDemand\"},"
                     "{\"Type\":\"TERM_MATCH\",\"Field\":\"tenancy\",\"Value\":\"%s\"},"
                     "{\"Type\":\"TERM_MATCH\",\"Field\":\"productFamily\",\"Value\":\"%s\"}]%s%s%s}",
                     s->region, f->tenancy, f->product_family, token ? ",\"NextToken\":\"" : "", token ? token : "",
                     token ? "\"" : "");
    if (n < 0 || (size_t)n >= sizeof(body))
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "pricing GetProducts: the page token is too long");
    ns_http_response *resp = NULL;
    int rc = aws_client_json(s->client, "pricing", "AWSPriceListService.GetProducts", "1.1", body, &resp, NULL);
    if (rc != NS_OK)
        return rc;
    ns_json *doc = s->host->json_parse(resp->body, resp->body_len);
    s->host->http_response_free(resp);
    const ns_json *list = s->host->json_get(doc, "PriceList");
    if (!doc || s->host->json_type(list) != NS_JSON_ARRAY) {
        s->host->json_free(doc);
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "pricing GetProducts: the answer has no PriceList");
    }
    for (size_t i = 0; i < s->host->json_size(list) && rc == NS_OK; i++) {
        const char *text = s->host->json_string(s->host->json_at(list, i));
        ns_json *product = text ? s->host->json_parse(text, strlen(text)) : NULL;
        const ns_json *attrs = s->host->json_get(s->host->json_get(product, "product"), "attributes");
        const char *type = s->host->json_string(s->host->json_get(attrs, "instanceType"));
        double price = product ? product_price(s, product) : -1;
        if (type && price > 0 && add_price(l, cap, type, price) != NS_OK)
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory reading on-demand prices");
        s->host->json_free(product);
    }
    const char *token_next = s->host->json_string(s->host->json_get(doc, "NextToken"));
    if (rc == NS_OK && token && token_next && strcmp(token, token_next) == 0)
        rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL,
                      "pricing GetProducts (%s): the answer repeats the page token it was asked for; stopping instead "
                      "of reading the same page forever",
                      f->product_family);
    else if (rc == NS_OK && token_next && token_next[0] && !(*next = strdup(token_next)))
        rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory reading on-demand prices");
    s->host->json_free(doc);
    return rc;
}

static int fetch_prices(aws_state *s, aws_price_list **out)
{
    aws_price_list *l = calloc(1, sizeof(*l));
    if (!l)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory reading on-demand prices");
    size_t cap = 0;
    int rc = NS_OK;
    for (size_t f = 0; f < sizeof(FAMILIES) / sizeof(FAMILIES[0]) && rc == NS_OK; f++) {
        size_t before = l->n;
        char *token = NULL;
        do {
            char *next = NULL;
            rc = fetch_page(s, &FAMILIES[f], token, l, &cap, &next);
            free(token);
            token = next;
        } while (rc == NS_OK && token);
        free(token);
        /* As Karpenter: a family without a single price means the answer is not one to trust. */
        if (rc == NS_OK && l->n == before)
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "pricing GetProducts: no on-demand price in %s for the "
                          "product family \"%s\"", s->region, FAMILIES[f].product_family);
    }
    if (rc != NS_OK) {
        aws_price_list_free(l);
        return rc;
    }
    qsort(l->items, l->n, sizeof(*l->items), by_name);
    l->fetched_ms = s->host->now_ms(s->ctx);
    *out = l;
    return NS_OK;
}

static bool is_govcloud(const char *region)
{
    return strncmp(region, "us-gov-", 7) == 0;
}

void aws_pricing_refresh(aws_state *s)
{
    if (is_govcloud(s->region)) {
        pthread_mutex_lock(&s->lock);
        bool first = !s->pricing_builtin_logged;
        s->pricing_builtin_logged = true;
        pthread_mutex_unlock(&s->lock);
        if (first) {
            ns_label fields[] = {{"region", s->region}};
            s->host->log(s->ctx, NS_LOG_INFO,
                         "pricing APIs aren't available in AWS GovCloud regions; on-demand prices come from the "
                         "built-in table",
                         fields, 1);
        }
        return;
    }
    int64_t now = s->host->now_ms(s->ctx);
    pthread_mutex_lock(&s->lock);
    bool due = !s->prices || s->pricing_unreachable || now - s->prices->fetched_ms >= s->pricing_ttl_ms;
    pthread_mutex_unlock(&s->lock);
    if (!due)
        return;
    aws_price_list *fresh = NULL;
    int rc = fetch_prices(s, &fresh);
    pthread_mutex_lock(&s->lock);
    aws_price_list *old = NULL;
    bool had_prices = s->prices != NULL;
    if (rc == NS_OK) {
        old = s->prices;
        s->prices = fresh;
    }
    s->pricing_unreachable = rc != NS_OK;
    pthread_mutex_unlock(&s->lock);
    aws_price_list_free(old);
    if (rc == NS_OK) {
        ns_log_field fields[] = {prov_log_int("types", (int64_t)fresh->n), prov_log_str("region", s->region)};
        prov_log(s->host, s->ctx, NS_LOG_INFO, "aws on-demand prices refreshed from the Pricing API", fields, 2);
        return;
    }
    ns_label fields[] = {{"region", s->region},
                         {"using", had_prices ? "the last prices the Pricing API gave" : "built-in prices and estimates"}};
    s->host->log(s->ctx, NS_LOG_WARN, "aws Pricing API unreachable; on-demand prices fall back", fields, 2);
}

void aws_pricing_apply(aws_state *s, aws_catalog *c)
{
    pthread_mutex_lock(&s->lock);
    const aws_price_list *l = s->prices;
    for (size_t i = 0; i < c->n_entries; i++) {
        aws_catalog_entry *e = &c->entries[i];
        if (l) {
            aws_price key = {(char *)e->type->name, 0};
            const aws_price *p = bsearch(&key, l->items, l->n, sizeof(*l->items), by_name);
            e->on_demand = p ? p->usd_per_hour : -1;
            e->on_demand_estimated = false;
            continue;
        }
        double builtin = aws_builtin_on_demand(s->region, e->type->name);
        e->on_demand = builtin >= 0 ? builtin : aws_estimate_on_demand(s->region, e->type);
        e->on_demand_estimated = true;
    }
    pthread_mutex_unlock(&s->lock);
}
