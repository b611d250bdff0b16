/* transport.h - the engines a load thread can run on, behind one tiny table
 * so TLS or another I/O model can be swapped in (as wrk does with its
 * sock/ssl table).
 *
 * The seam is the thread's whole event loop rather than per-call
 * connect/send/receive functions, because libcurl's multi interface owns its
 * own loop; both engines call the same worker.h functions for scheduling and
 * accounting, so measurements mean the same thing on either. */
#ifndef PS_LG_TRANSPORT_H
#define PS_LG_TRANSPORT_H

#include "loadgen/worker.h"

typedef struct ps_lg_engine_ops {
    const char *name;
    /* Runs thread t's share of the test to the end (every request it took
     * answered, failed or timed out). Returns 0, or -1 with t->err set. */
    int (*run)(ps_lg_thread *t);
} ps_lg_engine_ops;

extern const ps_lg_engine_ops ps_lg_engine_epoll;
extern const ps_lg_engine_ops ps_lg_engine_curl;

#endif
