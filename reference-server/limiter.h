/* limiter.h - per-identity rate limiting with two fixed windows (minute and
 * day), atomic admission, and the temporary ban of spec section 8 rule 3.
 *
 * Contract: ps_limiter_admit is thread-safe and atomic: however many threads
 * call it at once for one identity, no window ever admits more than its
 * limit. Windows are fixed, start at the identity's first request after the
 * previous window ended, and are identified by their end time (the
 * X-RateLimit-Reset value). State of identities whose windows have all ended
 * is reclaimed, so memory is bounded by the identities active in a day
 * window (and by max_identities, beyond which the oldest idle ones go). */
#ifndef PS_LIMITER_H
#define PS_LIMITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

typedef struct ps_limiter ps_limiter;

typedef struct ps_limiter_options {
    double time_scale;        /* >= 1: windows and bans run this many times faster */
    int64_t ban_threshold;    /* requests refused in one window before a ban; 0 = never ban */
    int64_t ban_seconds;      /* ban length in (scaled) seconds */
    size_t max_identities;    /* cap on tracked identities (0 = 1,000,000) */
    bool fault_racy_admission;/* deliberate check-then-increment race (fault over-admission-race) */
} ps_limiter_options;

typedef enum ps_admission {
    PS_ADMITTED,
    PS_LIMITED, /* over a window's limit: answer 429 */
    PS_BANNED,  /* kept sending while limited: answer 429 until the ban ends */
} ps_admission;

/* Which window the rate-limit headers describe: the one with the fewest
 * requests remaining (ties: the one that resets first); when refused, the
 * window (or ban) that refused. */
typedef struct ps_limit_decision {
    ps_admission verdict;
    int64_t limit;          /* X-RateLimit-Limit */
    int64_t remaining;      /* X-RateLimit-Remaining, never negative */
    int64_t reset_unix_s;   /* X-RateLimit-Reset: real Unix seconds when that window ends (rounded up) */
    int64_t retry_after_s;  /* when refused: real seconds until admission is possible again, >= 1 */
    const char *window;     /* "minute", "day" or "ban" (static string) */
} ps_limit_decision;

int ps_limiter_create(const ps_limiter_options *opts, ps_limiter **out, ps_error *err);
void ps_limiter_destroy(ps_limiter *l);

/* Counts one request of identity (any bytes, e.g. an API key or "ip:127.0.0.1")
 * against per_minute and per_day (0 = no such limit) at wall time now_ns,
 * and fills *out. */
void ps_limiter_admit(ps_limiter *l, const char *identity, size_t identity_len, int64_t per_minute,
                      int64_t per_day, int64_t now_ns, ps_limit_decision *out);

/* Reports the current state without counting (for responses that do not
 * count, if any). */
void ps_limiter_peek(ps_limiter *l, const char *identity, size_t identity_len, int64_t per_minute,
                     int64_t per_day, int64_t now_ns, ps_limit_decision *out);

/* Number of identities currently tracked (for tests of reclamation). */
size_t ps_limiter_tracked(ps_limiter *l);

#endif
