/* checks.h - the registry of conformance checks (catalogue in
 * runner/suites/checks.def), their selection by --only/--skip, and the outcome each
 * one accumulates during a run.
 *
 * A check is not one function: several exchanges can feed it (e.g. the
 * rate-limit header checks look at every response). Each observation is a
 * pass or a failure; the first failure keeps its message and evidence. The
 * final status: failed (or warning, by level and --strict) when any failure
 * was seen, passed when at least one pass and no failure, else not_run.
 * A not-run check is either incomplete (it applies but could not be tested:
 * a rate-limit wait beyond --max-wait, no response, a reply beyond
 * --max-body; such a run is incomplete, exit 3) or not applicable (the
 * configuration or an earlier failure leaves nothing to judge, e.g.
 * limit-matches-plan when the plan's figures are unknown).
 *
 * Ownership: a ps_checks owns every string it stores; ps_checks_destroy
 * frees them. Functions taking a ps_error return 0 or -1 with a message. */
#ifndef PS_RUNNER_CHECKS_H
#define PS_RUNNER_CHECKS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

typedef enum ps_check_id {
#define PS_CHECK(en, id, level, clause, tags, title) PS_CK_##en,
#include "runner/suites/checks.def"
#undef PS_CHECK
    PS_CK_COUNT
} ps_check_id;

typedef enum ps_check_level {
    PS_LEVEL_SPEC,   /* fails the run */
    PS_LEVEL_HTTP,   /* fails under --strict, a warning otherwise */
    PS_LEVEL_ADVICE, /* reported, never fails */
} ps_check_level;

typedef enum ps_check_status {
    PS_STATUS_PASSED,
    PS_STATUS_FAILED,
    PS_STATUS_WARNING,
    PS_STATUS_NOT_RUN,
} ps_check_status;

typedef struct ps_check_def {
    ps_check_id ck;
    const char *id; /* "schema.list-is-array" */
    ps_check_level level;
    const char *clause; /* the spec (or RFC) clause it enforces */
    const char *tags;   /* comma list */
    const char *title;
} ps_check_def;

typedef struct ps_checks ps_checks;

/* The static catalogue (PS_CK_COUNT entries, in catalogue order). */
const ps_check_def *ps_check_def_get(ps_check_id ck);
const char *ps_check_level_name(ps_check_level level);    /* "spec", "http", "advice" */
const char *ps_check_status_name(ps_check_status status); /* "passed", ... */
/* The suite of a check: its id up to the dot, copied into out. */
void ps_check_suite(const ps_check_def *def, char *out, size_t out_size);

ps_checks *ps_checks_create(void); /* aborts on allocation failure, like ps_buf */
void ps_checks_destroy(ps_checks *c);

/* Selection: a check runs when it matches some --only pattern (or there is
 * none) and no --skip pattern. A pattern matches a check when it glob-matches
 * (fnmatch) its id, its suite or one of its tags. patterns is a comma list;
 * a pattern that matches no check at all is an error (a typo would otherwise
 * silently select nothing). */
int ps_checks_select(ps_checks *c, const char *only, const char *skip, ps_error *err);
bool ps_checks_selected(const ps_checks *c, ps_check_id ck);
/* True when any check whose id starts with prefix ("limit429.") is selected. */
bool ps_checks_any_selected(const ps_checks *c, const char *prefix);

/* Observations. Unselected checks ignore them. evidence_json is a JSON
 * object text (ps_conform_evidence, runner/conform.h) or NULL; it is copied. */
void ps_check_pass(ps_checks *c, ps_check_id ck);
void ps_check_fail(ps_checks *c, ps_check_id ck, const char *evidence_json, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Marks the check as not run with a reason, unless it already has outcomes:
 * it applies to this service but could not be tested (the run is then
 * incomplete). The first not-run reason (of either kind) stands. */
void ps_check_not_run(ps_checks *c, ps_check_id ck, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Marks the check as not applicable with a reason, unless it already has
 * outcomes: nothing to judge by configuration (e.g. no plan figures) or
 * because a check it builds on failed. Does not make the run incomplete. */
void ps_check_not_applicable(ps_checks *c, ps_check_id ck, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds time spent on exchanges that fed the check. */
void ps_check_add_time(ps_checks *c, ps_check_id ck, double ms);

typedef struct ps_check_outcome {
    ps_check_status status;
    unsigned passes, failures;
    const char *message;       /* first failure, or the not-run reason; may be NULL */
    const char *evidence_json; /* evidence of the first failure; may be NULL */
    double duration_ms;
    bool applicable; /* false only for a not-run check marked not applicable */
} ps_check_outcome;

/* The final outcome of a selected check under the given strictness. */
void ps_check_outcome_get(const ps_checks *c, ps_check_id ck, bool strict, ps_check_outcome *out);

#endif
