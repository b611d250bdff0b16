/* ratelimit_crossing.c - limit429.every-operation: where the headers leave
 * open whether creates or 4xx answers count (the judge saw Remaining hold
 * for them, or never saw one), the limit key crosses its limit with each of
 * them, one request at a time, within --create-budget (a 400 costs
 * nothing). A service that counts them is bound by what its headers said: a
 * 429 while the previous response said Remaining 1 or more fails (spec 8
 * rules 1-2), whatever was sent; one that does not count them admits every
 * one. Runs after the limit suite, on the key it recovered. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/ratelimit_headers.h"
#include "core/ratelimit_model.h"
#include "runner/suites/ratelimit_judge.h"
#include "runner/suites/suites.h"

/* Creates the generative phase still needs after this (its concurrent burst and a margin). */
#define CREATE_RESERVE 16
/* The most requests one crossing sends: a Business key's minute and one more. */
#define MAX_CROSSING 1001
/* Windows a crossing may start in: a window that ends before the limit is
 * crossed (a short one, or a real one near its end) is left for the next. */
#define ATTEMPTS 2

typedef struct crossing {
    ps_conform *c;
    bool create;     /* creates, else creates refused with 400 (no name) */
    int64_t limit;   /* the limit key's Limit, from its last response */
    int64_t reset_s; /* and Reset, in the service's clock (0: none named) */
    unsigned sent;   /* requests this crossing sent */
    char why[300];   /* why it stopped without a verdict */
} crossing;

/* Reads the limit key's Limit and Reset out of ex (false: no Limit). */
static bool note_headers(crossing *x, const ps_exchange *ex)
{
    ps_rl_info rl;
    int64_t sent_s = ps_conform_service_ns(x->c, ex->sent_wall_ns) / 1000000000;
    ps_rl_read(&ex->resp_headers, sent_s, &rl);
    if (!ps_ratelimit_reset_time(&rl, sent_s, &x->reset_s)) x->reset_s = 0;
    if (rl.limit_state != PS_RL_OK) return false;
    x->limit = rl.limit;
    return true;
}

/* A window of 2 s or less (a time-scaled one) is waited for, so the
 * crossing starts as it opens; a longer one is used as it stands. */
static bool await_window(crossing *x)
{
    int64_t now = ps_conform_service_ns(x->c, ps_clock_wall_ns());
    int64_t free_at = ps_conform_key_free_at(x->c, PS_KEY_LIMIT);
    int64_t until = x->reset_s > 0 && x->reset_s * 1000000000LL - now <= 2000000000LL
                        ? x->reset_s * 1000000000LL - ps_conform_wait_offset_ns(x->c) + 50000000
                        : 0;
    if (free_at > until) until = free_at;
    if (until - ps_clock_wall_ns() > ps_conform_cfg(x->c)->max_wait_ns) {
        snprintf(x->why, sizeof x->why,
                 "the limit key is not free for %.1f s, more than --max-wait %.1f s",
                 (double)(until - ps_clock_wall_ns()) / 1e9,
                 (double)ps_conform_cfg(x->c)->max_wait_ns / 1e9);
        return false;
    }
    while (ps_clock_wall_ns() < until && !ps_conform_interrupted)
        ps_clock_sleep_ns(20000000);
    return !ps_conform_interrupted;
}

/* One attempt: up to Limit + 1 requests; 1 a verdict was recorded, 0 the
 * window ended first (try again), -1 stopped (x->why). */
static int cross_once(crossing *x, unsigned creates_left)
{
    ps_conform *c = x->c;
    const ps_check_id ck = PS_CK_LIMIT429_EVERY_OPERATION;
    char auth[1024], body[96];
    ps_conform_bearer(c, PS_KEY_LIMIT, auth, sizeof auth);
    int64_t prev_remaining = -1, prev_reset = 0;
    long prev_status = 0;
    for (int64_t i = 0; i <= x->limit; i++) {
        if (x->create && (unsigned)i >= creates_left) {
            snprintf(x->why, sizeof x->why,
                     "--create-budget leaves %u creates: the limit (%" PRId64
                     ") was not crossed with creates",
                     creates_left, x->limit);
            return -1;
        }
        if (x->create)
            snprintf(body, sizeof body, "{\"name\":\"c%s cross %u\"}", ps_conform_run_token(c),
                     x->sent);
        else
            snprintf(body, sizeof body, "{\"description\":\"c%s cross %u, no name\"}",
                     ps_conform_run_token(c), x->sent);
        ps_client_request req = {"POST", "/categories", auth,
                                 body,   strlen(body),  "application/json"};
        ps_exchange ex;
        int rc = ps_conform_send(c, ck, &req, PS_KEY_LIMIT, 0, &ex);
        x->sent++;
        if (rc != PS_SENT) {
            snprintf(x->why, sizeof x->why, "a request of the crossing got no response: %.200s",
                     rc == PS_SEND_SKIPPED ? "not sent" : ex.error);
            ps_exchange_free(&ex);
            return -1;
        }
        bool have = note_headers(x, &ex);
        ps_rl_info rl;
        ps_rl_read(&ex.resp_headers, 0, &rl);
        if (ex.status == 429) {
            int verdict = 1;
            if (!prev_status) {
                snprintf(x->why, sizeof x->why, "the crossing's first request was refused (429)");
                verdict = -1;
            } else if (prev_remaining >= 1) {
                ps_conform_fail(
                    c, ck, &ex, "an admission: the previous response said requests remain",
                    "%s on the limit key: a 429 came right after a %ld response that said "
                    "X-RateLimit-Remaining %" PRId64 " (%u sent): they are counted, but the "
                    "headers do not show it",
                    x->create ? "creates" : "creates answered 400", prev_status, prev_remaining,
                    x->sent);
            } else if (prev_remaining == 0) {
                ps_conform_pass(c, ck); /* counted, and Remaining said so */
            } else {
                snprintf(x->why, sizeof x->why,
                         "a 429 followed a %ld response without an integer X-RateLimit-Remaining",
                         prev_status);
                verdict = -1;
            }
            ps_exchange_free(&ex);
            return verdict;
        }
        /* a new window (Reset moved, or Remaining rose): the count starts again */
        bool new_window =
            prev_status &&
            ((x->reset_s && prev_reset && x->reset_s != prev_reset) ||
             (rl.remaining_state == PS_RL_OK && (int64_t)rl.remaining > prev_remaining));
        prev_status = ex.status;
        prev_remaining = rl.remaining_state == PS_RL_OK ? rl.remaining : -1;
        prev_reset = x->reset_s;
        ps_exchange_free(&ex);
        if (!have) {
            snprintf(x->why, sizeof x->why, "a %ld response carried no X-RateLimit-Limit",
                     prev_status);
            return -1;
        }
        if (new_window && i > 0) return 0;
    }
    ps_conform_pass(c, ck); /* Limit + 1 admitted in one window: they are not counted */
    return 1;
}

/* Crosses the limit with creates or with 400s. */
static void cross(ps_conform *c, bool create)
{
    const ps_check_id ck = PS_CK_LIMIT429_EVERY_OPERATION;
    crossing x = {.c = c, .create = create};
    /* the limit key's Limit and Reset: one list */
    char auth[1024];
    ps_conform_bearer(c, PS_KEY_LIMIT, auth, sizeof auth);
    ps_client_request req = {"GET", "/categories", auth, NULL, 0, NULL};
    if (!await_window(&x)) {
        ps_conform_not_run(c, ck, "%s", x.why);
        return;
    }
    ps_exchange ex;
    int rc = ps_conform_send(c, ck, &req, PS_KEY_LIMIT, PS_SEND_RETRY_429, &ex);
    bool have = rc == PS_SENT && note_headers(&x, &ex);
    if (rc != PS_SENT) ps_conform_no_response(c, ck, rc, &ex);
    ps_exchange_free(&ex);
    if (!have) {
        if (rc == PS_SENT)
            ps_conform_not_applicable(c, ck, "the limit key's list carried no X-RateLimit-Limit");
        return;
    }
    if (x.limit + 1 > MAX_CROSSING) {
        ps_conform_not_run(c, ck,
                           "crossing a limit of %" PRId64 " takes %" PRId64 " requests, more than "
                           "the %d the runner sends one at a time (give --limit-key with a free "
                           "or pro key)",
                           x.limit, x.limit + 1, MAX_CROSSING);
        return;
    }
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
        ps_conform_tally t;
        ps_conform_tally_get(c, &t);
        const ps_conform_config *cfg = ps_conform_cfg(c);
        unsigned left = cfg->create_budget > t.creates + CREATE_RESERVE
                            ? cfg->create_budget - t.creates - CREATE_RESERVE
                            : 0;
        if (create && left < (unsigned)x.limit + 1) {
            ps_conform_not_applicable(
                c, ck,
                "crossing a limit of %" PRId64 " with creates takes %" PRId64
                " creates; --create-budget leaves %u (keeping %d for the generative phase)",
                x.limit, x.limit + 1, left, CREATE_RESERVE);
            return;
        }
        if (attempt && !await_window(&x)) break;
        int r = cross_once(&x, create ? left : ~0u);
        if (r > 0) return;
        if (r < 0) break;
        snprintf(x.why, sizeof x.why, "%d windows ended before %" PRId64 " %s were sent in one",
                 ATTEMPTS, x.limit + 1, create ? "creates" : "400s");
    }
    ps_conform_not_run(c, ck, "%s", x.why);
}

void ps_suite_limit429_crossing(ps_conform *c)
{
    const ps_check_id ck = PS_CK_LIMIT429_EVERY_OPERATION;
    if (!ps_conform_cfg(c)->limit_key_given) {
        ps_conform_not_applicable(c, ck,
                                  "no --limit-key: crossing the limit with creates and 400s would "
                                  "spend the main key's window");
        return;
    }
    ps_rl_key_view m, l;
    bool seen_m = ps_ratelimit_judge_view(c, PS_KEY_MAIN, &m);
    bool seen_l = ps_ratelimit_judge_view(c, PS_KEY_LIMIT, &l);
    /* one service, one rule: a key whose Remaining fell for them settles it */
    bool creates_open = !(seen_m && m.create_counted == PS_RLM_COUNTED) &&
                        !(seen_l && l.create_counted == PS_RLM_COUNTED);
    bool errors_open = !(seen_m && m.errors_counted == PS_RLM_COUNTED) &&
                       !(seen_l && l.errors_counted == PS_RLM_COUNTED);
    if (!creates_open && !errors_open) {
        ps_conform_not_applicable(c, ck,
                                  "Remaining fell for creates and for 4xx answers: the headers "
                                  "show them counted, nothing is left open");
        return;
    }
    if (creates_open && !ps_conform_aborted(c)) cross(c, true);
    if (errors_open && !ps_conform_aborted(c)) cross(c, false);
}
