/* responses.c - response bodies and rate-limit header values. */
#include "reference-server/responses.h"

#include <string.h>

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
        out->reset = now_s + window_s + (int64_t)(seq & 1);
    if (ps_fault_on(faults, PS_FAULT_RESET_RELATIVE)) out->reset = out->reset - now_s;
    if (ps_fault_on(faults, PS_FAULT_RESET_MILLISECONDS)) out->reset = out->reset * 1000;
    if (status == 429 && !ps_fault_on(faults, PS_FAULT_NO_RETRY_AFTER)) {
        out->retry_after_present = true;
        int64_t ra = d->retry_after_s > 0 ? d->retry_after_s : d->reset_unix_s - now_s;
        if (ra < 1) ra = 1;
        out->retry_after = ps_fault_on(faults, PS_FAULT_RETRY_AFTER_MISMATCH) ? 3600 : ra;
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
    if (h->retry_after_present) {
        ps_buf_append(b, "Retry-After: ", 13);
        ps_buf_put_int(b, (long long)h->retry_after);
        ps_buf_append(b, "\r\n", 2);
    }
}
