/* test_lg_schedule.c - the open model's schedules as the threads take them
 * (loadgen/worker.c on loadgen/schedule.c): per-key streams start at spread
 * phases drawn from --seed (1,000 keys at 5/s never fire together), the
 * same seed gives the same schedule, --arrivals poisson gives exponential
 * gaps at the asked rate, and --rate/--ramp over keys that all have a rate
 * of their own scale them, never go ignored. No sockets: requests are
 * taken from the schedule at a clock the test sets. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "loadgen/config.h"
#include "loadgen/schedule.h"
#include "loadgen/worker.h"

#define SEC INT64_C(1000000000)

static int parse(ps_lg_config *cfg, ps_error *err, const char *a0, ...)
{
    char *argv[40];
    int argc = 0;
    argv[argc++] = (char *)"petstore-load";
    va_list ap;
    va_start(ap, a0);
    for (const char *a = a0; a && argc < 39; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    return ps_lg_config_parse(argc, argv, "/nonexistent/bodies.json", cfg, err);
}

/* A keys file of n keys, each with `rate` (0: none). */
static char *keys_file(size_t n, double rate)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/test_lg_schedule_%d.keys", (int)getpid());
    FILE *f = fopen(path, "w");
    for (size_t i = 0; f && i < n; i++) {
        if (rate > 0)
            fprintf(f, "key-%06zu enterprise 1000000 100000000 rate=%g\n", i, rate);
        else
            fprintf(f, "key-%06zu enterprise 1000000 100000000\n", i);
    }
    if (f) fclose(f);
    return path;
}

typedef struct taken {
    int64_t *due; /* ns after the begin */
    size_t *key;
    size_t n;
} taken;

/* Every request thread `id` of cfg's run takes from its schedule in the
 * first `span` ns, its clock set past each due time. */
static void take_all(const ps_lg_config *cfg, int id, int64_t span, taken *out)
{
    ps_lg_shared sh = {.cfg = cfg};
    ps_lg_sync sync = {0};
    sh.per_key = 1;
    sh.reqs = calloc(cfg->nkeys, sizeof *sh.reqs);
    sh.shared_keys = calloc(cfg->nkeys, sizeof *sh.shared_keys);
    for (size_t k = 0; k < cfg->nkeys; k++)
        if (cfg->keys[k].rate <= 0) sh.shared_keys[sh.nshared++] = k;
    ps_lg_thread t;
    ps_error err;
    memset(out, 0, sizeof *out);
    if (ps_lg_thread_init(&t, id, 100000, &sh, &sync, &err) != 0) {
        CHECK(!"thread init");
        return;
    }
    int64_t begin = SEC; /* any monotonic origin */
    ps_lg_thread_begin(&t, begin);
    size_t cap = 1024;
    out->due = malloc(cap * sizeof *out->due);
    out->key = malloc(cap * sizeof *out->key);
    for (;;) {
        ps_lg_req r;
        int64_t wake = INT64_MAX;
        ps_lg_take_result tr = ps_lg_take(&t, begin + span, &r, &wake);
        if (tr != PS_LG_TAKE_READY || r.due_ns >= begin + span) break;
        if (out->n == cap) {
            cap *= 2;
            out->due = realloc(out->due, cap * sizeof *out->due);
            out->key = realloc(out->key, cap * sizeof *out->key);
        }
        out->due[out->n] = r.due_ns - begin;
        out->key[out->n++] = r.key;
    }
    ps_lg_thread_free(&t);
    free(sh.reqs);
    free(sh.shared_keys);
}

static void taken_free(taken *t)
{
    free(t->due);
    free(t->key);
}

/* The most requests due in any one millisecond. */
static size_t busiest_ms(const taken *t, int64_t span)
{
    size_t nb = (size_t)(span / 1000000) + 1, most = 0;
    size_t *b = calloc(nb, sizeof *b);
    for (size_t i = 0; i < t->n; i++) {
        size_t k = (size_t)(t->due[i] / 1000000);
        if (k < nb && ++b[k] > most) most = b[k];
    }
    free(b);
    return most;
}

/* 1,000 keys at rate=5: 5,000 requests a second, 5 a millisecond on
 * average. In lockstep all 1,000 keys would be due in the same instant. */
static void keys_start_at_spread_phases(void)
{
    ps_lg_config cfg;
    ps_error err;
    CHECK_INT(parse(&cfg, &err, "--base-url", "http://127.0.0.1:1/v1", "--keys", keys_file(1000, 5),
                    "--duration", "2s", NULL),
              PS_LG_CONFIG_OK);
    taken t;
    take_all(&cfg, 0, 2 * SEC, &t);
    CHECK_INT(t.n, 10000);
    size_t most = busiest_ms(&t, 2 * SEC);
    fprintf(stderr, "1000 keys at 5/s: at most %zu requests due in one millisecond\n", most);
    CHECK(most <= 20);
    /* each key still every 200 ms */
    int64_t first = -1, second = -1;
    for (size_t i = 0; i < t.n && second < 0; i++)
        if (t.key[i] == 17) {
            if (first < 0)
                first = t.due[i];
            else
                second = t.due[i];
        }
    CHECK(llabs(second - first - 200000000) < 1000);
    taken_free(&t);
    ps_lg_config_free(&cfg);
}

/* Two threads share each key: together they keep it every 200 ms. */
static void threads_interleave_a_key(void)
{
    ps_lg_config cfg;
    ps_error err;
    CHECK_INT(parse(&cfg, &err, "--base-url", "http://127.0.0.1:1/v1", "--keys", keys_file(50, 5),
                    "--threads", "2", "--connections", "2", "--duration", "2s", NULL),
              PS_LG_CONFIG_OK);
    taken a, b;
    take_all(&cfg, 0, 2 * SEC, &a);
    take_all(&cfg, 1, 2 * SEC, &b);
    CHECK_INT(a.n + b.n, 500);
    int64_t da = -1, db = -1;
    for (size_t i = 0; i < a.n && da < 0; i++)
        if (a.key[i] == 3) da = a.due[i];
    for (size_t i = 0; i < b.n && db < 0; i++)
        if (b.key[i] == 3) db = b.due[i];
    CHECK(llabs(llabs(db - da) - 200000000) < 1000);
    taken_free(&a);
    taken_free(&b);
    ps_lg_config_free(&cfg);
}

static bool same_schedule(const char *seed_a, const char *seed_b, const char *arrivals)
{
    ps_lg_config ca, cb;
    ps_error err;
    const char *keys = keys_file(100, 3);
    CHECK_INT(parse(&ca, &err, "--base-url", "http://127.0.0.1:1/v1", "--keys", keys, "--seed",
                    seed_a, "--arrivals", arrivals, NULL),
              PS_LG_CONFIG_OK);
    CHECK_INT(parse(&cb, &err, "--base-url", "http://127.0.0.1:1/v1", "--keys", keys, "--seed",
                    seed_b, "--arrivals", arrivals, NULL),
              PS_LG_CONFIG_OK);
    taken a, b;
    take_all(&ca, 0, SEC, &a);
    take_all(&cb, 0, SEC, &b);
    bool same = a.n == b.n;
    for (size_t i = 0; same && i < a.n; i++)
        same = a.due[i] == b.due[i] && a.key[i] == b.key[i];
    taken_free(&a);
    taken_free(&b);
    ps_lg_config_free(&ca);
    ps_lg_config_free(&cb);
    return same;
}

static void seed_decides_the_schedule(void)
{
    CHECK(same_schedule("7", "7", "uniform"));
    CHECK(!same_schedule("7", "8", "uniform"));
    CHECK(same_schedule("7", "7", "poisson"));
    CHECK(!same_schedule("7", "8", "poisson"));
}

/* --arrivals poisson at 1,000/s for 20 s: about 20,000 requests, gaps of
 * mean 1 ms with a coefficient of variation near 1 (evenly spaced: 0). */
static void poisson_gaps(void)
{
    ps_lg_config cfg;
    ps_error err;
    CHECK_INT(parse(&cfg, &err, "--base-url", "http://127.0.0.1:1/v1", "--api-key", "key-000001",
                    "--rate", "1000", "--arrivals", "poisson", "--duration", "20s", NULL),
              PS_LG_CONFIG_OK);
    taken t;
    take_all(&cfg, 0, 20 * SEC, &t);
    fprintf(stderr, "poisson 1000/s over 20 s: %zu requests\n", t.n);
    CHECK(t.n > 19000 && t.n < 21000);
    double sum = 0, sum2 = 0;
    for (size_t i = 1; i < t.n; i++) {
        double g = (double)(t.due[i] - t.due[i - 1]) / 1e6;
        sum += g;
        sum2 += g * g;
    }
    double n = (double)(t.n - 1), mean = sum / n, cv = sqrt(sum2 / n - mean * mean) / mean;
    fprintf(stderr, "poisson gaps: mean %.4f ms, cv %.3f\n", mean, cv);
    CHECK(mean > 0.95 && mean < 1.05);
    CHECK(cv > 0.9 && cv < 1.1);
    taken_free(&t);
    ps_lg_config_free(&cfg);
}

/* --rate over keys that all have a rate of their own scales them to it;
 * --ramp scales them along the ramp. */
static void rate_and_ramp_scale_key_rates(void)
{
    ps_lg_config cfg;
    ps_error err;
    const char *keys = keys_file(100, 5); /* 500/s in all */
    CHECK_INT(parse(&cfg, &err, "--base-url", "http://127.0.0.1:1/v1", "--keys", keys, "--rate",
                    "2000", "--duration", "1s", NULL),
              PS_LG_CONFIG_OK);
    CHECK(fabs(cfg.key_scale_from - 4) < 1e-9 && fabs(cfg.key_scale_to - 4) < 1e-9);
    taken t;
    take_all(&cfg, 0, SEC, &t);
    CHECK_INT(t.n, 2000);
    taken_free(&t);
    ps_lg_config_free(&cfg);

    CHECK_INT(parse(&cfg, &err, "--base-url", "http://127.0.0.1:1/v1", "--keys", keys, "--ramp",
                    "0:2000", "--duration", "2s", NULL),
              PS_LG_CONFIG_OK);
    take_all(&cfg, 0, 2 * SEC, &t);
    /* 0 to 2,000/s over 2 s: 2,000 in all, a quarter of them in the first second */
    fprintf(stderr, "ramp 0:2000 over 2 s on per-key rates: %zu requests\n", t.n);
    CHECK(t.n >= 1990 && t.n <= 2010);
    size_t first = 0;
    for (size_t i = 0; i < t.n; i++)
        first += t.due[i] < SEC;
    CHECK(first >= 480 && first <= 520);
    taken_free(&t);
    ps_lg_config_free(&cfg);
}

static void capacity_flags(void)
{
    ps_lg_config cfg;
    ps_error err;
    const char *u = "http://127.0.0.1:1/v1";
    CHECK_INT(parse(&cfg, &err, "--base-url", u, "--api-key", "k", "--arrivals", "bursty", NULL),
              PS_LG_CONFIG_ERROR);
    CHECK(strstr(err.message, "--arrivals: expected uniform or poisson") != NULL);
    ps_lg_config_free(&cfg);
    CHECK_INT(parse(&cfg, &err, "--base-url", u, "--api-key", "k", "--requests", "5", "--warmup",
                    "1s", NULL),
              PS_LG_CONFIG_ERROR);
    CHECK(strstr(err.message, "--warmup needs --duration") != NULL);
    ps_lg_config_free(&cfg);
    CHECK_INT(parse(&cfg, &err, "--base-url", u, "--api-key", "k", "--error-budget", "101%", NULL),
              PS_LG_CONFIG_ERROR);
    CHECK(strstr(err.message, "--error-budget") != NULL);
    ps_lg_config_free(&cfg);
    CHECK_INT(parse(&cfg, &err, "--base-url", u, "--api-key", "k", "--error-budget", "2.5%",
                    "--max-lateness", "20ms", "--seed", "42", NULL),
              PS_LG_CONFIG_OK);
    CHECK(fabs(cfg.error_budget - 0.025) < 1e-12);
    CHECK_INT(cfg.max_lateness_ns, 20000000);
    CHECK_INT((int64_t)cfg.seed, 42);
    ps_lg_config_free(&cfg);
}

/* --customers: made-up keys per plan, each at --quota of its plan's
 * per-minute limit times --time-scale; or the first keys of each plan of a
 * keys file, and a clear error when it has too few. */
static void customers_keys_and_rates(void)
{
    ps_lg_config cfg;
    ps_error err;
    CHECK_INT(parse(&cfg, &err, "--base-url", "http://127.0.0.1:1/v1", "--customers",
                    "free=3,pro=2", "--quota", "0.5", "--time-scale", "60", NULL),
              PS_LG_CONFIG_OK);
    CHECK_INT(cfg.nkeys, 5);
    if (cfg.nkeys == 5) {
        CHECK_STR(cfg.keys[0].key, "customer-free-000001");
        CHECK(fabs(cfg.keys[0].rate - 30) < 1e-9); /* 60/min * 0.5 * 60 / 60 s */
        CHECK_STR(cfg.keys[4].key, "customer-pro-000002");
        CHECK(fabs(cfg.keys[4].rate - 150) < 1e-9); /* 300/min */
        CHECK_INT(cfg.keys[4].plan.per_minute, 300);
    }
    ps_lg_config_free(&cfg);
    CHECK_INT(parse(&cfg, &err, "--base-url", "http://127.0.0.1:1/v1", "--keys", keys_file(4, 0),
                    "--customers", "business=2", NULL),
              PS_LG_CONFIG_ERROR);
    CHECK(strstr(err.message, "--customers: 2 business customers asked, the keys file has 0") !=
          NULL);
    ps_lg_config_free(&cfg);
    CHECK_INT(parse(&cfg, &err, "--base-url", "http://127.0.0.1:1/v1", "--customers",
                    "enterprise=2", NULL),
              PS_LG_CONFIG_ERROR);
    CHECK(strstr(err.message, "not free, pro or business") != NULL);
    ps_lg_config_free(&cfg);
}

int main(void)
{
    RUN(keys_start_at_spread_phases);
    RUN(threads_interleave_a_key);
    RUN(seed_decides_the_schedule);
    RUN(poisson_gaps);
    RUN(rate_and_ramp_scale_key_rates);
    RUN(capacity_flags);
    RUN(customers_keys_and_rates);
    unlink(keys_file(0, 0));
    return TEST_EXIT();
}
