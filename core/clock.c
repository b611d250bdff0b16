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

void ps_clock_sleep_ns(int64_t ns)
{
    if (ns <= 0) return;
    struct timespec req = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    struct timespec rem;
    while (nanosleep(&req, &rem) != 0 && errno == EINTR) req = rem;
}
