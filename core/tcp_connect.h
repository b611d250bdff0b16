/* tcp_connect.h - one TCP connection to host:port made within a deadline,
 * for the probes that open a socket of their own on a failure path or
 * before a run (core/tls_mismatch.c: does the port speak TLS?,
 * core/tls_client.c: does the server ask for a client certificate?). The
 * programs' own connection pools (the burst, the load engines) connect
 * non-blocking inside their event loops and do not use it. */
#ifndef PS_TCP_CONNECT_H
#define PS_TCP_CONNECT_H

/* A connected, blocking socket (close-on-exec) to host:port, or -1. Each
 * address host resolves to is tried in turn until one connects, all within
 * timeout_ms (a name resolving to ::1 and 127.0.0.1 reaches a server that
 * listens on one of them); the socket's sends and receives then give up
 * after timeout_ms each (SO_SNDTIMEO, SO_RCVTIMEO), so a blocking handshake
 * on it cannot hang. timeout_ms <= 0 is taken as 1 ms. */
int ps_tcp_connect(const char *host, const char *port, int timeout_ms);

#endif
