/* limiter.h - per-identity rate limiting with a minute and a day limit, in
 * one of four legal algorithms (fixed window, sliding log, sliding window
 * counter, token bucket), atomic admission, and the temporary ban of spec
 * section 8 rule 3.
 *
 * Contract: ps_limiter_admit is thread-safe and atomic: however many threads
 * call it at once for one identity, no limit ever admits more than its
 * algorithm allows (fixed: the limit per window; sliding log: the limit in
 * any window-long interval; sliding counter: the weighted estimate stays
 * within the limit; token bucket: the limit plus what refilled). Fixed
 * windows start at the identity's first request after the previous window
 * ended and are identified by their end time (the X-RateLimit-Reset value).
 * State of identities whose limits are all back to full is reclaimed, so
 * memory is bounded by the identities active in a day (and by
 * max_identities, beyond which the oldest idle ones go). */
#ifndef PS_LIMITER_H
#define PS_LIMITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/ratelimit_model.h"
#include "reference-server/faults.h"

typedef struct ps_limiter ps_limiter;

/* The algorithm: the shared model's (core/ratelimit_model.h), its names
 * those of --limiter (ps_rlm_algo_name, ps_rlm_algo_parse). */
typedef ps_rlm_algo ps_limiter_mode;

typedef struct ps_limiter_options {
    double time_scale;     /* >= 1: windows and bans run this many times faster */
    int64_t ban_threshold; /* requests refused in one window before a ban; 0 = never ban */
    int64_t ban_seconds;   /* ban length in (scaled) seconds */
    size_t max_identities; /* cap on tracked identities (0 = 1,000,000); enforced per lock
                              stripe (1/64 of it each), evicting the stripe's least recently
                              seen identity, whose counts are then forgotten */
    ps_fault_set faults;   /* over-admission-race: a deliberate check-then-increment race;
                              off-by-one-admission: Limit+1 admitted; stacked-limiters: admitted
                              answers describe the day limit whatever the minute one says */
    ps_limiter_mode mode;  /* default (0) fixed */
} ps_limiter_options;

typedef enum ps_admission {
    PS_ADMITTED,
    PS_LIMITED, /* over a window's limit: answer 429 */
    PS_BANNED,  /* kept sending while limited: answer 429 until the ban ends */
} ps_admission;

/* (Fixed windows; the other modes in docs/rate-limits.md.) Which window the rate-limit headers
 * describe: the one with the fewest requests remaining after this request is counted (ties: the one
 * that resets first); when refused, the window (or ban) that refused. When both windows are
 * exhausted the day window is the refusing one (admission is possible only when both have room,
 * i.e. when the later of the two ends). With no limit at all (per_minute == per_day == 0) every
 * request is admitted and the decision reports limit 0, remaining 0, reset now and window "none".
 *
 * Ban: a request refused by a window while that window has already refused
 * ban_threshold requests (i.e. the (ban_threshold+1)-th refusal in one
 * window) starts a ban of ban_seconds and is itself answered PS_BANNED; until
 * the ban ends every request is PS_BANNED (not counted in any window), with
 * limit = the limit of the window that led to the ban, remaining 0 and reset
 * and retry-after pointing at the ban's end.
 *
 * Times: reset_unix_s = ceil(end_ns / 1e9) and, when refused, retry_after_s =
 * reset_unix_s - floor(now_ns / 1e9) (>= 1), so a client that subtracts its
 * whole-second clock from Reset gets exactly Retry-After. */
typedef struct ps_limit_decision {
    ps_admission verdict;
    int64_t limit;     /* X-RateLimit-Limit */
    int64_t remaining; /* X-RateLimit-Remaining, never negative */
    int64_t
        reset_unix_s; /* X-RateLimit-Reset: real Unix seconds when that limit resets (rounded up) */
    int64_t retry_after_s; /* when refused: real seconds until admission is possible again, >= 1,
                              rounded up: a request sent then is admitted (absent other requests) */
    const char *window;    /* "minute", "day" or "ban" (static string) */
} ps_limit_decision;

int ps_limiter_create(const ps_limiter_options *opts, ps_limiter **out, ps_error *err);
void ps_limiter_destroy(ps_limiter *l);

/* Counts one request of identity (any bytes, e.g. an API key or "ip:127.0.0.1")
 * against per_minute and per_day (0 = no such limit) at wall time now_ns,
 * and fills *out. */
void ps_limiter_admit(ps_limiter *l, const char *identity, size_t identity_len, int64_t per_minute,
                      int64_t per_day, int64_t now_ns, ps_limit_decision *out);

/* The same, admitting up to `beyond` requests past the limits while the
 * window holds them (fault over-admission-create: one create more per
 * window; 0 is ps_limiter_admit). */
void ps_limiter_admit_beyond(ps_limiter *l, const char *identity, size_t identity_len,
                             int64_t per_minute, int64_t per_day, int64_t now_ns, int64_t beyond,
                             ps_limit_decision *out);

/* Takes back one admission made at admitted_ns (a response that turned out
 * not to count, --count-errors no), as far as the algorithm still holds it:
 * a fixed or counting window that has ended keeps its count. */
void ps_limiter_refund(ps_limiter *l, const char *identity, size_t identity_len, int64_t per_minute,
                       int64_t per_day, int64_t admitted_ns);

/* Reports the current state without counting (for responses that do not
 * count: operations left out by --count-ops, refunded errors). */
void ps_limiter_peek(ps_limiter *l, const char *identity, size_t identity_len, int64_t per_minute,
                     int64_t per_day, int64_t now_ns, ps_limit_decision *out);

/* Number of identities currently tracked (for tests of reclamation). */
size_t ps_limiter_tracked(ps_limiter *l);

/* Reclaims every identity whose windows and ban have all ended at now_ns and
 * returns how many went. Admission already reclaims lazily (a few of the
 * least recently seen identities of the same stripe per call); this full
 * sweep is for a periodic timer and for tests. */
size_t ps_limiter_reclaim(ps_limiter *l, int64_t now_ns);

#endif
