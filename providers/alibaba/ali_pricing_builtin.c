/* The built-in on-demand prices: a small generated table of per-family rates (ali_pricing_builtin_table.h), used
 * while DescribePrice cannot be reached, never a third-party price service. */
#include <string.h>

#include "ali_provider.h"

typedef struct ali_family_rate {
    const char *family;
    double per_vcpu;
    double per_gib;
} ali_family_rate;

#include "ali_pricing_builtin_table.h"

double ali_pricing_builtin(const char *family, int64_t vcpu, double memory_gib, int64_t gpus)
{
    const ali_family_rate *r = &DEFAULT_RATE;
    for (size_t i = 0; family && i < sizeof(FAMILY_RATES) / sizeof(FAMILY_RATES[0]); i++)
        if (strcmp(FAMILY_RATES[i].family, family) == 0)
            r = &FAMILY_RATES[i];
    double price = r->per_vcpu * (double)vcpu + r->per_gib * memory_gib;
    if (gpus > 0)
        price += GPU_RATE * (double)gpus;
    return price;
}
