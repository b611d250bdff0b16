/* burst.h - a concurrent burst of requests for the 429 suite (one request
 * per connection, mostly alike: the limit's crossing may mix operations):
 * every connection is opened (and its TLS handshake done) first, each
 * request is written but its last byte, and the last bytes are then
 * released together (last-byte synchronisation, HTTP/1.1), the final
 * `together` of them on their own once the others are answered, so the
 * moment the limit is crossed is a concurrent one: a limiter's
 * check-then-count race or an off-by-one admission shows in the count.
 *
 * Transports: plain http:// on the burst's own sockets, opened one
 * handshake at a time where a handshake is quick (so each is held by the
 * server, not just by our kernel, before the release: a small accept
 * backlog slows the set-up, not the burst); https:// and any target reached
 * through a proxy (http_proxy, HTTPS_PROXY, ALL_PROXY, NO_PROXY, as curl
 * reads them; an http:// target is tunnelled with CONNECT) on libcurl
 * connect-only connections, BURST_PARALLEL handshakes at a time, each
 * connection held once its handshake is done. An https:// target reached
 * directly whose server picks h2 in ALPN gets the single-packet form
 * instead (burst_h2.h): one connection, each group's final frames in one
 * write; a server allowing fewer concurrent streams than a group needs
 * gets the HTTP/1.1 form. No transport falls back to sequential requests.
 *
 * Replies are read with core/http_reply.h, at most `reply cap` bytes each
 * (64 KiB, less when n * 64 KiB would pass the burst's 64 MiB budget): a
 * longer head makes the reply bad, a longer body is counted and cut.
 * Each reply becomes a ps_exchange (request redacted: the Authorization
 * value's token is "***", the curl line names ${key_env}) that the caller
 * frees with ps_exchange_free. */
#ifndef PS_RUNNER_BURST_H
#define PS_RUNNER_BURST_H

#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>

#include "core/tls_client.h"
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

/* The most a burst keeps of one reply, and of all its replies together. */
#define PS_BURST_REPLY_CAP ((size_t)64 << 10)
#define PS_BURST_MEMORY_BUDGET ((size_t)64 << 20)

typedef struct ps_burst_options {
    size_t together;        /* released last, on their own */
    ps_tls_client_opts tls; /* --cacert, --insecure, --cert, --key (https, HTTPS proxies) */
    /* How long a request sent but not answered by the burst's time is
     * still watched (HTTP/1.1 forms; 0: not at all): until its reply or the
     * peer's close, nothing of it can reach the service later, so whoever
     * sends the next burst knows its window holds none of this one's
     * requests (stats: abandoned, settled_wall_ns). Such a late reply is
     * not the burst's (it stays unanswered in out). */
    int64_t linger_ns;
} ps_burst_options;

/* What the burst's transport did, for the report. */
typedef struct ps_burst_stats {
    const char *via;       /* "sockets", "libcurl" (https or a proxy) or "h2" (burst_h2.h) */
    char h2_declined[200]; /* why the HTTP/2 form was not used though tried ("": used, or not tried)
                            */
    /* what the HTTP/2 server did that cut the burst short: GOAWAY and its
     * code, RST_STREAMs, a window left at zero, a flood, a close ("": nothing,
     * or not h2) */
    char h2_peer[320];
    size_t opened;               /* connections held before the release */
    int64_t open_ns;             /* opening them all (handshakes included) */
    int64_t spread_ns[2];        /* first to last final byte written: the burst, its last requests
                                    (h2: the one write of their final frames) */
    int64_t crossing_replies_ns; /* first to last reply of its last requests (0: fewer than 2) */
    int bursts;       /* bursts the run sent so far, this one included (ps_conform_note_burst) */
    size_t reply_cap; /* bytes kept per reply */
    /* requests sent and not answered by the burst's time: of those, answered
     * or closed by the peer within the linger (late), and still open when
     * given up (they may reach the service after settled_wall_ns) */
    size_t abandoned, late, given_up;
    int64_t settled_wall_ns; /* when the last of them was answered, closed, or given up */
} ps_burst_stats;

/* True when the base URL can be burst (http:// or https://, no userinfo). */
bool ps_burst_supported(const char *base_url);

/* The per-reply cap for a burst of n: PS_BURST_REPLY_CAP within the budget. */
size_t ps_burst_reply_cap(size_t n);

/* Opens n connections, then sends reqs[i] on connection i: the first
 * n - together at once, reading their replies (Connection: close), then the
 * last `together` at once (in index order) and reads theirs; those are not
 * sent when a first reply was already a 429. Every reqs[i] names the same
 * base URL. out[0..n) are filled (responded or with error set). Returns n,
 * or -1 with why filled when no connection could be opened. */
int ps_burst_run(const ps_burst_request *reqs, size_t n, const ps_burst_options *opt,
                 ps_exchange *out, ps_burst_stats *stats, char *why, size_t why_size);

#endif
