/* ratelimit.c - the rate-limit suites: a short burst on the main key (the
 * header rules themselves are observed on every response, see
 * every_response.c), and the 429 suite that exhausts the limit key's
 * window, checks the refusal and waits it out. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/ratelimit_headers.h"
#include "runner/suites/shapes.h"
#include "runner/suites/suites.h"

/* Consecutive list requests on the main key: enough pairs to see Remaining
 * fall and Reset hold within a window. */
#define BURST 6
/* Beyond this many requests the limit is not exhausted (use a smaller plan). */
#define MAX_EXHAUST 5000

void ps_suite_ratelimit(ps_conform *c)
{
    char auth[1024];
    ps_conform_bearer(c, PS_KEY_MAIN, auth, sizeof auth);
    ps_client_request req = {"GET", "/categories", auth, NULL, 0, NULL};
    for (int i = 0; i < BURST; i++) {
        ps_exchange ex;
        int rc = ps_conform_send(c, PS_CK_RATELIMIT_REMAINING_DECREMENTS, &req, PS_KEY_MAIN, PS_SEND_RETRY_429, &ex);
        if (rc != PS_SENT) ps_conform_no_response(c, PS_CK_RATELIMIT_REMAINING_DECREMENTS, rc, &ex);
        ps_exchange_free(&ex);
        if (rc != PS_SENT) break;
    }
}

/* The checks of the 429 itself when there is none to judge: not run (the
 * run is incomplete) when the suite could not go on, not applicable when
 * limit429.enforced failed (nothing else is to be judged then). */
static void not_run_all(ps_conform *c, bool incomplete, const char *why)
{
    static const ps_check_id ids[] = {PS_CK_LIMIT429_ERROR_BODY, PS_CK_LIMIT429_REMAINING_ZERO,
                                      PS_CK_LIMIT429_RETRY_AFTER, PS_CK_LIMIT429_RETRY_AFTER_AGREES,
                                      PS_CK_LIMIT429_RECOVERS};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        if (incomplete) ps_conform_not_run(c, ids[i], "%s", why);
        else ps_conform_not_applicable(c, ids[i], "%s", why);
    }
}

/* What the 429 itself must carry. */
static void check_refusal(ps_conform *c, const ps_exchange *ex)
{
    char why[300];
    ps_json *v = ps_conform_parse_body(ex, why, sizeof why);
    if (!v) {
        ps_conform_fail(c, PS_CK_LIMIT429_ERROR_BODY, ex, "an Error body with status 429", "the 429: %s", why);
    } else if (!ps_shape_is_error(v, why, sizeof why)) {
        ps_conform_fail(c, PS_CK_LIMIT429_ERROR_BODY, ex, "an Error body with status 429",
                        "the 429 body is not an Error: %s", why);
    } else if (ps_json_get_int(v, "status", 0) != 429) {
        ps_conform_fail(c, PS_CK_LIMIT429_ERROR_BODY, ex, "an Error body with status 429",
                        "the 429 Error says status %" PRId64, ps_json_get_int(v, "status", 0));
    } else {
        ps_conform_pass(c, PS_CK_LIMIT429_ERROR_BODY);
    }
    ps_json_free(v);

    int64_t now_s = ex->done_wall_ns / 1000000000;
    ps_rl_info rl;
    ps_rl_read(&ex->resp_headers, now_s, &rl);
    if (rl.remaining_state != PS_RL_OK || rl.limit_state != PS_RL_OK || rl.reset_state != PS_RL_OK) {
        ps_conform_fail(c, PS_CK_LIMIT429_REMAINING_ZERO, ex, "X-RateLimit-* with Remaining 0",
                        "the 429 lacks valid rate-limit headers (Remaining '%s')",
                        rl.remaining_raw ? rl.remaining_raw : "absent");
    } else if (rl.remaining != 0) {
        ps_conform_fail(c, PS_CK_LIMIT429_REMAINING_ZERO, ex, "X-RateLimit-Remaining: 0",
                        "the 429 says X-RateLimit-Remaining %" PRId64, rl.remaining);
    } else {
        ps_conform_pass(c, PS_CK_LIMIT429_REMAINING_ZERO);
    }

    if (rl.retry_after_state == PS_RL_ABSENT) {
        ps_conform_fail(c, PS_CK_LIMIT429_RETRY_AFTER, ex, "Retry-After: delay-seconds or HTTP-date",
                        "the 429 carries no Retry-After");
        ps_conform_not_applicable(c, PS_CK_LIMIT429_RETRY_AFTER_AGREES, "the 429 carries no Retry-After");
        return;
    }
    if (rl.retry_after_state != PS_RL_OK) {
        ps_conform_fail(c, PS_CK_LIMIT429_RETRY_AFTER, ex, "Retry-After: delay-seconds or HTTP-date",
                        "Retry-After '%s' is neither delay-seconds nor an HTTP-date", rl.retry_after_raw);
        ps_conform_not_applicable(c, PS_CK_LIMIT429_RETRY_AFTER_AGREES, "Retry-After is not valid");
        return;
    }
    ps_conform_pass(c, PS_CK_LIMIT429_RETRY_AFTER);
    if (rl.reset_state != PS_RL_OK) {
        ps_conform_not_applicable(c, PS_CK_LIMIT429_RETRY_AFTER_AGREES, "the 429 has no valid X-RateLimit-Reset");
        return;
    }
    /* Both name the moment admission resumes; allow whole-second rounding
     * on both sides and the exchange's own duration. */
    int64_t sent_s = ex->sent_wall_ns / 1000000000;
    int64_t lo = sent_s + (rl.retry_after_form == PS_RETRY_AFTER_DELAY ? rl.retry_after_s : 0) - 2;
    int64_t hi = now_s + (rl.retry_after_form == PS_RETRY_AFTER_DELAY ? rl.retry_after_s : 0) + 2;
    if (rl.retry_after_form == PS_RETRY_AFTER_DATE) lo = hi = rl.retry_after_unix_s, lo -= 2, hi += 2;
    if (rl.reset >= lo && rl.reset <= hi) {
        ps_conform_pass(c, PS_CK_LIMIT429_RETRY_AFTER_AGREES);
    } else {
        char exp[96];
        snprintf(exp, sizeof exp, "Retry-After ending at X-RateLimit-Reset %" PRId64 " (+-2 s)", rl.reset);
        ps_conform_fail(c, PS_CK_LIMIT429_RETRY_AFTER_AGREES, ex, exp,
                        "Retry-After '%s' ends around %" PRId64 ", X-RateLimit-Reset says %" PRId64,
                        rl.retry_after_raw, rl.retry_after_unix_s, rl.reset);
    }
}

void ps_suite_limit429(ps_conform *c)
{
    char auth[1024];
    ps_conform_bearer(c, PS_KEY_LIMIT, auth, sizeof auth);
    ps_client_request req = {"GET", "/categories", auth, NULL, 0, NULL};
    ps_exchange ex;

    /* How far to go: what the service says remains, else the plan's minute. */
    int rc = ps_conform_send(c, PS_CK_LIMIT429_ENFORCED, &req, PS_KEY_LIMIT, PS_SEND_RETRY_429, &ex);
    if (rc != PS_SENT) {
        ps_conform_no_response(c, PS_CK_LIMIT429_ENFORCED, rc, &ex);
        not_run_all(c, true, "the limit key could not be used");
        ps_exchange_free(&ex);
        return;
    }
    if (ex.status == 401) {
        ps_conform_fail(c, PS_CK_LIMIT429_ENFORCED, &ex, "2xx", "the limit key was refused with 401");
        not_run_all(c, false, "the limit key was refused (limit429.enforced failed)");
        ps_exchange_free(&ex);
        return;
    }
    ps_rl_info rl;
    ps_rl_read(&ex.resp_headers, ex.done_wall_ns / 1000000000, &rl);
    int64_t budget = 0;
    if (rl.remaining_state == PS_RL_OK) budget = rl.remaining;
    else if (ps_conform_cfg(c)->limit_plan.per_minute > 0) budget = ps_conform_cfg(c)->limit_plan.per_minute;
    else budget = 1000; /* the largest published minute limit */
    budget += 3;        /* enough to go past a limit off by one or two */
    if (budget > MAX_EXHAUST) {
        ps_conform_not_run(c, PS_CK_LIMIT429_ENFORCED,
                         "%" PRId64 " requests remain on the limit key: too many to exhaust "
                         "(give --limit-key with a free or pro key)", budget - 3);
        not_run_all(c, true, "the limit was not exhausted");
        ps_exchange_free(&ex);
        return;
    }

    bool refused = false;
    int64_t sent = 0, last_remaining = rl.remaining_state == PS_RL_OK ? rl.remaining : -1;
    int restarts = 0;
    while (sent < budget && !refused) {
        ps_exchange_free(&ex);
        rc = ps_conform_send(c, PS_CK_LIMIT429_ENFORCED, &req, PS_KEY_LIMIT, 0, &ex);
        if (rc != PS_SENT) {
            ps_conform_no_response(c, PS_CK_LIMIT429_ENFORCED, rc, &ex);
            not_run_all(c, true, "the limit was not exhausted");
            ps_exchange_free(&ex);
            return;
        }
        sent++;
        if (ex.status == 429) {
            refused = true;
            break;
        }
        /* The window ended during the burst (Remaining went back up): the
         * budget starts again from the new window, at most twice. */
        ps_rl_read(&ex.resp_headers, ex.done_wall_ns / 1000000000, &rl);
        if (rl.remaining_state == PS_RL_OK) {
            if (last_remaining >= 0 && rl.remaining > last_remaining && restarts < 2 && rl.remaining + 3 <= MAX_EXHAUST) {
                restarts++;
                budget = sent + rl.remaining + 3;
            }
            last_remaining = rl.remaining;
        }
    }
    if (!refused) {
        char exp[96];
        snprintf(exp, sizeof exp, "429 within %" PRId64 " requests", budget);
        ps_conform_fail(c, PS_CK_LIMIT429_ENFORCED, &ex, exp,
                        "%" PRId64 " requests in a row on the limit key were all admitted (last: %ld%s)", sent,
                        ex.status, restarts ? "; the window ended during the burst and the budget restarted" : "");
        not_run_all(c, false, "no 429 was obtained (limit429.enforced failed)");
        ps_exchange_free(&ex);
        return;
    }
    ps_conform_pass(c, PS_CK_LIMIT429_ENFORCED);
    check_refusal(c, &ex);
    int64_t reset_before = 0;
    ps_rl_read(&ex.resp_headers, ex.done_wall_ns / 1000000000, &rl);
    if (rl.reset_state == PS_RL_OK) reset_before = rl.reset;

    /* Recovery: ps_conform_send waits as the 429 asked (politeness), within
     * --max-wait; one request then, and no retry if it is refused again. */
    ps_exchange_free(&ex);
    rc = ps_conform_send(c, PS_CK_LIMIT429_RECOVERS, &req, PS_KEY_LIMIT, 0, &ex);
    if (rc != PS_SENT) {
        ps_conform_no_response(c, PS_CK_LIMIT429_RECOVERS, rc, &ex);
    } else if (ex.status >= 200 && ex.status < 300) {
        ps_rl_read(&ex.resp_headers, ex.done_wall_ns / 1000000000, &rl);
        if (rl.reset_state == PS_RL_OK && reset_before && rl.reset < reset_before) {
            ps_conform_fail(c, PS_CK_LIMIT429_RECOVERS, &ex, "a new window (a later X-RateLimit-Reset)",
                            "admitted again, but X-RateLimit-Reset went back from %" PRId64 " to %" PRId64,
                            reset_before, rl.reset);
        } else {
            ps_conform_pass(c, PS_CK_LIMIT429_RECOVERS);
        }
    } else {
        ps_conform_fail(c, PS_CK_LIMIT429_RECOVERS, &ex, "2xx after waiting as Retry-After said",
                        "after waiting as the 429 asked, the next request answered %ld", ex.status);
    }
    ps_exchange_free(&ex);
}
