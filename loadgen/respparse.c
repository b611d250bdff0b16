/* respparse.c - response parsing with libhttp-parser, keeping only the
 * status and the rate-limit headers. */
#include "loadgen/respparse.h"

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
        snprintf(r->bad_value, sizeof r->bad_value, "%s", overflow ? "(64 bytes or more)" : value);
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

static void finish_header(ps_lg_parser *p)
{
    int f = p->field;
    p->field = 0;
    p->in_value = false;
    p->name_len = 0;
    if (!f) return;
    if (!p->value_overflow) p->value[p->value_len] = '\0';
    store(&p->resp, f, p->value, p->value_overflow, p->now_s);
}

static int on_header_field(http_parser *hp, const char *at, size_t len)
{
    ps_lg_parser *p = hp->data;
    if (p->in_value) finish_header(p);
    /* Names longer than the buffer cannot be one of ours: mark as too long. */
    if (p->name_len + len < sizeof p->name) memcpy(p->name + p->name_len, at, len);
    p->name_len += len;
    return 0;
}

static int on_header_value(http_parser *hp, const char *at, size_t len)
{
    ps_lg_parser *p = hp->data;
    if (!p->in_value) {
        p->in_value = true;
        p->field = p->name_len < sizeof p->name ? field_of(p->name, p->name_len) : 0;
        p->value_len = 0;
        p->value_overflow = false;
    }
    if (!p->field) return 0;
    if (p->value_len + len >= sizeof p->value) {
        p->value_overflow = true;
        return 0;
    }
    memcpy(p->value + p->value_len, at, len);
    p->value_len += len;
    return 0;
}

static int on_headers_complete(http_parser *hp)
{
    ps_lg_parser *p = hp->data;
    if (p->in_value) finish_header(p);
    return 0;
}

static int on_message_complete(http_parser *hp)
{
    ps_lg_parser *p = hp->data;
    p->done = true;
    p->resp.status = (int)hp->status_code;
    p->resp.keep_alive = http_should_keep_alive(hp) != 0;
    /* Stop here: anything after this response is not ours to parse. */
    http_parser_pause(hp, 1);
    return 0;
}

static const http_parser_settings settings = {
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_message_complete = on_message_complete,
};

void ps_lg_parser_start(ps_lg_parser *p, int64_t now_s)
{
    http_parser_init(&p->hp, HTTP_RESPONSE);
    p->hp.data = p;
    memset(&p->resp, 0, sizeof p->resp);
    p->now_s = now_s;
    p->done = false;
    p->fed = 0;
    p->in_value = false;
    p->field = 0;
    p->name_len = p->value_len = 0;
    p->value_overflow = false;
}

bool ps_lg_parser_started(const ps_lg_parser *p)
{
    return p->fed > 0;
}

ps_lg_parse_result ps_lg_parser_feed(ps_lg_parser *p, const char *data, size_t len, ps_error *err)
{
    if (p->done) {
        ps_error_set(err, "%zu unexpected bytes after a complete response", len);
        return PS_LG_PARSE_ERROR;
    }
    p->fed += len;
    for (;;) {
        size_t used = http_parser_execute(&p->hp, &settings, data, len);
        enum http_errno e = HTTP_PARSER_ERRNO(&p->hp);
        if (p->done) {
            int status = p->resp.status;
            if (status >= 100 && status < 200 && status != 101) {
                /* An interim response (103 Early Hints...): the final one follows. */
                size_t fed = p->fed;
                ps_lg_parser_start(p, p->now_s);
                p->fed = fed;
                data += used;
                len -= used;
                if (len == 0) return PS_LG_PARSE_MORE;
                continue;
            }
            if (status < 200 || status > 599) {
                ps_error_set(err, "HTTP status %d is not a final status (200-599)", status);
                return PS_LG_PARSE_ERROR;
            }
            if (used < len) {
                ps_error_set(err,
                             "%zu unexpected bytes after the response (no request was pipelined)",
                             len - used);
                return PS_LG_PARSE_ERROR;
            }
            return PS_LG_PARSE_DONE;
        }
        if (e != HPE_OK) {
            ps_error_set(err, "malformed HTTP response: %s (%s)", http_errno_name(e),
                         http_errno_description(e));
            return PS_LG_PARSE_ERROR;
        }
        return PS_LG_PARSE_MORE;
    }
}

ps_lg_parse_result ps_lg_parser_eof(ps_lg_parser *p, ps_error *err)
{
    if (!p->done) http_parser_execute(&p->hp, &settings, NULL, 0);
    if (p->done) {
        if (p->resp.status >= 200 && p->resp.status <= 599) return PS_LG_PARSE_DONE;
        ps_error_set(err, "HTTP status %d is not a final status (200-599)", p->resp.status);
        return PS_LG_PARSE_ERROR;
    }
    ps_error_set(err, "connection closed before the response was complete");
    return PS_LG_PARSE_ERROR;
}
