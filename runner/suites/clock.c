/* clock.c - ratelimit.service-clock: the service's clock, measured from the
 * Date of every response (core/service_clock.h). The runner judges every
 * time-based check in that clock, so a service whose clock is off is never
 * failed for a Reset that is right in its own time; the offset itself is
 * this check's finding when it is beyond CLOCK_TOLERANCE_S: a Reset written
 * in such a clock names another moment to a client whose clock is right. */
#include <inttypes.h>
#include <stdio.h>

#include "core/service_clock.h"
#include "runner/suites/suites.h"

/* "A few seconds": a clock 5 s off is judged in its own time and passes. */
#define CLOCK_TOLERANCE_S 10

void ps_suite_clock_finish(ps_conform *c)
{
    const ps_service_clock *sc = ps_conform_clock(c);
    if (!sc->samples) {
        ps_conform_not_applicable(c, PS_CK_RATELIMIT_SERVICE_CLOCK,
                                  "no response carried a Date header (RFC 9110 6.6.1): the runner "
                                  "judged times in its own clock");
        return;
    }
    if (!ps_service_clock_beyond(sc, (int64_t)CLOCK_TOLERANCE_S * 1000000000)) {
        ps_conform_pass(c, PS_CK_RATELIMIT_SERVICE_CLOCK);
        return;
    }
    double off = (double)ps_conform_clock_offset_ns(c) / 1e9;
    char exp[96];
    snprintf(exp, sizeof exp, "Date within %d s of the client's clock", CLOCK_TOLERANCE_S);
    ps_conform_fail(c, PS_CK_RATELIMIT_SERVICE_CLOCK, NULL, exp,
                    "the service's clock is %.1f s %s the client's (by the Date of %u responses: "
                    "between %+.1f and %+.1f s): its X-RateLimit-Reset, right in its own time and "
                    "judged so, names a moment %.0f s %s to clients whose clocks are right",
                    off < 0 ? -off : off, off < 0 ? "behind" : "ahead of", sc->samples,
                    (double)sc->lo_ns / 1e9, (double)(sc->hi_ns + PS_SERVICE_DATE_LAG_NS) / 1e9,
                    off < 0 ? -off : off, off < 0 ? "too early" : "too late");
}
