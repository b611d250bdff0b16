/* report_junit.h - the conformance results as JUnit XML for CI systems: one
 * <testsuite> per suite, one <testcase> per check, the evidence (request,
 * response, curl line) in the failure text, <skipped> for checks not run and
 * warnings in <system-out>. Rendered from the petstore-conform JSON document.
 *
 * The document is borrowed; out is written, not closed. Returns 0, or -1
 * with err when doc is not a report object or writing failed. */
#ifndef PS_REPORT_JUNIT_H
#define PS_REPORT_JUNIT_H

#include <stdio.h>

#include "core/error.h"
#include "core/json.h"

int ps_report_junit_conform(const ps_json *doc, FILE *out, ps_error *err);

#endif
