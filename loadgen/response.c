/* response.c - what one response told the load generator (response.h):
 * its rate-limit fields, read off core's streaming HTTP reader. */
#include "loadgen/response.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/ratelimit_headers.h"

static int field_of(const char *name, size_t len)
{
    static const struct {
        const char *name;
        int bit;
    } wanted[] = {
        {"x-ratelimit-limit", PS_LG_H_LIMIT},
        {"x-ratelimit-remaining", PS_LG_H_REMAINING},
        {"x-ratelimit-reset", PS_LG_H_RESET},
        {"retry-after", PS_LG_H_RETRY_AFTER},
    };
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        if (strlen(wanted[i].name) == len && strncasecmp(wanted[i].name, name, len) == 0)
            return wanted[i].bit;
    return 0;
}

static void store(ps_lg_resp *r, int f, const char *value, bool overflow, int64_t now_s)
{
    int64_t v = -1;
    bool ok = false;
    if (!overflow) {
        if (f == PS_LG_H_RETRY_AFTER)
            ok = ps_retry_after_parse(value, now_s, NULL, &v, NULL);
        else
            ok = ps_rl_parse_uint(value, &v);
    }
    int64_t *slot = f == PS_LG_H_LIMIT       ? &r->limit
                    : f == PS_LG_H_REMAINING ? &r->remaining
                    : f == PS_LG_H_RESET     ? &r->reset
                                             : &r->retry_after_wait_s;
    /* A repeat with another value makes the field unusable, as
     * core/ratelimit_headers.c rules. */
    bool bad = !ok || ((r->seen & (unsigned)f) && *slot != v);
    if (bad && !r->bad_field) {
        r->bad_field = (unsigned)f;
        snprintf(r->bad_value, sizeof r->bad_value, "%.23s",
                 overflow ? "(64 bytes or more)" : value);
    }
    if (bad) r->bad |= (unsigned)f;
    *slot = v;
    r->seen |= (unsigned)f;
}

void ps_lg_resp_header(ps_lg_resp *r, const char *name, size_t name_len, const char *value,
                       size_t value_len, int64_t now_s)
{
    int f = field_of(name, name_len);
    if (!f) return;
    char buf[64];
    bool overflow = value_len >= sizeof buf;
    if (!overflow) {
        memcpy(buf, value, value_len);
        buf[value_len] = '\0';
    }
    store(r, f, buf, overflow, now_s);
}

static ps_rl_field_state state_of(const ps_lg_resp *r, unsigned f)
{
    return !(r->seen & f) ? PS_RL_ABSENT : (r->bad & f) ? PS_RL_MALFORMED : PS_RL_OK;
}

void ps_lg_resp_rl_info(const ps_lg_resp *r, ps_rl_info *out)
{
    memset(out, 0, sizeof *out);
    out->limit_state = state_of(r, PS_LG_H_LIMIT);
    out->remaining_state = state_of(r, PS_LG_H_REMAINING);
    out->reset_state = state_of(r, PS_LG_H_RESET);
    out->retry_after_state = state_of(r, PS_LG_H_RETRY_AFTER);
    out->limit = r->limit;
    out->remaining = r->remaining;
    out->reset = r->reset;
    out->retry_after_form = PS_RETRY_AFTER_DELAY;
    out->retry_after_s = r->retry_after_wait_s;
}

static void on_field(void *ctx, const char *name, size_t name_len, const char *value,
                     size_t value_len)
{
    ps_lg_reader *r = ctx;
    ps_lg_resp_header(&r->resp, name, name_len, value, value_len, r->now_s);
}

void ps_lg_reader_init(ps_lg_reader *r)
{
    memset(r, 0, sizeof *r);
    ps_http_reply_stream(&r->reply, PS_LG_HEAD_CAP, on_field, r);
}

void ps_lg_reader_free(ps_lg_reader *r)
{
    ps_http_reply_free(&r->reply);
}

void ps_lg_reader_start(ps_lg_reader *r, int64_t now_s)
{
    ps_http_reply_restart(&r->reply);
    r->reply.field_ctx = r; /* r may have moved since init */
    memset(&r->resp, 0, sizeof r->resp);
    r->now_s = now_s;
}

bool ps_lg_reader_started(const ps_lg_reader *r)
{
    return r->reply.fed > 0;
}

/* A whole response: DONE with its status and keep-alive, or ERROR when its
 * status is no final one or bytes followed it. */
static ps_lg_parse_result done(ps_lg_reader *r, ps_error *err)
{
    long status = r->reply.status;
    if (status < 200 || status > 599) {
        ps_error_set(err, "HTTP status %ld is not a final status (200-599)", status);
        return PS_LG_PARSE_ERROR;
    }
    if (r->reply.extra) {
        ps_error_set(err, "%zu unexpected bytes after the response (no request was pipelined)",
                     r->reply.extra);
        return PS_LG_PARSE_ERROR;
    }
    r->resp.status = (int)status;
    r->resp.keep_alive = r->reply.keep_alive;
    return PS_LG_PARSE_DONE;
}

ps_lg_parse_result ps_lg_reader_feed(ps_lg_reader *r, const char *data, size_t len, ps_error *err)
{
    if (r->reply.state == PS_REPLY_DONE) {
        ps_error_set(err, "%zu unexpected bytes after a complete response", len);
        return PS_LG_PARSE_ERROR;
    }
    ps_http_reply_state st = ps_http_reply_feed(&r->reply, data, len);
    if (st == PS_REPLY_DONE) return done(r, err);
    if (st == PS_REPLY_BAD) {
        ps_error_set(err, "malformed HTTP response: %s", r->reply.why);
        return PS_LG_PARSE_ERROR;
    }
    return PS_LG_PARSE_MORE;
}

ps_lg_parse_result ps_lg_reader_eof(ps_lg_reader *r, ps_error *err)
{
    ps_http_reply_state st = ps_http_reply_eof(&r->reply);
    if (st == PS_REPLY_DONE) return done(r, err);
    ps_error_set(err, "connection closed before the response was complete: %s", r->reply.why);
    return PS_LG_PARSE_ERROR;
}
