/* ratelimit_limit.h - the 429 suite (ps_suite_limit429) in phases, and the
 * one struct they share: probe (a fresh window on the limit key), burst
 * (Remaining and one more, concurrent where the transport allows), count
 * (admissions held to Remaining), exhaust (one at a time until a 429),
 * recover (wait as the 429 asked, then one request) and stored-create (no
 * create answered 429 was stored). Probe and burst repeat, at most
 * LIMIT_BURST_ATTEMPTS times, until a burst is judged within one window,
 * and while limit_race_again says so (--race-bursts).
 *
 * Each phase returns false when the suite cannot go on (the checks it
 * leaves are already recorded); the suite then ends (ratelimit.c). Internal
 * to runner/suites: the suites' interface is suites.h. */
#ifndef PS_RUNNER_RATELIMIT_LIMIT_H
#define PS_RUNNER_RATELIMIT_LIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/clock.h"
#include "runner/conform.h"
#include "runner/suites/burst.h"

/* The last requests of the limit burst, released together once the others
 * are answered: CROSSING_ADMITTED that Remaining still allows and
 * CROSSING_REFUSED beyond it. A burst released all at once ends on whichever
 * worker still has a queue, one request at a time, so a race rarely shows
 * there; two released alone at Remaining 1 meet in the limiter whenever they
 * reach two workers (the reference server's over-admission-race, 4 event
 * loops: about 2 runs of 3 direct, 3 of 6 through nginx terminating TLS).
 * Tried: 5 admitted + 5 refused caught it 5 of 5 direct but its five
 * refusals together trip a ban-after-one-refusal limiter; 5 + 1 caught it
 * 2 of 5. One refusal, so no ban is provoked. Only with --race-bursts 1
 * since issue 27: through a proxy's pool the two reached one worker (nginx
 * missed the race 6 runs of 6), so the default run hunts (below). */
#define CROSSING_ADMITTED 1
#define CROSSING_REFUSED 1
/* A race hunt (--race-bursts N above 1, 3 by default) crosses the limit in the
 * middle of its last requests instead: RACE_CROSSING as many that Remaining
 * allows and as many beyond it, released together, so every worker they
 * reach is still checking when the limit is crossed. Two alone reach two
 * workers only when a keep-alive proxy hands them connections of two (nginx
 * reuses the connections freed last, mostly one worker's: through nginx
 * terminating TLS and 100 ms each way, 1 window in 11 showed the reference
 * server's 100 us race); 6 + 6 showed it in the first window of most runs,
 * direct, through nginx, through 50 to 100 ms each way. But nginx's pool is
 * the same window after window: where its connections freed last are one
 * worker's (its upstream connections spread unevenly over the workers), a
 * run missed it in all 12 bursts. Each repeat doubles the group (6, 12, 24,
 * then RACE_CROSSING_MOST each side), so it takes more of the pool, and so
 * more workers. Its refusals may start a ban-after-one-refusal limiter's ban
 * (legal, spec 8 rule 3): the runner then waits as the 429 says, within
 * --max-wait. */
#define RACE_CROSSING 6
#define RACE_CROSSING_MOST 48
/* Beyond this many requests the limit is not exhausted (use a smaller plan). */
#define MAX_EXHAUST 5000
/* A burst is sent at most this many times, each at a fresh window: again
 * when it admitted more than Remaining said but the window may have ended
 * while it ran (a legal limiter then admits more). */
#define LIMIT_BURST_ATTEMPTS 3
/* Room for a create's body: {"name":"c<run token> limit <n>"}. */
#define LIMIT_BODY_MAX 96

/* What the limit key is exhausted with: lists, unless the run showed lists
 * uncounted and creates counted (spec 8 rule 4 leaves it open). With both
 * counted, the burst's last request is a create, written after the list
 * released with it: both operations meet the limit, so a service that
 * admits a create at Remaining 0 while it refuses lists exactly is caught,
 * and a refused create can be looked for in the list. When creates were
 * seen uncounted, none is mixed in; when their counting was not seen (the
 * ratelimit suite not run), one is, but its admission is not held against
 * Remaining (an uncounted create admitted beyond it is legal). Every create
 * names a category of its own (the run token and a number), which tells a
 * refused one apart from those admitted. */
typedef struct limit_ops {
    const char *auth;
    bool creates;       /* every request is a create */
    bool mix_create;    /* lists, the burst's last request a create */
    bool creates_count; /* creates were seen counted: one admitted beyond Remaining over-admits */
    int seq;            /* creates named so far */
} limit_ops;

/* What the request before a burst found on the limit key. */
typedef struct window_probe {
    int64_t announced; /* X-RateLimit-Remaining, -1 when not an integer */
    int64_t limit;     /* X-RateLimit-Limit, -1 when not an integer */
    int64_t reset_s;   /* the Unix second Reset names (ps_ratelimit_reset_time), 0: none */
    int64_t offset_ns; /* the service's clock ahead of the client's when probed, the
                          latest its Dates allow (ps_service_clock_latest_ns) */
    bool fresh;        /* nothing but this request counted in the window yet */
    bool reset_plan;   /* reset_s is the probe's time plus the plan's window: the
                          service's Reset named no time ahead (never a legal limiter) */
} window_probe;

/* What one burst showed. */
typedef struct burst_count {
    int64_t sent, admitted, refused, other;
    int64_t free_admitted;        /* creates admitted that may not count (not seen counted) */
    int first_429, last_admitted; /* indexes, -1 when none */
    int last_429;                 /* the 429 read last, -1 when none */
    int soonest_429;  /* the 429 naming the soonest retry (the refusal judged), -1 when none */
    bool reset_moved; /* an admitted reply named another Reset than the probe */
    int64_t retry_until_ns; /* the latest moment a 429 asked to wait for */
    bool named_wait;        /* a 429 named a time ahead (Retry-After, a Reset ahead) */
    double elapsed_s;
    int stacked_a, stacked_b; /* a reply saying more remain than another's Limit allows */
    int64_t last_done_ns;     /* when the last reply was read */
    int64_t unanswered;       /* requests sent but not answered: the service may count them */
    int64_t bad_replies;      /* of those, answered with no whole HTTP response (cut short,
                                 not HTTP, its head over the cap) */
    int64_t unopened;         /* requests never sent: their connection never opened */
} burst_count;

/* The names of the creates answered 429 on the limit key. */
typedef struct refused_creates {
    char **names;
    size_t n, cap;
} refused_creates;

/* The suite's state, shared by its phases; ps_suite_limit429 owns it. */
typedef struct limit_run {
    ps_conform *c;
    char auth[1024];
    char body[LIMIT_BODY_MAX]; /* the body of the sequential request being sent */
    limit_ops ops;
    bool concurrent;               /* the burst goes out at once (ps_burst_supported) */
    refused_creates refused_names; /* every create answered 429 */

    /* probe and burst: the last attempt */
    int attempt;
    window_probe probe;
    bool aligned;           /* the burst waited for a whole second after its probe */
    int64_t budget;         /* the admissions Remaining allowed before the burst */
    int n, got;             /* the burst's size; requests sent (exs[0..got)) */
    ps_exchange *exs;       /* the burst's exchanges */
    burst_count bc;         /* what they showed */
    bool held;              /* answered within the probed window */
    bool whole;             /* over-admitted, or reached the limit in full */
    char partial[800];      /* why not whole */
    char rolled[400];       /* why not held */
    ps_burst_stats bs;      /* the concurrent burst's transport (zero: sequential) */
    int64_t first_burst_ns; /* when the first burst was sent (monotonic), 0: none yet */

    /* exhaust */
    ps_exchange refusal; /* the first 429 (from the burst or after it) */
    bool refused;        /* one was obtained */
    int64_t sent_after;  /* requests sent one at a time after the burst */

    /* recover */
    int64_t reset_before;  /* the 429's X-RateLimit-Reset, 0: none */
    int64_t asked_s;       /* its Retry-After in seconds, -1: none */
    bool named_wait;       /* any 429 named a time ahead */
    int64_t refused_at_ns; /* the last 429 read */
} limit_run;

/* The service's Unix second at the client's wall-clock time wall_ns (its
 * clock measured from Date, conform.h): what its headers are written in. */
static inline int64_t limit_service_s(const ps_conform *c, int64_t wall_ns)
{
    return ps_conform_service_ns(c, wall_ns) / 1000000000;
}

/* The client's wall-clock time at the service's Unix second s (the
 * inverse of limit_service_s: placing requests in the service's second). */
static inline int64_t limit_client_ns(const ps_conform *c, int64_t s)
{
    return ps_clock_s_to_ns(s) - ps_conform_clock_offset_ns(c);
}

/* ratelimit.c: the operations, and the checks left when the suite stops. */
ps_client_request limit_op(ps_conform *c, limit_ops *ops, bool create, char body[LIMIT_BODY_MAX]);
/* The checks of the 429 itself when there is none to judge: not run (the
 * run is incomplete) when the suite could not go on, not applicable when
 * limit429.enforced failed (nothing else is to be judged then). */
void limit_not_run_all(ps_conform *c, bool incomplete, const char *why);

/* ratelimit_probe.c */
/* Waits until the wall clock reaches until_ns; false when that is more than
 * --max-wait away or the run is interrupted. */
bool limit_wait_until(ps_conform *c, int64_t until_ns);
/* Phase 1: a fresh window within --max-wait, the burst's budget, and the
 * wait for a whole second when the window leaves room. */
bool limit_probe_phase(limit_run *r);
/* Whether every answer up to until_ns came from the window the probe found. */
bool limit_within_probed_window(const window_probe *p, int64_t until_ns, char *why,
                                size_t why_size);

/* ratelimit_burst.c: phase 2, the burst and what it showed (r->bc, held,
 * whole); limit_burst_free drops its exchanges before another attempt. */
bool limit_burst_phase(limit_run *r);
void limit_burst_free(limit_run *r);
/* Whether the burst, judged and not over-admitting, is sent again at the
 * next window for a race to show (--race-bursts, a crossing released too
 * wide: see ratelimit_burst.c CROSSING_JUDGED_NS), the waits within
 * --max-wait. */
bool limit_race_again(limit_run *r);

/* ratelimit_phases.c: phases 3 to 5. */
void limit_count_phase(limit_run *r);
bool limit_exhaust_phase(limit_run *r);
bool limit_recover_phase(limit_run *r);

/* ratelimit_refusal.c: the 429's own checks, and phase 6. ex is the
 * refusal naming the soonest retry (burst_count.soonest_429); probe what
 * the request before the burst found: after a fresh window, ex is among
 * its first refusals, before any ban could start (spec 8 rule 3). */
void limit_check_refusal(ps_conform *c, const ps_exchange *ex, const window_probe *probe);
/* Keeps the name of ex's create when it was answered 429. */
void limit_note_refused_create(refused_creates *r, const ps_exchange *ex);
void limit_refused_creates_free(refused_creates *r);
void limit_stored_create_phase(limit_run *r);

#endif
