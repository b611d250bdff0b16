/* report_tap.h - the conformance results as TAP version 13 (one test point
 * per check, a YAML diagnostic block for failures and warnings; a check that
 * applies but could not be tested is "not ok" with the reason, one that does
 * not apply a SKIP; "Bail out!" for an aborted run), rendered from the
 * petstore-conform JSON document.
 *
 * The document is borrowed; out is written, not closed. Returns 0, or -1
 * with err when doc is not a report object or writing failed. */
#ifndef PS_REPORT_TAP_H
#define PS_REPORT_TAP_H

#include <stdio.h>

#include "core/error.h"
#include "core/json.h"

int ps_report_tap_conform(const ps_json *doc, FILE *out, ps_error *err);

#endif
