/* ratelimit_headers.c - strict readers for X-RateLimit-* and Retry-After. */
#include "core/ratelimit_headers.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

bool ps_rl_parse_uint(const char *value, int64_t *out)
{
    if (!value) return false;
    while (*value == ' ' || *value == '\t')
        value++;
    const char *start = value;
    while (*value >= '0' && *value <= '9')
        value++;
    if (value == start) return false;
    const char *end = value;
    while (*value == ' ' || *value == '\t')
        value++;
    if (*value) return false;
    if (end - start > 18) return false; /* beyond any sane count or timestamp, and int64 */
    errno = 0;
    long long v = strtoll(start, NULL, 10);
    if (errno) return false;
    *out = v;
    return true;
}

static const char *const month_names[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
static const char *const day_names[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};

static int month_index(const char *m)
{
    for (int i = 0; i < 12; i++)
        if (strncmp(m, month_names[i], 3) == 0) return i;
    return -1;
}

static bool to_unix(int year, int mon, int day, int h, int mi, int s, int64_t *out)
{
    if (mon < 0 || day < 1 || day > 31 || h > 23 || mi > 59 || s > 60 || year < 1970) return false;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = year - 1900;
    tm.tm_mon = mon;
    tm.tm_mday = day;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    time_t t = timegm(&tm);
    if (t == (time_t)-1) return false;
    *out = (int64_t)t;
    return true;
}

bool ps_http_date_parse(const char *v, int64_t *unix_s)
{
    char wd[16], mon[4], tz[4];
    int day, year, h, mi, s, n = 0;
    /* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
    if (sscanf(v, "%3s, %2d %3s %4d %2d:%2d:%2d %3s%n", wd, &day, mon, &year, &h, &mi, &s, tz,
               &n) == 8 &&
        v[n] == '\0' && strcmp(tz, "GMT") == 0)
        return to_unix(year, month_index(mon), day, h, mi, s, unix_s);
    /* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT */
    n = 0;
    if (sscanf(v, "%15[A-Za-z], %2d-%3s-%2d %2d:%2d:%2d %3s%n", wd, &day, mon, &year, &h, &mi, &s,
               tz, &n) == 8 &&
        v[n] == '\0' && strcmp(tz, "GMT") == 0) {
        /* RFC 9110: a two-digit year more than 50 years in the future is the past century */
        year += year < 70 ? 2000 : 1900;
        return to_unix(year, month_index(mon), day, h, mi, s, unix_s);
    }
    /* asctime: Sun Nov  6 08:49:37 1994 */
    n = 0;
    if (sscanf(v, "%3s %3s %d %2d:%2d:%2d %4d%n", wd, mon, &day, &h, &mi, &s, &year, &n) == 7 &&
        v[n] == '\0')
        return to_unix(year, month_index(mon), day, h, mi, s, unix_s);
    return false;
}

void ps_http_date_format(int64_t unix_s, char *out, unsigned out_size)
{
    time_t t = (time_t)unix_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(out, out_size, "%s, %02d %s %04d %02d:%02d:%02d GMT", day_names[tm.tm_wday],
             tm.tm_mday, month_names[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
             tm.tm_sec);
}

bool ps_retry_after_parse(const char *value, int64_t now_s, ps_retry_after_form *form,
                          int64_t *wait_s, int64_t *until_unix_s)
{
    int64_t v;
    if (!value) return false;
    if (ps_rl_parse_uint(value, &v)) {
        if (form) *form = PS_RETRY_AFTER_DELAY;
        if (wait_s) *wait_s = v;
        if (until_unix_s) *until_unix_s = now_s + v;
        return true;
    }
    while (*value == ' ')
        value++;
    if (ps_http_date_parse(value, &v)) {
        if (form) *form = PS_RETRY_AFTER_DATE;
        if (wait_s) *wait_s = v > now_s ? v - now_s : 0;
        if (until_unix_s) *until_unix_s = v;
        return true;
    }
    return false;
}

/* A field repeated with different values is as unusable as a malformed one. */
static ps_rl_field_state read_uint_field(const ps_headers *h, const char *name, int64_t *out,
                                         const char **raw)
{
    *raw = ps_headers_get(h, name);
    if (!*raw) return PS_RL_ABSENT;
    for (size_t i = 0; i < h->count; i++)
        if (strcasecmp(h->items[i].name, name) == 0 && strcmp(h->items[i].value, *raw) != 0)
            return PS_RL_MALFORMED;
    return ps_rl_parse_uint(*raw, out) ? PS_RL_OK : PS_RL_MALFORMED;
}

void ps_rl_read(const ps_headers *h, int64_t now_s, ps_rl_info *out)
{
    memset(out, 0, sizeof *out);
    out->limit_state = read_uint_field(h, "X-RateLimit-Limit", &out->limit, &out->limit_raw);
    out->remaining_state =
        read_uint_field(h, "X-RateLimit-Remaining", &out->remaining, &out->remaining_raw);
    out->reset_state = read_uint_field(h, "X-RateLimit-Reset", &out->reset, &out->reset_raw);
    out->retry_after_raw = ps_headers_get(h, "Retry-After");
    if (!out->retry_after_raw) {
        out->retry_after_state = PS_RL_ABSENT;
    } else if (ps_retry_after_parse(out->retry_after_raw, now_s, &out->retry_after_form,
                                    &out->retry_after_s, &out->retry_after_unix_s)) {
        out->retry_after_state = PS_RL_OK;
    } else {
        out->retry_after_state = PS_RL_MALFORMED;
    }
}

/* base_ns + s seconds, held within +-PS_RETRY_FAR_NS: a service may name any
 * number of seconds (Retry-After: 1795000000000, a date in the year 9999),
 * and a time that far is only ever compared with --max-wait. base_ns is a
 * wall-clock time or an offset (well within +-4e18), so the sum of two terms
 * each within 4e18 cannot overflow. */
static int64_t plus_seconds_ns(int64_t base_ns, int64_t s)
{
    const int64_t far_s = PS_RETRY_FAR_NS / 1000000000;
    int64_t out;
    if (s >= far_s)
        out = PS_RETRY_FAR_NS;
    else if (s <= -far_s)
        out = -PS_RETRY_FAR_NS;
    else
        out = base_ns + s * 1000000000LL;
    if (out > PS_RETRY_FAR_NS) out = PS_RETRY_FAR_NS;
    if (out < -PS_RETRY_FAR_NS) out = -PS_RETRY_FAR_NS;
    return out;
}

int64_t ps_rl_retry_at_ns(const ps_rl_info *rl, int64_t done_ns, int64_t offset_ns,
                          ps_retry_source *source)
{
    int64_t service_s = (done_ns + offset_ns) / 1000000000;
    *source = PS_RETRY_NONE;
    if (rl->retry_after_state == PS_RL_OK) {
        *source = PS_RETRY_AFTER;
        if (rl->retry_after_form == PS_RETRY_AFTER_DELAY)
            return plus_seconds_ns(done_ns, rl->retry_after_s);
        return plus_seconds_ns(-offset_ns, rl->retry_after_unix_s);
    }
    if (rl->reset_state == PS_RL_OK && rl->reset > service_s &&
        rl->reset < service_s + 86400 + 60) {
        *source = PS_RETRY_RESET_AHEAD;
        return rl->reset * 1000000000LL - offset_ns;
    }
    return 0;
}
