/* respparse.h - incremental HTTP/1.1 response parsing for the load
 * generator's epoll engine (libhttp-parser underneath): status, keep-alive,
 * and only the headers the load test needs (X-RateLimit-Limit, -Remaining,
 * -Reset, Retry-After). Bodies are skipped, never stored, so memory per
 * connection is fixed whatever the response size.
 *
 * A ps_lg_parser is embedded by value in its owner (no allocation); it is
 * reused for every response of a connection via ps_lg_parser_start. */
#ifndef PS_LG_RESPPARSE_H
#define PS_LG_RESPPARSE_H

#include <http_parser.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

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

typedef struct ps_lg_parser {
    http_parser hp;
    ps_lg_resp resp;
    int64_t now_s; /* wall clock for Retry-After HTTP-dates */
    bool done;
    size_t fed;    /* bytes of this response seen so far */
    bool in_value; /* last callback was a header value */
    int field;     /* PS_LG_H_* of the header being read, 0 if uninteresting */
    size_t name_len, value_len;
    bool value_overflow;
    char name[24]; /* long enough for "x-ratelimit-remaining" */
    char value[64];
} ps_lg_parser;

typedef enum ps_lg_parse_result {
    PS_LG_PARSE_ERROR = -1,
    PS_LG_PARSE_MORE = 0, /* response incomplete: feed more bytes */
    PS_LG_PARSE_DONE = 1, /* one whole response read: see p->resp */
} ps_lg_parse_result;

/* Records one header field into r if it is one of the rate-limit fields
 * (name case-insensitive; value as received, surrounding white space
 * allowed). Shared with engines that parse headers themselves (curl). */
void ps_lg_resp_header(ps_lg_resp *r, const char *name, size_t name_len, const char *value,
                       size_t value_len, int64_t now_s);

/* Prepares p for the next response; now_s is the wall clock in Unix seconds. */
void ps_lg_parser_start(ps_lg_parser *p, int64_t now_s);
/* Feeds len bytes. Returns DONE when the response ended exactly at the end of
 * data (no pipelining: bytes after the response are an error), MORE, or
 * ERROR with a message naming the problem. */
ps_lg_parse_result ps_lg_parser_feed(ps_lg_parser *p, const char *data, size_t len, ps_error *err);
/* The peer closed the connection: DONE when that ends a read-until-close
 * body, else ERROR (a truncated response). */
ps_lg_parse_result ps_lg_parser_eof(ps_lg_parser *p, ps_error *err);
/* True once any byte of the current response arrived. */
bool ps_lg_parser_started(const ps_lg_parser *p);

#endif
