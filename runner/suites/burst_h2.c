/* burst_h2.c - the burst's single-packet form over HTTP/2 (see burst_h2.h). */
#define _GNU_SOURCE
#include "runner/suites/burst_h2.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/clock.h"

/* Our receive windows: a stream's reply is kept to at most 64 KiB, so a
 * 1 MiB stream window and a 16 MiB connection window mean no reply of a
 * burst waits on a WINDOW_UPDATE (nghttp2 still sends them as it reads). */
#define H2_STREAM_WINDOW (1 << 20)
#define H2_CONN_WINDOW (1 << 24)

/* Frames that carry no reply (PING, SETTINGS, WINDOW_UPDATE, PRIORITY,
 * empty DATA, unknown types) beyond this, plus a few per stream, are a
 * flood: a server legitimately sends a handful per stream, and reading
 * endless ones would only hold the burst until its deadline. */
#define H2_IDLE_FRAMES_MOST 1000
#define H2_IDLE_FRAMES_PER_STREAM 8
#define H2_FRAME_KINDS 11 /* the ten of RFC 9113, then "unknown" */

/* One request of the burst, one stream. */
typedef struct stream {
    const ps_burst_request *req;
    ps_http_reply *reply;
    ps_exchange *ex;
    int32_t id;      /* 0: never submitted */
    size_t body_len; /* the request body's */
    size_t off;      /* body bytes handed to nghttp2 */
    bool released;   /* its final frame may go */
    bool ended;      /* its final frame was handed to nghttp2 */
    bool closed;
    bool interim; /* the header block being read is a 1xx */
} stream;

typedef struct h2 {
    int fd;
    SSL *ssl;
    nghttp2_session *ng;
    int64_t deadline;
    bool settings_seen, ping_acked;
    bool broken;    /* the connection failed: why */
    bool timed_out; /* the deadline passed */
    char why[240];
    /* the server's protocol errors, named in the report (stats h2_peer) */
    bool goaway;
    uint32_t goaway_code;
    int32_t goaway_last;
    size_t resets;               /* RST_STREAM frames on our streams */
    uint32_t reset_code;         /* the first one's */
    bool resets_differ;          /* another code came too */
    size_t idle[H2_FRAME_KINDS]; /* frames carrying no reply, by type */
    size_t idle_most;            /* the flood threshold for this burst */
} h2;

static void fail(h2 *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(h2 *c, const char *fmt, ...)
{
    if (c->broken) return; /* the first reason is the one */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    c->broken = true;
}

/* An HTTP/2 error code by its RFC 9113 name (or its number). */
static const char *code_name(uint32_t code, char *buf, size_t size)
{
    if (code <= NGHTTP2_HTTP_1_1_REQUIRED) return nghttp2_http2_strerror(code);
    snprintf(buf, size, "error code 0x%x", (unsigned)code);
    return buf;
}

static const char *frame_name(size_t kind)
{
    static const char *const names[H2_FRAME_KINDS] = {
        "DATA", "HEADERS", "PRIORITY",      "RST_STREAM",   "SETTINGS",    "PUSH_PROMISE",
        "PING", "GOAWAY",  "WINDOW_UPDATE", "CONTINUATION", "unknown-type"};
    return names[kind < H2_FRAME_KINDS ? kind : H2_FRAME_KINDS - 1];
}

/* "N PING frames" for the kind the server sent most of. */
static void idle_most_sent(const h2 *c, char *buf, size_t size)
{
    size_t top = 0, total = 0;
    for (size_t k = 0; k < H2_FRAME_KINDS; k++) {
        total += c->idle[k];
        if (c->idle[k] > c->idle[top]) top = k;
    }
    snprintf(buf, size, "%zu frames carrying no reply, %zu of them %s", total, c->idle[top],
             frame_name(top));
}

static bool stopped(const h2 *c)
{
    return c->broken || c->timed_out;
}

/* A reply that will not be whole, named as the HTTP/1.1 reader names one. */
static void reply_bad(stream *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply_bad(stream *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->reply->why, sizeof st->reply->why, fmt, ap);
    va_end(ap);
    st->reply->state = PS_REPLY_BAD;
}

/* Waits until fd is ready for events: false at the deadline (timed_out)
 * or on a poll failure (broken). */
static bool wait_fd(h2 *c, short events)
{
    for (;;) {
        int64_t left = c->deadline - ps_clock_mono_ns();
        if (left <= 0) {
            c->timed_out = true;
            return false;
        }
        struct pollfd pf = {c->fd, events, 0};
        int rc = poll(&pf, 1, (int)(left / 1000000 + 1));
        if (rc > 0) return true;
        if (rc < 0 && errno != EINTR) {
            fail(c, "poll failed: %s", strerror(errno));
            return false;
        }
    }
}

/* --- the stream callbacks: replies as they come ------------------------ */

static stream *stream_of(nghttp2_session *ng, int32_t id)
{
    return id > 0 ? nghttp2_session_get_stream_user_data(ng, id) : NULL;
}

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
    stream *st = stream_of(ng, f->hd.stream_id);
    if (st) st->interim = false;
    return 0;
}

/* A field of a reply's head: :status (an interim 1xx block is skipped, as
 * the HTTP/1.1 reader skips 103 Early Hints), then the fields, kept within
 * the reply cap; trailers are not read. */
static int on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *ud)
{
    stream *st = stream_of(ng, f->hd.stream_id);
    if (!st || f->hd.type != NGHTTP2_HEADERS) return 0;
    ps_http_reply *r = st->reply;
    r->fed += namelen + valuelen + 4;
    if (r->head_done || r->state != PS_REPLY_MORE) return 0;
    if (namelen == 7 && memcmp(name, ":status", 7) == 0) {
        long status = strtol((const char *)value, NULL, 10); /* nghttp2 checked it is 3 digits */
        st->interim = status < 200;
        if (!st->interim) r->status = status;
        return 0;
    }
    if (st->interim) return 0;
    r->head_len += namelen + valuelen + 4; /* as "Name: value\r\n" */
    if (r->head_len > r->cap) {
        reply_bad(st, "the reply's head exceeds the %zu KiB kept per reply", r->cap >> 10);
        nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, f->hd.stream_id, NGHTTP2_CANCEL);
        return 0;
    }
    ps_headers_add(&r->headers, (const char *)name, namelen, (const char *)value, valuelen);
    return 0;
}

static int on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data,
                         size_t len, void *ud)
{
    stream *st = stream_of(ng, id);
    if (!st) return 0;
    ps_http_reply *r = st->reply;
    r->fed += len;
    r->body_total += len;
    size_t used = r->head_len + r->body.len;
    size_t keep = used < r->cap ? r->cap - used : 0;
    if (keep > len) keep = len;
    ps_buf_append(&r->body, data, keep);
    if (keep < len) r->truncated = true;
    return 0;
}

/* Every frame's header, before its payload: frames that carry no reply are
 * counted, and past the burst's threshold the connection is given up as a
 * flood (nghttp2 itself refuses only a backlog of acknowledgements owed). */
static int on_begin_frame(nghttp2_session *ng, const nghttp2_frame_hd *hd, void *ud)
{
    h2 *c = ud;
    bool ack = hd->flags & NGHTTP2_FLAG_ACK;
    bool idle = hd->type > NGHTTP2_CONTINUATION || hd->type == NGHTTP2_PRIORITY ||
                hd->type == NGHTTP2_WINDOW_UPDATE ||
                ((hd->type == NGHTTP2_PING || hd->type == NGHTTP2_SETTINGS) && !ack) ||
                (hd->type == NGHTTP2_DATA && !hd->length && !(hd->flags & NGHTTP2_FLAG_END_STREAM));
    if (!idle) return 0;
    size_t total = 0;
    c->idle[hd->type < H2_FRAME_KINDS ? hd->type : H2_FRAME_KINDS - 1]++;
    for (size_t k = 0; k < H2_FRAME_KINDS; k++)
        total += c->idle[k];
    if (total <= c->idle_most) return 0;
    char sent[120];
    idle_most_sent(c, sent, sizeof sent);
    fail(c, "the server flooded the HTTP/2 connection (%s): the burst gave up on it", sent);
    return NGHTTP2_ERR_CALLBACK_FAILURE;
}

static int on_frame(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
    h2 *c = ud;
    bool ack = f->hd.flags & NGHTTP2_FLAG_ACK;
    if (f->hd.type == NGHTTP2_SETTINGS && !ack) c->settings_seen = true;
    if (f->hd.type == NGHTTP2_PING && ack) c->ping_acked = true;
    if (f->hd.type == NGHTTP2_GOAWAY && !c->goaway) {
        c->goaway = true;
        c->goaway_code = f->goaway.error_code;
        c->goaway_last = f->goaway.last_stream_id;
    }
    if (f->hd.type == NGHTTP2_RST_STREAM && stream_of(ng, f->hd.stream_id)) {
        if (c->resets && f->rst_stream.error_code != c->reset_code) c->resets_differ = true;
        if (!c->resets++) c->reset_code = f->rst_stream.error_code;
    }
    if (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) return 0;
    stream *st = stream_of(ng, f->hd.stream_id);
    if (!st) return 0;
    ps_http_reply *r = st->reply;
    if (f->hd.type == NGHTTP2_HEADERS && !st->interim && r->status) r->head_done = true;
    if ((f->hd.flags & NGHTTP2_FLAG_END_STREAM) && r->state == PS_REPLY_MORE && r->head_done) {
        r->state = PS_REPLY_DONE;
        st->ex->done_wall_ns = ps_clock_wall_ns();
    }
    return 0;
}

/* A stream ended: whole, reset by the server (RST_STREAM, or above a
 * GOAWAY's last stream), or cancelled by us. */
static int on_stream_close(nghttp2_session *ng, int32_t id, uint32_t code, void *ud)
{
    stream *st = stream_of(ng, id);
    if (!st) return 0;
    st->closed = true;
    if (!st->ex->done_wall_ns) st->ex->done_wall_ns = ps_clock_wall_ns();
    if (st->reply->state != PS_REPLY_MORE) return 0;
    if (code == NGHTTP2_REFUSED_STREAM)
        reply_bad(st, "the server refused the HTTP/2 stream unprocessed (REFUSED_STREAM)");
    else
        reply_bad(st, "the server reset the HTTP/2 stream before its reply was whole (%s)",
                  nghttp2_http2_strerror(code));
    return 0;
}

/* The request body to nghttp2: all but its last byte at once, then nothing
 * (deferred) until the stream is released, then the last byte (or an
 * empty DATA frame) with END_STREAM. */
static ssize_t read_body(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    stream *st = src->ptr;
    size_t end = st->released || !st->body_len ? st->body_len : st->body_len - 1;
    size_t k = end - st->off < length ? end - st->off : length;
    if (k) memcpy(buf, st->req->body + st->off, k);
    st->off += k;
    if (st->off < end) return (ssize_t)k;
    if (!st->released) return k ? (ssize_t)k : NGHTTP2_ERR_DEFERRED;
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    st->ended = true;
    return (ssize_t)k;
}

/* --- the connection: bytes in and out ----------------------------------- */

/* Writes data whole on the TLS connection: false when it failed or the
 * deadline passed. */
static bool write_tls(h2 *c, const void *data, size_t len)
{
    size_t off = 0;
    while (off < len && !stopped(c)) {
        int w = SSL_write(c->ssl, (const char *)data + off, (int)(len - off));
        char why[sizeof c->why];
        ps_tls_io io = ps_tls_client_io(c->ssl, w, why, sizeof why);
        if (io == PS_TLS_IO_OK)
            off += (size_t)w;
        else if (io == PS_TLS_IO_EOF)
            fail(c, "the server closed the HTTP/2 connection");
        else if (io == PS_TLS_IO_ERROR)
            fail(c, "%s", why);
        else
            wait_fd(c, io == PS_TLS_IO_WANT_READ ? POLLIN : POLLOUT);
    }
    return !stopped(c);
}

/* Everything nghttp2 has to send (frames, acks, WINDOW_UPDATEs), in order. */
static void take_output(h2 *c, ps_buf *out)
{
    const uint8_t *data;
    ssize_t k;
    while ((k = nghttp2_session_mem_send(c->ng, &data)) > 0)
        ps_buf_append(out, data, (size_t)k);
    if (k < 0) fail(c, "HTTP/2: %s", nghttp2_strerror((int)k));
}

static bool flush(h2 *c)
{
    ps_buf out = PS_BUF_INIT;
    take_output(c, &out);
    bool ok = write_tls(c, out.data, out.len);
    ps_buf_free(&out);
    return ok;
}

/* Reads every byte waiting (a TLS record may hold more than the socket
 * shows) into nghttp2, which calls the stream callbacks. */
static void read_input(h2 *c)
{
    uint8_t buf[16384];
    while (!stopped(c)) {
        int got = SSL_read(c->ssl, buf, sizeof buf);
        char why[sizeof c->why];
        ps_tls_io io = ps_tls_client_io(c->ssl, got, why, sizeof why);
        if (io == PS_TLS_IO_WANT_READ || io == PS_TLS_IO_WANT_WRITE) return;
        if (io == PS_TLS_IO_EOF) fail(c, "the server closed the HTTP/2 connection");
        if (io == PS_TLS_IO_ERROR) fail(c, "%s", why);
        if (io != PS_TLS_IO_OK) return;
        ssize_t used = nghttp2_session_mem_recv(c->ng, buf, (size_t)got);
        if (used == NGHTTP2_ERR_FLOODED) {
            char sent[120];
            idle_most_sent(c, sent, sizeof sent);
            fail(c,
                 "the server flooded the HTTP/2 connection faster than its frames could be "
                 "acknowledged (%s): the burst gave up on it",
                 sent);
        }
        if (used < 0) fail(c, "HTTP/2: %s", nghttp2_strerror((int)used));
    }
}

/* What pump waits for: a flag the callbacks set, or every submitted stream
 * of ss[from, to) closed. */
typedef struct want {
    const bool *flag;
    const stream *ss;
    size_t from, to;
} want;

static bool wanted(const want *w)
{
    if (w->flag) return *w->flag;
    for (size_t i = w->from; i < w->to; i++)
        if (w->ss[i].id > 0 && !w->ss[i].closed) return false;
    return true;
}

/* Sends what is due and reads what comes until w holds: false when the
 * connection failed, the session ended, or the deadline passed first. */
static bool pump(h2 *c, const want *w)
{
    for (;;) {
        if (!flush(c)) return false;
        if (wanted(w)) return true;
        if (!nghttp2_session_want_read(c->ng) && !nghttp2_session_want_write(c->ng)) {
            fail(c, "the HTTP/2 session ended after the server's GOAWAY");
            return false;
        }
        if (!SSL_has_pending(c->ssl) && !wait_fd(c, POLLIN)) return false;
        read_input(c);
    }
}

/* --- the phases ------------------------------------------------------------ */

/* A connected TCP socket to host:port within the deadline (non-blocking,
 * TCP_NODELAY), in c->fd: false with why. */
static bool connect_tcp(h2 *c, const char *host, const char *port)
{
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_socktype = SOCK_STREAM;
    int gai = getaddrinfo(host, port, &hints, &ai);
    if (gai != 0) {
        fail(c, "cannot resolve %s: %s", host, gai_strerror(gai));
        return false;
    }
    int err = ENOENT;
    for (const struct addrinfo *a = ai; a && c->fd < 0 && !c->timed_out; a = a->ai_next) {
        c->fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (c->fd < 0) {
            err = errno;
            continue;
        }
        err = connect(c->fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
        if (err == EINPROGRESS) {
            socklen_t len = sizeof err;
            err = ETIMEDOUT;
            if (wait_fd(c, POLLOUT) && getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
                err = errno;
        }
        if (err) {
            close(c->fd);
            c->fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (c->fd < 0) {
        fail(c, "could not connect: %s", strerror(err));
        return false;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return true;
}

/* The TLS handshake offering h2 first: false with why when it failed. */
static bool handshake(h2 *c, ps_tls_client *ctx, const char *host)
{
    ps_error err;
    c->ssl = ps_tls_client_ssl(ctx, c->fd, host, NULL, &err);
    if (!c->ssl || ps_tls_client_offer_alpn(c->ssl, "h2,http/1.1") != 0) {
        fail(c, "%s", c->ssl ? "TLS: cannot offer h2 in ALPN" : err.message);
        return false;
    }
    while (!stopped(c)) {
        int r = SSL_do_handshake(c->ssl);
        char why[sizeof c->why];
        ps_tls_io io = ps_tls_client_io(c->ssl, r, why, sizeof why);
        if (io == PS_TLS_IO_OK) return true;
        if (io == PS_TLS_IO_EOF) fail(c, "TLS: the server closed the connection in the handshake");
        if (io == PS_TLS_IO_ERROR) fail(c, "%s", why);
        if (io == PS_TLS_IO_WANT_READ || io == PS_TLS_IO_WANT_WRITE)
            wait_fd(c, io == PS_TLS_IO_WANT_READ ? POLLIN : POLLOUT);
    }
    return false;
}

/* The session, its SETTINGS sent (no push, wide windows) and the server's
 * read: false with why. */
static bool start_session(h2 *c)
{
    nghttp2_session_callbacks *cb;
    if (nghttp2_session_callbacks_new(&cb) != 0) abort();
    nghttp2_session_callbacks_set_on_begin_frame_callback(cb, on_begin_frame);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    int rc = nghttp2_session_client_new(&c->ng, cb, c);
    nghttp2_session_callbacks_del(cb);
    if (rc != 0) abort();
    nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                   {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, H2_STREAM_WINDOW}};
    nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, iv, sizeof iv / sizeof iv[0]);
    nghttp2_session_set_local_window_size(c->ng, NGHTTP2_FLAG_NONE, 0, H2_CONN_WINDOW);
    want w = {.flag = &c->settings_seen};
    if (pump(c, &w)) return true;
    if (c->timed_out) fail(c, "no HTTP/2 SETTINGS from the server within the burst's time");
    return false;
}

/* Submits st's request: HEADERS without END_STREAM, its body to come. */
static void submit(h2 *c, const ps_burst_h2_target *t, stream *st)
{
    const ps_burst_request *q = st->req;
    char path[2048], clen[24];
    snprintf(path, sizeof path, "%s%s", t->prefix, q->path);
    snprintf(clen, sizeof clen, "%zu", st->body_len);
    const char *fields[][2] = {{":method", q->method},
                               {":scheme", "https"},
                               {":authority", t->authority},
                               {":path", path},
                               {"authorization", q->scheme_and_key},
                               {"accept", "application/json"},
                               {"accept-encoding", "identity"},
                               {"content-type", q->content_type},
                               {"content-length", q->body ? clen : NULL}};
    nghttp2_nv nv[sizeof fields / sizeof fields[0]];
    size_t k = 0;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (!fields[i][1]) continue;
        /* nghttp2 copies names and values; the key is never indexed (HPACK) */
        nv[k++] =
            (nghttp2_nv){(uint8_t *)(uintptr_t)fields[i][0], (uint8_t *)(uintptr_t)fields[i][1],
                         strlen(fields[i][0]), strlen(fields[i][1]),
                         i == 4 ? NGHTTP2_NV_FLAG_NO_INDEX : NGHTTP2_NV_FLAG_NONE};
    }
    nghttp2_data_provider dp = {.source.ptr = st, .read_callback = read_body};
    st->id = nghttp2_submit_request(c->ng, NULL, nv, k, &dp, st);
    if (st->id < 0) {
        snprintf(st->ex->error, sizeof st->ex->error, "sending failed: HTTP/2: %s",
                 nghttp2_strerror(st->id));
        st->id = 0;
    }
}

/* Releases ss[from, to): every stream's final frame in one write. Returns
 * the write's duration. */
static int64_t release(h2 *c, stream *ss, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        if (!ss[i].id || ss[i].closed) continue;
        ss[i].released = true;
        nghttp2_session_resume_data(c->ng, ss[i].id);
    }
    ps_buf wire = PS_BUF_INIT;
    take_output(c, &wire);
    int64_t wall = ps_clock_wall_ns();
    for (size_t i = from; i < to; i++)
        if (ss[i].released) ss[i].ex->sent_wall_ns = wall;
    int64_t t0 = ps_clock_mono_ns();
    write_tls(c, wire.data, wire.len);
    int64_t took = ps_clock_mono_ns() - t0;
    ps_buf_free(&wire);
    return took;
}

/* Sends ss[from, to) as one group: their HEADERS (and bodies but the last
 * byte), a PING whose ACK says the server has read them all, then the
 * release, then their replies. Streams the connection could not carry say
 * why. Returns the release's write duration. */
static int64_t send_group(h2 *c, const ps_burst_h2_target *t, stream *ss, size_t from, size_t to)
{
    int64_t spread = 0;
    for (size_t i = from; i < to && !stopped(c); i++)
        if (!ss[i].ex->error[0]) submit(c, t, &ss[i]);
    /* the PING in a write of its own: nghttp2 may send a PING ahead of queued
     * HEADERS, and its ACK must come after the server read them */
    flush(c);
    c->ping_acked = false;
    nghttp2_submit_ping(c->ng, NGHTTP2_FLAG_NONE, NULL);
    want ping = {.flag = &c->ping_acked};
    if (!stopped(c) && pump(c, &ping)) {
        spread = release(c, ss, from, to);
        want replies = {NULL, ss, from, to};
        pump(c, &replies);
    }
    for (size_t i = from; i < to; i++) {
        stream *st = &ss[i];
        if (st->ex->error[0] || st->closed) continue;
        if (!st->released)
            snprintf(st->ex->error, sizeof st->ex->error, "sending failed: %s",
                     c->broken ? c->why : "the burst's time ran out before the release");
        else if (c->broken && st->reply->state == PS_REPLY_MORE)
            reply_bad(st, "%s before the reply was whole", c->why);
        /* else the deadline: the reply stays incomplete, named so by the caller */
    }
    return spread;
}

/* Appends "; "-separated text to buf (size bytes, NUL-terminated). */
static void add_part(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_part(char *buf, size_t size, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len && len + 2 < size) len += (size_t)snprintf(buf + len, size - len, "; ");
    if (len + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

/* What the server did that cut the burst short, for the report: its GOAWAY
 * (code, last stream), its RST_STREAMs, a flow-control window left at zero
 * under a request's final frame, the connection's end (a flood given up,
 * a close, a TLS error), streams still open at the deadline. "" when
 * nothing did. */
static void name_peer_errors(const h2 *c, const stream *ss, size_t n, char *buf, size_t size)
{
    char code[32];
    size_t stalled = 0, open = 0;
    buf[0] = '\0';
    if (c->goaway)
        add_part(buf, size, "the server sent GOAWAY (%s, last stream %d)",
                 code_name(c->goaway_code, code, sizeof code), (int)c->goaway_last);
    if (c->resets)
        add_part(buf, size, "the server reset %zu stream%s with RST_STREAM (%s%s)", c->resets,
                 c->resets == 1 ? "" : "s", code_name(c->reset_code, code, sizeof code),
                 c->resets_differ ? " and other codes" : "");
    for (size_t i = 0; i < n; i++) {
        if (!ss[i].id || ss[i].closed) continue;
        open++;
        /* a final frame nghttp2 still holds: only a window at zero holds it */
        if (ss[i].released && !ss[i].ended &&
            (nghttp2_session_get_stream_remote_window_size(c->ng, ss[i].id) <= 0 ||
             nghttp2_session_get_remote_window_size(c->ng) <= 0))
            stalled++;
    }
    if (stalled)
        add_part(buf, size,
                 "its flow-control window stayed at zero: %zu request%s could not send %s final "
                 "frame",
                 stalled, stalled == 1 ? "" : "s", stalled == 1 ? "its" : "their");
    if (c->broken) add_part(buf, size, "%s", c->why);
    if (c->timed_out && open)
        add_part(buf, size, "%zu stream%s still open when the burst's time ran out", open,
                 open == 1 ? "" : "s");
}

int ps_burst_h2_run(const ps_burst_h2_target *t, const ps_burst_request *reqs, size_t n,
                    size_t first, const ps_tls_client_opts *tls, ps_http_reply *replies,
                    ps_exchange *out, ps_burst_stats *stats, char *why, size_t why_size)
{
    int rc = 0;
    h2 c = {.fd = -1};
    ps_tls_client *ctx = NULL;
    stream *ss = calloc(n ? n : 1, sizeof *ss);
    if (!ss) abort();
    int64_t t0 = ps_clock_mono_ns();
    c.deadline = t0 + reqs[0].timeout_ns;
    c.idle_most = H2_IDLE_FRAMES_MOST + H2_IDLE_FRAMES_PER_STREAM * n;

    /* 1: one connection, h2 picked, the server's SETTINGS read; nothing
     * sent yet, so the HTTP/1.1 form may still be used */
    ps_error err;
    if (ps_tls_client_create(tls, &ctx, &err) != 0) {
        snprintf(why, why_size, "%s", err.message);
        goto out;
    }
    if (!connect_tcp(&c, t->host, t->port) || !handshake(&c, ctx, t->host)) {
        snprintf(why, why_size, "%s",
                 c.timed_out ? "no connection within the burst's time" : c.why);
        goto out;
    }
    if (!ps_tls_client_alpn_is(c.ssl, "h2")) {
        snprintf(why, why_size, "the server did not pick h2 in ALPN");
        goto out;
    }
    if (!start_session(&c)) {
        snprintf(why, why_size, "%s", c.why);
        goto out;
    }
    /* a group released in part would not be one instant: the HTTP/1.1 form instead */
    size_t need = first > n - first ? first : n - first;
    uint32_t most =
        nghttp2_session_get_remote_settings(c.ng, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
    if (need > most) {
        snprintf(why, why_size,
                 "the server allows %u concurrent HTTP/2 streams, a group of the burst is %zu",
                 most, need);
        goto out;
    }
    rc = 1;
    stats->via = "h2";
    stats->opened = 1;
    stats->open_ns = ps_clock_mono_ns() - t0;

    /* 2: the first group released and answered, then the last requests
     * (unless a first reply was already a 429), as the HTTP/1.1 form */
    c.deadline = ps_clock_mono_ns() + reqs[0].timeout_ns;
    for (size_t i = 0; i < n; i++) {
        ss[i] = (stream){.req = &reqs[i], .reply = &replies[i], .ex = &out[i]};
        ss[i].body_len = reqs[i].body ? strlen(reqs[i].body) : 0;
    }
    if (first) stats->spread_ns[0] = send_group(&c, t, ss, 0, first);
    bool refused = false;
    for (size_t i = 0; i < first; i++)
        refused |= replies[i].state == PS_REPLY_DONE && replies[i].status == 429;
    for (size_t i = first; refused && i < n; i++)
        snprintf(out[i].error, sizeof out[i].error, "not sent: the burst was already refused");
    if (first < n) stats->spread_ns[1] = send_group(&c, t, ss, first, n);
    name_peer_errors(&c, ss, n, stats->h2_peer, sizeof stats->h2_peer);
    if (!stopped(&c)) {
        nghttp2_session_terminate_session(c.ng, NGHTTP2_NO_ERROR);
        flush(&c);
    }
out:
    if (c.ssl && !c.broken) ps_tls_client_end_clean(c.ssl);
    SSL_free(c.ssl);
    if (c.fd >= 0) close(c.fd);
    nghttp2_session_del(c.ng);
    ps_tls_client_destroy(ctx);
    free(ss);
    return rc;
}
