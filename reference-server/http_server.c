/* http_server.c - the event loops and lifecycle of petstore-server's HTTP
 * side: one libevent loop per thread, each with its own SO_REUSEPORT
 * listening socket; the connection cap at accept; the store's completions
 * handed back to a loop; the graceful drain; create/start/stop/wait/destroy.
 * Connections and framing are in http_conn.c, requests in http_handler.c. */
#include "reference-server/http_server.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <http_parser.h>

#include "core/clock.h"
#include "reference-server/http_internal.h"

/* ---- a connection's reads -------------------------------------------- */

/* A connection reads with recv into its bufferevent's input buffer rather
 * than through the bufferevent: libevent's evbuffer_read sizes every read
 * with ioctl(FIONREAD), a third syscall per request beside the read and the
 * writev (4% of a GET's CPU, perf). The bufferevent still writes. The
 * idle timeout is the read event's timeout, restarted by every wake-up, as
 * the bufferevent's read timeout was by every read. */
#define READ_BYTES 4096 /* at most per read, as evbuffer_read */

static void conn_readable(evutil_socket_t fd, short what, void *arg)
{
    conn *c = arg;
    if (what & EV_TIMEOUT) {
        ps_conn_read_stop(c);
        ps_conn_on_event(c, BEV_EVENT_READING | BEV_EVENT_TIMEOUT);
        return;
    }
    /* Read on the stack and added: reserving 4 KiB in the (drained, so
     * chainless) input buffer cost a 4 KiB malloc and free per request,
     * where adding a request's ~100 bytes takes a small chain malloc's
     * thread cache serves. The bufferevent keeps its input's end frozen
     * but while it reads itself. */
    char buf[READ_BYTES];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
        struct evbuffer *in = bufferevent_get_input(c->bev);
        evbuffer_unfreeze(in, 0);
        int rc = evbuffer_add(in, buf, (size_t)n);
        evbuffer_freeze(in, 0);
        if (rc != 0) abort();
        ps_conn_on_input(c);
        return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    ps_conn_read_stop(c);
    ps_conn_on_event(c, BEV_EVENT_READING | (n == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR));
}

struct event *ps_conn_read_event(conn *c)
{
    return event_new(c->lp->base, bufferevent_getfd(c->bev), EV_READ | EV_PERSIST, conn_readable,
                     c);
}

void ps_conn_read_start(conn *c)
{
    if (c->reading) return;
    struct timeval tv = ps_tv_from_ns(c->lp->srv->cfg->idle_timeout_ns);
    event_add(c->rev, evutil_timerisset(&tv) ? &tv : NULL);
    c->reading = true;
}

void ps_conn_read_stop(conn *c)
{
    if (!c->reading) return;
    event_del(c->rev);
    c->reading = false;
}

/* ---- accepting -------------------------------------------------------- */

/* Beyond --max-connections a new connection is closed at once: a lingering
 * or half-closed one still holds its slot until its socket is closed. */
static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
                      int socklen, void *arg)
{
    loop *lp = arg;
    ps_http_server *s = lp->srv;
    if (lp->draining || atomic_fetch_add(&s->connections, 1) >=
                            s->cfg->max_connections) { /* over the cap: refuse at once */
        if (!lp->draining) atomic_fetch_sub(&s->connections, 1);
        close(fd);
        return;
    }
    ps_conn_open(lp, fd, sa);
}

static void accept_resume(evutil_socket_t fd, short what, void *arg)
{
    loop *lp = arg;
    if (lp->listener && !lp->draining) evconnlistener_enable(lp->listener);
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
    loop *lp = arg;
    int e = EVUTIL_SOCKET_ERROR();
    /* EMFILE and friends: pause accepting briefly instead of spinning */
    static atomic_int logged;
    if (atomic_fetch_add(&logged, 1) < 5)
        fprintf(stderr, "petstore-server: accept: %s\n", strerror(e));
    evconnlistener_disable(l);
    struct timeval tv = {0, 100000};
    evtimer_add(lp->accept_retry, &tv);
}

/* ---- loop control ----------------------------------------------------- */

static void drain_deadline(evutil_socket_t fd, short what, void *arg)
{
    loop *lp = arg;
    event_base_loopbreak(lp->base);
}

static void begin_drain(loop *lp)
{
    if (lp->draining) return;
    lp->draining = true;
    if (lp->listener) {
        evconnlistener_free(lp->listener);
        lp->listener = NULL;
    }
    conn *c = lp->conns;
    while (c) {
        conn *next = c->next;
        if (c->state == CONN_READING && !c->req.started) {
            if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
                ps_conn_free(c); /* idle: nothing in flight */
            } else { /* an answer is still being written (a big list, a slow reader): finish it,
                        then close */
                c->state = CONN_CLOSING;
                ps_conn_read_stop(c);
            }
        }
        c = next;
    }
    if (lp->nconns == 0) {
        event_base_loopexit(lp->base, NULL);
        return;
    }
    struct timeval tv = ps_tv_from_ns(lp->srv->cfg->drain_timeout_ns);
    evtimer_add(lp->drain_timer, &tv);
}

static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
    loop *lp = arg;
    pthread_mutex_lock(&lp->qlock);
    completion *list = lp->qhead;
    lp->qhead = lp->qtail = NULL;
    pthread_mutex_unlock(&lp->qlock);
    while (list) {
        completion *next = list->next;
        ps_handle_completion(list);
        ps_buf_free(&list->body);
        free(list);
        list = next;
    }
    if (atomic_load(&lp->stopping)) begin_drain(lp);
}

static void stall_cb(evutil_socket_t fd, short what, void *arg)
{
    loop *lp = arg;
    ps_clock_sleep_ns(
        lp->srv->cfg->stall_len_ns); /* deliberately blocks the whole loop, like a GC pause */
}

static void *loop_main(void *arg)
{
    loop *lp = arg;
    event_base_dispatch(lp->base);
    /* Connections still waiting for the store stay allocated: their
     * callback arrives when the store is closed, before destroy. */
    conn *c = lp->conns;
    while (c) {
        conn *next = c->next;
        if (c->state != CONN_BUSY)
            ps_conn_free(c);
        else
            c->dead = true;
        c = next;
    }
    return NULL;
}

/* Every loop's socket sets SO_REUSEPORT, so bind() alone would let a second
 * server started on a port that is in use (by another petstore-server of
 * the same user) join it and take half its connections. A plain socket
 * bound first tells us whether anyone listens there; then the real ones. */
static int port_is_free(const struct sockaddr *sa, socklen_t sl, ps_error *err, const char *addr,
                        int port)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return ps_error_set(err, "socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
               sizeof one); /* TIME_WAIT leftovers do not count */
    int rc = 0;
    if (bind(fd, sa, sl) != 0) {
        int e = errno;
        rc = ps_error_set(err, "cannot listen on %s port %d: %s", addr, port, strerror(e));
    }
    close(fd);
    return rc;
}

static int open_listener(const ps_server_config *cfg, int port, bool first, int *out_fd,
                         int *out_port, ps_error *err)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t sl;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, cfg->bind_addr, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        sl = sizeof *a4;
    } else if (inet_pton(AF_INET6, cfg->bind_addr, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        sl = sizeof *a6;
    } else {
        return ps_error_set(err, "--bind: '%s' is not an IPv4 or IPv6 address", cfg->bind_addr);
    }
    if (first && port != 0 &&
        port_is_free((struct sockaddr *)&ss, sl, err, cfg->bind_addr, port) != 0)
        return -1;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return ps_error_set(err, "socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one,
               sizeof one); /* one socket per loop, the kernel spreads connections */
    if (bind(fd, (struct sockaddr *)&ss, sl) != 0) {
        int e = errno;
        close(fd);
        return ps_error_set(err, "cannot listen on %s port %d: %s", cfg->bind_addr, port,
                            strerror(e));
    }
    if (listen(fd, 4096) != 0) {
        int e = errno;
        close(fd);
        return ps_error_set(err, "listen: %s", strerror(e));
    }
    socklen_t got = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &got);
    *out_port = ntohs(ss.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);
    *out_fd = fd;
    return 0;
}

int ps_http_server_create(const ps_server_config *cfg, ps_store *store, ps_limiter *limiter,
                          ps_http_server **out, ps_error *err)
{
    int rc = -1;
    *out = NULL;
    if (evthread_use_pthreads() != 0)
        return ps_error_set(err, "libevent: evthread_use_pthreads failed");
    /* --max-header-size is the one limit on a request's head: the parser's
     * own (80 KiB, process-wide) is lifted above it, or it won first and
     * its 431 blamed the flag (issue 22). The parser also counts the
     * separators (": ", CRLF) the budget leaves out: twice the budget plus
     * its old limit covers them. */
    http_parser_set_max_header_size((uint32_t)(2 * cfg->max_header_bytes + 80 * 1024));

    ps_http_server *s = calloc(1, sizeof *s);
    if (!s) abort();
    s->cfg = cfg;
    s->store = store;
    s->limiter = limiter;
    s->access_fd = -1;
    s->start_mono_ns = ps_clock_mono_ns();
    pthread_mutex_init(&s->recovery_lock, NULL);
    int n = snprintf(s->resource, sizeof s->resource, "%s/categories", cfg->base_path);
    if (n < 0 || (size_t)n >= sizeof s->resource) {
        ps_error_set(err, "--base-path is too long");
        goto out;
    }
    s->resource_len = (size_t)n;
    if (cfg->access_log) {
        if (strcmp(cfg->access_log, "-") == 0) {
            s->access_fd = 2;
        } else {
            s->access_fd = open(cfg->access_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (s->access_fd < 0) {
                ps_error_set(err, "--access-log %s: %s", cfg->access_log, strerror(errno));
                goto out;
            }
            s->access_close = true;
        }
    }
    s->nloops = cfg->threads;
    s->loops = calloc((size_t)s->nloops, sizeof *s->loops);
    if (!s->loops) abort();
    for (int i = 0; i < s->nloops; i++)
        s->loops[i].fd = -1;
    for (int i = 0; i < s->nloops; i++) {
        loop *lp = &s->loops[i];
        lp->srv = s;
        lp->index = i;
        lp->rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1) ^ (uint64_t)ps_clock_wall_ns();
        if (!lp->rng) lp->rng = 1;
        pthread_mutex_init(&lp->qlock, NULL);
        ps_buf_init(&lp->scratch);
        ps_buf_init(&lp->headers);
        int port = i == 0 ? cfg->port : s->port;
        if (open_listener(cfg, port, i == 0, &lp->fd, &s->port, err) != 0) goto out;
        lp->base = event_base_new();
        if (!lp->base) {
            ps_error_set(err, "libevent: event_base_new failed");
            goto out;
        }
        lp->listener =
            evconnlistener_new(lp->base, accept_cb, lp, LEV_OPT_CLOSE_ON_FREE, 0, lp->fd);
        if (!lp->listener) {
            ps_error_set(err, "libevent: evconnlistener_new failed");
            goto out;
        }
        lp->fd = -1; /* the listener owns it now */
        evconnlistener_set_error_cb(lp->listener, accept_error_cb);
        lp->wake = event_new(lp->base, -1, 0, wake_cb, lp);
        lp->drain_timer = evtimer_new(lp->base, drain_deadline, lp);
        lp->accept_retry = evtimer_new(lp->base, accept_resume, lp);
        lp->stall_timer = evtimer_new(lp->base, stall_cb, lp);
        if (!lp->wake || !lp->drain_timer || !lp->accept_retry || !lp->stall_timer) abort();
        if (cfg->stall_len_ns > 0) {
            struct timeval tv = ps_tv_from_ns(cfg->stall_at_ns);
            evtimer_add(lp->stall_timer, &tv);
        }
    }
    rc = 0;
    *out = s;
out:
    if (rc != 0) ps_http_server_destroy(s);
    return rc;
}

int ps_http_server_port(const ps_http_server *s)
{
    return s->port;
}

int ps_http_server_start(ps_http_server *s, ps_error *err)
{
    for (int i = 0; i < s->nloops; i++) {
        int e = pthread_create(&s->loops[i].thread, NULL, loop_main, &s->loops[i]);
        if (e != 0) {
            ps_http_server_stop(s);
            return ps_error_set(err, "pthread_create: %s", strerror(e));
        }
        s->loops[i].thread_started = true;
    }
    return 0;
}

void ps_http_server_stop(ps_http_server *s)
{
    for (int i = 0; i < s->nloops; i++) {
        atomic_store(&s->loops[i].stopping, true);
        if (s->loops[i].wake) event_active(s->loops[i].wake, EV_READ, 0);
    }
}

void ps_http_server_wait(ps_http_server *s)
{
    for (int i = 0; i < s->nloops; i++)
        if (s->loops[i].thread_started) {
            pthread_join(s->loops[i].thread, NULL);
            s->loops[i].thread_started = false;
        }
}

void ps_http_server_destroy(ps_http_server *s)
{
    if (!s) return;
    for (int i = 0; s->loops && i < s->nloops; i++) {
        loop *lp = &s->loops[i];
        /* completions that arrived after the loop stopped: drop them, then the connections */
        completion *comp = lp->qhead;
        while (comp) {
            completion *next = comp->next;
            ps_buf_free(&comp->body);
            free(comp);
            comp = next;
        }
        lp->draining = false;
        while (lp->conns)
            ps_conn_free(lp->conns);
        if (lp->listener) evconnlistener_free(lp->listener);
        if (lp->fd >= 0) close(lp->fd);
        if (lp->wake) event_free(lp->wake);
        if (lp->drain_timer) event_free(lp->drain_timer);
        if (lp->accept_retry) event_free(lp->accept_retry);
        if (lp->stall_timer) event_free(lp->stall_timer);
        if (lp->base) event_base_free(lp->base);
        pthread_mutex_destroy(&lp->qlock);
        ps_buf_free(&lp->scratch);
        ps_buf_free(&lp->headers);
    }
    free(s->loops);
    while (s->recovery) {
        recovery_entry *next = s->recovery->next;
        free(s->recovery);
        s->recovery = next;
    }
    pthread_mutex_destroy(&s->recovery_lock);
    if (s->access_close) close(s->access_fd);
    free(s);
}
