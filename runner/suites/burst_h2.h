/* burst_h2.h - the burst's single-packet form over HTTP/2 (burst.h): for
 * an https:// target reached directly whose server picks h2 in ALPN, every
 * request of a group goes on ONE TLS connection as a HEADERS frame without
 * END_STREAM (and a DATA frame with its body but the last byte), and the
 * group is released by writing every stream's final frame (an empty DATA
 * frame, or the last body byte, with END_STREAM) in one write: one TLS
 * record, one TCP packet, so network jitter cannot spread the requests.
 * Framing and HPACK are libnghttp2's.
 *
 * Ownership: the caller owns reqs, replies and out; replies[i] is filled as
 * the HTTP/1.1 form's reader fills it (status, headers, body within its cap,
 * state and why), out[i] gets sent_wall_ns, done_wall_ns and, for a request
 * never sent or a connection that failed, error. */
#ifndef PS_RUNNER_BURST_H2_H
#define PS_RUNNER_BURST_H2_H

#include <stddef.h>

#include "core/http_reply.h"
#include "runner/suites/burst.h"

/* Where the burst goes: the parts of its https:// base URL. */
typedef struct ps_burst_h2_target {
    const char *host;      /* without brackets */
    const char *port;      /* "443" */
    const char *authority; /* :authority, as in the URL */
    const char *prefix;    /* the base URL's path, no trailing slash */
} ps_burst_h2_target;

/* Sends reqs[0..n) as burst.h's ps_burst_run does, over HTTP/2: the first
 * `first` released together and answered, then the rest together (not sent
 * when a first reply was already a 429). replies[i] must be initialised
 * (ps_http_reply_init with the reply cap). Returns 1 when the burst went
 * over HTTP/2 (stats' via, opened, open_ns and spread_ns filled: a group's
 * spread is its one write's duration; h2_peer names what the server did
 * that cut the burst short, if anything); 0 with why when it did not and
 * nothing was sent (no connection, the server did not pick h2, or it allows
 * fewer concurrent streams than a group needs): the caller then uses the
 * HTTP/1.1 form. */
int ps_burst_h2_run(const ps_burst_h2_target *t, const ps_burst_request *reqs, size_t n,
                    size_t first, const ps_tls_client_opts *tls, ps_http_reply *replies,
                    ps_exchange *out, ps_burst_stats *stats, char *why, size_t why_size);

#endif
