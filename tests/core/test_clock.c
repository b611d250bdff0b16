/* test_clock.c - ps_clock_format_utc: ISO-8601 UTC to the second, the
 * boundaries of its buffer, and times around the epoch. */
#include <stdint.h>
#include <string.h>

#include "core/clock.h"
#include "harness.h"

int main(void)
{
    char out[32];
    CHECK_INT(ps_clock_format_utc(0, out, sizeof out), 0);
    CHECK_STR(out, "1970-01-01T00:00:00Z");
    /* 2026-11-21T05:00:00Z = 1795237200 s; the nanoseconds are cut, not rounded */
    CHECK_INT(ps_clock_format_utc(INT64_C(1795237200) * 1000000000 + 999999999, out, sizeof out),
              0);
    CHECK_STR(out, "2026-11-21T05:00:00Z");
    /* half a second before the epoch is in 23:59:59 of the day before */
    CHECK_INT(ps_clock_format_utc(-500000000, out, sizeof out), 0);
    CHECK_STR(out, "1969-12-31T23:59:59Z");
    /* exactly 20 characters + NUL fit in 21 bytes, not in 20 */
    char small[21];
    CHECK_INT(ps_clock_format_utc(0, small, sizeof small), 0);
    CHECK_STR(small, "1970-01-01T00:00:00Z");
    memset(small, 'x', sizeof small);
    CHECK_INT(ps_clock_format_utc(0, small, 20), -1);
    CHECK_STR(small, "");
    CHECK_INT(ps_clock_format_utc(0, NULL, 32), -1);
    CHECK_INT(ps_clock_format_utc(0, out, 0), -1);
    /* the current time formats and has the shape */
    CHECK_INT(ps_clock_format_utc(ps_clock_wall_ns(), out, sizeof out), 0);
    CHECK(strlen(out) == 20 && out[4] == '-' && out[10] == 'T' && out[19] == 'Z');
    return TEST_EXIT();
}
