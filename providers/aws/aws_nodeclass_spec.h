/*
 * The AWS node classes as the provider reads them: EC2NodeClass (karpenter.k8s.aws/v1 and v1beta1) and the legacy
 * AWSNodeTemplate (karpenter.k8s.aws/v1alpha1), both checked field by field the way Karpenter's CRDs validate them and
 * normalised into one C view, so the rest of the provider never looks at which kind it was given.
 *
 * Reads the spec through the host's JSON getters only (no HTTP, no errors recorded): the caller reports a failure with
 * the message written into err. Strings in the view point into the node class's JSON, or into the view's own `text`
 * buffer (IDs split from a legacy "aws-ids" list), so the view lives as long as both the node class and itself.
 */
#ifndef NS_AWS_NODECLASS_SPEC_H
#define NS_AWS_NODECLASS_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nodesmith/provider.h>

typedef enum aws_ami_family {
    AWS_FAMILY_AL2023 = 0,
    AWS_FAMILY_AL2,
    AWS_FAMILY_BOTTLEROCKET,
    AWS_FAMILY_WINDOWS2019,
    AWS_FAMILY_WINDOWS2022,
    AWS_FAMILY_CUSTOM,
} aws_ami_family;

/* "AL2023", "AL2", ... as amiFamily spells them. */
const char *aws_ami_family_name(aws_ami_family f);
bool aws_ami_family_windows(aws_ami_family f);
/* The node.kubernetes.io/windows-build of a Windows family ("10.0.17763"), NULL for the others. */
const char *aws_ami_family_windows_build(aws_ami_family f);

#define AWS_SPEC_MAX_TERMS 30
#define AWS_SPEC_MAX_TAGS 20
#define AWS_SPEC_MAX_NODECLASS_TAGS 50
#define AWS_SPEC_MAX_BLOCK_DEVICES 16

typedef struct aws_spec_tag {
    const char *key, *value; /* a selector value "*" matches any value */
} aws_spec_tag;

/* One selector term: `id` alone, or any of name / owner / tags (all must match), or `alias` alone (AMIs only). */
typedef struct aws_selector_term {
    const char *id, *name, *owner, *alias, *ssm_parameter;
    aws_spec_tag tags[AWS_SPEC_MAX_TAGS];
    size_t n_tags;
} aws_selector_term;

/* One capacityReservationSelectorTerms entry (EC2NodeClass v1): `id` alone, or any of tags / ownerID /
 * instanceMatchCriteria, all of which must match. */
typedef struct aws_reservation_term {
    const char *id, *owner_id, *match_criteria;
    aws_spec_tag tags[AWS_SPEC_MAX_TAGS];
    size_t n_tags;
} aws_reservation_term;

typedef struct aws_block_device {
    const char *device_name;
    int64_t volume_size_gib; /* 0 = unset */
    const char *volume_type, *kms_key_id, *snapshot_id;
    int64_t iops, throughput; /* 0 = unset */
    int encrypted, delete_on_termination; /* -1 = unset, else 0 or 1 */
    bool root_volume;
} aws_block_device;

typedef struct aws_nodeclass_spec {
    const char *kind, *name, *api_version;
    bool legacy; /* AWSNodeTemplate */
    aws_ami_family family;
    const char *alias_version; /* "latest", "v20240807", ...: the AMIs come from the family's SSM parameters */
    aws_selector_term subnets[AWS_SPEC_MAX_TERMS];
    size_t n_subnets;
    aws_selector_term security_groups[AWS_SPEC_MAX_TERMS];
    size_t n_security_groups;
    aws_selector_term amis[AWS_SPEC_MAX_TERMS]; /* empty with alias_version set */
    size_t n_amis;
    aws_reservation_term reservations[AWS_SPEC_MAX_TERMS]; /* capacityReservationSelectorTerms; empty = none */
    size_t n_reservations;
    const char *role, *instance_profile, *user_data;
    /* metadataOptions, with Karpenter's defaults filled in */
    const char *http_endpoint, *http_protocol_ipv6, *http_tokens;
    int64_t http_put_response_hop_limit;
    aws_block_device block_devices[AWS_SPEC_MAX_BLOCK_DEVICES]; /* empty = the family's default root volume */
    size_t n_block_devices;
    aws_spec_tag tags[AWS_SPEC_MAX_NODECLASS_TAGS];
    size_t n_tags;
    int64_t max_pods;         /* kubelet.maxPods; 0 = ENI-limited */
    const char *cluster_dns;  /* kubelet.clusterDNS[0], or NULL */
    int detailed_monitoring;  /* -1 unset */
    int associate_public_ip;  /* -1 unset */
    const char *instance_store_policy; /* "RAID0" or NULL */
    char text[2048]; /* storage for IDs split out of a legacy "aws-ids" value */
    size_t text_used;
} aws_nodeclass_spec;

/* Parses and validates nc into *out. NS_OK, or NS_ERR_INVALID_CONFIG with a message naming the node class and the
 * offending field written into err ("EC2NodeClass default: spec.amiSelectorTerms[0].alias: ..."). */
int aws_nodeclass_spec_parse(const ns_host *host, const ns_nodeclass *nc, aws_nodeclass_spec *out, char *err,
                             size_t errlen);

/* spec.instanceStorePolicy is RAID0: the node's bootstrap makes one RAID0 array of the instance stores for the kubelet
 * and containerd, and that array is the node's ephemeral storage. */
bool aws_spec_instance_store_raid0(const aws_nodeclass_spec *s);

/* The AWSNodeTemplate half (aws_nodeclass_legacy.c), called by aws_nodeclass_spec_parse with out->kind/name set. */
int aws_nodeclass_legacy_parse(const ns_host *host, const ns_json *spec, aws_nodeclass_spec *out, char *err,
                               size_t errlen);

/* spec.capacityReservationSelectorTerms (aws_nodeclass_reservations.c), checked as Karpenter's CRD does; `terms`
 * may be NULL (none). */
int aws_spec_parse_reservations(const ns_host *host, const ns_json *terms, aws_nodeclass_spec *out, char *err,
                                size_t errlen);

/* Shared checks used by both halves (aws_nodeclass_spec.c). Each returns NS_OK or NS_ERR_INVALID_CONFIG with err
 * filled as "KIND NAME: spec.FIELD...: why". */
int aws_spec_fail(const aws_nodeclass_spec *s, char *err, size_t errlen, const char *fmt, ...) NS_PRINTF(4, 5);
int aws_spec_parse_family(const aws_nodeclass_spec *s, const char *field, const char *text, bool allow_custom,
                          aws_ami_family *out, char *err, size_t errlen);
int aws_spec_parse_common(const ns_host *host, const ns_json *spec, aws_nodeclass_spec *out, char *err,
                          size_t errlen);
/* A selector term's tags map at path (an object: the caller checks its type) appended to out[*n..], each key and
 * value non-empty, at most AWS_SPEC_MAX_TAGS in all, as Karpenter's CRD validates them. The strings stay the
 * document's (not copied). */
int aws_spec_term_tags(const ns_host *host, const aws_nodeclass_spec *s, const ns_json *tags, const char *path,
                       aws_spec_tag *out, size_t *n, char *err, size_t errlen);
/* Copies text into out->text and returns it, or NULL when the buffer is full. */
const char *aws_spec_keep(aws_nodeclass_spec *s, const char *text, size_t len);

#endif
