/* The built-in price table (azure_pricing_builtin.h). */
#include "azure_pricing_builtin.h"

#include <string.h>

static const struct {
    const char *sku;
    double usd;
} PRICES[] = {
    {"Standard_B2s", 0.0416},     {"Standard_B2ms", 0.0832},    {"Standard_B4ms", 0.166},
    {"Standard_D2s_v3", 0.096},   {"Standard_D4s_v3", 0.192},   {"Standard_D8s_v3", 0.384},
    {"Standard_D16s_v3", 0.768},  {"Standard_D2s_v5", 0.096},   {"Standard_D4s_v5", 0.192},
    {"Standard_D8s_v5", 0.384},   {"Standard_D16s_v5", 0.768},  {"Standard_D2ds_v5", 0.113},
    {"Standard_D4ds_v5", 0.226},  {"Standard_D2as_v5", 0.086},  {"Standard_D4as_v5", 0.172},
    {"Standard_D2ps_v5", 0.077},  {"Standard_D4ps_v5", 0.154},  {"Standard_E2s_v5", 0.126},
    {"Standard_E4s_v5", 0.252},   {"Standard_E8s_v5", 0.504},   {"Standard_F2s_v2", 0.085},
    {"Standard_F4s_v2", 0.169},   {"Standard_F8s_v2", 0.338},   {"Standard_NC4as_T4_v3", 0.526},
    {"Standard_NC6s_v3", 3.06},   {"Standard_NC24ads_A100_v4", 3.673},
};

double az_builtin_price(const char *sku)
{
    for (size_t i = 0; sku && i < sizeof(PRICES) / sizeof(PRICES[0]); i++)
        if (strcmp(PRICES[i].sku, sku) == 0)
            return PRICES[i].usd;
    return -1;
}

double az_estimated_price(int vcpus, double memory_gib)
{
    /* Dsv5: 0.096 for 2 vCPUs and 8 GiB, split as 0.0336 per vCPU and 0.0036 per GiB. */
    return vcpus * 0.0336 + memory_gib * 0.0036;
}
