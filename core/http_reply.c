/* http_reply.c - one HTTP/1.x response read off a byte stream (see http_reply.h). */
#include "core/http_reply.h"

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

ps_http_reply_state ps_http_reply_feed(ps_http_reply *r, const char *data, size_t len)
{
    if (r->state != PS_REPLY_MORE || !len) return r->state;
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
