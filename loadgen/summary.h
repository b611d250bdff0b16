/* summary.h - the --json document of a load run (names fixed by
 * docs/report-json.md) and the evaluation of --threshold expressions.
 *
 * Everything is computed from merged, after-join data; the document is
 * written with core's JSON writer (core/json_writer.h) into a caller-owned
 * ps_buf. */
#ifndef PS_LG_SUMMARY_H
#define PS_LG_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/json_writer.h"
#include "loadgen/config.h"
#include "loadgen/generator.h"
#include "loadgen/limits.h"
#include "loadgen/stats.h"
#include "loadgen/volley.h"

/* One second of the run, as the intervals array reports it. */
typedef struct ps_lg_interval_row {
    double t_s, length_s;
    int64_t requests, p50_us, p90_us, p99_us, max_us;
    int64_t c2xx, c3xx, c4xx, c5xx, c429, errors;
} ps_lg_interval_row;

/* A count (int64_t member) of a report struct and its name in the JSON: the
 * writer and the merge's reader walk one table, so the names are kept once. */
typedef struct ps_lg_field {
    const char *name;
    size_t offset;  /* offsetof the member */
    int64_t absent; /* what a reader takes when the member is missing */
} ps_lg_field;

/* The count a field names in obj. */
int64_t *ps_lg_field_at(void *obj, const ps_lg_field *f);
/* Writes "name": count for each of the n fields of obj. */
void ps_lg_fields_json(ps_jw *w, const ps_lg_field *fields, size_t n, const void *obj);

/* intervals[].status_classes: 2xx..5xx, 429 and errors of an interval row. */
#define PS_LG_ROW_CLASS_FIELDS 6
extern const ps_lg_field ps_lg_row_class_fields[PS_LG_ROW_CLASS_FIELDS];

typedef struct ps_lg_threshold_result {
    bool passed;
    double actual; /* microseconds, or a fraction for error_rate */
    /* latency thresholds: the same figure of the target's own latencies
     * (uncorrected: from each request's send, us) and of the generator's
     * lateness (send minus due time, us; -1 not measured); lost_to_generator:
     * failed by the generator's lateness, not by the target
     * (ps_lg_threshold_eval) */
    double own, late;
    bool lost_to_generator;
} ps_lg_threshold_result;

typedef struct ps_lg_summary {
    const ps_lg_config *cfg;
    const ps_lg_stats *total; /* merged, every plan's histograms present */
    const ps_lg_interval_row *rows;
    size_t nrows;
    bool limits_checked;
    size_t windows;
    size_t windows_filled;                         /* windows that reached their limit */
    ps_lg_window_tally tally_by_plan[PS_LG_PLANS]; /* --verify-limits */
    const ps_lg_window_tally *tally_by_group;      /* --verify-limits; NULL: none */
    const ps_lg_generator *generator;              /* NULL: not judged (a merge) */
    const ps_lg_volley_counts *volley;             /* --verify-limits' volleys; NULL: none */
    bool error_budget_failed;
    const ps_lg_violation *violations;
    size_t nviolations, failing_violations;
    const ps_lg_key_model *models; /* the limiter model inferred per key and limit */
    size_t nmodels;
    const ps_lg_counting *counting; /* what each key's limits were taken to count, and why */
    size_t ncounting;
    const ps_lg_threshold_result *thresholds; /* cfg->nthresholds of them */
    double duration_s;                        /* first request to last answer */
    int64_t started_wall_ns;
    int exit_code;
    /* Exit 3 cases: verdict "interrupted", "unreachable" or "aborted" (NULL:
     * "pass" for exit 0, else "fail") and why, in one sentence (NULL: none). */
    const char *verdict;
    const char *aborted;
    bool interrupted;
    /* Members written after exit_code: a shard's "shard" (shard.c), a
     * merge's "merged" (merge.c); NULL: none. Returns 0 or -1 with a message. */
    int (*extra)(ps_jw *w, const void *arg, ps_error *err);
    const void *extra_arg;
} ps_lg_summary;

/* Evaluates one threshold against the merged stats (corrected latencies),
 * and whether a latency threshold it failed was lost to the generator (gen,
 * NULL when not known: never). Corrected latency counts from when a request
 * was due, so it holds the generator's delay too. Lost to the generator:
 * in an open model that was not connection-limited, the generator's own
 * lateness at that figure reached the bound, and either its threads ran or
 * waited for a CPU at least PS_LG_BUSY_SHARE of the time (they read the
 * answers late too, so the target's own figure says nothing), or no request
 * waited for a connection and the target's own figure (from each send) met
 * the bound; a max also needs the target's own max met. Measured: one
 * thread at nice 19 beside two busy loops at 200/s, busy 91%: lateness p99
 * 65 ms, corrected p99 105 ms, its own reading 83 ms, the server's p99
 * well under 1 ms. A target whose own latency breaks the bound while the
 * generator kept up (p99<1us) fails it. */
ps_lg_threshold_result ps_lg_threshold_eval(const ps_lg_threshold *th, const ps_lg_stats *total,
                                            const ps_lg_generator *gen);

/* Error rate: requests with no response or a 5xx, over all scheduled. */
double ps_lg_error_rate(const ps_lg_stats *total);

/* Appends the JSON document. Returns 0, or -1 with a message. */
int ps_lg_summary_json(const ps_lg_summary *s, ps_buf *out, ps_error *err);

/* Writes the percentile-spectrum rows of h ([value_us, percentile 0..1,
 * total_count], from ps_hist_percentiles_print so they match --hdr) as a
 * JSON array, the next value of w. Returns 0, or -1 with a message. */
int ps_lg_spectrum_json(const ps_hist *h, ps_jw *w, ps_error *err);

#endif
