/* The bootstrap of each AMI family, merged with the node class's userData (see aws_userdata.h). */
#include "aws_userdata.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prov_buf.h"
#include "aws_toml.h"

#define SHELL_PART "text/x-shellscript; charset=\"us-ascii\""
#define NODECONFIG_PART "application/node.eks.aws"

/* True when the label prefix (the part before '/') is `domain` or one of its subdomains. */
static bool in_domain(const char *prefix, size_t plen, const char *domain)
{
    size_t dlen = strlen(domain);
    if (plen == dlen)
        return strncmp(prefix, domain, dlen) == 0;
    return plen > dlen && prefix[plen - dlen - 1] == '.' && strncmp(prefix + plen - dlen, domain, dlen) == 0;
}

/* Labels the kubelet sets itself or refuses to take from --node-labels. */
static bool kubelet_owned_label(const char *key)
{
    static const char *const OWN[] = {"kubernetes.io/arch", "kubernetes.io/os", "kubernetes.io/hostname",
                                      "node.kubernetes.io/instance-type", "node.kubernetes.io/windows-build",
                                      "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
                                      "beta.kubernetes.io/arch", "beta.kubernetes.io/os",
                                      "beta.kubernetes.io/instance-type", "failure-domain.beta.kubernetes.io/zone",
                                      "failure-domain.beta.kubernetes.io/region", NULL};
    for (size_t i = 0; OWN[i]; i++)
        if (strcmp(OWN[i], key) == 0)
            return true;
    const char *slash = strchr(key, '/');
    if (!slash)
        return false;
    size_t plen = (size_t)(slash - key);
    return (in_domain(key, plen, "kubernetes.io") || in_domain(key, plen, "k8s.io")) &&
           !in_domain(key, plen, "kubelet.kubernetes.io") && !in_domain(key, plen, "node.kubernetes.io");
}

static int by_key(const void *a, const void *b)
{
    return strcmp((*(const ns_label *const *)a)->key, (*(const ns_label *const *)b)->key);
}

/* The labels to pass, sorted by key (Karpenter sorts them); returns how many. */
static size_t node_labels(const aws_bootstrap *b, const ns_label **out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < b->n_labels && n < cap; i++)
        if (b->labels[i].key && b->labels[i].value && !kubelet_owned_label(b->labels[i].key))
            out[n++] = &b->labels[i];
    qsort(out, n, sizeof(*out), by_key);
    return n;
}

/* "--node-labels=\"a=b,c=d\"", "--register-with-taints=\"k=v:NoSchedule\"" and "--max-pods=N", space separated. */
static void kubelet_extra_args(const aws_bootstrap *b, prov_buf *out)
{
    const ns_label *labels[64];
    size_t n = node_labels(b, labels, 64);
    const char *sep = "";
    if (n) {
        prov_buf_puts(out, "--node-labels=\"");
        for (size_t i = 0; i < n; i++)
            prov_buf_printf(out, "%s%s=%s", i ? "," : "", labels[i]->key, labels[i]->value);
        prov_buf_putc(out, '"');
        sep = " ";
    }
    if (b->n_taints) {
        prov_buf_printf(out, "%s--register-with-taints=\"", sep);
        for (size_t i = 0; i < b->n_taints; i++)
            prov_buf_printf(out, "%s%s=%s:%s", i ? "," : "", b->taints[i].key,
                           b->taints[i].value ? b->taints[i].value : "", b->taints[i].effect);
        prov_buf_putc(out, '"');
        sep = " ";
    }
    if (b->max_pods > 0)
        prov_buf_printf(out, "%s--max-pods=%lld", sep, (long long)b->max_pods);
}

/* Values end up inside single-quoted shell and PowerShell strings: a quote in one would break out of it. */
static int check_quotes(const aws_bootstrap *b, char *err, size_t errlen)
{
    const char *what[] = {"cluster name", "cluster endpoint", "cluster CA bundle", "cluster DNS"};
    const char *vals[] = {b->cluster_name, b->endpoint, b->ca_bundle, b->cluster_dns};
    for (size_t i = 0; i < 4; i++)
        if (vals[i] && (strchr(vals[i], '\'') || strchr(vals[i], '\n'))) {
            snprintf(err, errlen, "user data: the %s contains a quote or a newline", what[i]);
            return NS_ERR_INVALID_CONFIG;
        }
    for (size_t i = 0; i < b->n_labels; i++)
        if (strpbrk(b->labels[i].key, "'\",= \n") || (b->labels[i].value && strpbrk(b->labels[i].value, "'\",= \n"))) {
            snprintf(err, errlen, "user data: node label %s has characters a label cannot have", b->labels[i].key);
            return NS_ERR_INVALID_CONFIG;
        }
    for (size_t i = 0; i < b->n_taints; i++)
        if (!b->taints[i].key || !b->taints[i].effect || strpbrk(b->taints[i].key, "'\",=: \n") ||
            strpbrk(b->taints[i].effect, "'\",=: \n") ||
            (b->taints[i].value && strpbrk(b->taints[i].value, "'\",=: \n"))) {
            snprintf(err, errlen, "user data: taint %s has characters a taint cannot have",
                     b->taints[i].key ? b->taints[i].key : "(no key)");
            return NS_ERR_INVALID_CONFIG;
        }
    return NS_OK;
}

/* ---- AL2: bootstrap.sh ---- */

static void al2_script(const aws_bootstrap *b, prov_buf *out)
{
    prov_buf_puts(out, "#!/bin/bash -xe\n");
    prov_buf_puts(out, "exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n");
    prov_buf_printf(out, "/etc/eks/bootstrap.sh '%s' --apiserver-endpoint '%s'", b->cluster_name, b->endpoint);
    if (b->ca_bundle)
        prov_buf_printf(out, " --b64-cluster-ca '%s'", b->ca_bundle);
    if (b->cluster_dns && strchr(b->cluster_dns, ':'))
        prov_buf_puts(out, " \\\n--ip-family ipv6");
    if (b->cluster_dns)
        prov_buf_printf(out, " \\\n--dns-cluster-ip '%s'", b->cluster_dns);
    if (b->max_pods > 0)
        prov_buf_puts(out, " \\\n--use-max-pods false");
    prov_buf args = PROV_BUF_INIT;
    kubelet_extra_args(b, &args);
    if (args.len)
        prov_buf_printf(out, " \\\n--kubelet-extra-args '%s'", prov_buf_str(&args));
    if (b->instance_store_raid0)
        prov_buf_puts(out, " \\\n--local-disks raid0");
    out->failed |= prov_buf_failed(&args);
    prov_buf_free(&args);
}

static int custom_parts(const char *custom, const char *plain_type, aws_mime_parts *parts, char *err, size_t errlen)
{
    if (!custom || !*custom)
        return NS_OK;
    if (aws_mime_is_mime(custom))
        return aws_mime_split(custom, parts, err, errlen);
    return aws_mime_add(parts, plain_type, NULL, custom);
}

static int build_al2(const aws_bootstrap *b, char **out, char *err, size_t errlen)
{
    aws_mime_parts parts = {.n = 0};
    prov_buf script = PROV_BUF_INIT;
    int rc = custom_parts(b->custom, SHELL_PART, &parts, err, errlen);
    if (rc == NS_OK) {
        al2_script(b, &script);
        const char *text = prov_buf_str(&script);
        rc = prov_buf_failed(&script) ? NS_ERR_INTERNAL : aws_mime_add(&parts, SHELL_PART, NULL, text);
    }
    if (rc == NS_OK && !(*out = aws_mime_join(&parts)))
        rc = NS_ERR_INTERNAL;
    prov_buf_free(&script);
    aws_mime_parts_free(&parts);
    return rc;
}

/* ---- AL2023: nodeadm NodeConfig ---- */

/* A YAML single-quoted scalar. */
static void yaml_str(prov_buf *out, const char *s)
{
    prov_buf_putc(out, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            prov_buf_putc(out, '\'');
        prov_buf_putc(out, *s);
    }
    prov_buf_putc(out, '\'');
}

static void nodeconfig(const aws_bootstrap *b, prov_buf *out)
{
    prov_buf_puts(out, "# Karpenter Generated NodeConfig\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n"
                      "spec:\n  cluster:\n    apiServerEndpoint: ");
    yaml_str(out, b->endpoint);
    if (b->ca_bundle) {
        prov_buf_puts(out, "\n    certificateAuthority: ");
        yaml_str(out, b->ca_bundle);
    }
    if (b->cluster_cidr) {
        prov_buf_puts(out, "\n    cidr: ");
        yaml_str(out, b->cluster_cidr);
    }
    prov_buf_puts(out, "\n    name: ");
    yaml_str(out, b->cluster_name);
    prov_buf_putc(out, '\n');
    if (b->instance_store_raid0)
        prov_buf_puts(out, "  instance:\n    localStorage:\n      strategy: RAID0\n");
    const ns_label *labels[64];
    size_t n_labels = node_labels(b, labels, 64);
    bool config = b->cluster_dns || b->max_pods > 0 || b->n_taints;
    if (!config && !n_labels)
        return;
    prov_buf_puts(out, "  kubelet:\n");
    if (config) {
        prov_buf_puts(out, "    config:\n");
        if (b->cluster_dns) {
            prov_buf_puts(out, "      clusterDNS:\n      - ");
            yaml_str(out, b->cluster_dns);
            prov_buf_putc(out, '\n');
        }
        if (b->max_pods > 0)
            prov_buf_printf(out, "      maxPods: %lld\n", (long long)b->max_pods);
        if (b->n_taints)
            prov_buf_puts(out, "      registerWithTaints:\n");
        for (size_t i = 0; i < b->n_taints; i++) {
            prov_buf_puts(out, "      - effect: ");
            yaml_str(out, b->taints[i].effect);
            prov_buf_puts(out, "\n        key: ");
            yaml_str(out, b->taints[i].key);
            if (b->taints[i].value && *b->taints[i].value) {
                prov_buf_puts(out, "\n        value: ");
                yaml_str(out, b->taints[i].value);
            }
            prov_buf_putc(out, '\n');
        }
    }
    if (n_labels) {
        prov_buf flag = PROV_BUF_INIT;
        prov_buf_puts(&flag, "--node-labels=\"");
        for (size_t i = 0; i < n_labels; i++)
            prov_buf_printf(&flag, "%s%s=%s", i ? "," : "", labels[i]->key, labels[i]->value);
        prov_buf_putc(&flag, '"');
        prov_buf_puts(out, "    flags:\n    - ");
        yaml_str(out, prov_buf_str(&flag));
        prov_buf_putc(out, '\n');
        out->failed |= prov_buf_failed(&flag);
        prov_buf_free(&flag);
    }
}

/* Karpenter decides by whether the document unmarshals as a YAML map: here, whether its first line that is not a
 * comment is a "key:" line. */
static bool looks_like_yaml_map(const char *text)
{
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p && *p != '#' && *p != '\n' && *p != '\r') {
            const char *k = p;
            while (isalnum((unsigned char)*k) || *k == '_' || *k == '-' || *k == '.')
                k++;
            return k > p && *k == ':' && (k[1] == ' ' || k[1] == '\n' || k[1] == '\r' || k[1] == '\0');
        }
        line = end ? end + 1 : NULL;
    }
    return false;
}

static int build_al2023(const aws_bootstrap *b, char **out, char *err, size_t errlen)
{
    aws_mime_parts parts = {.n = 0}, custom = {.n = 0};
    prov_buf config = PROV_BUF_INIT;
    nodeconfig(b, &config);
    int rc = prov_buf_failed(&config) ? NS_ERR_INTERNAL
                                     : aws_mime_add(&parts, NODECONFIG_PART, NULL, prov_buf_str(&config));
    if (rc == NS_OK && b->custom && *b->custom)
        rc = custom_parts(b->custom, looks_like_yaml_map(b->custom) ? NODECONFIG_PART : SHELL_PART, &custom, err,
                          errlen);
    /* nodeadm reads each part's content type only; the user's other headers are not carried over */
    for (size_t i = 0; rc == NS_OK && i < custom.n; i++)
        rc = aws_mime_add(&parts, custom.items[i].content_type, NULL, custom.items[i].body);
    if (rc == NS_OK && !(*out = aws_mime_join(&parts)))
        rc = NS_ERR_INTERNAL;
    prov_buf_free(&config);
    aws_mime_parts_free(&parts);
    aws_mime_parts_free(&custom);
    return rc;
}

/* ---- Bottlerocket: TOML settings ---- */

static int toml_set_string(aws_toml *t, const char *key, const char *value)
{
    char *q = aws_toml_quote(value);
    int rc = q ? aws_toml_set(t, key, q) : NS_ERR_INTERNAL;
    free(q);
    return rc;
}

/* Karpenter's bootstrap command for RAID0: make the array of the instance stores at every boot, then bind the kubelet's,
 * containerd's and the pod logs' directories to it; essential, so a node without it never joins. It replaces a user's
 * command of the same name. */
static int mount_instance_storage(const aws_bootstrap *b, aws_toml *doc)
{
    static const char *const PATH[] = {"settings", "bootstrap-commands", "000-mount-instance-storage"};
    aws_toml *cmd = aws_toml_table(doc, PATH, 3, true);
    if (!cmd)
        return NS_ERR_INVALID_ARGUMENT;
    aws_toml_clear(cmd);
    const char *commands = b->bottlerocket_default_bind
                               ? "[[\"apiclient\", \"ephemeral-storage\", \"init\"], "
                                 "[\"apiclient\", \"ephemeral-storage\", \"bind\"]]"
                               : "[[\"apiclient\", \"ephemeral-storage\", \"init\"], "
                                 "[\"apiclient\", \"ephemeral-storage\", \"bind\", \"--dirs\", \"/var/lib/containerd\", "
                                 "\"/var/lib/kubelet\", \"/var/log/pods\"]]";
    int rc = aws_toml_set(cmd, "commands", commands);
    if (rc == NS_OK)
        rc = aws_toml_set(cmd, "mode", "\"always\"");
    if (rc == NS_OK)
        rc = aws_toml_set(cmd, "essential", "true");
    return rc;
}

bool aws_bottlerocket_default_bind(const char *alias_version)
{
    if (!alias_version)
        return false;
    if (strcmp(alias_version, "latest") == 0)
        return true;
    unsigned major = 0, minor = 0, patch = 0;
    if (sscanf(alias_version, "v%u.%u.%u", &major, &minor, &patch) != 3)
        return false;
    return major > 1 || (major == 1 && minor >= 46);
}

static int bottlerocket_settings(const aws_bootstrap *b, aws_toml *doc)
{
    static const char *const K8S[] = {"settings", "kubernetes"};
    static const char *const AUTOSCALING[] = {"settings", "autoscaling"};
    aws_toml *k8s = aws_toml_table(doc, K8S, 2, true);
    if (!k8s)
        return NS_ERR_INVALID_ARGUMENT;
    aws_toml *autoscaling = aws_toml_table(doc, AUTOSCALING, 2, false);
    /* Karpenter's nodes never join an Auto Scaling group, so waiting for one would block the kubelet. */
    if (autoscaling && aws_toml_get(autoscaling, "should-wait") && aws_toml_set(autoscaling, "should-wait", "false"))
        return NS_ERR_INTERNAL;
    int rc = toml_set_string(k8s, "cluster-name", b->cluster_name);
    if (rc == NS_OK)
        rc = toml_set_string(k8s, "api-server", b->endpoint);
    if (rc == NS_OK && b->ca_bundle)
        rc = toml_set_string(k8s, "cluster-certificate", b->ca_bundle);
    if (rc == NS_OK && b->cluster_dns)
        rc = toml_set_string(k8s, "cluster-dns-ip", b->cluster_dns);
    if (rc == NS_OK && b->max_pods > 0) {
        char n[24];
        snprintf(n, sizeof(n), "%lld", (long long)b->max_pods);
        rc = aws_toml_set(k8s, "max-pods", n);
    }
    const ns_label *labels[64];
    size_t n_labels = node_labels(b, labels, 64);
    const char *const node_labels_path[] = {"node-labels"};
    aws_toml *lt = n_labels ? aws_toml_table(k8s, node_labels_path, 1, true) : NULL;
    if (rc == NS_OK && n_labels && !lt)
        rc = NS_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; rc == NS_OK && i < n_labels; i++)
        rc = toml_set_string(lt, labels[i]->key, labels[i]->value);
    /* Karpenter replaces the user's taints with the NodePool's */
    const char *const taints_path[] = {"node-taints"};
    aws_toml *tt = aws_toml_table(k8s, taints_path, 1, b->n_taints > 0);
    if (tt)
        aws_toml_clear(tt);
    else if (b->n_taints && rc == NS_OK)
        rc = NS_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; rc == NS_OK && i < b->n_taints; i++) {
        if (aws_toml_get(tt, b->taints[i].key))
            continue; /* written with the first taint of this key, below */
        prov_buf list = PROV_BUF_INIT;
        prov_buf_putc(&list, '[');
        for (size_t k = i; k < b->n_taints; k++) {
            if (strcmp(b->taints[k].key, b->taints[i].key) != 0)
                continue;
            prov_buf item = PROV_BUF_INIT;
            prov_buf_printf(&item, "%s:%s", b->taints[k].value ? b->taints[k].value : "", b->taints[k].effect);
            char *q = aws_toml_quote(prov_buf_str(&item));
            prov_buf_printf(&list, "%s%s", list.len > 1 ? ", " : "", q ? q : "");
            list.failed |= !q || prov_buf_failed(&item);
            free(q);
            prov_buf_free(&item);
        }
        prov_buf_putc(&list, ']');
        rc = prov_buf_failed(&list) ? NS_ERR_INTERNAL : aws_toml_set(tt, b->taints[i].key, prov_buf_str(&list));
        prov_buf_free(&list);
    }
    if (rc == NS_OK && b->instance_store_raid0)
        rc = mount_instance_storage(b, doc);
    return rc;
}

static int build_bottlerocket(const aws_bootstrap *b, char **out, char *err, size_t errlen)
{
    aws_toml *doc = NULL;
    char why[256];
    int rc = aws_toml_parse(b->custom, &doc, why, sizeof(why));
    if (rc == NS_ERR_INVALID_ARGUMENT) {
        snprintf(err, errlen, "user data: Bottlerocket userData is not TOML: %s", why);
        return NS_ERR_INVALID_CONFIG;
    }
    if (rc == NS_OK && (rc = bottlerocket_settings(b, doc)) == NS_ERR_INVALID_ARGUMENT) {
        snprintf(err, errlen, "user data: Bottlerocket userData sets a key the provider needs as a table (under "
                              "settings.kubernetes%s) to a value, or a table where it writes a value",
                 b->instance_store_raid0 ? ", or settings.bootstrap-commands for instanceStorePolicy RAID0" : "");
        rc = NS_ERR_INVALID_CONFIG;
    }
    if (rc == NS_OK && !(*out = aws_toml_serialize(doc)))
        rc = NS_ERR_INTERNAL;
    aws_toml_free(doc);
    return rc;
}

/* ---- Windows: Start-EKSBootstrap.ps1 ---- */

static int build_windows(const aws_bootstrap *b, char **out)
{
    prov_buf ps = PROV_BUF_INIT;
    prov_buf_puts(&ps, "<powershell>\n");
    if (b->custom && *b->custom) {
        /* the user's script may come wrapped in its own tags; one pair is enough */
        const char *body = b->custom;
        size_t len = strlen(body);
        while (len && isspace((unsigned char)body[len - 1]))
            len--;
        if (strncmp(body, "<powershell>", 12) == 0 && len >= 25 && strncmp(body + len - 13, "</powershell>", 13) == 0) {
            body += 12;
            len -= 25;
        }
        while (len && (*body == '\n' || *body == '\r')) {
            body++;
            len--;
        }
        while (len && isspace((unsigned char)body[len - 1]))
            len--;
        prov_buf_append(&ps, body, len);
        prov_buf_putc(&ps, '\n');
    }
    prov_buf_puts(&ps, "[string]$EKSBootstrapScriptFile = \"$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1\"\n");
    prov_buf_printf(&ps, "& $EKSBootstrapScriptFile -EKSClusterName '%s' -APIServerEndpoint '%s'", b->cluster_name,
                   b->endpoint);
    if (b->ca_bundle)
        prov_buf_printf(&ps, " -Base64ClusterCA '%s'", b->ca_bundle);
    prov_buf args = PROV_BUF_INIT;
    kubelet_extra_args(b, &args);
    if (args.len)
        prov_buf_printf(&ps, " -KubeletExtraArgs '%s'", prov_buf_str(&args));
    ps.failed |= prov_buf_failed(&args);
    prov_buf_free(&args);
    if (b->cluster_dns)
        prov_buf_printf(&ps, " -DNSClusterIP '%s'", b->cluster_dns);
    prov_buf_puts(&ps, "\n</powershell>");
    *out = prov_buf_take(&ps);
    return *out ? NS_OK : NS_ERR_INTERNAL;
}

int aws_userdata_build(const aws_bootstrap *b, char **out, char *err, size_t errlen)
{
    *out = NULL;
    if (b->family == AWS_FAMILY_CUSTOM) {
        *out = strdup(b->custom ? b->custom : "");
        return *out ? NS_OK : NS_ERR_INTERNAL;
    }
    if (!b->cluster_name || !b->endpoint) {
        snprintf(err, errlen, "user data: the %s bootstrap needs the cluster's name and API endpoint",
                 aws_ami_family_name(b->family));
        return NS_ERR_INVALID_CONFIG;
    }
    int rc = check_quotes(b, err, errlen);
    if (rc != NS_OK)
        return rc;
    switch (b->family) {
    case AWS_FAMILY_AL2:
        rc = build_al2(b, out, err, errlen);
        break;
    case AWS_FAMILY_AL2023:
        rc = build_al2023(b, out, err, errlen);
        break;
    case AWS_FAMILY_BOTTLEROCKET:
        rc = build_bottlerocket(b, out, err, errlen);
        break;
    default:
        rc = build_windows(b, out);
        break;
    }
    if (rc == NS_ERR_INTERNAL)
        snprintf(err, errlen, "out of memory building user data");
    return rc;
}
