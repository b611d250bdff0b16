/* http_internal.h - private to the HTTP side of petstore-server: the structs
 * and calls its three files share (as libuv's src/unix/internal.h).
 *
 *   http_server.c   event loops and lifecycle: listeners, accept, the
 *                   store's completions handed back to a loop, drain, stop
 *   http_conn.c     a connection and HTTP/1.1 framing: http_parser
 *                   callbacks, the RFC 9112 rules, writing a response,
 *                   keep-alive, timeouts, lingering close
 *   http_handler.c  a request: identify, admit, route, validate, store
 *
 * The connection hands each finished request to the handler with one call,
 * ps_handle_request; a request that could not be parsed goes to
 * ps_handle_bad_request. The handler answers with ps_conn_send. Nothing
 * outside reference-server/http_*.c includes this header. */
#ifndef PS_HTTP_INTERNAL_H
#define PS_HTTP_INTERNAL_H

#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <event2/event.h>
#include <http_parser.h>

#include "core/buf.h"
#include "reference-server/http_server.h"
#include "reference-server/limiter.h"

typedef struct loop loop;
typedef struct conn conn;

enum conn_state {
    CONN_READING, /* parsing requests */
    CONN_BUSY,    /* a request is being handled (store write or delay timer); reading paused */
    CONN_CLOSING, /* the last response is being written; close when drained */
    CONN_LINGER,  /* response written, write side shut; discarding input until EOF or timeout */
};

/* What is known of the request being parsed and answered. It starts over
 * with every request in one assignment (conn_start_request); the buffers
 * that outlive a request (url, auth, body) stay in struct conn. */
typedef struct request {
    bool started;      /* its first byte was parsed */
    bool headers_done; /* method and header fields are known */
    /* header parsing: the field being read and what was seen */
    char field[32];
    size_t field_len;
    bool in_value, field_is_auth, field_is_expect, field_is_te, field_is_host, field_is_ct;
    bool expect_continue;
    int auth_count;
    bool auth_overflow; /* Authorization longer than any key */
    int host_count;
    bool host_bad;
    char te[64]; /* the Transfer-Encoding values, joined by ',' */
    size_t te_len;
    bool te_too_long;      /* longer than any list of codings we take */
    char content_type[64]; /* the Content-Type value, cut (fault content-type-exact) */
    size_t content_type_len;
    int content_type_count;
    size_t header_bytes;
    int error_status;          /* set by a parser callback that stops the parse */
    const char *error_message; /* and, when it knows more, why (static string) */
    int method;
    int64_t start_ns; /* monotonic, for the access log */
    /* admission: set once the request is counted (or, for requests the
     * limits do not count, once its headers are known) */
    bool counted;
    ps_limit_decision decision;
    /* --count-errors no: what is needed to take the admission back when the
     * answer turns out to be a 4xx (limit_id points into the keyring or at limit_ip) */
    bool refundable;
    const char *limit_id;
    size_t limit_id_len;
    char limit_ip[64];
    int64_t limit_pm, limit_pd, admitted_ns;
    /* faults creates-/errors-counted-silently: the headers show the
     * "quiet" counter (conn.quiet_id), which leaves creates or 4xx answers
     * out, while admission counts them; quiet_refundable: take this one
     * back from the quiet counter if the answer is a 4xx */
    bool quiet_refundable;
    size_t quiet_id_len;
    int64_t quiet_pm, quiet_pd;
} request;

struct conn {
    loop *lp;
    struct bufferevent *bev; /* writes; reads are rev's (http_server.c) */
    struct event *rev;       /* EV_READ | EV_PERSIST, the idle timeout as its timeout */
    bool reading;            /* rev is added */
    conn *prev, *next;
    enum conn_state state;
    bool dead;       /* the peer went away while BUSY: free when the handler finishes */
    bool out_paused; /* reading paused until the queued answers are written */
    bool keep_alive;
    char ip[INET6_ADDRSTRLEN + 4];
    /* --fault per-loop-counts: the identity the limiter counts, "loopN/" +
     * key, kept as long as the request (a refund names it again) */
    char loop_scoped_id[512 + 24]; /* keys: at most 512 bytes (core/keys_file.h) */
    char quiet_id[512 + 32];       /* "quiet/" + the counted identity (see request) */
    http_parser parser;
    /* framing check (frame_scan): the bytes http_parser consumed that are not body data */
    const char *scan_pos; /* next byte of the current input piece to check */
    bool cr_pending;      /* the last framing byte was CR: LF must follow */
    int crlf_expect;      /* a chunk's data ended: this many bytes of its CRLF still to come */
    request req;
    ps_buf url, auth, body; /* the request's target, first Authorization value, body */
    int64_t reserved, used; /* this connection's share of srv->buffered, and how much holds bytes */
    struct event *req_timer;  /* --request-timeout */
    struct evbuffer *pending; /* a response held back by --delay */
    struct event *delay_timer;
    size_t linger_bytes;
    struct event *linger_timer;
};

/* A create the store finished on its writer thread, queued for the loop. */
typedef struct completion {
    struct completion *next;
    conn *c;
    int status; /* 0: created (body is the Category), -1: not stored */
    ps_buf body;
} completion;

struct loop {
    ps_http_server *srv;
    int index;
    int fd;
    struct event_base *base;
    struct evconnlistener *listener;
    pthread_t thread;
    bool thread_started;
    struct event *wake;
    struct event *stall_timer;
    struct event *drain_timer;
    struct event *accept_retry;
    pthread_mutex_t qlock;
    completion *qhead, *qtail;
    atomic_bool stopping;
    bool draining;
    conn *conns;
    size_t nconns;
    uint64_t rng;
    ps_buf scratch;    /* a response's head is built here */
    ps_buf headers;    /* and the handler's header lines here */
    time_t date_s;     /* the second date_hdr was rendered for */
    char date_hdr[64]; /* "Date: IMF-fixdate\r\n", re-rendered once a second */
};

typedef struct recovery_entry {
    struct recovery_entry *next;
    int64_t until_ns;
    size_t len;
    char id[];
} recovery_entry;

struct ps_http_server {
    const ps_server_config *cfg;
    ps_store *store;
    ps_limiter *limiter;
    loop *loops;
    int nloops;
    int port;
    char resource[512];
    size_t resource_len;
    atomic_long connections;
    atomic_llong buffered; /* request bytes held by all connections (--max-buffered) */
    atomic_ulong seq;
    int access_fd;
    bool access_close;
    int64_t start_mono_ns;
    /* fault no-recovery: identities limited until the end of a day window */
    pthread_mutex_t recovery_lock;
    recovery_entry *recovery;
};

/* One answer. body NULL: none. */
typedef struct response {
    int status;
    const char *body;
    size_t body_len;
    ps_store_snapshot *snap; /* body is the snapshot's bytes, added by reference and released */
    const char *headers;     /* complete "Name: value\r\n" lines (Content-Type, rate limits, ...) */
    bool close;
} response;

static inline struct timeval ps_tv_from_ns(int64_t ns)
{
    struct timeval tv = {(time_t)(ns / 1000000000LL), (suseconds_t)((ns % 1000000000LL) / 1000)};
    return tv;
}

/* ---- http_server.c: a connection's reads ---- */

/* The connection's read event (rev); NULL when out of memory. */
struct event *ps_conn_read_event(conn *c);
/* Reading on (the idle timeout restarted) or off; either twice is harmless. */
void ps_conn_read_start(conn *c);
void ps_conn_read_stop(conn *c);

/* ---- http_conn.c ---- */

/* New bytes in the connection's input buffer. */
void ps_conn_on_input(conn *c);
/* The end of the input (BEV_EVENT_EOF), an error or a timeout (with
 * BEV_EVENT_READING or _WRITING, as a bufferevent reports them). */
void ps_conn_on_event(conn *c, short what);

/* Takes an accepted socket into lp (the caller has counted it). */
void ps_conn_open(loop *lp, evutil_socket_t fd, const struct sockaddr *sa);
/* Closes and frees; a draining loop exits with its last connection. */
void ps_conn_free(conn *c);
/* Queues r (status line, Content-Length, Date, Connection added) and
 * decides what the connection does next. */
void ps_conn_send(conn *c, const response *r);
/* The handler keeps the request (a store write): reading pauses until
 * ps_conn_resume. */
void ps_conn_hold(conn *c);
/* After the held request was answered: parses what is buffered. */
void ps_conn_resume(conn *c);

/* ---- http_handler.c ---- */

/* A request parsed whole: answers it, now or (a create) from ps_handle_completion. */
void ps_handle_request(conn *c);
/* A request that could not be parsed or accepted as HTTP (status 400, 408,
 * 413, 414, 431, 501, 503, 505): counts it, answers, and closes. */
void ps_handle_bad_request(conn *c, int status);
/* On the loop's thread: answers the create the store finished. */
void ps_handle_completion(completion *comp);

#endif
