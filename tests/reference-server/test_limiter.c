/* test_limiter.c - the reference server's rate limiter: windows, headers,
 * bans, reclamation, concurrency; each --limiter mode's Remaining / Reset /
 * Retry-After sequences, refunds (--count-errors no) and the limiter faults. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/clock.h"
#include "harness.h"
#include "reference-server/limiter.h"

#define S 1000000000LL
/* A wall time with a fractional second, so rounding of Reset is exercised. */
#define T0 (1700000000LL * S + 250000000LL)

static ps_limiter *make(double scale, int64_t ban_threshold, int64_t ban_seconds, size_t max_ids,
                        bool racy)
{
    ps_limiter_options o = {scale,
                            ban_threshold,
                            ban_seconds,
                            max_ids,
                            racy ? (ps_fault_set)1 << PS_FAULT_OVER_ADMISSION_RACE : 0,
                            PS_RLM_FIXED};
    ps_limiter *l = NULL;
    ps_error err;
    if (ps_limiter_create(&o, &l, &err) != 0) {
        fprintf(stderr, "ps_limiter_create: %s\n", err.message);
        exit(2);
    }
    return l;
}

static ps_limiter *make_mode(ps_limiter_mode mode, ps_fault_set faults)
{
    ps_limiter_options o = {.time_scale = 1, .faults = faults, .mode = mode};
    ps_limiter *l = NULL;
    ps_error err;
    if (ps_limiter_create(&o, &l, &err) != 0) {
        fprintf(stderr, "ps_limiter_create: %s\n", err.message);
        exit(2);
    }
    return l;
}

#define F(f) ((ps_fault_set)1 << (f))
#define ALL_MODES for (ps_limiter_mode mode = PS_RLM_FIXED; mode <= PS_RLM_TOKEN_BUCKET; mode++)

/* Sends one request at t and expects the verdict (and, when admitted, the
 * remaining); returns the decision. */
static ps_limit_decision at(ps_limiter *l, int64_t pm, int64_t pd, int64_t t)
{
    ps_limit_decision d;
    ps_limiter_admit(l, "k", 1, pm, pd, t, &d);
    return d;
}

/* A refused request's Retry-After is enough: a request sent at the whole
 * second the client computes (its clock's second + Retry-After) is admitted. */
static void check_retry_after_enough(ps_limiter *l, int64_t pm, int64_t pd, int64_t refused_at,
                                     const ps_limit_decision *d)
{
    int64_t then = (refused_at / S + d->retry_after_s) * S;
    ps_limit_decision e;
    ps_limiter_peek(l, "k", 1, pm, pd, then, &e);
    CHECK_INT(e.verdict, PS_ADMITTED);
    /* and not a whole second too long: one second earlier it is still refused */
    if (d->retry_after_s > 1) {
        ps_limiter_peek(l, "k", 1, pm, pd, then - S, &e);
        CHECK_INT(e.verdict, PS_LIMITED);
    }
}

static void test_sliding_log_sequence(void)
{
    ps_limiter *l = make_mode(PS_RLM_SLIDING_LOG, 0);
    int64_t oldest_leaves = (T0 + 60 * S + S - 1) / S; /* T0's millisecond + 60 s, rounded up */
    for (int i = 0; i < 5; i++) {
        ps_limit_decision d = at(l, 5, 0, T0 + i * 10 * S);
        CHECK_INT(d.verdict, PS_ADMITTED);
        CHECK_INT(d.limit, 5);
        CHECK_INT(d.remaining, 4 - i);
        CHECK_INT(d.reset_unix_s, oldest_leaves); /* the oldest counted request is T0's */
    }
    ps_limit_decision d = at(l, 5, 0, T0 + 50 * S);
    CHECK_INT(d.verdict, PS_LIMITED);
    CHECK_INT(d.remaining, 0);
    CHECK_INT(d.reset_unix_s, oldest_leaves);
    CHECK_INT(d.retry_after_s, oldest_leaves - (T0 + 50 * S) / S);
    check_retry_after_enough(l, 5, 0, T0 + 50 * S, &d);
    /* T0's request has left: one admission, then Reset names the next oldest */
    d = at(l, 5, 0, T0 + 60 * S + 1000000);
    CHECK_INT(d.verdict, PS_ADMITTED);
    CHECK_INT(d.remaining, 0);
    CHECK_INT(d.reset_unix_s, (T0 + 70 * S + S - 1) / S);
    d = at(l, 5, 0, T0 + 61 * S);
    CHECK_INT(d.verdict, PS_LIMITED);
    /* never more than 5 in any 60 s: a burst right after admits only what left */
    ps_limiter_destroy(l);
}

static void test_sliding_counter_sequence(void)
{
    ps_limiter *l = make_mode(PS_RLM_SLIDING_COUNTER, 0);
    int64_t end = (T0 + 60 * S + S - 1) / S;
    for (int i = 0; i < 10; i++) {
        ps_limit_decision d = at(l, 10, 0, T0);
        CHECK_INT(d.verdict, PS_ADMITTED);
        CHECK_INT(d.remaining, 9 - i);
        CHECK_INT(d.reset_unix_s, end); /* the current counting window's end */
    }
    ps_limit_decision d = at(l, 10, 0, T0 + S);
    CHECK_INT(d.verdict, PS_LIMITED);
    CHECK_INT(d.reset_unix_s, end);
    /* the next window, 6 s in: 10 x 54/60 = 9 weighted, one more fits */
    CHECK_INT(d.retry_after_s, (T0 + 66 * S + S - 1) / S - (T0 + S) / S);
    check_retry_after_enough(l, 10, 0, T0 + S, &d);
    d = at(l, 10, 0, T0 + 66 * S);
    CHECK_INT(d.verdict, PS_ADMITTED);
    CHECK_INT(d.remaining, 0);
    CHECK_INT(d.reset_unix_s, (T0 + 120 * S + S - 1) / S);
    d = at(l, 10, 0, T0 + 66 * S + 100000000);
    CHECK_INT(d.verdict, PS_LIMITED); /* 9 x 53.9/60 + 1 > 9 */
    check_retry_after_enough(l, 10, 0, T0 + 66 * S + 100000000, &d);
    /* two windows later nothing of the past counts */
    d = at(l, 10, 0, T0 + 200 * S);
    CHECK_INT(d.verdict, PS_ADMITTED);
    CHECK_INT(d.remaining, 9);
    ps_limiter_destroy(l);
}

static void test_token_bucket_sequence(void)
{
    ps_limiter *l = make_mode(PS_RLM_TOKEN_BUCKET, 0);
    /* 6 per minute: a token every 10 s; Reset = when the bucket is full again */
    for (int i = 0; i < 6; i++) {
        ps_limit_decision d = at(l, 6, 0, T0);
        CHECK_INT(d.verdict, PS_ADMITTED);
        CHECK_INT(d.remaining, 5 - i);
        CHECK_INT(d.reset_unix_s,
                  (T0 + (i + 1) * 10 * S + S - 1) / S); /* moves with every request */
    }
    ps_limit_decision d = at(l, 6, 0, T0);
    CHECK_INT(d.verdict, PS_LIMITED);
    CHECK_INT(d.reset_unix_s, (T0 + 60 * S + S - 1) / S);
    /* the next token comes at T0 + 10 s (x.25): rounded up, 11 s, never 10 */
    CHECK_INT(d.retry_after_s, 11);
    check_retry_after_enough(l, 6, 0, T0, &d);
    /* Remaining refills continuously */
    ps_limit_decision p;
    ps_limiter_peek(l, "k", 1, 6, 0, T0 + 35 * S, &p);
    CHECK_INT(p.remaining, 3);
    CHECK_INT(p.reset_unix_s, (T0 + 60 * S + S - 1) / S);
    d = at(l, 6, 0, T0 + 35 * S);
    CHECK_INT(d.verdict, PS_ADMITTED);
    CHECK_INT(d.remaining, 2);
    CHECK_INT(d.reset_unix_s, (T0 + 70 * S + S - 1) / S);
    /* in any 60 s: at most the bucket (6) plus what refilled */
    ps_limiter_destroy(l);
    l = make_mode(PS_RLM_TOKEN_BUCKET, 0);
    int admitted = 0;
    for (int64_t t = 0; t < 60 * S; t += S / 10)
        admitted += at(l, 6, 0, T0 + t).verdict == PS_ADMITTED;
    CHECK_INT(admitted, 6 + 5); /* refills at 10, 20, 30, 40, 50 s */
    ps_limiter_destroy(l);
}

/* Every mode keeps both limits and shows the one with fewest remaining. */
static void test_every_mode_shows_fewest_remaining(void)
{
    ALL_MODES
    {
        ps_limiter *l = make_mode(mode, 0);
        ps_limit_decision d = at(l, 5, 3, T0);
        CHECK_STR(d.window, "day");
        CHECK_INT(d.limit, 3);
        CHECK_INT(d.remaining, 2);
        d = at(l, 5, 100, T0);
        CHECK_STR(d.window, "minute");
        CHECK_INT(d.limit, 5);
        CHECK_INT(d.remaining, 3);
        for (int i = 0; i < 3; i++)
            d = at(l, 5, 100, T0);
        CHECK_INT(d.verdict, PS_ADMITTED);
        CHECK_INT(d.remaining, 0);
        d = at(l, 5, 100, T0 + 1);
        CHECK_INT(d.verdict, PS_LIMITED);
        CHECK_STR(d.window, "minute");
        CHECK_INT(d.remaining, 0);
        CHECK(d.retry_after_s >= 1);
        check_retry_after_enough(l, 5, 100, T0 + 1, &d);
        if (ps_test_failures) fprintf(stderr, "  (mode %s)\n", ps_rlm_algo_name(mode));
        ps_limiter_destroy(l);
    }
}

/* --count-errors no: an admission taken back frees its place in every mode. */
static void test_refund_frees_the_place(void)
{
    ALL_MODES
    {
        ps_limiter *l = make_mode(mode, 0);
        ps_limit_decision d;
        for (int i = 0; i < 3; i++)
            d = at(l, 3, 1000, T0 + i * 1000);
        CHECK_INT(d.remaining, 0);
        CHECK_INT(at(l, 3, 1000, T0 + 5000).verdict, PS_LIMITED);
        ps_limiter_refund(l, "k", 1, 3, 1000, T0 + 2000);
        ps_limiter_peek(l, "k", 1, 3, 1000, T0 + 6000, &d);
        CHECK_INT(d.verdict, PS_ADMITTED);
        CHECK_INT(d.remaining, 1);
        d = at(l, 3, 1000, T0 + 7000);
        CHECK_INT(d.verdict, PS_ADMITTED);
        CHECK_INT(d.remaining, 0);
        CHECK_INT(at(l, 3, 1000, T0 + 8000).verdict, PS_LIMITED);
        /* an unknown identity: nothing happens */
        ps_limiter_refund(l, "other", 5, 3, 1000, T0);
        if (ps_test_failures) fprintf(stderr, "  (mode %s)\n", ps_rlm_algo_name(mode));
        ps_limiter_destroy(l);
    }
}

static void test_fault_off_by_one_admission(void)
{
    ALL_MODES
    {
        ps_limiter *l = make_mode(mode, F(PS_FAULT_OFF_BY_ONE_ADMISSION));
        int admitted = 0;
        ps_limit_decision d;
        for (int i = 0; i < 10; i++) {
            d = at(l, 4, 0, T0);
            admitted += d.verdict == PS_ADMITTED;
            CHECK(d.remaining >= 0);
        }
        CHECK_INT(admitted, 5); /* Limit + 1 */
        ps_limiter_destroy(l);
    }
}

static void test_fault_stacked_limiters(void)
{
    ps_limiter *l = make_mode(PS_RLM_FIXED, F(PS_FAULT_STACKED_LIMITERS));
    ps_limit_decision d;
    for (int i = 0; i < 60; i++) {
        d = at(l, 60, 1000, T0 + i);
        CHECK_INT(d.verdict, PS_ADMITTED);
        CHECK_INT(d.limit, 1000); /* the day limiter's headers win */
        CHECK_INT(d.remaining, 999 - i);
        CHECK_STR(d.window, "day");
    }
    d = at(l, 60, 1000, T0 + 100);
    CHECK_INT(d.verdict, PS_LIMITED); /* while the minute one refuses */
    CHECK_INT(d.limit, 60);
    CHECK_INT(d.remaining, 0);
    ps_limiter_destroy(l);
}

static void test_minute_window_remaining_sequence(void)
{
    ps_limiter *l = make(1, 0, 0, 0, false);
    ps_limit_decision d;
    int64_t reset = (T0 + 60 * S + S - 1) / S; /* the window's end rounded up */
    for (int i = 0; i < 60; i++) {
        ps_limiter_admit(l, "key-a", 5, 60, 1000, T0 + i * 10000000LL, &d);
        CHECK_INT(d.verdict, PS_ADMITTED);
        CHECK_INT(d.limit, 60);
        CHECK_INT(d.remaining, 59 - i);
        CHECK_INT(d.reset_unix_s, reset); /* stable for the whole window */
        CHECK_STR(d.window, "minute");
    }
    int64_t now = T0 + 30 * S + 700000000LL;
    ps_limiter_admit(l, "key-a", 5, 60, 1000, now, &d);
    CHECK_INT(d.verdict, PS_LIMITED);
    CHECK_INT(d.limit, 60);
    CHECK_INT(d.remaining, 0);
    CHECK_INT(d.reset_unix_s, reset);
    CHECK_INT(d.retry_after_s, reset - now / S);
    CHECK_STR(d.window, "minute");
    /* another identity is not affected */
    ps_limiter_admit(l, "key-b", 5, 60, 1000, now, &d);
    CHECK_INT(d.verdict, PS_ADMITTED);
    CHECK_INT(d.remaining, 59);
    /* identities are bytes, not C strings */
    ps_limiter_admit(l, "key-a\0x", 7, 60, 1000, now, &d);
    CHECK_INT(d.verdict, PS_ADMITTED);
    CHECK_INT(ps_limiter_tracked(l), 3);
    ps_limiter_destroy(l);
}

static void test_day_window_binds_before_minute(void)
{
    ps_limiter *l = make(1, 0, 0, 0, false);
    ps_limit_decision d;
    int64_t day_reset = (T0 + 86400 * S + S - 1) / S;
    for (int i = 0; i < 5; i++) {
        ps_limiter_admit(l, "k", 1, 60, 5, T0 + i, &d);
        CHECK_INT(d.verdict, PS_ADMITTED);
        CHECK_INT(d.limit, 5);
        CHECK_INT(d.remaining, 4 - i);
        CHECK_STR(d.window, "day");
        CHECK_INT(d.reset_unix_s, day_reset);
    }
    /* long after the minute window ended, the day one still refuses */
    int64_t now = T0 + 3600 * S;
    ps_limiter_admit(l, "k", 1, 60, 5, now, &d);
    CHECK_INT(d.verdict, PS_LIMITED);
    CHECK_STR(d.window, "day");
    CHECK_INT(d.limit, 5);
    CHECK_INT(d.remaining, 0);
    CHECK_INT(d.reset_unix_s, day_reset);
    CHECK_INT(d.retry_after_s, day_reset - now / S);
    ps_limiter_destroy(l);
}

static void test_headers_describe_fewest_remaining(void)
{
    ps_limiter *l = make(1, 0, 0, 0, false);
    ps_limit_decision d;
    /* minute 10, day 12: minute has fewer left until the day catches up */
    for (int i = 0; i < 10; i++) {
        ps_limiter_admit(l, "k", 1, 10, 12, T0 + i, &d);
        CHECK_STR(d.window, "minute");
        CHECK_INT(d.remaining, 9 - i);
    }
    ps_limiter_admit(l, "k", 1, 10, 12, T0 + 61 * S, &d); /* new minute window */
    CHECK_STR(d.window, "day");                           /* day: 1 left, minute: 9 */
    CHECK_INT(d.remaining, 1);
    CHECK_INT(d.limit, 12);
    ps_limiter_admit(l, "k", 1, 10, 12, T0 + 62 * S, &d);
    CHECK_STR(d.window, "day");
    CHECK_INT(d.remaining, 0);
    ps_limiter_admit(l, "k", 1, 10, 12, T0 + 63 * S, &d);
    CHECK_INT(d.verdict, PS_LIMITED);
    CHECK_STR(d.window, "day");
    /* both windows exhausted: the day one refuses (admission waits for it) */
    ps_limiter_destroy(l);
    l = make(1, 0, 0, 0, false);
    for (int i = 0; i < 3; i++)
        ps_limiter_admit(l, "k", 1, 3, 3, T0, &d);
    ps_limiter_admit(l, "k", 1, 3, 3, T0, &d);
    CHECK_INT(d.verdict, PS_LIMITED);
    CHECK_STR(d.window, "day");
    CHECK_INT(d.reset_unix_s, (T0 + 86400 * S + S - 1) / S);
    /* no limit at all */
    ps_limiter_admit(l, "free", 4, 0, 0, T0, &d);
    CHECK_INT(d.verdict, PS_ADMITTED);
    CHECK_STR(d.window, "none");
    ps_limiter_destroy(l);
}

static void test_window_rollover_at_scaled_time(void)
{
    ps_limiter *l = make(60, 0, 0, 0, false); /* minute window = 1 s, day = 1440 s */
    ps_limit_decision d;
    for (int i = 0; i < 3; i++) {
        ps_limiter_admit(l, "k", 1, 3, 1000, T0, &d);
        CHECK_INT(d.verdict, PS_ADMITTED);
    }
    CHECK_INT(d.reset_unix_s, (T0 + S + S - 1) / S);
    ps_limiter_admit(l, "k", 1, 3, 1000, T0 + S - 1, &d);
    CHECK_INT(d.verdict, PS_LIMITED);
    CHECK_INT(d.retry_after_s, 1);
    ps_limiter_admit(l, "k", 1, 3, 1000, T0 + S, &d); /* the window ended: a new one starts */
    CHECK_INT(d.verdict, PS_ADMITTED);
    CHECK_INT(d.remaining, 2);
    CHECK_INT(d.reset_unix_s, (T0 + 2 * S + S - 1) / S);
    /* the day window is 1440 s of real time */
    ps_limiter_destroy(l);
    l = make(60, 0, 0, 0, false);
    ps_limiter_admit(l, "k", 1, 100, 2, T0, &d);
    CHECK_INT(d.reset_unix_s, (T0 + 1440 * S + S - 1) / S);
    ps_limiter_admit(l, "k", 1, 100, 2, T0, &d);
    ps_limiter_admit(l, "k", 1, 100, 2, T0 + 1439 * S, &d);
    CHECK_INT(d.verdict, PS_LIMITED);
    ps_limiter_admit(l, "k", 1, 100, 2, T0 + 1440 * S, &d);
    CHECK_INT(d.verdict, PS_ADMITTED);
    ps_limiter_destroy(l);
}

static void test_retry_after_agrees_with_reset(void)
{
    /* For refusals at many fractional instants: Retry-After = Reset minus the
     * whole-second clock, >= 1, and a request at Reset is admitted. */
    for (int scale = 1; scale <= 120; scale *= 7) {
        ps_limiter *l = make(scale, 0, 0, 0, false);
        ps_limit_decision d;
        int64_t start = T0 + scale * 1234567LL;
        ps_limiter_admit(l, "k", 1, 1, 0, start, &d);
        CHECK_INT(d.verdict, PS_ADMITTED);
        int64_t win = (int64_t)(60e9 / scale);
        for (int64_t off = 1; off < win; off += win / 17 + 1) {
            int64_t now = start + off;
            ps_limiter_admit(l, "k", 1, 1, 0, now, &d);
            CHECK_INT(d.verdict, PS_LIMITED);
            CHECK_INT(d.retry_after_s, d.reset_unix_s - now / S);
            CHECK(d.retry_after_s >= 1);
            CHECK(d.reset_unix_s * S >= start + win);
            CHECK(d.reset_unix_s * S < start + win + S);
        }
        ps_limit_decision later;
        ps_limiter_admit(l, "k", 1, 1, 0, d.reset_unix_s * S, &later);
        CHECK_INT(later.verdict, PS_ADMITTED);
        ps_limiter_destroy(l);
    }
}

static void test_ban_after_threshold_and_its_end(void)
{
    /* scale 60: minute window 1 s, ban 600 s -> 10 s */
    ps_limiter *l = make(60, 3, 600, 0, false);
    ps_limit_decision d;
    for (int i = 0; i < 2; i++)
        ps_limiter_admit(l, "k", 1, 2, 0, T0, &d);
    for (int i = 0; i < 3; i++) { /* three refusals are tolerated */
        ps_limiter_admit(l, "k", 1, 2, 0, T0 + 100 + i, &d);
        CHECK_INT(d.verdict, PS_LIMITED);
        CHECK_STR(d.window, "minute");
    }
    int64_t ban_at = T0 + 200000000LL;
    ps_limiter_admit(l, "k", 1, 2, 0, ban_at, &d); /* the fourth starts the ban */
    CHECK_INT(d.verdict, PS_BANNED);
    CHECK_STR(d.window, "ban");
    CHECK_INT(d.limit, 2);
    CHECK_INT(d.remaining, 0);
    int64_t ban_reset = (ban_at + 10 * S + S - 1) / S;
    CHECK_INT(d.reset_unix_s, ban_reset);
    CHECK_INT(d.retry_after_s, ban_reset - ban_at / S);
    /* the minute window has long ended, but the ban holds */
    int64_t now = T0 + 5 * S;
    ps_limiter_admit(l, "k", 1, 2, 0, now, &d);
    CHECK_INT(d.verdict, PS_BANNED);
    CHECK_INT(d.reset_unix_s, ban_reset);
    CHECK_INT(d.retry_after_s, ban_reset - now / S);
    ps_limiter_peek(l, "k", 1, 2, 0, now, &d);
    CHECK_INT(d.verdict, PS_BANNED);
    /* other identities are not banned */
    ps_limiter_admit(l, "other", 5, 2, 0, now, &d);
    CHECK_INT(d.verdict, PS_ADMITTED);
    /* at the ban's end requests are admitted again, with fresh windows */
    ps_limiter_admit(l, "k", 1, 2, 0, ban_at + 10 * S, &d);
    CHECK_INT(d.verdict, PS_ADMITTED);
    CHECK_INT(d.remaining, 1);
    ps_limiter_destroy(l);

    /* threshold 0: never banned however long the key keeps sending */
    l = make(60, 0, 600, 0, false);
    for (int i = 0; i < 500; i++)
        ps_limiter_admit(l, "k", 1, 2, 0, T0 + i, &d);
    CHECK_INT(d.verdict, PS_LIMITED);
    ps_limiter_destroy(l);
}

static void test_peek_does_not_count(void)
{
    ps_limiter *l = make(1, 0, 0, 0, false);
    ps_limit_decision d;
    ps_limiter_peek(l, "k", 1, 5, 0, T0, &d);
    CHECK_INT(d.verdict, PS_ADMITTED);
    CHECK_INT(d.remaining, 5);
    CHECK_INT(ps_limiter_tracked(l), 0);
    ps_limiter_admit(l, "k", 1, 5, 0, T0, &d);
    ps_limiter_peek(l, "k", 1, 5, 0, T0, &d);
    ps_limiter_peek(l, "k", 1, 5, 0, T0, &d);
    CHECK_INT(d.remaining, 4);
    ps_limiter_admit(l, "k", 1, 5, 0, T0, &d);
    CHECK_INT(d.remaining, 3);
    ps_limiter_destroy(l);
}

static void test_reclamation(void)
{
    ps_limiter *l = make(86400, 0, 0, 0, false); /* day window = 1 s */
    ps_limit_decision d;
    char id[32];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(id, sizeof id, "old-%d", i);
        ps_limiter_admit(l, id, (size_t)n, 60, 1000, T0, &d);
    }
    CHECK_INT(ps_limiter_tracked(l), 1000);
    CHECK_INT(ps_limiter_reclaim(l, T0 + S - 1), 0); /* the day windows are still running */
    /* lazily: new identities after the windows ended push the old ones out */
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(id, sizeof id, "new-%d", i);
        ps_limiter_admit(l, id, (size_t)n, 60, 1000, T0 + 2 * S, &d);
    }
    size_t after_lazy = ps_limiter_tracked(l);
    fprintf(stderr, "tracked after lazy reclamation: %zu\n", after_lazy);
    CHECK(after_lazy < 1100);
    CHECK(after_lazy >= 1000);
    /* a full sweep once every window has ended */
    size_t gone = ps_limiter_reclaim(l, T0 + 4 * S);
    CHECK_INT(gone, after_lazy);
    CHECK_INT(ps_limiter_tracked(l), 0);
    ps_limiter_destroy(l);

    /* the cap: the least recently seen identities are evicted */
    l = make(1, 0, 0, 640, false);
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(id, sizeof id, "id-%d", i);
        ps_limiter_admit(l, id, (size_t)n, 60, 1000, T0, &d);
        CHECK(ps_limiter_tracked(l) <= 640);
    }
    CHECK(ps_limiter_tracked(l) > 320);
    ps_limiter_destroy(l);
}

typedef struct storm {
    ps_limiter *l;
    atomic_int admitted;
    atomic_int remaining_seen[100];
    atomic_int bad;
    int64_t fixed_now;
} storm;

static void *storm_thread(void *arg)
{
    storm *s = arg;
    for (int i = 0; i < 1000; i++) {
        ps_limit_decision d;
        /* modes that refill (token bucket, sliding counter) are stormed at one
         * instant, so exactly the limit is due */
        int64_t now = s->fixed_now ? s->fixed_now : ps_clock_wall_ns();
        ps_limiter_admit(s->l, "shared-key", 10, 100, 0, now, &d);
        if (d.remaining < 0 || d.remaining > 99) atomic_fetch_add(&s->bad, 1);
        if (d.verdict == PS_ADMITTED) {
            atomic_fetch_add(&s->admitted, 1);
            if (d.remaining >= 0 && d.remaining < 100)
                atomic_fetch_add(&s->remaining_seen[d.remaining], 1);
        } else if (d.retry_after_s < 1) {
            atomic_fetch_add(&s->bad, 1);
        }
    }
    return NULL;
}

static int run_storm(bool racy, storm *s)
{
    memset(s, 0, sizeof *s);
    s->l = make(1, 0, 0, 0, racy);
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, storm_thread, s);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    ps_limiter_destroy(s->l);
    return atomic_load(&s->admitted);
}

static void test_concurrent_admission_is_atomic(void)
{
    storm s;
    CHECK_INT(run_storm(false, &s), 100);
    CHECK_INT(atomic_load(&s.bad), 0);
    /* every Remaining value from 99 down to 0 was handed out exactly once */
    for (int i = 0; i < 100; i++)
        CHECK_INT(atomic_load(&s.remaining_seen[i]), 1);
}

static void test_concurrent_admission_is_atomic_in_every_mode(void)
{
    ALL_MODES
    {
        storm s;
        memset(&s, 0, sizeof s);
        s.l = make_mode(mode, 0);
        s.fixed_now = T0;
        pthread_t t[8];
        for (int i = 0; i < 8; i++)
            pthread_create(&t[i], NULL, storm_thread, &s);
        for (int i = 0; i < 8; i++)
            pthread_join(t[i], NULL);
        ps_limiter_destroy(s.l);
        fprintf(stderr, "%s: %d admitted of 8000 (limit 100)\n", ps_rlm_algo_name(mode),
                atomic_load(&s.admitted));
        CHECK_INT(atomic_load(&s.admitted), 100);
        CHECK_INT(atomic_load(&s.bad), 0);
        for (int i = 0; i < 100; i++)
            CHECK_INT(atomic_load(&s.remaining_seen[i]), 1);
    }
}

static void test_mode_names(void)
{
    ps_limiter_mode m;
    ps_error err;
    ALL_MODES
    {
        CHECK_INT(ps_rlm_algo_parse(ps_rlm_algo_name(mode), &m, &err), 0);
        CHECK_INT(m, mode);
    }
    CHECK_INT(ps_rlm_algo_parse("leaky", &m, &err), -1);
    CHECK(strstr(err.message, "token-bucket") != NULL);
}

static void test_fault_racy_admission_over_admits(void)
{
    int best = 0;
    for (int attempt = 0; attempt < 5 && best <= 100; attempt++) {
        storm s;
        int n = run_storm(true, &s);
        fprintf(stderr, "racy admission attempt %d: %d admitted (limit 100)\n", attempt, n);
        if (n > best) best = n;
    }
    CHECK(best > 100);
}

int main(void)
{
    RUN(test_minute_window_remaining_sequence);
    RUN(test_day_window_binds_before_minute);
    RUN(test_headers_describe_fewest_remaining);
    RUN(test_window_rollover_at_scaled_time);
    RUN(test_retry_after_agrees_with_reset);
    RUN(test_ban_after_threshold_and_its_end);
    RUN(test_peek_does_not_count);
    RUN(test_reclamation);
    RUN(test_concurrent_admission_is_atomic);
    RUN(test_fault_racy_admission_over_admits);
    RUN(test_sliding_log_sequence);
    RUN(test_sliding_counter_sequence);
    RUN(test_token_bucket_sequence);
    RUN(test_every_mode_shows_fewest_remaining);
    RUN(test_refund_frees_the_place);
    RUN(test_fault_off_by_one_admission);
    RUN(test_fault_stacked_limiters);
    RUN(test_concurrent_admission_is_atomic_in_every_mode);
    RUN(test_mode_names);
    return TEST_EXIT();
}
