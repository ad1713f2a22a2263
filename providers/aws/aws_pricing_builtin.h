/*
 * Built-in on-demand prices: tables of Linux on-demand prices for common instance types (AWS's public price list) in
 * us-east-1 and in the two GovCloud regions, and for every other type an estimate from its vCPUs, memory and GPUs.
 * The provider falls back on them when the Pricing API cannot be reached, and uses them always in GovCloud, which has
 * no Pricing API (as Karpenter does). Regions without a table of their own use us-east-1's. Pure: no host upcalls.
 */
#ifndef NS_AWS_PRICING_BUILTIN_H
#define NS_AWS_PRICING_BUILTIN_H

#include <stdbool.h>
#include <stddef.h>

#include "aws_ec2_parse.h"

/* USD per hour from the region's built-in table (us-east-1's for a region without one, and for NULL), or a negative
 * number when the type is not in it. */
double aws_builtin_on_demand(const char *region, const char *instance_type);
/* True when the region has a table of its own. */
bool aws_builtin_has_region(const char *region);

/* The estimate used for types the table lacks: AWS_ESTIMATE_PER_VCPU per vCPU, AWS_ESTIMATE_PER_GIB per GiB of memory
 * and AWS_ESTIMATE_PER_GPU per GPU, per hour. The first two are m5's and c5's prices solved for one vCPU and one GiB
 * (m5.large: 2 vCPUs, 8 GiB, $0.096; c5.large: 2 vCPUs, 4 GiB, $0.085). */
#define AWS_ESTIMATE_PER_VCPU 0.037
#define AWS_ESTIMATE_PER_GIB 0.00275
#define AWS_ESTIMATE_PER_GPU 0.40
/* GovCloud's prices are 1.2 times us-east-1's for the median type of the tables (from 1.17 to 1.27). */
#define AWS_ESTIMATE_GOVCLOUD_FACTOR 1.2
double aws_estimate_on_demand(const char *region, const aws_ec2_instance_type *t);

/* How many types the table holds, and the i-th (for tests and documentation). */
size_t aws_builtin_count(const char *region);
const char *aws_builtin_name(const char *region, size_t i);

#endif
