/* schedule.h - when requests are due in the open model (constant rate or a
 * linear ramp), and which operation each request performs (the --mix).
 *
 * Everything here is a pure function of the request's index, so a thread
 * that falls behind keeps no queue: the requests it owes are exactly those
 * whose due time has passed, and their latency counts from that time
 * (coordinated-omission correction, as wrk2 does). */
#ifndef PS_LG_SCHEDULE_H
#define PS_LG_SCHEDULE_H

#include <stdint.h>

#include "loadgen/config.h"

typedef struct ps_lg_rate {
    double r1, r2; /* req/s at the start and at the end of span_s */
    double span_s; /* ramp length; the rate stays r2 afterwards */
    double phase;  /* fraction of a request's index to offset (0..1) */
} ps_lg_rate;

/* Nanoseconds after the schedule's start at which request k (0-based) is
 * due: the time t where the number of requests sent so far, the integral of
 * the rate, reaches k + phase. Returns INT64_MAX when the rate never gets
 * there (both rates 0). */
int64_t ps_lg_rate_due_ns(const ps_lg_rate *r, int64_t k);
/* The same for a position n on the integral (request k is due at n = k +
 * phase); a Poisson stream's positions step by exponential draws. */
int64_t ps_lg_rate_time_ns(const ps_lg_rate *r, double n);

/* A small deterministic generator (splitmix64): the schedules' phases and
 * Poisson draws are a function of --seed, so a run can be repeated. */
uint64_t ps_lg_rng_next(uint64_t *state);
/* Uniform in [0, 1). */
double ps_lg_rng_unit(uint64_t *state);
/* The seed of stream `stream` (a key index, or -1: the shared keys) of
 * thread `thread`, from the run's seed. */
uint64_t ps_lg_rng_seed(uint64_t seed, int64_t stream, int thread);
/* The phase (0..1) of key stream `stream` in a run with `seed`: the same in
 * every thread, so the threads' shares of one key stay evenly interleaved. */
double ps_lg_stream_phase(uint64_t seed, int64_t stream);
/* An exponential gap of mean 1 (a unit-rate Poisson process's). */
double ps_lg_rng_exp(uint64_t *state);

/* The operation of request k of a thread: weights spread evenly, e.g.
 * list=9,create=1 gives one create in every ten requests. */
ps_lg_op ps_lg_mix_op(const unsigned mix[PS_LG_OPS], uint64_t k);

#endif
