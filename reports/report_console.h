/* report_console.h - the human-readable conformance report on a terminal,
 * rendered from the petstore-conform JSON document (docs/report-json.md).
 *
 * The document is borrowed; out is written, not closed. Returns 0, or -1
 * with err when doc is not a report object or writing failed. */
#ifndef PS_REPORT_CONSOLE_H
#define PS_REPORT_CONSOLE_H

#include <stdbool.h>
#include <stdio.h>

#include "core/error.h"
#include "core/json.h"

typedef struct ps_console_options {
    bool color;       /* ANSI colours (callers decide: a tty and no NO_COLOR) */
    bool show_passed; /* list passed checks too, not only the summary per suite */
} ps_console_options;

int ps_report_console_conform(const ps_json *doc, FILE *out, const ps_console_options *opts,
                              ps_error *err);

#endif
