/* report_conform_text.c - evidence of a conformance check as plain text. */
#include "reports/report_conform_text.h"

#include <string.h>

void ps_report_text_clean(ps_buf *out, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        ps_buf_putc(out, (c < 0x20 && c != '\t') || c == 0x7f ? '.' : (char)c);
    }
}

/* Appends text line by line, each line prefixed; control bytes neutralised. */
static void indented(ps_buf *out, const char *indent, const char *prefix, const char *text,
                     size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || text[i] == '\n') {
            ps_buf_printf(out, "%s%s", indent, prefix);
            ps_report_text_clean(out, text + start, i - start);
            ps_buf_putc(out, '\n');
            start = i + 1;
        }
    }
}

static void headers_text(ps_buf *out, const char *indent, const char *prefix,
                         const ps_json *headers)
{
    if (!headers || headers->type != PS_JSON_ARRAY) return;
    for (size_t i = 0; i < headers->count; i++) {
        const ps_json *h = headers->items[i];
        if (h->type != PS_JSON_ARRAY || h->count != 2 || h->items[0]->type != PS_JSON_STRING ||
            h->items[1]->type != PS_JSON_STRING)
            continue;
        ps_buf_printf(out, "%s%s", indent, prefix);
        ps_report_text_clean(out, h->items[0]->str, h->items[0]->len);
        ps_buf_puts(out, ": ");
        ps_report_text_clean(out, h->items[1]->str, h->items[1]->len);
        ps_buf_putc(out, '\n');
    }
}

static void body_text(ps_buf *out, const char *indent, const char *prefix, const ps_json *body)
{
    if (!body || body->type != PS_JSON_STRING || body->len == 0) return;
    size_t n = body->len;
    bool cut = n > PS_REPORT_TEXT_BODY_MAX;
    if (cut) {
        n = PS_REPORT_TEXT_BODY_MAX;
        while (n > 0 && ((unsigned char)body->str[n] & 0xc0) == 0x80)
            n--;
    }
    indented(out, indent, prefix, body->str, n);
    if (cut)
        ps_buf_printf(out, "%s%s... (%zu bytes in the JSON report)\n", indent, prefix, body->len);
}

void ps_report_conform_evidence_text(const ps_json *check, const char *indent, ps_buf *out)
{
    const ps_json *ev = ps_json_get(check, "evidence");
    if (!ev || ev->type != PS_JSON_OBJECT) return;
    const char *expected = ps_json_get_string(ev, "expected", NULL);
    if (expected && *expected) indented(out, indent, "expected: ", expected, strlen(expected));
    const ps_json *req = ps_json_get(ev, "request");
    if (req && req->type == PS_JSON_OBJECT) {
        ps_buf m = PS_BUF_INIT;
        ps_buf_printf(&m, "%s %s", ps_json_get_string(req, "method", "?"),
                      ps_json_get_string(req, "url", "?"));
        indented(out, indent, "> ", m.data, m.len);
        ps_buf_free(&m);
        headers_text(out, indent, "> ", ps_json_get(req, "headers"));
        body_text(out, indent, "> ", ps_json_get(req, "body"));
    }
    const ps_json *resp = ps_json_get(ev, "response");
    if (resp && resp->type == PS_JSON_OBJECT) {
        const char *error = ps_json_get_string(resp, "error", NULL);
        if (error) {
            indented(out, indent, "! no response: ", error, strlen(error));
        } else {
            ps_buf_printf(out, "%s< %lld\n", indent, (long long)ps_json_get_int(resp, "status", 0));
            headers_text(out, indent, "< ", ps_json_get(resp, "headers"));
            body_text(out, indent, "< ", ps_json_get(resp, "body"));
        }
    }
    const char *curl = ps_json_get_string(ev, "curl", NULL);
    if (curl && *curl) indented(out, indent, "reproduce: ", curl, strlen(curl));
}

bool ps_report_check_untested(const ps_json *check)
{
    const ps_json *applicable = ps_json_get(check, "applicable");
    return strcmp(ps_json_get_string(check, "status", "not_run"), "not_run") == 0 && applicable &&
           applicable->type == PS_JSON_BOOL && applicable->boolean;
}
