/* generator.h - whether the load generator kept its own schedule: the open
 * model's send rate against its target, how late requests left (lateness,
 * send time minus due time), the threads' CPU, and the requests that waited
 * for a free connection. A run whose generator could not send what it was
 * asked claims no capacity (docs/capacity-testing.md).
 *
 * Also the run's safety nets that are verdicts on the run rather than on
 * the target: the error budget and whether --verify-limits exercised any
 * limit. Everything here reads merged, after-join data. */
#ifndef PS_LG_GENERATOR_H
#define PS_LG_GENERATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "core/json_writer.h"
#include "loadgen/config.h"
#include "loadgen/limits.h"
#include "loadgen/stats.h"

/* Below this share of the target sent, the generator fell behind. */
#define PS_LG_MIN_SEND_SHARE 0.9
/* A thread running or waiting to run this share of its time was the
 * bottleneck itself (CPU), not waiting for the target. */
#define PS_LG_BUSY_SHARE 0.7

typedef enum ps_lg_gen_verdict {
    PS_LG_GEN_OK,
    PS_LG_GEN_SATURATED,     /* CPU-bound: fell behind while busy all the time */
    PS_LG_GEN_CONN_LIMITED,  /* fell behind for want of connections: the target held them
                                all, or they could not be opened */
    PS_LG_GEN_NOT_APPLICABLE /* closed model: no schedule to keep */
} ps_lg_gen_verdict;

typedef struct ps_lg_generator {
    ps_lg_gen_verdict verdict;
    char why[320]; /* "" when ok */
    double target_rps, send_rate_rps;
    int64_t sent, unsent, conn_waits, warmup_requests;
    int64_t late_p50_us, late_p90_us, late_p99_us, late_max_us;
    double cpu_s, runq_wait_s, busy_share; /* busy_share -1: not known */
    double user_cpu_s, sys_cpu_s;          /* the whole process (getrusage) */
    double drain_s; /* from the end of the duration to the last answer (run.c) */
} ps_lg_generator;

/* Per-thread CPU figures the judgement takes (run.c fills them). */
typedef struct ps_lg_thread_cpu {
    int64_t cpu_ns, runq_wait_ns, ran_ns; /* runq_wait_ns -1: not known */
} ps_lg_thread_cpu;

/* Judges the generator over the measured part of the run (measured_s long;
 * sends went on until send_span_s after it began). */
void ps_lg_generator_judge(const ps_lg_config *cfg, const ps_lg_stats *total,
                           const ps_lg_thread_cpu *cpu, int nthreads, double measured_s,
                           double send_span_s, ps_lg_generator *out);
const char *ps_lg_gen_verdict_name(ps_lg_gen_verdict v);
/* Writes "generator": {...}. */
void ps_lg_generator_json(ps_jw *w, const ps_lg_generator *g);

/* Reads this thread's CPU time and run-queue wait (ns) from
 * /proc/thread-self/schedstat, else CPU from getrusage with wait -1. */
void ps_lg_thread_cpu_now(int64_t *cpu_ns, int64_t *runq_wait_ns);

/* Windows of the limits that reached their limit: a 429 named them, or
 * their admissions made the limit. */
size_t ps_lg_limits_windows_filled(const ps_lg_limits *l);
/* Per plan or key group: the windows that reached their limit, and the
 * 429s split into correct (the window had admitted up to its
 * X-RateLimit-Limit, or its Remaining had reached 0) and early (it had
 * admitted fewer and its Remaining still said there was room). */
typedef struct ps_lg_window_tally {
    size_t filled;
    int64_t refused_correct, refused_early;
} ps_lg_window_tally;
/* Fills by_plan[plan id] and by_group[group] (ps_lg_config_group_count
 * entries), zeroed first. */
void ps_lg_limits_tally(const ps_lg_limits *l, const ps_lg_config *cfg,
                        ps_lg_window_tally by_plan[PS_LG_PLANS], ps_lg_window_tally *by_group);

#endif
