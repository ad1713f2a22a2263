/* What a node's bootstrap needs to join the cluster: the API server endpoint, its CA bundle and the service CIDR.
 * The options cluster_endpoint, cluster_ca_bundle and cluster_cidr give them; when cluster_endpoint is unset the
 * provider asks EKS (DescribeCluster, as Karpenter does) once and keeps the answer, the options still overriding the
 * CA and CIDR. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_provider.h"

typedef struct cluster_answer {
    char *endpoint, *ca, *cidr;
} cluster_answer;

static void answer_free(cluster_answer *a)
{
    free(a->endpoint);
    free(a->ca);
    free(a->cidr);
}

static char *dup_or_null(const char *s, bool *oom)
{
    char *d = s ? strdup(s) : NULL;
    *oom |= s && !d;
    return d;
}

static int describe_cluster(aws_state *s, cluster_answer *out)
{
    char path[200];
    int n = snprintf(path, sizeof(path), "/clusters/%s", s->cluster);
    if (n < 0 || (size_t)n >= sizeof(path))
        return NS_ERROR(s->host, s->ctx, NS_ERR_INVALID_CONFIG, "aws: cluster name %s is too long", s->cluster);
    ns_http_response *resp = NULL;
    int rc = aws_client_rest_get(s->client, "eks", "DescribeCluster", path, &resp, NULL);
    if (rc != NS_OK)
        return rc;
    ns_json *doc = s->host->json_parse(resp->body, resp->body_len);
    s->host->http_response_free(resp);
    const ns_json *cluster = s->host->json_get(doc, "cluster");
    const char *endpoint = s->host->json_string(s->host->json_get(cluster, "endpoint"));
    const char *ca = s->host->json_string(s->host->json_get(s->host->json_get(cluster, "certificateAuthority"), "data"));
    const ns_json *net = s->host->json_get(cluster, "kubernetesNetworkConfig");
    const char *family = s->host->json_string(s->host->json_get(net, "ipFamily"));
    const char *cidr = s->host->json_string(
        s->host->json_get(net, family && strcmp(family, "ipv6") == 0 ? "serviceIpv6Cidr" : "serviceIpv4Cidr"));
    bool oom = false;
    if (!endpoint)
        rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "eks DescribeCluster %s: the answer has no endpoint (is the "
                      "cluster still being created?)", s->cluster);
    else {
        out->endpoint = dup_or_null(endpoint, &oom);
        out->ca = dup_or_null(ca, &oom);
        out->cidr = dup_or_null(cidr, &oom);
        if (oom)
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory reading cluster %s", s->cluster);
    }
    s->host->json_free(doc);
    return rc;
}

int aws_cluster_info(aws_state *s, const char **endpoint, const char **ca, const char **cidr)
{
    pthread_mutex_lock(&s->lock);
    bool known = s->cluster_endpoint != NULL;
    pthread_mutex_unlock(&s->lock);
    if (!known) {
        cluster_answer a = {NULL, NULL, NULL};
        const char *opt_endpoint = s->host->option_string(s->ctx, "cluster_endpoint");
        const char *opt_ca = s->host->option_string(s->ctx, "cluster_ca_bundle");
        const char *opt_cidr = s->host->option_string(s->ctx, "cluster_cidr");
        bool oom = false;
        int rc = NS_OK;
        if (opt_endpoint)
            a.endpoint = dup_or_null(opt_endpoint, &oom);
        else
            rc = describe_cluster(s, &a);
        if (rc == NS_OK && opt_ca) {
            free(a.ca);
            a.ca = dup_or_null(opt_ca, &oom);
        }
        if (rc == NS_OK && opt_cidr) {
            free(a.cidr);
            a.cidr = dup_or_null(opt_cidr, &oom);
        }
        if (rc == NS_OK && oom)
            rc = NS_ERROR(s->host, s->ctx, NS_ERR_INTERNAL, "out of memory reading the cluster's options");
        if (rc != NS_OK) {
            answer_free(&a);
            return rc;
        }
        pthread_mutex_lock(&s->lock);
        if (!s->cluster_endpoint) { /* another thread may have answered first: keep one answer */
            s->cluster_endpoint = a.endpoint;
            s->cluster_ca = a.ca;
            s->cluster_cidr = a.cidr;
            a = (cluster_answer){NULL, NULL, NULL};
        }
        pthread_mutex_unlock(&s->lock);
        answer_free(&a);
    }
    pthread_mutex_lock(&s->lock);
    *endpoint = s->cluster_endpoint;
    *ca = s->cluster_ca;
    *cidr = s->cluster_cidr;
    pthread_mutex_unlock(&s->lock);
    return NS_OK;
}
