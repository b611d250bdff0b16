/* test_tcp_connect.c - ps_tcp_open_many opens every connection it is asked
 * for, one handshake at a time or in parallel (the burst's set-up: a round
 * trip each, one at a time, took 12 s for 60 at 200 ms, issue 27), each one
 * a connection the listener holds; a port nobody listens on fails each at
 * once, saying why. */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/tcp_connect.h"
#include "harness.h"

/* A listener on 127.0.0.1 with room for backlog pending connections: its
 * fd, *port its port. */
static int listener(int backlog, char port[8])
{
    /* non-blocking: the test's accepts end when none wait */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(fd, backlog) == 0 &&
          getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
    snprintf(port, 8, "%u", (unsigned)ntohs(sa.sin_port));
    return fd;
}

static struct addrinfo *resolve(const char *port)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    CHECK_INT(getaddrinfo("127.0.0.1", port, &hints, &ai), 0);
    return ai;
}

/* n connections in the given mode: all open, each connected to the
 * listener, which then accepts them (and, on a loaded machine, perhaps a
 * connect given up on that completed meanwhile: room for those too). */
static void opens_all(size_t n, int64_t parallel_after_ns)
{
    char port[8];
    int lfd = listener(2 * (int)n + 8, port);
    struct addrinfo *ai = resolve(port);
    int *fds = calloc(n, sizeof *fds), *errs = calloc(n, sizeof *errs);
    int64_t t0 = ps_clock_mono_ns();
    size_t opened = ps_tcp_open_many(ai, n, t0 + 10000000000LL, 100, parallel_after_ns, fds, errs);
    CHECK_INT((int64_t)opened, (int64_t)n);
    size_t peers = 0;
    for (size_t i = 0; i < n; i++) {
        struct sockaddr_in peer;
        socklen_t len = sizeof peer;
        CHECK(fds[i] >= 0 && errs[i] == 0);
        if (errs[i]) fprintf(stderr, "  connection %zu: %s\n", i, strerror(errs[i]));
        if (fds[i] >= 0 && getpeername(fds[i], (struct sockaddr *)&peer, &len) == 0 &&
            ntohs(peer.sin_port) == (unsigned)atoi(port))
            peers++;
    }
    CHECK_INT((int64_t)peers, (int64_t)n);
    size_t accepted = 0;
    for (int c; (c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0; accepted++)
        close(c);
    CHECK(accepted >= n);
    for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0) close(fds[i]);
    freeaddrinfo(ai);
    free(fds);
    free(errs);
    close(lfd);
}

static void one_at_a_time(void)
{
    opens_all(60, INT64_MAX);
}

static void in_parallel(void)
{
    opens_all(250, 0); /* more than 100 at once: the window moves on as they open */
}

/* Nobody listens: every connection fails with ECONNREFUSED, in parallel
 * as one at a time, long before the deadline. */
static void refused(void)
{
    char port[8];
    int lfd = listener(1, port);
    close(lfd); /* the port is free now: connects are refused */
    struct addrinfo *ai = resolve(port);
    int fds[30], errs[30];
    for (int mode = 0; mode < 2; mode++) {
        int64_t t0 = ps_clock_mono_ns();
        size_t opened =
            ps_tcp_open_many(ai, 30, t0 + 5000000000LL, 8, mode ? 0 : INT64_MAX, fds, errs);
        CHECK_INT((int64_t)opened, 0);
        for (int i = 0; i < 30; i++)
            CHECK(fds[i] == -1 && errs[i] == ECONNREFUSED);
        CHECK(ps_clock_mono_ns() - t0 < 2000000000LL * PS_TEST_SLOW);
    }
    freeaddrinfo(ai);
}

int main(void)
{
    RUN(one_at_a_time);
    RUN(in_parallel);
    RUN(refused);
    return TEST_EXIT();
}
