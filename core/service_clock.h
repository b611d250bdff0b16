/* service_clock.h - the service's clock as the client sees it: how far it
 * is ahead of (or, negative, behind) the client's wall clock, bounded from
 * the Date header of each response (RFC 9110 6.6.1: the time the origin
 * server generated it, in whole seconds) and the moments the request was
 * sent and its response read.
 *
 * Every sample bounds the offset: the service's time lay in [Date, Date+1)
 * while the client's lay in [sent, done]. The bounds of all samples are
 * intersected, so the offset is known to a second or better (less as the
 * samples' phases in a second vary) plus the round trip.
 *
 * A Date may lag the moment it was written by up to PS_SERVICE_DATE_LAG_NS:
 * Linux's time() reads a clock up to a tick behind the precise one (6 ms
 * seen here: the reference server's Date of a request sent 2 ms into a
 * second names the second before), nginx writes the time it cached at its
 * loop's last turn, and Envoy renews its Date every 500 ms. Such a Date
 * takes the upper bound below the true offset, never the lower; renewed at
 * a fixed phase, it turns each second late exactly as a clock behind would.
 * Before the lag was allowed for, its contradiction restarted the bounds
 * from that one sample, a second wide, and a clock in step showed up to
 * half a second behind: the judge then placed a token bucket's Reset that
 * late (issue 20's false over-admission). So only a sample that
 * contradicts the bounds beyond the lag (the service's clock stepped, or
 * another clock wrote it) starts them afresh, and the three uses take the
 * bound that cannot mislead them: a time judged is read in step while the
 * lag could explain the bounds (ps_service_clock_offset_ns; a clock truly
 * 0.3 s off is then judged 0.3 s off, within every check's second of
 * rounding), a wait lasts until the service's clock has reached the time
 * by what punctual Dates show (ps_service_clock_earliest_ns), and a
 * deadline ends at the earliest the Dates allow (ps_service_clock_latest_ns). Not seen: a step back
 * of less than the lag.
 *
 * A ps_service_clock is a plain value: zero it to start. */
#ifndef PS_SERVICE_CLOCK_H
#define PS_SERVICE_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ps_service_clock {
    unsigned samples;     /* Date headers read */
    int64_t lo_ns, hi_ns; /* the offset lies in [lo, hi] (service minus client) */
    unsigned restarts;    /* samples that contradicted the earlier ones */
} ps_service_clock;

/* Adds a response's Date (Unix seconds), sent and read at the client's
 * wall-clock times sent_ns and done_ns. */
void ps_service_clock_add(ps_service_clock *sc, int64_t date_s, int64_t sent_ns, int64_t done_ns);

/* The offset to judge in: 0 while no sample came or while the bounds, the
 * upper one widened by the lag, hold 0 (in step, as far as a Date that may
 * lag can tell); else the middle of bounds that agree, or the lower bound
 * when a lagging Date crossed them. */
int64_t ps_service_clock_offset_ns(const ps_service_clock *sc);

/* Whether every offset the bounds allow, a lagging Date's too (the upper
 * bound widened by the lag), is beyond limit_ns either way. */
bool ps_service_clock_beyond(const ps_service_clock *sc, int64_t limit_ns);

/* The offset to wait by: the one judged, or the upper bound when punctual
 * Dates put the clock further behind than that (a clock truly 0.3 s behind,
 * judged in step, is still waited for; a lagging Date only lengthens the
 * wait by its lag). Not the lower bound: a few Dates leave it far below the
 * truth, and a retry sent late hides a Retry-After that ends too early. */
int64_t ps_service_clock_earliest_ns(const ps_service_clock *sc);

/* The most a Date is taken to lag the time it was written. */
#define PS_SERVICE_DATE_LAG_NS 500000000LL

/* The latest offset the Dates allow, their lag included: 0 while the
 * clock may be in step (a clock looking behind by less than a Date's lag
 * may be in step; one ahead by less than the bounds' width was always
 * taken for in step), else the upper bound widened by the lag. A deadline
 * named in the service's clock, moved into the client's by it, is then no
 * later than it truly is: what the client read before it came before it
 * in the service's time too. For a clock off, that deadline is up to the
 * lag early: fewer answers are judged, none falsely. */
int64_t ps_service_clock_latest_ns(const ps_service_clock *sc);

#endif
