/* http_dates.c - the dates a service sends, judged on every response:
 * Date present (and an IMF-fixdate) when the service shows it has a clock
 * by sending Unix times (RFC 9110 6.6.1), and a Retry-After that is a date
 * written as the IMF-fixdate a sender must use (RFC 9110 5.6.7; recipients,
 * this runner included, still read the obsolete forms). */
#include <stdio.h>
#include <string.h>

#include "core/ratelimit_headers.h"
#include "runner/suites/suites.h"

/* A plausible Unix time in seconds (after 2001-09-09): X-RateLimit-Reset
 * that is one shows the service has a clock. ratelimit.reset-unix-seconds
 * judges the value itself. */
#define UNIX_TIME_MIN 1000000000LL

/* value, white space around it trimmed, is exactly the IMF-fixdate of the time it names. */
static bool is_imf_fixdate(const char *value)
{
    int64_t t;
    if (!ps_http_date_parse(value, &t)) return false;
    char want[40];
    ps_http_date_format(t, want, sizeof want);
    while (*value == ' ' || *value == '\t')
        value++;
    size_t n = strlen(value);
    while (n && (value[n - 1] == ' ' || value[n - 1] == '\t'))
        n--;
    return n == strlen(want) && memcmp(value, want, n) == 0;
}

void ps_http_dates_observe(ps_conform *c, void *state, const ps_observation *o)
{
    (void)state;
    const ps_exchange *ex = o->ex;
    const char *reset = ps_headers_get(&ex->resp_headers, "X-RateLimit-Reset");
    int64_t r;
    if (ex->status >= 200 && ex->status < 500 && reset && ps_rl_parse_uint(reset, &r) &&
        r >= UNIX_TIME_MIN) {
        const char *date = ps_headers_get(&ex->resp_headers, "Date");
        if (!date)
            ps_conform_fail(c, PS_CK_HTTP_DATE_PRESENT, ex, "Date: <IMF-fixdate>",
                            "a %ld response carries X-RateLimit-Reset %s, a Unix time (the "
                            "service has a clock), but no Date (RFC 9110 6.6.1)",
                            ex->status, reset);
        else if (!is_imf_fixdate(date))
            ps_conform_fail(c, PS_CK_HTTP_DATE_PRESENT, ex, "Date: <IMF-fixdate>",
                            "a %ld response carries Date '%.60s', not an IMF-fixdate such as "
                            "'Sun, 06 Nov 1994 08:49:37 GMT' (RFC 9110 5.6.7)",
                            ex->status, date);
        else
            ps_conform_pass(c, PS_CK_HTTP_DATE_PRESENT);
    }
    const char *ra = ps_headers_get(&ex->resp_headers, "Retry-After");
    int64_t unused;
    if (ra && !ps_rl_parse_uint(ra, &unused) && ps_http_date_parse(ra, &unused)) {
        if (is_imf_fixdate(ra))
            ps_conform_pass(c, PS_CK_HTTP_RETRY_AFTER_IMF_FIXDATE);
        else
            ps_conform_fail(c, PS_CK_HTTP_RETRY_AFTER_IMF_FIXDATE, ex,
                            "Retry-After: <IMF-fixdate> (or delay-seconds)",
                            "a %ld response carries Retry-After '%.60s': an HTTP-date in an "
                            "obsolete form; a sender must write IMF-fixdate such as 'Sun, 06 Nov "
                            "1994 08:49:37 GMT' (RFC 9110 5.6.7)",
                            ex->status, ra);
    }
}

void ps_suite_http_dates_finish(ps_conform *c)
{
    ps_conform_not_applicable(c, PS_CK_HTTP_DATE_PRESENT,
                              "no 2xx-4xx response carried X-RateLimit-Reset as a Unix time, "
                              "the sign of a clock that RFC 9110 6.6.1 asks Date of");
    ps_conform_not_applicable(c, PS_CK_HTTP_RETRY_AFTER_IMF_FIXDATE,
                              "no Retry-After of the run was an HTTP-date (delay-seconds only, "
                              "or none)");
}
