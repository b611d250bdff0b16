/* ratelimit_probe.c - the limit suite's first phase: a request on the limit
 * key that finds a fresh window (waiting one out when it does not), placed
 * in a second so the burst after it has the window's room; and whether
 * answers read later still came from that window (ratelimit_limit.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/ratelimit_headers.h"
#include "core/service_clock.h"
#include "runner/suites/ratelimit_judge.h"
#include "runner/suites/ratelimit_limit.h"

/* Waits until the wall clock reaches until_ns; false when that is more than
 * --max-wait away or the run is interrupted. */
bool limit_wait_until(ps_conform *c, int64_t until_ns)
{
    int64_t now = ps_clock_wall_ns();
    if (until_ns - now > ps_conform_cfg(c)->max_wait_ns) return false;
    while ((now = ps_clock_wall_ns()) < until_ns) {
        if (ps_conform_interrupted) return false;
        int64_t step = until_ns - now;
        ps_clock_sleep_ns(step < 100000000 ? step : 100000000);
    }
    return true;
}

/* Waits, once the key may be used again, until the service's clock is
 * phase_ms into a second: where a window opens decides how much of it a
 * burst can use before "Reset minus a second", and where in a second a 429
 * falls decides whether a truncated delay-seconds Retry-After ends early. */
static void wait_phase(ps_conform *c, int phase_ms)
{
    int64_t start = ps_clock_wall_ns(), free_at = ps_conform_key_free_at(c, PS_KEY_LIMIT);
    if (free_at > start) start = free_at;
    int64_t at = limit_client_ns(c, limit_service_s(c, start)) + (int64_t)phase_ms * 1000000;
    if (at < start) at += 1000000000;
    if (at - start > 20000000) limit_wait_until(c, at); /* within 20 ms of it is close enough */
}

/* Phases (ms into a second) the probe is sent at. Half a second: a window
 * that leaves room waits for the next whole second before the burst, so its
 * 429s fall early in a second after the window opened late in one (a
 * Retry-After truncated like int(ceil(end) - now) then always ends before
 * the window does, and int(end - now) about half a second before), and a
 * window ending within the second still leaves the burst half of it. Just
 * after a whole second: a burst that did not fit is given the whole second. */
#define PROBE_PHASE_MS 500
#define PROBE_PHASE_EARLY_MS 2
/* The burst waits for the next whole second only when at least this much
 * of the window is left after it (a 3 s window keeps its burst's 2.5 s). */
#define ALIGN_ROOM_NS 2500000000LL

/* A burst before this probe drew a 429 and its wait was honoured
 * (ps_suite_limit429 waits out each burst's Retry-After before the next,
 * the default race hunt's repeats among them), and then every request was
 * refused again, each wait honoured too: the limit did not come back.
 * That is limit429.recovers failing, as limit_recover_phase judges it after
 * one burst; not a run left incomplete (a never-recovering key ended the
 * default run with exit 3 once the hunt became the default, issue 27). */
static void not_recovered(ps_conform *c, const ps_exchange *last)
{
    limit_not_run_all(c, true,
                      "no 429 to judge: the limit key stayed refused after a limit burst's 429 was "
                      "waited out (limit429.recovers failed)");
    ps_conform_fail(c, PS_CK_LIMIT429_RECOVERS, last,
                    "a request admitted once the 429's wait passed",
                    "a limit burst's 429 was waited out as its Retry-After asked, and then the "
                    "limit key's next request was refused with %ld 6 times in a row, each wait the "
                    "service asked for honoured: the limit did not come back",
                    last->status);
}

/* 1: a fresh window (nothing counted yet on the key), within --max-wait;
 * after_429: a burst's 429 was waited out before it. False when the suite
 * cannot go on (already reported). */
static bool probe_window(ps_conform *c, const ps_client_request *req, int phase_ms, bool after_429,
                         window_probe *p)
{
    ps_exchange ex;
    ps_rl_info rl;
    bool timed;
    for (int tries = 0;; tries++) {
        wait_phase(c, phase_ms);
        int rc =
            ps_conform_send(c, PS_CK_LIMIT429_ENFORCED, req, PS_KEY_LIMIT, PS_SEND_RETRY_429, &ex);
        if (rc != PS_SENT && after_429 && ps_conform_refused_throughout(c)) {
            not_recovered(c, &ex);
            ps_exchange_free(&ex);
            return false;
        }
        if (rc != PS_SENT) {
            ps_conform_no_response(c, PS_CK_LIMIT429_ENFORCED, rc, &ex);
            ps_conform_no_response(c, PS_CK_LIMIT429_NO_OVER_ADMISSION, rc, &ex);
            limit_not_run_all(c, true,
                              "no 429 to judge: the limit key's first request got no response");
            ps_exchange_free(&ex);
            return false;
        }
        if (ex.status == 401) {
            ps_conform_fail(c, PS_CK_LIMIT429_ENFORCED, &ex, "2xx",
                            "the limit key was refused with 401");
            ps_conform_not_applicable(c, PS_CK_LIMIT429_NO_OVER_ADMISSION,
                                      "the limit key was refused");
            limit_not_run_all(c, false, "the limit key was refused (limit429.enforced failed)");
            ps_exchange_free(&ex);
            return false;
        }
        ps_rl_read(&ex.resp_headers, limit_service_s(c, ex.done_wall_ns), &rl);
        timed = ps_ratelimit_reset_time(&rl, limit_service_s(c, ex.sent_wall_ns), &p->reset_s);
        p->fresh = rl.remaining_state == PS_RL_OK && rl.limit_state == PS_RL_OK &&
                   rl.remaining >= rl.limit - 1;
        if (p->fresh || tries == 3 || !timed) break;
        /* until the service's clock has reached the window's end (conform.h) */
        int64_t until = ps_clock_s_to_ns(p->reset_s) - ps_conform_wait_offset_ns(c) + 50000000;
        if (until < ps_clock_wall_ns() || !limit_wait_until(c, until)) break;
        ps_exchange_free(&ex);
    }
    p->announced = rl.remaining_state == PS_RL_OK ? rl.remaining : -1;
    p->limit = rl.limit_state == PS_RL_OK ? rl.limit : -1;
    /* A Reset naming no time ahead claims no window: the plan's (the spec's
     * minute or day for the figure Limit equals), from the probe on. */
    int64_t sent_s = limit_service_s(c, ex.sent_wall_ns),
            end_s = limit_service_s(c, ex.done_wall_ns);
    p->reset_plan = false;
    if (!timed || p->reset_s < sent_s - 2 || p->reset_s > end_s + 86400 + 2) {
        int64_t w = p->limit >= 0 ? ps_ratelimit_judge_window_s(c, PS_KEY_LIMIT, p->limit) : 0;
        p->reset_s = w ? sent_s + w : 0;
        p->reset_plan = w != 0;
    }
    /* the window's end in the client's clock: the service's Reset less its
     * lead, the latest lead its Dates allow (never a deadline later than
     * the service's) */
    p->offset_ns = ps_service_clock_latest_ns(ps_conform_clock(c));
    ps_exchange_free(&ex);
    return true;
}

/* Whether every answer up to until_ns came from the window the probe
 * found, whatever the limiter: true, or false with why. The window (or the
 * sliding log's oldest slot, or the bucket's missing token) ends after
 * Reset minus the second it is rounded up by, so answers read before then
 * are within it. It takes a fresh window: with more already counted, a
 * window counter's decay or a bucket's refill admits more at any moment. */
bool limit_within_probed_window(const window_probe *p, int64_t until_ns, char *why, size_t why_size)
{
    if (!p->fresh) {
        snprintf(why, why_size,
                 "the request before it found no fresh window (X-RateLimit-Remaining %" PRId64
                 " of %" PRId64
                 "): with more already counted, a window counter's decay or a bucket's "
                 "refill may admit more than Remaining said",
                 p->announced, p->limit);
        return false;
    }
    if (!p->reset_s) {
        snprintf(why, why_size,
                 "X-RateLimit-Reset named no time, so whether the window ended while the "
                 "requests ran cannot be told");
        return false;
    }
    int64_t deadline_ns = ps_clock_s_to_ns(p->reset_s - 1) - p->offset_ns;
    if (until_ns >= deadline_ns) {
        snprintf(why, why_size,
                 "the last answer came %.3f s after X-RateLimit-Reset %" PRId64
                 " minus the second it is rounded up by%s%s: the window may have ended (a "
                 "logged request left, a token came back) while the requests ran",
                 (double)(until_ns - deadline_ns) / 1e9, p->reset_s,
                 p->offset_ns ? " (in the service's clock, by its Date)" : "",
                 p->reset_plan ? " (the plan's window from the probe: its X-RateLimit-Reset "
                                 "named no time ahead)"
                               : "");
        return false;
    }
    return true;
}

bool limit_probe_phase(limit_run *r)
{
    ps_conform *c = r->c;
    ps_client_request req = limit_op(c, &r->ops, r->ops.creates, r->body);
    int phase_ms = r->attempt == 1 || r->aligned ? PROBE_PHASE_MS : PROBE_PHASE_EARLY_MS;
    if (!probe_window(c, &req, phase_ms, r->attempt > 1, &r->probe)) return false;
    const window_probe *p = &r->probe;
    /* Room left in the window after the next whole second: with enough,
     * the burst starts there (see PROBE_PHASE_MS). */
    int64_t next_s = limit_client_ns(c, limit_service_s(c, ps_clock_wall_ns()) + 1);
    r->aligned = p->fresh && p->reset_s &&
                 ps_clock_s_to_ns(p->reset_s - 1) - p->offset_ns - next_s >= ALIGN_ROOM_NS;
    if (r->aligned) limit_wait_until(c, next_s + 2000000);
    r->budget = p->announced >= 0 ? p->announced
                : ps_conform_cfg(c)->limit_plan.per_minute > 0
                    ? ps_conform_cfg(c)->limit_plan.per_minute
                    : 1000; /* the largest published minute limit */
    if (r->budget + 1 > MAX_EXHAUST) {
        ps_conform_not_run(c, PS_CK_LIMIT429_ENFORCED,
                           "%" PRId64 " requests remain on the limit key: too many to exhaust "
                           "(give --limit-key with a free or pro key)",
                           r->budget);
        ps_conform_not_run(c, PS_CK_LIMIT429_NO_OVER_ADMISSION,
                           "no burst was sent: %" PRId64 " requests remain on the limit key, "
                           "too many to exhaust",
                           r->budget);
        limit_not_run_all(c, true,
                          "no 429 to judge: the limit key was not exhausted (limit429.enforced "
                          "not run: too many requests remain)");
        return false;
    }
    return true;
}
