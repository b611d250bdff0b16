/* run.h - one whole petstore-load run: checks the target is reachable,
 * starts the threads, collects per-second intervals (live progress line,
 * --hdr-log) while they run, merges after join, verifies limits, evaluates
 * thresholds and writes every requested output.
 *
 * Returns the process exit code: 0 fine, 1 a rate limit was violated, 2 a
 * usage/config/output error, 3 target unreachable, 99 a threshold failed
 * (a limit violation wins over a threshold failure: it is a correctness
 * finding, the threshold a performance one). Messages go to stderr. */
#ifndef PS_LG_RUN_H
#define PS_LG_RUN_H

#include "core/buf.h"
#include "loadgen/config.h"

enum {
    PS_LG_EXIT_OK = 0,
    PS_LG_EXIT_LIMITS = 1,
    PS_LG_EXIT_USAGE = 2,
    PS_LG_EXIT_UNREACHABLE = 3,
    PS_LG_EXIT_THRESHOLD = 99,
};

int ps_lg_run(const ps_lg_config *cfg);
/* The same, and when json is not NULL the run's JSON document is appended
 * to it (also when no --json is written): petstore-load search judges its
 * steps from it. */
int ps_lg_run_capture(const ps_lg_config *cfg, ps_buf *json);

#endif
