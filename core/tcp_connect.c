/* tcp_connect.c - a TCP connection made within a deadline (see tcp_connect.h). */
#include "core/tcp_connect.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"

bool ps_fd_wait(int fd, short events, int64_t deadline_ns)
{
    struct pollfd p = {.fd = fd, .events = events};
    int ready = 0;
    int64_t left_ns;
    while ((left_ns = deadline_ns - ps_clock_mono_ns()) > 0 &&
           (ready = poll(&p, 1, (int)(left_ns / 1000000 + 1))) < 0 && errno == EINTR)
        ;
    return ready == 1;
}

/* A connected non-blocking socket to one address by until_ns, or -1. */
static int connect_one(const struct addrinfo *ai, int64_t until_ns)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    bool up = fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0;
    if (fd >= 0 && !up && errno == EINPROGRESS) {
        int soerr = -1;
        socklen_t sl = sizeof soerr;
        up = ps_fd_wait(fd, POLLOUT, until_ns) &&
             getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0;
    }
    if (fd >= 0 && !up) {
        close(fd);
        fd = -1;
    }
    return fd;
}

int ps_tcp_connect(const char *host, const char *port, int64_t deadline_ns)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, port, &hints, &res) != 0) res = NULL;
    int naddr = 0;
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next)
        naddr++;
    int fd = -1;
    for (const struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next, naddr--) {
        int64_t left_ns = deadline_ns - ps_clock_mono_ns();
        if (left_ns <= 0) break;
        fd = connect_one(ai, ps_clock_mono_ns() + left_ns / naddr);
    }
    if (res) freeaddrinfo(res);
    return fd;
}

/* Starts a non-blocking connect to a: the socket, or -1 with errno set when
 * it failed at once. */
static int start_connect(const struct addrinfo *a)
{
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) return -1;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* The outcome of fd's connect once poll saw it ready: 0 or the error. */
static int connect_result(int fd)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    return err;
}

/* Waits for fd's connect: 0 when it completed, the error when it failed,
 * EAGAIN when not within wait_ns (0: until the deadline), ETIMEDOUT at the
 * deadline. */
static int await_connect(int fd, int64_t wait_ns, int64_t deadline)
{
    int64_t until = wait_ns ? ps_clock_mono_ns() + wait_ns : deadline;
    if (until > deadline) until = deadline;
    for (;;) {
        int64_t left = until - ps_clock_mono_ns();
        if (left <= 0) return until == deadline ? ETIMEDOUT : EAGAIN;
        struct pollfd pf = {fd, POLLOUT, 0};
        int rc = poll(&pf, 1, (int)(left / 1000000 + 1));
        if (rc < 0 && errno != EINTR) return errno;
        if (rc > 0) return connect_result(fd);
    }
}

/* One connection to a, alone: *fd, or the error (errno value) of the last
 * try. A try not done within *retry_ns starts again (twice as patient);
 * *retry_ns learns from the first connection (0: not yet known), *took_ns
 * is how long the handshake that succeeded took. */
static int open_one(const struct addrinfo *a, int64_t *retry_ns, int64_t deadline, int *fd,
                    int64_t *took_ns)
{
    int64_t wait_ns = *retry_ns;
    for (;;) {
        int64_t t0 = ps_clock_mono_ns();
        if ((*fd = start_connect(a)) < 0) return errno;
        int err = await_connect(*fd, wait_ns, deadline);
        if (!err) {
            *took_ns = ps_clock_mono_ns() - t0;
            if (!*retry_ns) { /* four times the handshake, within [5 ms, 2 s] */
                int64_t four = 4 * *took_ns;
                *retry_ns = four < 5000000 ? 5000000 : four > 2000000000 ? 2000000000 : four;
            }
            return 0;
        }
        close(*fd);
        *fd = -1;
        if (err != EAGAIN) return err;
        wait_ns = wait_ns < 1000000000 ? 2 * wait_ns : wait_ns;
    }
}

static void nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Opens fds[from, n) to a, up to `parallel` handshakes under way at once,
 * each retried as open_one does, but never before PARALLEL_PATIENCE_NS (the
 * kernel's own SYN retry comes after 1 s). Returns how many opened. */
#define PARALLEL_PATIENCE_NS 250000000
static size_t open_parallel(const struct addrinfo *a, size_t from, size_t n, size_t parallel,
                            int64_t retry_ns, int64_t deadline, int *fds, int *errs)
{
    size_t opened = 0, next = from, pending = 0;
    /* a connect given up on may have completed meanwhile: the server then
     * holds a connection of ours in its accept queue until it reads it, so
     * too little patience with many under way fills a shallow queue */
    if (retry_ns < PARALLEL_PATIENCE_NS) retry_ns = PARALLEL_PATIENCE_NS;
    struct pollfd *pf = calloc(parallel, sizeof *pf);
    size_t *idx = calloc(parallel, sizeof *idx);
    int64_t *due = calloc(n, sizeof *due), *wait = calloc(n, sizeof *wait);
    if (!pf || !idx || !due || !wait) abort();
    for (;;) {
        while (next < n && pending < parallel) {
            wait[next] = retry_ns;
            due[next] = ps_clock_mono_ns() + retry_ns;
            if ((fds[next] = start_connect(a)) < 0)
                errs[next] = errno;
            else
                idx[pending++] = next;
            next++;
        }
        if (!pending) break;
        int64_t now = ps_clock_mono_ns(), wake = deadline;
        for (size_t k = 0; k < pending; k++) {
            pf[k] = (struct pollfd){fds[idx[k]], POLLOUT, 0};
            if (due[idx[k]] < wake) wake = due[idx[k]];
        }
        if (now < wake && poll(pf, pending, (int)((wake - now) / 1000000 + 1)) < 0 &&
            errno != EINTR)
            break;
        now = ps_clock_mono_ns();
        /* settled ones leave the set: the last takes their place, and pf is
         * rebuilt before the next poll (so each is looked at once a pass) */
        size_t kept = 0;
        for (size_t k = 0; k < pending; k++) {
            size_t i = idx[k];
            int err = -1; /* -1: still under way */
            if (pf[k].revents) {
                err = connect_result(fds[i]);
            } else if (now >= deadline) {
                err = ETIMEDOUT;
            } else if (now >= due[i]) { /* a SYN dropped, or slow: again */
                close(fds[i]);
                wait[i] = wait[i] < 1000000000 ? 2 * wait[i] : wait[i];
                due[i] = now + wait[i];
                if ((fds[i] = start_connect(a)) < 0) err = errno;
            }
            if (err < 0) {
                idx[kept++] = i;
                continue;
            }
            if (err) {
                if (fds[i] >= 0) close(fds[i]);
                fds[i] = -1;
                errs[i] = err;
            } else {
                nodelay(fds[i]);
                opened++;
            }
        }
        pending = kept;
    }
    for (size_t k = 0; k < pending; k++) { /* poll failed: what is left did not open */
        close(fds[idx[k]]);
        fds[idx[k]] = -1;
        errs[idx[k]] = ETIMEDOUT;
    }
    free(pf);
    free(idx);
    free(due);
    free(wait);
    return opened;
}

size_t ps_tcp_open_many(const struct addrinfo *ai, size_t n, int64_t deadline_ns, size_t parallel,
                        int64_t parallel_after_ns, int *fds, int *errs)
{
    size_t opened = 0;
    int64_t retry_ns = 0;
    const struct addrinfo *good = ai; /* the address the last connection took */
    for (size_t i = 0; i < n; i++)
        fds[i] = -1, errs[i] = 0;
    for (size_t i = 0; i < n; i++) {
        int err = ENOENT;
        int64_t took = 0;
        for (const struct addrinfo *a = good; a; a = a->ai_next) {
            err = open_one(a, &retry_ns, deadline_ns, &fds[i], &took);
            if (!err) {
                good = a;
                break;
            }
            if (err == ETIMEDOUT) break;
        }
        if (err) {
            errs[i] = err;
            continue;
        }
        nodelay(fds[i]);
        opened++;
        if (i + 1 < n && parallel > 1 && took >= parallel_after_ns)
            return opened +
                   open_parallel(good, i + 1, n, parallel, retry_ns, deadline_ns, fds, errs);
    }
    return opened;
}
