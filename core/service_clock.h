/* service_clock.h - the service's clock as the client sees it: how far it
 * is ahead of (or, negative, behind) the client's wall clock, bounded from
 * the Date header of each response (RFC 9110 6.6.1: the time the origin
 * server generated it, in whole seconds) and the moments the request was
 * sent and its response read.
 *
 * Every sample bounds the offset: the service's time lay in [Date, Date+1)
 * while the client's lay in [sent, done]. The bounds of all samples are
 * intersected, so the offset is known to a second or better (less as the
 * samples' phases in a second vary) plus the round trip; a sample that contradicts them (the
 * service's clock stepped, or another clock wrote it) starts the bounds afresh.
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

/* The offset to judge in: 0 while no sample came or when the bounds hold
 * 0 (a clock in step within the Date's resolution), else the middle of the
 * bounds. */
int64_t ps_service_clock_offset_ns(const ps_service_clock *sc);

/* Whether every offset the bounds allow is beyond limit_ns either way. */
bool ps_service_clock_beyond(const ps_service_clock *sc, int64_t limit_ns);

#endif
