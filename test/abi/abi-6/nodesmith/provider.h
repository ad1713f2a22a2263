/*
 * nodesmith provider ABI.
 *
 * This is the only header a cloud provider plugin includes. A plugin is a shared object that exports one symbol,
 * NS_PROVIDER_ENTRY ("nodesmith_provider_entry"), returning a pointer to a static ns_provider table. The core hands
 * the plugin an ns_host table of upcalls (logging, errors, HTTP, JSON, clock, configuration); plugins never link the
 * core and never print.
 *
 * Versioning (SQLite VFS / OpenSSL dispatch style):
 *   - Every struct that crosses the boundary starts with `abi_version` and/or `struct_size`.
 *   - Fields are only ever appended. A field's comment names the ABI version that added it.
 *   - The side that receives a struct reads only the fields that fit in the struct_size it was given; the core copies
 *     a provider's table into a zeroed struct of its own, so a field beyond a provider's struct_size reads as NULL/0.
 *   - A NULL method means "unsupported": the core reports NS_ERR_UNSUPPORTED from one wrapper and never crashes.
 *   - ns_resources and the fixed-size buffers below are frozen: they never change size. New resource kinds go into
 *     ns_resources.extended.
 *
 * Required methods and data (the loader refuses a provider lacking one, naming it):
 *   ABI 1: init, destroy, list_instance_types, launch, terminate, list_instances, poll_events
 *   ABI 2: get_instance (a version-1 provider has none; the core falls back to scanning list_instances)
 *   ABI 3: nodeclass_kinds, at least one (a provider of an older ABI takes any node-class kind no loaded provider
 *          declares; see docs/provider-abi.md)
 *   ABI 4: nothing new is required (the table must reach nodeclass_status, which may be NULL)
 *   ABI 5: nothing new is required (the table must reach event_from_node_condition, which may be NULL)
 *   ABI 6: nothing new is required (the table must reach v1alpha5_defaults, which may be NULL)
 * Optional methods and data (NULL = unsupported):
 *   ABI 2: check_drift, validate_nodeclass, list_repair_policies, test_inject_fault;
 *          drift_fields, an optional field of ABI 2: read only when the table's struct_size covers it (it was added
 *          to ABI 2 after ABI 2 providers existed, so it never counts towards ABI 2's minimum size)
 *   ABI 4: nodeclass_status; ns_offering.labels (an optional field: the host reads it only when the offering's
 *          struct_size covers it, so an offering built against an older header simply has none)
 *   ABI 5: event_from_node_condition
 *   ABI 6: v1alpha5_defaults
 *
 * A released version is frozen: a new field is a new ABI version, or an optional field read with NS_HAS_FIELD that
 * never raises a version's minimum size. test/abi/ keeps every released copy of this header; a test plugin is built
 * against each and loaded by the loader tests. The _Static_asserts at the end of this file pin the layouts.
 *
 * Limits a provider may rely on (the core's call wrappers refuse a request that breaks one before calling):
 *   - client_token: 1 to NS_CLIENT_TOKEN_MAX characters of printable ASCII (EC2's ClientToken limit; other clouds'
 *     idempotency keys are as long or longer).
 *   - nodeclaim_name, nodepool_name, nodeclass name, cluster_name: 1 to NS_NAME_MAX - 1 bytes, so each fits the
 *     fixed-size name buffers of ns_instance. Node claim and NodePool names are at most 63 characters, DNS-1123
 *     subdomains (a NodePool name is the karpenter.sh/nodepool label value of its NodeClaims and Nodes, so Karpenter
 *     cannot create a NodeClaim for a longer one; the core refuses such a NodePool when it is loaded). Node class
 *     names are DNS-1123 subdomains of at most NS_NAME_MAX - 1 characters (the core refuses longer ones when they
 *     are loaded, although Kubernetes allows 253).
 *   - label keys and values, taint keys, values and effects: Kubernetes' own limits (a key at most 253 + 1 + 63
 *     characters, a value at most 63), never NULL except where a field's comment says so.
 *   - NULL means "any" only where a field's comment says so: ns_fault.method (every method), ns_fault.zone and
 *     ns_fault.capacity_type (every zone / capacity type of the type), ns_offering.reservation_id (no reservation),
 *     ns_taint.value (no value); ns_provider.options, drift_fields and optional methods NULL mean "none".
 *
 * Threading: after init returns, the core may call any method from any thread, several at once, except destroy,
 * which runs once after every other call has returned. A provider protects its own state. Every host upcall is
 * thread-safe. Any method may block (network I/O); the core calls them from worker threads, never from a thread that
 * must stay responsive.
 *
 * Errors: methods return NS_OK (0) or a negative ns_err category. Before returning an error a provider describes it
 * with host->error() (what failed, on which object, and why); it may attach detail with host->error_retry_after()
 * and host->error_unavailable_offering(). The record is per thread and belongs to the call in progress.
 *
 * Memory: data a provider passes to a callback (ns_instance_type_cb and friends) stays the provider's; the core
 * copies what it keeps before the callback returns. Out-structs (ns_launch_result, ns_instance) are the core's, with
 * fixed-size buffers the provider fills. The only memory that crosses the boundary to be freed by the other side is
 * documented next to the upcall that allocates it (host->free, host->http_response_free, host->json_free).
 */
#ifndef NODESMITH_PROVIDER_H
#define NODESMITH_PROVIDER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes. A core supports every version from NS_PROVIDER_ABI_MIN to this one. */
#define NS_PROVIDER_ABI_VERSION 6
#define NS_PROVIDER_ABI_MIN 1

#define NS_PROVIDER_ENTRY "nodesmith_provider_entry"

#if defined(__GNUC__)
#define NS_EXPORT __attribute__((visibility("default")))
#define NS_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define NS_EXPORT
#define NS_PRINTF(fmt, args)
#endif

/* Arrays of versioned structs (ns_offering, ns_launch_option) are laid out with the stride of the side that built
 * them, which may be older or newer than the reader. Index them with NS_AT, never with [i]. */
#define NS_AT(array, i) ((__typeof__(&(array)[0]))(const void *)((const char *)(array) + (size_t)(i) * (array)[0].struct_size))

/* True when a struct received from the other side is large enough to contain `member`. */
#define NS_HAS_FIELD(ptr, type, member)                                                                                \
    ((ptr)->struct_size >= offsetof(type, member) + sizeof(((type *)0)->member))

/* Error categories. The core acts on the category; the message (host->error) is for people. */
typedef enum ns_err {
    NS_OK = 0,
    NS_ERR_NOT_FOUND = -1,             /* the object named does not exist */
    NS_ERR_INSUFFICIENT_CAPACITY = -2, /* no acceptable offering had capacity; see error_unavailable_offering */
    NS_ERR_THROTTLED = -3,             /* retryable: rate limited or a transient server error; see retry_after */
    NS_ERR_UNAUTHORIZED = -4,          /* credentials missing, expired or lacking a permission */
    NS_ERR_INVALID_CONFIG = -5,        /* the provider's options or the node class are wrong */
    NS_ERR_UNSUPPORTED = -6,           /* the method or the request's feature is not supported */
    NS_ERR_INTERNAL = -7,              /* anything else, including allocation failure */
    NS_ERR_INVALID_ARGUMENT = -8,      /* the caller passed something the contract forbids */
} ns_err;

/* Fixed buffer sizes. Providers must NUL-terminate and may truncate nothing: an identifier that does not fit is an
 * NS_ERR_INTERNAL error, not a silently shortened name. */
#define NS_PROVIDER_ID_MAX 256
#define NS_NAME_MAX 128
#define NS_ZONE_MAX 64
#define NS_CAPACITY_TYPE_MAX 16
#define NS_DETAIL_MAX 512
#define NS_MAX_EXTENDED_RESOURCES 8
/* Longest client token the core passes to launch (see "Limits" above). */
#define NS_CLIENT_TOKEN_MAX 64

/* Capacity types, as the karpenter.sh/capacity-type label spells them. */
#define NS_CAPACITY_SPOT "spot"
#define NS_CAPACITY_ON_DEMAND "on-demand"
#define NS_CAPACITY_RESERVED "reserved"

/* ---------------------------------------------------------------------------------------------------------------
 * Plain data. Frozen layouts, with no struct_size: ns_extended_resource, ns_resources, ns_label, ns_taint,
 * ns_option and ns_http_header never change (they are embedded by value or laid out in arrays whose stride both
 * sides must agree on); the _Static_asserts at the end of this file hold them. Anything new goes into a new struct.
 */

typedef struct ns_extended_resource {
    char name[NS_NAME_MAX]; /* for example "nvidia.com/gpu" */
    int64_t value;          /* count, in the resource's own unit */
} ns_extended_resource;

typedef struct ns_resources {
    int64_t cpu_milli;
    int64_t memory_bytes;
    int64_t pods;
    int64_t ephemeral_storage_bytes;
    uint32_t n_extended;
    ns_extended_resource extended[NS_MAX_EXTENDED_RESOURCES];
} ns_resources;

typedef struct ns_label {
    const char *key;
    const char *value;
} ns_label;

typedef struct ns_taint {
    const char *key;
    const char *value; /* may be NULL */
    const char *effect; /* "NoSchedule", "PreferNoSchedule" or "NoExecute" */
} ns_taint;

/* Opaque JSON value owned by the core's JSON implementation; see the json_* upcalls. */
typedef struct ns_json ns_json;

/* A node class: the provider-specific half of a NodePool's template (EC2NodeClass, the sim's SimNodeClass, ...). */
typedef struct ns_nodeclass {
    uint32_t struct_size;
    const char *api_version; /* for example "karpenter.k8s.aws/v1" */
    const char *kind;        /* for example "EC2NodeClass" */
    const char *name;
    const ns_json *spec; /* the object's spec; never NULL (an empty object when the manifest has none) */
} ns_nodeclass;

/* ABI 3. One node-class kind a provider accepts: the core loads manifests of exactly the kinds its loaded providers
 * declare, and hands each such node class to its provider (validate_nodeclass when it is loaded or patched,
 * list_instance_types, launch, check_drift). An array of these is indexed with NS_AT. */
typedef struct ns_nodeclass_kind {
    uint32_t struct_size;
    const char *group;   /* API group, for example "karpenter.k8s.aws"; never empty (a node class is a custom resource) */
    const char *version; /* for example "v1"; apiVersion is group "/" version */
    const char *kind;    /* for example "EC2NodeClass" */
    uint32_t flags;      /* NS_NODECLASS_* */
} ns_nodeclass_kind;

/* spec.kubelet of this kind is Karpenter's kubelet configuration (as in EC2NodeClass v1): the core decodes it, refuses
 * it when malformed, and applies it to the NodePools that use the class. */
#define NS_NODECLASS_KUBELET 0x1u
/* The kind a karpenter.sh/v1beta1 NodePool's nodeClassRef means when it gives no kind and no apiVersion. */
#define NS_NODECLASS_DEFAULT_V1BETA1_REF 0x2u
/* The kind a karpenter.sh/v1alpha5 Provisioner's providerRef means when it gives no kind and no apiVersion. */
#define NS_NODECLASS_DEFAULT_V1ALPHA5_REF 0x4u

/* One place an instance type can be launched: zone x capacity type. */
typedef struct ns_offering {
    uint32_t struct_size;
    const char *zone;
    const char *capacity_type;  /* NS_CAPACITY_* */
    double price_per_hour;      /* in the provider's currency; >= 0 */
    bool available;             /* false: known but currently without capacity */
    const char *reservation_id; /* capacity reservation, for "reserved"; else NULL */
    /* ABI 4, optional (read only when struct_size covers them, NS_HAS_FIELD): labels of the offering's zone rather
     * than of the instance type, as Karpenter's providers put topology.k8s.aws/zone-id and
     * topology.k8s.alibabacloud/zone-id in each offering's requirements. Every offering of one zone carries the same
     * ones. A NodePool or pod requirement on such a key selects the zones whose offerings carry a matching value, and
     * the launched offering's labels go on the NodeClaim and the node. NULL/0 = none. */
    const ns_label *labels;
    size_t n_labels;
} ns_offering;

typedef struct ns_instance_type {
    uint32_t struct_size;
    const char *name;       /* node.kubernetes.io/instance-type */
    const ns_label *labels; /* well-known and provider labels, see docs/provider-abi.md */
    size_t n_labels;
    ns_resources capacity;           /* what the machine has */
    ns_resources kube_reserved;      /* kubelet --kube-reserved for this type */
    ns_resources system_reserved;    /* kubelet --system-reserved */
    ns_resources eviction_threshold; /* hard eviction thresholds expressed as reserved amounts */
    const ns_offering *offerings;
    size_t n_offerings;
} ns_instance_type;

/* One acceptable choice for a launch, ordered cheapest first by the core. */
typedef struct ns_launch_option {
    uint32_t struct_size;
    const char *instance_type;
    const char *zone;
    const char *capacity_type;
    double price_per_hour;
} ns_launch_option;

typedef struct ns_launch_request {
    uint32_t struct_size;
    const char *cluster_name;
    const char *nodeclaim_name;
    const char *nodepool_name;
    /* Idempotency key: a second launch with the same token returns the first launch's instance. */
    const char *client_token;
    const ns_nodeclass *nodeclass;
    const ns_launch_option *options; /* at least one */
    size_t n_options;
    const ns_label *labels; /* node labels the core will apply; providers may tag the instance with them */
    size_t n_labels;
    const ns_taint *taints;
    size_t n_taints;
    const ns_taint *startup_taints;
    size_t n_startup_taints;
    const ns_label *tags; /* extra cloud tags requested by the operator */
    size_t n_tags;
} ns_launch_request;

/* Filled by launch. The core zeroes it and sets struct_size before the call. */
typedef struct ns_launch_result {
    uint32_t struct_size;
    char provider_id[NS_PROVIDER_ID_MAX]; /* for example "aws:///us-west-2a/i-0123456789abcdef0" */
    char instance_type[NS_NAME_MAX];
    char zone[NS_ZONE_MAX];
    char capacity_type[NS_CAPACITY_TYPE_MAX];
    char image_id[NS_NAME_MAX]; /* may be empty */
    ns_resources allocatable;   /* capacity minus reservations and eviction thresholds */
    int64_t launch_time_ms;     /* unix epoch, by host->now_ms */
} ns_launch_result;

typedef enum ns_instance_state {
    NS_INSTANCE_PENDING = 1,
    NS_INSTANCE_RUNNING = 2,
    NS_INSTANCE_STOPPING = 3,
    NS_INSTANCE_STOPPED = 4,
    NS_INSTANCE_SHUTTING_DOWN = 5,
    NS_INSTANCE_TERMINATED = 6,
} ns_instance_state;

typedef struct ns_instance {
    uint32_t struct_size;
    char provider_id[NS_PROVIDER_ID_MAX];
    char instance_type[NS_NAME_MAX];
    char zone[NS_ZONE_MAX];
    char capacity_type[NS_CAPACITY_TYPE_MAX];
    char image_id[NS_NAME_MAX];
    char nodeclaim_name[NS_NAME_MAX]; /* from the instance's tags; empty if untagged */
    char nodepool_name[NS_NAME_MAX];
    char nodeclass_name[NS_NAME_MAX];
    ns_instance_state state;
    int64_t launch_time_ms;
} ns_instance;

typedef enum ns_event_kind {
    NS_EVENT_SPOT_INTERRUPTION = 1,       /* the instance will be reclaimed at deadline_ms */
    NS_EVENT_REBALANCE_RECOMMENDATION = 2, /* elevated risk of interruption */
    NS_EVENT_SCHEDULED_MAINTENANCE = 3,    /* the cloud will stop or retire the instance at deadline_ms */
    NS_EVENT_INSTANCE_STOPPING = 4,
    NS_EVENT_INSTANCE_TERMINATED = 5,
} ns_event_kind;

typedef struct ns_event {
    uint32_t struct_size;
    ns_event_kind kind;
    char id[NS_NAME_MAX]; /* unique per event, for de-duplication */
    char provider_id[NS_PROVIDER_ID_MAX];
    int64_t time_ms;     /* when the cloud emitted it */
    int64_t deadline_ms; /* 0 when the event has none */
    char detail[NS_DETAIL_MAX];
} ns_event;

/* ABI 5. One condition of a Node's status.conditions, as the core asks event_from_node_condition about it. Every
 * pointer is the core's, valid during the call, never NULL (an absent reason or message is ""). */
typedef struct ns_node_condition {
    uint32_t struct_size;
    const char *node_name;
    const char *provider_id;    /* the Node's spec.providerID: one of this provider's instances */
    const char *type;           /* for example "PreemptionScheduled" */
    const char *status;         /* "True" (the core asks about no other) */
    const char *reason;         /* for example "SpotEvictionIncoming" */
    const char *message;        /* as the agent that set the condition wrote it */
    int64_t last_transition_ms; /* lastTransitionTime, unix epoch ms; 0 when the Node gives none */
} ns_node_condition;

/* ABI 6. One requirement the cloud's Karpenter admission webhook added to a karpenter.sh/v1alpha5 Provisioner (see
 * v1alpha5_defaults). Every pointer is the provider's, valid during the callback. */
typedef struct ns_requirement_default {
    uint32_t struct_size;
    const char *key;           /* for example "kubernetes.io/arch" */
    const char *op;            /* "In", "NotIn", "Exists", "DoesNotExist", "Gt" or "Lt" (v1alpha5's operators) */
    const char *const *values; /* n_values of them: In and NotIn at least one, Gt and Lt one integer, else none */
    size_t n_values;
    /* The requirement is added only when the Provisioner has a requirement on none of these keys, whatever its
     * operator; `key` is one of them (a default never narrows a requirement the user wrote). */
    const char *const *unless_keys;
    size_t n_unless_keys;
} ns_requirement_default;

/* A repair policy (Karpenter's node auto-repair): a node condition that, held for toleration_ms, means the node is
 * unhealthy and should be replaced. */
typedef struct ns_repair_policy {
    uint32_t struct_size;
    const char *condition_type;   /* for example "Ready" */
    const char *condition_status; /* for example "False" */
    int64_t toleration_ms;
} ns_repair_policy;

/* Faults a provider's test hook can inject (optional method test_inject_fault). */
typedef enum ns_fault_kind {
    NS_FAULT_INSUFFICIENT_CAPACITY = 1, /* the named offering (type, zone, capacity type) has no capacity */
    NS_FAULT_THROTTLE = 2,              /* the next `count` calls fail with NS_ERR_THROTTLED */
    NS_FAULT_FAIL = 3,                  /* the next `count` calls fail with category `error` */
    NS_FAULT_DELAY = 4,                 /* the next `count` calls take `delay_ms` longer */
    NS_FAULT_INTERRUPT = 5,             /* queue an event of kind `event` for `provider_id` */
    NS_FAULT_CLEAR = 6,                 /* remove every injected fault */
} ns_fault_kind;

typedef struct ns_fault {
    uint32_t struct_size;
    ns_fault_kind kind;
    const char *instance_type; /* INSUFFICIENT_CAPACITY */
    const char *zone;
    const char *capacity_type;
    const char *method; /* THROTTLE/FAIL/DELAY: the method name ("launch", ...), or NULL for every method */
    uint32_t count;     /* THROTTLE/FAIL/DELAY */
    ns_err error;       /* FAIL */
    int64_t delay_ms;   /* DELAY */
    ns_event_kind event; /* INTERRUPT */
    const char *provider_id;
    int64_t deadline_ms;
} ns_fault;

/* ---------------------------------------------------------------------------------------------------------------
 * Host upcalls: what the core provides to providers.
 */

typedef enum ns_log_level { NS_LOG_DEBUG = 0, NS_LOG_INFO = 1, NS_LOG_WARN = 2, NS_LOG_ERROR = 3 } ns_log_level;

typedef enum ns_option_type { NS_OPT_STRING = 1, NS_OPT_INT = 2, NS_OPT_BOOL = 3, NS_OPT_DURATION = 4 } ns_option_type;

/* One entry of a provider's option table; the table ends with an entry whose key is NULL. */
typedef struct ns_option {
    const char *key;
    ns_option_type type;
    const char *default_value; /* as it would be written in the config file; NULL = no default (unset) */
    const char *description;
} ns_option;

typedef struct ns_http_header {
    const char *name;
    const char *value;
} ns_http_header;

typedef struct ns_http_request {
    uint32_t struct_size;
    const char *method; /* "GET", "POST", ... */
    const char *url;
    const ns_http_header *headers;
    size_t n_headers;
    const char *body; /* may be NULL */
    size_t body_len;
    int64_t timeout_ms; /* 0 = the host default (30 s) */
    /* Retries the host makes for connection failures, 429 and 5xx answers, with exponential backoff and full jitter.
     * -1 = the host default (3). Signing providers set 0 and retry themselves, since a retry must be re-signed. */
    int max_retries;
    /* ABI 3, optional: the host reads them only when struct_size covers them (NS_HAS_FIELD), so a provider built
     * against ABI 2 sends a shorter struct and gets the defaults. */
    /* A PEM file of trusted CAs for this request (the provider's own setting, such as AWS_CA_BUNDLE), replacing the
     * host's trust store; NULL = the host's ($NODESMITH_CA_BUNDLE, else the system's). Verification stays on. */
    const char *ca_bundle;
    /* The largest answer body accepted; a longer answer is refused with NS_ERR_INTERNAL, not retried. 0 = the
     * host default (64 MiB). */
    size_t max_response_bytes;
} ns_http_request;

/* Allocated by the host; release with host->http_response_free. */
typedef struct ns_http_response {
    uint32_t struct_size;
    long status;
    ns_http_header *headers; /* names lower-cased */
    size_t n_headers;
    char *body; /* NUL-terminated; body_len excludes the NUL */
    size_t body_len;
} ns_http_response;

/* Opaque per-provider handle the host passes back into every upcall. */
typedef struct ns_host_ctx ns_host_ctx;

typedef enum ns_json_type {
    NS_JSON_INVALID = 0,
    NS_JSON_NULL,
    NS_JSON_BOOL,
    NS_JSON_NUMBER,
    NS_JSON_STRING,
    NS_JSON_ARRAY,
    NS_JSON_OBJECT,
} ns_json_type;

typedef struct ns_host {
    uint32_t abi_version;
    uint32_t struct_size;

    /* ABI 1 */

    /* Structured log line. `fields` are key/value string pairs (n_fields pairs); values of keys that name secrets
     * (containing "secret", "token", "password", "credential", "authorization" or "signature") are redacted. */
    void (*log)(ns_host_ctx *ctx, ns_log_level level, const char *message, const ns_label *fields, size_t n_fields);

    /* Records the calling thread's error for the call in progress and returns `code`, so a provider can write
     * `return host->error(ctx, NS_ERR_NOT_FOUND, __FILE__, __LINE__, "instance %s not found", id);`. */
    int (*error)(ns_host_ctx *ctx, int code, const char *file, int line, const char *fmt, ...) NS_PRINTF(5, 6);
    /* Attach a retry hint (milliseconds) to the current error. */
    void (*error_retry_after)(ns_host_ctx *ctx, int64_t retry_after_ms);
    /* Attach one offering that had no capacity to the current NS_ERR_INSUFFICIENT_CAPACITY error. A launch that
     * succeeds may also name offerings it found without capacity on its way (no error recorded): the core's
     * unavailable-offerings cache keeps both; providers keep no cache of their own. */
    void (*error_unavailable_offering)(ns_host_ctx *ctx, const char *instance_type, const char *zone,
                                       const char *capacity_type);

    /* Clock: unix epoch milliseconds. Under simulation and in tests this is a controlled clock. */
    int64_t (*now_ms)(ns_host_ctx *ctx);
    /* Sleep on the same clock (returns at once under a simulated clock, which it advances). */
    void (*sleep_ms)(ns_host_ctx *ctx, int64_t ms);

    /* Configuration: the provider's declared options, validated and defaulted by the core before init. Strings are
     * owned by the host and live until destroy returns; an unset string option with no default yields NULL. */
    const char *(*option_string)(ns_host_ctx *ctx, const char *key);
    int64_t (*option_int)(ns_host_ctx *ctx, const char *key);
    bool (*option_bool)(ns_host_ctx *ctx, const char *key);
    int64_t (*option_duration_ms)(ns_host_ctx *ctx, const char *key);

    /* HTTP over libcurl with TLS verification on. Returns NS_OK and a response (any status) or an error category
     * for transport failures: NS_ERR_THROTTLED for timeouts and connection failures after the retries (worth trying
     * again later); NS_ERR_INVALID_CONFIG for a TLS certificate the trust store rejects or an unreadable CA bundle
     * (not retried: trying again cannot help); NS_ERR_INTERNAL for an answer over max_response_bytes. Connections
     * are kept alive and reused between requests. The host sends "User-Agent: nodesmith/<version> <provider>/<its
     * version>" unless the request has its own. On success *resp is allocated; the caller frees it with
     * http_response_free. May block; thread-safe. */
    int (*http_request)(ns_host_ctx *ctx, const ns_http_request *req, ns_http_response **resp);
    void (*http_response_free)(ns_http_response *resp); /* accepts NULL */

    /* Memory for strings the host returns (json_print). */
    void (*free)(void *ptr); /* accepts NULL */

    /* JSON. Values returned by json_parse/json_new_* are owned by the caller until freed with json_free or added to
     * a container with json_add (which takes ownership). Values returned by json_get/json_at belong to their
     * container. Getters return NULL/0/false when the value is absent or of another type. */
    ns_json *(*json_parse)(const char *text, size_t len); /* NULL on a syntax error */
    char *(*json_print)(const ns_json *value);           /* compact; free with host->free */
    void (*json_free)(ns_json *value);                   /* accepts NULL */
    ns_json_type (*json_type)(const ns_json *value);
    const ns_json *(*json_get)(const ns_json *object, const char *key);
    size_t (*json_size)(const ns_json *array_or_object);
    const ns_json *(*json_at)(const ns_json *array_or_object, size_t index);
    const char *(*json_key)(const ns_json *member); /* the key of an object member reached with json_at */
    const char *(*json_string)(const ns_json *value);
    double (*json_number)(const ns_json *value);
    bool (*json_bool)(const ns_json *value);
    ns_json *(*json_new_object)(void);
    ns_json *(*json_new_array)(void);
    ns_json *(*json_new_string)(const char *s);
    ns_json *(*json_new_number)(double n);
    ns_json *(*json_new_bool)(bool b);
    /* Appends to an array (key NULL) or sets a member of an object; takes ownership of item. NS_OK or an error. */
    int (*json_add)(ns_json *container, const char *key, ns_json *item);
} ns_host;

/* Convenience wrappers so provider code reads naturally. */
#define NS_ERROR(host, ctx, code, ...) ((host)->error((ctx), (code), __FILE__, __LINE__, __VA_ARGS__))

/* ---------------------------------------------------------------------------------------------------------------
 * The provider table.
 */

typedef int (*ns_instance_type_cb)(void *cb_ctx, const ns_instance_type *type);
typedef int (*ns_instance_cb)(void *cb_ctx, const ns_instance *instance);
typedef int (*ns_event_cb)(void *cb_ctx, const ns_event *event);
typedef int (*ns_repair_policy_cb)(void *cb_ctx, const ns_repair_policy *policy);
typedef int (*ns_requirement_default_cb)(void *cb_ctx, const ns_requirement_default *def);

typedef struct ns_provider {
    uint32_t abi_version; /* NS_PROVIDER_ABI_VERSION the provider was built against (or an older one it claims) */
    uint32_t struct_size; /* sizeof(ns_provider) as the provider was compiled */
    const char *name;     /* matches the file name: provider "aws" is aws.so */
    const char *version;  /* the provider's own release, for example "1.4.0" */
    const ns_option *options; /* option table ending with {NULL}; NULL = the provider takes no options */

    /* ABI 1 */

    /* Creates the provider's state. `ctx` identifies this provider in every upcall; keep it. Called once, before any
     * other method, with *state NULL. On failure the provider reports the error with host->error; if it had already
     * stored a partly built state in *state, the core still calls destroy on it (SQLite's xOpen/xClose rule), so a
     * provider can set *state first and let destroy release whatever was built. */
    int (*init)(const ns_host *host, ns_host_ctx *ctx, void **state);
    /* Frees the state, fully or partly built. Called once, after every other call has returned. */
    void (*destroy)(void *state);

    /* Every instance type the provider can launch for `nodeclass`, with its offerings, one callback per type. If the
     * callback returns non-zero, stop and return that value. Pointers passed to the callback are the provider's and
     * valid only during the callback. */
    int (*list_instance_types)(void *state, const ns_nodeclass *nodeclass, ns_instance_type_cb cb, void *cb_ctx);

    /* Starts exactly one instance from one of req->options (the provider may prefer its own allocation strategy
     * among them, for example price-capacity-optimized for spot) and fills *result. Same client_token twice: one
     * instance, the second call returns it again. NS_ERR_INSUFFICIENT_CAPACITY when no option had capacity, naming
     * each failed offering with error_unavailable_offering. */
    int (*launch)(void *state, const ns_launch_request *req, ns_launch_result *result);

    /* Terminates by provider ID. An instance that is already gone (terminated or unknown) is success with
     * *already_gone set; already_gone may be NULL. */
    int (*terminate)(void *state, const char *provider_id, bool *already_gone);

    /* Every instance this cluster launched and that is not yet terminated (for garbage collection). */
    int (*list_instances)(void *state, ns_instance_cb cb, void *cb_ctx);

    /* Returns pending events (each at most once, unless the callback returns non-zero, in which case the event is
     * kept for the next poll and polling stops). May long-poll for up to a few seconds. */
    int (*poll_events)(void *state, ns_event_cb cb, void *cb_ctx);

    /* ABI 2 */

    /* One instance by provider ID; NS_ERR_NOT_FOUND if it does not exist or is terminated. Required from ABI 2. */
    int (*get_instance)(void *state, const char *provider_id, ns_instance *out);

    /* Optional. Sets *drifted and, when drifted, a reason ("AMIDrift", "SubnetDrift", ...) into reason. */
    int (*check_drift)(void *state, const ns_instance *instance, const ns_nodeclass *nodeclass, bool *drifted,
                       char *reason, size_t reason_len);
    /* Optional. NS_OK or NS_ERR_INVALID_CONFIG with a message naming the offending field. */
    int (*validate_nodeclass)(void *state, const ns_nodeclass *nodeclass);
    /* Optional. The node conditions that mean a node of this provider needs replacing. */
    int (*list_repair_policies)(void *state, ns_repair_policy_cb cb, void *cb_ctx);
    /* Optional test hook, used by the conformance suite. Providers should refuse it (NS_ERR_UNSUPPORTED) unless the
     * operator enabled test hooks in the provider's options. */
    int (*test_inject_fault)(void *state, const ns_fault *fault);

    /* Optional data, not a method: an optional field of ABI 2, read only when struct_size covers it (NS_HAS_FIELD),
     * never part of ABI 2's minimum size. The node-class spec fields this provider's check_drift judges, written
     * "Kind.field" (for example "EC2NodeClass.amiSelectorTerms") and ending with NULL. The core leaves them out of the
     * hash it records for each node class, so a change to one of them is reported by the provider's check (AMIDrift,
     * SubnetDrift, ...) rather than as NodeClassDrifted, as Karpenter's hash:"ignore" fields are. NULL = none. */
    const char *const *drift_fields;

    /* ABI 3 */

    /* Required data: the node-class kinds this provider accepts, n_nodeclass_kinds >= 1 entries, indexed with NS_AT.
     * Static, like the rest of the table. Two loaded providers may not declare the same group, version and kind. */
    const ns_nodeclass_kind *nodeclass_kinds;
    size_t n_nodeclass_kinds;

    /* ABI 4 */

    /* Optional. What the provider resolved for `nodeclass`: the object's `.status` as Karpenter's provider for its
     * kind writes it (EC2NodeClass: subnets, securityGroups, amis, instanceProfile, capacityReservations;
     * ECSNodeClass: vSwitches, securityGroups, images; AKSNodeClass: images, kubernetesVersion; ...), built with the
     * host's json_new_* upcalls.
     *
     * On NS_OK *status is a JSON object whose ownership passes to the core (it frees it with json_free). It holds
     * the kind's resolved fields under Karpenter's names and "conditions": an array of at least one object
     *   {"type": T, "status": "True" | "False" | "Unknown", "reason": R, "message": M}
     * T: the provider's dependent condition types for the kind (Karpenter's: "SubnetsReady", "SecurityGroupsReady",
     *    "AMIsReady", "InstanceProfileReady", "ValidationSucceeded", ...), CamelCase, each once, never "Ready": the
     *    core derives the root "Ready" condition from them (True when all are True; else False when one is False,
     *    else Unknown; reason "UnhealthyDependents", message naming them, as Karpenter's operatorpkg does).
     * R: CamelCase, 1 to 1024 characters of [A-Za-z0-9_,:] starting with a letter (Kubernetes' condition reason),
     *    for example "SubnetsReady" when True and "SubnetsNotFound" when False.
     * M: at most 32768 characters; for a False or Unknown condition it says what failed and why, naming the
     *    selector or setting involved ("no subnet matches spec.subnetSelectorTerms[0] {tags: ...}").
     * The core owns "lastTransitionTime" and "observedGeneration" (the provider cannot know them): a condition
     * object must not carry them. Fields of the kind with nothing resolved are left out, never filled in.
     *
     * A resolution that fails (no subnet, image or security group matches, the instance profile or Kubernetes
     * version cannot be found, the node class is invalid) is NOT an error: it is NS_OK with the matching
     * condition False and the reason and message above; other fields hold what did resolve. An error return means
     * the status could not be determined at all (NS_ERR_THROTTLED, NS_ERR_UNAUTHORIZED for a missing permission,
     * NS_ERR_INTERNAL ...), described with host->error; *status must then be NULL (the core frees and ignores
     * anything left there). The core validates the object and refuses one that breaks these rules, naming the
     * provider and the field.
     *
     * `nodeclass` is one of the provider's declared kinds; its pointers are the core's, valid during the call. Same
     * threading as every method (any thread, concurrently, may block on the network); the call must not launch,
     * tag or change anything in the cloud. */
    int (*nodeclass_status)(void *state, const ns_nodeclass *nodeclass, ns_json **status);

    /* ABI 5 */

    /* Optional. Whether a Node condition announces an interruption of the node's instance: the notice a node agent
     * relays from the instance's own metadata service, which the controller cannot poll (Azure's Scheduled Events,
     * relayed by AKS's node problem detector as PreemptionScheduled and VMEventScheduled). The core asks about every
     * condition of status "True" other than "Ready" of every Node whose providerID belongs to the provider, at every
     * step while the condition holds, so the answer must come from the condition alone: no cloud call, no waiting.
     *
     * On NS_OK *is_event says whether the condition is an interruption; when it is, *event is filled as poll_events
     * fills one (the core zeroes it and sets struct_size before the call): kind, an id naming the announced event
     * (the same for every sighting of one announcement, so the core acts on it once), provider_id (the condition's),
     * time_ms (when it was announced, 0 when unknown), deadline_ms (when the instance goes; 0 when the notice gives
     * none, and the drain then starts at once), detail. A condition the provider does not know is NS_OK with
     * *is_event false, not an error; a condition it knows whose message it cannot read is an event with no
     * deadline (draining at once is never worse than not draining). An error return (NS_ERR_INTERNAL, described
     * with host->error) means the condition could not be judged; the core logs it and asks again at its next
     * step. */
    int (*event_from_node_condition)(void *state, const ns_node_condition *condition, ns_event *event,
                                     bool *is_event);

    /* ABI 6 */

    /* Optional (NULL: the cloud's Karpenter defaulted no requirement). The requirements the cloud's Karpenter
     * admission webhook added to a karpenter.sh/v1alpha5 Provisioner that had none on the same subject (AWS's added
     * kubernetes.io/os In [linux], kubernetes.io/arch In [amd64], karpenter.sh/capacity-type In [on-demand], and
     * karpenter.k8s.aws/instance-category In [c, m, r] with instance-generation Gt 2 when no instance-type, family,
     * category or generation requirement was written). v1beta1 dropped them, so a Provisioner read as a NodePool
     * gets them from here: the core names no cloud.
     *
     * Calls cb once per default, in the order the webhook appended them; if cb returns non-zero, stop and return
     * that value. The core asks once, right after init, and keeps a copy; the answer must not depend on anything
     * but the provider's build. The core refuses the provider (naming the default) when one breaks the rules of
     * ns_requirement_default or two share a key. Pointers passed to cb are the provider's, valid during the call. */
    int (*v1alpha5_defaults)(void *state, ns_requirement_default_cb cb, void *cb_ctx);
} ns_provider;

/* The one exported symbol. Returns the provider's static table; must not fail or allocate. */
typedef const ns_provider *(*ns_provider_entry_fn)(void);

/* ---------------------------------------------------------------------------------------------------------------
 * Layouts this header promises, in bytes on LP64 targets (the ones nodesmith is built and tested on), checked by
 * every compiler that includes the header. A failing assertion means a frozen layout changed: add a new ABI version
 * instead.
 */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define NS_ABI_ASSERT(cond, what) static_assert(cond, "nodesmith provider ABI: " what)
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define NS_ABI_ASSERT(cond, what) _Static_assert(cond, "nodesmith provider ABI: " what)
#else
#define NS_ABI_ASSERT(cond, what)
#endif
#if UINTPTR_MAX == UINT64_MAX
/* Frozen plain data. */
NS_ABI_ASSERT(sizeof(ns_extended_resource) == 136, "ns_extended_resource is frozen");
NS_ABI_ASSERT(offsetof(ns_resources, n_extended) == 32 && offsetof(ns_resources, extended) == 40 &&
                  sizeof(ns_resources) == 1128,
              "ns_resources is frozen");
NS_ABI_ASSERT(sizeof(ns_label) == 16 && offsetof(ns_label, value) == 8, "ns_label is frozen");
NS_ABI_ASSERT(sizeof(ns_taint) == 24 && offsetof(ns_taint, value) == 8 && offsetof(ns_taint, effect) == 16,
              "ns_taint is frozen");
NS_ABI_ASSERT(sizeof(ns_http_header) == 16 && offsetof(ns_http_header, value) == 8, "ns_http_header is frozen");
NS_ABI_ASSERT(sizeof(ns_option) == 32 && offsetof(ns_option, type) == 8 && offsetof(ns_option, default_value) == 16 &&
                  offsetof(ns_option, description) == 24,
              "ns_option is frozen");
/* Versioned structs: the fields of every released version keep their places. */
NS_ABI_ASSERT(offsetof(ns_provider, name) == 8 && offsetof(ns_provider, options) == 24 &&
                  offsetof(ns_provider, init) == 32,
              "ns_provider's header is frozen");
NS_ABI_ASSERT(offsetof(ns_provider, get_instance) == 88, "ns_provider: ABI 1 is the 88 bytes before get_instance");
NS_ABI_ASSERT(offsetof(ns_provider, drift_fields) == 128, "ns_provider: ABI 2 is the 128 bytes before drift_fields");
NS_ABI_ASSERT(offsetof(ns_provider, nodeclass_kinds) == 136 && offsetof(ns_provider, nodeclass_status) == 152,
              "ns_provider: ABI 3 ends after n_nodeclass_kinds (152 bytes)");
NS_ABI_ASSERT(offsetof(ns_provider, event_from_node_condition) == 160,
              "ns_provider: ABI 4 ends after nodeclass_status (160 bytes)");
NS_ABI_ASSERT(offsetof(ns_provider, v1alpha5_defaults) == 168,
              "ns_provider: ABI 5 ends after event_from_node_condition (168 bytes)");
NS_ABI_ASSERT(sizeof(ns_provider) == 176, "ns_provider: ABI 6 ends after v1alpha5_defaults (176 bytes)");
NS_ABI_ASSERT(offsetof(ns_requirement_default, key) == 8 && offsetof(ns_requirement_default, values) == 24 &&
                  offsetof(ns_requirement_default, unless_keys) == 40 && sizeof(ns_requirement_default) == 56,
              "ns_requirement_default: the layout ABI 6 released");
NS_ABI_ASSERT(offsetof(ns_node_condition, node_name) == 8 && offsetof(ns_node_condition, last_transition_ms) == 56 &&
                  sizeof(ns_node_condition) == 64,
              "ns_node_condition: the layout ABI 5 released");
NS_ABI_ASSERT(offsetof(ns_host, log) == 8 && sizeof(ns_host) == 248, "ns_host (ABI 1) is frozen at 248 bytes");
NS_ABI_ASSERT(offsetof(ns_nodeclass_kind, group) == 8 && offsetof(ns_nodeclass_kind, flags) == 32 &&
                  sizeof(ns_nodeclass_kind) == 40,
              "ns_nodeclass_kind (ABI 3) is frozen");
/* ns_offering was 48 bytes up to ABI 3; ABI 4's optional labels made it 64. */
NS_ABI_ASSERT(sizeof(ns_nodeclass) == 40 && sizeof(ns_offering) == 64 && sizeof(ns_instance_type) == 4560 &&
                  sizeof(ns_launch_option) == 40 && sizeof(ns_launch_request) == 128 &&
                  sizeof(ns_launch_result) == 1736 && sizeof(ns_instance) == 992 && sizeof(ns_event) == 920 &&
                  sizeof(ns_repair_policy) == 32 && sizeof(ns_fault) == 80 && sizeof(ns_http_request) == 88 &&
                  sizeof(ns_http_response) == 48,
              "a versioned struct changed size without a new ABI version");
#endif

#ifdef __cplusplus
}
#endif

#endif /* NODESMITH_PROVIDER_H */
