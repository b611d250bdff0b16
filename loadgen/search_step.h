/* search_step.h - one step of `petstore-load search` (search.c), its
 * judging (search_judge.c), and the search's state its files share:
 * internal to the search. */
#ifndef PS_LG_SEARCH_STEP_H
#define PS_LG_SEARCH_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/plan.h"
#include "loadgen/config.h"

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

typedef ps_lg_step step;

/* The search's state (search.c), shared with its customers
 * (search_customers.c) and its report (search_report.c). */
typedef struct search {
    ps_lg_config cfg;
    bool cfg_ready;
    char **slos;
    size_t nslos;
    double from, to, resolution, own_rate_sum;
    bool from_given;
    int64_t step_ns;
    int64_t repeat;
    int boundary_runs; /* --boundary-runs: runs of the highest passing and
                        * lowest failing step in all */
    char *json_path, *html_path, *md_path;
    bool quiet;
    /* --customers: the mix as given (customers per plan id), one
     * customer's rate per plan, the mix's rate, and how far the keys file
     * lets the mix grow (factor of the mix as given) */
    int64_t base[PS_PLAN_UNKNOWN + 1];
    double cust_rate[PS_PLAN_UNKNOWN + 1], base_rate, max_factor;
    ps_lg_step_ask ask;
    char keys_why[300];     /* set when the keys ran out before a step failed */
    int64_t answers_needed; /* the evidence rule (plan_duration) */
    step *steps;
    size_t nsteps;
    ps_error err;
} search;

typedef struct outcome {
    const char *result;
    int exit_code;
    long best, worst; /* highest passing, lowest failing step (-1: none) */
    long doc_step;    /* whose document the report is */
} outcome;

#define PS_LG_EVIDENCE_BEYOND 10

/* search_customers.c: --customers steps (search.c's step_rate and
 * set_rate use them) */
double ps_lg_search_customers_at(const search *S, double rate, int64_t counts[PS_PLAN_UNKNOWN + 1]);
double ps_lg_search_step_rate(const search *S, double rate);
void ps_lg_search_keys_ran_out(search *S, double rate);
int ps_lg_search_setup_customers(search *S);
void ps_lg_search_customers_text(const step *st, char *out, size_t size);

/* search_report.c: the report, --json, --html and the console summary */
int ps_lg_search_build_report(const search *S, const outcome *o, ps_buf *out, ps_error *err);
int ps_lg_search_write_outputs(const search *S, const ps_buf *report, ps_error *err);

#endif
