/* http_reply.c - one HTTP/1.x response read off a byte stream (see http_reply.h). */
#include "core/http_reply.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static ps_http_reply *of(http_parser *hp)
{
    return hp->data;
}

/* Counts n more bytes of head against the cap; false (the reply bad) past it. */
static bool head_bytes(ps_http_reply *r, size_t n)
{
    r->head_len += n;
    if (r->head_len <= r->cap) return true;
    snprintf(r->why, sizeof r->why, "the reply's head exceeds the %zu KiB kept per reply",
             r->cap >> 10);
    return false;
}

/* An interim response's (1xx but 101): the final one follows. */
static bool interim(long status)
{
    return status >= 100 && status < 200 && status != 101;
}

static void commit_field(ps_http_reply *r)
{
    if (r->name.len && r->on_field) {
        /* a value as received, less the white space around it */
        const char *v = r->value.data ? r->value.data : "";
        size_t n = r->value.len;
        while (n && (*v == ' ' || *v == '\t')) {
            v++;
            n--;
        }
        while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
            n--;
        if (!interim((long)r->hp.status_code))
            r->on_field(r->field_ctx, r->name.data, r->name.len, v, n);
    } else if (r->name.len) {
        ps_headers_add(&r->headers, r->name.data, r->name.len, r->value.data ? r->value.data : "",
                       r->value.len);
    }
    r->name.len = r->value.len = 0;
    r->in_value = false;
}

static int on_message_begin(http_parser *hp)
{
    ps_http_reply *r = of(hp);
    /* a new response: an interim one before it is forgotten */
    ps_headers_clear(&r->headers);
    r->body.len = 0;
    r->body_total = 0;
    r->name.len = r->value.len = 0;
    r->in_value = false;
    r->head_done = false;
    r->status = 0;
    return 0;
}

static int on_status(http_parser *hp, const char *at, size_t len)
{
    (void)at;
    return head_bytes(of(hp), len) ? 0 : 1;
}

static int on_header_field(http_parser *hp, const char *at, size_t len)
{
    ps_http_reply *r = of(hp);
    if (!head_bytes(r, len)) return 1;
    if (r->in_value) commit_field(r);
    ps_buf_append(&r->name, at, len);
    return 0;
}

static int on_header_value(http_parser *hp, const char *at, size_t len)
{
    ps_http_reply *r = of(hp);
    if (!head_bytes(r, len)) return 1;
    r->in_value = true;
    ps_buf_append(&r->value, at, len);
    return 0;
}

static int on_headers_complete(http_parser *hp)
{
    ps_http_reply *r = of(hp);
    commit_field(r);
    r->status = (long)hp->status_code;
    r->head_done = true;
    return 0;
}

static int on_body(http_parser *hp, const char *at, size_t len)
{
    ps_http_reply *r = of(hp);
    r->body_total += len;
    if (r->on_field) return 0; /* streaming: counted, never kept */
    size_t room = r->cap > r->head_len ? r->cap - r->head_len : 0;
    size_t keep = r->body.len < room ? room - r->body.len : 0;
    if (keep > len) keep = len;
    if (keep) ps_buf_append(&r->body, at, keep);
    r->truncated = r->body_total > r->body.len;
    return 0;
}

static int on_message_complete(http_parser *hp)
{
    ps_http_reply *r = of(hp);
    /* an interim response (103 Early Hints, an unasked 100 Continue): the
     * final one follows on the same stream */
    if (interim(r->status)) return 0;
    r->state = PS_REPLY_DONE;
    r->keep_alive = http_should_keep_alive(hp) != 0;
    http_parser_pause(hp, 1); /* what follows it is not ours */
    return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_message_begin,
    .on_status = on_status,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

void ps_http_reply_init(ps_http_reply *r, size_t cap)
{
    memset(r, 0, sizeof *r);
    http_parser_init(&r->hp, HTTP_RESPONSE);
    r->hp.data = r;
    r->cap = cap;
}

void ps_http_reply_stream(ps_http_reply *r, size_t head_cap, ps_http_field_fn fn, void *ctx)
{
    ps_http_reply_init(r, head_cap);
    r->on_field = fn;
    r->field_ctx = ctx;
}

void ps_http_reply_restart(ps_http_reply *r)
{
    http_parser_init(&r->hp, HTTP_RESPONSE);
    r->hp.data = r;
    ps_headers_clear(&r->headers);
    r->head_len = 0;
    r->status = 0;
    r->body.len = r->body_total = 0;
    r->head_done = r->truncated = r->in_value = r->keep_alive = false;
    r->state = PS_REPLY_MORE;
    r->why[0] = '\0';
    r->name.len = r->value.len = 0;
    r->fed = r->extra = 0;
}

void ps_http_reply_free(ps_http_reply *r)
{
    ps_headers_free(&r->headers);
    ps_buf_free(&r->body);
    ps_buf_free(&r->name);
    ps_buf_free(&r->value);
    memset(r, 0, sizeof *r);
}

/* After a parser stop: DONE when a message completed (or a 101 ended the
 * HTTP part), else BAD with why. */
static ps_http_reply_state settle(ps_http_reply *r)
{
    enum http_errno e = HTTP_PARSER_ERRNO(&r->hp);
    if (r->state == PS_REPLY_DONE) return r->state;
    if (e == HPE_OK && r->hp.upgrade && r->head_done) return r->state = PS_REPLY_DONE;
    if (e == HPE_OK) return r->state;
    if (!r->why[0])
        snprintf(r->why, sizeof r->why, "%s (%s)",
                 r->head_done || r->status ? "the reply is malformed" : "the reply is not HTTP/1.x",
                 http_errno_description(e));
    return r->state = PS_REPLY_BAD;
}

/* The fast path (streaming readers only): a response that arrives whole in
 * one feed, in the plain form servers send (a 2xx-5xx status line, CRLF
 * lines, token names, printable values, a Content-Length, no
 * Transfer-Encoding, Upgrade or obs-fold), is read by one scan instead of
 * http_parser's byte-at-a-time state machine and callbacks: that was two
 * thirds of the load generator's user-space instructions per request.
 * Everything it accepts http_parser accepts and reads alike (status,
 * fields, keep-alive, extra bytes, head_len); anything else, or anything
 * incomplete, goes to http_parser from the response's first byte, so
 * malformed replies are judged exactly as before. */
#define FAST_FIELDS 32

typedef struct fast_field {
    const char *name, *value;
    size_t name_len, value_len;
} fast_field;

/* Byte classes of the plain form: a field name's (RFC 9110 tchar, what
 * http_parser's token table accepts, less the space its lenient mode
 * allows), and a value's or reason's (HTAB, SP and visible ASCII). */
enum { FAST_TCHAR = 1, FAST_VCHAR = 2 };
static const unsigned char fast_class[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    2, 3, 2, 3, 3, 3, 3, 3, 2, 2, 3, 3, 2, 3, 3, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2,
    2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 3, 2, 3, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* Skips value bytes: eight at a time while all are SP or visible ASCII
 * (0x20-0x7e: no byte below 0x20, none at 0x7f or above), then one at a time. */
static const char *skip_value(const char *p, const char *end)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        if (((w - 0x20 * ones) & ~w & highs) || ((w + ones) | w) & highs) break;
        p += 8;
    }
    while (p < end && (fast_class[(unsigned char)*p] & FAST_VCHAR))
        p++;
    return p;
}

static const char *skip_name(const char *p, const char *end)
{
    while (p < end && (fast_class[(unsigned char)*p] & FAST_TCHAR))
        p++;
    return p;
}

/* Whether s (n bytes) is lower, a lower-case literal, in any case. */
static bool lower_is(const char *s, size_t n, const char *lower, size_t lower_len)
{
    if (n != lower_len) return false;
    for (size_t i = 0; i < n; i++)
        if ((s[i] | 0x20) != lower[i]) return false;
    return true;
}
#define NAME_IS(f, lit) lower_is((f)->name, (f)->name_len, lit, sizeof lit - 1)
#define VALUE_IS(f, lit) lower_is((f)->value, (f)->value_len, lit, sizeof lit - 1)

/* One field line at p (before end): fills f, returns the byte after its
 * CRLF, or NULL when the line is not in the plain form. head_len grows as
 * http_parser's callbacks would grow it (the name, and the value less its
 * leading white space). */
static const char *fast_line(const char *p, const char *end, fast_field *f, size_t *head_len)
{
    const char *name = p;
    p = skip_name(p, end);
    if (p == name || p == end || *p != ':') return NULL;
    f->name = name;
    f->name_len = (size_t)(p - name);
    p++;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    const char *value = p;
    p = skip_value(p, end);
    if (end - p < 2 || p[0] != '\r' || p[1] != '\n') return NULL;
    *head_len += f->name_len + (size_t)(p - value);
    const char *v_end = p;
    while (v_end > value && (v_end[-1] == ' ' || v_end[-1] == '\t'))
        v_end--;
    if (v_end == value) return NULL; /* an empty value: http_parser's own path */
    f->value = value;
    f->value_len = (size_t)(v_end - value);
    /* trailing white space on a field http_parser interprets: its path */
    if (v_end != p && (NAME_IS(f, "content-length") || NAME_IS(f, "connection"))) return NULL;
    return p + 2;
}

/* Reads data as one whole response, or returns false having changed nothing. */
static bool fast_feed(ps_http_reply *r, const char *data, size_t len)
{
    const char *p = data, *end = data + len;
    /* "HTTP/1.x DDD reason\r\n", final status 200-599 */
    if (len < 17 || memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1') || p[8] != ' ' ||
        p[9] < '2' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9' ||
        p[12] != ' ')
        return false;
    bool http11 = p[7] == '1';
    long status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
    if (status == 204 || status == 304) return false; /* bodiless by rule: its path */
    p += 13;
    const char *reason = p;
    p = skip_value(p, end);
    if (end - p < 2 || p[0] != '\r' || p[1] != '\n') return false;
    size_t head_len = (size_t)(p - reason);
    p += 2;

    fast_field f[FAST_FIELDS];
    int nf = 0;
    bool close = false, keep = false, have_length = false;
    unsigned long long length = 0;
    while (!(end - p >= 2 && p[0] == '\r' && p[1] == '\n')) {
        if (nf == FAST_FIELDS) return false;
        p = fast_line(p, end, &f[nf], &head_len);
        if (!p) return false;
        const fast_field *h = &f[nf++];
        if (NAME_IS(h, "content-length")) {
            if (have_length || h->value_len > 15) return false;
            for (size_t i = 0; i < h->value_len; i++) {
                if (h->value[i] < '0' || h->value[i] > '9') return false;
                length = length * 10 + (unsigned)(h->value[i] - '0');
            }
            have_length = true;
        } else if (NAME_IS(h, "connection")) {
            if (VALUE_IS(h, "close"))
                close = true;
            else if (VALUE_IS(h, "keep-alive"))
                keep = true;
            else
                return false;
        } else if (NAME_IS(h, "transfer-encoding") || NAME_IS(h, "upgrade") ||
                   NAME_IS(h, "proxy-connection")) {
            return false;
        }
    }
    p += 2;
    /* the head within the cap (head_len never exceeds the bytes), the body here whole */
    if ((size_t)(p - data) > r->cap || !have_length || length > (size_t)(end - p)) return false;

    for (int i = 0; i < nf; i++)
        r->on_field(r->field_ctx, f[i].name, f[i].name_len, f[i].value, f[i].value_len);
    r->fed += len;
    r->head_len = head_len;
    r->status = status;
    r->head_done = true;
    r->body_total = (size_t)length;
    r->keep_alive = http11 ? !close : keep;
    r->extra = (size_t)(end - p) - (size_t)length;
    r->state = PS_REPLY_DONE;
    return true;
}

ps_http_reply_state ps_http_reply_feed(ps_http_reply *r, const char *data, size_t len)
{
    if (r->state != PS_REPLY_MORE || !len) return r->state;
    if (r->on_field && !r->fed && fast_feed(r, data, len)) return r->state;
    r->fed += len;
    size_t used = http_parser_execute(&r->hp, &settings, data, len);
    if (r->state == PS_REPLY_DONE) r->extra = len - used;
    return settle(r);
}

ps_http_reply_state ps_http_reply_eof(ps_http_reply *r)
{
    if (r->state != PS_REPLY_MORE) return r->state;
    if (!r->fed) {
        snprintf(r->why, sizeof r->why, "the server closed the connection without replying");
        return r->state = PS_REPLY_BAD;
    }
    http_parser_execute(&r->hp, &settings, NULL, 0);
    if (r->state == PS_REPLY_DONE) return r->state;
    if (r->hp.upgrade && r->head_done) return r->state = PS_REPLY_DONE;
    snprintf(r->why, sizeof r->why, "the connection broke during the reply (%s cut short)",
             r->head_done ? "its body" : "its head");
    return r->state = PS_REPLY_BAD;
}
