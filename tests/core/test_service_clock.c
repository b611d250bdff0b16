/* test_service_clock.c - the service's clock from Date headers
 * (core/service_clock.h): a clock in step whose Date lags (Linux time() is
 * up to a tick behind the precise clock; a proxy may cache its Date for
 * half a second) is judged in step at every sample, never half a second
 * off; a clock seconds off converges on its offset; a clock that steps
 * starts the bounds afresh; the latest offset allowed never names a
 * deadline later than the true one. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/service_clock.h"
#include "harness.h"

#define NS INT64_C(1000000000)
#define MS INT64_C(1000000)

/* The Date a server writes for a request it handles at its own time t_ns
 * whose clock reading lags by up to lag_ns (a coarse or cached clock). */
static int64_t date_of(int64_t t_ns, int64_t lag_ns)
{
    int64_t read = t_ns - (lag_ns ? ps_test_rand_below(lag_ns + 1) : 0);
    return read / NS;
}

/* n requests of 0.2-3 ms round trip at random phases from start_ns, the
 * service offset_ns ahead, its Date lagging up to lag_ns. Returns the
 * largest |estimate - offset| seen after the first `settle` samples, and
 * checks the latest allowed offset is never below the truth minus lag. */
static int64_t run(ps_service_clock *sc, int64_t start_ns, int n, int64_t offset_ns, int64_t lag_ns,
                   int settle, int *late_deadlines)
{
    int64_t worst = 0, t = start_ns;
    for (int i = 0; i < n; i++) {
        t += ps_test_rand_below(300 * MS) + 1;
        int64_t rtt = 200000 + ps_test_rand_below(3 * MS);
        int64_t served = t + rtt / 2 + offset_ns;
        ps_service_clock_add(sc, date_of(served, lag_ns), t, t + rtt);
        int64_t err = ps_service_clock_offset_ns(sc) - offset_ns;
        if (err < 0) err = -err;
        if (i >= settle && err > worst) worst = err;
        /* a deadline moved later than the truth: never */
        if (ps_service_clock_latest_ns(sc) < offset_ns) ++*late_deadlines;
    }
    return worst;
}

int main(void)
{
    int64_t start = INT64_C(1795611547) * NS;
    int late = 0;

    /* in step, Date from a coarse clock (this machine: up to 6 ms behind):
     * within 10 ms at every sample, from the first, never restarted (the
     * old estimator: 505 ms off after 2 restarts) */
    ps_service_clock sc = {0};
    CHECK(run(&sc, start, 2000, 0, 8 * MS, 0, &late) <= 10 * MS);
    CHECK_INT(sc.restarts, 0);
    CHECK(!ps_service_clock_beyond(&sc, 10 * NS));

    /* in step, Date cached for up to half a second by a proxy: never
     * restarted, within 100 ms once 200 Dates came (the lower bound rises
     * to the truth only by a Date both fresh and read just after a whole
     * second), and its deadlines never later than the truth (checked in
     * run: the latest offset stays 0) */
    sc = (ps_service_clock){0};
    CHECK(run(&sc, start, 2000, 0, PS_SERVICE_DATE_LAG_NS, 200, &late) <= 100 * MS);
    CHECK_INT(sc.restarts, 0);

    /* 0.3 s behind, punctual Date: judged in step (a lag could explain it),
     * but waited for: the earliest offset is within 20 ms of it */
    sc = (ps_service_clock){0};
    CHECK(run(&sc, start, 500, -300 * MS, 0, 50, &late) == 300 * MS);
    CHECK(ps_service_clock_earliest_ns(&sc) <= -290 * MS &&
          ps_service_clock_earliest_ns(&sc) >= -300 * MS);
    /* 0.7 s behind: beyond the lag, measured */
    sc = (ps_service_clock){0};
    CHECK(run(&sc, start, 500, -700 * MS, 0, 50, &late) <= 20 * MS);
    /* 5 s behind, its Date lagging up to 500 ms: within 150 ms once 200 came */
    sc = (ps_service_clock){0};
    CHECK(run(&sc, start, 500, -5 * NS, PS_SERVICE_DATE_LAG_NS, 200, &late) <= 150 * MS);

    /* 5 s behind, punctual Date: within 20 ms once 50 samples came */
    sc = (ps_service_clock){0};
    CHECK(run(&sc, start, 500, -5 * NS, 0, 50, &late) <= 20 * MS);
    CHECK(!ps_service_clock_beyond(&sc, 10 * NS));
    /* ... and with a coarse clock's lag */
    sc = (ps_service_clock){0};
    CHECK(run(&sc, start, 500, -5 * NS, 8 * MS, 50, &late) <= 30 * MS);

    /* 30 s behind and 120 s behind: beyond 10 s, named within 20 ms */
    sc = (ps_service_clock){0};
    CHECK(run(&sc, start, 300, -30 * NS, 8 * MS, 50, &late) <= 30 * MS);
    CHECK(ps_service_clock_beyond(&sc, 10 * NS));
    sc = (ps_service_clock){0};
    CHECK(run(&sc, start, 300, 120 * NS, 8 * MS, 50, &late) <= 30 * MS);
    CHECK(ps_service_clock_beyond(&sc, 10 * NS));

    /* a step from in step to 30 s behind: the bounds start afresh */
    sc = (ps_service_clock){0};
    run(&sc, start, 200, 0, 8 * MS, 0, &late);
    CHECK(run(&sc, start + 100 * NS, 300, -30 * NS, 8 * MS, 50, &late) <= 30 * MS);
    CHECK(sc.restarts >= 1);

    /* in step behind a Date renewed every 500 ms at a fixed phase (nginx's
     * timer_resolution, Envoy): whole-second Dates then turn 277 ms after
     * each second, just as a clock 277 ms behind would: judged in step,
     * waited for as if 277 ms behind, no deadline later than the truth */
    sc = (ps_service_clock){0};
    int64_t t = start;
    bool deadline_late = false;
    for (int i = 0; i < 1000; i++) {
        t += ps_test_rand_below(300 * MS) + 1;
        int64_t renewed = (t - 277 * MS) / (500 * MS) * (500 * MS) + 277 * MS; /* last renewal */
        ps_service_clock_add(&sc, renewed / NS, t - 100000, t + 100000);
        deadline_late |= ps_service_clock_latest_ns(&sc) < 0;
    }
    CHECK(!deadline_late);
    CHECK_INT(ps_service_clock_offset_ns(&sc), 0);
    CHECK(ps_service_clock_earliest_ns(&sc) <= -277 * MS + 2 * MS &&
          ps_service_clock_earliest_ns(&sc) > -300 * MS);
    CHECK(!ps_service_clock_beyond(&sc, 10 * NS));

    /* no sample: 0, nothing beyond */
    sc = (ps_service_clock){0};
    CHECK_INT(ps_service_clock_offset_ns(&sc), 0);
    CHECK_INT(ps_service_clock_latest_ns(&sc), 0);
    CHECK_INT(ps_service_clock_earliest_ns(&sc), 0);
    CHECK(!ps_service_clock_beyond(&sc, 0));

    /* the latest offset allowed: never before the truth (a deadline named in
     * the service's clock is never placed later than it is), and for a clock
     * off by seconds no more than the lag after it */
    CHECK_INT(late, 0);
    sc = (ps_service_clock){0};
    run(&sc, start, 300, -5 * NS, 0, 0, &late);
    CHECK(ps_service_clock_latest_ns(&sc) >= -5 * NS &&
          ps_service_clock_latest_ns(&sc) <= -5 * NS + PS_SERVICE_DATE_LAG_NS + 20 * MS);
    return TEST_EXIT();
}
