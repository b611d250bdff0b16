/* worker.h - what every load thread does whatever its engine: picks the
 * next request (closed model: whenever a connection is free; open model:
 * when the schedule says it is due), honours Retry-After per key, accounts
 * every request it took as answered, failed or timed out, and runs the
 * --burst choreography.
 *
 * Engines (transport.h) own the sockets and the event loop and call in here;
 * they change a thread's state only through these functions. Nothing here
 * blocks or locks, except ps_lg_burst and ps_lg_burst_abstain, which wait at
 * the burst's barrier.
 *
 * What the threads hold in common comes in two parts: ps_lg_shared, built
 * before the threads start and only read while they run (threads hold it
 * const); and ps_lg_sync, the little they change while running, each field
 * synchronised as its comment says. run.c owns both: it creates them before
 * the threads start and frees them after join. */
#ifndef PS_LG_WORKER_H
#define PS_LG_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/error.h"
#include "loadgen/config.h"
#include "loadgen/limits.h"
#include "loadgen/live_metrics.h"
#include "loadgen/response.h"
#include "loadgen/schedule.h"
#include "loadgen/stats.h"
#include "loadgen/volley.h"

typedef struct ps_lg_bytes {
    char *data;
    size_t len;
} ps_lg_bytes;

typedef struct ps_lg_shared {
    const ps_lg_config *cfg;
    /* Pre-rendered requests, per key: [0] the list, [1 + i] create body i. */
    ps_lg_bytes *reqs;
    size_t per_key;       /* 1 + number of create bodies */
    char **create_bodies; /* for engines that build requests themselves (curl) */
    size_t nbodies;
    char *list_url; /* base_url + "/categories" */
    struct sockaddr_storage addr;
    socklen_t addrlen;
    int64_t start_mono_ns, start_wall_ns;
    /* --start-at (monotonic): where every thread's schedule starts, even if
     * that is past; 0 = each thread starts its own when it begins. */
    int64_t schedule_origin_ns;
    size_t *shared_keys; /* keys without their own rate */
    size_t nshared;
    /* https on the epoll engine: the run's TLS context (tls_target.h),
     * used by every thread at once; NULL otherwise. */
    struct ps_tls_client *tls;
} ps_lg_shared;

/* The threads' common state that changes while they run. */
typedef struct ps_lg_sync {
    /* --burst: every thread waits here three times (warm, first wave, release); all
     * cfg->threads threads must reach it, or the others wait forever. */
    pthread_barrier_t barrier;
    /* --burst: the latest X-RateLimit-Reset (epoch s) any thread saw while
     * warming up; raised by compare-and-swap before the first barrier wait,
     * read after it. */
    _Atomic int64_t burst_reset_s;
    /* Set by the SIGINT/SIGTERM handler (or a failed thread start): wind
     * down. Relaxed: it orders nothing, threads only poll it. */
    _Atomic int stop;
    /* Monotonic ns at which the first thread began its schedule (0: none
     * yet; with --burst that is after the wait for a window reset). Set once
     * by compare-and-swap, read by the progress line. */
    _Atomic int64_t begun_ns;
} ps_lg_sync;

typedef struct ps_lg_stream {
    ps_lg_rate rate;
    int64_t key; /* index, or -1: cycles through the shared keys */
    int64_t k;   /* index of its next request */
    int64_t due; /* ns after begin_ns that request k is due */
    double pos;  /* --arrivals poisson: request k's position on the rate's integral */
    uint64_t rng;
} ps_lg_stream;

/* One request taken from the schedule; lives in its connection. */
typedef struct ps_lg_req {
    size_t key;
    ps_lg_op op;
    size_t body;    /* create body index */
    int64_t due_ns; /* when it should have been sent (open) or was sent (closed) */
    int64_t sent_ns;
    bool warm; /* due within --warmup: sent, never counted */
    const ps_lg_bytes *bytes;
} ps_lg_req;

typedef struct ps_lg_thread {
    int id;
    int nconns;
    const ps_lg_shared *sh;
    ps_lg_sync *sync;
    ps_lg_stats stats;
    ps_lg_limits limits;
    bool open;
    ps_lg_stream *heap; /* open model: streams, min-heap by due */
    size_t nheap;
    int64_t begin_ns, end_ns; /* monotonic; end INT64_MAX when --requests bounds the run */
    int64_t finished_ns;      /* when the thread's last request was settled */
    int64_t quota;            /* requests this thread schedules at most, 0 = no bound */
    uint64_t mix_k, body_k;
    size_t rr;              /* round-robin cursor over keys */
    int64_t *blocked_until; /* per key, monotonic ns (Retry-After) */
    int64_t latest_reset_s; /* the latest X-RateLimit-Reset answered (for --burst) */
    ps_lg_volley volley;    /* --verify-limits: concurrent requests as a key's window opens */
    int64_t *key_in_flight; /* per key: requests taken, not yet answered or failed */
    /* Generator health: requests taken and not yet settled; when the last
     * moment every connection was busy ended (a request due before it
     * waited for a connection); the latest send; where --warmup ends. */
    int64_t in_flight, full_until_ns, last_sent_ns, measure_from_ns;
    /* The thread's CPU time and run-queue wait (ns, /proc/thread-self/
     * schedstat; wait -1 when unknown), filled by run.c after it ran. */
    int64_t cpu_ns, runq_wait_ns, ran_ns;
    /* Kept through ps_lg_conn_up/down, ps_lg_connect_failed and
     * ps_lg_transfer_*: how many connections are established, and whether
     * the latest connection attempt failed. Both zero-connection and
     * failed: the target is unreachable from this thread right now. */
    int conns_up;
    bool last_connect_failed;
    /* --metrics-listen: this thread's live counters (NULL: none), set by
     * run.c before the thread starts. */
    ps_lg_live_rec *live;
    int rc;
    ps_error err;
    char first_failure[200]; /* what went wrong first, for the summary ("" = nothing) */
} ps_lg_thread;

typedef enum ps_lg_take_result {
    PS_LG_TAKE_EXHAUSTED = -1, /* the thread's share of the run is fully scheduled */
    PS_LG_TAKE_NONE = 0,       /* nothing due now; *wake_ns says when to ask again */
    PS_LG_TAKE_READY = 1,
} ps_lg_take_result;

/* Prepares thread t's share of the run (its connections, stats, schedule).
 * sh and sync are borrowed and must outlive t. Returns 0, or -1 with err. */
int ps_lg_thread_init(ps_lg_thread *t, int id, int nconns, const ps_lg_shared *sh, ps_lg_sync *sync,
                      ps_error *err);
void ps_lg_thread_free(ps_lg_thread *t);
/* Starts the schedule at begin_ns (monotonic): the run ends at begin + duration. */
void ps_lg_thread_begin(ps_lg_thread *t, int64_t begin_ns);

/* Takes the next request due at now. */
ps_lg_take_result ps_lg_take(ps_lg_thread *t, int64_t now, ps_lg_req *r, int64_t *wake_ns);
/* Open model: requests due more than the timeout ago and still not sent
 * are counted as timed out (every connection busy), or as failed for want
 * of a connection when the target is unreachable (ps_lg_unreachable). */
void ps_lg_expire_overdue(ps_lg_thread *t, int64_t now);
/* A response arrived for r at now. */
void ps_lg_answered(ps_lg_thread *t, const ps_lg_req *r, int64_t now, const ps_lg_resp *resp);
/* r got no response. */
void ps_lg_failed(ps_lg_thread *t, const ps_lg_req *r, ps_lg_failure why);
/* True once every request of the thread's share has been taken (or
 * expired): only the ones in flight remain. Drops the open model's
 * streams that have ended on the way. */
bool ps_lg_scheduling_done(ps_lg_thread *t, int64_t now);

/* Engines that see their connections (epoll): one became usable / was closed. */
void ps_lg_conn_up(ps_lg_thread *t);
void ps_lg_conn_down(ps_lg_thread *t);
/* A connection attempt failed (refused, closed before use, timed out):
 * counted in connect_failures. Takes no request. */
void ps_lg_connect_failed(ps_lg_thread *t);
/* Closed model with no connection up: takes the next request and fails it
 * as a connect failure, so a request that could get no connection is
 * failed and a --requests run against a dead target still ends. Does
 * nothing in the open model (ps_lg_expire_overdue fails those) or while a
 * connection is up. */
void ps_lg_fail_next_if_unconnected(ps_lg_thread *t, int64_t now);
/* Engines whose library hides its connections (libcurl): the latest
 * transfer's outcome stands for the thread's reachability. Connected: as if
 * one connection were up. Connect failed: counted in connect_failures, and
 * as if none were up; the transfer's request is still the caller's to fail. */
void ps_lg_transfer_connected(ps_lg_thread *t);
void ps_lg_transfer_connect_failed(ps_lg_thread *t);
/* No connection established and the latest attempt failed. */
bool ps_lg_unreachable(const ps_lg_thread *t);

/* Keeps the first failure's description for the summary. */
void ps_lg_note_failure(ps_lg_thread *t, const char *what);
/* Moves the thread's interval ring on to now's second, once per second. */
void ps_lg_tick(ps_lg_thread *t, int64_t now);
/* True when the run should stop taking requests (SIGINT). */
bool ps_lg_stopping(const ps_lg_thread *t);

/* What the --burst choreography asks of an engine's event loop (`loop` is
 * the engine's own state, passed back as is). */
typedef struct ps_lg_burst_ops {
    /* Turns the loop until no request is in flight and no connection is
     * being opened, or until deadline_ns (monotonic). */
    void (*settle)(void *loop, int64_t deadline_ns);
    /* Turns the loop until until_ns (monotonic) without sending, so warm
     * connections stay healthy. */
    void (*turn_until)(void *loop, int64_t until_ns);
    /* Starts opening every closed connection. */
    void (*reopen_closed)(void *loop);
    bool (*has_idle_conn)(void *loop);
    /* Sends r on an idle connection (one must be idle). */
    void (*send)(void *loop, const ps_lg_req *r, int64_t now);
} ps_lg_burst_ops;

/* --burst, in place of ps_lg_thread_begin: uses every connection once (so
 * all are warm and the thread has seen a window's X-RateLimit-Reset), waits
 * with every other thread until 30 ms past the latest reset any of them
 * saw, then begins the schedule and sends on every connection at once. The
 * warm-up and release requests are lists, counted like any other. */
void ps_lg_burst(ps_lg_thread *t, const ps_lg_burst_ops *ops, void *loop);
/* With --burst, a thread whose engine could not start passes the burst's
 * barriers without sending, so the other threads do not wait forever. */
void ps_lg_burst_abstain(ps_lg_thread *t);

#endif
