/* clock.h - the two clocks of the project: monotonic for measuring, wall for
 * the Unix timestamps that rate-limit headers carry. */
#ifndef PS_CLOCK_H
#define PS_CLOCK_H

#include <stdint.h>

/* Monotonic nanoseconds since an arbitrary origin; for durations only. */
int64_t ps_clock_mono_ns(void);
/* Wall-clock nanoseconds since the Unix epoch. */
int64_t ps_clock_wall_ns(void);
/* Wall-clock whole seconds since the Unix epoch. */
int64_t ps_clock_wall_s(void);
/* Sleeps for ns nanoseconds (resumes after signals). */
void ps_clock_sleep_ns(int64_t ns);

#endif
