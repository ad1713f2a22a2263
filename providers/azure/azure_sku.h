/* One Resource SKUs record (GET /subscriptions/S/providers/Microsoft.Compute/skus) read into a VM size: capabilities,
 * the zones the subscription may use (minus Zone restrictions), and the parts of the size's name Karpenter's Azure
 * labels carry (family, series, version). Pure: only the host's JSON getters. */
#ifndef NS_AZURE_SKU_H
#define NS_AZURE_SKU_H

#include <stdbool.h>
#include <stdint.h>

#include <nodesmith/provider.h>

typedef struct az_sku {
    char name[64];       /* Standard_D2s_v3 */
    char arm_family[64]; /* standardDSv3Family (quota family) */
    char family[8];      /* D (karpenter.azure.com/sku-family) */
    char series[32];     /* Ds_v3 */
    char version[8];     /* 3 ("1" when the name has no _vN) */
    int vcpus;
    double memory_gib;
    char arch[8]; /* amd64 | arm64 */
    int gpus;
    char gpu_manufacturer[16]; /* nvidia | amd | "" */
    char gpu_name[16];
    bool accelerated_networking;
    bool premium_io;
    bool encryption_at_host;
    bool spot_capable;
    bool hyperv_v2; /* generation 2 supported (the AKS images are Gen2 where possible) */
    bool hyperv_v1;
    int64_t ephemeral_os_max_mb; /* MaxResourceVolumeMB */
    int max_nics;
    unsigned zones; /* bit n-1 = ARM zone n usable; 0 = not zonal here */
} az_sku;

/* 1 and *out filled for a VM size the subscription may use in `location`; 0 for a record to skip (another resource
 * type or location, restricted for the subscription, no vCPUs); < 0 (reported) for a record that is malformed. */
int az_sku_parse(const ns_host *h, ns_host_ctx *ctx, const ns_json *record, const char *location, az_sku *out);

#endif
