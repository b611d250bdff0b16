/* burst.h - a concurrent burst of requests for the 429 suite (one request
 * per connection, mostly alike: the limit's crossing may mix operations):
 * every connection is opened first, then the requests are released
 * together (as petstore-load --burst does), the last few of them on their
 * own once the others are answered, so the moment the limit is crossed is
 * a concurrent one: a limiter's check-then-count race or an off-by-one
 * admission shows in the count of admissions.
 *
 * Plain http:// only (raw sockets on pre-opened connections); for https://
 * ps_burst_supported says no and the suite sends sequentially instead.
 * A reply is read as libcurl would: interim 1xx responses before the final
 * one skipped, bare-LF line ends accepted, done at its Content-Length or
 * last chunk (or the close). Connections are opened one handshake at a time
 * so each is held by the server, not just by our kernel, before the burst
 * is released (a small accept backlog slows the set-up, not the burst).
 * Each reply becomes a ps_exchange (request redacted: the Authorization
 * value's token is "***", the curl line names ${key_env}) that the caller
 * frees with ps_exchange_free. */
#ifndef PS_RUNNER_BURST_H
#define PS_RUNNER_BURST_H

#include <stddef.h>
#include <stdint.h>

#include "runner/client.h"

typedef struct ps_burst_request {
    const char *base_url;       /* "http://host:port/v1" */
    const char *method, *path;  /* "GET", "/categories" */
    const char *scheme_and_key; /* the Authorization value sent */
    const char *key_env;        /* "PETSTORE_LIMIT_KEY": what the curl line names */
    const char *body;           /* NULL: none */
    const char *content_type;   /* NULL: none */
    int64_t timeout_ns;         /* for the whole burst */
} ps_burst_request;

/* True when the base URL can be burst (http://). */
bool ps_burst_supported(const char *base_url);

/* Opens n connections, then sends reqs[i] on connection i: the first
 * n - together at once, reading their replies (Connection: close), then the
 * last `together` at once (in index order) and reads theirs; those are not
 * sent when a first reply was already a 429. Every reqs[i] names the same
 * base URL. out[0..n) are filled (responded or with error set). Returns n,
 * or -1 with why filled when no connection could be opened. */
int ps_burst_run(const ps_burst_request *reqs, size_t n, size_t together, ps_exchange *out,
                 char *why, size_t why_size);

#endif
