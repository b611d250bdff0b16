/* report_tap.c - TAP 14 writer for conformance results. */
#include "reports/report_tap.h"

#include <string.h>

#include "core/buf.h"
#include "reports/report_conform_text.h"

/* A YAML double-quoted scalar: JSON string syntax is valid YAML. */
static void yaml_str(ps_buf *b, const char *s)
{
    ps_buf_json_string(b, s ? s : "", s ? strlen(s) : 0);
}

/* Description text after "ok N - ": no '#' (it starts a directive) and no
 * line breaks. */
static void description(ps_buf *b, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '#') ps_buf_puts(b, "\\#");
        else if (c < 0x20 || c == 0x7f) ps_buf_putc(b, ' ');
        else ps_buf_putc(b, (char)c);
    }
}

int ps_report_tap_conform(const ps_json *doc, FILE *out, ps_error *err)
{
    if (!doc || doc->type != PS_JSON_OBJECT) return ps_error_set(err, "TAP report: the document is not a JSON object");
    ps_buf b = PS_BUF_INIT;
    const ps_json *suites = ps_json_get(doc, "suites");
    size_t total = 0;
    for (size_t s = 0; suites && suites->type == PS_JSON_ARRAY && s < suites->count; s++) {
        const ps_json *checks = ps_json_get(suites->items[s], "checks");
        if (checks && checks->type == PS_JSON_ARRAY) total += checks->count;
    }
    ps_buf_puts(&b, "TAP version 14\n");
    ps_buf_printf(&b, "1..%zu\n", total);
    ps_buf_printf(&b, "# petstore-conform %s against %s\n", ps_report_str(doc, "version", "?"),
                  ps_report_str(ps_json_get(doc, "target"), "base_url", "?"));
    size_t n = 0;
    for (size_t s = 0; suites && suites->type == PS_JSON_ARRAY && s < suites->count; s++) {
        const ps_json *checks = ps_json_get(suites->items[s], "checks");
        for (size_t i = 0; checks && checks->type == PS_JSON_ARRAY && i < checks->count; i++) {
            const ps_json *ck = checks->items[i];
            const char *status = ps_report_str(ck, "status", "not_run");
            const char *message = ps_report_str(ck, "message", NULL);
            bool failed = strcmp(status, "failed") == 0;
            n++;
            ps_buf_printf(&b, "%s %zu - ", failed ? "not ok" : "ok", n);
            description(&b, ps_report_str(ck, "id", "?"));
            ps_buf_puts(&b, ": ");
            description(&b, ps_report_str(ck, "title", ""));
            if (strcmp(status, "not_run") == 0) {
                ps_buf_puts(&b, " # SKIP ");
                description(&b, message ? message : "not run");
            }
            ps_buf_putc(&b, '\n');
            if (failed || strcmp(status, "warning") == 0) {
                ps_buf_puts(&b, "  ---\n  message: ");
                yaml_str(&b, message);
                ps_buf_printf(&b, "\n  severity: %s\n  level: %s\n  clause: ", failed ? "fail" : "warning",
                              ps_report_str(ck, "level", "?"));
                yaml_str(&b, ps_report_str(ck, "clause", ""));
                ps_buf_putc(&b, '\n');
                const ps_json *ev = ps_json_get(ck, "evidence");
                if (ev) {
                    ps_buf text = PS_BUF_INIT;
                    ps_report_conform_evidence_text(ck, "", &text);
                    ps_buf_puts(&b, "  evidence: ");
                    yaml_str(&b, text.data ? text.data : "");
                    ps_buf_puts(&b, "\n  curl: ");
                    yaml_str(&b, ps_report_str(ev, "curl", ""));
                    ps_buf_putc(&b, '\n');
                    ps_buf_free(&text);
                }
                ps_buf_puts(&b, "  ...\n");
            }
        }
    }
    const char *aborted = ps_report_str(doc, "aborted", NULL);
    if (aborted) {
        ps_buf_puts(&b, "Bail out! ");
        description(&b, aborted);
        ps_buf_putc(&b, '\n');
    }
    int rc = 0;
    if (fwrite(b.data, 1, b.len, out) != b.len || fflush(out) != 0) rc = ps_error_set(err, "TAP report: write failed");
    ps_buf_free(&b);
    return rc;
}
