/* report_load_console.h - the petstore-load summary for people at a
 * terminal, rendered from the load --json document (docs/report-json.md), so
 * the console says what the JSON and the HTML report say.
 *
 * The document is borrowed; out is written, not closed. */
#ifndef PS_REPORT_LOAD_CONSOLE_H
#define PS_REPORT_LOAD_CONSOLE_H

#include <stdbool.h>
#include <stdio.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"

typedef struct ps_load_console_options {
    bool color; /* ANSI colours (callers decide, ps_cli_color_enabled) */
    bool utf8;  /* ✓/✗ and µs; false: PASS/FAIL and us (ps_console_locale_utf8) */
    /* One line the document does not hold (the first failed request's
     * reason), printed after the latencies; NULL: none. */
    const char *first_failure;
} ps_load_console_options;

/* True when the locale that decides the terminal's character set (the first
 * of LC_ALL, LC_CTYPE, LANG that is set and not empty) names UTF-8; unset,
 * "C" or "POSIX" is not UTF-8, so the summary falls back to words. */
bool ps_console_locale_utf8(void);

/* One threshold of the document's thresholds[] as the console shows it, k6
 * style: "✓ p99<200ms  p99=12.3ms" (utf8) or "PASS p99<200ms  p99=12.3ms",
 * the expression padded to width. Appends to b, no newline. */
void ps_report_load_threshold_line(ps_buf *b, const ps_json *threshold, int width,
                                   const ps_load_console_options *opts);

/* Writes the summary: requests and rates (sent against the target, due,
 * skipped for Retry-After), answers, 429s, errors, latency, limits,
 * violations, thresholds and an exit-3 verdict. opts NULL: no colour, no
 * UTF-8. Returns 0, or -1 with err when doc is not an object or writing
 * failed. */
int ps_report_console_load(const ps_json *doc, FILE *out, const ps_load_console_options *opts,
                           ps_error *err);

#endif
