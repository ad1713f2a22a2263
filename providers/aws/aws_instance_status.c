/* Unhealthy instances from EC2 DescribeInstanceStatus, as Karpenter's instance status controller finds them
 * (aws/karpenter-provider-aws pkg/providers/instancestatus and pkg/controllers/interruption/
 * instancestatus_controller.go), with or without an interruption queue:
 *   - at most once per AWS_STATUS_INTERVAL_MS (InstanceStatusInterval), three paged calls, one per filter set
 *     (instance status impaired, system status impaired, a scheduled event of the five codes Karpenter names),
 *     because EC2 ANDs filters of different names; an instance is taken from the first call that returns it;
 *   - a check counts when its status is "failed" and it has been impaired for AWS_UNHEALTHY_THRESHOLD_MS
 *     (UnhealthyThreshold); a scheduled event counts at once;
 *   - only instances this cluster launched (its tags, asked with DescribeInstances) are reported: one event per
 *     instance and category, NS_EVENT_INSTANCE_UNHEALTHY for a failed instance or system check (Karpenter's
 *     ForcefulTermination) and NS_EVENT_SCHEDULED_MAINTENANCE for a scheduled event (CordonAndDrain);
 *   - an (instance, category) is delivered once while EC2 keeps reporting it, and forgotten when a poll no longer
 *     finds it, so a later impairment is delivered again: Karpenter's `seen` set. One the core refused stays
 *     undelivered and is offered again at the next poll_events, without asking EC2 again.
 * EC2 refusing the call (UnauthorizedOperation: the policy lacks ec2:DescribeInstanceStatus) is logged at ERROR and
 * not returned, as Karpenter does, so the interruption queue keeps working. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_instance_status_parse.h"
#include "aws_provider.h"
#include "aws_query.h"

#define AWS_STATUS_INTERVAL_MS 60000
#define AWS_FILTER_VALUES_MAX 200 /* EC2's limit on the values of one filter */

/* An instance DescribeInstanceStatus reported, with what of it counts. */
typedef struct candidate {
    char id[32];
    char zone[NS_ZONE_MAX];
    bool category[3];      /* by aws_status_category */
    char check[3][64];     /* the first counting check or event code of each category */
    int64_t since_ms;      /* the earliest impairment among the counting details */
    int64_t not_before_ms; /* the earliest start of a scheduled event, 0 when none gave one */
    bool owned;
} candidate;

typedef struct candidates {
    candidate *items;
    size_t n, cap;
} candidates;

static const char *const CATEGORY_NAMES[] = {"instance_status", "system_status", "event_status"};

static bool known(const candidates *c, const char *id)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->items[i].id, id) == 0)
            return true;
    return false;
}

/* Karpenter's selection of one instance's details: failed checks impaired for the threshold, and every scheduled
 * event (impaired since now). False when nothing counts. */
static bool select_details(const aws_instance_status_page *p, const aws_instance_status *st, int64_t now,
                           candidate *out)
{
    memset(out, 0, sizeof(*out));
    bool any = false;
    for (size_t k = 0; k < st->n_details; k++) {
        const aws_status_detail *d = &p->details[st->first_detail + k];
        bool event = d->category == AWS_STATUS_EVENT;
        if (!d->failed || (!event && now - d->impaired_since_ms < AWS_UNHEALTHY_THRESHOLD_MS))
            continue;
        int64_t since = event ? now : d->impaired_since_ms;
        if (!any || since < out->since_ms)
            out->since_ms = since;
        if (!out->category[d->category])
            snprintf(out->check[d->category], sizeof(out->check[0]), "%s", d->name);
        out->category[d->category] = true;
        if (event && d->not_before_ms > 0 && (!out->not_before_ms || d->not_before_ms < out->not_before_ms))
            out->not_before_ms = d->not_before_ms;
        any = true;
    }
    return any && aws_copy(out->id, sizeof(out->id), st->instance_id) &&
           aws_copy(out->zone, sizeof(out->zone), st->zone);
}

static int add_page(aws_state *s, const aws_instance_status_page *p, int64_t now, candidates *c)
{
    for (size_t i = 0; i < p->n; i++) {
        candidate cand;
        if (known(c, p->items[i].instance_id) || !select_details(p, &p->items[i], now, &cand))
            continue;
        if (c->n == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 16;
            candidate *grown = realloc(c->items, cap * sizeof(*grown));
            if (!grown)
                return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory reading instance statuses");
            c->items = grown;
            c->cap = cap;
        }
        c->items[c->n++] = cand;
    }
    return NS_OK;
}

/* Every page of one filter set. `api` receives EC2's error code. */
static int describe_status(aws_state *s, size_t set, int64_t now, candidates *c, aws_api_error *api)
{
    static const char *const CODES[] = {"instance-reboot", "system-reboot", "system-maintenance",
                                        "instance-retirement", "instance-stop"};
    char *token = NULL;
    int rc;
    do {
        aws_query q;
        aws_query_init(&q, "DescribeInstanceStatus", AWS_EC2_VERSION);
        if (set == 2) {
            aws_query_add(&q, "Filter.1.Name", "event.code");
            for (size_t i = 0; i < sizeof(CODES) / sizeof(CODES[0]); i++)
                aws_query_addf(&q, CODES[i], "Filter.1.Value.%zu", i + 1);
        } else {
            aws_query_add(&q, "Filter.1.Name", set == 0 ? "instance-status.status" : "system-status.status");
            aws_query_add(&q, "Filter.1.Value.1", "impaired");
        }
        aws_query_add(&q, "MaxResults", "1000");
        if (token)
            aws_query_add(&q, "NextToken", token);
        ns_http_response *resp = NULL;
        rc = aws_client_query(s->client, "ec2", "DescribeInstanceStatus", aws_query_body(&q), aws_query_len(&q),
                              &resp, api);
        aws_query_free(&q);
        free(token);
        token = NULL;
        if (rc != NS_OK)
            break;
        aws_instance_status_page page;
        char err[512];
        rc = aws_ec2_parse_instance_status(resp->body, resp->body_len, &page, err, sizeof(err));
        s->host->http_response_free(resp);
        if (rc != NS_OK)
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ec2 DescribeInstanceStatus: unexpected answer: %s", err);
        else
            rc = add_page(s, &page, now, c);
        if (rc == NS_OK && page.next_token && !(token = strdup(page.next_token)))
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory paging DescribeInstanceStatus");
        aws_instance_status_page_free(&page);
    } while (rc == NS_OK && token);
    free(token);
    return rc;
}

static void mark_owned(candidates *c, const char *id)
{
    for (size_t i = 0; id && i < c->n; i++)
        if (strcmp(c->items[i].id, id) == 0)
            c->items[i].owned = true;
}

/* Which candidates this cluster launched: DescribeInstances with the cluster's tags (list_instances' filters) and
 * the candidates' IDs as a filter, which, unlike InstanceId.N, does not fail on an instance gone meanwhile. */
static int find_owned(aws_state *s, candidates *c, size_t from, size_t count)
{
    char *token = NULL;
    int rc;
    do {
        aws_query q;
        aws_query_init(&q, "DescribeInstances", AWS_EC2_VERSION);
        aws_query_cluster_instances(&q, s);
        aws_query_add(&q, "Filter.3.Name", "instance-id");
        for (size_t i = 0; i < count; i++)
            aws_query_addf(&q, c->items[from + i].id, "Filter.3.Value.%zu", i + 1);
        aws_query_add(&q, "MaxResults", "1000");
        if (token)
            aws_query_add(&q, "NextToken", token);
        ns_http_response *resp = NULL;
        rc = aws_client_query(s->client, "ec2", "DescribeInstances", aws_query_body(&q), aws_query_len(&q), &resp,
                              NULL);
        aws_query_free(&q);
        free(token);
        token = NULL;
        if (rc != NS_OK)
            break;
        aws_ec2_instance_page page;
        char err[256];
        rc = aws_ec2_parse_instances(resp->body, resp->body_len, &page, err, sizeof(err));
        s->host->http_response_free(resp);
        if (rc != NS_OK)
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL,
                          "ec2 DescribeInstances of impaired instances: unexpected answer: %s", err);
        for (size_t i = 0; rc == NS_OK && i < page.n; i++)
            mark_owned(c, page.items[i].instance_id);
        if (rc == NS_OK && page.next_token && !(token = strdup(page.next_token)))
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory paging DescribeInstances");
        aws_ec2_instance_page_free(&page);
    } while (rc == NS_OK && token);
    free(token);
    return rc;
}

static void fill_event(const candidate *c, aws_status_category cat, int64_t now, ns_event *ev)
{
    memset(ev, 0, sizeof(*ev));
    ev->struct_size = sizeof(*ev);
    ev->kind = cat == AWS_STATUS_EVENT ? NS_EVENT_SCHEDULED_MAINTENANCE : NS_EVENT_INSTANCE_UNHEALTHY;
    snprintf(ev->id, sizeof(ev->id), "ec2-status/%s/%s/%lld", c->id, CATEGORY_NAMES[cat], (long long)c->since_ms);
    snprintf(ev->provider_id, sizeof(ev->provider_id), "aws:///%s/%s", c->zone, c->id);
    ev->time_ms = c->since_ms > 0 ? c->since_ms : now;
    ev->deadline_ms = cat == AWS_STATUS_EVENT ? c->not_before_ms : 0; /* an impaired instance is ended at once */
    snprintf(ev->detail, sizeof(ev->detail), "EC2 DescribeInstanceStatus: %s %s %s", CATEGORY_NAMES[cat],
             cat == AWS_STATUS_EVENT ? "scheduled event" : "check failed", c->check[cat]);
}

static bool was_delivered(const aws_state *s, const char *instance, aws_status_category cat)
{
    for (size_t i = 0; i < s->n_health; i++)
        if (s->health[i].category == (int)cat && strcmp(s->health[i].instance_id, instance) == 0)
            return s->health[i].delivered;
    return false;
}

/* Replaces the list of unhealthy instances with this poll's, keeping what was delivered of those still reported. */
static int replace_entries(aws_state *s, const candidates *c, int64_t now)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        for (int cat = 0; cat < 3; cat++)
            n += c->items[i].owned && c->items[i].category[cat];
    aws_health_entry *list = n ? calloc(n, sizeof(*list)) : NULL;
    if (n && !list)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory keeping %zu unhealthy instances", n);
    pthread_mutex_lock(&s->lock);
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++)
        for (int cat = 0; cat < 3; cat++) {
            if (!c->items[i].owned || !c->items[i].category[cat])
                continue;
            aws_health_entry *e = &list[k++];
            fill_event(&c->items[i], (aws_status_category)cat, now, &e->event);
            snprintf(e->instance_id, sizeof(e->instance_id), "%s", c->items[i].id);
            e->category = cat;
            e->delivered = was_delivered(s, e->instance_id, (aws_status_category)cat);
        }
    free(s->health);
    s->health = list;
    s->n_health = n;
    s->health_polled_ms = now;
    pthread_mutex_unlock(&s->lock);
    return NS_OK;
}

static int refresh(aws_state *s, int64_t now)
{
    candidates c = {0};
    int rc = NS_OK;
    aws_api_error api = {0};
    for (size_t set = 0; set < 3 && rc == NS_OK; set++)
        rc = describe_status(s, set, now, &c, &api);
    if (rc == NS_ERR_UNAUTHORIZED && strcmp(api.code, "UnauthorizedOperation") == 0) {
        ns_label fields[] = {{"code", api.code}, {"message", api.message}};
        s->host->log(s->ctx, NS_LOG_ERROR, "aws ec2:DescribeInstanceStatus is not allowed; grant it to the "
                                           "controller's role to detect impaired instances", fields, 2);
        pthread_mutex_lock(&s->lock);
        s->health_polled_ms = now; /* asked again after the interval, not at every poll */
        pthread_mutex_unlock(&s->lock);
        free(c.items);
        return NS_OK;
    }
    for (size_t from = 0; rc == NS_OK && from < c.n; from += AWS_FILTER_VALUES_MAX)
        rc = find_owned(s, &c, from, c.n - from < AWS_FILTER_VALUES_MAX ? c.n - from : AWS_FILTER_VALUES_MAX);
    if (rc == NS_OK)
        rc = replace_entries(s, &c, now);
    free(c.items);
    return rc; /* on failure the time is not recorded: the next poll asks again */
}

/* The next undelivered entry's event, copied out so the callback runs without the lock. */
static bool next_undelivered(aws_state *s, ns_event *ev)
{
    bool found = false;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_health && !found; i++)
        if (!s->health[i].delivered) {
            *ev = s->health[i].event;
            found = true;
        }
    pthread_mutex_unlock(&s->lock);
    return found;
}

static void mark_delivered(aws_state *s, const ns_event *ev)
{
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_health; i++)
        if (strcmp(s->health[i].event.id, ev->id) == 0)
            s->health[i].delivered = true;
    pthread_mutex_unlock(&s->lock);
    ns_label fields[] = {{"provider_id", ev->provider_id}, {"event", ev->id}, {"detail", ev->detail}};
    s->host->log(s->ctx, NS_LOG_INFO, "aws detected an unhealthy instance owned by the cluster", fields, 3);
}

int aws_instance_status_poll(aws_state *s, ns_event_cb cb, void *cb_ctx)
{
    int64_t now = s->host->now_ms(s->ctx);
    pthread_mutex_lock(&s->lock);
    bool due = !s->health_polled_ms || now - s->health_polled_ms >= AWS_STATUS_INTERVAL_MS;
    pthread_mutex_unlock(&s->lock);
    int rc = due ? refresh(s, now) : NS_OK;
    ns_event ev;
    while (rc == NS_OK && next_undelivered(s, &ev)) {
        int verdict = cb(cb_ctx, &ev); /* never with the lock held: the callback may call back in */
        if (verdict != 0)
            return verdict;
        mark_delivered(s, &ev);
    }
    return rc;
}

void aws_instance_status_ask_next_poll(aws_state *s)
{
    pthread_mutex_lock(&s->lock);
    s->health_polled_ms = 0;
    pthread_mutex_unlock(&s->lock);
}
