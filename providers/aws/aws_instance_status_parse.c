#include "aws_instance_status_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodesmith/provider.h>

#include "aws_parse_util.h"

/* A time field: absent is 0, present must be ISO 8601. False (with the reason in err) when it is not. */
static bool read_time(const aws_xml_node *node, const char *field, const char *where, int64_t *ms, char *err,
                      size_t errlen)
{
    const char *text = aws_xml_text(node, field);
    *ms = 0;
    if (!text || aws_parse_iso8601_ms(text, ms))
        return true;
    snprintf(err, errlen, "%s: %s '%.64s' is not an ISO 8601 time", where, field, text);
    return false;
}

/* The details of one status check (instanceStatus or systemStatus), appended to page->details. */
static bool read_checks(const aws_xml_node *item, const char *check, aws_status_category category,
                        const char *where, aws_instance_status_page *page, char *err, size_t errlen)
{
    size_t k = 0;
    for (const aws_xml_node *d = aws_xml_path(aws_xml_child(item, check), "details/item"); d;
         d = aws_xml_next_same(d)) {
        char at[192];
        snprintf(at, sizeof(at), "%s: %s/details/item %zu", where, check, ++k);
        aws_status_detail *out = &page->details[page->n_details];
        const char *status = aws_xml_text(d, "status");
        if (!(out->name = aws_xml_text(d, "name")) || !status) {
            snprintf(err, errlen, "%s: no %s", at, out->name ? "status" : "name");
            return false;
        }
        if (!read_time(d, "impairedSince", at, &out->impaired_since_ms, err, errlen))
            return false;
        out->category = category;
        out->failed = strcmp(status, "failed") == 0;
        page->n_details++;
    }
    return true;
}

static bool read_events(const aws_xml_node *item, const char *where, aws_instance_status_page *page, char *err,
                        size_t errlen)
{
    size_t k = 0;
    for (const aws_xml_node *e = aws_xml_path(item, "eventsSet/item"); e; e = aws_xml_next_same(e)) {
        char at[192];
        snprintf(at, sizeof(at), "%s: eventsSet/item %zu", where, ++k);
        aws_status_detail *out = &page->details[page->n_details];
        if (!(out->name = aws_xml_text(e, "code"))) {
            snprintf(err, errlen, "%s: no code", at);
            return false;
        }
        if (!read_time(e, "notBefore", at, &out->not_before_ms, err, errlen))
            return false;
        out->category = AWS_STATUS_EVENT;
        out->failed = true; /* Karpenter: every scheduled event means the host should be vacated */
        page->n_details++;
    }
    return true;
}

static size_t count_details(const aws_xml_node *set)
{
    size_t n = 0;
    for (const aws_xml_node *it = aws_xml_child(set, "item"); it; it = aws_xml_next_same(it))
        n += aws_xml_count(aws_xml_path(it, "instanceStatus/details"), "item") +
             aws_xml_count(aws_xml_path(it, "systemStatus/details"), "item") +
             aws_xml_count(aws_xml_child(it, "eventsSet"), "item");
    return n;
}

static int read_items(const aws_xml_node *set, aws_instance_status_page *out, char *err, size_t errlen)
{
    size_t n_items = aws_xml_count(set, "item"), n_details = count_details(set);
    if ((n_items && !(out->items = calloc(n_items, sizeof(*out->items)))) ||
        (n_details && !(out->details = calloc(n_details, sizeof(*out->details))))) {
        snprintf(err, errlen, "out of memory reading %zu instance statuses", n_items);
        return NS_ERR_INTERNAL;
    }
    for (const aws_xml_node *it = aws_xml_child(set, "item"); it; it = aws_xml_next_same(it)) {
        aws_instance_status *st = &out->items[out->n];
        st->instance_id = aws_xml_text(it, "instanceId");
        st->zone = aws_xml_text(it, "availabilityZone");
        char where[160];
        snprintf(where, sizeof(where), "instanceStatusSet/item %zu (%.40s)", out->n + 1,
                 st->instance_id ? st->instance_id : "no instanceId");
        if (!st->instance_id || !st->instance_id[0] || !st->zone || !st->zone[0]) {
            snprintf(err, errlen, "%s: no %s", where, !st->instance_id || !st->instance_id[0] ? "instanceId"
                                                                                              : "availabilityZone");
            return NS_ERR_INVALID_ARGUMENT;
        }
        st->first_detail = out->n_details;
        if (!read_checks(it, "instanceStatus", AWS_STATUS_INSTANCE, where, out, err, errlen) ||
            !read_checks(it, "systemStatus", AWS_STATUS_SYSTEM, where, out, err, errlen) ||
            !read_events(it, where, out, err, errlen))
            return NS_ERR_INVALID_ARGUMENT;
        st->n_details = out->n_details - st->first_detail;
        out->n++;
    }
    return NS_OK;
}

int aws_ec2_parse_instance_status(const char *xml, size_t len, aws_instance_status_page *out, char *err,
                                  size_t errlen)
{
    memset(out, 0, sizeof(*out));
    int rc = aws_parse_open(xml, len, "DescribeInstanceStatusResponse", &out->doc, err, errlen);
    if (rc != NS_OK)
        return rc;
    if ((rc = read_items(aws_xml_child(out->doc, "instanceStatusSet"), out, err, errlen)) != NS_OK)
        return rc;
    const char *token = aws_xml_text(out->doc, "nextToken");
    out->next_token = token && *token ? token : NULL;
    return NS_OK;
}

void aws_instance_status_page_free(aws_instance_status_page *page)
{
    if (!page)
        return;
    aws_xml_free(page->doc);
    free(page->items);
    free(page->details);
    memset(page, 0, sizeof(*page));
}
