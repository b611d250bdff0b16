/* stats.h - what one thread measured: latency histograms (corrected and
 * uncorrected, overall, per operation, per status class, per plan), status
 * and error counts, and the per-second interval histograms behind --hdr-log
 * and the report's intervals.
 *
 * A ps_lg_stats belongs to one thread, which records without locks; the
 * main thread merges them after join (ps_lg_stats_add). The only shared part
 * is the interval ring: the owner fills the slot of the current second and
 * takes `lock` once per second when it moves on; the collector takes the
 * same lock to drain finished seconds. Memory is fixed at init. */
#ifndef PS_LG_STATS_H
#define PS_LG_STATS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/histogram.h"
#include "core/plan.h"
#include "loadgen/config.h"

/* 1 us to an hour: every latency a run can see, at 3 significant digits. */
#define PS_LG_HIST_LOWEST 1
#define PS_LG_HIST_HIGHEST INT64_C(3600000000)
#define PS_LG_HIST_SIGFIGS 3

enum { PS_LG_C2XX, PS_LG_C3XX, PS_LG_C4XX, PS_LG_C5XX, PS_LG_CLASSES };
/* The reports' names of the operations ("list", "create") and status classes
 * ("2xx".."5xx"): the summary and a shard write them, the merge reads them. */
extern const char *const ps_lg_op_names[PS_LG_OPS];
extern const char *const ps_lg_class_names[PS_LG_CLASSES];
#define PS_LG_PLANS (PS_PLAN_UNKNOWN + 1)
#define PS_LG_RING 16

typedef struct ps_lg_hpair {
    ps_hist *corr, *unc;
} ps_lg_hpair;

/* Counts of one second of the run. */
typedef struct ps_lg_interval {
    int64_t sec;      /* seconds since the run's start; -1 = empty slot */
    ps_hist *h;       /* corrected latencies of responses completed in it */
    int64_t requests; /* answered */
    int64_t c2xx, c3xx, c4xx, c5xx, c429, errors;
} ps_lg_interval;

/* One key group's counts (config.h's groups): requests written, answered,
 * and of those admitted (not 429) and limited (429). */
typedef struct ps_lg_group_counts {
    int64_t sent, answered, admitted, limited;
} ps_lg_group_counts;

typedef struct ps_lg_stats {
    ps_lg_hpair all, op[PS_LG_OPS], cls[PS_LG_CLASSES], plan[PS_LG_PLANS];
    int64_t status[600];
    int64_t scheduled, answered, failed, timed_out, skipped_retry_after;
    /* err_*: requests, by why they got no answer (failed == err_connect +
     * err_read, timed_out == err_timeout); connect_failures: connection
     * attempts that failed (refused, reset before use, timed out), which
     * fail a request only when the thread had no connection at all. */
    int64_t err_connect, err_read, err_timeout;
    int64_t connect_failures;
    /* Generator health: requests handed to a connection and written (sent)
     * or never sent (unsent; unsent_expired: of those, the ones that waited
     * past --timeout rather than being cut off by the end); of all those,
     * the ones that waited for a free connection; requests of --warmup (in
     * no other figure); the open model's lateness, send time minus due time
     * (us). */
    int64_t sent, unsent, unsent_expired, conn_waits, warmup_requests;
    ps_hist *lateness;
    int64_t op_requests[PS_LG_OPS];
    int64_t plan_admitted[PS_LG_PLANS], plan_limited[PS_LG_PLANS];
    /* 503 answers per plan: a gateway limiter's refusal (or overload),
     * neither admitted nor a 429 (ps_lg_stats_answer) */
    int64_t plan_unavailable[PS_LG_PLANS];
    int64_t plan_sent[PS_LG_PLANS]; /* requests written, per plan */
    ps_lg_group_counts *groups;     /* per key group (ps_lg_stats_groups), NULL: none */
    size_t ngroups;
    /* the interval ring (owner side) */
    bool intervals;
    pthread_mutex_t lock;
    int64_t cur_sec; /* guarded by lock; slot cur_sec % PS_LG_RING is being filled */
    bool finished;   /* guarded by lock: the owner will record no more */
    ps_lg_interval ring[PS_LG_RING];
} ps_lg_stats;

/* Creates the histograms: per-plan ones only for plans in plan_mask (bit
 * per ps_plan_id), the interval ring only when `intervals`. */
int ps_lg_stats_init(ps_lg_stats *s, unsigned plan_mask, bool intervals, ps_error *err);
void ps_lg_stats_free(ps_lg_stats *s);
/* Adds zeroed counts for ngroups key groups (after init). */
void ps_lg_stats_groups(ps_lg_stats *s, size_t ngroups);
/* A request on a key of `group` was written / answered with status. */
void ps_lg_stats_group_sent(ps_lg_stats *s, size_t group);
void ps_lg_stats_group_answer(ps_lg_stats *s, size_t group, int status);

/* One answered request. Latencies in microseconds. */
void ps_lg_stats_answer(ps_lg_stats *s, ps_lg_op op, ps_plan_id plan, int status,
                        int64_t corrected_us, int64_t uncorrected_us);
typedef enum ps_lg_failure {
    PS_LG_FAIL_CONNECT,
    PS_LG_FAIL_READ,
    PS_LG_FAIL_TIMEOUT
} ps_lg_failure;
/* A request sent `late_us` after its due time (open model). */
void ps_lg_stats_late(ps_lg_stats *s, int64_t late_us);
/* One request that got no (usable) response. */
void ps_lg_stats_fail(ps_lg_stats *s, ps_lg_failure why);

/* Owner: moves the interval ring to second `sec` (no-op if already there). */
void ps_lg_stats_tick(ps_lg_stats *s, int64_t sec);
/* Owner: no more records; the collector may drain everything. */
void ps_lg_stats_finish(ps_lg_stats *s);
/* Collector: adds the thread's interval `sec` (if finished by the owner)
 * into *into's counts and histogram and empties it. Returns 1 if that
 * second is over for this thread (collected or empty), 0 if not yet. */
int ps_lg_stats_collect(ps_lg_stats *s, int64_t sec, ps_lg_interval *into);

/* Adds from's histogram and counts into into (sec untouched). */
void ps_lg_interval_add(ps_lg_interval *into, const ps_lg_interval *from);
/* Empties iv's histogram and counts (sec untouched). */
void ps_lg_interval_clear(ps_lg_interval *iv);

/* Adds src's histograms and counts into dst (intervals excluded; group
 * counts when both have as many groups). */
void ps_lg_stats_add(ps_lg_stats *dst, const ps_lg_stats *src);

/* Status class index of an HTTP status (200..599), -1 otherwise. */
int ps_lg_status_class(int status);

#endif
