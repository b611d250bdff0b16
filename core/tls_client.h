/* tls_client.h - the client side of TLS on the programs' own non-blocking
 * sockets (OpenSSL): one context per run, built from --cacert / --insecure
 * (and a client certificate), shared by every thread; one SSL per
 * connection, with SNI, the peer's name or address verified, and the
 * session resumed from the latest ticket its thread kept.
 *
 * Ownership: ps_tls_client_create's context is the caller's, freed with
 * ps_tls_client_destroy after every SSL made from it is freed. A
 * ps_tls_resume belongs to one thread (not shared); clear it with
 * ps_tls_resume_clear. Contexts may be used from any thread at once. */
#ifndef PS_TLS_CLIENT_H
#define PS_TLS_CLIENT_H

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

typedef struct ps_tls_client_opts {
    const char *cacert;    /* PEM CA bundle to verify the server with; NULL = the system's */
    bool insecure;         /* no certificate or name verification */
    const char *cert_file; /* --cert: client certificate chain (PEM), NULL = none */
    const char *key_file;  /* --key: its private key (PEM, unencrypted), NULL = in cert_file */
} ps_tls_client_opts;

typedef struct ps_tls_client ps_tls_client;

/* The latest session tickets a thread was given, for resuming its next
 * connections (a full handshake costs the client ~1 ms of CPU, a resumed
 * one a fraction). A TLS 1.3 ticket is used once (RFC 8446 C.4; OpenSSL
 * marks a used one not resumable), a TLS 1.2 session again and again. */
#define PS_TLS_RESUME_MAX 8
typedef struct ps_tls_resume {
    SSL_SESSION *tickets[PS_TLS_RESUME_MAX]; /* oldest first */
    int n;
} ps_tls_resume;

/* Builds the context (TLS 1.2 or later, read-ahead on: one recv takes
 * every record waiting). Returns 0, or -1 with err ("--cacert 'x': ..."). */
int ps_tls_client_create(const ps_tls_client_opts *opts, ps_tls_client **out, ps_error *err);
void ps_tls_client_destroy(ps_tls_client *c);

/* Loads what opts name (CA file, client certificate and key) once and
 * drops it: 0, or -1 with err for an unreadable file, a file that is not
 * PEM, an encrypted key (never prompted for) or a key that is not the
 * certificate's ("--key 'k' is not the private key of --cert 'c': ...").
 * The programs call it while reading their flags (exit 2), so libcurl's
 * handles and every engine only ever meet files that load. */
int ps_tls_client_opts_check(const ps_tls_client_opts *opts, ps_error *err);

/* An SSL for connected socket fd, in client mode: SNI = host unless it is
 * an address, the certificate checked against host (name or address)
 * unless insecure, resuming from resume's newest usable ticket and keeping
 * the tickets the server sends into resume (which must outlive the SSL;
 * NULL = no resumption). Returns NULL with err on failure. Free with SSL_free. */
SSL *ps_tls_client_ssl(ps_tls_client *c, int fd, const char *host, ps_tls_resume *resume,
                       ps_error *err);

/* Offers protos on ssl in ALPN instead of the context's "http/1.1" (the
 * runner's HTTP/2 burst offers "h2,http/1.1"): protos is a comma-separated
 * list, each name 1 to 255 bytes. Call before the handshake. Returns 0, or
 * -1 (a malformed list, or OpenSSL refused it). */
int ps_tls_client_offer_alpn(SSL *ssl, const char *protos);

/* Whether the handshake on ssl settled on proto in ALPN ("h2"). */
bool ps_tls_client_alpn_is(SSL *ssl, const char *proto);

void ps_tls_resume_clear(ps_tls_resume *r);

/* Marks ssl as ended cleanly (whole answers, then a close by either side)
 * before SSL_free, without sending anything: SSL_free of a connection not
 * shut down marks its session not resumable (OpenSSL's
 * ssl_clear_bad_session), and that session may be the one its thread
 * resumes from. A connection that failed is freed without it. */
void ps_tls_client_end_clean(SSL *ssl);

/* What an SSL call that returned `ret` meant, for a non-blocking loop. */
typedef enum ps_tls_io {
    PS_TLS_IO_OK,         /* done (ret bytes, or the handshake finished) */
    PS_TLS_IO_WANT_READ,  /* call again when the socket is readable */
    PS_TLS_IO_WANT_WRITE, /* ... writable */
    PS_TLS_IO_EOF,        /* the peer closed (close_notify or a bare FIN) */
    PS_TLS_IO_ERROR,      /* failed (why below) */
} ps_tls_io;

/* Classifies an SSL call's return `ret` on ssl (right after the call, on
 * the same thread). On PS_TLS_IO_ERROR it writes why in one line into
 * why[len] (unless why is NULL) and empties OpenSSL's error queue: a
 * certificate that did not verify names the reason and what to do ("TLS:
 * the server's certificate did not verify: unable to get local issuer
 * certificate (give its CA with --cacert FILE, or --insecure to skip the
 * check)"); a plain-HTTP answer is PS_TLS_MSG_PLAIN_ANSWER. */
ps_tls_io ps_tls_client_io(SSL *ssl, int ret, char *why, size_t len);

/* Handshakes on connected non-blocking socket fd, waiting at most
 * timeout_ms (a probe before a run: a wrong CA or a plain port is then said
 * once, clearly). Returns 0, or -1 with err saying why. */
int ps_tls_client_handshake_blocking(ps_tls_client *c, int fd, const char *host, int timeout_ms,
                                     ps_error *err);

/* Whether host:port, in a TLS handshake of its own (certificate not
 * checked: only the server's request is looked at), asks the client for a
 * certificate (a CertificateRequest). For telling "every answer 4xx" or a
 * failed handshake from a server that wanted a certificate the run was not
 * given. Waits at most timeout_ms, never more than PS_TLS_PROBE_MAX_MS. */
bool ps_tls_server_asks_cert(const char *host, const char *port, int timeout_ms);

#endif
