/*
 * What an EC2 instance type offers a Kubernetes node, computed the way Karpenter's AWS provider does for the AL2023
 * AMI family: capacity (vCPUs, memory minus the VM overhead, ENI-limited pods, the root volume, GPUs), kube-reserved
 * (Karpenter's CPU steps, 11 MiB per pod + 255 MiB, 1 GiB of storage), the hard eviction thresholds (100 MiB of
 * memory, 10 % of the node's ephemeral storage), and the node labels of the type. Pure: no host upcalls.
 */
#ifndef NS_AWS_RESOURCES_H
#define NS_AWS_RESOURCES_H

#include <stdbool.h>

#include <nodesmith/provider.h>

#include "aws_ec2_parse.h"

typedef struct aws_resource_settings {
    double vm_memory_overhead;  /* fraction of memory the hypervisor keeps; Karpenter's default is 0.075 */
    int64_t root_volume_bytes;  /* the node's ephemeral storage; the AL2023 default root volume is 20 GiB */
    int64_t max_pods;           /* 0 = ENI-limited */
    bool instance_store_raid0;  /* the node class's instanceStorePolicy RAID0: a type with instance stores offers their
                                   total size (EC2's totalSizeInGB, decimal GB) as ephemeral storage, as Karpenter's
                                   ephemeralStorage does */
} aws_resource_settings;

void aws_resource_settings_default(aws_resource_settings *s);

/* interfaces of the default network card x (IPv4 addresses per interface - 1) + 2 */
int64_t aws_eni_limited_pods(const aws_ec2_instance_type *t);

/* Fills the four resource sets of an ns_instance_type. */
void aws_instance_resources(const aws_ec2_instance_type *t, const aws_resource_settings *s, ns_resources *capacity,
                            ns_resources *kube_reserved, ns_resources *system_reserved, ns_resources *eviction);

/* capacity minus the three reservations, floored at zero (what launch reports as allocatable). */
void aws_allocatable(const ns_resources *capacity, const ns_resources *kube_reserved,
                     const ns_resources *system_reserved, const ns_resources *eviction, ns_resources *out);

#define AWS_MAX_LABELS 20

/* The labels of an instance type; keys are static strings, values live in `text`. */
typedef struct aws_labels {
    ns_label items[AWS_MAX_LABELS];
    size_t n;
    char text[1024];
    size_t used;
} aws_labels;

/* Fills *out with the well-known and karpenter.k8s.aws labels of t in `region`. */
void aws_instance_labels(const aws_ec2_instance_type *t, const char *region, aws_labels *out);

/* "amd64" or "arm64" for the type's first architecture, or NULL for one Kubernetes does not run on. */
const char *aws_kubernetes_arch(const aws_ec2_instance_type *t);

#endif
