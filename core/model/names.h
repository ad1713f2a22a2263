/*
 * Kubernetes object names and label values: validation against the API server's limits, and generateName.
 *
 * The rules are apimachinery's (pkg/util/validation): a DNS-1123 subdomain (object names: NodePool, NodeClaim, Pod,
 * node class, ...) is at most 253 characters of lower-case alphanumerics, '-' and '.', starting and ending with an
 * alphanumeric; a label value is at most 63 characters of alphanumerics, '-', '_' and '.', starting and ending with
 * an alphanumeric, or empty; a qualified name (a label key) is an optional DNS subdomain prefix and '/', then a name
 * of at most 63 such characters.
 */
#ifndef NS_NAMES_H
#define NS_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NS_K8S_NAME_MAX 253        /* DNS-1123 subdomain */
#define NS_K8S_LABEL_VALUE_MAX 63  /* label value, and the name part of a qualified name */
/* generateName: the prefix is cut to 58 characters and 5 random characters follow, so a generated name is at most
 * 63 characters (apiserver's names.SimpleNameGenerator). */
#define NS_GENERATED_PREFIX_MAX 58
#define NS_GENERATED_SUFFIX_LEN 5
#define NS_GENERATED_NAME_MAX (NS_GENERATED_PREFIX_MAX + NS_GENERATED_SUFFIX_LEN)

/* On false, *why says which rule failed (a static string). */
bool ns_name_is_dns_subdomain(const char *s, const char **why);
bool ns_label_value_is_valid(const char *s, const char **why);
bool ns_label_key_is_valid(const char *s, const char **why);

/* A source of generateName suffixes: splitmix64 over a seed, so a run is reproducible from its seed. */
typedef struct ns_name_rng {
    uint64_t state;
} ns_name_rng;

void ns_name_rng_seed(ns_name_rng *r, uint64_t seed);

/* Tells the generator a candidate is taken (an object of that name exists). */
typedef bool (*ns_name_taken_fn)(const char *name, void *ctx);

/* Kubernetes' generateName for prefix (Karpenter's NodeClaims use "<nodepool>-"): the prefix cut to
 * NS_GENERATED_PREFIX_MAX characters, then NS_GENERATED_SUFFIX_LEN characters of "bcdfghjklmnpqrstvwxz2456789".
 * buf needs NS_GENERATED_NAME_MAX + 1 bytes. Candidates that taken() reports are drawn again, at most 64 times (with
 * 27^5 suffixes a 64th collision means the caller's taken() is wrong); then NS_ERR_INTERNAL naming the prefix. */
int ns_name_generate(ns_name_rng *r, const char *prefix, ns_name_taken_fn taken, void *ctx, char *buf, size_t len);

#endif
