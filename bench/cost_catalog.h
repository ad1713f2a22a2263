/*
 * The real catalogs the cost benchmark prices its scenarios from, read from the shared data directory at run time
 * (never copied into the tree): AWS us-east-1 (aws-instance-types.json, its allocatable after Karpenter's overhead,
 * and aws-prices-us-east-1.json) and Alibaba Cloud cn-hangzhou (alibaba-instance-types.json and
 * alibaba-prices-ondemand.json, capacity as allocatable) and Azure southcentralus (azure-skus.json, the only region
 * with SKU records in the data, and azure-prices-ondemand.json, capacity as allocatable, pods as nodesmith's Azure
 * provider sets them by default). Only general-purpose, compute and memory families of recent generations without
 * accelerators are kept: the shapes a mixed workload's NodePool would allow.
 */
#ifndef COST_CATALOG_H
#define COST_CATALOG_H

#include <stddef.h>
#include <stdint.h>

typedef struct cb_type {
    char name[48];
    char family[24];
    char arch[8];
    int64_t cpu_milli, mem_bytes, pods;
    double price; /* on-demand per hour, in the catalog's currency */
} cb_type;

typedef struct cb_catalog {
    char name[32]; /* "aws-us-east-1", "alibaba-cn-hangzhou", "azure-southcentralus" */
    cb_type *types;
    size_t n;
} cb_catalog;

#define CB_CATALOGS 3

/* Loads catalog `which` (0: AWS, 1: Alibaba, 2: Azure; below CB_CATALOGS) from data_dir into out, which the caller
 * frees with cb_catalog_free. 0, or -1 with a message on stderr naming the file and what is wrong (out is then
 * empty). */
int cb_catalog_load(const char *data_dir, int which, cb_catalog *out);
void cb_catalog_free(cb_catalog *c);

#endif
