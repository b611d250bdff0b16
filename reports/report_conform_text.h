/* report_conform_text.h - plain-text pieces shared by the conformance
 * report writers (console, TAP, JUnit): a check's evidence (what was sent,
 * what came back, what was expected, the curl line) rendered from the
 * petstore-conform JSON document (docs/report-json.md).
 *
 * Everything here reads a borrowed ps_json and appends to a caller-owned
 * ps_buf; nothing fails (missing members are left out). */
#ifndef PS_REPORT_CONFORM_TEXT_H
#define PS_REPORT_CONFORM_TEXT_H

#include <stdbool.h>

#include "core/buf.h"
#include "core/json.h"

/* Bodies longer than this are cut in text reports (the JSON keeps more). */
#define PS_REPORT_TEXT_BODY_MAX 1500

/* Appends the evidence of one check object as lines, each starting with
 * indent: expected, request, response, curl. */
void ps_report_conform_evidence_text(const ps_json *check, const char *indent, ps_buf *out);

/* Appends s with control bytes (but tab) replaced by '.', so server bytes
 * cannot drive a terminal or break XML/YAML. */
void ps_report_text_clean(ps_buf *out, const char *s, size_t len);

/* Whether a check object was not run although it applies to the service:
 * it could not be tested, so no report may show it as a pass or a skip. A
 * document without "applicable" predates the distinction: false. */
bool ps_report_check_untested(const ps_json *check);

#endif
