/* tls_mismatch.h - recognising TLS spoken to a plain-HTTP port and plain
 * HTTP spoken to a TLS port, so petstore-conform and petstore-load can say
 * "use http://" or "use https://" instead of "connect failed".
 *
 * The first two take what the programs already have (libcurl's error text,
 * the first bytes of a reply); the probe opens one connection of its own,
 * on a failure path only, to ask whether the port speaks TLS. */
#ifndef PS_TLS_MISMATCH_H
#define PS_TLS_MISMATCH_H

#include <stdbool.h>
#include <stddef.h>

/* The message both programs print for each mismatch. */
#define PS_TLS_MSG_PLAIN_ANSWER "https:// URL but the server answered in plain HTTP: use http://"
#define PS_TLS_MSG_TLS_ANSWER "http:// URL but the server answered in TLS: use https://"

/* True when a TLS handshake failed (libcurl's CURLE_SSL_CONNECT_ERROR) with
 * the error the TLS library gives when the first bytes back are not a TLS
 * record: an HTTP reply to the ClientHello. OpenSSL says "wrong version
 * number" (1.1, 3.x) or "packet length too long"/"unknown protocol" (older),
 * GnuTLS "An unexpected TLS packet was received". */
bool ps_tls_answered_in_plain_http(bool handshake_failed, const char *tls_error_text);

/* True when a reply to plain HTTP starts with a TLS record header (alert
 * 0x15 or handshake 0x16, then major version 3), not an HTTP status line. */
bool ps_tls_record_start(const unsigned char *reply, size_t len);

/* Whether host:port answers a TLS ClientHello with a TLS record (a
 * ServerHello or an alert: either way, TLS is spoken there). For a plain
 * http:// target that reset or closed instead of answering: many TLS
 * servers send nothing back to plain HTTP. Waits at most timeout_ms, and
 * never more than PS_TLS_PROBE_MAX_MS (a plain server may sit on the
 * ClientHello, waiting for the rest of a request line). */
#define PS_TLS_PROBE_MAX_MS 2000
bool ps_tls_port_speaks_tls(const char *host, const char *port, int timeout_ms);

/* The same for the host and port of an http:// URL (false for others). */
bool ps_tls_url_port_speaks_tls(const char *url, int timeout_ms);

#endif
