/*
 * AKSNodeClass (karpenter.azure.com/v1beta1 and v1alpha2): the spec read into a plain struct and checked field by
 * field; every refusal names the node class, the field and why. Uses only the host's JSON getters and error upcall.
 *
 * Extensions beyond the reference port (docs/providers/azure.md marks them): spec.imageID (an image of the user's
 * own: a gallery image version, a managed image, a community or shared gallery image), spec.userData (replaces the
 * AKS bootstrap in customData), and the image families Windows2019 and Windows2022.
 */
#ifndef NS_AZURE_NODECLASS_H
#define NS_AZURE_NODECLASS_H

#include <stdbool.h>
#include <stdint.h>

#include <nodesmith/provider.h>

#define AZ_MAX_TAGS 50
#define AZ_MAX_SYSCTLS 16

typedef struct az_kubelet {
    char cpu_manager_policy[16];     /* "" = unset; none | static */
    int cpu_cfs_quota;               /* -1 unset, 0 false, 1 true */
    char cpu_cfs_quota_period[16];   /* a duration, "" = unset */
    int image_gc_high;               /* -1 unset, else 0..100 */
    int image_gc_low;                /* -1 unset */
    char topology_manager_policy[24];
    char allowed_unsafe_sysctls[AZ_MAX_SYSCTLS][64];
    size_t n_sysctls;
    char container_log_max_size[16];
    int container_log_max_files; /* -1 unset */
    int64_t pod_pids_limit;      /* -1 unset */
    int fail_swap_on;            /* -1 unset */
} az_kubelet;

typedef struct az_nodeclass {
    char name[NS_NAME_MAX];
    bool v1alpha2;
    char subnet[512];      /* "" = the provider's default (option vnet_subnet_id) */
    int os_disk_gb;        /* default 128 */
    char image_family[16]; /* Ubuntu, Ubuntu2204, Ubuntu2404, AzureLinux, Windows2019, Windows2022 */
    bool windows;
    bool fips;
    char tags[AZ_MAX_TAGS][2][257];
    size_t n_tags;
    az_kubelet kubelet;
    int max_pods;          /* 0 = the default for the network plugin */
    bool encryption_at_host;
    bool trusted_launch;
    char local_dns_mode[16]; /* "" unset; Preferred | Required | Disabled */
    char image_id[512];      /* extension: "" = the AKS node image of the family */
    char image_version[64];  /* v1alpha2 imageVersion: "" = the provider's option */
    const char *user_data;   /* extension: borrowed from the node class's spec; NULL = the AKS bootstrap */
    char why[NS_DETAIL_MAX]; /* when parsing refused the node class: the message it reported */
} az_nodeclass;

/* Reads and checks nc. `default_subnet` fills spec.vnetSubnetID when absent (it must then be set). NS_OK or
 * NS_ERR_INVALID_CONFIG with a message naming the field, also kept in out->why (or NS_ERR_INVALID_ARGUMENT for a
 * kind that is not AKSNodeClass). */
int az_nodeclass_parse(const ns_host *h, ns_host_ctx *ctx, const ns_nodeclass *nc, const char *default_subnet,
                       az_nodeclass *out);

/* The ARM ID of a subnet split into its parts (case kept); false when it is not a subnet ID. */
bool az_subnet_id_valid(const char *id);

#endif
