/* Karpenter's AWS v1alpha5 Provisioner defaults (provider ABI 6's v1alpha5_defaults), shared by the providers that
 * read Karpenter's AWS manifests: aws and sim. */
#ifndef EC2_V1ALPHA5_DEFAULTS_H
#define EC2_V1ALPHA5_DEFAULTS_H

#include "nodesmith/provider.h"

/* Passes each default to cb in the webhook's order; stops with cb's non-zero value. Needs no state. */
int ec2_v1alpha5_defaults(void *state, ns_requirement_default_cb cb, void *cb_ctx);

#endif
