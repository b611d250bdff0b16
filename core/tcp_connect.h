/* tcp_connect.h - one TCP connection to host:port made within a deadline,
 * for the probes that open a socket of their own on a failure path or
 * before a run (core/tls_mismatch.c: does the port speak TLS?,
 * core/tls_client.c: does the server ask for a client certificate?); and
 * the many connections a burst holds open before it sends anything
 * (ps_tcp_open_many, runner/suites/burst.c). The load engines connect
 * non-blocking inside their event loops and use neither. */
#ifndef PS_TCP_CONNECT_H
#define PS_TCP_CONNECT_H

#include <stdbool.h>
#include <stddef.h>
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

struct addrinfo;
/* Opens n connections (non-blocking, close-on-exec, TCP_NODELAY) to the
 * first address of ai that takes them, the next tried for one that fails,
 * by deadline_ns: fds[i] the socket, or -1 with errs[i] the errno value
 * (ETIMEDOUT: not by the deadline, ENOENT: no address). Returns how many
 * opened.
 *
 * One handshake at a time while a handshake is quick (loopback, a LAN): a
 * listener whose accept queue is full (Python's default backlog is 5)
 * drops the last ACK of a handshake it answered (Linux,
 * tcp_abort_on_overflow 0), so a connect that completed for us may be
 * unknown to the server until its SYN-ACK is retransmitted seconds later.
 * Started one at a time the queue cannot fill between a SYN being answered
 * and its ACK arriving: a full queue drops the SYN instead, which we see
 * and try again, so each connection counted open is one the server holds.
 * On loopback that costs tens of microseconds each. Once a handshake takes
 * longer than parallel_after_ns (PS_TCP_PARALLEL_AFTER_NS: a round trip
 * away; 0: from the second connection on), one at a time
 * would cost a round trip each (60 at 200 ms: 12 s), so the rest open up
 * to `parallel` at once. Either way a connect not done within four times
 * the first handshake is started again on a new socket (twice as patient
 * each time) rather than left to the kernel's SYN retransmission (1 s,
 * 3 s, 7 s). */
#define PS_TCP_PARALLEL_AFTER_NS 2000000
size_t ps_tcp_open_many(const struct addrinfo *ai, size_t n, int64_t deadline_ns, size_t parallel,
                        int64_t parallel_after_ns, int *fds, int *errs);

#endif
