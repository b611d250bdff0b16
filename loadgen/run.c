/* run.c - one load run, step by step: prepare the requests and outputs,
 * start the threads and collect their seconds, merge, judge, report. */
#include "loadgen/run.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/tls_mismatch.h"
#include "core/clock.h"
#include "core/fd_limit.h"
#include "core/hdr_log.h"
#include "core/histogram_print.h"
#include "core/json.h"
#include "core/version.h"
#include "loadgen/generator.h"
#include "loadgen/live_metrics.h"
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
        for (int i = 0; i < cfg->threads; i++)
            if (threads[i].first_failure[0]) {
                size_t used = strlen(why);
                snprintf(why + used, len - used, "; first failure: %s", threads[i].first_failure);
                break;
            }
        return t->connect_failures > 0 ? "unreachable" : "aborted";
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

/* Create bodies: a JSON array of NewCategory objects, re-serialised
 * compactly so each request carries exactly the object given. */
static int load_bodies(const char *path, ps_lg_shared *sh, ps_error *err)
{
    ps_buf text = PS_BUF_INIT;
    ps_json *doc = NULL;
    int rc = -1;
    if (ps_buf_read_file(&text, path) != 0) {
        ps_error_set(err, "cannot read create bodies '%s': %s", path, strerror(errno));
        goto out;
    }
    doc = ps_json_parse(text.data, text.len, NULL, err);
    if (!doc) {
        ps_error_prefix(err, "create bodies '%s': ", path);
        goto out;
    }
    if (doc->type != PS_JSON_ARRAY || doc->count == 0) {
        ps_error_set(err, "create bodies '%s': expected a non-empty JSON array of objects", path);
        goto out;
    }
    sh->create_bodies = calloc(doc->count, sizeof *sh->create_bodies);
    if (!sh->create_bodies) abort();
    for (size_t i = 0; i < doc->count; i++) {
        const ps_json *o = doc->items[i];
        if (o->type != PS_JSON_OBJECT) {
            ps_error_set(err, "create bodies '%s': item %zu is a %s, not an object", path, i,
                         ps_json_type_name(o->type));
            goto out;
        }
        ps_buf b = PS_BUF_INIT;
        ps_buf_putc(&b, '{');
        for (size_t m = 0; m < o->count; m++) {
            const ps_json *v = o->items[m];
            if (v->type != PS_JSON_STRING) {
                ps_buf_free(&b);
                ps_error_set(err, "create bodies '%s': item %zu member '%s' is not a string", path,
                             i, o->keys[m]);
                goto out;
            }
            if (m) ps_buf_putc(&b, ',');
            ps_buf_json_string(&b, o->keys[m], o->key_lens[m]);
            ps_buf_putc(&b, ':');
            ps_buf_json_string(&b, v->str, v->len);
        }
        ps_buf_putc(&b, '}');
        sh->create_bodies[sh->nbodies++] = ps_buf_detach(&b);
    }
    rc = 0;
out:
    ps_json_free(doc);
    ps_buf_free(&text);
    return rc;
}

/* Every request the epoll engine sends, as bytes: per key the list, then
 * one create per body. */
static void render_requests(const ps_lg_config *cfg, ps_lg_shared *sh)
{
    sh->per_key = 1 + sh->nbodies;
    sh->reqs = calloc(cfg->nkeys * sh->per_key, sizeof *sh->reqs);
    if (!sh->reqs) abort();
    bool v6 = strchr(cfg->host, ':') != NULL;
    bool default_port = strcmp(cfg->port, cfg->https ? "443" : "80") == 0;
    for (size_t k = 0; k < cfg->nkeys; k++) {
        for (size_t j = 0; j < sh->per_key; j++) {
            ps_buf b = PS_BUF_INIT;
            ps_buf_printf(&b, "%s %s/categories HTTP/1.1\r\nHost: %s%s%s%s%s\r\n",
                          j ? "POST" : "GET", cfg->path_prefix, v6 ? "[" : "", cfg->host,
                          v6 ? "]" : "", default_port ? "" : ":", default_port ? "" : cfg->port);
            ps_buf_printf(&b,
                          "Authorization: Bearer %s\r\nAccept: application/json\r\n"
                          "User-Agent: petstore-load/" PS_VERSION "\r\n",
                          cfg->keys[k].key);
            if (j)
                ps_buf_printf(&b, "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                              strlen(sh->create_bodies[j - 1]), sh->create_bodies[j - 1]);
            else
                ps_buf_puts(&b, "\r\n");
            sh->reqs[k * sh->per_key + j].len = b.len;
            sh->reqs[k * sh->per_key + j].data = ps_buf_detach(&b);
        }
    }
}

/* Keys without a rate of their own share --rate (or the closed model). */
static void list_shared_keys(const ps_lg_config *cfg, ps_lg_shared *sh)
{
    sh->shared_keys = calloc(cfg->nkeys, sizeof *sh->shared_keys);
    if (!sh->shared_keys) abort();
    for (size_t k = 0; k < cfg->nkeys; k++)
        if (cfg->keys[k].rate <= 0) sh->shared_keys[sh->nshared++] = k;
}

/* The list URL, for the curl engine. */
static char *list_url(const ps_lg_config *cfg)
{
    ps_buf b = PS_BUF_INIT;
    /* base_url may end in '/', path_prefix never does. */
    size_t n = strlen(cfg->base_url);
    while (n > 0 && cfg->base_url[n - 1] == '/')
        n--;
    ps_buf_append(&b, cfg->base_url, n);
    ps_buf_puts(&b, "/categories");
    return ps_buf_detach(&b);
}

/* Resolves the target and keeps (in sh) the first address that accepts a
 * TCP connection, so an unreachable target is exit 3 before any thread
 * starts. */
static int find_target_address(const ps_lg_config *cfg, ps_lg_shared *sh, ps_error *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int g = getaddrinfo(cfg->host, cfg->port, &hints, &res);
    if (g != 0) return ps_error_set(err, "cannot resolve '%s': %s", cfg->host, gai_strerror(g));
    int last_errno = 0;
    int rc = -1;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) continue;
        int c = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (c != 0 && errno == EINPROGRESS) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            int64_t ms = cfg->timeout_ns / 1000000;
            if (ms > 5000) ms = 5000;
            if (poll(&pfd, 1, (int)ms) == 1) {
                int soerr = 0;
                socklen_t len = sizeof soerr;
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
                c = soerr ? -1 : 0;
                errno = soerr ? soerr : 0;
            } else {
                c = -1;
                errno = ETIMEDOUT;
            }
        }
        last_errno = errno;
        close(fd);
        if (c == 0) {
            memcpy(&sh->addr, ai->ai_addr, ai->ai_addrlen);
            sh->addrlen = ai->ai_addrlen;
            rc = 0;
            break;
        }
    }
    freeaddrinfo(res);
    if (rc != 0)
        ps_error_set(err, "target %s:%s unreachable: %s", cfg->host, cfg->port,
                     last_errno ? strerror(last_errno) : "no usable address");
    return rc;
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

typedef struct collector {
    const ps_lg_config *cfg;
    ps_lg_thread *threads;
    ps_lg_sync *sync;      /* begun_ns: where the schedule's time starts */
    int64_t start_mono_ns; /* the run's clock (second 0) */
    ps_lg_interval iv;     /* the second being assembled */
    ps_hist *sofar;        /* everything collected, for the progress line */
    ps_lg_interval last;   /* the newest row's counts, not yet in --hdr-log */
    bool last_pending;
    int64_t next_sec;
    ps_lg_interval_row *rows;
    char **row_hists; /* a shard's: each row's histogram, base64 V2 */
    size_t nrows, cap;
    FILE *hdr_log;
    FILE *jsonl;           /* --intervals-jsonl */
    bool live;             /* a terminal: one line redrawn every second */
    bool color;            /* --color resolved for stderr */
    int64_t plain_every_s; /* off a terminal: a line every this many seconds (0 = none) */
    int64_t next_plain_s;
    int64_t errors_sofar, answered_sofar, c429_sofar;
    ps_error err;
    int failed;
} collector;

/* A final partial interval shorter than this joins the one before it: a
 * 10 ms sliver's rate and percentiles would be noise (or zeros). */
#define PS_LG_MIN_FINAL_S 0.5

static void fill_row(ps_lg_interval_row *r, const ps_lg_interval *iv)
{
    r->requests = iv->requests;
    r->p50_us = ps_hist_value_at_percentile(iv->h, 50);
    r->p90_us = ps_hist_value_at_percentile(iv->h, 90);
    r->p99_us = ps_hist_value_at_percentile(iv->h, 99);
    r->max_us = ps_hist_max(iv->h);
    r->c2xx = iv->c2xx;
    r->c3xx = iv->c3xx;
    r->c4xx = iv->c4xx;
    r->c5xx = iv->c5xx;
    r->c429 = iv->c429;
    r->errors = iv->errors;
}

/* --intervals-jsonl: the row as one JSON line (the names of the JSON's
 * intervals[]), flushed so a reader following the file sees it at once. */
static void write_jsonl_row(FILE *f, const ps_lg_interval_row *r)
{
    ps_buf b = PS_BUF_INIT;
    ps_jw w;
    ps_jw_init(&w, &b, false);
    ps_jw_object_open(&w);
    ps_jw_kdouble(&w, "t_s", r->t_s, 3);
    ps_jw_kdouble(&w, "length_s", r->length_s, 3);
    ps_jw_kint(&w, "requests", r->requests);
    ps_jw_kdouble(&w, "throughput_rps", r->length_s > 0 ? (double)r->requests / r->length_s : 0.0,
                  1);
    static const char *const names[] = {"p50_us", "p90_us", "p99_us", "max_us"};
    int64_t lat[] = {r->p50_us, r->p90_us, r->p99_us, r->max_us};
    for (size_t k = 0; k < 4; k++) {
        if (r->requests > 0)
            ps_jw_kint(&w, names[k], lat[k]);
        else
            ps_jw_knull(&w, names[k]);
    }
    ps_jw_key(&w, "status_classes");
    ps_jw_object_open(&w);
    ps_lg_fields_json(&w, ps_lg_row_class_fields, PS_LG_ROW_CLASS_FIELDS, r);
    ps_jw_object_close(&w);
    ps_jw_object_close(&w);
    ps_buf_putc(&b, '\n');
    fwrite(b.data, 1, b.len, f);
    fflush(f);
    ps_buf_free(&b);
}

/* Writes the newest row's histogram to --hdr-log. It is held back until the
 * row can no longer change (a final sliver may still be folded into it), so
 * the log's intervals are the JSON's, one for one. */
static void log_held_interval(collector *c)
{
    if (!c->last_pending) return;
    const ps_lg_interval_row *r = &c->rows[c->nrows - 1];
    if (c->cfg->shards) {
        ps_buf b = PS_BUF_INIT;
        if (ps_hdr_log_encode(c->last.h, &b, &c->err) != 0) c->failed = 1;
        c->row_hists[c->nrows - 1] = ps_buf_detach(&b);
    }
    if (c->hdr_log && !c->failed &&
        ps_hdr_log_write_interval(c->hdr_log, r->t_s, r->length_s, c->last.h, 1.0, &c->err) != 0)
        c->failed = 1;
    if (c->jsonl) write_jsonl_row(c->jsonl, r);
    c->last_pending = false;
}

/* The progress on stderr after second c->next_sec: on a terminal one line
 * redrawn in place, else a plain line every --progress-interval, so a CI
 * log shows the run is alive. Elapsed against the total (duration or
 * requests), the time left, the last second's rate, 429s, requests without
 * an answer and the p99 so far. */
static void print_progress(collector *c, double rate)
{
    const ps_lg_config *cfg = c->cfg;
    int64_t elapsed = c->next_sec + 1;
    if (!c->live) {
        if (c->plain_every_s <= 0 || elapsed < c->next_plain_s) return;
        while (c->next_plain_s <= elapsed)
            c->next_plain_s += c->plain_every_s;
    }
    char done[64], eta[32];
    /* --burst waits for a window reset before its schedule begins: say so
     * rather than "0 req/s", and count the run's seconds from its begin. */
    int64_t begun = atomic_load(&c->sync->begun_ns);
    if (cfg->burst && (begun == 0 || begun > c->start_mono_ns + elapsed * INT64_C(1000000000))) {
        fprintf(stderr, "%spetstore-load: %llds, waiting for a window reset to release the burst%s",
                c->live ? "\r" : "", (long long)elapsed, c->live ? "   " : "\n");
        fflush(stderr);
        return;
    }
    if (begun > c->start_mono_ns) elapsed -= (begun - c->start_mono_ns) / INT64_C(1000000000);
    if (cfg->duration_ns > 0) {
        int64_t total = (cfg->warmup_ns + cfg->duration_ns + 999999999) / 1000000000;
        if (elapsed > total) elapsed = total;
        snprintf(done, sizeof done, "%llds/%llds", (long long)elapsed, (long long)total);
        snprintf(eta, sizeof eta, "%llds", (long long)(total > elapsed ? total - elapsed : 0));
    } else {
        int64_t finished = c->answered_sofar + c->errors_sofar;
        snprintf(done, sizeof done, "%llds, %lld/%lld requests", (long long)elapsed,
                 (long long)finished, (long long)cfg->requests);
        double per_s = (double)finished / (double)elapsed;
        if (per_s > 0 && finished < cfg->requests)
            snprintf(eta, sizeof eta, "%.0fs", (double)(cfg->requests - finished) / per_s);
        else
            snprintf(eta, sizeof eta, "-");
    }
    /* Yellow 429s, red errors: the numbers to look at, when not zero. */
    const char *warn = c->color && c->c429_sofar ? "\033[33m" : "";
    const char *bad = c->color && c->errors_sofar ? "\033[31m" : "";
    const char *off = c->color ? "\033[0m" : "";
    fprintf(stderr,
            "%spetstore-load: %s  ETA %s  %.0f req/s  %s429s %lld%s  %serrors %lld%s  p99 so far "
            "%.3f ms%s",
            c->live ? "\r" : "", done, eta, rate, warn, (long long)c->c429_sofar, off, bad,
            (long long)c->errors_sofar, off,
            (double)ps_hist_value_at_percentile(c->sofar, 99) / 1000.0, c->live ? "   " : "\n");
    fflush(stderr);
}

/* Drains every second all threads have finished into a row (and the
 * progress line); the last one may be partial (length up to `end_s`). */
static void collect_finished_seconds(collector *c, double end_s, bool final)
{
    for (;;) {
        bool all_over = true;
        for (int i = 0; i < c->cfg->threads; i++)
            if (!ps_lg_stats_collect(&c->threads[i].stats, c->next_sec, &c->iv)) all_over = false;
        if (!all_over) return;
        double t_s = (double)c->next_sec;
        /* A finished thread is "over" for every second: never run ahead of
         * the clock (or past the end) while assembling. */
        if (t_s + 1.0 > end_s && !final) return;
        double len = end_s - t_s < 1.0 && final ? end_s - t_s : 1.0;
        if (len <= 0) len = 1.0;
        c->errors_sofar += c->iv.errors;
        c->answered_sofar += c->iv.requests;
        c->c429_sofar += c->iv.c429;
        ps_hist_add(c->sofar, c->iv.h);
        if (final && len < PS_LG_MIN_FINAL_S && c->last_pending) {
            ps_lg_interval_row *r = &c->rows[c->nrows - 1];
            ps_lg_interval_add(&c->last, &c->iv);
            ps_lg_interval_clear(&c->iv);
            r->length_s += len;
            fill_row(r, &c->last);
            return;
        }
        if (final && t_s + 1.0 > end_s && c->iv.requests == 0 && c->iv.errors == 0) return;
        log_held_interval(c);
        if (c->nrows == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 64;
            c->rows = realloc(c->rows, c->cap * sizeof *c->rows);
            c->row_hists = realloc(c->row_hists, c->cap * sizeof *c->row_hists);
            if (!c->rows || !c->row_hists) abort();
        }
        c->row_hists[c->nrows] = NULL;
        ps_lg_interval_row *r = &c->rows[c->nrows++];
        memset(r, 0, sizeof *r);
        r->t_s = t_s;
        r->length_s = len;
        fill_row(r, &c->iv);
        ps_lg_interval_clear(&c->last);
        ps_lg_interval_add(&c->last, &c->iv);
        c->last_pending = true;
        print_progress(c, (double)r->requests / len);
        ps_lg_interval_clear(&c->iv);
        c->next_sec++;
        if (final && (double)c->next_sec >= end_s) return;
    }
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
    collector col;    /* also holds the --hdr-log file */
    ps_lg_live *live; /* --metrics-listen, NULL without */
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
    R->col = (collector){.cfg = cfg, .threads = R->threads, .sync = R->sync};
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
    collector *col = &R->col;
    if (ps_hist_init(PS_LG_HIST_LOWEST, PS_LG_HIST_HIGHEST, PS_LG_HIST_SIGFIGS, &col->iv.h,
                     &R->err) != 0 ||
        ps_hist_init(PS_LG_HIST_LOWEST, PS_LG_HIST_HIGHEST, PS_LG_HIST_SIGFIGS, &col->sofar,
                     &R->err) != 0 ||
        ps_hist_init(PS_LG_HIST_LOWEST, PS_LG_HIST_HIGHEST, PS_LG_HIST_SIGFIGS, &col->last.h,
                     &R->err) != 0)
        return -1;
    if (cfg->metrics_listen) {
        R->live = ps_lg_live_create(cfg, cfg->threads);
        for (int i = 0; i < cfg->threads; i++)
            R->threads[i].live = ps_lg_live_thread(R->live, i);
        if (ps_lg_live_serve(R->live, &R->err) != 0) return -1;
    }
    pthread_barrier_init(&R->sync->barrier, NULL, (unsigned)cfg->threads);
    R->barrier_ready = true;
    col->live = !cfg->quiet && cfg->progress_interval_ns > 0 && isatty(STDERR_FILENO);
    col->plain_every_s = cfg->quiet ? 0 : (cfg->progress_interval_ns + 999999999) / 1000000000;
    col->next_plain_s = col->plain_every_s;
    col->color = ps_cli_color_enabled(cfg->color, STDERR_FILENO);
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
        collect_finished_seconds(&R->col, (double)(ps_clock_mono_ns() - R->sh->start_mono_ns) / 1e9,
                                 false);
    }
    for (int i = 0; i < R->started; i++)
        pthread_join(R->tids[i], NULL);
    int64_t end_ns = ps_clock_mono_ns();
    if (R->started < cfg->threads) return -1;
    collect_finished_seconds(&R->col, (double)(end_ns - R->sh->start_mono_ns) / 1e9, true);
    log_held_interval(&R->col);
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
 * not send what was asked (saturated), or --verify-limits saw windows but
 * none reach its limit. Connection-limited is the target's doing: the
 * waits are in the corrected latencies, and requests that waited past
 * --timeout in its timeouts. */
static const char *run_claims_nothing(load_run *R, size_t filled)
{
    const ps_lg_config *cfg = R->cfg;
    if (R->generator.verdict == PS_LG_GEN_SATURATED) {
        snprintf(R->why, sizeof R->why, "the generator could not keep its schedule: %s",
                 R->generator.why);
        return "saturated";
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
        R->thresholds[i] = ps_lg_threshold_eval(&cfg->thresholds[i], &R->total);
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
    } else if (exit_code == PS_LG_EXIT_OK ||
               (R->generator.verdict == PS_LG_GEN_SATURATED && R->total.answered == 0)) {
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
    if (R->col.iv.h) ps_hist_close(R->col.iv.h);
    if (R->col.sofar) ps_hist_close(R->col.sofar);
    if (R->col.last.h) ps_hist_close(R->col.last.h);
    for (size_t i = 0; R->col.row_hists && i < R->col.nrows; i++)
        free(R->col.row_hists[i]);
    free(R->col.rows);
    free(R->col.row_hists);
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
    if (sh->reqs)
        for (size_t i = 0; i < cfg->nkeys * sh->per_key; i++)
            free(sh->reqs[i].data);
    free(sh->reqs);
    for (size_t i = 0; i < sh->nbodies; i++)
        free(sh->create_bodies[i]);
    free(sh->create_bodies);
    free(sh->shared_keys);
    free(sh->list_url);
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
    if (cfg->mix[PS_LG_OP_CREATE] > 0 && load_bodies(cfg->bodies_path, sh, &R->err) != 0) goto fail;
    if (open_outputs(R) != 0) goto fail;
    if (find_target_address(cfg, sh, &R->err) != 0) {
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
    render_requests(cfg, sh);
    list_shared_keys(cfg, sh);
    sh->list_url = list_url(cfg);
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
