/* tcp_connect.h - one TCP connection to host:port made within a deadline,
 * for the probes that open a socket of their own on a failure path or
 * before a run (core/tls_mismatch.c: does the port speak TLS?,
 * core/tls_client.c: does the server ask for a client certificate?). The
 * programs' own connection pools (the burst, the load engines) connect
 * non-blocking inside their event loops and do not use it. */
#ifndef PS_TCP_CONNECT_H
#define PS_TCP_CONNECT_H

#include <stdbool.h>
#include <stdint.h>

/* A connected non-blocking socket (close-on-exec) to host:port by
 * deadline_ns (ps_clock_mono_ns), or -1. Each address host resolves to is
 * tried in turn until one connects, each given an equal share of the time
 * left (a name resolving to ::1 and 127.0.0.1 reaches a server listening
 * on one of them, and an address that drops packets does not take all of
 * it). What is done on the socket after is the caller's to bound by the
 * same deadline (poll). */
int ps_tcp_connect(const char *host, const char *port, int64_t deadline_ns);

/* Whether fd becomes ready for events (POLLIN, POLLOUT) before deadline_ns
 * (ps_clock_mono_ns): the probes' one wait on such a socket. A signal's
 * EINTR is no failure: it waits again for the time left. */
bool ps_fd_wait(int fd, short events, int64_t deadline_ns);

#endif
