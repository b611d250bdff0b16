/* fd_limit.c - RLIMIT_NOFILE raised to the hard limit (see fd_limit.h). */
#include "core/fd_limit.h"

#include <sys/resource.h>

static int64_t as_int64(rlim_t v)
{
    return v == RLIM_INFINITY || v > (rlim_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

int64_t ps_fd_limit_raise(int64_t want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
    if (as_int64(rl.rlim_cur) >= want || rl.rlim_cur == rl.rlim_max) return as_int64(rl.rlim_cur);
    rl.rlim_cur = rl.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &rl); /* may fail; the limit read back says what holds */
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
    return as_int64(rl.rlim_cur);
}
