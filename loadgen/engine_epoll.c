/* engine_epoll.c - the fast engine for http:// and https:// keep-alive
 * targets: one epoll loop per thread, non-blocking sockets, pre-rendered
 * request bytes and core's HTTP reader (core/http_reply.h, streaming) keeping only status and
 * rate-limit headers. Nothing is allocated per request, and a request costs one send, one recv and
 * a share of one epoll_wait. Over https the same loop runs OpenSSL on its sockets
 * (core/tls_client.h): a handshake per connection, resumed from the thread's latest ticket, then
 * one SSL_write and one SSL_read (read-ahead: one recv) per request, as wrk does. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/tls_client.h"
#include "core/tls_mismatch.h"
#include "loadgen/transport.h"

#define RECONNECT_DELAY_NS INT64_C(100000000) /* after a failed connect */
#define TIMEOUT_SCAN_NS INT64_C(10000000)
#define MAX_WAIT_NS INT64_C(100000000) /* keeps the interval ring moving */

/* HANDSHAKING: TCP is up, TLS is not yet (https only). */
typedef enum conn_state { C_CLOSED, C_CONNECTING, C_HANDSHAKING, C_IDLE, C_BUSY } conn_state;

typedef struct conn {
    int fd;
    SSL *ssl; /* https: the connection's TLS, NULL for http */
    conn_state state;
    bool write_wants_read; /* TLS: SSL_write must wait for the socket to be readable */
    size_t woff;
    int64_t retry_at;
    bool want_out;  /* EPOLLOUT registered */
    int64_t served; /* responses on the current socket */
    ps_lg_req req;
    ps_lg_reader reader; /* reused for every response of the connection */
} conn;

typedef struct loop {
    ps_lg_thread *t;
    int ep;
    conn *c;
    int n;
    /* Idle connections, least recently used first: a ring of L->n slots
     * from idle_head. Taking the oldest spreads requests over every
     * connection, so a deployment balanced per connection sees all its
     * instances; a stack would put a slow open-model schedule on one. */
    int *idle;
    int idle_head, nidle;
    int busy;
    int64_t next_scan;
    ps_tls_client *tls;   /* https: the run's TLS context; NULL for http */
    ps_tls_resume resume; /* https: the thread's latest session ticket */
    char why[256];        /* the latest TLS failure, for ps_lg_note_failure */
    char rbuf[65536];
} loop;

/* conn_send / conn_recv results besides a byte count (0: end of stream). */
#define IO_AGAIN -1      /* the socket is full / empty: wait for epoll */
#define IO_AGAIN_READ -2 /* TLS: a write must wait for the socket to be readable */
#define IO_FAILED -3     /* errno, or L->why over TLS, says why */

/* One send, or SSL_write over https. */
static ssize_t conn_send(loop *L, conn *c, const char *p, size_t n)
{
    if (!c->ssl) {
        for (;;) {
            ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
            if (w >= 0) return w;
            if (errno == EINTR) continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? IO_AGAIN : IO_FAILED;
        }
    }
    errno = 0;
    int w = SSL_write(c->ssl, p, (int)n);
    switch (ps_tls_client_io(c->ssl, w, L->why, sizeof L->why)) {
    case PS_TLS_IO_OK:
        return w;
    case PS_TLS_IO_WANT_WRITE:
        return IO_AGAIN;
    case PS_TLS_IO_WANT_READ:
        return IO_AGAIN_READ;
    case PS_TLS_IO_EOF:
        snprintf(L->why, sizeof L->why, "TLS: the server closed the connection");
        return IO_FAILED;
    default:
        return IO_FAILED;
    }
}

/* One recv, or SSL_read over https: bytes, 0 at the end of the stream,
 * IO_AGAIN or IO_FAILED. */
static ssize_t conn_recv(loop *L, conn *c)
{
    if (!c->ssl) {
        for (;;) {
            ssize_t n = recv(c->fd, L->rbuf, sizeof L->rbuf, 0);
            if (n >= 0) return n;
            if (errno == EINTR) continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? IO_AGAIN : IO_FAILED;
        }
    }
    errno = 0;
    int n = SSL_read(c->ssl, L->rbuf, (int)sizeof L->rbuf);
    switch (ps_tls_client_io(c->ssl, n, L->why, sizeof L->why)) {
    case PS_TLS_IO_OK:
        return n;
    case PS_TLS_IO_EOF:
        return 0;
    case PS_TLS_IO_WANT_READ:
    case PS_TLS_IO_WANT_WRITE: /* a renegotiation's write: the next event retries */
        return IO_AGAIN;
    default:
        return IO_FAILED;
    }
}

/* A connection attempt failed: the worker counts it and, in the closed
 * model with no connection up, fails the next request for want of one. */
static void on_connect_failure(loop *L, int64_t now)
{
    ps_lg_connect_failed(L->t);
    ps_lg_fail_next_if_unconnected(L->t, now);
}

static void idle_push(loop *L, int i)
{
    L->idle[(L->idle_head + L->nidle++) % L->n] = i;
}

/* The connection idle longest. */
static int idle_pop(loop *L)
{
    int i = L->idle[L->idle_head];
    L->idle_head = (L->idle_head + 1) % L->n;
    L->nidle--;
    return i;
}

/* Takes i out of the ring, keeping the others' order (rare: an idle
 * connection closed by the server). */
static void idle_remove(loop *L, int i)
{
    int k = 0;
    while (k < L->nidle && L->idle[(L->idle_head + k) % L->n] != i)
        k++;
    if (k == L->nidle) return;
    for (; k + 1 < L->nidle; k++)
        L->idle[(L->idle_head + k) % L->n] = L->idle[(L->idle_head + k + 1) % L->n];
    L->nidle--;
}

static void conn_close(loop *L, int i)
{
    conn *c = &L->c[i];
    if (c->ssl) {
        SSL_free(c->ssl);
        c->ssl = NULL;
    }
    if (c->fd >= 0) {
        epoll_ctl(L->ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    if (c->state == C_IDLE) idle_remove(L, i);
    if (c->state == C_BUSY) L->busy--;
    if (c->state == C_IDLE || c->state == C_BUSY) ps_lg_conn_down(L->t);
    c->fd = -1;
    c->state = C_CLOSED;
}

/* A freshly established connection joins the idle ones. */
static void conn_established(loop *L, int i)
{
    ps_lg_conn_up(L->t);
    L->c[i].state = C_IDLE;
    idle_push(L, i);
}

static void want_out(loop *L, int i, bool on)
{
    conn *c = &L->c[i];
    if (c->want_out == on) return;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (on ? EPOLLOUT : 0u),
                             .data.u32 = (uint32_t)i};
    epoll_ctl(L->ep, EPOLL_CTL_MOD, c->fd, &ev);
    c->want_out = on;
}

/* A connection attempt failed at TCP or TLS: closed, retried after a pause. */
static void conn_attempt_failed(loop *L, int i, const char *why)
{
    ps_lg_note_failure(L->t, why);
    conn_close(L, i);
    int64_t now = ps_clock_mono_ns();
    L->c[i].retry_at = now + RECONNECT_DELAY_NS;
    on_connect_failure(L, now);
}

/* Moves the TLS handshake on as far as the socket allows; the connection
 * joins the idle ones when it is done. */
static void tls_handshake(loop *L, int i)
{
    conn *c = &L->c[i];
    errno = 0;
    switch (ps_tls_client_io(c->ssl, SSL_do_handshake(c->ssl), L->why, sizeof L->why)) {
    case PS_TLS_IO_OK:
        want_out(L, i, false);
        conn_established(L, i);
        return;
    case PS_TLS_IO_WANT_READ:
        want_out(L, i, false);
        return;
    case PS_TLS_IO_WANT_WRITE:
        want_out(L, i, true);
        return;
    case PS_TLS_IO_EOF:
        snprintf(L->why, sizeof L->why, "TLS: the server closed the connection in the handshake");
        break;
    case PS_TLS_IO_ERROR:
        break;
    }
    conn_attempt_failed(L, i, L->why);
}

/* TCP is up: over http the connection is ready, over https its handshake starts. */
static void conn_connected(loop *L, int i)
{
    conn *c = &L->c[i];
    if (!L->tls) {
        want_out(L, i, false);
        conn_established(L, i);
        return;
    }
    ps_error err;
    c->ssl = ps_tls_client_ssl(L->tls, c->fd, L->t->sh->cfg->host, &L->resume, &err);
    if (!c->ssl) {
        conn_attempt_failed(L, i, err.message);
        return;
    }
    c->state = C_HANDSHAKING;
    tls_handshake(L, i);
}

static void conn_open(loop *L, int i, int64_t now)
{
    conn *c = &L->c[i];
    const ps_lg_shared *sh = L->t->sh;
    c->retry_at = now + RECONNECT_DELAY_NS;
    int fd = socket(sh->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        /* the generator's own limit (descriptors): the summary says so */
        char why[96];
        snprintf(why, sizeof why, "cannot open a socket: %s", strerror(errno));
        ps_lg_note_failure(L->t, why);
        on_connect_failure(L, now);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int rc = connect(fd, (const struct sockaddr *)&sh->addr, sh->addrlen);
    if (rc != 0 && errno != EINPROGRESS) {
        close(fd);
        on_connect_failure(L, now);
        return;
    }
    /* Level-triggered, and EPOLLOUT only while it is needed (connecting, a
     * partial send): with it always on, every ACK that frees send space
     * would wake the loop for nothing. */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.u32 = (uint32_t)i};
    if (epoll_ctl(L->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
        close(fd);
        on_connect_failure(L, now);
        return;
    }
    c->fd = fd;
    c->served = 0;
    c->want_out = true;
    c->write_wants_read = false;
    c->state = C_CONNECTING;
    if (rc == 0) conn_connected(L, i);
}

static void fail_request_and_close(loop *L, int i, ps_lg_failure why)
{
    ps_lg_failed(L->t, &L->c[i].req, why);
    conn_close(L, i);
}

/* Writes what the socket takes; the rest goes when EPOLLOUT says so. */
static void flush(loop *L, int i)
{
    conn *c = &L->c[i];
    const ps_lg_bytes *b = c->req.bytes;
    c->write_wants_read = false;
    while (c->woff < b->len) {
        ssize_t w = conn_send(L, c, b->data + c->woff, b->len - c->woff);
        if (w > 0) {
            c->woff += (size_t)w;
        } else if (w == IO_AGAIN) {
            want_out(L, i, true);
            return;
        } else if (w == IO_AGAIN_READ) {
            c->write_wants_read = true;
            want_out(L, i, false);
            return;
        } else {
            if (c->ssl) ps_lg_note_failure(L->t, L->why);
            fail_request_and_close(L, i, PS_LG_FAIL_READ);
            return;
        }
    }
    want_out(L, i, false);
}

static void start_request(loop *L, const ps_lg_req *r, int64_t now)
{
    int i = idle_pop(L);
    conn *c = &L->c[i];
    c->state = C_BUSY;
    L->busy++;
    c->req = *r;
    c->req.sent_ns = now;
    c->woff = 0;
    ps_lg_reader_start(&c->reader, ps_clock_wall_s());
    flush(L, i);
}

/* A whole response arrived: it is accounted, and its connection is idle
 * again or, when it cannot be reused, reopened. */
static void on_response(loop *L, int i, int64_t now)
{
    conn *c = &L->c[i];
    const ps_lg_resp *resp = &c->reader.resp;
    ps_lg_answered(L->t, &c->req, now, resp);
    c->served++;
    if (c->woff < c->req.bytes->len || !resp->keep_alive) {
        /* Answered before we finished sending, or the server closes: start afresh. */
        if (!resp->keep_alive) ps_tls_client_end_clean(c->ssl);
        conn_close(L, i);
        conn_open(L, i, now);
        return;
    }
    c->state = C_IDLE;
    L->busy--;
    idle_push(L, i);
}

static void on_readable(loop *L, int i)
{
    conn *c = &L->c[i];
    for (;;) {
        /* Over TLS an idle connection reads too: a session ticket comes
         * after the handshake, and is no answer (IO_AGAIN). */
        ssize_t n = conn_recv(L, c);
        if (n == IO_AGAIN) return;
        int64_t now = ps_clock_mono_ns();
        if (c->state != C_BUSY) {
            /* Idle: the server closed a keep-alive connection (or sent bytes
             * nobody asked for). Not a request's failure: reconnect, at once
             * if the connection had served, else after a pause (a server
             * refusing connections by closing them would make us spin). */
            bool used = c->served > 0;
            if (n == 0 && used) ps_tls_client_end_clean(c->ssl); /* a keep-alive close */
            conn_close(L, i);
            if (used) {
                conn_open(L, i, now);
            } else {
                on_connect_failure(L, now);
                c->retry_at = now + RECONNECT_DELAY_NS;
            }
            return;
        }
        ps_error perr;
        ps_lg_parse_result pr;
        if (n > 0)
            pr = ps_lg_reader_feed(&c->reader, L->rbuf, (size_t)n, &perr);
        else if (n == 0)
            pr = ps_lg_reader_eof(&c->reader, &perr);
        else
            pr = PS_LG_PARSE_ERROR;
        if (pr == PS_LG_PARSE_DONE) {
            on_response(L, i, now);
            if (n == 0 && c->state != C_CLOSED) {
                ps_tls_client_end_clean(c->ssl);
                conn_close(L, i);
                conn_open(L, i, now);
            }
            return;
        }
        if (pr == PS_LG_PARSE_ERROR) {
            if (n < 0 && c->ssl)
                ps_error_set(&perr, "%s", L->why);
            else if (n < 0)
                ps_error_set(&perr, "recv: %s", strerror(errno));
            /* A TLS record (alert 0x15, handshake 0x16, version 3.x) where an
             * HTTP status line belongs: the port speaks TLS. */
            if (n > 0 && !c->ssl && ps_tls_record_start((const unsigned char *)L->rbuf, (size_t)n))
                ps_error_set(&perr, PS_TLS_MSG_TLS_ANSWER);
            ps_lg_note_failure(L->t, perr.message);
            /* A connection that broke before its first answer is not retried
             * at once, or a server that accepts and closes would be
             * hammered with doomed requests. */
            bool fresh = c->served == 0;
            fail_request_and_close(L, i, PS_LG_FAIL_READ);
            if (fresh)
                c->retry_at = now + RECONNECT_DELAY_NS;
            else
                conn_open(L, i, now);
            return;
        }
        /* Level-triggered: the rest of the response wakes us again, so a
         * recv that did not fill the buffer needs no EAGAIN-probing twin;
         * but records TLS read ahead wake nobody: drain them. */
        if ((size_t)n < sizeof L->rbuf && !(c->ssl && SSL_has_pending(c->ssl))) return;
    }
}

static void on_event(loop *L, const struct epoll_event *ev)
{
    int i = (int)ev->data.u32;
    conn *c = &L->c[i];
    if (c->state == C_CONNECTING) {
        int soerr = 0;
        socklen_t len = sizeof soerr;
        if (!(ev->events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 || soerr != 0) {
            char what[120];
            snprintf(what, sizeof what, "connect: %s", strerror(soerr ? soerr : errno));
            conn_attempt_failed(L, i, what);
            return;
        }
        conn_connected(L, i);
        return;
    }
    if (c->state == C_HANDSHAKING) {
        tls_handshake(L, i);
        return;
    }
    if (c->state == C_BUSY && c->woff < c->req.bytes->len &&
        ((ev->events & EPOLLOUT) || (c->write_wants_read && (ev->events & EPOLLIN))))
        flush(L, i);
    if (c->state == C_CLOSED) return;
    if (ev->events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(L, i);
}

/* Every TIMEOUT_SCAN_NS: fails requests and connection attempts older than
 * --timeout, and (when `reconnect`) reopens closed connections whose pause
 * is over. */
static void check_timeouts(loop *L, int64_t now, bool reconnect)
{
    int64_t timeout = L->t->sh->cfg->timeout_ns;
    for (int i = 0; i < L->n; i++) {
        conn *c = &L->c[i];
        if (c->state == C_BUSY && now - c->req.sent_ns >= timeout) {
            ps_lg_note_failure(L->t, "no complete response within --timeout");
            fail_request_and_close(L, i, PS_LG_FAIL_TIMEOUT);
            if (reconnect) conn_open(L, i, now);
        } else if ((c->state == C_CONNECTING || c->state == C_HANDSHAKING) &&
                   now - c->retry_at >= timeout) {
            if (c->state == C_HANDSHAKING)
                ps_lg_note_failure(L->t, "TLS: no handshake within --timeout");
            conn_close(L, i);
            on_connect_failure(L, now);
        } else if (c->state == C_CLOSED && reconnect && c->retry_at <= now) {
            conn_open(L, i, now);
        }
    }
    L->next_scan = now + TIMEOUT_SCAN_NS;
}

static void wait_events(loop *L, int64_t now, int64_t until)
{
    if (until > L->next_scan) until = L->next_scan;
    if (until > now + MAX_WAIT_NS) until = now + MAX_WAIT_NS;
    int64_t d = until > now ? until - now : 0;
    struct timespec ts = {.tv_sec = d / 1000000000, .tv_nsec = d % 1000000000};
    struct epoll_event evs[256];
    int n = epoll_pwait2(L->ep, evs, 256, &ts, NULL);
    if (n < 0 && errno == ENOSYS) n = epoll_wait(L->ep, evs, 256, (int)((d + 999999) / 1000000));
    for (int k = 0; k < n; k++)
        on_event(L, &evs[k]);
}

/* The --burst choreography (ps_lg_burst) drives the loop through these. */
static void burst_settle(void *p, int64_t deadline)
{
    loop *L = p;
    for (;;) {
        int64_t now = ps_clock_mono_ns();
        ps_lg_tick(L->t, now);
        if (now >= L->next_scan) check_timeouts(L, now, false);
        int connecting = 0;
        for (int i = 0; i < L->n; i++)
            connecting += L->c[i].state == C_CONNECTING || L->c[i].state == C_HANDSHAKING;
        if ((L->busy == 0 && connecting == 0) || now >= deadline) return;
        wait_events(L, now, deadline);
    }
}

static void burst_turn_until(void *p, int64_t until)
{
    loop *L = p;
    int64_t now;
    while ((now = ps_clock_mono_ns()) < until) {
        ps_lg_tick(L->t, now);
        wait_events(L, now, until);
    }
}

static void burst_reopen_closed(void *p)
{
    loop *L = p;
    for (int i = 0; i < L->n; i++)
        if (L->c[i].state == C_CLOSED) conn_open(L, i, ps_clock_mono_ns());
}

static bool burst_has_idle_conn(void *p)
{
    const loop *L = p;
    return L->nidle > 0;
}

static void burst_send(void *p, const ps_lg_req *r, int64_t now)
{
    start_request(p, r, now);
}

static const ps_lg_burst_ops burst_ops = {burst_settle, burst_turn_until, burst_reopen_closed,
                                          burst_has_idle_conn, burst_send};

static int run(ps_lg_thread *t)
{
    int rc = -1;
    loop *L = calloc(1, sizeof *L);
    if (!L) abort();
    L->t = t;
    L->tls = t->sh->tls;
    L->n = t->nconns;
    L->c = calloc((size_t)L->n, sizeof *L->c);
    L->idle = calloc((size_t)L->n, sizeof *L->idle);
    if (!L->c || !L->idle) abort();
    for (int i = 0; i < L->n; i++)
        ps_lg_reader_init(&L->c[i].reader);
    /* The default 50 us timer slack would delay every scheduled send by
     * up to that much and show up as latency in the open model. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    L->ep = epoll_create1(EPOLL_CLOEXEC);
    int64_t now = ps_clock_mono_ns();
    if (L->ep < 0) {
        ps_error_set(&t->err, "epoll_create1: %s", strerror(errno));
        ps_lg_burst_abstain(t);
        goto out;
    }
    for (int i = 0; i < L->n; i++) {
        L->c[i].fd = -1;
        conn_open(L, i, now);
    }
    L->next_scan = now + TIMEOUT_SCAN_NS;
    if (t->sh->cfg->burst)
        ps_lg_burst(t, &burst_ops, L);
    else
        ps_lg_thread_begin(t, now);

    bool done_scheduling = false;
    for (;;) {
        now = ps_clock_mono_ns();
        ps_lg_tick(t, now);
        int64_t wake = now + MAX_WAIT_NS;
        if (!done_scheduling) {
            ps_lg_expire_overdue(t, now);
            while (L->nidle > 0) {
                ps_lg_req r;
                int64_t w = INT64_MAX;
                ps_lg_take_result tr = ps_lg_take(t, now, &r, &w);
                if (tr == PS_LG_TAKE_READY) {
                    start_request(L, &r, now);
                    continue;
                }
                if (tr == PS_LG_TAKE_NONE && w < wake) wake = w;
                break;
            }
            done_scheduling = ps_lg_scheduling_done(t, now);
        }
        if (done_scheduling && L->busy == 0) break;
        if (now >= L->next_scan) check_timeouts(L, now, !done_scheduling);
        wait_events(L, now, wake);
    }
    rc = 0;
out:
    for (int i = 0; i < L->n; i++) {
        ps_tls_client_end_clean(L->c[i].ssl);
        if (L->c[i].ssl) SSL_free(L->c[i].ssl);
        if (L->c[i].fd >= 0) close(L->c[i].fd);
        ps_lg_reader_free(&L->c[i].reader);
    }
    ps_tls_resume_clear(&L->resume);
    if (L->ep >= 0) close(L->ep);
    free(L->c);
    free(L->idle);
    free(L);
    return rc;
}

const ps_lg_engine_ops ps_lg_engine_epoll = {"epoll", run};
