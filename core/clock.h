/* clock.h - the two clocks of the project: monotonic for measuring, wall for
 * the Unix timestamps that rate-limit headers carry. */
#ifndef PS_CLOCK_H
#define PS_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Monotonic nanoseconds since an arbitrary origin; for durations only. */
int64_t ps_clock_mono_ns(void);
/* Wall-clock nanoseconds since the Unix epoch. */
int64_t ps_clock_wall_ns(void);
/* Wall-clock whole seconds since the Unix epoch. */
int64_t ps_clock_wall_s(void);
/* Writes wall_ns (nanoseconds since the Unix epoch, as from ps_clock_wall_ns)
 * as ISO-8601 UTC to whole seconds, "2026-11-21T05:00:00Z", into the
 * caller's out (21 bytes with the NUL are enough). Returns 0; -1 with out
 * set to "" (when size > 0) if out is too small or the time unrepresentable. */
int ps_clock_format_utc(int64_t wall_ns, char *out, size_t size);
/* Sleeps for ns nanoseconds (resumes after signals). */
void ps_clock_sleep_ns(int64_t ns);
/* Seconds a service sent (a delay or a Unix time, however huge or negative)
 * as nanoseconds: 0 below 0, at most a century's worth, so never an
 * overflow and never a wait anyone would make. */
int64_t ps_clock_s_to_ns(int64_t s);

#endif
