/* run.c - one load run, step by step: prepare the requests and outputs,
 * start the threads and collect their seconds, merge, judge, report. */
#include "loadgen/run.h"

#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/tls_client.h"
#include "core/tls_mismatch.h"
#include "core/clock.h"
#include "core/fd_limit.h"
#include "core/hdr_log.h"
#include "core/histogram_print.h"
#include "core/json.h"
#include "loadgen/collector.h"
#include "loadgen/generator.h"
#include "loadgen/live_metrics.h"
#include "loadgen/prepare.h"
#include "loadgen/shard_report.h"
#include "loadgen/summary.h"
#include "loadgen/tls_target.h"
#include "loadgen/transport.h"
#include "reports/html_report.h"
#include "reports/report_markdown.h"
#include "reports/report_load_console.h"

static ps_lg_sync *volatile signal_target;
static volatile sig_atomic_t caught_signal;

static void on_sigint(int sig)
{
    caught_signal = sig;
    if (signal_target) atomic_store(&signal_target->stop, 1);
}

/* A run whose figures cannot be trusted as a verdict on the target is
 * exit 3, in this order: interrupted (SIGINT/SIGTERM); no request answered;
 * the run ended with every thread's connections down and its latest
 * attempt failed (the target went away); more than half the requests
 * failed (connection refused or broken, no response). Timeouts alone do
 * not count toward that share: a slow target in an overload test is a
 * result for thresholds (error_rate<...), not an aborted run. Returns the
 * verdict, or NULL. */
#define PS_LG_MAX_FAILED_SHARE 0.5

/* A server that asks for a client certificate and gets none may end the
 * handshake, or finish it and answer every request 4xx (nginx with
 * ssl_verify_client on: 400 "No required SSL certificate was sent"): that
 * is the connection refused, not the service's verdict on the requests
 * (the runner stops the same way, runner/conform.c). Over https without
 * --cert, when nothing was answered below 400, a handshake of its own asks
 * the server whether it wants a certificate. */
#define CERT_MISSING_MSG                                                                           \
    "the server asked for a TLS client certificate and none was given (give --cert FILE --key "    \
    "FILE)"

static bool cert_missing(const ps_lg_config *cfg, const ps_lg_stats *t)
{
    if (!cfg->https || cfg->cert_file) return false;
    int64_t client_errors = 0;
    for (int status = 400; status < 500; status++)
        client_errors += t->status[status];
    return client_errors == t->answered &&
           ps_tls_server_asks_cert(cfg->host, cfg->port, (int)(cfg->timeout_ns / 1000000));
}

static const char *judge_run(const ps_lg_config *cfg, const ps_lg_thread *threads,
                             const ps_lg_stats *t, bool interrupted, char *why, size_t len)
{
    if (interrupted) {
        snprintf(why, len, "interrupted by %s: partial results",
                 caught_signal == SIGTERM ? "SIGTERM" : "SIGINT");
        return "interrupted";
    }
    int with_conns = 0, down = 0;
    for (int i = 0; i < cfg->threads; i++) {
        if (threads[i].nconns == 0) continue;
        with_conns++;
        down += ps_lg_unreachable(&threads[i]);
    }
    if (t->scheduled > 0 && t->answered == 0) {
        snprintf(why, len,
                 "target %s:%s answered none of %lld requests (%lld failed: %lld connect, %lld "
                 "read; %lld timed out; %lld connection attempts failed)",
                 cfg->host, cfg->port, (long long)t->scheduled, (long long)t->failed,
                 (long long)t->err_connect, (long long)t->err_read, (long long)t->timed_out,
                 (long long)t->connect_failures);
        /* The first failure often says why ("... answered in plain HTTP: use
         * http://"); replies broken off at once may be a TLS port, which many
         * TLS servers close on plain HTTP without a word: ask it. */
        if (!cfg->https && t->err_read > 0 &&
            ps_tls_port_speaks_tls(cfg->host, cfg->port, (int)(cfg->timeout_ns / 1000000))) {
            size_t used = strlen(why);
            snprintf(why + used, len - used, "; %s", PS_TLS_MSG_TLS_ANSWER);
            return "unreachable";
        }
        if (cert_missing(cfg, t)) {
            size_t used = strlen(why);
            snprintf(why + used, len - used, "; %s", CERT_MISSING_MSG);
            return "unreachable";
        }
        for (int i = 0; i < cfg->threads; i++)
            if (threads[i].first_failure[0]) {
                size_t used = strlen(why);
                snprintf(why + used, len - used, "; first failure: %s", threads[i].first_failure);
                break;
            }
        return t->connect_failures > 0 ? "unreachable" : "aborted";
    }
    if (t->answered > 0 && cert_missing(cfg, t)) {
        snprintf(why, len,
                 CERT_MISSING_MSG ": target %s:%s answered every one of %lld requests 4xx (%lld "
                                  "answered 400)",
                 cfg->host, cfg->port, (long long)t->answered, (long long)t->status[400]);
        return "unreachable";
    }
    if (with_conns > 0 && down == with_conns && t->connect_failures > 0) {
        snprintf(why, len,
                 "target %s:%s stopped accepting connections: the run ended with every connection "
                 "down (%lld answered, then %lld connection attempts failed; %lld requests failed, "
                 "%lld timed out)",
                 cfg->host, cfg->port, (long long)t->answered, (long long)t->connect_failures,
                 (long long)t->failed, (long long)t->timed_out);
        return "unreachable";
    }
    if (t->scheduled > 0 && (double)t->failed > PS_LG_MAX_FAILED_SHARE * (double)t->scheduled) {
        snprintf(why, len,
                 "target %s:%s failed more than half the requests: %lld of %lld got no response "
                 "(%lld connect, %lld read)",
                 cfg->host, cfg->port, (long long)t->failed, (long long)t->scheduled,
                 (long long)t->err_connect, (long long)t->err_read);
        return "aborted";
    }
    return NULL;
}

typedef struct worker_arg {
    ps_lg_thread *t;
    const ps_lg_engine_ops *engine;
    _Atomic int *finished;
} worker_arg;

static void *worker_main(void *p)
{
    worker_arg *a = p;
    int64_t cpu0, wait0, start = ps_clock_mono_ns();
    ps_lg_thread_cpu_now(&cpu0, &wait0);
    if (a->engine->run(a->t) != 0) a->t->rc = -1;
    a->t->finished_ns = ps_clock_mono_ns();
    ps_lg_thread_cpu_now(&a->t->cpu_ns, &a->t->runq_wait_ns);
    a->t->cpu_ns -= cpu0;
    a->t->runq_wait_ns = wait0 < 0 || a->t->runq_wait_ns < 0 ? -1 : a->t->runq_wait_ns - wait0;
    a->t->ran_ns = a->t->finished_ns - start;
    ps_lg_stats_finish(&a->t->stats);
    atomic_fetch_add(a->finished, 1);
    return NULL;
}

static FILE *open_out(const char *path, ps_error *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) ps_error_set(err, "cannot write '%s': %s", path, strerror(errno));
    return f;
}

static int close_out(FILE *f, const char *path, ps_error *err)
{
    int bad = ferror(f);
    if (f == stdout)
        bad |= fflush(f) != 0;
    else
        bad |= fclose(f) != 0;
    if (bad) return ps_error_set(err, "error writing '%s'", path);
    return 0;
}

static int write_html(FILE *f, const char *json, size_t len, ps_error *err)
{
    ps_json *doc = ps_json_parse(json, len, NULL, err);
    if (!doc) return ps_error_prefix(err, "own JSON summary unreadable: ");
    int rc = ps_report_html_load(doc, f, err);
    ps_json_free(doc);
    return rc;
}

static int write_md(FILE *f, const char *json, size_t len, ps_error *err)
{
    ps_json *doc = ps_json_parse(json, len, NULL, err);
    if (!doc) return ps_error_prefix(err, "own JSON summary unreadable: ");
    int rc = ps_report_md_load(doc, f, err);
    ps_json_free(doc);
    return rc;
}

/* Everything one run holds, from the first step to the last; run_free
 * releases whatever the steps got to. */
typedef struct load_run {
    const ps_lg_config *cfg;
    ps_lg_shared *sh;
    ps_lg_sync *sync;
    bool barrier_ready;
    const ps_lg_engine_ops *engine;
    ps_lg_thread *threads;
    pthread_t *tids;
    worker_arg *args;
    int started;
    _Atomic int finished;
    ps_lg_collector col; /* also holds the --hdr-log file */
    ps_lg_live *live;    /* --metrics-listen, NULL without */
    FILE *json_out, *hdr_out, *html_out, *md_out;
    /* After join: */
    double duration_s; /* first request to last answer */
    ps_lg_stats total;
    bool total_ready;
    ps_lg_limits limits;
    ps_lg_volley_counts volley; /* --verify-limits: the window-opening volleys of every thread */
    ps_lg_violation *violations;
    size_t nviolations, failing_violations;
    ps_lg_key_model *models;
    size_t nmodels;
    ps_lg_counting *counting;
    size_t ncounting;
    ps_lg_threshold_result *thresholds;
    double send_span_s; /* from the measured start to the last send */
    double drain_s;     /* from the end of the duration to the last answer */
    ps_lg_generator generator;
    ps_lg_window_tally *tally_by_group; /* --verify-limits */
    char why[400];
    ps_lg_summary sum;
    ps_lg_shard_report shard;
    ps_buf json;
    ps_error err;
} load_run;

static load_run *run_create(const ps_lg_config *cfg)
{
    load_run *R = calloc(1, sizeof *R);
    if (!R) abort();
    R->cfg = cfg;
    R->sh = calloc(1, sizeof *R->sh);
    R->sync = calloc(1, sizeof *R->sync);
    R->threads = calloc((size_t)cfg->threads, sizeof *R->threads);
    R->tids = calloc((size_t)cfg->threads, sizeof *R->tids);
    R->args = calloc((size_t)cfg->threads, sizeof *R->args);
    R->thresholds = calloc(cfg->nthresholds + 1, sizeof *R->thresholds);
    if (!R->sh || !R->sync || !R->threads || !R->tids || !R->args || !R->thresholds) abort();
    R->sh->cfg = cfg;
    R->col = (ps_lg_collector){.cfg = cfg, .threads = R->threads, .sync = R->sync};
    R->json = (ps_buf)PS_BUF_INIT;
    return R;
}

/* Every output is opened before the run, so a bad path costs no test. */
static int open_outputs(load_run *R)
{
    const ps_lg_config *cfg = R->cfg;
    if (cfg->hdr_log_path && !(R->col.hdr_log = open_out(cfg->hdr_log_path, &R->err))) return -1;
    if (cfg->intervals_jsonl_path && !(R->col.jsonl = open_out(cfg->intervals_jsonl_path, &R->err)))
        return -1;
    if (cfg->json_path && !(R->json_out = open_out(cfg->json_path, &R->err))) return -1;
    if (cfg->hdr_path && !(R->hdr_out = open_out(cfg->hdr_path, &R->err))) return -1;
    if (cfg->html_path && !(R->html_out = open_out(cfg->html_path, &R->err))) return -1;
    if (cfg->summary_md_path && !(R->md_out = open_out(cfg->summary_md_path, &R->err))) return -1;
    return 0;
}

/* Splits the connections over the threads and readies the collector. */
static int prepare_threads(load_run *R)
{
    const ps_lg_config *cfg = R->cfg;
    if (cfg->engine == PS_LG_ENGINE_CURL) curl_global_init(CURL_GLOBAL_DEFAULT);
    R->engine = cfg->engine == PS_LG_ENGINE_CURL ? &ps_lg_engine_curl : &ps_lg_engine_epoll;
    for (int i = 0; i < cfg->threads; i++) {
        int nconns = cfg->connections / cfg->threads + (i < cfg->connections % cfg->threads);
        if (ps_lg_thread_init(&R->threads[i], i, nconns, R->sh, R->sync, &R->err) != 0) return -1;
    }
    if (ps_lg_collector_init(&R->col, cfg, R->threads, R->sync, &R->err) != 0) return -1;
    if (cfg->metrics_listen) {
        R->live = ps_lg_live_create(cfg, cfg->threads);
        for (int i = 0; i < cfg->threads; i++)
            R->threads[i].live = ps_lg_live_thread(R->live, i);
        if (ps_lg_live_serve(R->live, &R->err) != 0) return -1;
    }
    pthread_barrier_init(&R->sync->barrier, NULL, (unsigned)cfg->threads);
    R->barrier_ready = true;
    return 0;
}

/* --start-at: waits for it, or, late, says so and moves the run's origin
 * back to it, so the threads skip what is past (ps_lg_thread_begin) and
 * the intervals of every shard fall on the same wall-clock seconds. */
static int wait_for_start_at(load_run *R)
{
    const ps_lg_config *cfg = R->cfg;
    int64_t ahead = cfg->start_at_ns - ps_clock_wall_ns();
    while (ahead > 0 && !caught_signal) {
        ps_clock_sleep_ns(ahead > INT64_C(100000000) ? INT64_C(100000000) : ahead);
        ahead = cfg->start_at_ns - ps_clock_wall_ns();
    }
    if (caught_signal) return ps_error_set(&R->err, "interrupted while waiting for --start-at");
    if (ahead < -INT64_C(10000000)) {
        char who[48] = "";
        if (cfg->shards) snprintf(who, sizeof who, "shard %d/%d ", cfg->shard, cfg->shards);
        fprintf(stderr,
                "petstore-load: %sstarted %.3f s after --start-at: skipping the schedule's first "
                "%.3f s (no catch-up)\n",
                who, (double)-ahead / 1e9, (double)-ahead / 1e9);
    }
    int64_t mono = ps_clock_mono_ns();
    R->sh->start_mono_ns = mono + (ahead < 0 ? ahead : 0);
    R->sh->start_wall_ns = cfg->start_at_ns;
    R->sh->schedule_origin_ns = R->sh->start_mono_ns;
    R->col.next_sec = ahead < 0 ? -ahead / INT64_C(1000000000) : 0;
    return 0;
}

/* Starts the clock and the threads; SIGINT/SIGTERM from here on wind the
 * run down instead of killing it. */
static int start_threads(load_run *R)
{
    const ps_lg_config *cfg = R->cfg;
    signal_target = R->sync;
    struct sigaction sa = {.sa_handler = on_sigint};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    R->sh->start_mono_ns = ps_clock_mono_ns();
    R->sh->start_wall_ns = ps_clock_wall_ns();
    if (cfg->start_at_ns && wait_for_start_at(R) != 0) return -1;
    R->col.start_mono_ns = R->sh->start_mono_ns;
    if (R->col.hdr_log &&
        ps_hdr_log_write_header(R->col.hdr_log, (double)R->sh->start_wall_ns / 1e9, &R->err) != 0)
        return -1;
    for (int i = 0; i < cfg->threads; i++) {
        R->args[i] = (worker_arg){&R->threads[i], R->engine, &R->finished};
        if (pthread_create(&R->tids[i], NULL, worker_main, &R->args[i]) != 0) {
            ps_error_set(&R->err, "cannot start thread %d", i);
            /* Threads already started would wait at the burst barrier forever. */
            atomic_store(&R->sync->stop, 1);
            if (cfg->burst) abort();
            break;
        }
        R->started++;
    }
    return 0;
}

/* Collects finished seconds while the threads run, joins them, and
 * collects the rest. Fails if a thread could not start or run. */
static int collect_until_joined(load_run *R)
{
    const ps_lg_config *cfg = R->cfg;
    while (atomic_load(&R->finished) < R->started) {
        ps_clock_sleep_ns(INT64_C(50000000));
        ps_lg_collector_collect(&R->col, (double)(ps_clock_mono_ns() - R->sh->start_mono_ns) / 1e9,
                                false);
    }
    for (int i = 0; i < R->started; i++)
        pthread_join(R->tids[i], NULL);
    int64_t end_ns = ps_clock_mono_ns();
    if (R->started < cfg->threads) return -1;
    ps_lg_collector_collect(&R->col, (double)(end_ns - R->sh->start_mono_ns) / 1e9, true);
    ps_lg_collector_log_held(&R->col);
    if (R->col.live && R->col.nrows) fputc('\n', stderr);
    for (int i = 0; i < cfg->threads; i++) {
        if (R->threads[i].rc != 0) {
            R->err = R->threads[i].err;
            return -1;
        }
    }
    return 0;
}

/* Adds every thread's stats and limit windows into the run's; the run
 * lasts from the first thread's begin to the last one's end. */
static int merge_threads(load_run *R)
{
    const ps_lg_config *cfg = R->cfg;
    if (ps_lg_stats_init(&R->total, (1u << PS_LG_PLANS) - 1, false, &R->err) != 0) return -1;
    R->total_ready = true;
    ps_lg_stats_groups(&R->total, ps_lg_config_group_count(cfg));
    ps_lg_limits_init(&R->limits, cfg->nkeys);
    int64_t begin = INT64_MAX, last = 0, last_sent = 0;
    for (int i = 0; i < cfg->threads; i++) {
        const ps_lg_thread *t = &R->threads[i];
        if (t->finished_ns > last) last = t->finished_ns;
        if (t->last_sent_ns > last_sent) last_sent = t->last_sent_ns;
        ps_lg_stats_add(&R->total, &t->stats);
        ps_lg_limits_merge(&R->limits, &t->limits);
        ps_lg_volley_add(&R->volley, &t->volley);
        if (t->begin_ns && t->begin_ns < begin) begin = t->begin_ns;
    }
    /* admissions without a Reset, in the windows their key's 429s name */
    if (cfg->verify_limits) ps_lg_limits_place(&R->limits, cfg);
    if (begin == INT64_MAX) begin = R->sh->start_mono_ns;
    /* --warmup: the figures' time starts where it ends. */
    begin += cfg->warmup_ns;
    R->duration_s = last > begin ? (double)(last - begin) / 1e9 : 0;
    R->send_span_s = last_sent > begin ? (double)(last_sent - begin) / 1e9 : 0;
    int64_t end = begin + cfg->duration_ns;
    R->drain_s = cfg->duration_ns && last > end ? (double)(last - end) / 1e9 : 0;
    return 0;
}

/* The generator's verdict over the measured part of the run. */
static void judge_generator(load_run *R)
{
    const ps_lg_config *cfg = R->cfg;
    ps_lg_thread_cpu *cpu = calloc((size_t)cfg->threads, sizeof *cpu);
    if (!cpu) abort();
    for (int i = 0; i < cfg->threads; i++)
        cpu[i] = (ps_lg_thread_cpu){R->threads[i].cpu_ns, R->threads[i].runq_wait_ns,
                                    R->threads[i].ran_ns};
    ps_lg_generator_judge(cfg, &R->total, cpu, cfg->threads, (double)cfg->duration_ns / 1e9,
                          R->send_span_s, &R->generator);
    free(cpu);
    R->generator.drain_s = R->drain_s;
    /* Requests that waited past --timeout for a connection the target held
     * are its timeouts, as a client with that many connections would have
     * seen them; when the generator itself fell behind (saturated) they
     * stay out of the target's figures. */
    if (R->generator.verdict != PS_LG_GEN_SATURATED) {
        R->total.scheduled += R->total.unsent_expired;
        R->total.timed_out += R->total.unsent_expired;
        R->total.err_timeout += R->total.unsent_expired;
    }
}

/* A run that would pass but claims nothing (exit 3): its generator could
 * not send what was asked, for want of CPU (saturated) or of connections
 * (connection-limited: the target held them all, or they could not be
 * opened; its waits are in the corrected latencies and requests that
 * waited past --timeout in the timeouts, but a rate it never offered is no
 * capacity), or --verify-limits saw windows but none reach its limit. */
static const char *run_claims_nothing(load_run *R, size_t filled)
{
    const ps_lg_config *cfg = R->cfg;
    if (R->generator.verdict == PS_LG_GEN_SATURATED) {
        snprintf(R->why, sizeof R->why, "the generator could not keep its schedule: %s",
                 R->generator.why);
        return "saturated";
    }
    if (R->generator.verdict == PS_LG_GEN_CONN_LIMITED) {
        snprintf(R->why, sizeof R->why,
                 "the generator could not send what was asked for want of connections: %s",
                 R->generator.why);
        return "connection-limited";
    }
    /* A shard sees part of each window: the merge judges the limits. */
    if (cfg->verify_limits && !cfg->shards && filled == 0 &&
        ps_lg_limits_counted_windows(&R->limits, cfg) > 0) {
        snprintf(R->why, sizeof R->why,
                 "--verify-limits saw no window reach its limit (no 429, no window admitted up to "
                 "its limit): the limits were not exercised; send faster on fewer keys");
        return "not-exercised";
    }
    return NULL;
}

/* Whether every threshold that failed was lost to the generator's own
 * lateness (ps_lg_threshold_eval): then the run measured the generator, not
 * the target, and claims nothing (exit 3); R->why names the figures. */
static bool all_failed_lost_to_generator(load_run *R)
{
    const ps_lg_config *cfg = R->cfg;
    size_t lost = 0, failed = 0, used = 0;
    R->why[0] = '\0';
    for (size_t i = 0; i < cfg->nthresholds; i++) {
        const ps_lg_threshold_result *r = &R->thresholds[i];
        if (r->passed) continue;
        failed++;
        if (!r->lost_to_generator) continue;
        lost++;
        if (used < sizeof R->why)
            used += (size_t)snprintf(R->why + used, sizeof R->why - used,
                                     "%s%s: %.3f ms, the generator's own lateness %.3f ms, the "
                                     "target's %.3f ms",
                                     lost > 1 ? "; " : "", cfg->thresholds[i].expression,
                                     r->actual / 1e3, r->late / 1e3, r->own / 1e3);
    }
    if (failed && lost == failed && used < sizeof R->why)
        snprintf(R->why + used, sizeof R->why - used,
                 " (its threads busy %.0f%% of the time, %lld requests waited for a "
                 "connection): the generator left requests that late before the target answered; "
                 "add --threads, cores or machines (--shard)",
                 100.0 * (R->generator.busy_share > 0 ? R->generator.busy_share : 0),
                 (long long)R->generator.conn_waits);
    return failed && lost == failed;
}

/* Verifies the limits, evaluates the thresholds and fills the summary with
 * the verdict. Returns the exit code. */
static int judge_results(load_run *R)
{
    const ps_lg_config *cfg = R->cfg;
    if (cfg->verify_limits) {
        R->failing_violations =
            ps_lg_limits_verify(&R->limits, cfg, &R->violations, &R->nviolations);
        ps_lg_limits_models(&R->limits, cfg, &R->models, &R->nmodels);
        ps_lg_limits_counting(&R->limits, cfg, &R->counting, &R->ncounting);
        R->nviolations = ps_lg_shard_drop_partial_views(cfg, R->violations, R->nviolations);
    }
    judge_generator(R); /* first: it decides whether unsent requests count as timeouts */
    bool thr_failed = false;
    for (size_t i = 0; i < cfg->nthresholds; i++) {
        R->thresholds[i] = ps_lg_threshold_eval(&cfg->thresholds[i], &R->total, &R->generator);
        thr_failed |= !R->thresholds[i].passed;
    }
    bool over_budget = ps_lg_error_rate(&R->total) > cfg->error_budget;
    int exit_code = R->failing_violations       ? PS_LG_EXIT_LIMITS
                    : thr_failed || over_budget ? PS_LG_EXIT_THRESHOLD
                                                : PS_LG_EXIT_OK;
    bool interrupted = atomic_load(&R->sync->stop) != 0;
    const char *verdict = judge_run(cfg, R->threads, &R->total, interrupted, R->why, sizeof R->why);
    size_t filled = cfg->verify_limits ? ps_lg_limits_windows_filled(&R->limits) : 0;
    if (verdict) {
        exit_code = PS_LG_EXIT_UNREACHABLE;
    } else if (exit_code == PS_LG_EXIT_THRESHOLD && !over_budget && !cfg->shards &&
               all_failed_lost_to_generator(R)) {
        /* a saturated generator says so; a shard's thresholds are the
         * merge's to judge (its exit 3 would stop the merge) */
        verdict = R->generator.verdict == PS_LG_GEN_SATURATED ? run_claims_nothing(R, filled)
                                                              : "generator-late";
        exit_code = PS_LG_EXIT_UNREACHABLE;
    } else if (exit_code == PS_LG_EXIT_OK || ((R->generator.verdict == PS_LG_GEN_SATURATED ||
                                               R->generator.verdict == PS_LG_GEN_CONN_LIMITED) &&
                                              R->total.answered == 0)) {
        /* A pass needs a generator that sent what it was asked, and limits
         * that were put to the test: else the run claims nothing. A failure
         * stands even so: the target failed under less than was asked,
         * unless a saturated generator got nothing answered to judge. */
        verdict = run_claims_nothing(R, filled);
        if (verdict) exit_code = PS_LG_EXIT_UNREACHABLE;
    }
    R->sum = (ps_lg_summary){
        .error_budget_failed = over_budget,
        .cfg = cfg,
        .total = &R->total,
        .rows = R->col.rows,
        .nrows = R->col.nrows,
        .limits_checked = cfg->verify_limits,
        .windows = cfg->verify_limits ? ps_lg_limits_counted_windows(&R->limits, cfg) : 0,
        .windows_filled = filled,
        .volley = cfg->verify_limits ? &R->volley : NULL,
        .generator = &R->generator,
        .violations = R->violations,
        .nviolations = R->nviolations,
        .failing_violations = R->failing_violations,
        .models = R->models,
        .nmodels = R->nmodels,
        .counting = R->counting,
        .ncounting = R->ncounting,
        .thresholds = R->thresholds,
        .duration_s = R->duration_s,
        .started_wall_ns = R->sh->start_wall_ns,
        .exit_code = exit_code,
        .verdict = verdict,
        .aborted = verdict ? R->why : NULL,
        .interrupted = interrupted,
    };
    if (cfg->verify_limits) {
        R->tally_by_group = calloc(ps_lg_config_group_count(cfg), sizeof *R->tally_by_group);
        if (!R->tally_by_group) abort();
        ps_lg_limits_tally(&R->limits, cfg, R->sum.tally_by_plan, R->tally_by_group);
        R->sum.tally_by_group = R->tally_by_group;
    }
    if (cfg->shards) {
        R->shard = (ps_lg_shard_report){
            .cfg = cfg,
            .start_wall_ns = R->sh->start_wall_ns,
            .total = &R->total,
            .row_hists = R->col.row_hists,
            .nrows = R->col.nrows,
            .limits = cfg->verify_limits ? &R->limits : NULL,
        };
        R->sum.extra = ps_lg_shard_json;
        R->sum.extra_arg = &R->shard;
    }
    return exit_code;
}

/* The human summary on stderr (with --quiet, only an exit-3 verdict). */
static void print_text_summary(const load_run *R)
{
    const ps_lg_config *cfg = R->cfg;
    const ps_lg_summary *sum = &R->sum;
    if (cfg->quiet) {
        if (sum->verdict) fprintf(stderr, "petstore-load: %s: %s\n", sum->verdict, R->why);
        return;
    }
    /* rendered from the JSON document, so the console says what --json and
     * --html say (reports/report_load_console.c) */
    ps_load_console_options o = {.color = ps_cli_color_enabled(cfg->color, STDERR_FILENO),
                                 .utf8 = ps_console_locale_utf8()};
    for (int i = 0; i < cfg->threads && !o.first_failure; i++)
        if (R->threads[i].first_failure[0]) o.first_failure = R->threads[i].first_failure;
    ps_error err = {{0}};
    ps_json *doc = ps_json_parse(R->json.data, R->json.len, NULL, &err);
    if (!doc || ps_report_console_load(doc, stderr, &o, &err) != 0)
        fprintf(stderr, "petstore-load: cannot print the summary: %s\n", err.message);
    ps_json_free(doc);
}

/* Writes --json, --hdr, the end of --hdr-log and --html, closing each (a
 * file closed here is no longer the run's to close). */
static int write_outputs(load_run *R)
{
    const ps_lg_config *cfg = R->cfg;
    FILE *f;
    if ((f = R->json_out)) {
        R->json_out = NULL;
        fwrite(R->json.data, 1, R->json.len, f);
        if (close_out(f, cfg->json_path, &R->err) != 0) return -1;
    }
    if ((f = R->hdr_out)) {
        R->hdr_out = NULL;
        ps_hist_percentiles_print(R->total.all.corr, f, 5, 1000.0, PS_HIST_FORMAT_CLASSIC);
        if (close_out(f, cfg->hdr_path, &R->err) != 0) return -1;
    }
    if ((f = R->col.hdr_log)) {
        R->col.hdr_log = NULL;
        if (R->col.failed) {
            R->err = R->col.err;
            if (f != stdout) fclose(f);
            return -1;
        }
        if (close_out(f, cfg->hdr_log_path, &R->err) != 0) return -1;
    }
    if ((f = R->col.jsonl)) {
        R->col.jsonl = NULL;
        if (close_out(f, cfg->intervals_jsonl_path, &R->err) != 0) return -1;
    }
    if ((f = R->html_out)) {
        R->html_out = NULL;
        int hrc = write_html(f, R->json.data, R->json.len, &R->err);
        if (close_out(f, cfg->html_path, &R->err) != 0 || hrc != 0) return -1;
    }
    if ((f = R->md_out)) {
        R->md_out = NULL;
        int mrc = write_md(f, R->json.data, R->json.len, &R->err);
        if (close_out(f, cfg->summary_md_path, &R->err) != 0 || mrc != 0) return -1;
    }
    return 0;
}

static void run_free(load_run *R)
{
    const ps_lg_config *cfg = R->cfg;
    ps_lg_shared *sh = R->sh;
    signal_target = NULL;
    ps_lg_live_destroy(R->live);
    FILE *still_open[] = {R->col.hdr_log, R->json_out, R->hdr_out,
                          R->html_out,    R->md_out,   R->col.jsonl};
    for (size_t i = 0; i < sizeof still_open / sizeof still_open[0]; i++)
        if (still_open[i] && still_open[i] != stdout) fclose(still_open[i]);
    ps_lg_collector_free(&R->col);
    if (R->total_ready) ps_lg_stats_free(&R->total);
    if (R->limits.slots) ps_lg_limits_free(&R->limits);
    free(R->violations);
    free(R->models);
    free(R->counting);
    free(R->tally_by_group);
    free(R->thresholds);
    ps_buf_free(&R->json);
    for (int i = 0; i < cfg->threads; i++)
        if (R->threads[i].sh) ps_lg_thread_free(&R->threads[i]);
    if (R->barrier_ready) pthread_barrier_destroy(&R->sync->barrier);
    ps_lg_prepared_free(cfg, sh);
    ps_tls_client_destroy(sh->tls);
    free(sh);
    free(R->sync);
    free(R->threads);
    free(R->tids);
    free(R->args);
    free(R);
}

int ps_lg_run(const ps_lg_config *cfg)
{
    return ps_lg_run_capture(cfg, NULL);
}

int ps_lg_run_capture(const ps_lg_config *cfg, ps_buf *json)
{
    int exit_code = PS_LG_EXIT_USAGE;
    load_run *R = run_create(cfg);
    ps_lg_shared *sh = R->sh;
    if (cfg->mix[PS_LG_OP_CREATE] > 0 && ps_lg_load_bodies(cfg->bodies_path, sh, &R->err) != 0)
        goto fail;
    if (open_outputs(R) != 0) goto fail;
    if (ps_lg_find_target_address(cfg, sh, &R->err) != 0) {
        exit_code = PS_LG_EXIT_UNREACHABLE;
        goto fail;
    }
    if (cfg->https && cfg->engine == PS_LG_ENGINE_EPOLL) {
        int tls_rc = ps_lg_tls_target_prepare(cfg, &sh->addr, sh->addrlen, &sh->tls, &R->err);
        if (tls_rc != 0) {
            exit_code = tls_rc;
            goto fail;
        }
    }
    ps_lg_render_requests(cfg, sh);
    ps_lg_list_shared_keys(cfg, sh);
    sh->list_url = ps_lg_list_url(cfg);
    /* Thousands of connections need descriptors: raise the soft limit to
     * the hard one rather than fail sockets one by one mid-run. */
    int64_t fd_limit = ps_fd_limit_raise((int64_t)cfg->connections + 64);
    if (fd_limit >= 0 && fd_limit < (int64_t)cfg->connections + 64 && !cfg->quiet)
        fprintf(stderr, "petstore-load: warning: %d connections but only %lld file descriptors\n",
                cfg->connections, (long long)fd_limit);
    if (prepare_threads(R) != 0) goto fail;
    if (start_threads(R) != 0 || collect_until_joined(R) != 0) goto fail;
    if (merge_threads(R) != 0) goto fail;
    exit_code = judge_results(R);
    if (ps_lg_summary_json(&R->sum, &R->json, &R->err) != 0) goto fail_output;
    if (json) ps_buf_append(json, R->json.data, R->json.len);
    print_text_summary(R);
    if (write_outputs(R) != 0) goto fail_output;
    goto out;

fail_output:
    exit_code = PS_LG_EXIT_USAGE;
fail:
    fprintf(stderr, "petstore-load: %s\n", R->err.message);
out:
    run_free(R);
    return exit_code;
}
