/* search.c - petstore-load search: exponential steps, then bisection, each
 * step a whole run judged from its JSON document. */
#include "loadgen/search.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/datadir.h"
#include "core/json.h"
#include "core/json_writer.h"
#include "core/version.h"
#include "loadgen/config.h"
#include "loadgen/generator.h"
#include "loadgen/run.h"
#include "reports/html_report.h"
#include "reports/report_load_console.h"
#include "reports/report_markdown.h"
#include "reports/report_search.h"

#define PS_LG_SEARCH_MAX_STEPS 40

static void usage(FILE *out)
{
    fputs("usage: petstore-load search RUN-FLAGS --slo EXPR... [--from R] [--to R]\n"
          "         [--resolution P%] [--step D] [--warmup D] [--repeat N]\n"
          "         [--json F] [--html F] [--quiet]\n"
          "\n"
          "Finds the highest rate the target serves within its objectives: open-model runs\n"
          "at rising rates (doubling from --from), then bisection between the highest\n"
          "passing and the lowest failing rate. A step passes only if every --slo holds,\n"
          "the error budget holds, --verify-limits (when given) finds no violation and the\n"
          "generator kept its schedule. Reports the highest rate measured passing.\n"
          "\n"
          "  RUN-FLAGS            petstore-load's flags (--base-url, --api-key or --keys,\n"
          "                       --threads, --connections, --mix, --verify-limits, --seed,\n"
          "                       --arrivals, --error-budget, ...); not --rate, --ramp,\n"
          "                       --duration, --requests, --threshold, --burst, sharding\n"
          "  --slo EXPR           an objective in the --threshold grammar: 'p99<50ms',\n"
          "                       'error_rate<0.1%' (repeatable; at least one)\n"
          "  --from R             first rate, req/s (default 100)\n"
          "  --to R               highest rate tried, req/s (default 1000000)\n"
          "  --resolution P%      stop when the lowest failing rate is within P% above the\n"
          "                       highest passing one (default 5%)\n"
          "  --step D             each step's measured length (default 10s)\n"
          "  --warmup D           sent before each step's measurement, in no figure\n"
          "                       (default 2s)\n"
          "  --repeat N           runs per rate; a rate passes only if all pass (default 1)\n"
          "  --customers P=N,...  search a factor of that mix of customers (each at --quota of\n"
          "                       its plan's limit); --from defaults to the mix as given; the\n"
          "                       result names the customers per plan at the highest rate\n"
          "  --json F, --html F   the report of the step the result rests on, with a\n"
          "                       'search' member: every step, max_rate, min_failing_rate\n"
          "exit: 0 found (or every rate up to --to passed), 99 even the first step failed,\n"
          "      3 the generator saturated before the target failed, or a step was\n"
          "      unreachable or interrupted; 2 usage\n",
          out);
}

typedef struct step {
    double rate;
    int exit_code;
    bool passed, by_generator, stop;
    char why[600];
    char *doc; /* the run's JSON document (the last repeat's) */
    double achieved, error_rate, send_rate;
    int64_t lat[5];  /* p50 p90 p99 p99_9 max, corrected, us */
    int64_t late[4]; /* lateness p50 p90 p99 max, us */
    int64_t errors;
    char gen_verdict[24];
} step;

typedef struct search {
    ps_lg_config cfg;
    bool cfg_ready;
    char **slos;
    size_t nslos;
    double from, to, resolution, own_rate_sum;
    bool from_given;
    int64_t step_ns;
    int64_t repeat;
    char *json_path, *html_path, *md_path;
    bool quiet;
    step *steps;
    size_t nsteps;
    ps_error err;
} search;

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
    bool have_warmup = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            rc = 1;
            goto out;
        }
        static const char *const own[] = {"--slo",        "--from", "--to",
                                          "--resolution", "--step", "--repeat"};
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
            if (ps_cli_parse_duration(val, 1, &S->step_ns, &S->err) != 0) {
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

/* Readies the config for a step at `rate`: the shared keys' rate, or the
 * factor on keys that all have their own. */
static void set_rate(search *S, double rate)
{
    S->cfg.rate = rate;
    if (S->own_rate_sum > 0) S->cfg.key_scale_from = S->cfg.key_scale_to = rate / S->own_rate_sum;
}

static void add_why(step *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_why(step *st, const char *fmt, ...)
{
    size_t used = strlen(st->why);
    if (used + 3 >= sizeof st->why) return;
    if (used) {
        memcpy(st->why + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->why + used, sizeof st->why - used, fmt, ap);
    va_end(ap);
}

/* Judges a step from its run's document. */
static void judge_step(step *st, const ps_json *d)
{
    st->why[0] = '\0';
    st->by_generator = false;
    const ps_json *lat = ps_json_path(d, "latency_us.corrected");
    static const char *const lk[] = {"p50", "p90", "p99", "p99_9", "max"};
    for (int i = 0; i < 5; i++)
        st->lat[i] = ps_json_get_int(lat, lk[i], 0);
    st->achieved = ps_json_get_number(d, "throughput_rps", 0);
    st->error_rate = ps_json_get_number(d, "error_rate", 0);
    int64_t e5 = 0;
    const ps_json *status = ps_json_get(d, "status");
    for (size_t i = 0; status && status->type == PS_JSON_OBJECT && i < status->count; i++)
        if (status->keys[i][0] == '5')
            e5 += status->items[i]->type == PS_JSON_NUMBER ? (int64_t)status->items[i]->d : 0;
    st->errors = ps_json_get_int(d, "failed", 0) + ps_json_get_int(d, "timed_out", 0) + e5;
    const ps_json *g = ps_json_get(d, "generator");
    snprintf(st->gen_verdict, sizeof st->gen_verdict, "%s",
             ps_json_get_string(g, "verdict", "not-applicable"));
    st->send_rate = ps_json_get_number(g, "send_rate_rps", 0);
    static const char *const gk[] = {"p50", "p90", "p99", "max"};
    for (int i = 0; i < 4; i++)
        st->late[i] = ps_json_get_int(ps_json_get(g, "lateness_us"), gk[i], 0);
    const char *verdict = ps_json_get_string(d, "verdict", "?");
    st->exit_code = (int)ps_json_get_int(d, "exit_code", 3);
    if (!strcmp(verdict, "unreachable") || !strcmp(verdict, "aborted") ||
        !strcmp(verdict, "interrupted")) {
        st->stop = true;
        add_why(st, "%s: %s", verdict, ps_json_get_string(d, "aborted", "?"));
    }
    /* nothing answered: the objectives below had no answer to judge, and a
     * "p99<5ms: 0.000 ms" alone would not say why */
    int64_t answered = ps_json_get_int(d, "answered", 0),
            skipped = ps_json_get_int(d, "skipped_retry_after", 0);
    if (!st->stop && answered == 0 && skipped > 0)
        add_why(st,
                "nothing answered in the measured time: %lld requests not sent, waiting out the "
                "key's 429s (its rate limit: give keys whose plans allow the rate, or "
                "--customers, or --ignore-retry-after)",
                (long long)skipped);
    else if (!st->stop && answered == 0)
        add_why(st, "nothing answered in the measured time");
    /* A latency objective lost before any request reached the target: the
     * step measured the generator, not the target (the run's rule,
     * ps_lg_threshold_eval: its report's lost_to_generator). */
    bool late_alone = true, any_failed = false;
    const ps_json *th = ps_json_get(d, "thresholds");
    for (size_t i = 0; th && th->type == PS_JSON_ARRAY && i < th->count; i++) {
        const ps_json *t = th->items[i];
        const ps_json *ok = ps_json_get(t, "passed");
        if (ok && ok->type == PS_JSON_BOOL && ok->boolean) continue;
        const char *expr = ps_json_get_string(t, "expression", "?");
        any_failed = true;
        const ps_json *lost = ps_json_get(t, "lost_to_generator");
        late_alone &= lost && lost->type == PS_JSON_BOOL && lost->boolean;
        if (ps_json_get(t, "actual_us"))
            add_why(st, "%s: %.3f ms", expr, ps_json_get_number(t, "actual_us", 0) / 1e3);
        else
            add_why(st, "%s: %.3f%%", expr, 100.0 * ps_json_get_number(t, "actual", 0));
    }
    late_alone &= any_failed && answered > 0;
    if (late_alone)
        add_why(st,
                "the generator itself left requests that late (lateness p50 %.3f p90 %.3f p99 "
                "%.3f ms, its threads busy %.0f%% of the time): the objective was lost before "
                "the target answered (add --threads, cores or machines: --shard)",
                (double)st->late[0] / 1e3, (double)st->late[1] / 1e3, (double)st->late[2] / 1e3,
                100.0 * ps_json_get_number(g, "busy_share", 0));
    const ps_json *eb = ps_json_get(d, "error_budget");
    const ps_json *eb_ok = ps_json_get(eb, "passed");
    bool other_failed = eb_ok && eb_ok->type == PS_JSON_BOOL && !eb_ok->boolean;
    if (other_failed)
        add_why(st, "error budget: %.2f%% errors over %.2f%%",
                100.0 * ps_json_get_number(eb, "error_rate", 0),
                100.0 * ps_json_get_number(eb, "budget", 0));
    if (!strcmp(ps_json_path(d, "limits.verdict")
                    ? ps_json_get_string(ps_json_get(d, "limits"), "verdict", "")
                    : "",
                "fail")) {
        other_failed = true;
        add_why(st, "limits violated (%zu violations)",
                ps_json_path(d, "limits.violations") ? ps_json_path(d, "limits.violations")->count
                                                     : (size_t)0);
    }
    if (!strcmp(st->gen_verdict, "connection-limited")) {
        other_failed = true;
        add_why(st, "connection-limited: %s", ps_json_get_string(g, "why", "?"));
    }
    /* With nothing answered in the measured time the objectives judged no
     * answer of the target's: a saturated generator sent none. */
    bool service_failed = answered > 0 && ((any_failed && !late_alone) || other_failed);
    if (!strcmp(st->gen_verdict, "saturated"))
        add_why(st, "generator saturated: %s", ps_json_get_string(g, "why", "?"));
    st->by_generator = (!strcmp(st->gen_verdict, "saturated") || late_alone) && !service_failed;
    st->passed = st->why[0] == '\0';
}

static void print_step_line(const search *S, const step *st, size_t n)
{
    if (S->quiet) return;
    fprintf(stderr, "  %2zu %11.1f %11.1f %9.3f %9.3f %7lld %9.3f  %-18s %s%s%s\n", n, st->rate,
            st->achieved, (double)st->lat[0] / 1e3, (double)st->lat[2] / 1e3, (long long)st->errors,
            (double)st->late[2] / 1e3, st->gen_verdict, st->passed ? "pass" : "FAIL",
            st->passed ? "" : ": ", st->why);
}

/* Runs the step at `rate` (--repeat times, stopping at the first failure).
 * Returns its index, or -1 on a usage or output error (said on stderr). */
static long run_step(search *S, double rate)
{
    if (S->nsteps == PS_LG_SEARCH_MAX_STEPS) return -1;
    step *st = &S->steps[S->nsteps];
    memset(st, 0, sizeof *st);
    st->rate = rate;
    set_rate(S, rate);
    for (int64_t r = 0; r < S->repeat; r++) {
        ps_buf doc = PS_BUF_INIT;
        int code = ps_lg_run_capture(&S->cfg, &doc);
        ps_json *d = doc.len ? ps_json_parse(doc.data, doc.len, NULL, &S->err) : NULL;
        if (!d) {
            ps_buf_free(&doc);
            if (code == PS_LG_EXIT_UNREACHABLE) {
                /* no document: the target could not be reached at all */
                st->stop = true;
                st->exit_code = code;
                snprintf(st->why, sizeof st->why, "unreachable (no run)");
                S->nsteps++;
                return (long)S->nsteps - 1;
            }
            return -1;
        }
        free(st->doc);
        st->doc = ps_buf_detach(&doc);
        judge_step(st, d);
        ps_json_free(d);
        if (!st->passed || st->stop) break;
    }
    S->nsteps++;
    print_step_line(S, st, S->nsteps);
    return (long)S->nsteps - 1;
}

typedef struct outcome {
    const char *result;
    int exit_code;
    long best, worst; /* highest passing, lowest failing step (-1: none) */
    long doc_step;    /* whose document the report is */
} outcome;

/* Exponential, then bisection. */
static int search_run(search *S, outcome *o)
{
    *o = (outcome){.best = -1, .worst = -1, .doc_step = -1};
    double rate = S->from;
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
        rate = rate * 2 > S->to ? S->to : rate * 2;
    }
    /* bisected even when the lowest failing rate failed the generator: a
     * rate between may pass, or fail the target, and either is measured */
    while (o->best >= 0 && o->worst >= 0 &&
           S->steps[o->worst].rate - S->steps[o->best].rate >
               S->resolution * S->steps[o->best].rate) {
        long i = run_step(S, (S->steps[o->best].rate + S->steps[o->worst].rate) / 2);
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
    if (o->worst >= 0 && S->steps[o->worst].by_generator) {
        o->result = "generator-saturated";
        o->exit_code = PS_LG_EXIT_UNREACHABLE;
        o->doc_step = o->worst;
    } else if (o->best < 0) {
        o->result = "first-step-failed";
        o->exit_code = PS_LG_EXIT_THRESHOLD;
        o->doc_step = o->worst;
    } else {
        o->result = o->worst < 0 ? "all-passed" : "found";
        o->exit_code = PS_LG_EXIT_OK;
        o->doc_step = o->best;
    }
    return 0;
}

static void step_json(ps_jw *w, const step *st)
{
    ps_jw_object_open(w);
    ps_jw_kdouble(w, "rate", st->rate, 3);
    ps_jw_kdouble(w, "achieved_rps", st->achieved, 1);
    ps_jw_key(w, "latency_us");
    ps_jw_object_open(w);
    static const char *const lk[] = {"p50", "p90", "p99", "p99_9", "max"};
    for (int i = 0; i < 5; i++)
        ps_jw_kint(w, lk[i], st->lat[i]);
    ps_jw_object_close(w);
    ps_jw_kint(w, "errors", st->errors);
    ps_jw_kdouble(w, "error_rate", st->error_rate, 6);
    ps_jw_key(w, "generator");
    ps_jw_object_open(w);
    ps_jw_kstring(w, "verdict", st->gen_verdict);
    ps_jw_kdouble(w, "send_rate_rps", st->send_rate, 1);
    ps_jw_key(w, "lateness_us");
    ps_jw_object_open(w);
    static const char *const gk[] = {"p50", "p90", "p99", "max"};
    for (int i = 0; i < 4; i++)
        ps_jw_kint(w, gk[i], st->late[i]);
    ps_jw_object_close(w);
    ps_jw_object_close(w);
    ps_jw_kbool(w, "passed", st->passed);
    if (st->passed)
        ps_jw_knull(w, "why");
    else
        ps_jw_kstring(w, "why", st->why);
    ps_jw_kint(w, "exit_code", st->exit_code);
    ps_jw_object_close(w);
}

/* The report: the document of the step the result rests on, with the
 * search member added as its last. */
static int build_report(const search *S, const outcome *o, ps_buf *out, ps_error *err)
{
    const char *doc = S->steps[o->doc_step].doc;
    const char *last = strrchr(doc, '}');
    if (!last) return ps_error_set(err, "internal error: a step's report is not an object");
    ps_buf_append(out, doc, (size_t)(last - doc));
    ps_buf_puts(out, ",\n  \"search\": ");
    ps_jw w;
    ps_jw_init(&w, out, true);
    ps_jw_object_open(&w);
    ps_jw_key(&w, "slos");
    ps_jw_array_open(&w);
    for (size_t i = 0; i < S->nslos; i++)
        ps_jw_string(&w, S->slos[i]);
    ps_jw_array_close(&w);
    ps_jw_kdouble(&w, "from_rps", S->from, 3);
    ps_jw_kdouble(&w, "to_rps", S->to, 3);
    ps_jw_kdouble(&w, "resolution", S->resolution, 6);
    ps_jw_kdouble(&w, "step_s", (double)S->step_ns / 1e9, 3);
    ps_jw_kdouble(&w, "warmup_s", (double)S->cfg.warmup_ns / 1e9, 3);
    ps_jw_kint(&w, "repeat", S->repeat);
    ps_jw_kstring(&w, "result", o->result);
    ps_jw_kint(&w, "exit_code", o->exit_code);
    if (o->best >= 0)
        ps_jw_kdouble(&w, "max_rate", S->steps[o->best].rate, 3);
    else
        ps_jw_knull(&w, "max_rate");
    if (o->worst >= 0)
        ps_jw_kdouble(&w, "min_failing_rate", S->steps[o->worst].rate, 3);
    else
        ps_jw_knull(&w, "min_failing_rate");
    if (S->cfg.have_customers) {
        /* --customers: the mix scaled to max_rate, customers per plan */
        ps_jw_key(&w, "customers");
        if (o->best >= 0 && S->own_rate_sum > 0) {
            double factor = S->steps[o->best].rate / S->own_rate_sum;
            ps_jw_object_open(&w);
            for (int p = 0; p <= PS_PLAN_UNKNOWN; p++)
                if (S->cfg.customers[p] > 0)
                    ps_jw_kdouble(&w, ps_plan_name((ps_plan_id)p),
                                  (double)S->cfg.customers[p] * factor, 1);
            ps_jw_object_close(&w);
        } else {
            ps_jw_null(&w);
        }
    }
    ps_jw_key(&w, "steps");
    ps_jw_array_open(&w);
    for (size_t i = 0; i < S->nsteps; i++)
        step_json(&w, &S->steps[i]);
    ps_jw_array_close(&w);
    ps_jw_object_close(&w);
    ps_buf_puts(out, "\n}\n");
    if (!ps_jw_ok(&w)) return ps_error_set(err, "internal error: the search member is malformed");
    return 0;
}

static int write_file(const char *path, const char *data, size_t len, ps_error *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) return ps_error_set(err, "cannot write '%s': %s", path, strerror(errno));
    bool bad = fwrite(data, 1, len, f) != len;
    bad |= f == stdout ? fflush(f) != 0 : fclose(f) != 0;
    if (bad) return ps_error_set(err, "error writing '%s'", path);
    return 0;
}

/* --json, --html and the console summary, all from the one report. */
static int write_outputs(const search *S, const ps_buf *report, ps_error *err)
{
    if (S->json_path && write_file(S->json_path, report->data, report->len, err) != 0) return -1;
    ps_json *doc = ps_json_parse(report->data, report->len, NULL, err);
    if (!doc) return ps_error_prefix(err, "own search report unreadable: ");
    int rc = 0;
    if (S->html_path) {
        FILE *f = strcmp(S->html_path, "-") == 0 ? stdout : fopen(S->html_path, "w");
        if (!f)
            rc = ps_error_set(err, "cannot write '%s': %s", S->html_path, strerror(errno));
        else {
            rc = ps_report_html_load(doc, f, err);
            if ((f == stdout ? fflush(f) : fclose(f)) != 0 && rc == 0)
                rc = ps_error_set(err, "error writing '%s'", S->html_path);
        }
    }
    if (S->md_path && rc == 0) {
        FILE *f = fopen(S->md_path, "w");
        if (!f)
            rc = ps_error_set(err, "cannot write '%s': %s", S->md_path, strerror(errno));
        else {
            rc = ps_report_md_load(doc, f, err);
            if (fclose(f) != 0 && rc == 0) rc = ps_error_set(err, "error writing '%s'", S->md_path);
        }
    }
    if (!S->quiet && rc == 0) {
        ps_load_console_options o = {.color = ps_cli_color_enabled(S->cfg.color, 2),
                                     .utf8 = ps_console_locale_utf8()};
        rc = ps_report_console_search(doc, stderr, &o, err);
    }
    ps_json_free(doc);
    return rc;
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
    /* --customers without --from: start at the mix as given */
    if (S.cfg.have_customers && !S.from_given && S.own_rate_sum > 0) {
        S.from = S.own_rate_sum;
        if (S.to < S.from) S.to = S.from * 1000;
    }
    S.steps = calloc(PS_LG_SEARCH_MAX_STEPS, sizeof *S.steps);
    if (!S.steps) abort();
    if (!S.quiet)
        fprintf(stderr,
                "petstore-load search: %g to %g req/s, steps of %.3g s after %.3g s warm-up, "
                "resolution %g%%\n"
                "  %2s %11s %11s %9s %9s %7s %9s  %-18s %s\n",
                S.from, S.to, (double)S.step_ns / 1e9, (double)S.cfg.warmup_ns / 1e9,
                100 * S.resolution, "#", "rate/s", "answered/s", "p50 ms", "p99 ms", "errors",
                "late p99", "generator", "result");
    outcome o;
    if (search_run(&S, &o) != 0) {
        fprintf(stderr, "petstore-load search: %s\n",
                S.nsteps == PS_LG_SEARCH_MAX_STEPS ? "too many steps" : "a step could not run");
        goto out;
    }
    if (build_report(&S, &o, &report, &S.err) != 0 || write_outputs(&S, &report, &S.err) != 0) {
        fprintf(stderr, "petstore-load search: %s\n", S.err.message);
        goto out;
    }
    code = o.exit_code;
out:
    ps_buf_free(&report);
    search_free(&S);
    return code;
}
