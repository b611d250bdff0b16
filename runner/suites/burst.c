/* burst.c - a concurrent burst on pre-opened connections (see burst.h). */
#define _GNU_SOURCE
#include "runner/suites/burst.h"

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

/* Decodes a chunked body in place; false when it is malformed. */
static bool dechunk(ps_buf *b)
{
    size_t r = 0, w = 0;
    for (;;) {
        char *end;
        if (r >= b->len) return false;
        unsigned long n = strtoul(b->data + r, &end, 16);
        char *crlf = memmem(b->data + r, b->len - r, "\r\n", 2);
        if (!crlf || end == b->data + r) return false;
        r = (size_t)(crlf - b->data) + 2;
        if (n == 0) break;
        if (n > b->len - r) return false;
        memmove(b->data + w, b->data + r, n);
        w += n, r += n + 2;
    }
    b->len = w;
    if (b->data) b->data[w] = '\0';
    return true;
}

/* Splits a whole reply (read until close) into status, headers and body. */
static void parse_reply(const ps_buf *in, ps_exchange *ex)
{
    const char *d = in->data ? in->data : "";
    const char *head_end = memmem(d, in->len, "\r\n\r\n", 4);
    long status = 0;
    if (!head_end || sscanf(d, "HTTP/1.%*1[01] %3ld", &status) != 1 || status < 100 ||
        status > 999) {
        snprintf(ex->error, sizeof ex->error, "the reply is not HTTP/1.1 (%zu bytes)", in->len);
        return;
    }
    const char *line = strstr(d, "\r\n") + 2;
    bool chunked = false;
    while (line < head_end) {
        const char *eol = strstr(line, "\r\n");
        if (!eol || eol > head_end) eol = head_end;
        const char *colon = memchr(line, ':', (size_t)(eol - line));
        if (colon) {
            ps_headers_add(&ex->resp_headers, line, (size_t)(colon - line), colon + 1,
                           (size_t)(eol - colon - 1));
            if ((size_t)(colon - line) == 17 && strncasecmp(line, "Transfer-Encoding", 17) == 0 &&
                memmem(colon, (size_t)(eol - colon), "chunked", 7))
                chunked = true;
        }
        line = eol + 2;
    }
    const char *body = head_end + 4;
    size_t blen = in->len - (size_t)(body - d);
    const char *cl = ps_headers_get(&ex->resp_headers, "Content-Length");
    if (!chunked && cl) {
        unsigned long long n = strtoull(cl, NULL, 10);
        if (n < blen) blen = (size_t)n;
    }
    ps_buf_append(&ex->body, body, blen);
    if (chunked && !dechunk(&ex->body)) {
        snprintf(ex->error, sizeof ex->error, "the chunked body is malformed");
        return;
    }
    ex->status = status;
    ex->body_total = ex->body.len;
    ex->body_cap = BURST_REPLY_MAX;
    ex->responded = true;
}

/* Writes the request on connections [from, to) back to back. */
static void release(conn *cs, size_t from, size_t to, const ps_buf *wire, ps_exchange *out)
{
    for (size_t i = from; i < to; i++) {
        if (cs[i].done) continue;
        out[i].sent_wall_ns = ps_clock_wall_ns();
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
                if (cn->in.len < BURST_REPLY_MAX) ps_buf_append(&cn->in, buf, (size_t)got);
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

/* Opens cs[0..n) to the first address of ai that takes them, trying the next
 * address for those that fail; what is not connected by deadline is closed.
 * out[i].error says why a connection could not be opened. Returns how many
 * are open (blocking again, with TCP_NODELAY). */
static size_t open_all(conn *cs, size_t n, struct addrinfo *ai, int64_t deadline, ps_exchange *out)
{
    bool *ok = calloc(n ? n : 1, sizeof *ok);
    struct pollfd *pf = calloc(n ? n : 1, sizeof *pf);
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    if (!ok || !pf || !idx) abort();
    for (size_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        cs[i].fd = -1;
        snprintf(out[i].error, sizeof out[i].error, "could not connect: no address");
    }
    size_t opened = 0;
    for (const struct addrinfo *a = ai; a && opened < n; a = a->ai_next) {
        for (size_t i = 0; i < n; i++) {
            if (ok[i]) continue;
            if (!start_connect(&cs[i], a))
                snprintf(out[i].error, sizeof out[i].error, "could not connect: %s",
                         strerror(errno));
        }
        for (;;) { /* until every started connect has completed or the time is up */
            size_t np = 0;
            for (size_t i = 0; i < n; i++) {
                if (ok[i] || cs[i].fd < 0) continue;
                pf[np] = (struct pollfd){cs[i].fd, POLLOUT, 0};
                idx[np++] = i;
            }
            int64_t left = deadline - ps_clock_mono_ns();
            if (!np) break;
            if (left <= 0) {
                for (size_t k = 0; k < np; k++) {
                    close(cs[idx[k]].fd);
                    cs[idx[k]].fd = -1;
                    snprintf(out[idx[k]].error, sizeof out[idx[k]].error,
                             "could not connect: no connection within the burst's time");
                }
                break;
            }
            int rc = poll(pf, np, (int)(left / 1000000 + 1));
            if (rc < 0 && errno != EINTR)
                deadline = 0; /* closes what is pending on the next turn */
            for (size_t k = 0; k < np && rc > 0; k++) {
                if (!pf[k].revents) continue;
                conn *cn = &cs[idx[k]];
                int err = 0;
                socklen_t len = sizeof err;
                if (getsockopt(cn->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
                if (err) {
                    close(cn->fd);
                    cn->fd = -1;
                    snprintf(out[idx[k]].error, sizeof out[idx[k]].error, "could not connect: %s",
                             strerror(err));
                    continue;
                }
                int one = 1;
                setsockopt(cn->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                fcntl(cn->fd, F_SETFL, fcntl(cn->fd, F_GETFL) & ~O_NONBLOCK);
                out[idx[k]].error[0] = '\0';
                ok[idx[k]] = true;
                opened++;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (ok[i]) continue;
        out[i].unreachable = true;
        cs[i].done = true;
    }
    free(ok);
    free(pf);
    free(idx);
    return opened;
}

int ps_burst_run(const ps_burst_request *req, size_t n, size_t together, ps_exchange *out,
                 char *why, size_t why_size)
{
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
    ps_buf wire = PS_BUF_INIT;
    ps_buf_printf(
        &wire, "%s %s%s HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nAccept: application/json\r\n",
        req->method, t.prefix, req->path, t.authority, req->scheme_and_key);
    if (req->content_type) ps_buf_printf(&wire, "Content-Type: %s\r\n", req->content_type);
    if (req->body) ps_buf_printf(&wire, "Content-Length: %zu\r\n", strlen(req->body));
    ps_buf_puts(&wire, "Connection: close\r\n\r\n");
    if (req->body) ps_buf_puts(&wire, req->body);

    /* 1: every connection open before anything is sent, within the burst's
     * time: a blocking connect to a listener whose backlog is full waits out
     * SYN retransmissions (over a minute against a server that accepts one
     * connection at a time), far past --timeout */
    size_t opened = open_all(cs, n, ai, ps_clock_mono_ns() + req->timeout_ns, out);
    for (size_t i = 0; i < n; i++)
        record_request(req, &t, &out[i]);
    freeaddrinfo(ai);
    if (!opened) {
        snprintf(why, why_size, "no connection of the burst could be opened (%s)", out[0].error);
        free(cs);
        ps_buf_free(&wire);
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
    release(cs, 0, first, &wire, out);
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
    release(cs, first, n, &wire, out);
    collect(cs, first, n, out, pf, idx, deadline);
    finish(cs, first, n, out);
    free(pf);
    free(idx);
    free(cs);
    ps_buf_free(&wire);
    return (int)n;
}
