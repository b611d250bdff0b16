/* http_conn.c - one connection of petstore-server and its HTTP/1.1 framing:
 * http_parser callbacks with the RFC 9112 rules Debian's lenient build
 * leaves out, the request budgets, writing responses, keep-alive, timeouts
 * and the lingering close. A finished request goes to ps_handle_request. */
#include "reference-server/http_internal.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "core/clock.h"
#include "reference-server/responses.h"

#define LINGER_NS (2 * 1000000000LL)        /* how long a closing connection's input is drained */
#define LINGER_MAX_BYTES (16 * 1024 * 1024) /* and how much of it */
#define MAX_AUTH_BYTES 4096
/* Pipelined requests are parsed only while the answers already queued on
 * the connection stay under this; beyond it reading pauses until the client
 * has taken them (else a client that sends and never reads grows our memory
 * without bound: 40 MB of pipelined GETs made 1.2 GB). */
#define OUTPUT_HIGH_BYTES (256 * 1024)
/* Request bytes held in memory count against --max-buffered over all
 * connections: per-connection caps alone allow connections x (body + header)
 * caps, 1.6 GB with the defaults. Beyond the budget the request gets 503. */
#define RESERVE_BLOCK                                                                              \
    2048 /* taken from the shared counter at a time: one atomic add for most requests */
#define ACCESS_LOG_TARGET_MAX 300 /* request-target bytes an access log line shows */

static void conn_process(conn *c);
static void conn_after_response(conn *c);

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s; /* xorshift64*: a cheap per-loop generator for --delay */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ull;
}

/* ---- writing responses ------------------------------------------------ */

/* Appends up to max bytes of s with every byte that could forge or garble a
 * log line (controls, DEL, non-ASCII, '"', '\') written as \xHH: the
 * request-target is the client's, and a terminal shows escapes as commands. */
static size_t log_escape(char *out, size_t room, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char x = (unsigned char)s[i];
        bool plain = x > 0x20 && x < 0x7f && x != '"' && x != '\\';
        if (n + (plain ? 1 : 4) >= room) break;
        if (plain) {
            out[n++] = (char)x;
        } else {
            out[n++] = '\\';
            out[n++] = 'x';
            out[n++] = hex[x >> 4];
            out[n++] = hex[x & 15];
        }
    }
    out[n] = '\0';
    return n;
}

static void access_log(conn *c, int status, size_t body_len)
{
    ps_http_server *s = c->lp->srv;
    if (s->access_fd < 0) return;
    char target[ACCESS_LOG_TARGET_MAX * 4 + 1];
    size_t shown = c->url.len > ACCESS_LOG_TARGET_MAX ? ACCESS_LOG_TARGET_MAX : c->url.len;
    if (shown)
        log_escape(target, sizeof target, c->url.data, shown);
    else
        snprintf(target, sizeof target, "-");
    char line[sizeof target + 256];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const char *m = http_method_str((enum http_method)c->req.method);
    int n = snprintf(line, sizeof line, "%s %s \"%s %s\" %d %zu %.3fms\n", when, c->ip,
                     c->req.headers_done ? m : "-", target, status, body_len,
                     c->req.start_ns ? (double)(ps_clock_mono_ns() - c->req.start_ns) / 1e6 : 0.0);
    if (n > 0) {
        ssize_t w =
            write(s->access_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)w; /* a lost log line must not stop the server */
    }
}

static void release_snapshot(const void *data, size_t len, void *extra)
{
    (void)data;
    (void)len;
    ps_store_snapshot_release(extra);
}

/* RFC 9110 6.6.1: an origin server with a clock MUST send Date on 2xx-4xx
 * responses. Rendered at most once a second per loop (strftime is not cheap). */
static const char *date_header(loop *lp)
{
    time_t now = time(NULL);
    if (now != lp->date_s || !lp->date_hdr[0]) {
        struct tm tm;
        gmtime_r(&now, &tm);
        if (strftime(lp->date_hdr, sizeof lp->date_hdr, "Date: %a, %d %b %Y %H:%M:%S GMT\r\n",
                     &tm) == 0)
            lp->date_hdr[0] = '\0';
        lp->date_s = now;
    }
    return lp->date_hdr;
}

/* Writes the head and body at once, while nothing is queued before them:
 * one writev, and no write event to add and remove (two epoll_ctl calls a
 * response through the bufferevent). What the socket does not take now
 * (a full send buffer, an error) is queued on out as before, and the
 * bufferevent writes it or reports the error. */
static void write_now_or_queue(conn *c, struct evbuffer *out, const ps_buf *h, const response *r,
                               bool body)
{
    size_t sent = 0, body_len = body ? r->body_len : 0;
    if (evbuffer_get_length(out) == 0) {
        struct iovec iov[2] = {{h->data, h->len}, {(void *)r->body, body_len}};
        ssize_t n = writev(bufferevent_getfd(c->bev), iov, body_len ? 2 : 1);
        if (n > 0) sent = (size_t)n;
    }
    if (sent < h->len) evbuffer_add(out, h->data + sent, h->len - sent);
    size_t body_sent = sent > h->len ? sent - h->len : 0;
    if (r->snap && (!body || body_sent == body_len)) {
        ps_store_snapshot_release(r->snap);
    } else if (r->snap) {
        evbuffer_add_reference(out, r->body + body_sent, body_len - body_sent, release_snapshot,
                               r->snap);
    } else if (body_sent < body_len) {
        evbuffer_add(out, r->body + body_sent, body_len - body_sent);
    }
}

void ps_conn_send(conn *c, const response *r)
{
    const ps_server_config *cfg = c->lp->srv->cfg;
    ps_buf *h = &c->lp->scratch;
    ps_buf_reset(h);
    bool close = r->close || !c->keep_alive || c->lp->draining;
    const char *reason = ps_reason_phrase(r->status);
    ps_buf_append(h, "HTTP/1.1 ", 9);
    ps_buf_put_int(h, r->status);
    ps_buf_putc(h, ' ');
    ps_buf_puts(h, reason);
    ps_buf_append(h, "\r\nContent-Length: ", 18);
    ps_buf_put_int(h, (long long)r->body_len);
    ps_buf_append(h, "\r\n", 2);
    if (r->headers) ps_buf_puts(h, r->headers);
    if (!ps_fault_on(c->lp->srv->cfg->faults, PS_FAULT_NO_DATE_HEADER))
        ps_buf_puts(h, date_header(c->lp));
    if (close)
        ps_buf_puts(h, "Connection: close\r\n");
    else if (c->parser.http_major == 1 && c->parser.http_minor == 0)
        ps_buf_puts(h, "Connection: keep-alive\r\n");
    ps_buf_puts(h, "\r\n");

    bool delayed = cfg->delay_share > 0 && c->state != CONN_LINGER &&
                   (double)(rng_next(&c->lp->rng) >> 11) / 9007199254740992.0 < cfg->delay_share;
    bool head = c->req.headers_done && c->req.method == HTTP_HEAD; /* a HEAD response has no body */
    bool body = r->body && !head;
    access_log(c, r->status,
               r->body_len); /* before the answer leaves: a client that has it finds the line */
    if (delayed) {
        evbuffer_add(c->pending, h->data, h->len);
        if (r->snap && body)
            evbuffer_add_reference(c->pending, r->body, r->body_len, release_snapshot, r->snap);
        else if (r->snap)
            ps_store_snapshot_release(r->snap);
        else if (body)
            evbuffer_add(c->pending, r->body, r->body_len);
    } else {
        write_now_or_queue(c, bufferevent_get_output(c->bev), h, r, body);
    }
    if (c->req_timer) evtimer_del(c->req_timer);
    if (close) c->keep_alive = false;
    if (delayed) {
        c->state = CONN_BUSY;
        ps_conn_read_stop(c);
        struct timeval tv = ps_tv_from_ns(cfg->delay_ns);
        evtimer_add(c->delay_timer, &tv);
        return;
    }
    conn_after_response(c);
}

/* ---- connection state changes ----------------------------------------- */

static void linger_fire(evutil_socket_t fd, short what, void *arg)
{
    ps_conn_free(arg);
}

/* Called once a response is queued (or a delayed one released): decides
 * whether to go on reading, close after the write, or linger. */
static void conn_after_response(conn *c)
{
    if (c->keep_alive && c->state != CONN_LINGER) {
        c->state = CONN_READING;
        c->req.started = false;
        ps_conn_read_start(c);
        return;
    }
    if (c->state != CONN_LINGER) c->state = CONN_CLOSING;
    /* the write callback closes (or shuts the write side and lingers) once the output drained;
     * when the answer went out at once it is already drained: the callback runs from the loop
     * (deferred), never inside this call, whose callers still use c */
    if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
        bufferevent_trigger(c->bev, EV_WRITE,
                            BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
    }
}

static void delay_fire(evutil_socket_t fd, short what, void *arg)
{
    conn *c = arg;
    if (c->dead) {
        ps_conn_free(c);
        return;
    }
    evbuffer_add_buffer(bufferevent_get_output(c->bev), c->pending);
    conn_after_response(c);
    if (c->state == CONN_READING) conn_process(c);
}

void ps_conn_hold(conn *c)
{
    c->state = CONN_BUSY;
    ps_conn_read_stop(c);
    if (c->req_timer) evtimer_del(c->req_timer);
}

void ps_conn_resume(conn *c)
{
    if (c->state == CONN_READING) conn_process(c);
}

static void release_reserved(conn *c)
{
    if (c->reserved) atomic_fetch_sub(&c->lp->srv->buffered, (long long)c->reserved);
    c->reserved = 0;
    c->used = 0;
}

/* A new request begins: its state starts over in one assignment; the
 * buffers are emptied (a big body's is freed: an idle keep-alive connection
 * keeps neither the memory nor its share of --max-buffered). */
static void conn_start_request(conn *c)
{
    c->req = (request){.started = true, .start_ns = ps_clock_mono_ns()};
    ps_buf_reset(&c->url);
    ps_buf_reset(&c->auth);
    if (c->body.cap > 16 * 1024)
        ps_buf_free(&c->body);
    else
        ps_buf_reset(&c->body);
    release_reserved(c);
}

void ps_conn_free(conn *c)
{
    loop *lp = c->lp;
    if (c->prev)
        c->prev->next = c->next;
    else
        lp->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    lp->nconns--;
    atomic_fetch_sub(&lp->srv->connections, 1);
    event_free(c->rev); /* before the bufferevent closes the socket */
    bufferevent_free(c->bev);
    event_free(c->req_timer);
    event_free(c->delay_timer);
    event_free(c->linger_timer);
    evbuffer_free(c->pending);
    release_reserved(c);
    ps_buf_free(&c->url);
    ps_buf_free(&c->auth);
    ps_buf_free(&c->body);
    free(c);
    if (lp->draining && lp->nconns == 0) event_base_loopexit(lp->base, NULL);
}

/* ---- http_parser callbacks -------------------------------------------- */

static bool reserve(conn *c, size_t len)
{
    ps_http_server *s = c->lp->srv;
    if (c->used + (int64_t)len <= c->reserved) {
        c->used += (int64_t)len;
        return true;
    }
    int64_t need = c->used + (int64_t)len - c->reserved;
    long long grab = need < RESERVE_BLOCK ? RESERVE_BLOCK : need;
    long long before = atomic_fetch_add(&s->buffered, grab);
    if (before + grab > s->cfg->max_buffered) {
        atomic_fetch_sub(&s->buffered, grab);
        c->req.error_status = 503;
        return false;
    }
    c->reserved += grab;
    c->used += (int64_t)len;
    return true;
}

static int header_budget(conn *c, size_t len)
{
    c->req.header_bytes += len;
    if (c->req.header_bytes > (size_t)c->lp->srv->cfg->max_header_bytes) {
        c->req.error_status = 431;
        return -1;
    }
    return reserve(c, len) ? 0 : -1;
}

static int on_message_begin(http_parser *p)
{
    conn_start_request(p->data);
    return 0;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    if (header_budget(c, len)) {
        if (c->req.error_status == 431)
            c->req.error_status = 414; /* RFC 9110 15.5.15: the target alone is over */
        return -1;
    }
    ps_buf_append(&c->url, at, len);
    return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    request *r = &c->req;
    if (header_budget(c, len)) return -1;
    /* RFC 9112 5.1: whitespace between the field name and the colon MUST be
     * rejected with 400 (http_parser's lenient build lets it through) */
    if (memchr(at, ' ', len) || memchr(at, '\t', len)) {
        r->error_status = 400;
        r->error_message = "whitespace between a header field name and its colon";
        return -1;
    }
    if (r->in_value) { /* a new field starts */
        r->in_value = false;
        r->field_len = 0;
    }
    size_t room = sizeof r->field - r->field_len;
    size_t n = len < room ? len : room;
    memcpy(r->field + r->field_len, at, n);
    r->field_len += n;
    return 0;
}

/* The transfer codings of a Transfer-Encoding list. */
typedef struct te_codings {
    int chunked; /* how many times chunked is named */
    bool other;  /* a coding besides chunked (gzip, deflate, ...): we decode none */
} te_codings;

static te_codings te_scan(const char *at, size_t len)
{
    te_codings t = {0, false};
    size_t i = 0;
    while (i < len) {
        while (i < len && (at[i] == ',' || at[i] == ' ' || at[i] == '\t'))
            i++;
        size_t start = i;
        while (i < len && at[i] != ',' && at[i] != ';')
            i++;
        size_t end = i;
        while (end > start && (at[end - 1] == ' ' || at[end - 1] == '\t'))
            end--;
        if (end - start == 7 && strncasecmp(at + start, "chunked", 7) == 0)
            t.chunked++;
        else if (end > start)
            t.other = true;
        while (i < len && at[i] != ',')
            i++; /* parameters of a coding */
    }
    return t;
}

/* RFC 9112 3.2: Host = uri-host [ ":" port ]; its characters are those of a
 * reg-name, an IP literal or an IPv4 address (RFC 3986 3.2.2). */
static bool host_chars_ok(const char *at, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char x = (unsigned char)at[i];
        if (!((x >= 'a' && x <= 'z') || (x >= 'A' && x <= 'Z') || (x >= '0' && x <= '9') ||
              (x != 0 && strchr("-._~%!$&'()*+,;=:[]", x))))
            return false;
    }
    return true;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    request *r = &c->req;
    if (header_budget(c, len)) return -1;
    /* a chunked body's trailer fields: counted against the cap, otherwise
     * ignored; above all an Authorization there must not authenticate
     * (RFC 9110 6.5.1: trailers are not merged into the header section) */
    if (r->headers_done) return 0;
    if (!r->in_value) {
        r->in_value = true;
        r->field_is_auth = r->field_len == 13 && strncasecmp(r->field, "authorization", 13) == 0;
        if (r->field_is_auth) r->auth_count++;
        r->field_is_expect = r->field_len == 6 && strncasecmp(r->field, "expect", 6) == 0;
        r->field_is_te = r->field_len == 17 && strncasecmp(r->field, "transfer-encoding", 17) == 0;
        if (r->field_is_te && r->te_len > 0 && r->te_len < sizeof r->te) r->te[r->te_len++] = ',';
        r->field_is_host = r->field_len == 4 && strncasecmp(r->field, "host", 4) == 0;
        if (r->field_is_host) r->host_count++;
        r->field_is_ct = r->field_len == 12 && strncasecmp(r->field, "content-type", 12) == 0;
        if (r->field_is_ct) r->content_type_count++;
        /* fault repeated-auth-last-wins: a later Authorization replaces the first */
        if (r->field_is_auth && r->auth_count > 1 &&
            ps_fault_on(c->lp->srv->cfg->faults, PS_FAULT_REPEATED_AUTH_LAST_WINS)) {
            ps_buf_reset(&c->auth);
            r->auth_overflow = false;
        }
    }
    if (r->field_is_ct && r->content_type_count == 1) {
        size_t room = sizeof r->content_type - 1 - r->content_type_len;
        size_t n = len < room ? len : room;
        memcpy(r->content_type + r->content_type_len, at, n);
        r->content_type_len += n;
        r->content_type[r->content_type_len] = '\0';
    }
    if (r->field_is_expect && len >= 12 && strncasecmp(at, "100-continue", 12) == 0)
        r->expect_continue = true;
    if (r->field_is_host && !host_chars_ok(at, len)) r->host_bad = true;
    if (r->field_is_te) { /* judged whole at the end of the headers: a value may come in pieces */
        if (len > sizeof r->te - r->te_len) {
            r->te_too_long = true;
        } else {
            memcpy(r->te + r->te_len, at, len);
            r->te_len += len;
        }
    }
    if (r->field_is_auth && (r->auth_count == 1 || ps_fault_on(c->lp->srv->cfg->faults,
                                                               PS_FAULT_REPEATED_AUTH_LAST_WINS))) {
        if (c->auth.len + len <= MAX_AUTH_BYTES)
            ps_buf_append(&c->auth, at, len);
        else
            r->auth_overflow = true;
    }
    return 0;
}

static int headers_error(request *r, int status, const char *message)
{
    r->error_status = status;
    r->error_message = message;
    return -1;
}

static int on_headers_complete(http_parser *p)
{
    conn *c = p->data;
    request *r = &c->req;
    r->headers_done = true;
    r->method = p->method;
    c->keep_alive = http_should_keep_alive(p) && !p->upgrade;
    if (p->http_major != 1) return headers_error(r, 505, NULL);
    /* RFC 9112 3.2: an HTTP/1.1 request without Host, or any request with
     * more than one, MUST be answered 400 */
    if (r->host_bad) return headers_error(r, 400, "the Host header is not a host[:port]");
    if (r->host_count > 1) return headers_error(r, 400, "more than one Host header");
    if (r->host_count == 0 && p->http_minor >= 1)
        return headers_error(r, 400, "an HTTP/1.1 request needs a Host header");
    bool has_te = r->te_len > 0 || r->te_too_long;
    /* RFC 9112 6.1: Transfer-Encoding in HTTP/1.0 means faulty framing */
    if (p->http_minor == 0 && has_te)
        return headers_error(r, 400, "Transfer-Encoding in an HTTP/1.0 request");
    if ((p->flags & F_CONTENTLENGTH) && p->content_length > (uint64_t)c->lp->srv->cfg->max_body)
        return headers_error(r, 413, NULL); /* answered before the body is sent or read */
    te_codings te = te_scan(r->te, r->te_len);
    /* RFC 9112 7: a sender MUST NOT apply chunked more than once; the body's
     * length cannot be known reliably, so 400 (6.3) */
    if (te.chunked > 1)
        return headers_error(r, 400, "Transfer-Encoding names chunked more than once");
    /* RFC 9112 6.1: a transfer coding we do not understand: 501 */
    if (te.other || r->te_too_long) return headers_error(r, 501, NULL);
    if (r->expect_continue && p->http_minor >= 1) { /* RFC 9110 10.1.1: the client waits for this */
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        evbuffer_add(bufferevent_get_output(c->bev), cont, sizeof cont - 1);
    }
    return 0;
}

/* A chunk declared larger than the body cap is refused at its size line,
 * before any of it is read or waited for. */
static int on_chunk_header(http_parser *p)
{
    conn *c = p->data;
    if (p->content_length > (uint64_t)c->lp->srv->cfg->max_body - c->body.len) {
        c->req.error_status = 413;
        return -1;
    }
    return 0;
}

/* The libhttp-parser of Debian is built lenient (HTTP_PARSER_STRICT=0): it
 * takes any two bytes after a chunk's data as its CRLF ("2\r\n{}XX0\r\n\r\n"
 * parsed as the body "{}") and a CR followed by anything as a line end. Two
 * parsers that disagree on where a message ends are request smuggling, so
 * every framing byte (request line, fields, chunk lines, trailers: all that
 * is not body data) is checked here in stream order: a CR must be followed
 * by LF, and a chunk's data by exactly CRLF (RFC 9112 2.2, 7.1). */
static bool frame_scan(conn *c, const char *from, const char *to)
{
    for (const char *q = from; q < to; q++) {
        if (c->crlf_expect == 0 && !c->cr_pending) {
            /* between line ends every byte passes: memchr jumps to the next CR
             * (a byte-at-a-time loop was a tenth of a GET's instructions) */
            const char *cr = memchr(q, '\r', (size_t)(to - q));
            if (!cr) return true;
            q = cr;
        }
        char x = *q;
        if (c->crlf_expect == 2) {
            if (x != '\r') return false;
            c->crlf_expect = 1;
        } else if (c->crlf_expect == 1) {
            if (x != '\n') return false;
            c->crlf_expect = 0;
        } else {
            if (c->cr_pending && x != '\n') return false;
            c->cr_pending = x == '\r';
        }
    }
    return true;
}

static const char frame_scan_message[] =
    "a CR not followed by LF, or a chunk's data not followed by CRLF";

static int on_body(http_parser *p, const char *at, size_t len)
{
    conn *c = p->data;
    if (!frame_scan(c, c->scan_pos, at)) {
        c->req.error_status = 400;
        c->req.error_message = frame_scan_message;
        return -1;
    }
    c->scan_pos = at + len;
    if ((p->flags & F_CHUNKED) && p->content_length == 0)
        c->crlf_expect = 2; /* the chunk's data is complete */
    if (c->body.len + len > (size_t)c->lp->srv->cfg->max_body) {
        c->req.error_status = 413;
        return -1;
    }
    if (!reserve(c, len)) return -1;
    ps_buf_append(&c->body, at, len);
    return 0;
}

static int on_message_complete(http_parser *p)
{
    conn *c = p->data;
    c->keep_alive = c->keep_alive && http_should_keep_alive(p);
    http_parser_pause(p, 1); /* one request at a time: pipelined ones wait in the input buffer */
    return 0;
}

static const http_parser_settings parser_settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_chunk_header = on_chunk_header,
    .on_message_complete = on_message_complete,
};

/* The request is over and unparsable: its bytes and its share of
 * --max-buffered go now, not after the lingering close, so requests still
 * arriving can use them; the handler answers and the input is drained so
 * the answer is not lost to a reset. */
static void conn_refuse(conn *c, int status)
{
    c->keep_alive = false;
    ps_buf_free(&c->body);
    release_reserved(c);
    c->state = CONN_LINGER;
    ps_handle_bad_request(c, status);
}

/* Why http_parser stopped, in words a client can act on. */
static const char *parse_error_message(const conn *c, enum http_errno e)
{
    /* http_parser reports a chunk size too large for 64 bits with the
     * Content-Length errno; the request had no Content-Length to blame */
    if (e == HPE_INVALID_CONTENT_LENGTH && c->req.headers_done && (c->parser.flags & F_CHUNKED))
        return "a chunk size is too large";
    return http_errno_description(e);
}

/* Parses buffered input and hands each complete request to the handler
 * until the input runs out or a request is in progress. */
static void conn_process(conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->bev);
    while (c->state == CONN_READING) {
        if (evbuffer_get_length(bufferevent_get_output(c->bev)) > OUTPUT_HIGH_BYTES) {
            c->out_paused = true; /* write_cb resumes */
            ps_conn_read_stop(c);
            break;
        }
        struct evbuffer_iovec v;
        if (evbuffer_peek(in, -1, NULL, &v, 1) < 1 || v.iov_len == 0) break;
        c->scan_pos = v.iov_base;
        size_t n = http_parser_execute(&c->parser, &parser_settings, v.iov_base, v.iov_len);
        enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
        if ((e == HPE_OK || e == HPE_PAUSED) &&
            !frame_scan(c, c->scan_pos, (const char *)v.iov_base + n)) {
            evbuffer_drain(in, n);
            c->req.error_message = frame_scan_message;
            conn_refuse(c, 400);
            return;
        }
        evbuffer_drain(in, n);
        if (e == HPE_PAUSED) {
            http_parser_pause(&c->parser, 0);
            if (c->req_timer) evtimer_del(c->req_timer);
            bool upgrade = c->parser.upgrade;
            ps_handle_request(c);
            /* the body has been parsed (and copied by the store): its memory and
             * its share of --max-buffered go now, not when the next request comes */
            if (c->body.cap > 16 * 1024) ps_buf_free(&c->body);
            release_reserved(c);
            if (upgrade &&
                c->state == CONN_READING) { /* we speak no other protocol: close after this */
                c->keep_alive = false;
                conn_after_response(c);
            }
            continue;
        }
        if (e != HPE_OK) {
            int status = c->req.error_status ? c->req.error_status : 400;
            if (e == HPE_HEADER_OVERFLOW) status = 431;
            if (!c->req.error_status) c->req.error_message = parse_error_message(c, e);
            conn_refuse(c, status);
            return;
        }
        if (n < v.iov_len) { /* stopped without an error: nothing sensible follows */
            conn_refuse(c, 400);
            return;
        }
        /* A request begun and not yet whole: --request-timeout runs from its
         * first read. One read whole in one go (nearly all) never arms it:
         * that saved an event_add and event_del per request. */
        if (c->req.started && c->req_timer && !evtimer_pending(c->req_timer, NULL)) {
            struct timeval tv = ps_tv_from_ns(c->lp->srv->cfg->request_timeout_ns);
            evtimer_add(c->req_timer, &tv);
        }
    }
}

/* ---- input and bufferevent callbacks ---------------------------------- */

void ps_conn_on_input(conn *c)
{
    if (c->state == CONN_LINGER) {
        struct evbuffer *in = bufferevent_get_input(c->bev);
        c->linger_bytes += evbuffer_get_length(in);
        evbuffer_drain(in, evbuffer_get_length(in));
        if (c->linger_bytes > LINGER_MAX_BYTES) ps_conn_free(c);
        return;
    }
    if (c->state == CONN_READING) conn_process(c);
}

static void write_cb(struct bufferevent *bev, void *arg)
{
    conn *c = arg;
    if (evbuffer_get_length(bufferevent_get_output(bev)) != 0) return;
    if (c->out_paused && c->state == CONN_READING) { /* the client took our answers: read on */
        c->out_paused = false;
        ps_conn_read_start(c);
        conn_process(c);
        return;
    }
    if (c->state == CONN_CLOSING) {
        ps_conn_free(c);
    } else if (c->state == CONN_LINGER && !evtimer_pending(c->linger_timer, NULL)) {
        shutdown(bufferevent_getfd(bev), SHUT_WR);
        ps_conn_read_start(c);
        struct timeval tv = ps_tv_from_ns(LINGER_NS);
        evtimer_add(c->linger_timer, &tv);
    }
}

void ps_conn_on_event(conn *c, short what)
{
    if ((what & BEV_EVENT_TIMEOUT) && (what & BEV_EVENT_READING) && c->state == CONN_READING &&
        c->req.started) {
        conn_refuse(c, 408); /* a slow client: tell it, then close */
        return;
    }
    if ((what & BEV_EVENT_EOF) && (c->state == CONN_READING || c->state == CONN_CLOSING) &&
        evbuffer_get_length(bufferevent_get_output(c->bev)) > 0) {
        /* the client half-closed after its requests: deliver the answers, then close */
        c->state = CONN_CLOSING;
        ps_conn_read_stop(c);
        return;
    }
    if (c->state == CONN_BUSY) { /* the handler still owns the connection */
        c->dead = true;
        ps_conn_read_stop(c);
        bufferevent_disable(c->bev, EV_WRITE);
        return;
    }
    ps_conn_free(c);
}

/* The bufferevent only writes: its events are the write side's. */
static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    ps_conn_on_event(arg, what);
}

static void request_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
    conn *c = arg;
    if (c->state == CONN_READING && c->req.started) conn_refuse(c, 408);
}

void ps_conn_open(loop *lp, evutil_socket_t fd, const struct sockaddr *sa)
{
    ps_http_server *s = lp->srv;
    conn *c = calloc(1, sizeof *c);
    if (!c) abort();
    c->lp = lp;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, c->ip, sizeof c->ip);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, c->ip, sizeof c->ip);
    else
        snprintf(c->ip, sizeof c->ip, "unknown");
    c->bev = bufferevent_socket_new(lp->base, fd, BEV_OPT_CLOSE_ON_FREE);
    c->req_timer = evtimer_new(lp->base, request_timeout_cb, c);
    c->delay_timer = evtimer_new(lp->base, delay_fire, c);
    c->linger_timer = evtimer_new(lp->base, linger_fire, c);
    c->pending = evbuffer_new();
    c->rev = c->bev ? ps_conn_read_event(c) : NULL;
    if (!c->bev || !c->rev || !c->req_timer || !c->delay_timer || !c->linger_timer || !c->pending)
        abort();
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    c->state = CONN_READING;
    c->keep_alive = true;
    ps_buf_init(&c->url);
    ps_buf_init(&c->auth);
    ps_buf_init(&c->body);
    c->next = lp->conns;
    if (lp->conns) lp->conns->prev = c;
    lp->conns = c;
    lp->nconns++;
    bufferevent_setcb(c->bev, NULL, write_cb, event_cb, c);
    struct timeval wt = ps_tv_from_ns(s->cfg->write_timeout_ns);
    bufferevent_set_timeouts(c->bev, NULL, &wt);
    bufferevent_enable(c->bev, EV_WRITE);
    ps_conn_read_start(c);
}
