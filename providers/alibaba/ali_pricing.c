/* Prices: DescribePrice quotes each type's pay-as-you-go price (cached for pricing_ttl, across catalogs), and
 * DescribeSpotPriceHistory gives the newest spot price of each type per zone. While DescribePrice fails, the
 * built-in table stands in (marked estimated); a zone without a spot price is priced at the on-demand price. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ali_json.h"
#include "ali_provider.h"

static ali_price *cached(ali_state *s, const char *type)
{
    for (size_t i = 0; i < s->n_prices; i++)
        if (strcmp(s->prices[i].type, type) == 0)
            return &s->prices[i];
    return NULL;
}

static void remember(ali_state *s, const char *type, double price, int64_t now)
{
    pthread_mutex_lock(&s->lock);
    ali_price *p = cached(s, type);
    if (!p) {
        ali_price *grown = realloc(s->prices, (s->n_prices + 1) * sizeof(*grown));
        if (grown) {
            s->prices = grown;
            p = &s->prices[s->n_prices++];
            ali_copy(p->type, sizeof(p->type), type);
        }
    }
    if (p) {
        p->price = price;
        p->fetched_ms = now;
    }
    pthread_mutex_unlock(&s->lock);
}

/* DescribePrice for one type: the instance's own trade price (the system disk's share left out). */
static int describe_price(ali_state *s, const ali_type *t, double *price)
{
    const ns_host *h = s->host;
    ali_params p = {0};
    ali_params_add(&p, "ResourceType", "instance");
    ali_params_add(&p, "InstanceType", t->name);
    ali_params_add(&p, "PriceUnit", "Hour");
    ali_params_add(&p, "InstanceNetworkType", "vpc");
    ali_params_add(&p, "IoOptimized", "optimized");
    ns_json *doc = NULL;
    int rc = ali_rpc(s->client, ALI_ECS, "DescribePrice", &p, &doc, NULL);
    ali_params_free(&p);
    if (rc < 0)
        return rc;
    const ns_json *pr = h->json_get(h->json_get(doc, "PriceInfo"), "Price");
    double total = ali_json_num(h, pr, "TradePrice", -1);
    const ns_json *details = ali_json_list(h, pr, "DetailInfos", "DetailInfo");
    for (size_t i = 0; i < h->json_size(details); i++) {
        const ns_json *d = h->json_at(details, i);
        const char *res = ali_json_str(h, d, "Resource");
        if (res && strcmp(res, "instanceType") == 0)
            total = ali_json_num(h, d, "TradePrice", total);
    }
    h->json_free(doc);
    if (total < 0)
        return NS_ERROR(h, s->ctx, NS_ERR_INTERNAL, "ecs DescribePrice %s: the answer has no PriceInfo.Price.TradePrice",
                        t->name);
    *price = total;
    return NS_OK;
}

static void spot_prices(ali_state *s, ali_catalog *c, ali_entry *e, int64_t now)
{
    const ns_host *h = s->host;
    char start[21];
    ali_iso8601(now / 1000 - 3600, start);
    ali_params p = {0};
    ali_params_add(&p, "InstanceType", e->t.name);
    ali_params_add(&p, "NetworkType", "vpc");
    ali_params_add(&p, "OSType", "linux");
    ali_params_add(&p, "StartTime", start);
    ns_json *doc = NULL;
    int rc = ali_rpc(s->client, ALI_ECS, "DescribeSpotPriceHistory", &p, &doc, NULL);
    ali_params_free(&p);
    if (rc < 0) {
        ns_label f[] = {{"instance-type", e->t.name}};
        h->log(s->ctx, NS_LOG_WARN, "spot prices unavailable, using on-demand prices", f, 1);
        return;
    }
    int64_t stamp[ALI_MAX_ZONES] = {0};
    const ns_json *list = ali_json_list(h, doc, "SpotPrices", "SpotPriceType");
    for (size_t i = 0; i < h->json_size(list); i++) {
        const ns_json *sp = h->json_at(list, i);
        const char *zone = ali_json_str(h, sp, "ZoneId");
        int z = zone ? ali_catalog_zone_index(c, zone) : -1;
        double price = ali_json_num(h, sp, "SpotPrice", -1);
        int64_t when = ali_parse_iso8601_ms(ali_json_str(h, sp, "Timestamp"));
        if (z >= 0 && price >= 0 && (e->spot[z] < 0 || when >= stamp[z])) {
            e->spot[z] = price;
            stamp[z] = when;
        }
    }
    h->json_free(doc);
}

void ali_pricing_apply(ali_state *s, ali_catalog *c)
{
    int64_t now = s->host->now_ms(s->ctx);
    bool describe_failed = false;
    for (size_t i = 0; i < c->n; i++) {
        ali_entry *e = &c->entries[i];
        if (!e->od_zones && !e->spot_zones)
            continue;
        pthread_mutex_lock(&s->lock);
        ali_price *p = cached(s, e->t.name);
        bool fresh = p && now - p->fetched_ms < s->pricing_ttl_ms;
        double price = p ? p->price : -1;
        pthread_mutex_unlock(&s->lock);
        if (!fresh && !describe_failed) {
            double quoted = -1;
            if (describe_price(s, &e->t, &quoted) == NS_OK) {
                remember(s, e->t.name, quoted, now);
                price = quoted;
            } else {
                /* one failure is enough to stop asking until the next catalog: the rate limit is low */
                describe_failed = true;
                ns_label f[] = {{"instance-type", e->t.name}};
                s->host->log(s->ctx, NS_LOG_WARN, "DescribePrice failed, using built-in on-demand prices", f, 1);
            }
        }
        e->on_demand = price;
        e->estimated = price < 0;
        if (price < 0)
            e->on_demand = ali_pricing_builtin(e->t.family, e->t.vcpu, e->t.memory_gib, e->t.gpu_count);
        if (e->spot_zones)
            spot_prices(s, c, e, now);
    }
}
