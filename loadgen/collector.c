/* collector.c - the run's per-second rows, --hdr-log, --intervals-jsonl
 * and the progress line (see collector.h). */
#include "loadgen/collector.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/cli.h"
#include "core/clock.h"
#include "core/hdr_log.h"
#include "core/json_writer.h"

int ps_lg_collector_init(ps_lg_collector *c, const ps_lg_config *cfg, ps_lg_thread *threads,
                         ps_lg_sync *sync, ps_error *err)
{
    c->cfg = cfg;
    c->threads = threads;
    c->sync = sync;
    if (ps_hist_init(PS_LG_HIST_LOWEST, PS_LG_HIST_HIGHEST, PS_LG_HIST_SIGFIGS, &c->iv.h, err) !=
            0 ||
        ps_hist_init(PS_LG_HIST_LOWEST, PS_LG_HIST_HIGHEST, PS_LG_HIST_SIGFIGS, &c->sofar, err) !=
            0 ||
        ps_hist_init(PS_LG_HIST_LOWEST, PS_LG_HIST_HIGHEST, PS_LG_HIST_SIGFIGS, &c->last.h, err) !=
            0)
        return -1;
    c->live = !cfg->quiet && cfg->progress_interval_ns > 0 && isatty(STDERR_FILENO);
    c->plain_every_s = cfg->quiet ? 0 : (cfg->progress_interval_ns + 999999999) / 1000000000;
    c->next_plain_s = c->plain_every_s;
    c->color = ps_cli_color_enabled(cfg->color, STDERR_FILENO);
    return 0;
}

void ps_lg_collector_free(ps_lg_collector *c)
{
    if (c->iv.h) ps_hist_close(c->iv.h);
    if (c->sofar) ps_hist_close(c->sofar);
    if (c->last.h) ps_hist_close(c->last.h);
    for (size_t i = 0; c->row_hists && i < c->nrows; i++)
        free(c->row_hists[i]);
    free(c->rows);
    free(c->row_hists);
    c->iv.h = c->sofar = c->last.h = NULL;
    c->rows = NULL;
    c->row_hists = NULL;
    c->nrows = c->cap = 0;
}

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

/* Held back until the row can no longer change (a final sliver may still
 * be folded into it), so the log's intervals are the JSON's, one for one. */
void ps_lg_collector_log_held(ps_lg_collector *c)
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
static void print_progress(ps_lg_collector *c, double rate)
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

void ps_lg_collector_collect(ps_lg_collector *c, double end_s, bool final)
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
        ps_lg_collector_log_held(c);
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
