/* Bootstrap user data. ack mode: "#!/bin/bash" + ACK's attach script (DescribeClusterAttachScripts, asked once) with
 * the node's labels (k8s.aliyun.com, ack.aliyun.com, the claim's labels, the zone ID read from the metadata service
 * on the node), its taints (karpenter.sh/unregistered, the pool's taints and startup taints) and the kubelet settings
 * as ACK's --node-config; merged with the node class userData as a MIME multi-part (the user's part first). custom
 * mode: the node class userData alone. The result is base64, as ECS takes it. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prov_buf.h"
#include "ali_provider.h"

static void taint_list(prov_buf *b, const ns_taint *t, size_t n, bool *first)
{
    for (size_t i = 0; i < n; i++) {
        prov_buf_printf(b, "%s%s%s%s:%s", *first ? "" : ",", t[i].key, t[i].value && *t[i].value ? "=" : "",
                       t[i].value ? t[i].value : "", t[i].effect);
        *first = false;
    }
}

static void json_map(prov_buf *b, const char *name, const ali_tag *m, size_t n, bool *first)
{
    if (!n)
        return;
    prov_buf_printf(b, "%s\"%s\":{", *first ? "" : ",", name);
    for (size_t i = 0; i < n; i++)
        prov_buf_printf(b, "%s\"%s\":\"%s\"", i ? "," : "", m[i].key, m[i].value);
    prov_buf_puts(b, "}");
    *first = false;
}

static void json_reserved(prov_buf *b, const char *name, const ali_reserved *r, bool *first)
{
    if (r->cpu_milli < 0 && r->memory_bytes < 0 && r->ephemeral_bytes < 0 && r->pid < 0)
        return;
    prov_buf_printf(b, "%s\"%s\":{", *first ? "" : ",", name);
    bool f = true;
    if (r->cpu_milli >= 0)
        prov_buf_printf(b, "%s\"cpu\":\"%lldm\"", f ? "" : ",", (long long)r->cpu_milli), f = false;
    if (r->memory_bytes >= 0)
        prov_buf_printf(b, "%s\"memory\":\"%lld\"", f ? "" : ",", (long long)r->memory_bytes), f = false;
    if (r->ephemeral_bytes >= 0)
        prov_buf_printf(b, "%s\"ephemeral-storage\":\"%lld\"", f ? "" : ",", (long long)r->ephemeral_bytes), f = false;
    if (r->pid >= 0)
        prov_buf_printf(b, "%s\"pid\":\"%lld\"", f ? "" : ",", (long long)r->pid);
    prov_buf_puts(b, "}");
    *first = false;
}

static void json_int(prov_buf *b, const char *name, int64_t v, bool *first)
{
    if (v < 0)
        return;
    prov_buf_printf(b, "%s\"%s\":%lld", *first ? "" : ",", name, (long long)v);
    *first = false;
}

/* ACK's node config: {"kubelet_config": {KubeletConfiguration fields}}, base64. */
static char *node_config(const ali_kubelet *k)
{
    prov_buf j = PROV_BUF_INIT;
    bool first = true;
    prov_buf_puts(&j, "{\"kubelet_config\":{");
    json_int(&j, "maxPods", k->max_pods, &first);
    json_int(&j, "podsPerCore", k->pods_per_core, &first);
    json_int(&j, "evictionMaxPodGracePeriod", k->eviction_max_pod_grace, &first);
    json_int(&j, "imageGCHighThresholdPercent", k->gc_high, &first);
    json_int(&j, "imageGCLowThresholdPercent", k->gc_low, &first);
    if (k->cpu_cfs_quota >= 0) {
        prov_buf_printf(&j, "%s\"cpuCFSQuota\":%s", first ? "" : ",", k->cpu_cfs_quota ? "true" : "false");
        first = false;
    }
    if (k->n_cluster_dns) {
        prov_buf_printf(&j, "%s\"clusterDNS\":[", first ? "" : ",");
        for (size_t i = 0; i < k->n_cluster_dns; i++)
            prov_buf_printf(&j, "%s\"%s\"", i ? "," : "", k->cluster_dns[i]);
        prov_buf_puts(&j, "]");
        first = false;
    }
    json_reserved(&j, "systemReserved", &k->system_reserved, &first);
    json_reserved(&j, "kubeReserved", &k->kube_reserved, &first);
    json_map(&j, "evictionHard", k->eviction_hard, k->n_eviction_hard, &first);
    json_map(&j, "evictionSoft", k->eviction_soft, k->n_eviction_soft, &first);
    json_map(&j, "evictionSoftGracePeriod", k->eviction_soft_grace, k->n_eviction_soft_grace, &first);
    prov_buf_puts(&j, "}}");
    char *out = NULL;
    if (!prov_buf_failed(&j) && (out = malloc(4 * ((j.len + 2) / 3) + 1)))
        EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)j.data, (int)j.len);
    prov_buf_free(&j);
    return out;
}

/* Label keys and values and taints are Kubernetes names (no shell metacharacters); they are quoted all the same. */
char *ali_userdata_attach_command(const char *script, const char *cluster_id, const ns_label *labels, size_t n_labels,
                                  const ns_taint *taints, size_t n_taints, const ns_taint *startup, size_t n_startup,
                                  const ali_kubelet *k, bool format_disk)
{
    char *cfg = node_config(k);
    if (!cfg)
        return NULL;
    prov_buf b = PROV_BUF_INIT;
    prov_buf_puts(&b, "#!/bin/bash\n");
    prov_buf_puts(&b, "ZONE_ID=$(curl -sf http://100.100.100.200/latest/meta-data/zone-id)\n");
    /* the script as ACK gives it, on one line */
    for (const char *c = script; *c; c++)
        if (*c != '\r' && *c != '\n')
            prov_buf_append(&b, c, 1);
    prov_buf_printf(&b, " --labels 'k8s.aliyun.com=true,ack.aliyun.com=%s", cluster_id);
    for (size_t i = 0; i < n_labels; i++)
        prov_buf_printf(&b, ",%s=%s", labels[i].key, labels[i].value);
    prov_buf_puts(&b, "',\"topology.k8s.alibabacloud/zone-id=${ZONE_ID}\"");
    prov_buf_printf(&b, " --node-config '%s' --taints '", cfg);
    bool first = true;
    static const ns_taint unregistered = {"karpenter.sh/unregistered", NULL, "NoExecute"};
    taint_list(&b, &unregistered, 1, &first);
    taint_list(&b, taints, n_taints, &first);
    taint_list(&b, startup, n_startup, &first);
    prov_buf_puts(&b, "'");
    if (format_disk)
        prov_buf_puts(&b, " --format-disk");
    prov_buf_puts(&b, "\n");
    free(cfg);
    return prov_buf_take(&b);
}

static const char *part_type(const char *text)
{
    return strncmp(text, "#cloud-config", 13) == 0 ? "text/cloud-config" : "text/x-shellscript";
}

char *ali_userdata_merge(const char *bootstrap, const char *user)
{
    prov_buf b = PROV_BUF_INIT;
    if (!user || !*user) {
        prov_buf_puts(&b, bootstrap);
        return prov_buf_take(&b);
    }
    prov_buf_puts(&b, "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n");
    prov_buf_printf(&b, "--//\nContent-Type: %s; charset=\"us-ascii\"\n\n%s", part_type(user), user);
    if (user[strlen(user) - 1] != '\n')
        prov_buf_puts(&b, "\n");
    prov_buf_printf(&b, "--//\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n%s--//--\n", bootstrap);
    return prov_buf_take(&b);
}

static int attach_script(ali_state *s, bool format_disk, char **out)
{
    pthread_mutex_lock(&s->lock);
    *out = s->attach_script ? strdup(s->attach_script) : NULL;
    pthread_mutex_unlock(&s->lock);
    if (*out)
        return NS_OK;
    char path[200], body[128];
    snprintf(path, sizeof(path), "/clusters/%s/attachscript", s->cluster_id);
    snprintf(body, sizeof(body), "{\"keep_instance_name\":true,\"format_disk\":%s}", format_disk ? "true" : "false");
    ns_json *doc = NULL;
    int rc = ali_roa(s->client, "DescribeClusterAttachScripts", "POST", path, NULL, body, &doc, NULL);
    if (rc < 0)
        return rc;
    const char *script = s->host->json_string(doc);
    if (!script || !*script) {
        s->host->json_free(doc);
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "ack DescribeClusterAttachScripts for cluster %s: the answer "
                        "is not a script", s->cluster_id);
    }
    *out = strdup(script);
    pthread_mutex_lock(&s->lock);
    if (!s->attach_script)
        s->attach_script = strdup(script);
    pthread_mutex_unlock(&s->lock);
    s->host->json_free(doc);
    return *out ? NS_OK : NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory keeping the attach script");
}

int ali_userdata_build(ali_state *s, const ali_nodeclass_spec *spec, const ns_launch_request *req, char **out_b64)
{
    *out_b64 = NULL;
    char *text = NULL;
    if (s->ack) {
        char *script = NULL;
        int rc = attach_script(s, spec->format_data_disk, &script);
        if (rc < 0)
            return rc;
        char *cmd = ali_userdata_attach_command(script, s->cluster_id, req->labels, req->n_labels, req->taints,
                                                req->n_taints, req->startup_taints, req->n_startup_taints,
                                                &spec->kubelet, spec->format_data_disk);
        free(script);
        text = cmd ? ali_userdata_merge(cmd, spec->user_data) : NULL;
        free(cmd);
    } else {
        text = strdup(spec->user_data ? spec->user_data : "");
    }
    if (!text)
        return NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory building user data");
    size_t n = strlen(text);
    if (strncmp(text, "MIME-Version:", 13) == 0 && spec->user_data && strncmp(spec->user_data, "MIME-Version:", 13) == 0 &&
        s->ack) {
        free(text);
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG,
                        "ECSNodeClass spec.userData: MIME multi-part user data cannot be merged with ACK's bootstrap; "
                        "give a shell script or a #cloud-config document");
    }
    *out_b64 = malloc(4 * ((n + 2) / 3) + 1);
    if (*out_b64)
        EVP_EncodeBlock((unsigned char *)*out_b64, (const unsigned char *)text, (int)n);
    free(text);
    if (*out_b64 && strlen(*out_b64) > 32768) {
        free(*out_b64);
        *out_b64 = NULL;
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "user data is larger than ECS's 32 KiB (base64)");
    }
    return *out_b64 ? NS_OK : NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory encoding user data");
}
