/*
 * The ECSNodeClass (karpenter.k8s.alibabacloud/v1alpha1) spec, read and checked: every field the reference port's
 * CRD declares, with the same rules (selector terms, aliases, kubelet settings, disks, tags, credentials), each
 * violation reported as NS_ERR_INVALID_CONFIG naming the field's path. Uses only the host's JSON getters.
 */
#ifndef NS_ALI_NODECLASS_SPEC_H
#define NS_ALI_NODECLASS_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include <nodesmith/provider.h>

#define ALI_API_VERSION "karpenter.k8s.alibabacloud/v1alpha1"
#define ALI_KIND "ECSNodeClass"
#define ALI_MAX_TERMS 30
#define ALI_MAX_TERM_TAGS 20
#define ALI_MAX_TAGS 20
#define ALI_MAX_DATA_DISKS 16
#define ALI_MAX_KUBELET_MAP 8

typedef struct ali_tag {
    char key[128];
    char value[256];
} ali_tag;

typedef struct ali_term {
    char id[64];
    char name[128];
    ali_tag tags[ALI_MAX_TERM_TAGS];
    size_t n_tags;
} ali_term;

typedef struct ali_image_term {
    char id[64];
    char family[32];  /* alias: AlibabaCloudLinux3 or ContainerOS */
    char version[64]; /* alias: "latest" or a pinned version */
} ali_image_term;

/* A kubelet reservation: -1 = unset. */
typedef struct ali_reserved {
    int64_t cpu_milli, memory_bytes, ephemeral_bytes, pid;
} ali_reserved;

typedef struct ali_kubelet {
    char cluster_dns[4][64];
    size_t n_cluster_dns;
    int64_t max_pods, pods_per_core, eviction_max_pod_grace, gc_high, gc_low; /* -1 = unset */
    int cpu_cfs_quota;                                                       /* -1 unset, 0, 1 */
    ali_reserved system_reserved, kube_reserved;
    ali_tag eviction_hard[ALI_MAX_KUBELET_MAP], eviction_soft[ALI_MAX_KUBELET_MAP],
        eviction_soft_grace[ALI_MAX_KUBELET_MAP];
    size_t n_eviction_hard, n_eviction_soft, n_eviction_soft_grace;
} ali_kubelet;

typedef struct ali_nodeclass_spec {
    ali_term vswitch_terms[ALI_MAX_TERMS];
    size_t n_vswitch_terms;
    bool balanced; /* vSwitchSelectionPolicy: balanced, else cheapest */
    ali_term sg_terms[ALI_MAX_TERMS];
    size_t n_sg_terms;
    ali_image_term image_terms[ALI_MAX_TERMS];
    size_t n_image_terms;
    ali_kubelet kubelet;
    char disk_categories[6][24]; /* systemDisk.categories, defaulted to all six */
    size_t n_disk_categories;
    int64_t system_disk_gib;   /* systemDisk.size or volumeSize; default 40 */
    char performance_level[4]; /* PL0..PL3, default PL0 */
    int64_t data_disk_gib[ALI_MAX_DATA_DISKS];
    char data_disk_device[ALI_MAX_DATA_DISKS][32];
    size_t n_data_disks;
    char data_disk_categories[6][24];
    size_t n_data_disk_categories;
    bool format_data_disk;
    ali_tag tags[ALI_MAX_TAGS];
    size_t n_tags;
    char resource_group_id[64];
    const char *user_data; /* points into the node class's JSON; NULL when unset */
    const char *password;  /* idem */
    char key_pair_name[130];
    bool password_inherit;
    char refusal[640]; /* when parse refused the node class: the message it recorded (for nodeclass_status) */
} ali_nodeclass_spec;

/* Reads and checks nc (apiVersion, kind and spec) into *out (calloc'd by the caller: it is large). NS_OK or
 * NS_ERR_INVALID_CONFIG via host->error, the message also in out->refusal. */
int ali_nodeclass_spec_parse(const ns_host *host, ns_host_ctx *ctx, const ns_nodeclass *nc, ali_nodeclass_spec *out);

/* A Kubernetes quantity ("100m", "1.5Gi", "20G") in base units, times 1000 when `milli`. -1 when malformed or
 * negative. Pure. */
int64_t ali_quantity(const char *s, bool milli);

#endif
