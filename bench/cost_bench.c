/*
 * Cost benchmark (issue 17): what `packing: karpenter` and `packing: cost` pay for the same pods, against the exact
 * optimum on small scenarios and against the LP lower bound at 1k, 10k and 50k pods, with the scheduler's time.
 * Scenarios are generated (seeded) and priced from the real catalogs of the shared data directory (cost_catalog.h);
 * the optimum side is GLPK's (cost_optimum.h). Printed: one JSON object per scenario set, then the targets
 * with the figures beside them. The figures are printed as they are; missing a target does not fail the run. Times are
 * the process's CPU time around the scheduler call (it runs on one thread): on a shared machine wall time measures the
 * other processes as much as the scheduler.
 *
 * Usage: cost_bench DATA_DIR [SMALL_PER_CATALOG [LARGE_PER_SIZE [SIZES...]]] (defaults 40, 3, 1000 10000 50000).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cost_catalog.h"
#include "cost_optimum.h"
#include "log/ns_log.h"
#include "sched_fixture.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

typedef struct scenario {
    const cb_catalog *cat;
    size_t *types; /* indices in cat */
    size_t n_types;
    co_group groups[32];
    size_t n_groups;
} scenario;

static bool group_fits_some(const scenario *sc, const co_group *g)
{
    for (size_t i = 0; i < sc->n_types; i++) {
        const cb_type *t = &sc->cat->types[sc->types[i]];
        if (g->cpu <= t->cpu_milli && g->mem <= t->mem_bytes)
            return true;
    }
    return false;
}

/* Pod shapes of a mixed workload: 250m to 8 cpu, 0.5 to 8 GiB per cpu. */
static void random_group(scenario *sc, uint64_t *rng, int64_t n, int64_t max_cpu)
{
    static const int64_t cpus[] = {250, 500, 1000, 1500, 2000, 3000, 4000, 6000, 8000};
    static const int64_t mib_per_cpu[] = {512, 1024, 2048, 4096, 6144, 8192};
    co_group g;
    do {
        g.cpu = cpus[rng_next(rng) % 9];
        g.mem = g.cpu * mib_per_cpu[rng_next(rng) % 6] / 1000 * FX_MI;
        g.n = n;
    } while (g.cpu > max_cpu || !group_fits_some(sc, &g));
    sc->groups[sc->n_groups++] = g;
}

/* Small: the sizes (up to 64 vCPU) of three random families, 2 to 4 groups of 2 to 12 pods. */
static int small_scenario(scenario *sc, const cb_catalog *cat, uint64_t seed)
{
    uint64_t rng = seed * 2654435761u + 7;
    memset(sc, 0, sizeof(*sc));
    sc->cat = cat;
    if (!(sc->types = malloc(cat->n * sizeof(size_t))))
        return -1;
    const char *fam[3];
    for (size_t f = 0; f < 3; f++)
        fam[f] = cat->types[rng_next(&rng) % cat->n].family;
    for (size_t i = 0; i < cat->n; i++)
        if (cat->types[i].cpu_milli <= 64000 &&
            (!strcmp(cat->types[i].family, fam[0]) || !strcmp(cat->types[i].family, fam[1]) ||
             !strcmp(cat->types[i].family, fam[2])))
            sc->types[sc->n_types++] = i;
    size_t ng = 2 + rng_next(&rng) % 3;
    for (size_t g = 0; g < ng; g++)
        random_group(sc, &rng, 2 + (int64_t)(rng_next(&rng) % 11), 4000);
    return 0;
}

/* Large: every type of the catalog, 16 groups sharing n_pods at random weights. */
static int large_scenario(scenario *sc, const cb_catalog *cat, uint64_t seed, int64_t n_pods)
{
    uint64_t rng = seed * 2654435761u + 11;
    memset(sc, 0, sizeof(*sc));
    sc->cat = cat;
    if (!(sc->types = malloc(cat->n * sizeof(size_t))))
        return -1;
    for (size_t i = 0; i < cat->n; i++)
        sc->types[sc->n_types++] = i;
    double w[16], sum = 0;
    for (size_t g = 0; g < 16; g++)
        sum += w[g] = 1 + (double)(rng_next(&rng) % 100);
    int64_t left = n_pods;
    for (size_t g = 0; g < 16; g++) {
        int64_t n = g == 15 ? left : (int64_t)((double)n_pods * w[g] / sum);
        left -= n;
        random_group(sc, &rng, n, 8000);
    }
    return 0;
}

typedef struct run {
    double cost, seconds;
    size_t unschedulable;
} run;

static void schedule(const scenario *sc, ns_sched_packing packing, run *out)
{
    ns_cluster *c = ns_cluster_new();
    ns_itype_set set = {0};
    if (!c)
        abort();
    for (size_t i = 0; i < sc->n_types; i++) {
        const cb_type *t = &sc->cat->types[sc->types[i]];
        char labels[96], offers[96];
        snprintf(labels, sizeof(labels), "kubernetes.io/arch=%s,kubernetes.io/os=linux", t->arch);
        snprintf(offers, sizeof(offers), "zone-a:on-demand:%.17g", t->price);
        fx_type(&set, t->name, t->cpu_milli, t->mem_bytes, t->pods, labels, offers);
    }
    fx_pool(c, "default", 0, "");
    for (size_t g = 0; g < sc->n_groups; g++)
        for (int64_t i = 0; i < sc->groups[g].n; i++) {
            char name[48], labels[32];
            snprintf(name, sizeof(name), "g%zu-%lld", g, (long long)i);
            snprintf(labels, sizeof(labels), "app=g%zu", g);
            fx_pod(c, name, sc->groups[g].cpu, sc->groups[g].mem, labels);
        }
    ns_sched_result r;
    double t0 = now_s();
    fx_run_packing(c, &set, NULL, packing, &r);
    out->seconds = now_s() - t0;
    out->cost = 0;
    for (size_t i = 0; i < r.n_claims; i++)
        out->cost += r.claims[i].options[0].price_per_hour;
    out->unschedulable = r.n_unschedulable;
    ns_sched_result_free(&r);
    ns_itype_set_free(&set);
    ns_cluster_free(c);
}

static co_type *opt_types(const scenario *sc)
{
    co_type *t = malloc(sc->n_types * sizeof(*t));
    for (size_t i = 0; t && i < sc->n_types; i++) {
        const cb_type *x = &sc->cat->types[sc->types[i]];
        t[i] = (co_type){x->cpu_milli, x->mem_bytes, x->pods, x->price};
    }
    return t;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof(*v), dbl_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double worst(const double *v, size_t n)
{
    double w = n ? v[0] : NAN;
    for (size_t i = 1; i < n; i++)
        w = fmax(w, v[i]);
    return w;
}

/* Ratios and times of both modes over a set of scenarios against a reference cost (optimum or bound). */
typedef struct tally {
    double *ratio[2], *secs[2];
    size_t n, skipped, unschedulable, pods;
} tally;

static int tally_init(tally *t, size_t cap)
{
    memset(t, 0, sizeof(*t));
    for (int m = 0; m < 2; m++) {
        t->ratio[m] = calloc(cap ? cap : 1, sizeof(double));
        t->secs[m] = calloc(cap ? cap : 1, sizeof(double));
        if (!t->ratio[m] || !t->secs[m])
            return -1;
    }
    return 0;
}

static void tally_free(tally *t)
{
    for (int m = 0; m < 2; m++) {
        free(t->ratio[m]);
        free(t->secs[m]);
    }
}

/* Runs both modes on sc and records their ratio to ref. */
static void tally_add(tally *t, const scenario *sc, double ref)
{
    run r[2];
    schedule(sc, NS_SCHED_PACKING_KARPENTER, &r[0]);
    schedule(sc, NS_SCHED_PACKING_COST, &r[1]);
    for (int m = 0; m < 2; m++) {
        t->ratio[m][t->n] = r[m].cost / ref;
        t->secs[m][t->n] = r[m].seconds;
        t->unschedulable += r[m].unschedulable;
    }
    for (size_t g = 0; g < sc->n_groups; g++)
        t->pods += (size_t)sc->groups[g].n;
    t->n++;
    if (getenv("NS_COST_BENCH_DETAIL")) {
        fprintf(stderr, "%s: reference %.4f, karpenter %.4f (%.2f ms), cost %.4f (%.2f ms); types", sc->cat->name,
                ref, r[0].cost, r[0].seconds * 1e3, r[1].cost, r[1].seconds * 1e3);
        for (size_t i = 0; i < sc->n_types && sc->n_types <= 40; i++)
            fprintf(stderr, " %s", sc->cat->types[sc->types[i]].name);
        fprintf(stderr, "; groups");
        for (size_t g = 0; g < sc->n_groups; g++)
            fprintf(stderr, " %lldx(%lldm,%lldMi)", (long long)sc->groups[g].n, (long long)sc->groups[g].cpu,
                    (long long)(sc->groups[g].mem / FX_MI));
        fprintf(stderr, "\n");
    }
}

typedef struct summary {
    double med[2], worst[2], ms_per_10k[2], extra_ms_per_10k, ms_per_scenario[2];
} summary;

static void tally_print(tally *t, const char *bench, const char *against, const char *skipped, long pods_each,
                        summary *s)
{
    double secs[2] = {0, 0};
    for (int m = 0; m < 2; m++) {
        for (size_t i = 0; i < t->n; i++)
            secs[m] += t->secs[m][i];
        s->worst[m] = worst(t->ratio[m], t->n);
        s->med[m] = median(t->ratio[m], t->n);
        s->ms_per_10k[m] = t->pods ? secs[m] * 1e3 * 1e4 / (double)t->pods : 0;
        s->ms_per_scenario[m] = t->n ? secs[m] * 1e3 / (double)t->n : 0;
    }
    s->extra_ms_per_10k = s->ms_per_10k[1] - s->ms_per_10k[0];
    printf("{\"bench\":\"%s\",\"against\":\"%s\",\"pods_per_scenario\":%ld,\"scenarios\":%zu,\"%s\":%zu,"
           "\"unschedulable\":%zu,\"karpenter\":{\"ratio_median\":%.4f,\"ratio_worst\":%.4f,\"ms_per_scenario\":%.2f,"
           "\"ms_per_10k_pods\":%.1f},\"cost\":{\"ratio_median\":%.4f,\"ratio_worst\":%.4f,\"ms_per_scenario\":%.2f,"
           "\"ms_per_10k_pods\":%.1f},\"cost_extra_ms_per_10k_pods\":%.1f}\n",
           bench, against, pods_each, t->n, skipped, t->skipped, t->unschedulable, s->med[0], s->worst[0],
           s->ms_per_scenario[0], s->ms_per_10k[0], s->med[1], s->worst[1], s->ms_per_scenario[1], s->ms_per_10k[1],
           s->extra_ms_per_10k);
    fflush(stdout);
}

static int small_set(const cb_catalog *cats, size_t n_cats, size_t per_catalog, summary *s)
{
    tally t;
    int rc = tally_init(&t, per_catalog * n_cats);
    for (size_t c = 0; rc == 0 && c < n_cats; c++)
        for (size_t i = 0; rc == 0 && i < per_catalog; i++) {
            scenario sc;
            if ((rc = small_scenario(&sc, &cats[c], i + 1)) < 0)
                break;
            co_type *ty = opt_types(&sc);
            double opt = 0;
            int r = ty ? co_exact(ty, sc.n_types, sc.groups, sc.n_groups, 2000000, 60, &opt) : -1;
            if (r < 0)
                rc = -1;
            else if (r > 0)
                t.skipped++;
            else
                tally_add(&t, &sc, opt);
            free(ty);
            free(sc.types);
        }
    if (rc == 0)
        tally_print(&t, "small", "exact-optimum", "skipped_unsolved", -1, s);
    tally_free(&t);
    return rc;
}

static int large_set(const cb_catalog *cats, size_t n_cats, size_t per_size, long pods, summary *s)
{
    tally t;
    size_t unconverged = 0;
    int rc = tally_init(&t, per_size * n_cats);
    for (size_t c = 0; rc == 0 && c < n_cats; c++)
        for (size_t i = 0; rc == 0 && i < per_size; i++) {
            scenario sc;
            if ((rc = large_scenario(&sc, &cats[c], i + 1, pods)) < 0)
                break;
            co_type *ty = opt_types(&sc);
            double bound = 0;
            int converged = 0;
            co_lp_stats st = {0};
            rc = ty ? co_lp_bound(ty, sc.n_types, sc.groups, sc.n_groups, 120, &bound, &converged, &st) : -1;
            if (rc == 0) {
                fprintf(stderr,
                        "{\"lp_bound\":%.4f,\"master\":%.4f,\"converged\":%d,\"catalog\":\"%s\",\"seed\":%zu,"
                        "\"pods\":%ld,\"types\":%zu,\"types_used\":%zu,\"rounds\":%zu,\"mips\":%zu,"
                        "\"columns\":%zu,\"cpu_s\":%.2f}\n",
                        bound, st.master_value, converged, cats[c].name, i + 1, pods, sc.n_types, st.types_used,
                        st.rounds, st.mips, st.columns, st.cpu_s);
                unconverged += !converged;
                tally_add(&t, &sc, bound);
            }
            free(ty);
            free(sc.types);
        }
    t.skipped = unconverged; /* counted all the same: their bound is Farley's, still a valid lower bound */
    if (rc == 0)
        tally_print(&t, "large", "lp-bound", "bound_not_converged", pods, s);
    tally_free(&t);
    return rc;
}

static void target(const char *what, double value, double limit)
{
    printf("target %-44s %8.4f  (at most %.4f)  %s\n", what, value, limit, value <= limit ? "met" : "MISSED");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cost_bench DATA_DIR [SMALL_PER_CATALOG [LARGE_PER_SIZE [SIZES...]]]\n");
        return 2;
    }
    ns_log_set_level(NS_LOG_WARN);
    size_t per_catalog = argc > 2 ? strtoul(argv[2], NULL, 10) : 40, per_size = argc > 3 ? strtoul(argv[3], NULL, 10) : 3;
    long sizes[8] = {1000, 10000, 50000};
    size_t n_sizes = 3;
    if (argc > 4)
        for (n_sizes = 0; n_sizes < 8 && n_sizes + 4 < (size_t)argc; n_sizes++)
            sizes[n_sizes] = strtol(argv[n_sizes + 4], NULL, 10);
    cb_catalog cats[CB_CATALOGS] = {0};
    int rc = 0;
    for (int c = 0; rc == 0 && c < CB_CATALOGS; c++)
        rc = cb_catalog_load(argv[1], c, &cats[c]);
    summary small, large[8];
    if (rc == 0)
        rc = small_set(cats, CB_CATALOGS, per_catalog, &small);
    for (size_t i = 0; rc == 0 && i < n_sizes; i++)
        rc = large_set(cats, CB_CATALOGS, per_size, sizes[i], &large[i]);
    if (rc == 0) {
        if (per_catalog > 0) { /* no small scenario asked for: no figure to hold against the target */
            target("small, cost mode, median ratio to optimum", small.med[1], 1.02);
            target("small, cost mode, worst ratio to optimum", small.worst[1], 1.05);
        }
        for (size_t i = 0; i < n_sizes; i++) {
            char what[64];
            snprintf(what, sizeof(what), "%ld pods, cost mode, worst ratio to LP bound", sizes[i]);
            target(what, large[i].worst[1], 1.05);
            snprintf(what, sizeof(what), "%ld pods, cost mode, extra ms per 10k pods", sizes[i]);
            target(what, large[i].extra_ms_per_10k, 50);
        }
    }
    for (int c = 0; c < CB_CATALOGS; c++)
        cb_catalog_free(&cats[c]);
    return rc == 0 ? 0 : 1;
}
