/*
 * Node classes the sim accepts: its own SimNodeClass (nodesmith.io/v1), and AWS's EC2NodeClass
 * (karpenter.k8s.aws/v1, v1beta1) and AWSNodeTemplate (karpenter.k8s.aws/v1alpha1) so AWS manifests run unchanged.
 * Each is reduced to the few settings the sim acts on (sim_nc).
 */
#ifndef SIM_NODECLASS_H
#define SIM_NODECLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodesmith/provider.h"

#include "sim_catalog.h"
#include "sim_kubelet.h"

typedef struct sim_state sim_state;

#define SIM_DEFAULT_IMAGE_VERSION "v1"
#define SIM_DEFAULT_EPHEMERAL_BYTES (20LL << 30)

typedef enum sim_os { SIM_OS_LINUX = 0, SIM_OS_WINDOWS2019, SIM_OS_WINDOWS2022 } sim_os;

typedef struct sim_nc {
    sim_os os;
    bool aws_kind; /* EC2NodeClass or AWSNodeTemplate: drift reasons use AWS's words */
    char image_id[NS_NAME_MAX];
    int64_t ephemeral_bytes;
    bool zone_allowed[SIM_MAX_ZONES]; /* indexed like sim_state.zones */
    bool bottlerocket;                /* Bottlerocket ignores podsPerCore and evictionSoft, as in Karpenter */
    sim_kubelet kubelet;              /* spec.kubelet (SimNodeClass, EC2NodeClass v1) */
} sim_nc;

/* Reads a node class into *out; a NULL node class gives the defaults (Linux, every zone, 20Gi). Invalid node
 * classes are NS_ERR_INVALID_CONFIG naming the node class and the field. */
int sim_nc_parse(sim_state *s, const ns_nodeclass *nodeclass, sim_nc *out);

/* "linux" or "windows". */
const char *sim_os_label(sim_os os);
/* node.kubernetes.io/windows-build, or NULL for Linux. */
const char *sim_os_windows_build(sim_os os);

/* ABI methods. */
int sim_validate_nodeclass(void *state, const ns_nodeclass *nodeclass);
int sim_check_drift(void *state, const ns_instance *instance, const ns_nodeclass *nodeclass, bool *drifted,
                    char *reason, size_t reason_len);

#endif
