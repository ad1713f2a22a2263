/* Launch templates no launch uses any more are deleted, as Karpenter's launch-template provider does: it remembers
 * each template it ensures for a minute, hydrates that cache at start with the cluster's templates, and deletes a
 * template when its entry is evicted unused. A node class that changed leaves its old templates unused, and one that
 * was deleted leaves all of its own: both go at the first sweep a TTL after their last launch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_provider.h"
#include "aws_query.h"

/* The cluster's launch templates (tagged with it when created): names and IDs copied out of the answers. */
typedef struct listed {
    aws_template_entry *items; /* used_ms unused here */
    size_t n, cap;
} listed;

static bool add_listed(listed *l, const char *name, const char *id)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        aws_template_entry *more = realloc(l->items, cap * sizeof(*more));
        if (!more)
            return false;
        l->items = more;
        l->cap = cap;
    }
    aws_template_entry *e = &l->items[l->n];
    if (!aws_copy(e->name, sizeof(e->name), name) || !aws_copy(e->id, sizeof(e->id), id))
        return true; /* not one of ours: our names and EC2's IDs fit */
    l->n++;
    return true;
}

/* DescribeLaunchTemplates filtered on the cluster's tag, every page. NS_OK, or the error with *why filled. */
static int list_cluster_templates(aws_state *s, listed *out, char *why, size_t why_len)
{
    char *token = NULL;
    int rc = NS_OK;
    do {
        aws_query q;
        aws_query_init(&q, "DescribeLaunchTemplates", AWS_EC2_VERSION);
        aws_query_add(&q, "Filter.1.Name", "tag:" AWS_TAG_CLUSTER_LT);
        aws_query_add(&q, "Filter.1.Value.1", s->cluster);
        aws_query_add(&q, "MaxResults", "200"); /* EC2's cap for this call */
        if (token)
            aws_query_add(&q, "NextToken", token);
        ns_http_response *resp = NULL;
        aws_api_error e = {0};
        rc = aws_client_query(s->client, "ec2", "DescribeLaunchTemplates", aws_query_body(&q), aws_query_len(&q),
                              &resp, &e);
        aws_query_free(&q);
        free(token);
        token = NULL;
        if (rc != NS_OK) {
            snprintf(why, why_len, "DescribeLaunchTemplates failed: %s %.300s", e.code[0] ? e.code : "(no answer)",
                     e.message);
            break;
        }
        aws_ec2_launch_template_page page;
        rc = aws_ec2_parse_launch_templates(resp->body, resp->body_len, &page, why, why_len);
        s->host->http_response_free(resp);
        for (size_t i = 0; i < page.n && rc == NS_OK; i++)
            if (page.items[i].name && page.items[i].id && !add_listed(out, page.items[i].name, page.items[i].id)) {
                snprintf(why, why_len, "out of memory listing launch templates");
                rc = NS_ERR_INTERNAL;
            }
        if (rc == NS_OK && page.next_token && page.next_token[0] && !(token = strdup(page.next_token))) {
            snprintf(why, why_len, "out of memory listing launch templates");
            rc = NS_ERR_INTERNAL;
        }
        aws_ec2_launch_template_page_free(&page);
    } while (rc == NS_OK && token);
    free(token);
    return rc;
}

/* Under the lock: whether a listed template is still in use. One this process has not seen is remembered as used
 * now (hydration); one unused for the TTL is forgotten here, before it is deleted, so a launch meanwhile asks EC2. */
static bool still_used(aws_state *s, const aws_template_entry *t, int64_t now)
{
    size_t i = 0;
    while (i < s->n_templates && strcmp(s->templates[i].name, t->name) != 0)
        i++;
    if (i == s->n_templates) {
        if (s->n_templates == s->cap_templates) {
            size_t cap = s->cap_templates ? 2 * s->cap_templates : 16;
            aws_template_entry *more = realloc(s->templates, cap * sizeof(*more));
            if (!more)
                return true; /* cannot remember it: kept until a sweep can */
            s->templates = more;
            s->cap_templates = cap;
        }
        s->templates[s->n_templates] = *t;
        s->templates[s->n_templates++].used_ms = now;
        return true;
    }
    if (now - s->templates[i].used_ms < AWS_TEMPLATE_TTL_MS)
        return true;
    s->templates[i] = s->templates[--s->n_templates];
    return false;
}

static void delete_template(aws_state *s, const aws_template_entry *t)
{
    aws_query q;
    aws_query_init(&q, "DeleteLaunchTemplate", AWS_EC2_VERSION);
    aws_query_add(&q, "LaunchTemplateId", t->id);
    ns_http_response *resp = NULL;
    aws_api_error e = {0};
    int rc = aws_client_query(s->client, "ec2", "DeleteLaunchTemplate", aws_query_body(&q), aws_query_len(&q), &resp,
                              &e);
    aws_query_free(&q);
    s->host->http_response_free(resp);
    bool gone = rc == NS_OK || strcmp(e.code, "InvalidLaunchTemplateId.NotFound") == 0;
    ns_label fields[] = {{"name", t->name}, {"id", t->id}, {"code", e.code}, {"reason", e.message}};
    if (gone)
        s->host->log(s->ctx, NS_LOG_INFO, "aws launch template deleted: no launch used it", fields, 2);
    else
        s->host->log(s->ctx, NS_LOG_WARN, "aws launch template unused but could not be deleted; the next sweep tries "
                     "again", fields, 4);
}

void aws_template_sweep(aws_state *s)
{
    int64_t now = s->host->now_ms(s->ctx);
    pthread_mutex_lock(&s->lock);
    bool due = s->templates_swept_ms == 0 || now - s->templates_swept_ms >= AWS_TEMPLATE_TTL_MS;
    if (due)
        s->templates_swept_ms = now;
    pthread_mutex_unlock(&s->lock);
    if (!due)
        return;
    listed l = {0};
    char why[512] = "";
    if (list_cluster_templates(s, &l, why, sizeof(why)) != NS_OK) {
        ns_label fields[] = {{"cluster", s->cluster}, {"reason", why}};
        s->host->log(s->ctx, NS_LOG_WARN, "aws unused launch templates not swept; the next sweep tries again", fields,
                     2);
        free(l.items);
        return;
    }
    size_t unused = 0;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < l.n; i++)
        if (!still_used(s, &l.items[i], now))
            l.items[unused++] = l.items[i];
    pthread_mutex_unlock(&s->lock);
    for (size_t i = 0; i < unused; i++)
        delete_template(s, &l.items[i]);
    free(l.items);
}
