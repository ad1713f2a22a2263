#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors/ns_error.h"
#include "log/ns_log.h"
#include "manifest/decoders.h"
#include "manifest/workload_owners.h"
#include "model/duration.h"
#include "model/intern.h"
#include "model/labels.h"
#include "model/model_util.h"
#include "model/resources.h"

/* Every PodSpec field of Kubernetes 1.31+; those the scheduler does not need are accepted and ignored. */
static const char *const pod_spec_fields[] = {
    "activeDeadlineSeconds", "affinity", "automountServiceAccountToken", "containers", "dnsConfig", "dnsPolicy",
    "enableServiceLinks", "ephemeralContainers", "hostAliases", "hostIPC", "hostNetwork", "hostPID", "hostUsers",
    "hostname", "imagePullSecrets", "initContainers", "nodeName", "nodeSelector", "os", "overhead",
    "preemptionPolicy", "priority", "priorityClassName", "readinessGates", "resourceClaims", "resources",
    "restartPolicy", "runtimeClassName", "schedulerName", "schedulingGates", "securityContext", "serviceAccount",
    "serviceAccountName", "setHostnameAsFQDN", "shareProcessNamespace", "subdomain",
    "terminationGracePeriodSeconds", "tolerations", "topologySpreadConstraints", "volumes", NULL,
};

static const char *const container_fields[] = {
    "args", "command", "env", "envFrom", "image", "imagePullPolicy", "lifecycle", "livenessProbe", "name", "ports",
    "readinessProbe", "resizePolicy", "resources", "restartPolicy", "securityContext", "startupProbe", "stdin",
    "stdinOnce", "terminationMessagePath", "terminationMessagePolicy", "tty", "volumeDevices", "volumeMounts",
    "workingDir", NULL,
};

static const char *const resources_fields[] = {"limits", "requests", "claims", NULL};
static const char *const port_fields[] = {"containerPort", "hostIP", "hostPort", "name", "protocol", NULL};

static int add_host_port(ns_pod *pod, const char *ip, int32_t port, const char *protocol)
{
    ns_host_port *grown = realloc(pod->host_ports, (pod->n_host_ports + 1) * sizeof(ns_host_port));
    if (!grown)
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory recording a host port");
    pod->host_ports = grown;
    ns_host_port *hp = &pod->host_ports[pod->n_host_ports++];
    memset(hp, 0, sizeof(*hp));
    snprintf(hp->ip, sizeof(hp->ip), "%s", ip && *ip ? ip : "0.0.0.0");
    snprintf(hp->protocol, sizeof(hp->protocol), "%s", protocol && *protocol ? protocol : "TCP");
    hp->port = port;
    return 0;
}

static int decode_ports(const ns_dec *d, const ns_ynode *c, const char *path, bool host_network, ns_pod *pod)
{
    int rc;
    const ns_ynode *ports = ns_dec_child(d, c, path, "ports", NS_Y_SEQ, &rc);
    for (size_t i = 0; ports && rc == 0 && i < ports->n; i++) {
        char p[NS_PATH_MAX], pp[NS_PATH_MAX];
        ns_path_key(pp, sizeof(pp), path, "ports");
        ns_path_index(p, sizeof(p), pp, i);
        const ns_ynode *port = ports->items[i];
        int32_t container_port = 0, host_port = 0;
        char *ip = NULL, *proto = NULL;
        if ((rc = ns_dec_fields(d, port, p, port_fields)) == 0 &&
            (rc = ns_dec_int32(d, port, p, "containerPort", 1, 65535, &container_port, NULL)) == 0 &&
            (rc = ns_dec_int32(d, port, p, "hostPort", 0, 65535, &host_port, NULL)) == 0 &&
            (rc = ns_dec_string(d, port, p, "hostIP", &ip)) == 0 &&
            (rc = ns_dec_string(d, port, p, "protocol", &proto)) == 0) {
            if (proto && strcmp(proto, "TCP") && strcmp(proto, "UDP") && strcmp(proto, "SCTP"))
                rc = ns_dec_fail(d, port, p, "protocol \"%s\" is not TCP, UDP or SCTP", proto);
            /* With hostNetwork, Kubernetes defaults hostPort to containerPort. */
            if (rc == 0 && host_network && host_port == 0)
                host_port = container_port;
            if (rc == 0 && host_port > 0)
                rc = add_host_port(pod, ip, host_port, proto);
        }
        free(ip);
        free(proto);
    }
    return rc;
}

static int decode_container(const ns_dec *d, const ns_ynode *c, const char *path, bool init, bool host_network,
                            ns_pod *pod, ns_container *out)
{
    int rc;
    char *restart = NULL;
    if ((rc = ns_dec_fields(d, c, path, container_fields)) < 0 ||
        (rc = ns_dec_string_required(d, c, path, "name", &out->name)) < 0 ||
        (rc = ns_dec_string(d, c, path, "restartPolicy", &restart)) < 0)
        goto done;
    if (restart && (!init || strcmp(restart, "Always") != 0)) {
        rc = ns_dec_fail(d, ns_ymap_get(c, "restartPolicy"), path,
                         init ? "restartPolicy \"%s\" is not allowed (only Always, for sidecars)"
                              : "restartPolicy \"%s\" is only allowed on init containers",
                         restart);
        goto done;
    }
    out->sidecar = restart != NULL;
    const ns_ynode *res = ns_dec_child(d, c, path, "resources", NS_Y_MAP, &rc);
    if (res) {
        char rp[NS_PATH_MAX];
        ns_path_key(rp, sizeof(rp), path, "resources");
        if ((rc = ns_dec_fields(d, res, rp, resources_fields)) < 0 ||
            (rc = ns_dec_resources(d, res, rp, "requests", &out->requests, NULL)) < 0 ||
            (rc = ns_dec_resources(d, res, rp, "limits", &out->limits, NULL)) < 0)
            goto done;
        /* API defaulting: a limit without a request requests the limit. */
        const ns_ynode *limits = ns_ymap_get(res, "limits"), *requests = ns_ymap_get(res, "requests");
        for (size_t i = 0; limits && i < limits->n; i++) {
            const char *name = ns_ymap_key(limits, i)->str;
            if (!ns_ymap_get(requests, name) &&
                (rc = ns_res_set(&out->requests, name, ns_res_get(&out->limits, name))) < 0)
                goto done;
        }
    }
    if (rc == 0)
        rc = decode_ports(d, c, path, host_network, pod);
done:
    free(restart);
    return rc;
}

static int decode_containers(const ns_dec *d, const ns_ynode *spec, const char *path, const char *key, bool init,
                             bool host_network, ns_pod *pod, ns_container **out, size_t *n)
{
    int rc;
    const ns_ynode *seq = ns_dec_child(d, spec, path, key, NS_Y_SEQ, &rc);
    if (!seq || seq->n == 0)
        return rc;
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, key);
    if (!(*out = calloc(seq->n, sizeof(**out))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory reading %s", p);
    *n = seq->n;
    for (size_t i = 0; i < seq->n && rc == 0; i++) {
        char ip[NS_PATH_MAX];
        ns_path_index(ip, sizeof(ip), p, i);
        rc = decode_container(d, seq->items[i], ip, init, host_network, pod, &(*out)[i]);
    }
    return rc;
}

/* ---- affinity ---- */

static const char *const affinity_fields[] = {"nodeAffinity", "podAffinity", "podAntiAffinity", NULL};
static const char *const node_affinity_fields[] = {"requiredDuringSchedulingIgnoredDuringExecution",
                                                   "preferredDuringSchedulingIgnoredDuringExecution", NULL};
static const char *const node_selector_fields[] = {"nodeSelectorTerms", NULL};
static const char *const term_fields[] = {"matchExpressions", "matchFields", NULL};
static const char *const preferred_fields[] = {"weight", "preference", NULL};
static const char *const pod_affinity_fields[] = {"requiredDuringSchedulingIgnoredDuringExecution",
                                                  "preferredDuringSchedulingIgnoredDuringExecution", NULL};
static const char *const pod_term_fields[] = {"labelSelector",  "namespaceSelector", "namespaces",
                                              "topologyKey",    "matchLabelKeys",    "mismatchLabelKeys", NULL};
static const char *const weighted_fields[] = {"weight", "podAffinityTerm", NULL};

static int decode_node_term(const ns_dec *d, const ns_ynode *t, const char *p, ns_node_selector_term *out)
{
    int rc;
    if ((rc = ns_dec_fields(d, t, p, term_fields)) < 0 ||
        (rc = ns_decode_selector_reqs(d, t, p, "matchExpressions", NS_OPS_NODE_AFFINITY, &out->exprs,
                                      &out->n_exprs)) < 0 ||
        (rc = ns_decode_selector_reqs(d, t, p, "matchFields", NS_OPS_NODE_AFFINITY, &out->fields, &out->n_fields)) < 0)
        return rc;
    for (size_t i = 0; i < out->n_fields; i++) {
        const ns_selector_req *f = &out->fields[i];
        if (strcmp(f->key, "metadata.name") != 0 || (f->op != NS_OP_IN && f->op != NS_OP_NOT_IN) || f->n_values != 1)
            return ns_dec_fail(d, ns_ymap_get(t, "matchFields"), p,
                               "matchFields supports only metadata.name with In or NotIn and exactly one value");
    }
    return 0;
}

static int decode_node_affinity(const ns_dec *d, const ns_ynode *aff, const char *path, ns_affinity *out)
{
    int rc;
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, "nodeAffinity");
    const ns_ynode *na = ns_dec_child(d, aff, path, "nodeAffinity", NS_Y_MAP, &rc);
    if (!na || (rc = ns_dec_fields(d, na, p, node_affinity_fields)) < 0)
        return rc;
    char rp[NS_PATH_MAX];
    ns_path_key(rp, sizeof(rp), p, "requiredDuringSchedulingIgnoredDuringExecution");
    const ns_ynode *req = ns_dec_child(d, na, p, "requiredDuringSchedulingIgnoredDuringExecution", NS_Y_MAP, &rc);
    if (rc < 0)
        return rc;
    if (req) {
        if ((rc = ns_dec_fields(d, req, rp, node_selector_fields)) < 0)
            return rc;
        const ns_ynode *terms = ns_dec_child(d, req, rp, "nodeSelectorTerms", NS_Y_SEQ, &rc);
        if (rc < 0)
            return rc;
        if (!terms || terms->n == 0)
            return ns_dec_fail(d, req, rp, "nodeSelectorTerms must have at least one term");
        out->has_node_required = true;
        if (!(out->node_required = calloc(terms->n, sizeof(*out->node_required))))
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory reading %s", rp);
        out->n_node_required = terms->n;
        for (size_t i = 0; i < terms->n && rc == 0; i++) {
            char tp[NS_PATH_MAX], tpp[NS_PATH_MAX];
            ns_path_key(tpp, sizeof(tpp), rp, "nodeSelectorTerms");
            ns_path_index(tp, sizeof(tp), tpp, i);
            rc = decode_node_term(d, terms->items[i], tp, &out->node_required[i]);
        }
        if (rc < 0)
            return rc;
    }
    ns_path_key(rp, sizeof(rp), p, "preferredDuringSchedulingIgnoredDuringExecution");
    const ns_ynode *pref = ns_dec_child(d, na, p, "preferredDuringSchedulingIgnoredDuringExecution", NS_Y_SEQ, &rc);
    if (!pref || pref->n == 0)
        return rc;
    if (!(out->node_preferred = calloc(pref->n, sizeof(*out->node_preferred))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory reading %s", rp);
    out->n_node_preferred = pref->n;
    for (size_t i = 0; i < pref->n && rc == 0; i++) {
        char tp[NS_PATH_MAX], pp[NS_PATH_MAX];
        ns_path_index(tp, sizeof(tp), rp, i);
        ns_path_key(pp, sizeof(pp), tp, "preference");
        const ns_ynode *item = pref->items[i], *preference;
        if ((rc = ns_dec_fields(d, item, tp, preferred_fields)) < 0 ||
            (rc = ns_dec_int32(d, item, tp, "weight", 1, 100, &out->node_preferred[i].weight, NULL)) < 0)
            break;
        if (!(preference = ns_dec_child(d, item, tp, "preference", NS_Y_MAP, &rc)))
            return rc < 0 ? rc : ns_dec_fail(d, item, NULL, "missing required field \"%s\"", pp);
        rc = decode_node_term(d, preference, pp, &out->node_preferred[i].term);
    }
    return rc;
}

static int decode_pod_term(const ns_dec *d, const ns_ynode *t, const char *p, ns_pod_affinity_term *out)
{
    int rc;
    if ((rc = ns_dec_fields(d, t, p, pod_term_fields)) < 0 ||
        (rc = ns_decode_label_selector(d, t, p, "labelSelector", &out->selector)) < 0 ||
        (rc = ns_decode_label_selector(d, t, p, "namespaceSelector", &out->namespace_selector)) < 0 ||
        (rc = ns_dec_strings(d, t, p, "namespaces", &out->namespaces, &out->n_namespaces)) < 0 ||
        (rc = ns_dec_strings(d, t, p, "matchLabelKeys", &out->match_label_keys, &out->n_match_label_keys)) < 0 ||
        (rc = ns_dec_strings(d, t, p, "mismatchLabelKeys", &out->mismatch_label_keys,
                             &out->n_mismatch_label_keys)) < 0)
        return rc;
    return ns_dec_string_required(d, t, p, "topologyKey", &out->topology_key);
}

static int decode_pod_affinity(const ns_dec *d, const ns_ynode *aff, const char *path, const char *key,
                               ns_pod_affinity_term **req, size_t *n_req, ns_weighted_pod_affinity_term **pref,
                               size_t *n_pref)
{
    int rc;
    char p[NS_PATH_MAX], rp[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, key);
    const ns_ynode *pa = ns_dec_child(d, aff, path, key, NS_Y_MAP, &rc);
    if (!pa || (rc = ns_dec_fields(d, pa, p, pod_affinity_fields)) < 0)
        return rc;
    ns_path_key(rp, sizeof(rp), p, "requiredDuringSchedulingIgnoredDuringExecution");
    const ns_ynode *r = ns_dec_child(d, pa, p, "requiredDuringSchedulingIgnoredDuringExecution", NS_Y_SEQ, &rc);
    if (r && r->n) {
        if (!(*req = calloc(r->n, sizeof(**req))))
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory reading %s", rp);
        *n_req = r->n;
        for (size_t i = 0; i < r->n && rc == 0; i++) {
            char tp[NS_PATH_MAX];
            ns_path_index(tp, sizeof(tp), rp, i);
            rc = decode_pod_term(d, r->items[i], tp, &(*req)[i]);
        }
    }
    if (rc < 0)
        return rc;
    ns_path_key(rp, sizeof(rp), p, "preferredDuringSchedulingIgnoredDuringExecution");
    const ns_ynode *w = ns_dec_child(d, pa, p, "preferredDuringSchedulingIgnoredDuringExecution", NS_Y_SEQ, &rc);
    if (!w || w->n == 0)
        return rc;
    if (!(*pref = calloc(w->n, sizeof(**pref))))
        return NS_FAIL(NS_ERR_INTERNAL, "out of memory reading %s", rp);
    *n_pref = w->n;
    for (size_t i = 0; i < w->n && rc == 0; i++) {
        char tp[NS_PATH_MAX], tt[NS_PATH_MAX];
        ns_path_index(tp, sizeof(tp), rp, i);
        ns_path_key(tt, sizeof(tt), tp, "podAffinityTerm");
        const ns_ynode *item = w->items[i], *term;
        if ((rc = ns_dec_fields(d, item, tp, weighted_fields)) < 0 ||
            (rc = ns_dec_int32(d, item, tp, "weight", 1, 100, &(*pref)[i].weight, NULL)) < 0)
            break;
        if (!(term = ns_dec_child(d, item, tp, "podAffinityTerm", NS_Y_MAP, &rc)))
            return rc < 0 ? rc : ns_dec_fail(d, item, NULL, "missing required field \"%s\"", tt);
        rc = decode_pod_term(d, term, tt, &(*pref)[i].term);
    }
    return rc;
}

static int decode_affinity(const ns_dec *d, const ns_ynode *spec, const char *path, ns_affinity *out)
{
    int rc;
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, "affinity");
    const ns_ynode *aff = ns_dec_child(d, spec, path, "affinity", NS_Y_MAP, &rc);
    if (!aff)
        return rc;
    if ((rc = ns_dec_fields(d, aff, p, affinity_fields)) < 0 || (rc = decode_node_affinity(d, aff, p, out)) < 0 ||
        (rc = decode_pod_affinity(d, aff, p, "podAffinity", &out->pod_required, &out->n_pod_required,
                                  &out->pod_preferred, &out->n_pod_preferred)) < 0)
        return rc;
    return decode_pod_affinity(d, aff, p, "podAntiAffinity", &out->anti_required, &out->n_anti_required,
                               &out->anti_preferred, &out->n_anti_preferred);
}

/* ---- topology spread ---- */

static const char *const spread_fields[] = {"maxSkew",           "topologyKey",        "whenUnsatisfiable",
                                            "labelSelector",     "minDomains",         "nodeAffinityPolicy",
                                            "nodeTaintsPolicy",  "matchLabelKeys",     NULL};

static int decode_policy(const ns_dec *d, const ns_ynode *t, const char *p, const char *key, ns_inclusion_policy dflt,
                         ns_inclusion_policy *out)
{
    char *v = NULL;
    int rc = ns_dec_string(d, t, p, key, &v);
    *out = dflt;
    if (rc == 0 && v) {
        if (strcmp(v, "Honor") == 0)
            *out = NS_POLICY_HONOR;
        else if (strcmp(v, "Ignore") == 0)
            *out = NS_POLICY_IGNORE;
        else
            rc = ns_dec_fail(d, ns_ymap_get(t, key), p, "%s \"%s\" is not Honor or Ignore", key, v);
    }
    free(v);
    return rc;
}

int ns_decode_topology_spread(const ns_dec *d, const ns_ynode *t, const char *p, ns_topology_spread *out)
{
    char *when = NULL;
    bool has_min = false;
    int rc;
    if ((rc = ns_dec_fields(d, t, p, spread_fields)) < 0 ||
        (rc = ns_dec_int32(d, t, p, "maxSkew", 1, INT32_MAX, &out->max_skew, NULL)) < 0 ||
        (rc = ns_dec_string_required(d, t, p, "topologyKey", &out->topology_key)) < 0 ||
        (rc = ns_dec_string_required(d, t, p, "whenUnsatisfiable", &when)) < 0 ||
        (rc = ns_decode_label_selector(d, t, p, "labelSelector", &out->selector)) < 0 ||
        (rc = ns_dec_int32(d, t, p, "minDomains", 1, INT32_MAX, &out->min_domains, &has_min)) < 0 ||
        (rc = decode_policy(d, t, p, "nodeAffinityPolicy", NS_POLICY_HONOR, &out->node_affinity_policy)) < 0 ||
        (rc = decode_policy(d, t, p, "nodeTaintsPolicy", NS_POLICY_IGNORE, &out->node_taints_policy)) < 0 ||
        (rc = ns_dec_strings(d, t, p, "matchLabelKeys", &out->match_label_keys, &out->n_match_label_keys)) < 0)
        goto done;
    if (!ns_ymap_get(t, "maxSkew")) {
        rc = ns_dec_fail(d, t, p, "missing required field \"maxSkew\"");
    } else if (strcmp(when, "DoNotSchedule") == 0) {
        out->when_unsatisfiable = NS_DO_NOT_SCHEDULE;
    } else if (strcmp(when, "ScheduleAnyway") == 0) {
        out->when_unsatisfiable = NS_SCHEDULE_ANYWAY;
        if (has_min)
            rc = ns_dec_fail(d, ns_ymap_get(t, "minDomains"), p,
                             "minDomains can only be set with whenUnsatisfiable DoNotSchedule");
    } else {
        rc = ns_dec_fail(d, ns_ymap_get(t, "whenUnsatisfiable"), p,
                         "whenUnsatisfiable \"%s\" is not DoNotSchedule or ScheduleAnyway", when);
    }
done:
    free(when);
    return rc;
}

/* ---- the spec ---- */

static const char *const pod_resources_fields[] = {"limits", "requests", "claims", NULL};

/* spec.overhead and the pod-level spec.resources into pod->spec_resources, allocated only when one is present. */
static int decode_spec_resources(const ns_dec *d, const ns_ynode *spec, const char *path, ns_pod *pod)
{
    int rc = 0;
    const ns_ynode *res = ns_dec_child(d, spec, path, "resources", NS_Y_MAP, &rc);
    if (rc < 0 || (!res && !ns_dec_child(d, spec, path, "overhead", NS_Y_MAP, &rc)))
        return rc;
    ns_pod_spec_resources *sr = ns_pod_spec_resources_get(pod);
    if (!sr)
        return NS_ERR_INTERNAL;
    if ((rc = ns_dec_resources(d, spec, path, "overhead", &sr->overhead, NULL)) < 0 || !res)
        return rc;
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, "resources");
    if ((rc = ns_dec_fields(d, res, p, pod_resources_fields)) < 0 ||
        (rc = ns_dec_resources(d, res, p, "requests", &sr->requests, &sr->has_requests)) < 0 ||
        (rc = ns_dec_resources(d, res, p, "limits", &sr->limits, &sr->has_limits)) < 0)
        return rc;
    return 0;
}

/* karpenter.sh/do-not-disrupt: "true" or a positive Go duration. Karpenter ignores any other value with a warning
 * event; the warning goes to the log here (the pod is named; the manifest stays loadable). */
void ns_decode_do_not_disrupt(ns_pod *pod)
{
    const char *v = ns_labels_get(&pod->meta.annotations, NS_ANNOTATION_DO_NOT_DISRUPT);
    pod->do_not_disrupt_ms = 0;
    if (!v)
        return;
    if (strcmp(v, "true") == 0) {
        pod->do_not_disrupt_ms = NS_DO_NOT_DISRUPT_ALWAYS;
        return;
    }
    int64_t ms = 0;
    char why[256] = "the duration must be positive";
    if (ns_duration_parse(v, false, NS_ANNOTATION_DO_NOT_DISRUPT, &ms) < 0)
        snprintf(why, sizeof(why), "%s", ns_error_message());
    else if (ms > 0) {
        pod->do_not_disrupt_ms = ms;
        return;
    }
    ns_error_clear();
    ns_log(NS_LOG_WARN, "manifest", "Invalid karpenter.sh/do-not-disrupt annotation, ignoring annotation", "Pod",
           pod->meta.name, "namespace", pod->meta.namespace_ ? pod->meta.namespace_ : "default", "value", v,
           "reason", why, NULL);
}

int ns_decode_pod_spec(const ns_dec *d, const ns_ynode *spec, const char *path, ns_pod *pod)
{
    int rc;
    bool host_network = false;
    if ((rc = ns_dec_fields(d, spec, path, pod_spec_fields)) < 0 ||
        (rc = ns_dec_bool(d, spec, path, "hostNetwork", &host_network, NULL)) < 0 ||
        (rc = decode_containers(d, spec, path, "containers", false, host_network, pod, &pod->containers,
                                &pod->n_containers)) < 0 ||
        (rc = decode_containers(d, spec, path, "initContainers", true, host_network, pod, &pod->init_containers,
                                &pod->n_init_containers)) < 0 ||
        (rc = ns_dec_label_map(d, spec, path, "nodeSelector", &pod->node_selector)) < 0 ||
        (rc = decode_affinity(d, spec, path, &pod->affinity)) < 0 ||
        (rc = ns_decode_tolerations(d, spec, path, "tolerations", &pod->tolerations, &pod->n_tolerations)) < 0 ||
        (rc = ns_dec_string(d, spec, path, "priorityClassName", &pod->priority_class_name)) < 0 ||
        (rc = ns_dec_int32(d, spec, path, "priority", INT32_MIN, INT32_MAX, &pod->priority, &pod->has_priority)) < 0 ||
        (rc = ns_dec_string(d, spec, path, "preemptionPolicy", &pod->preemption_policy)) < 0 ||
        (rc = ns_dec_string(d, spec, path, "nodeName", &pod->node_name)) < 0 ||
        (rc = ns_dec_string(d, spec, path, "schedulerName", &pod->scheduler_name)) < 0 ||
        (rc = ns_dec_int(d, spec, path, "terminationGracePeriodSeconds", 0, INT64_MAX,
                         &pod->termination_grace_period_s, NULL)) < 0)
        return rc;
    if ((rc = decode_spec_resources(d, spec, path, pod)) < 0 || (rc = ns_decode_pod_volumes(d, spec, path, pod)) < 0)
        return rc;
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, "containers");
    if (pod->n_containers == 0)
        return ns_dec_fail(d, spec, NULL, "missing required field \"%s\" (a pod needs at least one container)", p);
    const ns_ynode *gates = ns_dec_child(d, spec, path, "schedulingGates", NS_Y_SEQ, &rc);
    pod->scheduling_gated = gates && gates->n > 0;
    if (rc < 0)
        return rc;
    const ns_ynode *spread = ns_dec_child(d, spec, path, "topologySpreadConstraints", NS_Y_SEQ, &rc);
    if (spread && spread->n) {
        ns_path_key(p, sizeof(p), path, "topologySpreadConstraints");
        if (!(pod->spread = calloc(spread->n, sizeof(*pod->spread))))
            return NS_FAIL(NS_ERR_INTERNAL, "out of memory reading %s", p);
        pod->n_spread = spread->n;
        for (size_t i = 0; i < spread->n && rc == 0; i++) {
            char ip[NS_PATH_MAX];
            ns_path_index(ip, sizeof(ip), p, i);
            rc = ns_decode_topology_spread(d, spread->items[i], ip, &pod->spread[i]);
        }
    }
    if (rc < 0)
        return rc;
    ns_decode_do_not_disrupt(pod);
    if (ns_pod_compute_requests(pod) < 0)
        return ns_dec_wrap(d, spec);
    return 0;
}

static const char *const template_fields[] = {"metadata", "spec", NULL};
static const char *const template_meta_fields[] = {
    "name",        "generateName",  "namespace", "labels",           "annotations",
    "uid",         "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
    "deletionGracePeriodSeconds", "ownerReferences", "finalizers", "managedFields", "selfLink",
    NULL,
};

int ns_decode_pod_template(const ns_dec *d, const ns_ynode *tmpl, const char *path, const char *ns, ns_pod **out)
{
    *out = NULL;
    int rc;
    if ((rc = ns_dec_fields(d, tmpl, path, template_fields)) < 0)
        return rc;
    ns_pod *pod = ns_pod_new();
    if (!pod)
        return NS_ERR_INTERNAL;
    char p[NS_PATH_MAX];
    ns_path_key(p, sizeof(p), path, "metadata");
    const ns_ynode *meta = ns_dec_child(d, tmpl, path, "metadata", NS_Y_MAP, &rc);
    if (rc == 0 && meta && (rc = ns_dec_fields(d, meta, p, template_meta_fields)) == 0 &&
        (rc = ns_dec_label_map(d, meta, p, "labels", &pod->meta.labels)) == 0)
        rc = ns_dec_labels(d, meta, p, "annotations", &pod->meta.annotations);
    if (rc == 0 && !(pod->meta.namespace_ = ns_strdup(ns)))
        rc = NS_ERR_INTERNAL;
    if (rc == 0 && !(pod->meta.source_file = ns_intern(d->file)))
        rc = NS_ERR_INTERNAL;
    pod->meta.source_line = tmpl->line;
    ns_path_key(p, sizeof(p), path, "spec");
    const ns_ynode *spec = rc == 0 ? ns_dec_child(d, tmpl, path, "spec", NS_Y_MAP, &rc) : NULL;
    if (rc == 0 && !spec)
        rc = ns_dec_fail(d, tmpl, NULL, "missing required field \"%s\"", p);
    if (rc == 0)
        rc = ns_decode_pod_spec(d, spec, p, pod);
    if (rc < 0) {
        ns_pod_free(pod);
        return rc;
    }
    *out = pod;
    return 0;
}

/* Karpenter's FailedToSchedule (a PodScheduled condition with reason Unschedulable, whatever its status) and
 * IsPreempting (a nominatedNodeName), from a status that has either; without both the pod keeps NONE. */
static int decode_sched_status(const ns_dec *d, const ns_ynode *status, ns_pod *pod)
{
    ns_conditions all = {0};
    char *nominated = NULL;
    int rc = ns_decode_conditions(d, status, "status", "conditions", &all);
    if (rc == 0)
        rc = ns_dec_string(d, status, "status", "nominatedNodeName", &nominated);
    bool preempting = nominated && nominated[0];
    if (rc == 0 && (all.n > 0 || preempting)) {
        const ns_condition *sc = ns_conditions_get(&all, "PodScheduled");
        bool failed = sc && sc->reason && strcmp(sc->reason, "Unschedulable") == 0;
        pod->sched_status = failed && !preempting ? NS_POD_STATUS_UNSCHEDULABLE : NS_POD_STATUS_OTHER;
    }
    free(nominated);
    ns_conditions_free(&all);
    return rc;
}

int ns_load_pod(ns_dec *d, const ns_ynode *root, ns_cluster *c)
{
    ns_pod *pod = ns_pod_new();
    if (!pod)
        return NS_ERR_INTERNAL;
    int rc;
    const ns_ynode *spec = NULL, *status = NULL;
    if ((rc = ns_decode_top_fields(d, root, NULL)) == 0 && (rc = ns_decode_meta(d, root, "Pod", true, &pod->meta)) == 0 &&
        (spec = ns_dec_child(d, root, "", "spec", NS_Y_MAP, &rc)) == NULL && rc == 0)
        rc = ns_dec_fail(d, root, NULL, "missing required field \"spec\"");
    if (rc == 0)
        rc = ns_decode_pod_spec(d, spec, "spec", pod);
    if (rc == 0 && (status = ns_dec_child(d, root, "", "status", NS_Y_MAP, &rc)) != NULL)
        rc = ns_dec_string(d, status, "status", "phase", &pod->phase);
    if (rc == 0 && status)
        rc = ns_decode_time(d, status, "status", "startTime", &pod->start_ms);
    /* Its workload counts through it, not through the pods the loader expanded from the workload. */
    if (rc == 0)
        rc = ns_owners_claim(c, "Pod", &pod->meta);
    if (rc == 0 && status)
        rc = decode_sched_status(d, status, pod);
    if (rc < 0) {
        ns_pod_free(pod);
        return rc;
    }
    /* Packed when the cluster asks: simulate's cluster of tens of thousands of pods is mostly pods (ns_pod_pack frees
     * the pod when it fails). */
    if (c->packed_pods && !(pod = ns_pod_pack(pod)))
        return NS_ERR_INTERNAL;
    return ns_cluster_add_pod(c, pod);
}
