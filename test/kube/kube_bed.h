/* A real Kubernetes control plane for C tests: etcd, kube-apiserver, kube-controller-manager and kube-scheduler built
 * from the official sources (build-control-plane.sh), run by test/kube/kubebed.py on loopback ports.
 *
 * Under `kubebed.py tap` (how meson runs the kube suite) the plane is already running and shared by every program of
 * the run; its coordinates are in the environment. Run alone, kube_bed_start() starts a private plane for this
 * process. Either way the NS_TEST_KUBE* variables are set once it returns:
 *   NS_TEST_KUBECONFIG        admin kubeconfig (client certificate in group system:masters, embedded CA data)
 *   NS_TEST_KUBE_URL          https://127.0.0.1:PORT
 *   NS_TEST_KUBE_CA           the CA that signed the API server's certificate (PEM file)
 *   NS_TEST_KUBE_CLIENT_CERT, NS_TEST_KUBE_CLIENT_KEY   the admin client certificate and key (PEM files)
 *   NS_TEST_KUBE_TOKEN        a static bearer token in group system:masters
 *   NS_TEST_KUBE_NOBODY_TOKEN a static bearer token of a user with no RBAC grants (403 on everything)
 *   NS_TEST_KUBE_ETCD_URL     etcd's client URL (plain HTTP, loopback)
 *   NS_TEST_KUBE_DIR          the plane's directory (PKI, component kubeconfigs)
 *   NS_KUBEBED                kubebed.py, for the helper commands below
 *
 * The plane is shared: put each test's objects in its own namespace (kube_bed_namespace) and give Nodes unique names;
 * a test that needs its pods on its own nodes labels and taints them and gives the pods a nodeSelector and a
 * toleration. Call kube_bed_start() from the main thread before srunner_run_all (the private plane stops when the
 * thread that started it exits); Check's forked test cases inherit the environment. */
#ifndef NS_TEST_KUBE_BED_H
#define NS_TEST_KUBE_BED_H

#include <stddef.h>
#include <sys/types.h>

typedef struct kube_bed {
    pid_t harness; /* the private plane's kubebed.py serve, 0 when the plane came from the environment */
    int to_harness; /* its stdin: closing it stops the plane */
} kube_bed;

/* Returns 0 with the NS_TEST_KUBE* environment set, or -1 after printing why to stderr. */
int kube_bed_start(kube_bed *bed);
/* Stops a private plane and waits until every process of it has exited; a shared plane is left to its owner. */
void kube_bed_stop(kube_bed *bed);

/* A TCP forwarder to the API server whose open connections a test can cut: a watch dropped mid-stream, a request
 * that loses its connection. TLS passes through untouched (the server's certificate names 127.0.0.1). */
typedef struct kube_bed_proxy {
    char url[64]; /* https://127.0.0.1:PORT: use it instead of NS_TEST_KUBE_URL */
    pid_t harness;
    int to_harness;
} kube_bed_proxy;

/* Returns 0 with PROXY->url set, or -1 after printing why. Needs a running bed. */
int kube_bed_proxy_start(kube_bed_proxy *proxy);
/* Cuts every connection open through the proxy now; new ones are accepted. The cut happens asynchronously, a few
 * milliseconds later. Returns 0, or -1 if the proxy is not running. */
int kube_bed_proxy_cut(const kube_bed_proxy *proxy);
/* Cuts every connection and closes each new one until kube_bed_proxy_release: the server is unreachable through the
 * proxy meanwhile (a client that reconnects fails and backs off). Asynchronous like the cut. 0, or -1. */
int kube_bed_proxy_hold(const kube_bed_proxy *proxy);
int kube_bed_proxy_release(const kube_bed_proxy *proxy);
void kube_bed_proxy_stop(kube_bed_proxy *proxy);

/* Runs `kubebed.py ARGV...` (namespace, node, user, compact; see kubebed.py) with the bed's environment. Returns its
 * exit status (-1 if it could not run); *out (may be NULL) receives its stdout without the trailing newline, owned by
 * the caller (free). Its stderr goes to the test's stderr. */
int kube_bed_cmd(char **out, const char *const argv[]);
/* Runs kubectl (NS_TEST_KUBECTL, else /usr/bin/kubectl) with --kubeconfig=$NS_TEST_KUBECONFIG and ARGV, feeding
 * STDIN_TEXT (may be NULL) to its standard input; returns and captures as kube_bed_cmd. */
int kube_bed_kubectl(char **out, const char *stdin_text, const char *const argv[]);

/* Creates namespace PREFIX-<random> (once its default service account exists) into NAME. Returns 0 or -1. */
int kube_bed_namespace(const char *prefix, char *name, size_t size);
/* Creates Node NAME marked Ready (4 CPU, 16Gi, 110 pods), with LABEL "k=v" when not NULL and TAINT "k=v:Effect"
 * when not NULL, and waits until the scheduler may bind to it. Returns 0 or -1. */
int kube_bed_ready_node(const char *name, const char *label, const char *taint);

#endif
