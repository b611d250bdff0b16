/* http_reply.h - reading one HTTP/1.x response off a byte stream into its
 * status, header fields and body, with libhttp-parser underneath: the one
 * reader of responses that arrive on the project's own sockets (the
 * runner's burst, the load generator's epoll engine; the server's requests
 * are read with the same library).
 *
 * Read as libcurl reads a reply: interim 1xx responses before the final one
 * skipped (RFC 9110 15.2), a 101 final (no upgrade is asked for), bare-LF
 * line ends accepted (RFC 9112 2.2), the body framed by Content-Length, by
 * chunks, or by the close.
 *
 * A streaming reader (ps_http_reply_stream) keeps nothing: each field of
 * the final response goes to a callback and the body is only counted, so a
 * connection's reader has fixed memory whatever the responses, and is
 * restarted for the next response on it (ps_http_reply_restart). A
 * response that reaches a streaming reader whole in one feed, in the plain
 * form servers send, is read by one scan rather than by http_parser (which
 * reads everything else, from the response's first byte): the same fields,
 * status, keep-alive and extra bytes either way, at a third of the cost.
 *
 * Memory is bounded by the reader's cap: a head larger than the cap makes
 * the reply bad ("the head exceeds ..."); a body past what the cap leaves is
 * counted and dropped (truncated), so a reply of endless headers or an
 * endless body costs at most cap bytes.
 *
 * Ownership: a ps_http_reply owns its headers and body until
 * ps_http_reply_free (safe on a zeroed reader). */
#ifndef PS_HTTP_REPLY_H
#define PS_HTTP_REPLY_H

#include <http_parser.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/http_headers.h"

typedef enum ps_http_reply_state {
    PS_REPLY_MORE = 0, /* not all of it yet: feed more, or the close */
    PS_REPLY_DONE = 1, /* the final response is whole */
    PS_REPLY_BAD = -1, /* not HTTP/1.x, malformed, or its head over the cap: see why */
} ps_http_reply_state;

/* A field of the final response, as received (name without the colon,
 * value without surrounding white space). */
typedef void (*ps_http_field_fn)(void *ctx, const char *name, size_t name_len, const char *value,
                                 size_t value_len);

typedef struct ps_http_reply {
    http_parser hp;
    ps_http_field_fn on_field; /* streaming: fields go here, none kept; NULL: kept in headers */
    void *field_ctx;
    bool keep_alive;    /* once DONE: the connection may carry another request */
    size_t extra;       /* once DONE: bytes fed after the final response, not read */
    size_t cap;         /* bytes of head and body kept at most */
    size_t head_len;    /* bytes of the final response's head read */
    long status;        /* the final response's, once its head is read */
    ps_headers headers; /* the final response's fields */
    ps_buf body;        /* as much of its body as the cap leaves */
    size_t body_total;  /* every body byte, kept or not */
    bool head_done;     /* the final response's head was read */
    bool truncated;     /* body_total > body.len */
    ps_http_reply_state state;
    char why[160]; /* what made it bad */
    /* the field being read */
    ps_buf name, value;
    bool in_value;
    size_t fed; /* bytes fed so far */
} ps_http_reply;

/* Prepares r to read one reply, keeping at most cap bytes of it. */
void ps_http_reply_init(ps_http_reply *r, size_t cap);
/* Prepares r to read replies streaming: each field of the final response
 * to fn(ctx, ...), the body counted (body_total) but never kept, a head
 * over head_cap bad. */
void ps_http_reply_stream(ps_http_reply *r, size_t head_cap, ps_http_field_fn fn, void *ctx);
/* Prepares r for the next reply on the same connection: its mode, cap and
 * buffers are kept (no allocation once the first reply was read). */
void ps_http_reply_restart(ps_http_reply *r);
void ps_http_reply_free(ps_http_reply *r);
/* Feeds the next len bytes. Returns the state: DONE once the final
 * response is whole (bytes after it are ignored), BAD with r->why. */
ps_http_reply_state ps_http_reply_feed(ps_http_reply *r, const char *data, size_t len);
/* The connection closed: DONE when that ends a body read to the close,
 * else BAD with r->why saying what was cut short (or that nothing came). */
ps_http_reply_state ps_http_reply_eof(ps_http_reply *r);

#endif
