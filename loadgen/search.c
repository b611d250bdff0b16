/* search.c - petstore-load search: exponential steps, then bisection, each
 * step a whole run judged from its JSON document. */
#include "loadgen/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/datadir.h"
#include "core/json.h"
#include "core/version.h"
#include "loadgen/config.h"
#include "loadgen/customers.h"
#include "loadgen/generator.h"
#include "loadgen/key_label.h"
#include "loadgen/run.h"
#include "loadgen/search_step.h"

#define PS_LG_SEARCH_MAX_STEPS 40

static void usage(FILE *out)
{
    fputs("usage: petstore-load search RUN-FLAGS --slo EXPR... [--from R] [--to R]\n"
          "         [--resolution P%] [--step D] [--warmup D] [--repeat N]\n"
          "         [--boundary-runs N] [--json F] [--html F] [--quiet]\n"
          "\n"
          "Finds the highest rate the target serves within its objectives: open-model runs\n"
          "at rising rates (doubling from --from), then bisection between the highest\n"
          "passing and the lowest failing rate. A step passes only if every --slo holds,\n"
          "the error budget holds, --verify-limits (when given) finds no violation, the\n"
          "generator kept its schedule, and its load was offered: 90% of the requests due\n"
          "were sent (Retry-After holds count as not sent) and, with --customers, each\n"
          "plan's customers were admitted at 90% of their quota share. A step lasts until\n"
          "each pN objective rests on 10 answers beyond it (p99: 1,000), up to 10 times\n"
          "--step; a step the generator lost is measured again (twice). Reports the\n"
          "highest rate measured passing.\n"
          "\n"
          "  RUN-FLAGS            petstore-load's flags (--base-url, --api-key or --keys,\n"
          "                       --threads, --connections, --mix, --verify-limits, --seed,\n"
          "                       --arrivals, --error-budget, ...); not --rate, --ramp,\n"
          "                       --duration, --requests, --threshold, --burst, sharding\n"
          "  --slo EXPR           an objective in the --threshold grammar: 'p99<50ms',\n"
          "                       'pro.p99<50ms', 'error_rate<0.1%' (repeatable; at least\n"
          "                       one)\n"
          "  --from R             first rate, req/s (default 100)\n"
          "  --to R               highest rate tried, req/s (default 1000000)\n"
          "  --resolution P%      stop when the lowest failing rate is within P% above the\n"
          "                       highest passing one (default 5%)\n"
          "  --step D             each step's measured length (default 10s)\n"
          "  --warmup D           sent before each step's measurement, in no figure\n"
          "                       (default 2s)\n"
          "  --repeat N           runs per rate; a rate passes only if all pass (default 1)\n"
          "  --boundary-runs N    runs in all of the highest passing and the lowest\n"
          "                       failing step once bisected (default 3): the answer must\n"
          "                       pass every one; the knee's spread is the first latency\n"
          "                       --slo's figure over them\n"
          "  --customers P=N,...  with --keys FILE: each step a number of customers of\n"
          "                       each plan (keys of the file), each at --quota (at most\n"
          "                       1) of its plan's limit, from the mix as given up; never\n"
          "                       a key above its quota; the answer is the largest mix\n"
          "                       measured passing; keys run out: exit 3, no answer\n"
          "  --json F, --html F   the report of the step the result rests on, with a\n"
          "                       'search' member: every step, max_rate, min_failing_rate\n"
          "exit: 0 found (or every rate up to --to passed), 99 even the first step failed,\n"
          "      3 the generator saturated before the target failed, the keys ran out\n"
          "      before a step failed, or a step was unreachable or interrupted; 2 usage\n",
          out);
}

typedef ps_lg_step step;

static const char *const refused[] = {"rate",      "ramp",   "duration", "requests",
                                      "threshold", "burst",  "shard",    "shards",
                                      "start-at",  "run-id", "hdr",      "hdr-log"};

/* A run flag the search sets itself or cannot use: by any unique prefix
 * getopt would take for it. */
static const char *refused_flag(const char *arg)
{
    if (strncmp(arg, "--", 2) != 0 || !arg[2]) return NULL;
    const char *name = arg + 2;
    size_t n = strcspn(name, "=");
    static const char *const kept[] = {"threads", "timeout"}; /* prefixes shared with refused */
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        if (strncmp(kept[i], name, n) == 0 && n >= 3) return NULL;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (strncmp(refused[i], name, n) == 0 && n >= 2) return refused[i];
    return NULL;
}

static int parse_rate(const char *flag, const char *v, double *out, ps_error *err)
{
    if (ps_cli_parse_double(v, 0.001, 10e6, out, err) != 0)
        return ps_error_prefix(err, "%s: ", flag);
    return 0;
}

/* Takes the search's own flags out of argv; the rest, with the step's
 * duration, a placeholder rate, the SLOs as thresholds and --quiet, is
 * parsed as a run's. Returns 0, 1 for --help, -1 with S->err. */
static int parse_args(search *S, int argc, char **argv)
{
    char **run = calloc((size_t)argc + 64, sizeof *run);
    if (!run) abort();
    int nrun = 0, rc = -1;
    run[nrun++] = (char *)"petstore-load search";
    S->from = 100;
    S->to = 1e6;
    S->resolution = 0.05;
    S->step_ns = 10 * INT64_C(1000000000);
    S->repeat = 1;
    S->boundary_runs = 3;
    bool have_warmup = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            rc = 1;
            goto out;
        }
        static const char *const own[] = {"--slo",  "--from",   "--to",           "--resolution",
                                          "--step", "--repeat", "--boundary-runs"};
        size_t which = sizeof own / sizeof own[0];
        const char *val = NULL;
        for (size_t k = 0; k < sizeof own / sizeof own[0]; k++) {
            size_t n = strlen(own[k]);
            if (!strcmp(a, own[k])) {
                which = k;
                if (i + 1 >= argc) {
                    ps_error_set(&S->err, "%s: needs a value", own[k]);
                    goto out;
                }
                val = argv[++i];
            } else if (!strncmp(a, own[k], n) && a[n] == '=') {
                which = k;
                val = a + n + 1;
            }
        }
        if (which == sizeof own / sizeof own[0]) {
            const char *r = refused_flag(a);
            if (r) {
                ps_error_set(&S->err, "--%s: the search sets it%s", r,
                             !strcmp(r, "threshold")  ? " (give objectives with --slo)"
                             : !strcmp(r, "duration") ? " (each step lasts --step)"
                                                      : "");
                goto out;
            }
            if (!strncmp(a, "--warmup", 8)) have_warmup = true;
            run[nrun++] = argv[i];
            continue;
        }
        switch (which) {
        case 0: {
            ps_lg_threshold th;
            if (ps_lg_threshold_parse(val, &th, &S->err) != 0) {
                ps_error_prefix(&S->err, "--slo: ");
                goto out;
            }
            free(th.expression);
            S->slos = realloc(S->slos, (S->nslos + 1) * sizeof *S->slos);
            if (!S->slos || !(S->slos[S->nslos++] = strdup(val))) abort();
            break;
        }
        case 1:
            S->from_given = true;
            if (parse_rate("--from", val, &S->from, &S->err)) goto out;
            break;
        case 2:
            if (parse_rate("--to", val, &S->to, &S->err)) goto out;
            break;
        case 3: {
            char num[32];
            size_t n = strlen(val);
            bool pct = n > 0 && val[n - 1] == '%';
            if (n == 0 || n >= sizeof num) {
                ps_error_set(&S->err, "--resolution: expected e.g. 5%%");
                goto out;
            }
            memcpy(num, val, n - pct);
            num[n - pct] = '\0';
            if (ps_cli_parse_double(num, 0.1, 100, &S->resolution, &S->err) != 0) {
                ps_error_prefix(&S->err, "--resolution (percent, 0.1 to 100): ");
                goto out;
            }
            S->resolution /= 100.0;
            break;
        }
        case 4:
            if (ps_cli_parse_duration(val, 0, &S->step_ns, &S->err) != 0) {
                ps_error_prefix(&S->err, "--step: ");
                goto out;
            }
            break;
        case 5:
            if (ps_cli_parse_int(val, 1, 100, &S->repeat, &S->err) != 0) {
                ps_error_prefix(&S->err, "--repeat: ");
                goto out;
            }
            break;
        case 6: {
            int64_t n;
            if (ps_cli_parse_int(val, 1, 10, &n, &S->err) != 0) {
                ps_error_prefix(&S->err, "--boundary-runs: ");
                goto out;
            }
            S->boundary_runs = (int)n;
            break;
        }
        }
    }
    if (S->nslos == 0) {
        ps_error_set(&S->err, "--slo: at least one objective is required (e.g. --slo 'p99<50ms')");
        goto out;
    }
    if (S->to < S->from) {
        ps_error_set(&S->err, "--to (%g) is below --from (%g)", S->to, S->from);
        goto out;
    }
    char step_text[32], from_text[32];
    snprintf(step_text, sizeof step_text, "%lldus", (long long)(S->step_ns / 1000));
    snprintf(from_text, sizeof from_text, "%.17g", S->from);
    char *extra[] = {(char *)"--duration", step_text, (char *)"--rate", from_text};
    for (size_t k = 0; k < 4; k++)
        run[nrun++] = extra[k];
    if (!have_warmup) run[nrun++] = (char *)"--warmup=2s";
    for (size_t k = 0; k < S->nslos; k++) {
        run[nrun++] = (char *)"--threshold";
        run[nrun++] = S->slos[k];
    }
    run = realloc(run, ((size_t)nrun + 1) * sizeof *run);
    if (!run) abort();
    run[nrun] = NULL;
    char *bodies = ps_data_path("create-bodies.json");
    ps_lg_parse_status st =
        ps_lg_config_parse(nrun, run, bodies ? bodies : "create-bodies.json", &S->cfg, &S->err);
    free(bodies);
    S->cfg_ready = true;
    if (st != PS_LG_CONFIG_OK) goto out;
    if (S->cfg.shards) {
        ps_error_set(&S->err, "the search runs on one machine: no --shard or --shards");
        goto out;
    }
    rc = 0;
out:
    free(run);
    return rc;
}

/* The evidence rule: a latency percentile pN rests on at least
 * PS_LG_EVIDENCE_BEYOND answers slower than it, so it needs
 * PS_LG_EVIDENCE_BEYOND / (1 - N/100) answers (p99: 1,000; p90: 100;
 * p99.9: 10,000): a step's p99 from 40 answers is its slowest answer. */
static int64_t answers_needed(const ps_lg_config *cfg)
{
    int64_t need = 0;
    for (size_t i = 0; i < cfg->nthresholds; i++) {
        const ps_lg_threshold *t = &cfg->thresholds[i];
        if (t->metric != PS_LG_METRIC_PERCENTILE || t->percentile >= 100) continue;
        double n = ceil(PS_LG_EVIDENCE_BEYOND / (1 - t->percentile / 100) - 1e-9);
        if (n > (double)need) need = (int64_t)n;
    }
    return need;
}

/* A step's measured length: --step, or as long as the evidence rule needs
 * at its rate (a quarter over, for answers the queue still holds at the
 * end), at most 10 times --step. */
static int64_t plan_duration(const search *S, double rate)
{
    int64_t d = S->step_ns;
    double need_ns = 1.25e9 * (double)S->answers_needed / rate;
    if (need_ns > (double)d) d = (int64_t)need_ns;
    if (d > 10 * S->step_ns) d = 10 * S->step_ns;
    return d;
}

/* Readies the config for a step at `rate` (a step_rate): the shared keys'
 * rate, the factor on keys that all have their own, or --customers' keys,
 * each at its own rate. Returns 0, or -1 with S->err. */
static int set_rate(search *S, step *st, double rate)
{
    S->cfg.rate = rate;
    S->cfg.duration_ns = plan_duration(S, rate);
    st->answers_needed = S->answers_needed;
    if (S->cfg.have_customers) {
        ps_lg_search_customers_at(S, rate, st->customers);
        if (ps_lg_customers_select(&S->cfg, st->customers, &S->err) != 0) return -1;
        ps_lg_key_labels(&S->cfg);
        S->cfg.key_scale_from = S->cfg.key_scale_to = 1; /* each key at its quota share */
        for (int p = 0; p <= PS_PLAN_UNKNOWN; p++) {
            int64_t pm, pd;
            S->ask.plan_quota_rps[p] =
                ps_plan_published((ps_plan_id)p, &pm, &pd)
                    ? (double)st->customers[p] * (double)pm / 60.0 * S->cfg.time_scale
                    : 0;
        }
        return 0;
    }
    if (S->own_rate_sum > 0) S->cfg.key_scale_from = S->cfg.key_scale_to = rate / S->own_rate_sum;
    return 0;
}

static void print_step_line(const search *S, const step *st, size_t n)
{
    if (S->quiet) return;
    char cust[160];
    ps_lg_search_customers_text(st, cust, sizeof cust);
    fprintf(stderr, "  %2zu %11.1f %11.1f %9.3f %9.3f %7lld %9.3f  %-18s %s%s%s%s\n", n, st->rate,
            st->achieved, (double)st->lat[0] / 1e3, (double)st->lat[2] / 1e3, (long long)st->errors,
            (double)st->late[2] / 1e3, st->gen_verdict, cust, st->passed ? "pass" : "FAIL",
            st->passed ? "" : ": ", st->why);
}

/* Runs step st (set up) up to n more times, stopping at its first
 * failure, except a step that failed already: then every run is measured
 * for the spread and the step stays failed (a rate passes only if every
 * run passes). Returns 0, or -1 on a usage or output error. */
static int measure(search *S, step *st, int64_t n)
{
    bool failed_before = st->runs > 0 && !st->passed;
    char why[sizeof st->why];
    snprintf(why, sizeof why, "%s", st->why);
    for (int64_t r = 0; r < n; r++) {
        st->runs++;
        ps_buf doc = PS_BUF_INIT;
        int code = ps_lg_run_capture(&S->cfg, &doc);
        ps_json *d = doc.len ? ps_json_parse(doc.data, doc.len, NULL, &S->err) : NULL;
        if (!d) {
            ps_buf_free(&doc);
            if (code != PS_LG_EXIT_UNREACHABLE) return -1;
            /* no document: the target could not be reached at all */
            st->stop = true;
            st->passed = false;
            st->exit_code = code;
            snprintf(st->why, sizeof st->why, "unreachable (no run)");
            return 0;
        }
        ps_lg_search_judge(st, d, S->cfg.have_customers ? &S->ask : NULL);
        ps_json_free(d);
        if (failed_before && st->passed) {
            ps_buf_free(&doc); /* the step's report stays its failing run's */
            st->passed = false;
            st->by_generator = false;
            snprintf(st->why, sizeof st->why, "%s", why);
            continue;
        }
        free(st->doc);
        st->doc = ps_buf_detach(&doc);
        /* The generator is blamed only when its lateness lasts: a run it
         * lost is measured again, up to twice, before the step is its. */
        if (st->by_generator && st->regen_runs < 2) {
            st->regen_runs++;
            r--;
            continue;
        }
        if (st->stop || (!st->passed && !failed_before)) break;
    }
    return 0;
}

/* Runs a new step at `rate` (--repeat times, stopping at the first
 * failure). Returns its index, or -1 on a usage or output error (said on
 * stderr). */
static long run_step(search *S, double rate)
{
    if (S->nsteps == PS_LG_SEARCH_MAX_STEPS) return -1;
    step *st = &S->steps[S->nsteps];
    memset(st, 0, sizeof *st);
    st->rate = rate;
    if (set_rate(S, st, rate) != 0) {
        fprintf(stderr, "petstore-load search: %s\n", S->err.message);
        return -1;
    }
    if (measure(S, st, S->repeat) != 0) return -1;
    S->nsteps++;
    print_step_line(S, st, S->nsteps);
    return (long)S->nsteps - 1;
}

/* Measures boundary step i again until it has --boundary-runs runs.
 * Returns 0, or -1 on a usage or output error. */
static int confirm(search *S, long i)
{
    step *st = &S->steps[i];
    if (st->runs >= S->boundary_runs || st->stop) return 0;
    if (set_rate(S, st, st->rate) != 0) {
        fprintf(stderr, "petstore-load search: %s\n", S->err.message);
        return -1;
    }
    if (measure(S, st, S->boundary_runs - st->runs) != 0) return -1;
    print_step_line(S, st, (size_t)i + 1);
    return 0;
}

/* Bisects between o->best and o->worst. Returns 1 to go on, 0 when a step
 * stopped the search (o set), -1 on an error. */
static int bisect(search *S, outcome *o)
{
    /* bisected even when the lowest failing rate failed the generator: a
     * rate between may pass, or fail the target, and either is measured */
    while (o->best >= 0 && o->worst >= 0 &&
           S->steps[o->worst].rate - S->steps[o->best].rate >
               S->resolution * S->steps[o->best].rate) {
        double mid =
            ps_lg_search_step_rate(S, (S->steps[o->best].rate + S->steps[o->worst].rate) / 2);
        if (mid <= S->steps[o->best].rate || mid >= S->steps[o->worst].rate) break;
        long i = run_step(S, mid);
        if (i < 0) return -1;
        if (S->steps[i].stop) {
            o->result = "interrupted";
            o->exit_code = PS_LG_EXIT_UNREACHABLE;
            o->doc_step = i;
            return 0;
        }
        if (S->steps[i].passed)
            o->best = i;
        else
            o->worst = i;
    }
    return 1;
}

/* The result from the boundary. Returns 0. */
static int verdict(const search *S, outcome *o)
{
    if (o->worst >= 0 && S->steps[o->worst].by_generator) {
        o->result = "generator-saturated";
        o->exit_code = PS_LG_EXIT_UNREACHABLE;
        o->doc_step = o->worst;
    } else if (o->best < 0) {
        o->result = "first-step-failed";
        o->exit_code = PS_LG_EXIT_THRESHOLD;
        o->doc_step = o->worst;
    } else if (S->keys_why[0]) {
        /* every mix the keys allow passed: the capacity is higher, by how
         * much no step measured, so no answer */
        o->result = "keys-exhausted";
        o->exit_code = PS_LG_EXIT_UNREACHABLE;
        o->doc_step = o->best;
    } else {
        o->result = o->worst < 0 ? "all-passed" : "found";
        o->exit_code = PS_LG_EXIT_OK;
        o->doc_step = o->best;
    }
    return 0;
}

/* Exponential, then bisection. With --customers each step is a mix of
 * whole customers (step_rate), so the bisection also ends when no mix lies
 * between the highest passing and the lowest failing one. */
static int search_run(search *S, outcome *o)
{
    *o = (outcome){.best = -1, .worst = -1, .doc_step = -1};
    double rate = ps_lg_search_step_rate(S, S->from);
    for (;;) {
        long i = run_step(S, rate);
        if (i < 0) return -1;
        step *st = &S->steps[i];
        if (st->stop) {
            o->worst = i;
            o->result = "interrupted";
            o->exit_code = PS_LG_EXIT_UNREACHABLE;
            o->doc_step = i;
            return 0;
        }
        if (!st->passed) {
            o->worst = i;
            break;
        }
        o->best = i;
        if (rate >= S->to) break;
        double next = ps_lg_search_step_rate(S, rate * 2 > S->to ? S->to : rate * 2);
        if (next <= rate) {
            ps_lg_search_keys_ran_out(S, rate);
            break;
        }
        rate = next;
    }
    for (;;) {
        int b = bisect(S, o);
        if (b != 1) return b;
        /* the boundary measured again: the answer must pass every run, the
         * lowest failing is measured for the spread */
        if (o->best < 0 || o->worst < 0) break;
        if (confirm(S, o->best) != 0) return -1;
        if (S->steps[o->best].stop) {
            o->result = "interrupted";
            o->exit_code = PS_LG_EXIT_UNREACHABLE;
            o->doc_step = o->best;
            return 0;
        }
        if (S->steps[o->best].passed) {
            if (confirm(S, o->worst) != 0) return -1;
            break;
        }
        /* it failed a run: the answer falls below it */
        o->worst = o->best;
        o->best = -1;
        for (size_t k = 0; k < S->nsteps; k++)
            if (S->steps[k].passed && S->steps[k].rate < S->steps[o->worst].rate &&
                (o->best < 0 || S->steps[k].rate > S->steps[o->best].rate))
                o->best = (long)k;
    }
    return verdict(S, o);
}

static void search_free(search *S)
{
    for (size_t i = 0; i < S->nslos; i++)
        free(S->slos[i]);
    free(S->slos);
    for (size_t i = 0; i < S->nsteps; i++)
        free(S->steps[i].doc);
    free(S->steps);
    free(S->json_path);
    free(S->html_path);
    free(S->md_path);
    if (S->cfg_ready) ps_lg_config_free(&S->cfg);
}

int ps_lg_search_main(int argc, char **argv)
{
    search S = {0};
    int code = PS_LG_EXIT_USAGE;
    ps_buf report = PS_BUF_INIT;
    int p = parse_args(&S, argc, argv);
    if (p == 1) {
        usage(stdout);
        code = 0;
        goto out;
    }
    if (p != 0) {
        ps_cli_usage_error(stderr, "petstore-load search", S.err.message);
        goto out;
    }
    /* The steps write nothing and print no summary: the search does. */
    S.quiet = S.cfg.quiet;
    S.cfg.quiet = true;
    S.json_path = S.cfg.json_path;
    S.html_path = S.cfg.html_path;
    S.md_path = S.cfg.summary_md_path;
    S.cfg.json_path = S.cfg.html_path = S.cfg.summary_md_path = NULL;
    if (S.cfg.intervals_jsonl_path) {
        ps_cli_usage_error(stderr, "petstore-load search",
                           "--intervals-jsonl: a search writes no interval lines (its steps are in "
                           "--json)");
        goto out;
    }
    if (S.cfg.metrics_listen) {
        ps_cli_usage_error(stderr, "petstore-load search",
                           "--metrics-listen: a search serves no live metrics (each step is a "
                           "run of its own; its steps are in --json)");
        goto out;
    }
    if (S.cfg.key_scale_from > 0)
        for (size_t i = 0; i < S.cfg.nkeys; i++)
            S.own_rate_sum += S.cfg.keys[i].rate;
    if (S.cfg.have_customers && ps_lg_search_setup_customers(&S) != 0) {
        ps_cli_usage_error(stderr, "petstore-load search", S.err.message);
        goto out;
    }
    S.answers_needed = answers_needed(&S.cfg);
    S.steps = calloc(PS_LG_SEARCH_MAX_STEPS, sizeof *S.steps);
    if (!S.steps) abort();
    if (!S.quiet)
        fprintf(stderr,
                "petstore-load search: %g to %g req/s, steps of %.3g s after %.3g s warm-up, "
                "resolution %g%%\n"
                "  %2s %11s %11s %9s %9s %7s %9s  %-18s %sresult\n",
                S.from, S.to, (double)S.step_ns / 1e9, (double)S.cfg.warmup_ns / 1e9,
                100 * S.resolution, "#", "rate/s", "answered/s", "p50 ms", "p99 ms", "errors",
                "late p99", "generator", S.cfg.have_customers ? "customers " : "");
    outcome o;
    if (search_run(&S, &o) != 0) {
        fprintf(stderr, "petstore-load search: %s\n",
                S.nsteps == PS_LG_SEARCH_MAX_STEPS ? "too many steps" : "a step could not run");
        goto out;
    }
    if (ps_lg_search_build_report(&S, &o, &report, &S.err) != 0 ||
        ps_lg_search_write_outputs(&S, &report, &S.err) != 0) {
        fprintf(stderr, "petstore-load search: %s\n", S.err.message);
        goto out;
    }
    code = o.exit_code;
out:
    ps_buf_free(&report);
    search_free(&S);
    return code;
}
