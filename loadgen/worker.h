/* worker.h - what every load thread does whatever its engine: picks the
 * next request (closed model: whenever a connection is free; open model:
 * when the schedule says it is due), honours Retry-After per key, and
 * accounts every request it took as answered, failed or timed out.
 *
 * Engines (transport.h) own the sockets and the event loop and call in here;
 * nothing here blocks or locks. The ps_lg_shared part is built before the
 * threads start and only read while they run (except the burst fields,
 * which are atomics and a barrier). */
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
#include "loadgen/respparse.h"
#include "loadgen/schedule.h"
#include "loadgen/stats.h"

typedef struct ps_lg_bytes {
    char *data;
    size_t len;
} ps_lg_bytes;

typedef struct ps_lg_shared {
    const ps_lg_config *cfg;
    /* Pre-rendered requests, per key: [0] the list, [1 + i] create body i. */
    ps_lg_bytes *reqs;
    size_t per_key;            /* 1 + number of create bodies */
    char **create_bodies;      /* for engines that build requests themselves (curl) */
    size_t nbodies;
    char *list_url;            /* base_url + "/categories" */
    struct sockaddr_storage addr;
    socklen_t addrlen;
    int64_t start_mono_ns, start_wall_ns;
    size_t *shared_keys;       /* keys without their own rate */
    size_t nshared;
    /* --burst */
    pthread_barrier_t barrier;
    _Atomic int64_t burst_reset_s;  /* latest X-RateLimit-Reset seen while warming up */
    _Atomic int stop;               /* SIGINT: wind down */
} ps_lg_shared;

typedef struct ps_lg_stream {
    ps_lg_rate rate;
    int64_t key;     /* index, or -1: cycles through the shared keys */
    int64_t k;       /* index of its next request */
    int64_t due;     /* ns after begin_ns that request k is due */
} ps_lg_stream;

/* One request taken from the schedule; lives in its connection. */
typedef struct ps_lg_req {
    size_t key;
    ps_lg_op op;
    size_t body;          /* create body index */
    int64_t due_ns;       /* when it should have been sent (open) or was sent (closed) */
    int64_t sent_ns;
    const ps_lg_bytes *bytes;
} ps_lg_req;

typedef struct ps_lg_thread {
    int id;
    int nconns;
    const ps_lg_shared *sh;
    ps_lg_stats stats;
    ps_lg_limits limits;
    bool open;
    ps_lg_stream *heap;    /* open model: streams, min-heap by due */
    size_t nheap;
    int64_t begin_ns, end_ns; /* monotonic; end INT64_MAX when --requests bounds the run */
    int64_t finished_ns;      /* when the thread's last request was settled */
    int64_t quota;            /* requests this thread schedules at most, 0 = no bound */
    uint64_t mix_k, body_k;
    size_t rr;                /* round-robin cursor over keys */
    int64_t *blocked_until;   /* per key, monotonic ns (Retry-After) */
    /* Engines keep these (ps_lg_conn_up/down, ps_lg_connect_failed): how
     * many connections are established, and whether the latest connection
     * attempt failed. Both zero-connection and failed: the target is
     * unreachable from this thread right now. */
    int conns_up;
    bool last_connect_failed;
    int rc;
    ps_error err;
    char first_failure[200]; /* what went wrong first, for the summary ("" = nothing) */
} ps_lg_thread;

typedef enum ps_lg_take_result {
    PS_LG_TAKE_EXHAUSTED = -1, /* the thread's share of the run is fully scheduled */
    PS_LG_TAKE_NONE = 0,       /* nothing due now; *wake_ns says when to ask again */
    PS_LG_TAKE_READY = 1,
} ps_lg_take_result;

int ps_lg_thread_init(ps_lg_thread *t, int id, int nconns, const ps_lg_shared *sh, ps_error *err);
void ps_lg_thread_free(ps_lg_thread *t);
/* Starts the schedule at begin_ns (monotonic): the run ends at begin + duration. */
void ps_lg_thread_begin(ps_lg_thread *t, int64_t begin_ns);

/* Takes the next request due at now. */
ps_lg_take_result ps_lg_take(ps_lg_thread *t, int64_t now, ps_lg_req *r, int64_t *wake_ns);
/* Takes a request outside the schedule (burst warm-up and release). */
void ps_lg_take_extra(ps_lg_thread *t, int64_t now, ps_lg_req *r);
/* Open model: requests due more than the timeout ago and still not sent
 * are counted as timed out (every connection busy), or as failed for want
 * of a connection when the target is unreachable (ps_lg_unreachable). */
void ps_lg_expire(ps_lg_thread *t, int64_t now);
/* A response arrived for r at now. */
void ps_lg_answered(ps_lg_thread *t, const ps_lg_req *r, int64_t now, const ps_lg_resp *resp);
/* r got no response. */
void ps_lg_failed(ps_lg_thread *t, const ps_lg_req *r, ps_lg_failure why);
/* True once every request of the thread's share has been taken (or
 * expired): only the ones in flight remain. */
bool ps_lg_scheduling_done(ps_lg_thread *t, int64_t now);
/* A connection became usable / was closed. */
void ps_lg_conn_up(ps_lg_thread *t);
void ps_lg_conn_down(ps_lg_thread *t);
/* A connection attempt failed (counted in connect_failures). With no
 * connection established, the closed model takes its next request and
 * fails it as a connect failure: a request that could get no connection
 * is failed, and a --requests run against a dead target still ends. */
void ps_lg_connect_failed(ps_lg_thread *t, int64_t now);
/* No connection established and the latest attempt failed. */
bool ps_lg_unreachable(const ps_lg_thread *t);
/* Keeps the first failure's description for the summary. */
void ps_lg_note_failure(ps_lg_thread *t, const char *what);
/* Seconds-since-start bookkeeping for the interval ring. */
void ps_lg_tick(ps_lg_thread *t, int64_t now);
/* True when the run should stop taking requests (SIGINT). */
bool ps_lg_stopping(const ps_lg_thread *t);

#endif
