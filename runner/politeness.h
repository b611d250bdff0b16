/* politeness.h - the runner as a well-behaved client (spec 8 rules 2-3):
 * after a 429 on a key, nothing is sent on that key until the indicated time
 * (Retry-After, else X-RateLimit-Reset, else exponential backoff), so a run
 * never provokes the temporary ban.
 *
 * Ownership: a ps_politeness owns copies of the keys it tracks. Keys are any
 * byte strings (NULL stands for "no credential"). Times are wall-clock
 * nanoseconds since the Unix epoch (the headers carry Unix times). */
#ifndef PS_RUNNER_POLITENESS_H
#define PS_RUNNER_POLITENESS_H

#include <stdint.h>

typedef struct ps_politeness ps_politeness;

ps_politeness *ps_politeness_create(void); /* aborts on allocation failure */
void ps_politeness_destroy(ps_politeness *p);

/* Records a 429 on key at now_ns. until_ns is the end of the wait the server
 * indicated (0 when it indicated none: exponential backoff 1 s, 2 s, 4 s, ...
 * capped at 64 s, counted in consecutive 429s). Returns the resulting time
 * before which nothing may be sent on key. */
int64_t ps_politeness_note_429(ps_politeness *p, const char *key, int64_t now_ns, int64_t until_ns);
/* Records an answer that was not a 429: the backoff count starts again. */
void ps_politeness_note_ok(ps_politeness *p, const char *key);
/* The wall time before which nothing may be sent on key, or 0 when free. */
int64_t ps_politeness_blocked_until(const ps_politeness *p, const char *key);

#endif
