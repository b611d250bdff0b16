/* run.h - one whole conformance run: the suites in order, then the JSON
 * document of docs/report-json.md that every report writer renders from.
 *
 * Ownership: the caller owns cfg, checks and doc (a ps_buf it frees). */
#ifndef PS_RUNNER_RUN_H
#define PS_RUNNER_RUN_H

#include <stdio.h>

#include "core/buf.h"
#include "core/error.h"
#include "runner/checks.h"
#include "runner/config.h"

/* Runs the selected checks against cfg->base_url and writes the JSON report
 * into doc. Returns the process exit code (0 passed, 1 a check failed, 3 the
 * target could not be reached, the run was aborted, or it was incomplete:
 * no check failed but a selected check that applies could not be tested,
 * e.g. a 429 asked for a wait beyond --max-wait), or 2 with err set
 * when the configuration cannot be used (e.g. a malformed URL). */
int ps_conform_run(const ps_conform_config *cfg, ps_checks *checks, ps_buf *doc, ps_error *err);

struct ps_conform;
/* Writes the JSON report document of a run (docs/report-json.md) into doc;
 * exposed for the fuzz target, ps_conform_run calls it. */
void ps_conform_report_doc(const struct ps_conform *c, int exit_code, ps_buf *doc);

/* Prints the selected checks for --list (id, level, tags, title, clause). */
void ps_conform_print_list(FILE *out, const ps_checks *checks);

#endif
