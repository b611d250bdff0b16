/* burst.c - a concurrent burst on pre-opened connections (see burst.h). */
#define _GNU_SOURCE
#include "runner/suites/burst.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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

/* A reply is read up to this many bytes (more is dropped and marked truncated). */
#define BURST_REPLY_MAX ((size_t)1 << 20)

typedef struct target {
    char host[256]; /* without brackets */
    char port[8];
    char authority[300]; /* Host header value, as in the URL */
    char prefix[512];    /* path of the base URL, no trailing slash */
} target;

static bool parse_target(const char *url, target *t)
{
    memset(t, 0, sizeof *t);
    if (strncmp(url, "http://", 7) != 0) return false;
    const char *p = url + 7;
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
    snprintf(t->port, sizeof t->port, "%.6s", colon && colon[1] ? colon + 1 : "80");
    return true;
}

bool ps_burst_supported(const char *base_url)
{
    target t;
    return parse_target(base_url, &t);
}

/* One connection of the burst. */
typedef struct conn {
    int fd;
    ps_buf wire; /* the request it sends, as written */
    ps_buf in;
    bool done;
} conn;

/* The request as recorded: Authorization's token redacted. */
static void record_request(const ps_burst_request *req, const target *t, ps_exchange *ex)
{
    ps_buf url = PS_BUF_INIT;
    ps_buf_printf(&url, "http://%s%s%s", t->authority, t->prefix, req->path);
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

/* Where the line starting at `from` ends in d[0..len): the index of its
 * '\n', or len while no line end has come. A line ends in CRLF or, as RFC
 * 9112 2.2 lets a recipient accept (and libcurl does), in a bare LF; the CR
 * left before the LF is trimmed by whoever reads the line. */
static size_t line_end(const char *d, size_t from, size_t len)
{
    const char *nl = from < len ? memchr(d + from, '\n', len - from) : NULL;
    return nl ? (size_t)(nl - d) : len;
}

/* The line [from, eol) is empty (nothing, or a lone CR). */
static bool line_empty(const char *d, size_t from, size_t eol)
{
    return eol == from || (eol == from + 1 && d[from] == '\r');
}

/* The head of the final response in a reply. */
typedef struct reply_head {
    size_t start;              /* its status line */
    size_t end;                /* the empty line that ends it */
    size_t body;               /* just past that line */
    long status;               /* 101 or 200..999 */
    bool chunked;              /* Transfer-Encoding names chunked */
    bool has_length;           /* Content-Length given */
    unsigned long long length; /* its value */
} reply_head;

/* Finds the final response's head in d[0..len). Interim 1xx responses
 * before it (103 Early Hints, an unsolicited 100 Continue) are skipped, as
 * RFC 9110 15.2 asks of a client; 101 is final (no upgrade is asked for, so
 * a 101 ends the exchange and is judged as the answer it is). Returns 1 with
 * *h filled, 0 while the head has not all come, -1 when the bytes are not an
 * HTTP/1.x response. */
static int find_head(const char *d, size_t len, reply_head *h)
{
    size_t at = 0;
    for (;;) {
        if (len - at < 13) return 0; /* "HTTP/1.1 200" and a line end */
        const char *s = d + at;
        if (memcmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1') || s[8] != ' ' ||
            s[9] < '1' || s[9] > '9' || s[10] < '0' || s[10] > '9' || s[11] < '0' || s[11] > '9' ||
            (s[12] != ' ' && s[12] != '\r' && s[12] != '\n'))
            return -1;
        memset(h, 0, sizeof *h);
        h->start = at;
        h->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
        size_t line = line_end(d, at, len) + 1;
        for (;;) {
            if (line > len) return 0;
            size_t eol = line_end(d, line, len);
            if (eol == len) return 0;
            if (line_empty(d, line, eol)) {
                h->end = line;
                h->body = eol + 1;
                break;
            }
            size_t n = eol - line;
            if (n > 15 && strncasecmp(d + line, "Content-Length:", 15) == 0) {
                h->has_length = true;
                h->length = strtoull(d + line + 15, NULL, 10);
            } else if (n > 18 && strncasecmp(d + line, "Transfer-Encoding:", 18) == 0 &&
                       memmem(d + line + 18, n - 18, "chunked", 7)) {
                h->chunked = true;
            }
            line = eol + 1;
        }
        if (h->status >= 200 || h->status == 101) return 1;
        at = h->body; /* an interim response: the final one follows */
    }
}

/* Walks a chunked body in d[from, len) (sizes in hex, CRLF or bare LF line
 * ends), appending its data to out when out is not NULL. Returns the offset
 * just past its last chunk and trailers, 0 while it has not all come, -1
 * when it is malformed. */
static long long walk_chunks(const char *d, size_t from, size_t len, ps_buf *out)
{
    size_t r = from;
    for (;;) {
        size_t eol = line_end(d, r, len);
        if (eol == len) return 0;
        unsigned long long n = 0;
        size_t k = r;
        for (; k < eol && isxdigit((unsigned char)d[k]); k++) {
            if (n >> 60) return -1; /* no chunk is that large */
            n = n * 16 + (unsigned long long)(isdigit((unsigned char)d[k])
                                                  ? d[k] - '0'
                                                  : (tolower((unsigned char)d[k]) - 'a' + 10));
        }
        if (k == r) return -1;
        r = eol + 1;
        if (n == 0) break;
        if (n > len - r) return 0;
        if (out) ps_buf_append(out, d + r, (size_t)n);
        r += (size_t)n;
        if (r < len && d[r] == '\r') r++;
        if (r >= len) return 0;
        if (d[r] != '\n') return -1;
        r++;
    }
    for (;;) { /* trailers, up to an empty line */
        size_t eol = line_end(d, r, len);
        if (eol == len) return 0;
        bool empty = line_empty(d, r, eol);
        r = eol + 1;
        if (empty) return (long long)r;
    }
}

/* Whether a reply has all come: its final response's body is complete
 * (Content-Length, the last chunk, none for 101, 204 and 304), or its bytes
 * are no HTTP response at all. Otherwise it ends when the connection
 * closes: the burst then does not wait on a server that keeps the
 * connection open despite Connection: close. */
static bool reply_complete(const ps_buf *in)
{
    reply_head h;
    const char *d = in->data ? in->data : "";
    int found = find_head(d, in->len, &h);
    if (found < 0) return true;
    if (found == 0) return false;
    if (h.status < 200 || h.status == 204 || h.status == 304) return true;
    if (h.chunked) return walk_chunks(d, h.body, in->len, NULL) != 0;
    return h.has_length && in->len - h.body >= h.length;
}

/* Splits a reply into the final response's status, headers and body. */
/* A gzip body is inflated (the request asks for identity, but RFC 9110
 * 12.5.3 only says a server SHOULD honour that; the libcurl client decodes
 * such a body too, so both judge the content). Returns false, leaving the
 * body as it came, when it does not inflate. */
static bool inflate_gzip(ps_buf *body)
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
    } while (rc != Z_STREAM_END && out.len < BURST_REPLY_MAX);
    inflateEnd(&zs);
    if (rc != Z_STREAM_END && out.len < BURST_REPLY_MAX) {
        ps_buf_free(&out);
        return false;
    }
    ps_buf_free(body);
    *body = out;
    return true;
}

static void parse_reply(const ps_buf *in, ps_exchange *ex)
{
    const char *d = in->data ? in->data : "";
    reply_head h;
    int found = find_head(d, in->len, &h);
    if (found <= 0) {
        snprintf(ex->error, sizeof ex->error,
                 found < 0 ? "the reply is not HTTP/1.x (%zu bytes)"
                           : "the reply's head did not all come (%zu bytes)",
                 in->len);
        return;
    }
    for (size_t line = line_end(d, h.start, in->len) + 1; line < h.end;) {
        size_t eol = line_end(d, line, in->len);
        const char *colon = memchr(d + line, ':', eol - line);
        if (colon && colon != d + line)
            ps_headers_add(&ex->resp_headers, d + line, (size_t)(colon - (d + line)), colon + 1,
                           (size_t)(d + eol - colon - 1));
        line = eol + 1;
    }
    if (h.status < 200 || h.status == 204 || h.status == 304) {
        /* no body */
    } else if (h.chunked) {
        if (walk_chunks(d, h.body, in->len, &ex->body) <= 0) {
            ps_buf_free(&ex->body);
            snprintf(ex->error, sizeof ex->error, "the chunked body is malformed or cut short");
            return;
        }
    } else {
        size_t blen = in->len - h.body;
        if (h.has_length && h.length < blen) blen = (size_t)h.length;
        ps_buf_append(&ex->body, d + h.body, blen);
    }
    const char *coding = ps_headers_get(&ex->resp_headers, "Content-Encoding");
    if (coding && ex->body.len &&
        (strcasecmp(coding, "gzip") == 0 || strcasecmp(coding, "x-gzip") == 0) &&
        !inflate_gzip(&ex->body)) {
        snprintf(ex->error, sizeof ex->error, "the gzip body does not inflate");
        return;
    }
    ex->status = h.status;
    ex->body_total = ex->body.len;
    ex->body_cap = BURST_REPLY_MAX;
    ex->responded = true;
}

/* Writes each connection's request on connections [from, to) back to back. */
static void release(conn *cs, size_t from, size_t to, ps_exchange *out)
{
    for (size_t i = from; i < to; i++) {
        if (cs[i].done) continue;
        out[i].sent_wall_ns = ps_clock_wall_ns();
        const ps_buf *wire = &cs[i].wire;
        if (send(cs[i].fd, wire->data, wire->len, MSG_NOSIGNAL) != (ssize_t)wire->len) {
            snprintf(out[i].error, sizeof out[i].error, "sending failed: %s", strerror(errno));
            cs[i].done = true;
        }
        fcntl(cs[i].fd, F_SETFL, fcntl(cs[i].fd, F_GETFL) | O_NONBLOCK);
    }
}

/* Reads the replies on connections [from, to) until each closes or the
 * deadline passes. pf and idx have room for every connection. */
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
        for (size_t k = 0; k < np && rc > 0; k++) {
            if (!pf[k].revents) continue;
            conn *cn = &cs[idx[k]];
            char buf[16384];
            ssize_t got = recv(cn->fd, buf, sizeof buf, 0);
            if (got > 0) {
                ps_buf_append(&cn->in, buf, (size_t)got);
                /* whole, or as much as is kept: no need to wait for the close */
                if (cn->in.len >= BURST_REPLY_MAX || reply_complete(&cn->in)) {
                    cn->done = true;
                    out[idx[k]].done_wall_ns = ps_clock_wall_ns();
                }
            } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
                cn->done = true;
                out[idx[k]].done_wall_ns = ps_clock_wall_ns();
            }
        }
    }
}

/* Closes connections [from, to) and turns what each read into its exchange. */
static void finish(conn *cs, size_t from, size_t to, ps_exchange *out)
{
    for (size_t i = from; i < to; i++) {
        ps_exchange *ex = &out[i];
        if (cs[i].fd >= 0) close(cs[i].fd);
        cs[i].fd = -1;
        if (!ex->done_wall_ns) ex->done_wall_ns = ps_clock_wall_ns();
        if (ex->sent_wall_ns) ex->elapsed_ms = (double)(ex->done_wall_ns - ex->sent_wall_ns) / 1e6;
        if (!ex->error[0] && cs[i].in.len)
            parse_reply(&cs[i].in, ex);
        else if (!ex->error[0])
            snprintf(ex->error, sizeof ex->error, "no reply within the burst's time");
        ps_buf_free(&cs[i].in);
    }
}

/* Starts a non-blocking connect of cn to a; false with errno set when it
 * failed at once. */
static bool start_connect(conn *cn, const struct addrinfo *a)
{
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) return false;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        errno = e;
        return false;
    }
    cn->fd = fd;
    return true;
}

/* Waits for cn's connect to complete: 0 when it did, the error when it
 * failed, EAGAIN when it had not within wait_ns (0: until the deadline),
 * ETIMEDOUT at the deadline. */
static int await_connect(conn *cn, int64_t wait_ns, int64_t deadline)
{
    int64_t until = wait_ns ? ps_clock_mono_ns() + wait_ns : deadline;
    if (until > deadline) until = deadline;
    for (;;) {
        int64_t left = until - ps_clock_mono_ns();
        if (left <= 0) return until == deadline ? ETIMEDOUT : EAGAIN;
        struct pollfd pf = {cn->fd, POLLOUT, 0};
        int rc = poll(&pf, 1, (int)(left / 1000000 + 1));
        if (rc < 0 && errno != EINTR) return errno;
        if (rc <= 0) continue;
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(cn->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        return err;
    }
}

/* Opens cn to a, one handshake at a time (see open_all). A connect not
 * done within *retry_ns is started again on a new socket (twice as patient
 * each time) rather than left to the kernel's SYN retransmission (1 s, 3 s,
 * 7 s, ...); *retry_ns learns from the first connection (0: not yet known).
 * Returns 0, or the error (errno value) of the last attempt. */
static int open_one(conn *cn, const struct addrinfo *a, int64_t *retry_ns, int64_t deadline)
{
    int64_t wait_ns = *retry_ns;
    for (;;) {
        int64_t t0 = ps_clock_mono_ns();
        if (!start_connect(cn, a)) return errno;
        int err = await_connect(cn, wait_ns, deadline);
        if (!err) {
            if (!*retry_ns) { /* four times the handshake, within [5 ms, 250 ms] */
                int64_t took = 4 * (ps_clock_mono_ns() - t0);
                *retry_ns = took < 5000000 ? 5000000 : took > 250000000 ? 250000000 : took;
            }
            return 0;
        }
        close(cn->fd);
        cn->fd = -1;
        if (err != EAGAIN) return err;
        wait_ns = wait_ns < 1000000000 ? 2 * wait_ns : wait_ns;
    }
}

/* Opens cs[0..n) to the first address of ai that takes them, trying the
 * next address for those that fail, within the deadline; out[i].error says
 * why a connection could not be opened. Returns how many are open
 * (blocking, with TCP_NODELAY).
 *
 * One handshake at a time: a listener whose accept queue is full (Python's
 * default backlog is 5) drops the last ACK of a handshake it answered
 * (Linux, tcp_abort_on_overflow 0), so a connect that completed for us may
 * be unknown to the server until its SYN-ACK is retransmitted seconds later,
 * and the request sent on it goes unanswered within the burst. Started one
 * at a time, the queue cannot fill between a SYN being answered and its ACK
 * arriving: a full queue drops the SYN instead, which we see (no connect)
 * and try again, so every connection we count as open is one the server
 * holds before the burst is released. On loopback this costs a few tens of
 * microseconds per connection. */
static size_t open_all(conn *cs, size_t n, struct addrinfo *ai, int64_t deadline, ps_exchange *out)
{
    size_t opened = 0;
    int64_t retry_ns = 0;
    const struct addrinfo *good = ai; /* the address the last connection took */
    for (size_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        cs[i].fd = -1;
        int err = ENOENT;
        for (const struct addrinfo *a = good; a; a = a->ai_next) {
            err = open_one(&cs[i], a, &retry_ns, deadline);
            if (!err) {
                good = a;
                break;
            }
            if (err == ETIMEDOUT) break;
        }
        if (err) {
            snprintf(out[i].error, sizeof out[i].error, "could not connect: %s",
                     err == ETIMEDOUT ? "no connection within the burst's time"
                     : err == ENOENT  ? "no address"
                                      : strerror(err));
            out[i].unreachable = true;
            cs[i].done = true;
            continue;
        }
        int one = 1;
        setsockopt(cs[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fcntl(cs[i].fd, F_SETFL, fcntl(cs[i].fd, F_GETFL) & ~O_NONBLOCK);
        opened++;
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

int ps_burst_run(const ps_burst_request *reqs, size_t n, size_t together, ps_exchange *out,
                 char *why, size_t why_size)
{
    const ps_burst_request *req = &reqs[0]; /* the base URL and timeout every request shares */
    target t;
    if (!parse_target(req->base_url, &t)) {
        snprintf(why, why_size, "a burst needs an http:// base URL");
        return -1;
    }
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_socktype = SOCK_STREAM;
    int gai = getaddrinfo(t.host, t.port, &hints, &ai);
    if (gai != 0) {
        snprintf(why, why_size, "cannot resolve %s: %s", t.host, gai_strerror(gai));
        return -1;
    }
    ps_fd_limit_raise((int64_t)n + 64);
    conn *cs = calloc(n ? n : 1, sizeof *cs);
    if (!cs) abort();

    /* 1: every connection open (and held by the server, see open_all)
     * before anything is sent, within the burst's time: a blocking connect
     * to a listener whose backlog is full waits out SYN retransmissions (over
     * a minute against a server that accepts one connection at a time), far
     * past --timeout */
    size_t opened = open_all(cs, n, ai, ps_clock_mono_ns() + req->timeout_ns, out);
    for (size_t i = 0; i < n; i++) {
        record_request(&reqs[i], &t, &out[i]);
        write_request(&reqs[i], &t, &cs[i].wire);
    }
    freeaddrinfo(ai);
    if (!opened) {
        snprintf(why, why_size, "no connection of the burst could be opened (%s)", out[0].error);
        for (size_t i = 0; i < n; i++)
            ps_buf_free(&cs[i].wire);
        free(cs);
        return -1;
    }
    /* 2: the burst, then its last `together` requests at once: the moment
     * the limit is crossed is the one a check-then-count race shows in, and
     * a burst's last replies come from whichever worker still has a queue
     * (one at a time); released on their own, they meet in the limiter. */
    struct pollfd *pf = calloc(n ? n : 1, sizeof *pf);
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    if (!pf || !idx) abort();
    size_t first = together < n ? n - together : 0;
    int64_t deadline = ps_clock_mono_ns() + req->timeout_ns;
    release(cs, 0, first, out);
    collect(cs, 0, first, out, pf, idx, deadline);
    finish(cs, 0, first, out);
    /* a refusal already: the rest would only be refused too (a ban risked for nothing) */
    bool refused = false;
    for (size_t i = 0; i < first; i++)
        refused |= out[i].responded && out[i].status == 429;
    if (refused) {
        for (size_t i = first; i < n; i++) {
            if (!cs[i].done)
                snprintf(out[i].error, sizeof out[i].error,
                         "not sent: the burst was already refused");
            cs[i].done = true;
        }
    }
    release(cs, first, n, out);
    collect(cs, first, n, out, pf, idx, deadline);
    finish(cs, first, n, out);
    free(pf);
    free(idx);
    for (size_t i = 0; i < n; i++)
        ps_buf_free(&cs[i].wire);
    free(cs);
    return (int)n;
}
