/* report_tap.c - TAP version 13 writer for conformance results. */
#include "reports/report_tap.h"

#include <string.h>

#include "core/buf.h"
#include "reports/report_conform_text.h"
#include "reports/report_url.h"

/* A YAML double-quoted scalar. JSON string syntax is valid YAML, and
 * ps_buf_json_string escapes every character that could end a line for some
 * reader (C0, DEL, C1, U+2028, U+2029: tap-parser splits on U+2028). */
static void yaml_str(ps_buf *b, const char *s)
{
    ps_buf_json_string(b, s ? s : "", s ? strlen(s) : 0);
}

/* Text on a TAP line (a description or a comment): no character that ends a
 * line for any reader (C0, DEL, C1 controls, U+2028, U+2029 become a space),
 * '\' and '#' escaped in descriptions ('#' would start a directive). The
 * document's strings are UTF-8 (ps_json_parse insists). */
static void line_text(ps_buf *b, const char *s, bool is_description)
{
    const unsigned char *u = (const unsigned char *)(s ? s : "");
    for (size_t i = 0; u[i]; i++) {
        unsigned char c = u[i];
        if (c < 0x20 || c == 0x7f) {
            ps_buf_putc(b, ' ');
        } else if (c == 0xc2 && u[i + 1] >= 0x80 && u[i + 1] <= 0x9f) { /* C1 */
            ps_buf_putc(b, ' ');
            i++;
        } else if (c == 0xe2 && u[i + 1] == 0x80 && (u[i + 2] == 0xa8 || u[i + 2] == 0xa9)) {
            ps_buf_putc(b, ' ');
            i += 2;
        } else if (is_description && (c == '#' || c == '\\')) {
            ps_buf_putc(b, '\\');
            ps_buf_putc(b, (char)c);
        } else {
            ps_buf_putc(b, (char)c);
        }
    }
}

/* The YAML block under a failed, warned or untested check. */
static void diagnostics(ps_buf *b, const ps_json *check, const char *severity)
{
    ps_buf_puts(b, "  ---\n  message: ");
    yaml_str(b, ps_json_get_string(check, "message", NULL));
    ps_buf_printf(b, "\n  severity: %s\n  level: ", severity);
    yaml_str(b, ps_json_get_string(check, "level", "?"));
    ps_buf_puts(b, "\n  clause: ");
    yaml_str(b, ps_json_get_string(check, "clause", ""));
    ps_buf_putc(b, '\n');
    const ps_json *ev = ps_json_get(check, "evidence");
    if (ev) {
        ps_buf text = PS_BUF_INIT;
        ps_report_conform_evidence_text(check, "", &text);
        ps_buf_puts(b, "  evidence: ");
        yaml_str(b, text.data ? text.data : "");
        ps_buf_puts(b, "\n  curl: ");
        yaml_str(b, ps_json_get_string(ev, "curl", ""));
        ps_buf_putc(b, '\n');
        ps_buf_free(&text);
    }
    ps_buf_puts(b, "  ...\n");
}

static void test_point(ps_buf *b, const ps_json *check, size_t number)
{
    const char *status = ps_json_get_string(check, "status", "not_run");
    const char *message = ps_json_get_string(check, "message", NULL);
    bool failed = strcmp(status, "failed") == 0;
    bool not_tested = ps_report_check_untested(check);
    ps_buf_printf(b, "%s %zu - ", failed || not_tested ? "not ok" : "ok", number);
    line_text(b, ps_json_get_string(check, "id", "?"), true);
    ps_buf_puts(b, ": ");
    line_text(b, ps_json_get_string(check, "title", ""), true);
    if (not_tested) {
        ps_buf_puts(b, " (could not be tested: ");
        line_text(b, message ? message : "not run", true);
        ps_buf_putc(b, ')');
    } else if (strcmp(status, "not_run") == 0) {
        ps_buf_puts(b, " # SKIP ");
        line_text(b, message ? message : "not run", true);
    }
    ps_buf_putc(b, '\n');
    if (failed)
        diagnostics(b, check, "fail");
    else if (not_tested)
        diagnostics(b, check, "not_tested");
    else if (strcmp(status, "warning") == 0)
        diagnostics(b, check, "warning");
}

int ps_report_tap_conform(const ps_json *doc, FILE *out, ps_error *err)
{
    if (!doc || doc->type != PS_JSON_OBJECT)
        return ps_error_set(err, "TAP report: the document is not a JSON object");
    ps_buf b = PS_BUF_INIT;
    const ps_json *suites = ps_json_get(doc, "suites");
    size_t total = 0;
    for (size_t s = 0; suites && suites->type == PS_JSON_ARRAY && s < suites->count; s++) {
        const ps_json *checks = ps_json_get(suites->items[s], "checks");
        if (checks && checks->type == PS_JSON_ARRAY) total += checks->count;
    }
    /* 13, not 14: Debian 12's prove (TAP::Parser 3.44) fails a version 14
     * file outright, and nothing here needs a version 14 feature. */
    ps_buf_puts(&b, "TAP version 13\n");
    ps_buf_printf(&b, "1..%zu\n", total);
    ps_buf_puts(&b, "# petstore-conform ");
    line_text(&b, ps_json_get_string(doc, "version", "?"), false);
    ps_buf_puts(&b, " against ");
    ps_buf url = PS_BUF_INIT;
    ps_report_url_redacted(&url, ps_json_get_string(ps_json_get(doc, "target"), "base_url", "?"));
    line_text(&b, url.data ? url.data : "", false);
    ps_buf_free(&url);
    ps_buf_putc(&b, '\n');
    size_t n = 0;
    for (size_t s = 0; suites && suites->type == PS_JSON_ARRAY && s < suites->count; s++) {
        const ps_json *checks = ps_json_get(suites->items[s], "checks");
        for (size_t i = 0; checks && checks->type == PS_JSON_ARRAY && i < checks->count; i++)
            test_point(&b, checks->items[i], ++n);
    }
    const char *verdict = ps_json_get_string(doc, "verdict", NULL);
    if (verdict) {
        ps_buf_puts(&b, "# verdict: ");
        line_text(&b, verdict, false);
        ps_buf_printf(&b, ", exit code %lld\n", (long long)ps_json_get_int(doc, "exit_code", -1));
    }
    const char *incomplete = ps_json_get_string(doc, "incomplete", NULL);
    if (incomplete) {
        ps_buf_puts(&b, "# incomplete: ");
        line_text(&b, incomplete, false);
        ps_buf_putc(&b, '\n');
    }
    const char *aborted = ps_json_get_string(doc, "aborted", NULL);
    if (aborted) {
        ps_buf_puts(&b, "Bail out! ");
        line_text(&b, aborted, false);
        ps_buf_putc(&b, '\n');
    }
    int rc = 0;
    if (fwrite(b.data, 1, b.len, out) != b.len || fflush(out) != 0)
        rc = ps_error_set(err, "TAP report: write failed");
    ps_buf_free(&b);
    return rc;
}
