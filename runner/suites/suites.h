/* suites.h - the conformance suites, in the order a run executes them, and
 * the observers every response goes through.
 *
 * Each suite sends its exchanges through ps_conform_send (so every response
 * also reaches ps_suite_observers) and records outcomes for its checks.
 * A suite runs when any of its checks is selected; suites never fail the
 * process, they only record outcomes. The checks that exhaust a limit run
 * last, on the limit key. */
#ifndef PS_RUNNER_SUITES_H
#define PS_RUNNER_SUITES_H

#include <stddef.h>

#include "runner/conform.h"

/* The judges of every response, whichever suite sent it (every_response.c):
 * schema.content-type-json, errors.*, and the ratelimit.* header rules and
 * sequences. A run hands this table to ps_conform_create. */
extern const ps_observer ps_suite_observers[];
extern const size_t ps_suite_observer_count;

/* base.url-v1 and the first contact: list.status-200, schema.list-*,
 * auth.valid-key. Returns -1 when the target cannot be reached at all
 * (the run is aborted with the reason). */
int ps_suite_probe(ps_conform *c);
/* schema.list-is-array and schema.list-category on a list response. */
void ps_suite_check_list_body(ps_conform *c, const ps_exchange *ex);
/* auth.*: the 401 family on both operations (auth_variants.def). */
void ps_suite_auth(ps_conform *c);
/* validation.*: the 400 family on create (validation_payloads.def). */
void ps_suite_validation(ps_conform *c);
/* create.*, schema.created-category, roundtrip.*. */
void ps_suite_roundtrip(ps_conform *c);
/* ratelimit.*: a short burst on the main key to observe the sequences. */
void ps_suite_ratelimit(ps_conform *c);
/* limit429.*: exhausts the per-minute limit of the limit key and waits it out. */
void ps_suite_limit429(ps_conform *c);
/* generate.*: the generative phase (seeded requests judged by the clause
 * each names, shrunk on failure), concurrent creates and a list beyond
 * common page sizes, within --examples, --generate-time and --create-budget.
 * Runs after limit429: it must not spend the window the limit suite needs. */
void ps_suite_generate(ps_conform *c);
/* http.date-present, http.retry-after-imf-fixdate: not applicable when no
 * response of the run gave them something to judge (run.c, at the end). */
void ps_suite_http_dates_finish(ps_conform *c);
/* The observer of those two (http_dates.c), an entry of ps_suite_observers. */
void ps_http_dates_observe(ps_conform *c, void *state, const ps_observation *o);
/* After the suites: ratelimit.service-clock from every Date the run read
 * (the offset every time-based check was judged in, conform.h). */
void ps_suite_clock_finish(ps_conform *c);
/* ratelimit.reset-not-past (reset_past.c): its observer, an entry of
 * ps_suite_observers, and its not-applicable reason when nothing was
 * counted under a Reset naming a time (run.c, at the end). */
/* limit429.every-operation (ratelimit_crossing.c), after the limit suite:
 * the limit key crosses its limit with creates and with 400s, where the
 * headers leave open whether they count. */
void ps_suite_limit429_crossing(ps_conform *c);
#define PS_RESET_PAST_STATE_SIZE 96
void ps_reset_past_observe(ps_conform *c, void *state, const ps_observation *o);
void ps_suite_reset_past_finish(ps_conform *c);

#endif
