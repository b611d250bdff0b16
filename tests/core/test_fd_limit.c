/* test_fd_limit.c - ps_fd_limit_raise lifts a low soft RLIMIT_NOFILE to the
 * hard limit only when asked for more, and reports what holds. */
#include <sys/resource.h>

#include "core/fd_limit.h"
#include "harness.h"

static void raises_only_when_below_want(void)
{
    struct rlimit rl;
    CHECK_INT(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max <= 64) {
        fprintf(stderr, "  hard limit %llu too low to test\n", (unsigned long long)rl.rlim_max);
        return;
    }
    int64_t hard = rl.rlim_max == RLIM_INFINITY ? INT64_MAX : (int64_t)rl.rlim_max;
    rl.rlim_cur = 64; /* lowering the soft limit is always allowed */
    CHECK_INT(setrlimit(RLIMIT_NOFILE, &rl), 0);
    CHECK_INT(ps_fd_limit_raise(32), 64); /* enough already: untouched */
    CHECK_INT(getrlimit(RLIMIT_NOFILE, &rl), 0);
    CHECK_INT((int64_t)rl.rlim_cur, 64);
    int64_t got = ps_fd_limit_raise(1000);
    CHECK_INT(getrlimit(RLIMIT_NOFILE, &rl), 0);
    int64_t now = rl.rlim_cur == RLIM_INFINITY ? INT64_MAX : (int64_t)rl.rlim_cur;
    CHECK_INT(got, now);
    /* raised to the hard limit, unless the system caps it (nr_open) lower */
    CHECK(got > 64 && got <= hard);
    CHECK_INT(ps_fd_limit_raise(INT64_MAX), got); /* at the hard limit: no change */
}

int main(void)
{
    RUN(raises_only_when_below_want);
    return TEST_EXIT();
}
