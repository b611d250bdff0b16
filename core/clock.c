/* clock.c - monotonic and wall clocks. */
#include "core/clock.h"

#include <errno.h>
#include <time.h>

static int64_t read_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t ps_clock_mono_ns(void)
{
    return read_clock(CLOCK_MONOTONIC);
}

int64_t ps_clock_wall_ns(void)
{
    return read_clock(CLOCK_REALTIME);
}

int64_t ps_clock_wall_s(void)
{
    return (int64_t)time(NULL);
}

int ps_clock_format_utc(int64_t wall_ns, char *out, size_t size)
{
    /* floor division: a time just before the epoch is in the second before */
    int64_t s = wall_ns / 1000000000 - (wall_ns % 1000000000 < 0);
    time_t t = (time_t)s;
    struct tm tm;
    if (!out || size == 0) return -1;
    if ((int64_t)t != s || !gmtime_r(&t, &tm) ||
        strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}

void ps_clock_sleep_ns(int64_t ns)
{
    if (ns <= 0) return;
    struct timespec req = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    struct timespec rem;
    while (nanosleep(&req, &rem) != 0 && errno == EINTR)
        req = rem;
}

int64_t ps_clock_s_to_ns(int64_t s)
{
    const int64_t century_s = 100LL * 366 * 86400;
    return (s < 0 ? 0 : s > century_s ? century_s : s) * 1000000000LL;
}
