/* suites.h - the conformance suites, in the order a run executes them.
 *
 * Each suite sends its exchanges through ps_conform_send (so every response
 * also feeds the shared observations) and records outcomes for its checks.
 * A suite runs when any of its checks is selected; suites never fail the
 * process, they only record outcomes. The checks that exhaust a limit run
 * last, on the limit key. */
#ifndef PS_SUITES_H
#define PS_SUITES_H

#include "runner/conform.h"

/* base.url-v1 and the first contact: list.status-200, schema.list-*,
 * auth.valid-key. Returns -1 when the target cannot be reached at all
 * (c->aborted is set with the reason). */
int ps_suite_probe(ps_conform *c);
/* schema.list-is-array and schema.list-category on a list response. */
void ps_suite_check_list_body(ps_conform *c, const ps_exchange *ex);
/* auth.*: the 401 family on both operations (suites/auth_variants.def). */
void ps_suite_auth(ps_conform *c);
/* validation.*: the 400 family on create (suites/validation_payloads.def). */
void ps_suite_validation(ps_conform *c);
/* create.*, schema.created-category, roundtrip.*. */
void ps_suite_roundtrip(ps_conform *c);
/* ratelimit.*: a short burst on the main key to observe the sequences. */
void ps_suite_ratelimit(ps_conform *c);
/* limit429.*: exhausts the per-minute limit of the limit key and waits it out. */
void ps_suite_limit429(ps_conform *c);

#endif
