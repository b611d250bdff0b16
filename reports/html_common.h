/* html_common.h - pieces shared by the two HTML reports: the page frame and
 * CSS, escaping, and JSON accessors that tolerate missing or mistyped members.
 *
 * All functions append to a caller-owned ps_buf; nothing returned needs
 * freeing. Every text taken from a JSON document goes through ps_html_esc*. */
#ifndef PS_HTML_COMMON_H
#define PS_HTML_COMMON_H

#include <stdbool.h>
#include <stdio.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"

/* <!doctype> up to and including <body ...>; title is plain text. */
void ps_html_page_begin(ps_buf *b, const char *title, const char *report_kind);
/* ps_html_page_begin with the title "what" or "what: base_url" (base_url may be NULL). */
void ps_html_report_begin(ps_buf *b, const char *what, const char *base_url,
                          const char *report_kind);
/* Inline script (may be NULL), then </body></html>. */
void ps_html_page_end(ps_buf *b, const char *script);

/* HTML-escapes s (NULL appends nothing), the one escaper of the HTML
 * reports: control characters never reach the page raw (NUL and C1 become
 * U+FFFD, other C0 controls but tab/newline/CR and DEL their Control
 * Pictures symbol, U+2028/U+2029 character references). */
void ps_html_esc(ps_buf *b, const char *s);
void ps_html_esc_n(ps_buf *b, const char *s, size_t len);
/* Escapes a JSON string value, cutting it after max bytes (at a UTF-8
 * boundary) with a note saying how much was left out. */
void ps_html_esc_capped(ps_buf *b, const ps_json *str, size_t max);

/* Any value as readable text: strings escaped, numbers as written, true/false,
 * null as "null", arrays and objects as compact JSON; NULL (absent) as dflt. */
void ps_html_value(ps_buf *b, const ps_json *v, const char *dflt);

/* Typed member lookups: NULL / false when absent or of another type. */
const ps_json *ps_html_get(const ps_json *v, const char *key, ps_json_type type);
bool ps_html_num(const ps_json *v, const char *key, double *out);

/* Number cells: n/a when absent. ps_html_count prints integers with thin-space
 * grouping; ps_html_latency prints microseconds as µs, ms or s. */
void ps_html_count(ps_buf *b, const ps_json *obj, const char *key);
void ps_html_number(ps_buf *b, double v);
void ps_html_latency_us(ps_buf *b, double us);

/* A pass/fail/other badge carrying the verdict in data-ATTR; NULL gives "n/a". */
void ps_html_verdict_badge(ps_buf *b, const char *verdict, const char *attr);
/* The end of the header's run line: STARTED_LABEL started_at &middot;
 * TOOK_LABEL duration_s &middot; exit code, then </p></header>. */
void ps_html_run_meta_end(ps_buf *b, const ps_json *doc, const char *started_label,
                          const char *took_label);
/* <footer>: tool (default_tool when absent), version, report format. */
void ps_html_footer(ps_buf *b, const ps_json *doc, const char *default_tool);

/* Writes the buffer to out and flushes; -1 with a message on failure. */
int ps_html_write(const ps_buf *b, FILE *out, ps_error *err);

#endif
