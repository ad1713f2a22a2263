/*
 * EC2 user data for a node: the AMI family's bootstrap merged with the node class's own userData, as Karpenter's
 * bootstrap package builds it.
 *
 *   AL2          MIME multipart (boundary "//"): the user's parts (a plain script becomes one text/x-shellscript
 *                part), then the /etc/eks/bootstrap.sh part.
 *   AL2023       MIME multipart: nodeadm's NodeConfig (application/node.eks.aws) first, then the user's parts (a
 *                plain document becomes one part: a NodeConfig when it reads as YAML, else a shell script).
 *   Bottlerocket TOML: the user's settings with settings.kubernetes' cluster, labels, taints, max pods and DNS set.
 *   Windows      PowerShell: the user's script, then Start-EKSBootstrap.ps1.
 *   Custom       the user's data unchanged.
 *
 * Pure: no host upcalls. The result is plain text; the caller base64-encodes it for EC2.
 */
#ifndef NS_AWS_USERDATA_H
#define NS_AWS_USERDATA_H

#include <stddef.h>
#include <stdint.h>

#include <nodesmith/provider.h>

#include "aws_nodeclass_spec.h"

typedef struct aws_bootstrap {
    aws_ami_family family;
    const char *cluster_name;
    const char *endpoint;     /* https://... */
    const char *ca_bundle;    /* base64 PEM, may be NULL */
    const char *cluster_cidr; /* the service CIDR (AL2023's NodeConfig), may be NULL */
    const char *cluster_dns;  /* kubelet clusterDNS[0], may be NULL */
    int64_t max_pods;         /* kubelet maxPods; 0 = the AMI's own ENI-limited default */
    const ns_label *labels;   /* node labels; the ones the kubelet sets itself are left out */
    size_t n_labels;
    const ns_taint *taints; /* taints and startup taints together */
    size_t n_taints;
    const char *custom; /* the node class's userData, may be NULL */
    /* spec.instanceStorePolicy RAID0: AL2's bootstrap.sh gets --local-disks raid0, AL2023's NodeConfig
     * instance.localStorage.strategy RAID0, Bottlerocket a bootstrap command that makes the array and binds the
     * kubelet's and containerd's directories to it (Windows and Custom: nothing, as Karpenter) */
    bool instance_store_raid0;
    bool bottlerocket_default_bind; /* Bottlerocket >= 1.46 binds its default directories without --dirs */
} aws_bootstrap;

/* Builds the user data into *out (malloc'd, free with free()). NS_OK; NS_ERR_INVALID_CONFIG when the custom user data
 * cannot be merged (malformed MIME or TOML; the reason goes into err); NS_ERR_INTERNAL when memory runs out. */
int aws_userdata_build(const aws_bootstrap *b, char **out, char *err, size_t errlen);

/* Whether the Bottlerocket of an alias version ("latest", "v1.46.0") binds the ephemeral-storage directories by
 * default (1.46.0 and later, "latest" taken as the newest, as Karpenter does); false when unknown (NULL: images
 * selected by name, ID or tags), where naming the directories works on every version. */
bool aws_bottlerocket_default_bind(const char *alias_version);

/* MIME multipart pieces (aws_userdata_mime.c), shared by the AL2 and AL2023 builders. */
#define AWS_MIME_MAX_PARTS 32
typedef struct aws_mime_part {
    char *headers;      /* the part's header lines, each ending in "\n" */
    char *content_type; /* its Content-Type value */
    char *body;
} aws_mime_part;
typedef struct aws_mime_parts {
    aws_mime_part items[AWS_MIME_MAX_PARTS];
    size_t n;
} aws_mime_parts;
/* True when text is a MIME document (it starts with a MIME-Version or Content-Type header). */
int aws_mime_is_mime(const char *text);
/* Splits a multipart document into parts appended to *out. NS_OK, NS_ERR_INVALID_CONFIG (reason in err) or
 * NS_ERR_INTERNAL. */
int aws_mime_split(const char *text, aws_mime_parts *out, char *err, size_t errlen);
/* Appends one part; headers NULL = just "Content-Type: <content_type>\n". NS_OK or NS_ERR_INTERNAL. */
int aws_mime_add(aws_mime_parts *parts, const char *content_type, const char *headers, const char *body);
/* The multipart/mixed document with boundary "//"; malloc'd, NULL when memory runs out. */
char *aws_mime_join(const aws_mime_parts *parts);
void aws_mime_parts_free(aws_mime_parts *parts); /* accepts a zeroed struct */

#endif
