/* report_search.h - a petstore-load search's steps (the `search` member of
 * its report, docs/report-json.md) for the console and the HTML report: the
 * step table, a latency-vs-rate curve and the result. */
#ifndef PS_REPORT_SEARCH_H
#define PS_REPORT_SEARCH_H

#include <stdio.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "reports/report_load_console.h"

/* Writes the steps in rate order, a p99-vs-rate bar chart and the result
 * line of doc's `search` member. Returns 0, or -1 with err (no member, a
 * failed write). */
int ps_report_console_search(const ps_json *doc, FILE *out, const ps_load_console_options *opts,
                             ps_error *err);

/* Appends the HTML section: result, step table, latency-vs-rate and
 * answered-vs-target plots. Nothing when search is not an object. */
void ps_report_html_search(ps_buf *b, const ps_json *search);

#endif
