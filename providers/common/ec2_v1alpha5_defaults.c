/* The requirements Karpenter's AWS admission webhook (v0.31 and earlier, pkg/apis/v1alpha5 Provisioner.SetDefaults)
 * appended to a karpenter.sh/v1alpha5 Provisioner, in its order: Linux, amd64 and on-demand unless the Provisioner
 * has a requirement on that key, and the c, m and r categories of generation 3 or later unless it has one on the
 * instance type, family, category or generation. v1beta1 dropped them (the v1beta1 migration guide, "Defaults
 * Dropped"); the core adds them when it reads a Provisioner, so one keeps launching what it launched. Declared by
 * the AWS provider and by the simulated one, which reads Karpenter's AWS manifests as AWS does. */
#include "ec2_v1alpha5_defaults.h"

#define LABEL_CATEGORY "karpenter.k8s.aws/instance-category"
#define LABEL_GENERATION "karpenter.k8s.aws/instance-generation"

static const char *const OS_KEYS[] = {"kubernetes.io/os"};
static const char *const ARCH_KEYS[] = {"kubernetes.io/arch"};
static const char *const CAPACITY_KEYS[] = {"karpenter.sh/capacity-type"};
static const char *const TYPE_KEYS[] = {"node.kubernetes.io/instance-type", "karpenter.k8s.aws/instance-family",
                                        LABEL_CATEGORY, LABEL_GENERATION};
static const char *const LINUX[] = {"linux"};
static const char *const AMD64[] = {"amd64"};
static const char *const ON_DEMAND[] = {NS_CAPACITY_ON_DEMAND};
static const char *const CMR[] = {"c", "m", "r"};
static const char *const OLDER_THAN_3[] = {"2"};

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define DEFAULT(k, o, vals, unless)                                                                                    \
    {.struct_size = sizeof(ns_requirement_default), .key = (k), .op = (o), .values = (vals), .n_values = N(vals),      \
     .unless_keys = (unless), .n_unless_keys = N(unless)}

static const ns_requirement_default DEFAULTS[] = {
    DEFAULT("kubernetes.io/os", "In", LINUX, OS_KEYS),
    DEFAULT("kubernetes.io/arch", "In", AMD64, ARCH_KEYS),
    DEFAULT("karpenter.sh/capacity-type", "In", ON_DEMAND, CAPACITY_KEYS),
    DEFAULT(LABEL_CATEGORY, "In", CMR, TYPE_KEYS),
    DEFAULT(LABEL_GENERATION, "Gt", OLDER_THAN_3, TYPE_KEYS),
};

int ec2_v1alpha5_defaults(void *state, ns_requirement_default_cb cb, void *cb_ctx)
{
    (void)state;
    for (size_t i = 0; i < N(DEFAULTS); i++) {
        int rc = cb(cb_ctx, &DEFAULTS[i]);
        if (rc != 0)
            return rc;
    }
    return NS_OK;
}
