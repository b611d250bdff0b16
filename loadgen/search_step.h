/* search_step.h - one step of `petstore-load search` (search.c) and its
 * judging (search_judge.c): internal to the search. */
#ifndef PS_LG_SEARCH_STEP_H
#define PS_LG_SEARCH_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/json.h"
#include "core/plan.h"

/* Share of the requests due a step must have sent (Retry-After skips and
 * requests never written are not sent), and share of its asked quota each
 * plan's customers must have been admitted, for the step to count: below
 * either, the load the step names was not offered. */
#define PS_LG_STEP_MIN_OFFERED 0.90
#define PS_LG_STEP_MIN_QUOTA_RECEIVED 0.90

typedef struct ps_lg_step {
    double rate;
    int exit_code;
    bool passed, by_generator, stop;
    char why[900];
    char *doc; /* the run's JSON document (the last repeat's) */
    double achieved, error_rate, send_rate;
    int64_t lat[5];  /* p50 p90 p99 p99_9 max, corrected, us */
    int64_t late[4]; /* lateness p50 p90 p99 max, us */
    int64_t errors;
    char gen_verdict[24];
    /* --customers: customers per plan id the step held (all 0 otherwise) */
    int64_t customers[PS_PLAN_UNKNOWN + 1];
    /* sent over due (due: sent, never sent, skipped for Retry-After) */
    double offered_share;
    /* answers the judged percentiles need (the evidence rule, search.c)
     * and answers measured */
    int64_t answers_needed, answered;
    int runs;       /* runs of this step: --repeat, and re-runs of steps the
                     * generator lost */
    int regen_runs; /* of which measured again after a run lost to the generator */
    int runs_passed;
    /* the first latency objective and its figure in each run (the knee's
     * spread) */
    char judged_expr[48];
    int64_t judged_us[24];
    int njudged;
} ps_lg_step;

/* What a step is judged against besides its document: for --customers,
 * the share of each plan's quota asked (--quota) and each plan's quota as
 * a rate for the step's customers (0: no customers of that plan). */
typedef struct ps_lg_step_ask {
    double quota;
    double plan_quota_rps[PS_PLAN_UNKNOWN + 1];
} ps_lg_step_ask;

/* Judges st from its run's document d: passed, why, by_generator, the
 * figures. ask may be NULL (no customers). */
void ps_lg_search_judge(ps_lg_step *st, const ps_json *d, const ps_lg_step_ask *ask);

#endif
