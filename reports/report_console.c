/* report_console.c - conformance results for people at a terminal. */
#include "reports/report_console.h"

#include <string.h>

#include "core/buf.h"
#include "reports/report_conform_text.h"

#define C_RESET "\033[0m"
#define C_RED "\033[31m"
#define C_GREEN "\033[32m"
#define C_YELLOW "\033[33m"
#define C_DIM "\033[2m"
#define C_BOLD "\033[1m"

static const char *col(const ps_console_options *o, const char *code)
{
    return o->color ? code : "";
}

/* One line of what the run met on its way (the report's "transport"). The
 * certificate's subject and the proxy are cleaned: they may hold anything. */
static void write_transport(const ps_json *t, ps_buf *b)
{
    if (!t || t->type != PS_JSON_OBJECT) return;
    const char *http = ps_json_get_string(t, "http_version", NULL);
    const char *tls = ps_json_get_string(t, "tls_version", NULL);
    const char *subject = ps_json_get_string(t, "certificate_subject", NULL);
    const char *proxy = ps_json_get_string(t, "proxy", NULL);
    const ps_json *offset = ps_json_get(t, "clock_offset_s");
    const ps_json *burst = ps_json_get(t, "burst");
    if (!http) return; /* nothing answered */
    ps_buf_printf(b, "transport: HTTP/%s", http);
    if (tls) ps_buf_printf(b, ", %s", tls);
    if (subject) {
        ps_buf_puts(b, " (certificate ");
        ps_report_text_clean(b, subject, strlen(subject));
        ps_buf_putc(b, ')');
    }
    if (proxy) {
        ps_buf_puts(b, ", proxy ");
        ps_report_text_clean(b, proxy, strlen(proxy));
    }
    ps_buf_printf(b, ", round trip %.1f ms", ps_json_get_number(t, "round_trip_ms", 0));
    if (offset && offset->type == PS_JSON_NUMBER)
        ps_buf_printf(b, ", service clock %+.1f s", ps_json_get_number(t, "clock_offset_s", 0));
    /* a clock that stepped during the run is named, never left to a check */
    int64_t steps = ps_json_get_int(t, "clock_steps", 0);
    if (steps) ps_buf_printf(b, " (stepped %lld time%s)", (long long)steps, steps == 1 ? "" : "s");
    /* one HTTP/2 connection carries the whole burst: its spread is one write's */
    if (burst && burst->type == PS_JSON_OBJECT &&
        strcmp(ps_json_get_string(burst, "via", ""), "h2") == 0)
        ps_buf_printf(
            b, "; burst via h2 (single-packet), release write %.0f us (last requests %.0f us)",
            ps_json_get_number(burst, "release_spread_us", 0),
            ps_json_get_number(burst, "crossing_spread_us", 0));
    else if (burst && burst->type == PS_JSON_OBJECT)
        ps_buf_printf(b, "; burst of %lld via %s, release spread %.0f us (last requests %.0f us)",
                      (long long)ps_json_get_int(burst, "connections", 0),
                      ps_json_get_string(burst, "via", "?"),
                      ps_json_get_number(burst, "release_spread_us", 0),
                      ps_json_get_number(burst, "crossing_spread_us", 0));
    ps_buf_putc(b, '\n');
}

/* One line naming the front that answered in the service's place (the
 * report's "fronts", runner/suites/front.h), and what that left untested. */
static void write_fronts(const ps_json *f, ps_buf *b)
{
    if (!f || f->type != PS_JSON_OBJECT) return;
    const char *who = ps_json_get_string(f, "who", "a gateway");
    const ps_json *untested = ps_json_get(f, "untested");
    ps_buf_printf(b, "front: %lld replies made by ", (long long)ps_json_get_int(f, "replies", 0));
    ps_report_text_clean(b, who, strlen(who)); /* a Server value: anything */
    ps_buf_puts(b, " in front of the service (first: ");
    const char *first = ps_json_get_string(f, "first", "");
    ps_report_text_clean(b, first, strlen(first));
    ps_buf_puts(b, "), not judged as the service's");
    for (size_t i = 0; untested && untested->type == PS_JSON_ARRAY && i < untested->count; i++) {
        const char *id = untested->items[i]->type == PS_JSON_STRING ? untested->items[i]->str : "?";
        ps_buf_printf(b, "%s%s", i ? ", " : "; left untested on them: ", id);
    }
    ps_buf_putc(b, '\n');
}

int ps_report_console_conform(const ps_json *doc, FILE *out, const ps_console_options *opts,
                              ps_error *err)
{
    static const ps_console_options dflt = {false, true};
    if (!opts) opts = &dflt;
    if (!doc || doc->type != PS_JSON_OBJECT)
        return ps_error_set(err, "console report: the document is not a JSON object");
    ps_buf b = PS_BUF_INIT;
    const ps_json *target = ps_json_get(doc, "target");
    ps_buf_printf(
        &b, "%spetstore-conform %s%s against %s (plan %s, limit plan %s%s)\n\n", col(opts, C_BOLD),
        ps_json_get_string(doc, "version", "?"), col(opts, C_RESET),
        ps_json_get_string(target, "base_url", "?"), ps_json_get_string(target, "plan", "?"),
        ps_json_get_string(target, "limit_plan", "?"),
        ps_json_get(target, "strict") && ps_json_get(target, "strict")->boolean ? ", strict" : "");

    const ps_json *suites = ps_json_get(doc, "suites");
    for (size_t s = 0; suites && suites->type == PS_JSON_ARRAY && s < suites->count; s++) {
        const ps_json *suite = suites->items[s];
        ps_buf_printf(&b, "%s%s%s\n", col(opts, C_BOLD), ps_json_get_string(suite, "name", "?"),
                      col(opts, C_RESET));
        const ps_json *checks = ps_json_get(suite, "checks");
        for (size_t i = 0; checks && checks->type == PS_JSON_ARRAY && i < checks->count; i++) {
            const ps_json *ck = checks->items[i];
            const char *status = ps_json_get_string(ck, "status", "?");
            const char *mark, *colour;
            if (strcmp(status, "passed") == 0)
                mark = "PASS", colour = C_GREEN;
            else if (strcmp(status, "failed") == 0)
                mark = "FAIL", colour = C_RED;
            else if (strcmp(status, "warning") == 0)
                mark = "WARN", colour = C_YELLOW;
            else if (ps_json_get(ck, "applicable") && !ps_json_get(ck, "applicable")->boolean)
                mark = "N/A ",
                colour =
                    C_DIM; /* not run, and nothing to judge: does not make the run incomplete */
            else
                mark = "SKIP", colour = C_DIM;
            if (!opts->show_passed && strcmp(status, "passed") == 0) continue;
            ps_buf_printf(&b, "  %s%s%s %-36s %s%s%s\n", col(opts, colour), mark,
                          col(opts, C_RESET), ps_json_get_string(ck, "id", "?"), col(opts, C_DIM),
                          ps_json_get_string(ck, "title", ""), col(opts, C_RESET));
            const char *message = ps_json_get_string(ck, "message", NULL);
            if (message && strcmp(status, "passed") != 0) {
                if (strcmp(status, "warning") == 0)
                    ps_buf_printf(&b, "       %s-level: ", ps_json_get_string(ck, "level", "?"));
                else
                    ps_buf_puts(&b, "       ");
                ps_report_text_clean(&b, message, strlen(message));
                ps_buf_putc(&b, '\n');
            }
            if (strcmp(status, "failed") == 0 || strcmp(status, "warning") == 0) {
                ps_buf_printf(&b, "       clause: %s\n", ps_json_get_string(ck, "clause", "?"));
                ps_report_conform_evidence_text(ck, "       ", &b);
            }
        }
    }
    const ps_json *sum = ps_json_get(doc, "summary");
    const char *verdict = ps_json_get_string(doc, "verdict", "?");
    const char *vcol = strcmp(verdict, "pass") == 0 ? C_GREEN : C_RED;
    /* each check counted once: not run = could not be tested (the run is
     * incomplete), not applicable = nothing to judge */
    long long warnings = (long long)ps_json_get_int(sum, "warnings", 0);
    long long not_applicable = (long long)ps_json_get_int(sum, "not_applicable", 0);
    ps_buf_printf(&b, "\n%lld checks: %lld passed, %lld failed, %lld warning%s, %lld not run",
                  (long long)ps_json_get_int(sum, "total", 0),
                  (long long)ps_json_get_int(sum, "passed", 0),
                  (long long)ps_json_get_int(sum, "failed", 0), warnings, warnings == 1 ? "" : "s",
                  (long long)ps_json_get_int(sum, "not_run", 0));
    if (not_applicable) ps_buf_printf(&b, ", %lld not applicable", not_applicable);
    ps_buf_printf(&b, " in %.2f s -> %s%s%s\n", ps_json_get_number(doc, "duration_s", 0),
                  col(opts, vcol), verdict, col(opts, C_RESET));
    write_transport(ps_json_get(doc, "transport"), &b);
    write_fronts(ps_json_get(doc, "fronts"), &b);
    const char *aborted = ps_json_get_string(doc, "aborted", NULL);
    if (aborted)
        ps_buf_printf(&b, "%saborted: %s%s\n", col(opts, C_RED), aborted, col(opts, C_RESET));
    const char *incomplete = ps_json_get_string(doc, "incomplete", NULL);
    if (incomplete) {
        ps_buf_printf(&b, "%sincomplete: ", col(opts, C_RED));
        ps_report_text_clean(&b, incomplete, strlen(incomplete)); /* it may quote server bytes */
        ps_buf_printf(&b, "%s\n", col(opts, C_RESET));
    }

    int rc = 0;
    if (fwrite(b.data, 1, b.len, out) != b.len || fflush(out) != 0)
        rc = ps_error_set(err, "console report: write failed");
    ps_buf_free(&b);
    return rc;
}
