/* responses.c - response bodies and rate-limit header values. */
#include "reference-server/responses.h"

#include <string.h>
#include <time.h>

#include "core/json.h"

const char *ps_reason_phrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 413:
        return "Content Too Large";
    case 429:
        return "Too Many Requests";
    case 414:
        return "URI Too Long";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    }
    return "Unknown";
}

void ps_render_error(ps_buf *b, int status, const char *code, const char *message,
                     ps_fault_set faults)
{
    ps_buf_putc(b, '{');
    if (!ps_fault_on(faults, PS_FAULT_ERROR_MISSING_CODE)) {
        ps_buf_puts(b, "\"code\":");
        ps_buf_json_string(b, code, strlen(code));
        ps_buf_putc(b, ',');
    }
    ps_buf_puts(b, "\"message\":");
    ps_buf_json_string(b, message, strlen(message));
    ps_buf_printf(b, ",\"status\":%d}",
                  ps_fault_on(faults, PS_FAULT_ERROR_STATUS_MISMATCH) ? 400 : status);
}

void ps_render_category(ps_buf *b, int64_t id, const char *name, size_t name_len,
                        const char *description, size_t description_len, bool has_description)
{
    ps_buf_printf(b, "{\"id\":%lld,\"name\":", (long long)id);
    ps_buf_json_string(b, name, name_len);
    if (has_description) {
        ps_buf_puts(b, ",\"description\":");
        ps_buf_json_string(b, description, description_len);
    }
    ps_buf_putc(b, '}');
}

int ps_render_list_string_ids(ps_buf *b, const char *json, size_t len)
{
    ps_json *root = ps_json_parse(json, len, NULL, NULL);
    int rc = -1;
    if (!root || root->type != PS_JSON_ARRAY) goto out;
    ps_buf_putc(b, '[');
    for (size_t i = 0; i < root->count; i++) {
        const ps_json *o = root->items[i];
        if (o->type != PS_JSON_OBJECT) goto out;
        if (i) ps_buf_putc(b, ',');
        ps_buf_putc(b, '{');
        for (size_t k = 0; k < o->count; k++) {
            if (k) ps_buf_putc(b, ',');
            ps_buf_json_string(b, o->keys[k], o->key_lens[k]);
            ps_buf_putc(b, ':');
            const ps_json *v = o->items[k];
            if (v->type == PS_JSON_STRING ||
                (v->type == PS_JSON_NUMBER && strcmp(o->keys[k], "id") == 0))
                ps_buf_json_string(b, v->str, v->len); /* the id's literal, quoted */
            else if (v->type == PS_JSON_NUMBER)
                ps_buf_append(b, v->str, v->len);
            else
                goto out; /* the store renders only strings and numbers */
        }
        ps_buf_putc(b, '}');
    }
    ps_buf_putc(b, ']');
    rc = 0;
out:
    ps_json_free(root);
    return rc;
}

int ps_render_list_first(ps_buf *b, const char *json, size_t len, size_t n)
{
    if (len < 2 || json[0] != '[') return -1;
    /* the byte where item n+1 would start: a comma at depth 1, outside strings */
    int depth = 0;
    bool in_string = false, escaped = false;
    size_t items = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = json[i];
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (ch == '\\')
                escaped = true;
            else if (ch == '"')
                in_string = false;
            continue;
        }
        if (ch == '"') {
            in_string = true;
        } else if (ch == '[' || ch == '{') {
            depth++;
        } else if (ch == ']' || ch == '}') {
            depth--;
        } else if (ch == ',' && depth == 1 && ++items == n) {
            ps_buf_append(b, json, i);
            ps_buf_putc(b, ']');
            return 0;
        }
    }
    ps_buf_append(b, json, len); /* n items or fewer: all of them */
    return 0;
}

void ps_trim_ascii_space(const char **s, size_t *len)
{
    static const char space[] = " \t\r\n\f\v";
    while (*len && memchr(space, (*s)[0], sizeof space - 1))
        (*s)++, (*len)--;
    while (*len && memchr(space, (*s)[*len - 1], sizeof space - 1))
        (*len)--;
}

void ps_mangle_unicode(ps_buf *b, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            ps_buf_putc(b, (char)c);
            continue;
        }
        ps_buf_putc(b, '?');
        /* skip the continuation bytes of this sequence */
        while (i + 1 < len && ((unsigned char)s[i + 1] & 0xC0) == 0x80)
            i++;
    }
}

void ps_rate_headers_compute(const ps_limit_decision *d, int status, int64_t now_s,
                             int64_t window_s, uint64_t seq, ps_fault_set faults,
                             ps_rate_headers *out)
{
    memset(out, 0, sizeof *out);
    out->present = !(status >= 400 && status < 500 &&
                     ps_fault_on(faults, PS_FAULT_NO_RATELIMIT_HEADERS_ON_ERRORS));
    out->limit = d->limit;
    out->remaining = d->remaining < 0 ? 0 : d->remaining;
    out->reset = d->reset_unix_s;
    if (ps_fault_on(faults, PS_FAULT_LIMIT_WRONG_PLAN)) out->limit = 100;
    if (ps_fault_on(faults, PS_FAULT_REMAINING_AFTER_DECISION) && d->verdict == PS_ADMITTED &&
        out->remaining < d->limit)
        out->remaining++; /* the count before this request was added */
    if (ps_fault_on(faults, PS_FAULT_REMAINING_STATIC)) out->remaining = d->limit;
    if (ps_fault_on(faults, PS_FAULT_REMAINING_NEGATIVE) && d->verdict != PS_ADMITTED)
        out->remaining = -1;
    if (ps_fault_on(faults, PS_FAULT_RESET_UNSTABLE))
        out->reset = now_s + window_s + 2 * (int64_t)(seq & 1); /* beyond a second's rounding */
    if (ps_fault_on(faults, PS_FAULT_RESET_CLOCK_BEHIND)) out->reset -= 30; /* real seconds */
    if (ps_fault_on(faults, PS_FAULT_RESET_RELATIVE)) out->reset = out->reset - now_s;
    if (ps_fault_on(faults, PS_FAULT_RESET_MILLISECONDS)) out->reset = out->reset * 1000;
    if (ps_fault_on(faults, PS_FAULT_RESET_HOURS_LATE) && status != 429) out->reset += 3 * 3600;
    if (ps_fault_on(faults, PS_FAULT_RESET_LATE)) out->reset += 30; /* real seconds */
    if (status == 429 && !ps_fault_on(faults, PS_FAULT_NO_RETRY_AFTER)) {
        out->retry_after_present = true;
        int64_t ra = d->retry_after_s > 0 ? d->retry_after_s : d->reset_unix_s - now_s;
        if (ra < 1) ra = 1;
        out->retry_after = ps_fault_on(faults, PS_FAULT_RETRY_AFTER_MISMATCH) ? 3600 : ra;
        if (ps_fault_on(faults, PS_FAULT_RETRY_AFTER_FAR)) out->retry_after = 31536000; /* a year */
        /* a date names whole seconds: a second later, so it never falls early */
        if (ps_fault_on(faults, PS_FAULT_RETRY_AFTER_RFC850))
            out->retry_after_rfc850_at = now_s + out->retry_after + 1;
    }
}

void ps_rate_headers_render(ps_buf *b, const ps_rate_headers *h)
{
    /* once per response: integers without printf */
    if (h->present) {
        ps_buf_append(b, "X-RateLimit-Limit: ", 19);
        ps_buf_put_int(b, (long long)h->limit);
        ps_buf_append(b, "\r\nX-RateLimit-Remaining: ", 25);
        ps_buf_put_int(b, (long long)h->remaining);
        ps_buf_append(b, "\r\nX-RateLimit-Reset: ", 21);
        ps_buf_put_int(b, (long long)h->reset);
        ps_buf_append(b, "\r\n", 2);
    }
    if (h->retry_after_present && h->retry_after_rfc850_at) {
        time_t t = (time_t)h->retry_after_rfc850_at;
        struct tm tm;
        char date[64];
        gmtime_r(&t, &tm);
        /* RFC 850's two-digit year (RFC 9110 5.6.7 rfc850-date) */
        if (strftime(date, sizeof date, "%A, %d-%b-", &tm) > 0)
            ps_buf_printf(b, "Retry-After: %s%02d %02d:%02d:%02d GMT\r\n", date, tm.tm_year % 100,
                          tm.tm_hour, tm.tm_min, tm.tm_sec);
    } else if (h->retry_after_present) {
        ps_buf_append(b, "Retry-After: ", 13);
        ps_buf_put_int(b, (long long)h->retry_after);
        ps_buf_append(b, "\r\n", 2);
    }
}
