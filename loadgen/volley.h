/* volley.h - --verify-limits' window-opening volley: once the window a
 * key's X-RateLimit-Reset named has ended, the thread's next requests on
 * that key go out at once, one per idle connection (up to 8), so a limiter
 * that checks its count and then writes it shows that race in an ordinary
 * run (--keys, the open model at any rate), not only under --burst.
 *
 * One per thread, owned by it (no locks). A volley's requests are counted
 * as scheduled like any other (the send rate includes them); only a key's
 * latest window is followed, and up to PS_LG_VOLLEY_QUEUE keys' volleys
 * wait at a time, sent one after another as their windows open. */
#ifndef PS_LG_VOLLEY_H
#define PS_LG_VOLLEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loadgen/response.h"

/* Concurrent requests of one volley at most; volleys waiting at most. */
#define PS_LG_VOLLEY_MAX 8
#define PS_LG_VOLLEY_QUEUE 16

typedef struct ps_lg_volley {
    int64_t *window_end_s; /* per key: the latest Reset answered, as a Unix second (0: none) */
    struct {
        int64_t at_wall_ns; /* when its key's window opens */
        size_t key;
    } queue[PS_LG_VOLLEY_QUEUE];
    int waiting;
    size_t key;     /* the running volley's key */
    int size, left; /* requests per volley (0: off); of the running one, still to send */
    int64_t sent;   /* volley requests sent */
    /* of those, sent while another request on their key was in flight
     * (the volley's concurrency, which the race needs), and the most
     * requests on one key in flight together as one was sent */
    int64_t concurrent, most_together;
    int64_t limit_seen; /* the largest X-RateLimit-Limit answered (--burst's first wave) */
} ps_lg_volley;

/* What the volleys of a run did (summed over threads; most: the largest). */
typedef struct ps_lg_volley_counts {
    int64_t sent, concurrent, most_together;
} ps_lg_volley_counts;

/* Prepares v for nkeys keys and volleys of size requests; size < 2 (one
 * connection cannot send concurrently) turns it off. */
void ps_lg_volley_init(ps_lg_volley *v, size_t nkeys, int size);
void ps_lg_volley_free(ps_lg_volley *v);
/* An answer on key arrived at wall_ns: a Reset more than a second later
 * than the key's last (a new window) queues a volley for when it passes
 * (30 ms after, as --burst waits), unless one for the key waits already or
 * the queue is full. */
void ps_lg_volley_note(ps_lg_volley *v, size_t key, const ps_lg_resp *r, int64_t wall_ns);
/* True when a volley request is due at wall_ns: *key is its key, and it is
 * counted as sent. Else false, and *wake_mono_ns (mono_ns: the same
 * instant on the monotonic clock) is lowered to when the first waiting
 * volley is due, if one waits. */
bool ps_lg_volley_take(ps_lg_volley *v, int64_t wall_ns, int64_t mono_ns, size_t *key,
                       int64_t *wake_mono_ns);
/* The volley request just taken went out with in_flight requests on its
 * key in flight, itself included. */
void ps_lg_volley_sent(ps_lg_volley *v, int64_t in_flight);
/* Notes r's X-RateLimit-Limit (every answer, volleys on or off). */
void ps_lg_volley_note_limit(ps_lg_volley *v, const ps_lg_resp *r);

/* --burst's crossing: how many of a thread's nconns connections send first,
 * once the window has opened, before every connection of every thread sends
 * at once. Released all at once into a fresh window, Limit + 1 connections
 * cross the limit with the last requests a worker still has queued, served
 * one at a time, so a check-then-count race hardly shows (61 connections on
 * a Free key missed the reference server's race 3 runs of 3; 128 caught
 * it). A first wave of Limit - C/2 (C the run's connections, shared out
 * by each thread's share) leaves the release half admitted, half refused:
 * the limit is crossed while every worker is still checking. 0 when the
 * release cannot cross the limit (C <= Limit), crosses it in the middle
 * already (C >= 2 Limit), no Limit was seen, or several keys share the
 * connections (each key's crossing is then C / keys apart). */
int ps_lg_volley_first_wave(int64_t limit, int connections, int nconns, size_t nkeys);

/* Adds v's counts into c. */
void ps_lg_volley_add(ps_lg_volley_counts *c, const ps_lg_volley *v);

#endif
