/* tcp_connect.c - a TCP connection made within a deadline (see tcp_connect.h). */
#include "core/tcp_connect.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A connected non-blocking socket to one address by deadline_ms, or -1. */
static int connect_one(const struct addrinfo *ai, int64_t deadline_ms)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) return -1;
    bool up = connect(fd, ai->ai_addr, ai->ai_addrlen) == 0;
    if (!up && errno == EINPROGRESS) {
        int64_t left = deadline_ms - now_ms();
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int soerr = -1;
        socklen_t sl = sizeof soerr;
        up = left > 0 && poll(&p, 1, (int)left) == 1 &&
             getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0;
    }
    if (!up) {
        close(fd);
        fd = -1;
    }
    return fd;
}

int ps_tcp_connect(const char *host, const char *port, int timeout_ms)
{
    if (timeout_ms <= 0) timeout_ms = 1;
    int64_t deadline_ms = now_ms() + timeout_ms;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, port, &hints, &res) != 0) res = NULL;
    int fd = -1;
    for (const struct addrinfo *ai = res; ai && fd < 0 && now_ms() < deadline_ms; ai = ai->ai_next)
        fd = connect_one(ai, deadline_ms);
    if (res) freeaddrinfo(res);
    if (fd >= 0) {
        /* blocking from here, each send and receive bounded */
        struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0 ||
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) {
            close(fd);
            fd = -1;
        }
    }
    return fd;
}
