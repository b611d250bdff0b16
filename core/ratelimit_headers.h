/* ratelimit_headers.h - reading the interface's rate-limit headers
 * (X-RateLimit-Limit, -Remaining, -Reset; spec section 8) and Retry-After
 * (RFC 9110 section 10.2.3), shared by the runner's checks and the load
 * generator's limit verification, and HTTP-date formatting for the server.
 *
 * Values are parsed strictly: a header that is not a plain non-negative
 * decimal integer is reported as malformed, never coerced. */
#ifndef PS_RATELIMIT_HEADERS_H
#define PS_RATELIMIT_HEADERS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/http_headers.h"

typedef enum ps_rl_field_state {
    PS_RL_ABSENT,
    PS_RL_MALFORMED, /* present but not 1*DIGIT (or repeated with different values) */
    PS_RL_OK,
} ps_rl_field_state;

typedef enum ps_retry_after_form {
    PS_RETRY_AFTER_DELAY, /* delay-seconds */
    PS_RETRY_AFTER_DATE,  /* HTTP-date */
} ps_retry_after_form;

typedef struct ps_rl_info {
    ps_rl_field_state limit_state, remaining_state, reset_state, retry_after_state;
    int64_t limit, remaining, reset; /* valid when the state is PS_RL_OK */
    const char *limit_raw, *remaining_raw, *reset_raw, *retry_after_raw; /* borrowed, may be NULL */
    ps_retry_after_form retry_after_form;
    int64_t retry_after_s;      /* seconds to wait, counted from now_s given to ps_rl_read */
    int64_t retry_after_unix_s; /* absolute time the wait ends (now_s + delay, or the date) */
} ps_rl_info;

/* Reads the four headers out of h. now_s is the client's wall clock in Unix
 * seconds (needed to turn an HTTP-date into a wait). Never fails: each field
 * gets its own state. Borrowed pointers live as long as h. */
void ps_rl_read(const ps_headers *h, int64_t now_s, ps_rl_info *out);

/* 1*DIGIT with optional surrounding white space; no sign, no fraction. */
bool ps_rl_parse_uint(const char *value, int64_t *out);

/* Retry-After value: delay-seconds or HTTP-date. Returns false when it is neither. */
bool ps_retry_after_parse(const char *value, int64_t now_s, ps_retry_after_form *form,
                          int64_t *wait_s, int64_t *until_unix_s);

/* What named the time a client may send again (see ps_rl_retry_at_ns). */
typedef enum ps_retry_source {
    PS_RETRY_NONE,        /* nothing: the client backs off on its own */
    PS_RETRY_AFTER,       /* Retry-After */
    PS_RETRY_RESET_AHEAD, /* an X-RateLimit-Reset ahead (within a day) */
} ps_retry_source;

/* The furthest time ps_rl_retry_at_ns names (about the year 2096): a service's
 * larger Retry-After or date is held there instead of overflowing. */
#define PS_RETRY_FAR_NS INT64_C(4000000000000000000)

/* When a client may send again after a response it read at done_ns (its
 * wall clock), from a service whose clock is offset_ns ahead of its own
 * (service_clock.h): Retry-After as delay-seconds counted from done_ns (a
 * whole-second clock never resends early), as an HTTP-date in the
 * service's clock; else an X-RateLimit-Reset ahead in the service's clock,
 * within a day; else 0. rl was read with now_s = the service's second at
 * done_ns. The one place the runner computes it. */
int64_t ps_rl_retry_at_ns(const ps_rl_info *rl, int64_t done_ns, int64_t offset_ns,
                          ps_retry_source *source);

/* HTTP-date (RFC 9110 5.6.7): IMF-fixdate, and the obsolete RFC 850 and
 * asctime forms recipients must accept. */
bool ps_http_date_parse(const char *value, int64_t *unix_s);
/* Formats IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") into out (>= 30 bytes). */
void ps_http_date_format(int64_t unix_s, char *out, unsigned out_size);

#endif
