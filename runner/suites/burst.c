/* burst.c - a concurrent burst on pre-opened connections (see burst.h). */
#define _GNU_SOURCE
#include "runner/suites/burst.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/fd_limit.h"
#include "core/http_reply.h"
#include "core/tcp_connect.h"
#include "runner/suites/burst_h2.h"

/* TLS handshakes (or proxy tunnels) under way at once: a Business burst
 * (1,001) over a 200 ms round trip through a TLS proxy opened in 22 s at 32
 * at a time; 100 keep it to a few seconds without looking like a flood. */
#define BURST_PARALLEL 100

typedef struct target {
    bool https;
    char host[256]; /* without brackets */
    char port[8];
    char authority[300]; /* Host header value, as in the URL */
    char prefix[512];    /* path of the base URL, no trailing slash */
} target;

static bool parse_target(const char *url, target *t)
{
    memset(t, 0, sizeof *t);
    const char *p;
    if (strncmp(url, "http://", 7) == 0)
        p = url + 7;
    else if (strncmp(url, "https://", 8) == 0)
        p = url + 8, t->https = true;
    else
        return false;
    size_t alen = strcspn(p, "/?#");
    if (alen == 0 || alen >= sizeof t->authority) return false;
    memcpy(t->authority, p, alen);
    const char *path = p + alen;
    size_t plen = strcspn(path, "?#");
    while (plen && path[plen - 1] == '/')
        plen--;
    if (plen >= sizeof t->prefix) return false;
    memcpy(t->prefix, path, plen);
    const char *a = t->authority, *colon;
    if (strchr(a, '@')) return false; /* userinfo: not for a burst */
    if (*a == '[') {
        const char *end = strchr(a, ']');
        if (!end || (size_t)(end - a - 1) >= sizeof t->host) return false;
        memcpy(t->host, a + 1, (size_t)(end - a - 1));
        colon = end[1] == ':' ? end + 1 : NULL;
    } else {
        colon = strchr(a, ':');
        size_t hl = colon ? (size_t)(colon - a) : strlen(a);
        if (hl == 0 || hl >= sizeof t->host) return false;
        memcpy(t->host, a, hl);
    }
    snprintf(t->port, sizeof t->port, "%.6s",
             colon && colon[1] ? colon + 1
             : t->https        ? "443"
                               : "80");
    return true;
}

/* Whether curl would reach an http:// target through a proxy: it reads
 * http_proxy (lower case only, as curl does) and ALL_PROXY; NO_PROXY is
 * left to curl, which then connects directly. */
static bool proxy_configured(const target *t)
{
    static const char *const plain[] = {"http_proxy", "ALL_PROXY", "all_proxy"};
    static const char *const tls[] = {"HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"};
    const char *const *names = t->https ? tls : plain;
    size_t n = t->https ? 4 : 3;
    for (size_t i = 0; i < n; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) return true;
    }
    return false;
}

bool ps_burst_supported(const char *base_url)
{
    target t;
    return parse_target(base_url, &t);
}

size_t ps_burst_reply_cap(size_t n)
{
    size_t each = n ? PS_BURST_MEMORY_BUDGET / n : PS_BURST_REPLY_CAP;
    if (each > PS_BURST_REPLY_CAP) each = PS_BURST_REPLY_CAP;
    return each < 4096 ? 4096 : each; /* a head and a small Error body still fit */
}

/* One connection of the burst: a socket of its own, or a libcurl
 * connect-only handle (its socket then is curl's, read and written through
 * curl for TLS). */
typedef struct conn {
    int fd;
    CURL *h;
    char curl_err[CURL_ERROR_SIZE];
    ps_buf wire; /* the request it sends, as written */
    size_t written;
    ps_http_reply reply;
    bool done;
} conn;

/* Writes data on cn without blocking: 0 with *n written (maybe 0 when the
 * socket is full), or an errno value. */
static int io_send(conn *cn, const char *data, size_t len, size_t *n)
{
    *n = 0;
    if (cn->h) {
        CURLcode cc = curl_easy_send(cn->h, data, len, n);
        return cc == CURLE_OK || cc == CURLE_AGAIN ? 0 : EPIPE;
    }
    ssize_t w = send(cn->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w >= 0) {
        *n = (size_t)w;
        return 0;
    }
    return errno == EAGAIN || errno == EINTR ? 0 : errno;
}

/* Reads what has come on cn: > 0 bytes, 0 at the close, -EAGAIN when
 * nothing is there yet, another -errno on a failure. */
static ssize_t io_recv(conn *cn, char *buf, size_t size)
{
    if (cn->h) {
        size_t n = 0;
        CURLcode cc = curl_easy_recv(cn->h, buf, size, &n);
        if (cc == CURLE_AGAIN) return -EAGAIN;
        return cc == CURLE_OK ? (ssize_t)n : -ECONNRESET;
    }
    ssize_t got = recv(cn->fd, buf, size, MSG_DONTWAIT);
    if (got >= 0) return got;
    return errno == EINTR ? -EAGAIN : -errno;
}

/* Writes data[0..len) on cn whole, waiting for room until the deadline: 0,
 * or an errno value. */
static int write_all(conn *cn, const char *data, size_t len, int64_t deadline)
{
    size_t off = 0;
    while (off < len) {
        size_t n;
        int err = io_send(cn, data + off, len - off, &n);
        if (err) return err;
        off += n;
        if (off == len) break;
        int64_t left = deadline - ps_clock_mono_ns();
        if (left <= 0) return ETIMEDOUT;
        struct pollfd pf = {cn->fd, POLLOUT, 0};
        poll(&pf, 1, (int)(left / 1000000 + 1));
    }
    return 0;
}
/* The request as recorded: Authorization's token redacted. */
static void record_request(const ps_burst_request *req, const target *t, ps_exchange *ex)
{
    ps_buf url = PS_BUF_INIT;
    ps_buf_printf(&url, "%s://%s%s%s", t->https ? "https" : "http", t->authority, t->prefix,
                  req->path);
    ex->method = strdup(req->method);
    ex->url = ps_buf_detach(&url);
    if (!ex->method || !ex->url) abort();
    const char *sp = strchr(req->scheme_and_key, ' ');
    ps_buf red = PS_BUF_INIT;
    if (sp)
        ps_buf_printf(&red, "%.*s ***", (int)(sp - req->scheme_and_key), req->scheme_and_key);
    else
        ps_buf_puts(&red, "***");
    ps_headers_add(&ex->req_headers, "Host", 4, t->authority, strlen(t->authority));
    ps_headers_add(&ex->req_headers, "Authorization", 13, red.data, red.len);
    if (req->content_type)
        ps_headers_add(&ex->req_headers, "Content-Type", 12, req->content_type,
                       strlen(req->content_type));
    if (req->body) ps_buf_append(&ex->req_body, req->body, strlen(req->body));
    ps_buf curl = PS_BUF_INIT;
    ps_buf_printf(&curl, "curl -sS -i -X %s -H \"Authorization: %.*s ${%s}\"", req->method,
                  sp ? (int)(sp - req->scheme_and_key) : 6, sp ? req->scheme_and_key : "Bearer",
                  req->key_env);
    if (req->content_type) ps_buf_printf(&curl, " -H 'Content-Type: %s'", req->content_type);
    if (req->body) ps_buf_printf(&curl, " --data-binary '%s'", req->body);
    ps_buf_printf(&curl, " '%s'", ex->url);
    ex->curl = ps_buf_detach(&curl);
    ps_buf_free(&red);
}

/* A gzip body is inflated (the request asks for identity, but RFC 9110
 * 12.5.3 only says a server SHOULD honour that; the libcurl client decodes
 * such a body too, so both judge the content). Returns false, leaving the
 * body as it came, when it does not inflate. */
static bool inflate_gzip(ps_buf *body, size_t cap)
{
    z_stream zs = {0};
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return false;
    ps_buf out = PS_BUF_INIT;
    unsigned char chunk[16384];
    zs.next_in = (unsigned char *)body->data;
    zs.avail_in = (uInt)body->len;
    int rc;
    do {
        zs.next_out = chunk;
        zs.avail_out = sizeof chunk;
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) break;
        ps_buf_append(&out, chunk, sizeof chunk - zs.avail_out);
    } while (rc != Z_STREAM_END && out.len < cap);
    inflateEnd(&zs);
    if (rc != Z_STREAM_END && out.len < cap) {
        ps_buf_free(&out);
        return false;
    }
    ps_buf_free(body);
    *body = out;
    return true;
}

/* Opens cs[0..n) to the first address of ai that takes them
 * (ps_tcp_open_many: one handshake at a time where a handshake is quick,
 * else in parallel), within the deadline; out[i].error says why a
 * connection could not be opened. Returns how many are open (non-blocking,
 * with TCP_NODELAY). */
static size_t open_all(conn *cs, size_t n, struct addrinfo *ai, int64_t deadline, ps_exchange *out)
{
    int *fds = calloc(n ? n : 1, sizeof *fds), *errs = calloc(n ? n : 1, sizeof *errs);
    if (!fds || !errs) abort();
    size_t opened =
        ps_tcp_open_many(ai, n, deadline, BURST_PARALLEL, PS_TCP_PARALLEL_AFTER_NS, fds, errs);
    for (size_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        cs[i].fd = fds[i];
        if (fds[i] >= 0) continue;
        snprintf(out[i].error, sizeof out[i].error, "could not connect: %s",
                 errs[i] == ETIMEDOUT ? "no connection within the burst's time"
                 : errs[i] == ENOENT  ? "no address"
                                      : strerror(errs[i]));
        out[i].unreachable = true;
        cs[i].done = true;
    }
    free(fds);
    free(errs);
    return opened;
}

/* Why a libcurl connect failed, as the runner's client words it. */
static void curl_failure(const conn *cn, CURLcode cc, ps_exchange *ex)
{
    const char *what = cn->curl_err[0] ? cn->curl_err : curl_easy_strerror(cc);
    switch (cc) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CACERT_BADFILE:
        snprintf(ex->error, sizeof ex->error,
                 "could not connect: TLS failed: %.120s (a private CA: --cacert FILE, or "
                 "--insecure; a server asking for a client certificate: --cert FILE)",
                 what);
        break;
    case CURLE_OPERATION_TIMEDOUT:
        snprintf(ex->error, sizeof ex->error,
                 "could not connect: no connection within the burst's time (%.200s)", what);
        break;
    default:
        snprintf(ex->error, sizeof ex->error, "could not connect: %.280s", what);
    }
    ex->unreachable = true;
}

static CURL *connect_only_handle(conn *cn, const char *url, const ps_burst_options *opt,
                                 int64_t left_ns)
{
    CURL *h = curl_easy_init();
    if (!h) abort();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L); /* one request per connection */
    /* the burst writes HTTP/1.1: ALPN must not settle on h2 */
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    /* through a proxy, the bytes go to the target as written: a tunnel */
    curl_easy_setopt(h, CURLOPT_HTTPPROXYTUNNEL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(left_ns / 1000000 + 1));
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cn->curl_err);
    ps_client_tls_setopt(h, &opt->tls);
    return h;
}

/* Opens cs[0..n) as libcurl connect-only connections, BURST_PARALLEL
 * handshakes at a time, each held once done (its handle stays in the multi
 * handle, whose cache owns the connection). Returns how many are open. */
static size_t open_curl(conn *cs, size_t n, const char *url, const ps_burst_options *opt,
                        int64_t deadline, ps_exchange *out, CURLM *m)
{
    size_t started = 0, finished = 0, opened = 0;
    curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)n + 16);
    for (size_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        cs[i].fd = -1;
    }
    while (finished < n) {
        int64_t left = deadline - ps_clock_mono_ns();
        while (started < n && started - finished < BURST_PARALLEL && left > 0) {
            cs[started].h = connect_only_handle(&cs[started], url, opt, left);
            curl_easy_setopt(cs[started].h, CURLOPT_PRIVATE, (void *)&cs[started]);
            curl_multi_add_handle(m, cs[started].h);
            started++;
        }
        if (left <= 0) break;
        int running = 0;
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int queued;
        while ((msg = curl_multi_info_read(m, &queued))) {
            if (msg->msg != CURLMSG_DONE) continue;
            conn *cn = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&cn);
            size_t i = (size_t)(cn - cs);
            finished++;
            curl_socket_t fd = CURL_SOCKET_BAD;
            if (msg->data.result == CURLE_OK) curl_easy_getinfo(cn->h, CURLINFO_ACTIVESOCKET, &fd);
            if (msg->data.result != CURLE_OK || fd == CURL_SOCKET_BAD) {
                curl_failure(cn, msg->data.result, &out[i]);
                cn->done = true;
                continue;
            }
            cn->fd = (int)fd;
            opened++;
        }
        if (finished < n) curl_multi_poll(m, NULL, 0, 20, NULL);
    }
    for (size_t i = 0; i < n; i++) {
        if (cs[i].fd >= 0 || cs[i].done) continue;
        snprintf(out[i].error, sizeof out[i].error,
                 "could not connect: no connection within the burst's time");
        out[i].unreachable = true;
        cs[i].done = true;
    }
    return opened;
}
/* The request as written on the wire. */
static void write_request(const ps_burst_request *req, const target *t, ps_buf *wire)
{
    ps_buf_printf(
        wire,
        "%s %s%s HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nAccept: application/json\r\n"
        "Accept-Encoding: identity\r\n",
        req->method, t->prefix, req->path, t->authority, req->scheme_and_key);
    if (req->content_type) ps_buf_printf(wire, "Content-Type: %s\r\n", req->content_type);
    if (req->body) ps_buf_printf(wire, "Content-Length: %zu\r\n", strlen(req->body));
    ps_buf_puts(wire, "Connection: close\r\n\r\n");
    if (req->body) ps_buf_puts(wire, req->body);
}

/* Writes the requests of connections [from, to) but their last byte: what
 * the release then sends is one byte per connection. Only requests about
 * to be released: a lenient server reads a request cut short at the close
 * as whole, so one written in part and never released may still count. */
static void presend(conn *cs, size_t from, size_t to, ps_exchange *out, int64_t deadline)
{
    for (size_t i = from; i < to; i++) {
        if (cs[i].done) continue;
        int err = write_all(&cs[i], cs[i].wire.data, cs[i].wire.len - 1, deadline);
        if (err) {
            snprintf(out[i].error, sizeof out[i].error, "sending failed: %s", strerror(err));
            cs[i].done = true;
        }
        cs[i].written = cs[i].wire.len - 1;
    }
}

/* Releases connections [from, to): each one's last byte, back to back.
 * Returns the spread: the first final byte written to the last. */
static int64_t release(conn *cs, size_t from, size_t to, ps_exchange *out, int64_t deadline)
{
    int64_t first = 0, last = 0;
    for (size_t i = from; i < to; i++) {
        if (cs[i].done) continue;
        out[i].sent_wall_ns = ps_clock_wall_ns();
        int err = write_all(&cs[i], cs[i].wire.data + cs[i].written, 1, deadline);
        int64_t now = ps_clock_mono_ns();
        if (!first) first = now;
        last = now;
        if (err) {
            snprintf(out[i].error, sizeof out[i].error, "sending failed: %s", strerror(err));
            cs[i].done = true;
        }
    }
    return last - first;
}

/* Reads what has come on cn (all of it: a TLS record may hold more than
 * the socket shows) into its reply; marks it done once the reply is whole,
 * bad, or the connection closed. */
static void drain(conn *cn, ps_exchange *ex)
{
    char buf[16384];
    for (;;) {
        ssize_t got = io_recv(cn, buf, sizeof buf);
        if (got == -EAGAIN) return;
        if (got > 0 && ps_http_reply_feed(&cn->reply, buf, (size_t)got) == PS_REPLY_MORE) continue;
        if (got <= 0) ps_http_reply_eof(&cn->reply);
        cn->done = true;
        ex->done_wall_ns = ps_clock_wall_ns();
        return;
    }
}

/* Reads the replies on connections [from, to) until each is whole or
 * closed, or the deadline passes. pf and idx have room for every connection. */
static void collect(conn *cs, size_t from, size_t to, ps_exchange *out, struct pollfd *pf,
                    size_t *idx, int64_t deadline)
{
    for (;;) {
        size_t np = 0;
        for (size_t i = from; i < to; i++) {
            if (cs[i].done) continue;
            pf[np] = (struct pollfd){cs[i].fd, POLLIN, 0};
            idx[np++] = i;
        }
        int64_t left = deadline - ps_clock_mono_ns();
        if (!np || left <= 0) return;
        int rc = poll(pf, np, (int)(left / 1000000 + 1));
        if (rc < 0 && errno != EINTR) return;
        for (size_t k = 0; k < np && rc > 0; k++)
            if (pf[k].revents) drain(&cs[idx[k]], &out[idx[k]]);
    }
}

/* The reply read on cn as ex's response, or the reason there is none. A
 * reply is admitted only whole: one cut short, over the cap's head, or not
 * HTTP is named as such (reply_bad), never as a reply. */
static void to_exchange(ps_http_reply *r, size_t cap, ps_exchange *ex)
{
    if (ex->error[0]) return; /* never sent */
    if (r->state == PS_REPLY_MORE) {
        if (r->fed)
            snprintf(ex->error, sizeof ex->error,
                     "no complete reply within the burst's time (%zu bytes came)", r->fed);
        else
            snprintf(ex->error, sizeof ex->error, "no reply within the burst's time");
        ex->reply_bad = r->fed > 0;
        return;
    }
    if (r->state == PS_REPLY_BAD) {
        snprintf(ex->error, sizeof ex->error, "%s", r->why);
        ex->reply_bad = r->fed > 0;
        return;
    }
    ex->status = r->status;
    ex->resp_headers = r->headers;
    memset(&r->headers, 0, sizeof r->headers);
    ex->body = r->body;
    memset(&r->body, 0, sizeof r->body);
    ex->body_total = r->body_total;
    ex->body_cap = cap;
    ex->truncated = r->truncated;
    const char *coding = ps_headers_get(&ex->resp_headers, "Content-Encoding");
    if (coding && ex->body.len && !ex->truncated &&
        (strcasecmp(coding, "gzip") == 0 || strcasecmp(coding, "x-gzip") == 0) &&
        !inflate_gzip(&ex->body, cap)) {
        snprintf(ex->error, sizeof ex->error, "the gzip body does not inflate");
        ex->reply_bad = true;
        return;
    }
    if (coding && ex->body.len) ex->body_total = ex->body.len;
    ex->responded = true;
}

/* Turns what reply r read into ex, and frees r. */
static void settle(ps_http_reply *r, size_t cap, ps_exchange *ex)
{
    if (!ex->done_wall_ns) ex->done_wall_ns = ps_clock_wall_ns();
    if (ex->sent_wall_ns) ex->elapsed_ms = (double)(ex->done_wall_ns - ex->sent_wall_ns) / 1e6;
    to_exchange(r, cap, ex);
    ps_http_reply_free(r);
}

/* Requests of [from, to) sent and not answered by the burst's time keep
 * being read until answered or closed by the peer, or until linger_until
 * (wall clock, the one deadline of every linger of a burst): then nothing
 * of theirs can reach the service later, or, given up, the caller knows
 * since when something may (burst.h, ps_burst_options.linger_ns). What
 * comes then is not the burst's reply: they stay unanswered. */
static void linger(conn *cs, size_t from, size_t to, ps_exchange *out, struct pollfd *pf,
                   size_t *idx, int64_t linger_until, ps_burst_stats *stats)
{
    size_t late_from = stats->late, n = 0;
    for (size_t i = from; i < to; i++) {
        if (cs[i].done || !out[i].sent_wall_ns || out[i].error[0]) continue;
        if (cs[i].reply.fed)
            snprintf(out[i].error, sizeof out[i].error,
                     "no complete reply within the burst's time (%zu bytes came)", cs[i].reply.fed);
        else
            snprintf(out[i].error, sizeof out[i].error, "no reply within the burst's time");
        out[i].reply_bad = cs[i].reply.fed > 0;
        n++;
    }
    if (!n) return;
    stats->abandoned += n;
    int64_t now = ps_clock_wall_ns();
    if (linger_until > now) {
        collect(cs, from, to, out, pf, idx, ps_clock_mono_ns() + (linger_until - now));
        for (size_t i = from; i < to; i++) /* collect set it: they were not the burst's */
            if (cs[i].done && out[i].error[0] && out[i].done_wall_ns) {
                stats->late++;
                out[i].done_wall_ns = 0;
            }
    }
    stats->given_up += n - (stats->late - late_from);
    stats->settled_wall_ns = ps_clock_wall_ns();
}

/* Closes connections [from, to) and turns what each read into its exchange. */
static void finish(conn *cs, size_t from, size_t to, size_t cap, ps_exchange *out)
{
    for (size_t i = from; i < to; i++) {
        if (!cs[i].h && cs[i].fd >= 0) close(cs[i].fd);
        cs[i].fd = -1;
        settle(&cs[i].reply, cap, &out[i]);
    }
}

/* First to last reply of out[from, to) answered; 0 for fewer than two. */
static int64_t reply_spread(const ps_exchange *out, size_t from, size_t to)
{
    int64_t lo = 0, hi = 0;
    for (size_t i = from; i < to; i++) {
        if (!out[i].responded) continue;
        if (!lo || out[i].done_wall_ns < lo) lo = out[i].done_wall_ns;
        if (out[i].done_wall_ns > hi) hi = out[i].done_wall_ns;
    }
    return hi - lo;
}

/* The single-packet form over HTTP/2 (burst_h2.h), for an https:// target
 * reached directly: true when the burst went that way (out filled), false
 * (stats->h2_declined says why) when nothing was sent and the HTTP/1.1
 * form is to be used. */
static bool run_h2(const ps_burst_request *reqs, size_t n, size_t first, const target *t,
                   const ps_burst_options *opt, ps_exchange *out, ps_burst_stats *stats)
{
    ps_http_reply *replies = calloc(n ? n : 1, sizeof *replies);
    if (!replies) abort();
    for (size_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        ps_http_reply_init(&replies[i], stats->reply_cap);
    }
    ps_burst_h2_target ht = {t->host, t->port, t->authority, t->prefix};
    bool used = ps_burst_h2_run(&ht, reqs, n, first, &opt->tls, replies, out, stats,
                                stats->h2_declined, sizeof stats->h2_declined) == 1;
    for (size_t i = 0; i < n; i++) {
        if (used) {
            record_request(&reqs[i], t, &out[i]);
            settle(&replies[i], stats->reply_cap, &out[i]); /* frees the reply */
        } else {
            ps_http_reply_free(&replies[i]);
        }
    }
    free(replies);
    return used;
}

/* Opens every connection on the transport the target needs (see burst.h). */
static size_t open_conns(conn *cs, size_t n, const target *t, const ps_burst_request *req,
                         const ps_burst_options *opt, ps_exchange *out, CURLM **m, char *why,
                         size_t why_size)
{
    int64_t deadline = ps_clock_mono_ns() + req->timeout_ns;
    if (t->https || proxy_configured(t)) {
        *m = curl_multi_init();
        if (!*m) abort();
        return open_curl(cs, n, req->base_url, opt, deadline, out, *m);
    }
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_socktype = SOCK_STREAM;
    int gai = getaddrinfo(t->host, t->port, &hints, &ai);
    if (gai != 0) {
        snprintf(why, why_size, "cannot resolve %s: %s", t->host, gai_strerror(gai));
        return 0;
    }
    size_t opened = open_all(cs, n, ai, deadline, out);
    freeaddrinfo(ai);
    return opened;
}

static void close_conns(conn *cs, size_t n, CURLM *m)
{
    for (size_t i = 0; i < n; i++) {
        if (cs[i].h) {
            curl_multi_remove_handle(m, cs[i].h);
            curl_easy_cleanup(cs[i].h);
        } else if (cs[i].fd >= 0) {
            close(cs[i].fd);
        }
        ps_http_reply_free(&cs[i].reply);
        ps_buf_free(&cs[i].wire);
    }
    if (m) curl_multi_cleanup(m);
}

int ps_burst_run(const ps_burst_request *reqs, size_t n, const ps_burst_options *opt,
                 ps_exchange *out, ps_burst_stats *stats, char *why, size_t why_size)
{
    const ps_burst_request *req = &reqs[0]; /* the base URL and timeout every request shares */
    int rc = -1;
    target t;
    CURLM *m = NULL;
    memset(stats, 0, sizeof *stats);
    why[0] = '\0';
    if (!parse_target(req->base_url, &t)) {
        snprintf(why, why_size, "a burst needs an http:// or https:// base URL without userinfo");
        return -1;
    }
    ps_fd_limit_raise((int64_t)n + 64);
    conn *cs = calloc(n ? n : 1, sizeof *cs);
    struct pollfd *pf = calloc(n ? n : 1, sizeof *pf);
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    if (!cs || !pf || !idx) abort();
    for (size_t i = 0; i < n; i++)
        cs[i].fd = -1;
    size_t cap = stats->reply_cap = ps_burst_reply_cap(n);
    stats->via = t.https || proxy_configured(&t) ? "libcurl" : "sockets";
    size_t first = opt->together < n ? n - opt->together : 0;
    if (t.https && !proxy_configured(&t) && run_h2(reqs, n, first, &t, opt, out, stats)) {
        stats->crossing_replies_ns = reply_spread(out, first, n);
        rc = (int)n;
        goto out;
    }

    /* 1: every connection open (handshakes done, each held by the server)
     * before anything is sent, within the burst's time */
    int64_t t0 = ps_clock_mono_ns();
    size_t opened = open_conns(cs, n, &t, req, opt, out, &m, why, why_size);
    stats->open_ns = ps_clock_mono_ns() - t0;
    stats->opened = opened;
    for (size_t i = 0; i < n; i++) {
        record_request(&reqs[i], &t, &out[i]);
        write_request(&reqs[i], &t, &cs[i].wire);
        ps_http_reply_init(&cs[i].reply, cap);
    }
    if (!opened) {
        if (!why[0])
            snprintf(why, why_size, "no connection of the burst could be opened (%s)",
                     out[0].error);
        goto out;
    }
    /* 2: every request written but its last byte; then the burst's last
     * bytes, then those of its last `together` requests on their own: the
     * moment the limit is crossed is the one a check-then-count race shows
     * in, and a burst's last replies come from whichever worker still has
     * a queue (one at a time); released on their own, they meet in the
     * limiter. */
    int64_t deadline = ps_clock_mono_ns() + req->timeout_ns;
    int64_t linger_until = ps_clock_wall_ns() + req->timeout_ns + opt->linger_ns;
    presend(cs, 0, first, out, deadline);
    stats->spread_ns[0] = release(cs, 0, first, out, deadline);
    collect(cs, 0, first, out, pf, idx, deadline);
    linger(cs, 0, first, out, pf, idx, linger_until, stats);
    finish(cs, 0, first, cap, out);
    /* a refusal already: the rest would only be refused too (a ban risked for nothing) */
    bool refused = false;
    for (size_t i = 0; i < first; i++)
        refused |= out[i].responded && out[i].status == 429;
    for (size_t i = first; refused && i < n; i++) {
        if (!cs[i].done)
            snprintf(out[i].error, sizeof out[i].error, "not sent: the burst was already refused");
        cs[i].done = true;
    }
    presend(cs, first, n, out, deadline);
    stats->spread_ns[1] = release(cs, first, n, out, deadline);
    collect(cs, first, n, out, pf, idx, deadline);
    linger(cs, first, n, out, pf, idx, linger_until, stats);
    finish(cs, first, n, cap, out);
    stats->crossing_replies_ns = reply_spread(out, first, n);
    rc = (int)n;
out:
    close_conns(cs, n, m);
    free(cs);
    free(pf);
    free(idx);
    return rc;
}
