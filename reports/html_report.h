/* html_report.h - self-contained HTML reports (inline CSS and SVG, no fetches).
 *
 * Both writers render from the program's JSON summary (docs/report-json.md)
 * as parsed by ps_json_parse, so the HTML never disagrees with --json. The
 * document is borrowed, never modified; out is written to but not closed.
 *
 * Every string taken from doc is HTML-escaped (server replies are untrusted).
 * Missing or mistyped members are tolerated: they show as "n/a" or the section
 * is left out, so a partial document still yields a readable page.
 *
 * Both return 0, or -1 with err (if non-NULL) naming the failure: doc is NULL
 * or not a JSON object, or writing to out failed.
 *
 * The pages work from a file:// URL with no network: CSS and SVG are inline,
 * the conformance page's few lines of script add the status filter, and links
 * ending in #show=failed,warning (pre-filtered) or #CHECK-ID (that check
 * opened) work too. Plots carry their data as attributes (see svg.h) so tests
 * and scripts can read the numbers back; latency table cells carry data-us. */
#ifndef PS_HTML_REPORT_H
#define PS_HTML_REPORT_H

#include <stdio.h>

#include "core/error.h"
#include "core/json.h"

/* Conformance report from a petstore-conform --json document. */
int ps_report_html_conform(const ps_json *doc, FILE *out, ps_error *err);

/* Load report from a petstore-load --json document. */
int ps_report_html_load(const ps_json *doc, FILE *out, ps_error *err);

#endif
