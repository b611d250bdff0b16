/* client.h - the runner's HTTP client: one libcurl easy handle (keep-alive,
 * https works), every exchange recorded as evidence with the API keys
 * redacted, bodies capped.
 *
 * Ownership: a ps_client owns its handle and copies of the secrets;
 * ps_client_destroy releases them. A ps_exchange owns its strings and
 * buffers; ps_exchange_free releases them (safe on a zeroed exchange).
 *
 * Secrets: every registered secret is replaced by "***" in the recorded
 * request (headers, URL, body) and by "${ENV_VAR}" in the curl command, so
 * evidence can be published. A secret of 9 or more characters is matched by
 * its first len-1 characters too, so its near misses (less the last
 * character, with characters added) are caught, and the --verbose dump
 * redacts what the service sends back; the report's evidence and messages
 * are redacted by runner/conform.c with ps_client_redact. */
#ifndef PS_RUNNER_CLIENT_H
#define PS_RUNNER_CLIENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/tls_client.h"
#include "core/http_headers.h"

/* The body kept per response by default (--max-body); the rest is counted
 * and dropped. */
#define PS_CLIENT_BODY_CAP ((size_t)1 << 20)
/* A reply body longer than this is abandoned (a server streaming forever). */
#define PS_CLIENT_BODY_ABANDON ((size_t)64 << 20)

typedef struct ps_client ps_client;

typedef struct ps_client_request {
    const char *method;        /* "GET" or "POST" */
    const char *path;          /* appended to the base URL: "/categories" */
    const char *authorization; /* whole Authorization value, NULL = no header */
    const char *body;          /* NULL = no body */
    size_t body_len;
    const char *content_type; /* NULL = no Content-Type header */
} ps_client_request;

typedef struct ps_exchange {
    /* the request, as sent but redacted */
    char *method;
    char *url;
    ps_headers req_headers;
    ps_buf req_body;
    char *curl; /* a curl command that reproduces it */
    /* the outcome */
    bool responded;   /* false: transport failure, see error */
    bool unreachable; /* the failure was connecting (refused, unresolvable) */
    bool reply_bad;   /* a reply came but not a whole HTTP response (cut short, not HTTP,
                         its head over the cap): named as such, never admitted */
    char error[320];
    long status;
    ps_headers resp_headers;
    ps_buf body;          /* at most body_cap bytes */
    size_t body_cap;      /* the client's cap when this exchange ran */
    size_t body_total;    /* bytes the server sent */
    bool truncated;       /* body_total > body.len */
    int64_t sent_wall_ns; /* wall clock just before sending */
    int64_t done_wall_ns;
    double elapsed_ms;
} ps_exchange;

/* base_url without trailing slash is used as is ("http://h:1/v1"); a
 * trailing slash is dropped. timeout_ns bounds each whole exchange. verbose,
 * when non-NULL, receives every exchange (redacted). Returns NULL with err
 * set when libcurl cannot be initialised or the URL scheme is not http(s). */
ps_client *ps_client_create(const char *base_url, int64_t timeout_ns, FILE *verbose, ps_error *err);
void ps_client_destroy(ps_client *c);
/* Registers a secret (copied) and the environment variable the curl command
 * names in its place. Empty secrets are ignored. */
void ps_client_add_secret(ps_client *c, const char *secret, const char *env_var);
const char *ps_client_base_url(const ps_client *c);
/* How https:// connections are made (core/tls_client.h: --cacert,
 * --insecure, --cert, --key; the files already checked to load); the
 * paths are copied. Default: the system's CAs, verified, no certificate. */
void ps_client_set_tls(ps_client *c, const ps_tls_client_opts *tls);
/* Applies tls to libcurl handle curl (a CURL *), for every client path
 * (this client's exchanges, the burst's connect-only connections). */
void ps_client_tls_setopt(void *curl, const ps_tls_client_opts *tls);
/* True when a server asked this client for a certificate during a
 * handshake and none was set (no --cert): a 4xx then is most likely its
 * refusal of the connection, not an answer to the request. */
bool ps_client_cert_missing(const ps_client *c);
/* How much of each reply body is kept (default PS_CLIENT_BODY_CAP). */
void ps_client_set_body_cap(ps_client *c, size_t cap);
/* While *flag is non-zero, exchanges in flight stop at once ("interrupted");
 * for a signal handler to cancel a run. flag must outlive the client. */
void ps_client_set_cancel(ps_client *c, volatile sig_atomic_t *flag);

/* What the client's connection met, for the report: read once, from the
 * first exchange answered (TLS and HTTP version, the certificate's
 * subject), and the shortest exchange so far (a round trip, plus the
 * service's own time). */
typedef struct ps_client_transport {
    bool known;
    long http_version;      /* 10, 11, 20, 30 (HTTP/1.0 ... HTTP/3) */
    char tls_version[24];   /* "TLSv1.3"; "" over plain http */
    char cert_subject[256]; /* the server certificate's subject, RFC 2253 */
    double shortest_ms;     /* the quickest exchange answered */
} ps_client_transport;

const ps_client_transport *ps_client_transport_of(const ps_client *c);

/* Sends one request and records it into *ex (which must be zeroed or freed
 * first). Returns 0 when a response arrived (whatever its status), -1 on a
 * transport failure (ex->error says what: refused, timeout, closed, ...). */
int ps_client_perform(ps_client *c, const ps_client_request *req, ps_exchange *ex);

/* As ps_client_perform, with a second Authorization field line after the
 * first when authorization2 is not NULL (RFC 9110 5.3: a sender must not;
 * the generative phase does, to see which one a service believes). */
int ps_client_perform_ex(ps_client *c, const ps_client_request *req, const char *authorization2,
                         ps_exchange *ex);

void ps_exchange_free(ps_exchange *ex);

/* Replaces every registered secret in s by "***" (new string, caller frees):
 * the secret, its first len-1 characters (when it has 9 or more), and a
 * piece of 8 or more of its first characters that ends s (text cut short). */
char *ps_client_redact(const ps_client *c, const char *s, size_t len, size_t *out_len);

#endif
