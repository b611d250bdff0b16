/* collector.h - the run's per-second rows while the threads run: every
 * second all threads have finished is drained from their interval rings
 * (stats.h) into a row of the report's intervals[], a line of
 * --intervals-jsonl, an interval of --hdr-log (a shard's row histograms
 * too) and the progress line on stderr.
 *
 * Owned by run.c, used by its main thread only; the threads' side of the
 * hand-over is the ring's lock (stats.h). The --hdr-log and
 * --intervals-jsonl files are run.c's to open and close. */
#ifndef PS_LG_COLLECTOR_H
#define PS_LG_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"
#include "core/histogram.h"
#include "loadgen/config.h"
#include "loadgen/stats.h"
#include "loadgen/summary.h"
#include "loadgen/worker.h"

typedef struct ps_lg_collector {
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
} ps_lg_collector;

/* Readies c for cfg's run over `threads` (borrowed; sync's begun_ns tells
 * where the schedule starts): its histograms and how progress is shown.
 * Returns 0, or -1 with err; ps_lg_collector_free undoes a partial init. */
int ps_lg_collector_init(ps_lg_collector *c, const ps_lg_config *cfg, ps_lg_thread *threads,
                         ps_lg_sync *sync, ps_error *err);
void ps_lg_collector_free(ps_lg_collector *c);
/* Drains every second all threads have finished into a row (and the
 * progress line); with `final`, the last one may be partial (length up to
 * end_s, seconds since the run's start). */
void ps_lg_collector_collect(ps_lg_collector *c, double end_s, bool final);
/* Writes the newest row to --hdr-log and --intervals-jsonl (and a shard's
 * row histogram), once it can no longer change. */
void ps_lg_collector_log_held(ps_lg_collector *c);

#endif
