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

/* HTTP-date (RFC 9110 5.6.7): IMF-fixdate, and the obsolete RFC 850 and
 * asctime forms recipients must accept. */
bool ps_http_date_parse(const char *value, int64_t *unix_s);
/* Formats IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") into out (>= 30 bytes). */
void ps_http_date_format(int64_t unix_s, char *out, unsigned out_size);

#endif
