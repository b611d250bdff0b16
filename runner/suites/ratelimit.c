/* ratelimit.c - the rate-limit suites: a short burst on the main key (the
 * header rules themselves are observed on every response, see
 * every_response.c), and the 429 suite that exhausts the limit key's
 * window, checks the refusal and waits it out, in phases
 * (ratelimit_limit.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/suites/burst.h"
#include "runner/suites/ratelimit_judge.h"
#include "runner/suites/ratelimit_limit.h"
#include "runner/suites/suites.h"

/* Consecutive list requests on the main key: enough pairs to see Remaining
 * fall and Reset hold within a window. */
#define BURST 6

void ps_suite_ratelimit(ps_conform *c)
{
    char auth[1024];
    ps_conform_bearer(c, PS_KEY_MAIN, auth, sizeof auth);
    /* Lists, creates and an invalid create: which operations and which
     * responses are counted is observed, never assumed (spec 8 rule 4). */
    char created[96];
    snprintf(created, sizeof created, "{\"name\":\"c%s rl\"}", ps_conform_run_token(c));
    static const char invalid[] = "{\"description\":\"no name\"}";
    const ps_client_request reqs[BURST] = {
        {"GET", "/categories", auth, NULL, 0, NULL},
        {"GET", "/categories", auth, NULL, 0, NULL},
        {"POST", "/categories", auth, created, strlen(created), "application/json"},
        {"GET", "/categories", auth, NULL, 0, NULL},
        {"POST", "/categories", auth, invalid, sizeof invalid - 1, "application/json"},
        {"GET", "/categories", auth, NULL, 0, NULL},
    };
    for (int i = 0; i < BURST; i++) {
        ps_exchange ex;
        int rc = ps_conform_send(c, PS_CK_RATELIMIT_REMAINING_DECREMENTS, &reqs[i], PS_KEY_MAIN,
                                 PS_SEND_RETRY_429, &ex);
        if (rc != PS_SENT) ps_conform_no_response(c, PS_CK_RATELIMIT_REMAINING_DECREMENTS, rc, &ex);
        ps_exchange_free(&ex);
        if (rc != PS_SENT) break;
    }
}

void limit_not_run_all(ps_conform *c, bool incomplete, const char *why)
{
    static const ps_check_id ids[] = {
        PS_CK_LIMIT429_ERROR_BODY,  PS_CK_LIMIT429_REMAINING_ZERO,
        PS_CK_LIMIT429_RETRY_AFTER, PS_CK_LIMIT429_RETRY_AFTER_AGREES,
        PS_CK_LIMIT429_RECOVERS,    PS_CK_LIMIT429_REFUSED_CREATE_NOT_STORED};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        if (incomplete)
            ps_conform_not_run(c, ids[i], "%s", why);
        else
            ps_conform_not_applicable(c, ids[i], "%s", why);
    }
    /* the 429's wait against the plan's windows (ratelimit_phases.c) */
    if (incomplete)
        ps_conform_not_run(c, PS_CK_LIMIT429_RETRY_AFTER_HONOURABLE, "%s", why);
    else
        ps_conform_not_applicable(c, PS_CK_LIMIT429_RETRY_AFTER_HONOURABLE, "%s", why);
}

static void limit_ops_init(ps_conform *c, const char *auth, limit_ops *ops)
{
    memset(ops, 0, sizeof *ops);
    ops->auth = auth;
    ps_rl_key_view v;
    /* one service, one rule: what the main key showed holds for the limit key */
    bool seen = ps_ratelimit_judge_view(c, PS_KEY_MAIN, &v);
    if (seen && v.create_counted == PS_RLM_NOT_COUNTED) return;
    ops->creates_count = seen && v.create_counted == PS_RLM_COUNTED;
    ops->creates = ops->creates_count && v.list_counted == PS_RLM_NOT_COUNTED;
    ops->mix_create = !ops->creates;
}

/* A list, or a create of a category named afresh (its body written in body). */
ps_client_request limit_op(ps_conform *c, limit_ops *ops, bool create, char body[LIMIT_BODY_MAX])
{
    if (!create) return (ps_client_request){"GET", "/categories", ops->auth, NULL, 0, NULL};
    snprintf(body, LIMIT_BODY_MAX, "{\"name\":\"c%s limit %d\"}", ps_conform_run_token(c),
             ++ops->seq);
    return (ps_client_request){"POST", "/categories", ops->auth,
                               body,   strlen(body),  "application/json"};
}

/* Requests of the last burst given up on unanswered (burst.h: watched for
 * a --timeout past the burst's own, neither answered nor closed) may still
 * reach the service: through a front's queue, or an upstream's accept
 * queue that dropped its SYN (retried after 1, 3, 7 s). Counted in the next
 * burst's window they are refusals of the runner's own making (a false
 * ratelimit.no-early-refusal behind nginx, issue 27). So the next probe
 * waits one more --timeout past giving up, and then still needs a fresh
 * window: one that any of them reaching the service would have spoilt.
 * False when that wait would pass --max-wait (the suite then stops). */
static bool limit_wait_abandoned(limit_run *r)
{
    if (!r->bs.given_up) return true;
    int64_t until = r->bs.settled_wall_ns + ps_conform_cfg(r->c)->timeout_ns;
    if (ps_conform_cfg(r->c)->verbose)
        fprintf(stderr,
                "petstore-conform: %zu requests of burst %d were given up unanswered: the next "
                "waits %.1f s so that none of them reaches its window\n",
                r->bs.given_up, r->attempt, (double)(until - ps_clock_wall_ns()) / 1e9);
    return limit_wait_until(r->c, until);
}

/* The phases (ratelimit_limit.h): probe and burst until a burst is judged
 * within one window (the last one's 429s waited out before the next), then
 * count, exhaust, recover and stored-create. */
void ps_suite_limit429(ps_conform *c)
{
    limit_run *r = calloc(1, sizeof *r);
    if (!r) abort();
    r->c = c;
    ps_conform_bearer(c, PS_KEY_LIMIT, r->auth, sizeof r->auth);
    limit_ops_init(c, r->auth, &r->ops);
    r->concurrent = ps_burst_supported(ps_conform_base_url(c));
    for (r->attempt = 1;; r->attempt++) {
        if (!limit_probe_phase(r) || !limit_burst_phase(r)) goto out;
        /* --race-bursts also allows as many bursts not judged (a window that
         * may have ended while one ran) */
        int most = ps_conform_cfg(c)->race_bursts > LIMIT_BURST_ATTEMPTS
                       ? ps_conform_cfg(c)->race_bursts
                       : LIMIT_BURST_ATTEMPTS;
        bool again = limit_race_again(r);
        if (!again && ((r->held && r->whole) || r->attempt >= most)) break;
        if (r->bc.retry_until_ns && !limit_wait_until(c, r->bc.retry_until_ns)) break;
        if (!limit_wait_abandoned(r)) break;
        limit_burst_free(r);
    }
    limit_count_phase(r);
    if (!limit_exhaust_phase(r) || !limit_recover_phase(r)) goto out;
    limit_stored_create_phase(r);
out:
    limit_burst_free(r);
    ps_exchange_free(&r->refusal);
    limit_refused_creates_free(&r->refused_names);
    free(r);
}
