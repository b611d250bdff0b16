/* service_clock.c - the service's clock offset from Date headers (see service_clock.h). */
#include "core/service_clock.h"

#define NS 1000000000LL

void ps_service_clock_add(ps_service_clock *sc, int64_t date_s, int64_t sent_ns, int64_t done_ns)
{
    /* A Date may name any year (9999): held within 1970..2096 it still shows
     * as a clock far off, and date_s * NS cannot overflow. */
    if (date_s < 0) date_s = 0;
    if (date_s > 4000000000LL) date_s = 4000000000LL;
    /* service time in [date, date + 1 s) while the client's was in [sent,
     * done], when the Date was read as the response was made */
    int64_t lo = date_s * NS - done_ns, hi = (date_s + 1) * NS - sent_ns;
    /* contradicted only beyond what a lagging Date explains */
    if (sc->samples &&
        (lo > sc->hi_ns + PS_SERVICE_DATE_LAG_NS || hi + PS_SERVICE_DATE_LAG_NS < sc->lo_ns)) {
        sc->restarts++;
        sc->samples = 0;
    }
    if (!sc->samples) {
        sc->lo_ns = lo;
        sc->hi_ns = hi;
    } else {
        if (lo > sc->lo_ns) sc->lo_ns = lo;
        if (hi < sc->hi_ns) sc->hi_ns = hi;
    }
    sc->samples++;
}

int64_t ps_service_clock_offset_ns(const ps_service_clock *sc)
{
    int64_t offset = 0;
    if (!sc->samples || (sc->lo_ns <= 0 && sc->hi_ns + PS_SERVICE_DATE_LAG_NS >= 0)) {
        offset = 0; /* in step, as far as a Date that may lag can tell */
    } else if (sc->hi_ns >= sc->lo_ns) {
        offset = sc->lo_ns + (sc->hi_ns - sc->lo_ns) / 2; /* off by a constant */
    } else {
        /* a lagging Date took the upper bound below the lower, which no
         * Date's lag moves */
        offset = sc->lo_ns;
    }
    return offset;
}

int64_t ps_service_clock_earliest_ns(const ps_service_clock *sc)
{
    int64_t offset = ps_service_clock_offset_ns(sc);
    return sc->samples && sc->hi_ns < offset ? sc->hi_ns : offset;
}

int64_t ps_service_clock_latest_ns(const ps_service_clock *sc)
{
    int64_t latest = 0;
    int64_t upper = sc->hi_ns + PS_SERVICE_DATE_LAG_NS; /* a lagging Date's too */
    if (sc->samples && (sc->lo_ns > 0 || upper < 0)) latest = upper;
    return latest;
}

bool ps_service_clock_beyond(const ps_service_clock *sc, int64_t limit_ns)
{
    return sc->samples && (sc->lo_ns > limit_ns || sc->hi_ns + PS_SERVICE_DATE_LAG_NS < -limit_ns);
}
