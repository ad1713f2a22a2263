/*
 * EC2 DescribeInstanceStatus answers, read as Karpenter's instance status provider reads them
 * (aws/karpenter-provider-aws pkg/providers/instancestatus): per instance, the details of its instance status and
 * system status checks and its scheduled events. Attached EBS status is not read: Karpenter ignores it too.
 *
 * Pure: no host upcalls. Strings point into the tree the page owns (page->doc). Unlike the lenient page parsers of
 * aws_ec2_parse.h, a field this provider acts on that is missing or unreadable fails the whole page, naming the item
 * and the field: an impaired instance read wrongly is terminated wrongly.
 */
#ifndef NS_AWS_INSTANCE_STATUS_PARSE_H
#define NS_AWS_INSTANCE_STATUS_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aws_xml.h"

/* Karpenter's categories (instancestatus.Category) that lead to an action. */
typedef enum aws_status_category {
    AWS_STATUS_INSTANCE, /* instanceStatus/details: Karpenter's instance_status message */
    AWS_STATUS_SYSTEM,   /* systemStatus/details: system_status */
    AWS_STATUS_EVENT,    /* eventsSet: event_status (a scheduled event) */
} aws_status_category;

typedef struct aws_status_detail {
    aws_status_category category;
    const char *name;          /* the check ("reachability") or the event code ("instance-retirement") */
    bool failed;               /* a check's status is "failed"; a scheduled event always counts as failed */
    int64_t impaired_since_ms; /* checks: when the check started failing, 0 when EC2 gave no time */
    int64_t not_before_ms;     /* events: the earliest start, 0 when EC2 gave none */
} aws_status_detail;

typedef struct aws_instance_status {
    const char *instance_id;
    const char *zone;
    size_t first_detail, n_details; /* the instance's details in page->details */
} aws_instance_status;

typedef struct aws_instance_status_page {
    aws_xml_node *doc;
    aws_instance_status *items;
    size_t n;
    aws_status_detail *details;
    size_t n_details;
    const char *next_token; /* NULL on the last page */
} aws_instance_status_page;

/* NS_OK; NS_ERR_INVALID_ARGUMENT when the body is not a DescribeInstanceStatusResponse or a field is missing or
 * unreadable (err names the item, its instance and the field); NS_ERR_INTERNAL when memory runs out. Call
 * aws_instance_status_page_free afterwards in every case. */
int aws_ec2_parse_instance_status(const char *xml, size_t len, aws_instance_status_page *out, char *err,
                                  size_t errlen);
void aws_instance_status_page_free(aws_instance_status_page *page);

#endif
