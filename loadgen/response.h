/* response.h - what one response told the load generator: its status,
 * keep-alive, and only the headers the load test needs (X-RateLimit-Limit,
 * -Remaining, -Reset, Retry-After), read for the epoll engine by core's one
 * HTTP reader (core/http_reply.h, streaming: bodies counted, never stored,
 * so memory per connection is fixed whatever the response size) and for the
 * curl engine from libcurl's header callback. */
#ifndef PS_LG_RESPONSE_H
#define PS_LG_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/http_reply.h"
#include "core/ratelimit_headers.h"

/* Bit per rate-limit field, for the seen/bad masks. */
enum {
    PS_LG_H_LIMIT = 1,
    PS_LG_H_REMAINING = 2,
    PS_LG_H_RESET = 4,
    PS_LG_H_RETRY_AFTER = 8,
};

/* What one response said. */
typedef struct ps_lg_resp {
    int status;
    bool keep_alive;                 /* the connection may be reused */
    unsigned seen;                   /* PS_LG_H_* present */
    unsigned bad;                    /* PS_LG_H_* malformed or repeated with different values */
    int64_t limit, remaining, reset; /* valid when seen and not bad */
    int64_t retry_after_wait_s;      /* valid when Retry-After seen and not bad */
    unsigned bad_field;              /* the PS_LG_H_* of the first bad field (0: none) */
    char bad_value[24];              /* its value as sent, truncated, for the report */
} ps_lg_resp;

/* The epoll engine's reader of one connection's responses: core's
 * streaming HTTP reader (core/http_reply.h), the rate-limit fields it hands
 * over kept in resp. Init once, start per response, free with the
 * connection. */
typedef struct ps_lg_reader {
    ps_http_reply reply;
    ps_lg_resp resp;
    int64_t now_s; /* wall clock for Retry-After HTTP-dates */
} ps_lg_reader;

/* A head larger than this makes the response an error (nothing the load
 * test reads needs more). */
#define PS_LG_HEAD_CAP ((size_t)64 << 10)

typedef enum ps_lg_parse_result {
    PS_LG_PARSE_ERROR = -1,
    PS_LG_PARSE_MORE = 0, /* response incomplete: feed more bytes */
    PS_LG_PARSE_DONE = 1, /* one whole response read: see r->resp */
} ps_lg_parse_result;

/* Records one header field into r if it is one of the rate-limit fields
 * (name case-insensitive; value as received, surrounding white space
 * allowed). Shared with engines that parse headers themselves (curl). */
void ps_lg_resp_header(ps_lg_resp *r, const char *name, size_t name_len, const char *value,
                       size_t value_len, int64_t now_s);

/* r's rate-limit fields as core's ps_rl_info (core/ratelimit_headers.h),
 * for the one computation of when to retry (ps_rl_retry_at_ns): a field
 * seen and good is PS_RL_OK, seen and bad PS_RL_MALFORMED, else absent; a
 * Retry-After (either form, already a wait from when it was read) is a
 * delay in seconds. No raw values are set. */
void ps_lg_resp_rl_info(const ps_lg_resp *r, ps_rl_info *out);

void ps_lg_reader_init(ps_lg_reader *r);
void ps_lg_reader_free(ps_lg_reader *r);
/* Prepares r for the next response; now_s is the wall clock in Unix seconds. */
void ps_lg_reader_start(ps_lg_reader *r, int64_t now_s);
/* Feeds len bytes. Returns DONE when the response ended exactly at the end of
 * data (no pipelining: bytes after the response are an error), MORE, or
 * ERROR with a message naming the problem (a final status outside 200-599
 * is one). */
ps_lg_parse_result ps_lg_reader_feed(ps_lg_reader *r, const char *data, size_t len, ps_error *err);
/* The peer closed the connection: DONE when that ends a read-until-close
 * body, else ERROR (a truncated response). */
ps_lg_parse_result ps_lg_reader_eof(ps_lg_reader *r, ps_error *err);
/* True once any byte of the current response arrived. */
bool ps_lg_reader_started(const ps_lg_reader *r);

#endif
