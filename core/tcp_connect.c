/* tcp_connect.c - a TCP connection made within a deadline (see tcp_connect.h). */
#include "core/tcp_connect.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
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
