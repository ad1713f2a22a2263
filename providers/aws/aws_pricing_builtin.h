/*
 * On-demand prices the provider falls back on when the Pricing API cannot be reached: a built-in table of Linux
 * on-demand prices in us-east-1 for common instance types (AWS's public price list), and for every other type an
 * estimate from its vCPUs, memory and GPUs. Pure: no host upcalls.
 */
#ifndef NS_AWS_PRICING_BUILTIN_H
#define NS_AWS_PRICING_BUILTIN_H

#include <stddef.h>

#include "aws_ec2_parse.h"

/* USD per hour from the built-in table, or a negative number when the type is not in it. */
double aws_builtin_on_demand(const char *instance_type);

/* The estimate used for types the table lacks: AWS_ESTIMATE_PER_VCPU per vCPU, AWS_ESTIMATE_PER_GIB per GiB of memory
 * and AWS_ESTIMATE_PER_GPU per GPU, per hour. The first two are m5's and c5's prices solved for one vCPU and one GiB
 * (m5.large: 2 vCPUs, 8 GiB, $0.096; c5.large: 2 vCPUs, 4 GiB, $0.085). */
#define AWS_ESTIMATE_PER_VCPU 0.037
#define AWS_ESTIMATE_PER_GIB 0.00275
#define AWS_ESTIMATE_PER_GPU 0.40
double aws_estimate_on_demand(const aws_ec2_instance_type *t);

/* How many types the table holds, and the i-th (for tests and documentation). */
size_t aws_builtin_count(void);
const char *aws_builtin_name(size_t i);

#endif
