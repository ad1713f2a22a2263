/* Built-in on-demand prices and the estimate for types without one (see aws_pricing_builtin.h). */
#include "aws_pricing_builtin.h"

#include <stdlib.h>
#include <string.h>

typedef struct builtin_price {
    const char *name;
    double usd_per_hour;
} builtin_price;

/* Linux, shared tenancy, on-demand, us-east-1, from AWS's public price list; sorted by name for bsearch. */
static const builtin_price PRICES_US_EAST_1[] = {
    {"c5.12xlarge", 2.04}, {"c5.18xlarge", 3.06}, {"c5.24xlarge", 4.08}, {"c5.2xlarge", 0.34}, {"c5.4xlarge", 0.68},
    {"c5.9xlarge", 1.53}, {"c5.large", 0.085}, {"c5.xlarge", 0.17}, {"c5a.large", 0.077}, {"c5a.xlarge", 0.154},
    {"c5d.large", 0.096}, {"c5n.large", 0.108}, {"c5n.xlarge", 0.216}, {"c6a.large", 0.0765}, {"c6a.xlarge", 0.153},
    {"c6g.2xlarge", 0.272}, {"c6g.4xlarge", 0.544}, {"c6g.large", 0.068}, {"c6g.xlarge", 0.136},
    {"c6i.2xlarge", 0.34}, {"c6i.4xlarge", 0.68}, {"c6i.large", 0.085}, {"c6i.xlarge", 0.17}, {"c7g.2xlarge", 0.29},
    {"c7g.large", 0.0725}, {"c7g.xlarge", 0.145}, {"c7i.2xlarge", 0.357}, {"c7i.large", 0.08925},
    {"c7i.xlarge", 0.1785}, {"g4dn.12xlarge", 3.912}, {"g4dn.2xlarge", 0.752}, {"g4dn.4xlarge", 1.204},
    {"g4dn.8xlarge", 2.176}, {"g4dn.xlarge", 0.526}, {"g5.12xlarge", 5.672}, {"g5.2xlarge", 1.212},
    {"g5.4xlarge", 1.624}, {"g5.xlarge", 1.006}, {"i3.large", 0.156}, {"i3.xlarge", 0.312}, {"i3en.large", 0.226},
    {"inf1.xlarge", 0.228}, {"inf2.xlarge", 0.7582}, {"m5.12xlarge", 2.304}, {"m5.16xlarge", 3.072},
    {"m5.24xlarge", 4.608}, {"m5.2xlarge", 0.384}, {"m5.4xlarge", 0.768}, {"m5.8xlarge", 1.536}, {"m5.large", 0.096},
    {"m5.xlarge", 0.192}, {"m5a.large", 0.086}, {"m5a.xlarge", 0.172}, {"m5d.large", 0.113}, {"m6a.large", 0.0864},
    {"m6a.xlarge", 0.1728}, {"m6g.2xlarge", 0.308}, {"m6g.4xlarge", 0.616}, {"m6g.large", 0.077},
    {"m6g.xlarge", 0.154}, {"m6i.2xlarge", 0.384}, {"m6i.4xlarge", 0.768}, {"m6i.8xlarge", 1.536},
    {"m6i.large", 0.096}, {"m6i.xlarge", 0.192}, {"m7g.2xlarge", 0.3264}, {"m7g.large", 0.0816},
    {"m7g.xlarge", 0.1632}, {"m7i.2xlarge", 0.4032}, {"m7i.large", 0.1008}, {"m7i.xlarge", 0.2016},
    {"p3.2xlarge", 3.06}, {"p3.8xlarge", 12.24}, {"r5.12xlarge", 3.024}, {"r5.16xlarge", 4.032},
    {"r5.24xlarge", 6.048}, {"r5.2xlarge", 0.504}, {"r5.4xlarge", 1.008}, {"r5.8xlarge", 2.016}, {"r5.large", 0.126},
    {"r5.xlarge", 0.252}, {"r5a.large", 0.113}, {"r5a.xlarge", 0.226}, {"r5d.large", 0.144}, {"r6a.large", 0.1134},
    {"r6g.2xlarge", 0.4032}, {"r6g.large", 0.1008}, {"r6g.xlarge", 0.2016}, {"r6i.2xlarge", 0.504},
    {"r6i.4xlarge", 1.008}, {"r6i.large", 0.126}, {"r6i.xlarge", 0.252}, {"r7g.large", 0.1071},
    {"r7g.xlarge", 0.2142}, {"r7i.large", 0.1323}, {"r7i.xlarge", 0.2646}, {"t3.2xlarge", 0.3328},
    {"t3.large", 0.0832}, {"t3.medium", 0.0416}, {"t3.micro", 0.0104}, {"t3.small", 0.0208}, {"t3.xlarge", 0.1664},
    {"t3a.large", 0.0752}, {"t3a.medium", 0.0376}, {"t3a.micro", 0.0094}, {"t3a.small", 0.0188},
    {"t3a.xlarge", 0.1504}, {"t4g.large", 0.0672}, {"t4g.medium", 0.0336}, {"t4g.micro", 0.0084},
    {"t4g.small", 0.0168}, {"t4g.xlarge", 0.1344}, {"x2idn.16xlarge", 6.669},
};

/* Linux, shared tenancy, on-demand, us-gov-west-1 (GovCloud has no Pricing API endpoint); sorted by name. */
static const builtin_price PRICES_US_GOV_WEST_1[] = {
    {"c5.12xlarge", 2.448}, {"c5.18xlarge", 3.672}, {"c5.24xlarge", 4.896}, {"c5.2xlarge", 0.408},
    {"c5.4xlarge", 0.816}, {"c5.9xlarge", 1.836}, {"c5.large", 0.102}, {"c5.xlarge", 0.204}, {"c5a.large", 0.092},
    {"c5a.xlarge", 0.184}, {"c5d.large", 0.116}, {"c5n.large", 0.13}, {"c5n.xlarge", 0.26}, {"c6g.2xlarge", 0.3264},
    {"c6g.4xlarge", 0.6528}, {"c6g.large", 0.0816}, {"c6g.xlarge", 0.1632}, {"c6i.2xlarge", 0.408},
    {"c6i.4xlarge", 0.816}, {"c6i.large", 0.102}, {"c6i.xlarge", 0.204}, {"c7g.2xlarge", 0.3468},
    {"c7g.large", 0.0867}, {"c7g.xlarge", 0.1734}, {"c7i.2xlarge", 0.4284}, {"c7i.large", 0.1071},
    {"c7i.xlarge", 0.2142}, {"g4dn.12xlarge", 4.931}, {"g4dn.2xlarge", 0.948}, {"g4dn.4xlarge", 1.518},
    {"g4dn.8xlarge", 2.743}, {"g4dn.xlarge", 0.663}, {"i3.large", 0.188}, {"i3.xlarge", 0.376}, {"i3en.large", 0.273},
    {"inf1.xlarge", 0.288}, {"m5.12xlarge", 2.904}, {"m5.16xlarge", 3.872}, {"m5.24xlarge", 5.808},
    {"m5.2xlarge", 0.484}, {"m5.4xlarge", 0.968}, {"m5.8xlarge", 1.936}, {"m5.large", 0.121}, {"m5.xlarge", 0.242},
    {"m5a.large", 0.109}, {"m5a.xlarge", 0.218}, {"m5d.large", 0.143}, {"m6g.2xlarge", 0.3872},
    {"m6g.4xlarge", 0.7744}, {"m6g.large", 0.0968}, {"m6g.xlarge", 0.1936}, {"m6i.2xlarge", 0.484},
    {"m6i.4xlarge", 0.968}, {"m6i.8xlarge", 1.936}, {"m6i.large", 0.121}, {"m6i.xlarge", 0.242},
    {"m7g.2xlarge", 0.4114}, {"m7g.large", 0.1028}, {"m7g.xlarge", 0.2057}, {"m7i.2xlarge", 0.5082},
    {"m7i.large", 0.12705}, {"m7i.xlarge", 0.2541}, {"p3.2xlarge", 3.672}, {"p3.8xlarge", 14.688},
    {"r5.12xlarge", 3.624}, {"r5.16xlarge", 4.832}, {"r5.24xlarge", 7.248}, {"r5.2xlarge", 0.604},
    {"r5.4xlarge", 1.208}, {"r5.8xlarge", 2.416}, {"r5.large", 0.151}, {"r5.xlarge", 0.302}, {"r5a.large", 0.136},
    {"r5a.xlarge", 0.272}, {"r5d.large", 0.173}, {"r6g.2xlarge", 0.4832}, {"r6g.large", 0.1208},
    {"r6g.xlarge", 0.2416}, {"r6i.2xlarge", 0.604}, {"r6i.4xlarge", 1.208}, {"r6i.large", 0.151},
    {"r6i.xlarge", 0.302}, {"r7g.large", 0.1284}, {"r7g.xlarge", 0.2567}, {"r7i.large", 0.15855},
    {"r7i.xlarge", 0.3171}, {"t3.2xlarge", 0.3904}, {"t3.large", 0.0976}, {"t3.medium", 0.0488}, {"t3.micro", 0.0122},
    {"t3.small", 0.0244}, {"t3.xlarge", 0.1952}, {"t3a.large", 0.0878}, {"t3a.medium", 0.0439}, {"t3a.micro", 0.011},
    {"t3a.small", 0.022}, {"t3a.xlarge", 0.1757}, {"t4g.large", 0.0784}, {"t4g.medium", 0.0392},
    {"t4g.micro", 0.0098}, {"t4g.small", 0.0196}, {"t4g.xlarge", 0.1568}, {"x2idn.16xlarge", 8.003},
};

/* Linux, shared tenancy, on-demand, us-gov-east-1 (GovCloud has no Pricing API endpoint); sorted by name. */
static const builtin_price PRICES_US_GOV_EAST_1[] = {
    {"c5.12xlarge", 2.448}, {"c5.18xlarge", 3.672}, {"c5.24xlarge", 4.896}, {"c5.2xlarge", 0.408},
    {"c5.4xlarge", 0.816}, {"c5.9xlarge", 1.836}, {"c5.large", 0.102}, {"c5.xlarge", 0.204}, {"c5a.large", 0.092},
    {"c5a.xlarge", 0.184}, {"c5d.large", 0.116}, {"c5n.large", 0.13}, {"c5n.xlarge", 0.26}, {"c6g.2xlarge", 0.3264},
    {"c6g.4xlarge", 0.6528}, {"c6g.large", 0.0816}, {"c6g.xlarge", 0.1632}, {"c6i.2xlarge", 0.408},
    {"c6i.4xlarge", 0.816}, {"c6i.large", 0.102}, {"c6i.xlarge", 0.204}, {"c7g.2xlarge", 0.3468},
    {"c7g.large", 0.0867}, {"c7g.xlarge", 0.1734}, {"c7i.2xlarge", 0.4284}, {"c7i.large", 0.1071},
    {"c7i.xlarge", 0.2142}, {"g4dn.12xlarge", 4.931}, {"g4dn.2xlarge", 0.948}, {"g4dn.4xlarge", 1.518},
    {"g4dn.8xlarge", 2.743}, {"g4dn.xlarge", 0.663}, {"i3.large", 0.188}, {"i3.xlarge", 0.376}, {"i3en.large", 0.273},
    {"inf1.xlarge", 0.288}, {"m5.12xlarge", 2.904}, {"m5.16xlarge", 3.872}, {"m5.24xlarge", 5.808},
    {"m5.2xlarge", 0.484}, {"m5.4xlarge", 0.968}, {"m5.8xlarge", 1.936}, {"m5.large", 0.121}, {"m5.xlarge", 0.242},
    {"m5a.large", 0.109}, {"m5a.xlarge", 0.218}, {"m5d.large", 0.143}, {"m6g.2xlarge", 0.3872},
    {"m6g.4xlarge", 0.7744}, {"m6g.large", 0.0968}, {"m6g.xlarge", 0.1936}, {"m6i.2xlarge", 0.484},
    {"m6i.4xlarge", 0.968}, {"m6i.8xlarge", 1.936}, {"m6i.large", 0.121}, {"m6i.xlarge", 0.242},
    {"m7g.2xlarge", 0.4112}, {"m7g.large", 0.1028}, {"m7g.xlarge", 0.2056}, {"m7i.2xlarge", 0.5082},
    {"m7i.large", 0.12705}, {"m7i.xlarge", 0.2541}, {"r5.12xlarge", 3.624}, {"r5.16xlarge", 4.832},
    {"r5.24xlarge", 7.248}, {"r5.2xlarge", 0.604}, {"r5.4xlarge", 1.208}, {"r5.8xlarge", 2.416}, {"r5.large", 0.151},
    {"r5.xlarge", 0.302}, {"r5a.large", 0.136}, {"r5a.xlarge", 0.272}, {"r5d.large", 0.173}, {"r6g.2xlarge", 0.4832},
    {"r6g.large", 0.1208}, {"r6g.xlarge", 0.2416}, {"r6i.2xlarge", 0.604}, {"r6i.4xlarge", 1.208},
    {"r6i.large", 0.151}, {"r6i.xlarge", 0.302}, {"r7g.large", 0.1284}, {"r7g.xlarge", 0.2567},
    {"r7i.large", 0.15855}, {"r7i.xlarge", 0.3171}, {"t3.2xlarge", 0.3904}, {"t3.large", 0.0976},
    {"t3.medium", 0.0488}, {"t3.micro", 0.0122}, {"t3.small", 0.0244}, {"t3.xlarge", 0.1952}, {"t3a.large", 0.0878},
    {"t3a.medium", 0.0439}, {"t3a.micro", 0.011}, {"t3a.small", 0.022}, {"t3a.xlarge", 0.1757}, {"t4g.large", 0.0784},
    {"t4g.medium", 0.0392}, {"t4g.micro", 0.0098}, {"t4g.small", 0.0196}, {"t4g.xlarge", 0.1568},
    {"x2idn.16xlarge", 8.003},
};

typedef struct region_table {
    const char *region;
    const builtin_price *prices;
    size_t n;
} region_table;

#define REGION_TABLE(region, t) {region, t, sizeof(t) / sizeof(t[0])}
static const region_table TABLES[] = {
    REGION_TABLE("us-east-1", PRICES_US_EAST_1),
    REGION_TABLE("us-gov-west-1", PRICES_US_GOV_WEST_1),
    REGION_TABLE("us-gov-east-1", PRICES_US_GOV_EAST_1),
};

static const region_table *table_for(const char *region)
{
    for (size_t i = 0; region && i < sizeof(TABLES) / sizeof(TABLES[0]); i++)
        if (strcmp(TABLES[i].region, region) == 0)
            return &TABLES[i];
    return &TABLES[0];
}

static int by_name(const void *key, const void *item)
{
    return strcmp(key, ((const builtin_price *)item)->name);
}

bool aws_builtin_has_region(const char *region)
{
    return region && strcmp(table_for(region)->region, region) == 0;
}

double aws_builtin_on_demand(const char *region, const char *instance_type)
{
    const region_table *t = table_for(region);
    const builtin_price *p = instance_type ? bsearch(instance_type, t->prices, t->n, sizeof(t->prices[0]), by_name)
                                           : NULL;
    return p ? p->usd_per_hour : -1;
}

double aws_estimate_on_demand(const char *region, const aws_ec2_instance_type *t)
{
    double factor = region && strncmp(region, "us-gov-", 7) == 0 ? AWS_ESTIMATE_GOVCLOUD_FACTOR : 1.0;
    return factor * (AWS_ESTIMATE_PER_VCPU * t->vcpus + AWS_ESTIMATE_PER_GIB * ((double)t->memory_mib / 1024.0) +
                     AWS_ESTIMATE_PER_GPU * (t->gpu_count > 0 ? t->gpu_count : 0));
}

size_t aws_builtin_count(const char *region)
{
    return table_for(region)->n;
}

const char *aws_builtin_name(const char *region, size_t i)
{
    const region_table *t = table_for(region);
    return i < t->n ? t->prices[i].name : NULL;
}
