/* report_markdown.h - GitHub-flavoured Markdown summaries (--summary-md),
 * for a CI job's summary page ($GITHUB_STEP_SUMMARY, a merge request note):
 * the verdict, the counts, and what failed, rendered from the program's
 * JSON summary (docs/report-json.md) so they never disagree with --json.
 *
 * The document is borrowed, never modified; out is written, not closed.
 * Every string taken from doc is escaped for Markdown (server replies are
 * untrusted: no byte of theirs can open a link, an HTML tag or a table
 * cell, or end a code block early); keys appear only as the reports
 * already hold them (redacted, ${PETSTORE_API_KEY} in curl lines).
 *
 * Both return 0, or -1 with err (if non-NULL) when doc is NULL or not an
 * object, or writing to out failed. Missing members are left out. */
#ifndef PS_REPORT_MARKDOWN_H
#define PS_REPORT_MARKDOWN_H

#include <stdio.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"

/* petstore-conform: verdict, target, counts; a table of the failed checks
 * (id, level, clause, message) and of the warnings; the checks not tested
 * and why; each failed check's curl line to reproduce it. */
int ps_report_md_conform(const ps_json *doc, FILE *out, ps_error *err);

/* petstore-load: verdict, target and model, counts and rates, latency
 * percentiles, thresholds, the limit verification (verdict, violations),
 * and, from `petstore-load search` (a `search` member), the knee (the
 * highest rate measured passing), the objectives and every step. */
int ps_report_md_load(const ps_json *doc, FILE *out, ps_error *err);

/* Appends s[len] as Markdown inline text: ASCII punctuation that could
 * start markup is backslash-escaped, control bytes and line breaks become
 * spaces, so it stays one table cell or one line. */
void ps_md_text(ps_buf *b, const char *s, size_t len);

#endif
