/* ratelimit_phases.c - the limit suite's phases after the burst: the count
 * (admissions held to the Remaining announced before it), exhausting the
 * key one request at a time when the burst drew no 429, and the recovery
 * once the 429 was waited out (ratelimit_limit.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/ratelimit_headers.h"
#include "core/service_clock.h"
#include "runner/suites/front.h"
#include "runner/suites/ratelimit_judge.h"
#include "runner/suites/ratelimit_limit.h"

/* A reply saying more remain than another reply's smaller Limit allows at
 * all (count_burst found the pair). */
static void fail_stacked(limit_run *r)
{
    const ps_exchange *exs = r->exs;
    const burst_count *bc = &r->bc;
    ps_rl_info a, b;
    ps_rl_read(&exs[bc->stacked_a].resp_headers, 0, &a);
    ps_rl_read(&exs[bc->stacked_b].resp_headers, 0, &b);
    ps_conform_fail(r->c, PS_CK_RATELIMIT_HEADERS_CONSISTENT, &exs[bc->stacked_b],
                    "one limit described by all replies",
                    "within one burst a %ld says Limit %" PRId64 ", Remaining %" PRId64
                    " and a %ld says Limit %" PRId64 ", Remaining %" PRId64
                    ": no more than %" PRId64 " can remain under the second, so both cannot be "
                    "true (two limiters writing the same headers?)",
                    exs[bc->stacked_a].status, a.limit, a.remaining, exs[bc->stacked_b].status,
                    b.limit, b.remaining, b.limit);
}

/* The judged burst's admissions against Remaining: none beyond it
 * (limit429.no-over-admission), and no refusal before it ran out
 * (ratelimit.no-early-refusal). */
static void judge_count(limit_run *r)
{
    ps_conform *c = r->c;
    const burst_count *bc = &r->bc;
    int64_t announced = r->probe.announced;
    if (bc->admitted > announced) {
        char exp[160];
        snprintf(exp, sizeof exp,
                 "at most %" PRId64 " admissions (X-RateLimit-Remaining before the burst)",
                 announced);
        ps_conform_fail(c, PS_CK_LIMIT429_NO_OVER_ADMISSION, &r->exs[bc->last_admitted], exp,
                        "%s of %" PRId64 " requests at X-RateLimit-Remaining %" PRId64
                        " admitted %" PRId64 " (%" PRId64
                        " over the limit, all within one fresh window: answered before "
                        "X-RateLimit-Reset %" PRId64 " minus a second)",
                        r->concurrent ? "a concurrent burst" : "a run", bc->sent, announced,
                        bc->admitted, bc->admitted - announced, r->probe.reset_s);
    } else {
        ps_conform_pass(c, PS_CK_LIMIT429_NO_OVER_ADMISSION);
    }
    if (bc->refused && bc->admitted + bc->free_admitted < announced &&
        bc->admitted + bc->free_admitted + bc->other < bc->sent) {
        char exp[96];
        snprintf(exp, sizeof exp, "%" PRId64 " admissions (X-RateLimit-Remaining before the burst)",
                 announced);
        ps_conform_fail(c, PS_CK_RATELIMIT_NO_EARLY_REFUSAL, &r->exs[bc->first_429], exp,
                        "X-RateLimit-Remaining said %" PRId64 " remain, but %s of %" PRId64
                        " requests admitted only %" PRId64 " and refused %" PRId64
                        " (is Remaining computed before the request is counted, or does "
                        "another limiter refuse?)",
                        announced, r->concurrent ? "a concurrent burst" : "a run", bc->sent,
                        bc->admitted, bc->refused);
    }
}

void limit_count_phase(limit_run *r)
{
    ps_conform *c = r->c;
    const burst_count *bc = &r->bc;
    int64_t announced = r->probe.announced;
    if (announced < 0) {
        ps_conform_not_applicable(c, PS_CK_LIMIT429_NO_OVER_ADMISSION,
                                  "Remaining was not announced as an integer");
    } else if (!r->held) {
        ps_conform_not_run(c, PS_CK_LIMIT429_NO_OVER_ADMISSION,
                           "%d bursts of %d admitted more than the X-RateLimit-Remaining announced "
                           "before them (last: %" PRId64 " of %" PRId64 " at Remaining %" PRId64
                           "), but none was judged: %s",
                           r->attempt, r->n, bc->admitted, bc->sent, announced, r->rolled);
    } else if (!r->whole) {
        ps_conform_not_run(c, PS_CK_LIMIT429_NO_OVER_ADMISSION,
                           "%d bursts of %d at X-RateLimit-Remaining %" PRId64
                           ", none judged: the last was %s",
                           r->attempt, r->n, announced, r->partial);
    } else {
        judge_count(r);
    }
    if (bc->stacked_a >= 0) fail_stacked(r);
}

/* No 429 after the exhausting requests: not run when a new window may have
 * admitted them, else limit429.enforced fails. */
static void judge_unrefused(limit_run *r)
{
    ps_conform *c = r->c;
    const burst_count *bc = &r->bc;
    const ps_exchange *last_seen =
        bc->last_admitted >= 0 ? &r->exs[bc->last_admitted] : &r->refusal;
    char rolled_after[400], said[96], who[64];
    /* the probe's Remaining as sent: -1 is this file's "none", never a value */
    if (r->probe.announced >= 0)
        snprintf(said, sizeof said, "X-RateLimit-Remaining having said %" PRId64,
                 r->probe.announced);
    else
        snprintf(said, sizeof said, "no integer X-RateLimit-Remaining having been sent");
    unsigned front_503 = ps_front_refusals(c, PS_KEY_LIMIT, who, sizeof who);
    /* the service admitted some: a front refusing the rest limits them (a
     * front alone answering is an upstream it cannot reach, not a limit) */
    bool service_seen = bc->admitted > 0 || r->probe.announced >= 0;
    if (front_503 && service_seen) {
        /* a gateway's limiter (nginx limit_req) refusing with its own 503:
         * what the client meets is exactly that */
        ps_conform_fail(c, PS_CK_LIMIT429_ENFORCED, r->refusal.responded ? &r->refusal : last_seen,
                        "429 Too Many Requests",
                        "%" PRId64 " requests on the limit key (a burst of %" PRId64
                        ", then %" PRId64
                        " one at a time) drew no 429, but the run's requests on it "
                        "were answered 503 %u times by %s in front of the service (a page of its "
                        "own, no X-RateLimit-* "
                        "headers): the limit is enforced by a gateway with 503, not with 429 "
                        "(spec 8 rule 2); %s",
                        bc->sent + r->sent_after, bc->sent, r->sent_after, front_503, who, said);
        limit_not_run_all(c, false,
                          "no 429 was obtained: a gateway refused with 503 (limit429.enforced "
                          "failed)");
        return;
    }
    if (!service_seen && ps_front_replies_to(c, PS_KEY_LIMIT)) {
        ps_conform_not_run(c, PS_CK_LIMIT429_ENFORCED,
                           "%" PRId64 " requests on the limit key drew no 429: %u of the run's "
                           "replies on it came from %s in front of the service, and neither the "
                           "window probe nor the burst got an answer of the service itself: it "
                           "was not reached",
                           bc->sent + r->sent_after, ps_front_replies_to(c, PS_KEY_LIMIT), who);
        limit_not_run_all(c, true, "no 429 to judge: a gateway answered in the service's place");
        return;
    }
    if (!r->held || !limit_within_probed_window(&r->probe,
                                                r->refusal.responded ? r->refusal.done_wall_ns
                                                                     : bc->last_done_ns,
                                                rolled_after, sizeof rolled_after)) {
        /* more admissions than Remaining, but a new window may have given them */
        ps_conform_not_run(c, PS_CK_LIMIT429_ENFORCED,
                           "%" PRId64 " requests on the limit key (a burst of %" PRId64
                           ", then %" PRId64 " one at a time) were all admitted, "
                           "%s, but not judged: %s",
                           bc->sent + r->sent_after, bc->sent, r->sent_after, said,
                           r->held ? rolled_after : r->rolled);
        limit_not_run_all(
            c, true, "no 429 to judge: none came within one window (limit429.enforced not run)");
        return;
    }
    char exp[96];
    snprintf(exp, sizeof exp, "429 within %" PRId64 " requests", r->budget + 1);
    ps_conform_fail(c, PS_CK_LIMIT429_ENFORCED, r->refusal.responded ? &r->refusal : last_seen, exp,
                    "%" PRId64 " requests on the limit key (a burst of %" PRId64 ", then %" PRId64
                    " one at a time) were all admitted within one fresh window, %s",
                    bc->sent + r->sent_after, bc->sent, r->sent_after, said);
    limit_not_run_all(c, false, "no 429 was obtained (limit429.enforced failed)");
}

/* What the recovery waits for, from the refusal and the burst's 429s. */
static void note_wait(limit_run *r)
{
    ps_conform *c = r->c;
    ps_rl_info rl;
    ps_rl_read(&r->refusal.resp_headers, limit_service_s(c, r->refusal.done_wall_ns), &rl);
    r->reset_before = rl.reset_state == PS_RL_OK ? rl.reset : 0;
    r->asked_s = rl.retry_after_state == PS_RL_OK ? rl.retry_after_s : -1;
    /* Without a time named by any 429 the runner backs off (1 s, 2 s, ...,
     * politeness.h): a refusal after that contradicts nothing the service
     * said (limit429.retry-after already fails the missing Retry-After). */
    ps_retry_source named;
    ps_rl_retry_at_ns(&rl, r->refusal.done_wall_ns, ps_conform_clock_offset_ns(c), &named);
    r->named_wait = r->bc.named_wait || named != PS_RETRY_NONE;
    r->refused_at_ns = r->refusal.done_wall_ns; /* the last 429 read */
    if (r->bc.last_429 >= 0 && r->exs[r->bc.last_429].done_wall_ns > r->refused_at_ns)
        r->refused_at_ns = r->exs[r->bc.last_429].done_wall_ns;
}

/* The longest window a plan names (spec 8: requests per minute and per
 * day): by then every limit of the plan has reset, so no refusal needs a
 * longer wait, bar a ban. HONOUR_SLACK_S: whole-second rounding of the wait
 * and of the Date it is read against. */
#define LONGEST_WINDOW_S 86400
#define HONOUR_SLACK_S 2

/* Whether the judged refusal asks for a wait no client can honour: beyond
 * the plan's longest window, from a first refusal of a window the probe
 * found fresh (a ban follows repeated requests after a 429, spec 8 rule 3,
 * so none can explain it). Such a wait once ended the run as incomplete
 * (beyond --max-wait), which blocked a gate without naming the value. */
static bool unhonourable(const limit_run *r)
{
    return r->probe.fresh && r->asked_s > LONGEST_WINDOW_S + HONOUR_SLACK_S;
}

/* limit429.retry-after-honourable, on the refusal note_wait read. */
static void judge_honourable(limit_run *r)
{
    ps_conform *c = r->c;
    const ps_check_id ck = PS_CK_LIMIT429_RETRY_AFTER_HONOURABLE;
    const char *raw = ps_headers_get(&r->refusal.resp_headers, "Retry-After");
    if (r->asked_s < 0) {
        ps_conform_not_applicable(c, ck,
                                  "the 429 carries no valid Retry-After (limit429.retry-after)");
    } else if (r->asked_s <= LONGEST_WINDOW_S + HONOUR_SLACK_S) {
        ps_conform_pass(c, ck);
    } else if (!r->probe.fresh) {
        ps_conform_not_applicable(
            c, ck,
            "Retry-After '%s' asks for %" PRId64 " s, beyond the plan's longest window (a day), "
            "but the window was not seen fresh before this refusal (X-RateLimit-Remaining %" PRId64
            " of %" PRId64 "): a temporary ban an earlier refusal started (spec 8 rule 3) may "
            "last that long",
            raw ? raw : "", r->asked_s, r->probe.announced, r->probe.limit);
    } else {
        char exp[96];
        snprintf(exp, sizeof exp, "Retry-After of at most %d s (the plan's day)",
                 LONGEST_WINDOW_S + HONOUR_SLACK_S);
        ps_conform_fail(c, ck, &r->refusal, exp,
                        "Retry-After '%s' asks to wait %" PRId64 " s (%.1f days), beyond the "
                        "plan's longest window (a day), by when every limit of the plan has "
                        "reset; it came among the first refusals of a fresh window, so no ban "
                        "(spec 8 rule 3) explains it: a client honouring it never sends again",
                        raw ? raw : "", r->asked_s, (double)r->asked_s / 86400.0);
    }
}

bool limit_exhaust_phase(limit_run *r)
{
    ps_conform *c = r->c;
    burst_count *bc = &r->bc;
    /* no 429 yet (a bucket refilled, or no limit at all): go on, one at a time */
    r->refused = bc->soonest_429 >= 0;
    if (r->refused) {
        r->refusal = r->exs[bc->soonest_429];
        memset(&r->exs[bc->soonest_429], 0, sizeof r->exs[bc->soonest_429]);
    }
    /* A burst request that was never answered may still be counted by the
     * service while these go out: their sequence cannot be judged then. */
    if (bc->unanswered) ps_ratelimit_judge_concurrent(c, true);
    while (!r->refused && r->sent_after < r->budget + 3) {
        ps_exchange_free(&r->refusal);
        ps_client_request req = limit_op(c, &r->ops, r->ops.creates, r->body);
        int rc = ps_conform_send(c, PS_CK_LIMIT429_ENFORCED, &req, PS_KEY_LIMIT, 0, &r->refusal);
        if (rc != PS_SENT) {
            ps_ratelimit_judge_concurrent(c, false);
            ps_conform_no_response(c, PS_CK_LIMIT429_ENFORCED, rc, &r->refusal);
            limit_not_run_all(c, true,
                              "no 429 to judge: a request on the limit key got no response "
                              "(limit429.enforced not run)");
            return false;
        }
        limit_note_refused_create(&r->refused_names, &r->refusal);
        r->sent_after++;
        if (r->refusal.status == 429) r->refused = true;
    }
    ps_ratelimit_judge_concurrent(c, false);
    if (!r->refused) {
        judge_unrefused(r);
        return false;
    }
    ps_conform_pass(c, PS_CK_LIMIT429_ENFORCED);
    limit_check_refusal(c, &r->refusal, &r->probe);
    note_wait(r);
    judge_honourable(r);
    limit_burst_free(r);
    return true;
}

/* The answer to the request after the wait. */
static void judge_recovery(limit_run *r, int rc, const ps_exchange *ex, int64_t step_ns)
{
    ps_conform *c = r->c;
    ps_rl_info rl;
    if (rc != PS_SENT) {
        ps_conform_no_response(c, PS_CK_LIMIT429_RECOVERS, rc, ex);
    } else if (ex->status >= 200 && ex->status < 300) {
        ps_rl_read(&ex->resp_headers, limit_service_s(c, ex->done_wall_ns), &rl);
        /* a clock stepped back moves every Reset back with it */
        if (rl.reset_state == PS_RL_OK && r->reset_before && rl.reset < r->reset_before &&
            step_ns >= 0) {
            ps_conform_fail(
                c, PS_CK_LIMIT429_RECOVERS, ex, "a new window (a later X-RateLimit-Reset)",
                "admitted again, but X-RateLimit-Reset went back from %" PRId64 " to %" PRId64,
                r->reset_before, rl.reset);
        } else {
            ps_conform_pass(c, PS_CK_LIMIT429_RECOVERS);
        }
    } else {
        int64_t sent_s = limit_service_s(c, ex->sent_wall_ns);
        if (ex->status == 429 && !r->named_wait)
            ps_conform_not_applicable(
                c, PS_CK_LIMIT429_RECOVERS,
                "no 429 named a time to wait for (no Retry-After, no X-RateLimit-Reset ahead: "
                "limit429.retry-after fails that); backing off 1 s, 2 s, 4 s ... for %.1f s "
                "(the next wait would end beyond --max-wait %.1f s), every request answered "
                "429 again, which contradicts no time the service named",
                (double)(ex->sent_wall_ns - r->refused_at_ns) / 1e9,
                (double)ps_conform_cfg(c)->max_wait_ns / 1e9);
        else if (ex->status == 429 && step_ns)
            ps_conform_fail(c, PS_CK_LIMIT429_RECOVERS, ex, "2xx after waiting as Retry-After said",
                            "after waiting the %" PRId64
                            " s Retry-After asked for, the service's clock was seen to step "
                            "%+.1f s (its Dates contradict the earlier ones); waited out as the "
                            "429 after the step asked, the next request got 429 again",
                            r->asked_s, (double)step_ns / 1e9);
        else if (ex->status == 429 && r->reset_before && sent_s < r->reset_before &&
                 r->asked_s >= 0)
            ps_conform_fail(
                c, PS_CK_LIMIT429_RECOVERS, ex, "2xx after waiting as Retry-After said",
                "after waiting the %" PRId64
                " s Retry-After asked for, the next request (at %" PRId64
                ") got 429 again: the Retry-After ran out before the window reset at %" PRId64
                " (X-RateLimit-Reset); was it rounded down?",
                r->asked_s, sent_s, r->reset_before);
        else
            ps_conform_fail(c, PS_CK_LIMIT429_RECOVERS, ex, "2xx after waiting as Retry-After said",
                            "after waiting as the 429 asked, the next request answered %ld",
                            ex->status);
    }
}

bool limit_recover_phase(limit_run *r)
{
    ps_conform *c = r->c;
    /* The burst's refusals are waited out here (ps_conform_send waits for
     * those it saw itself), within --max-wait; one request then, and no
     * retry if it is refused again. */
    int64_t retry_until_ns = r->bc.retry_until_ns;
    if (unhonourable(r)) {
        /* the check that names the wait failed; nothing to wait for in a run */
        ps_conform_not_applicable(c, PS_CK_LIMIT429_RECOVERS,
                                  "the 429 asked to wait %" PRId64
                                  " s, beyond any window of the plan "
                                  "(limit429.retry-after-honourable fails it)",
                                  r->asked_s);
        ps_conform_not_applicable(c, PS_CK_LIMIT429_REFUSED_CREATE_NOT_STORED,
                                  "the key does not recover within a run: its 429 asked to wait "
                                  "%" PRId64 " s (limit429.retry-after-honourable fails it)",
                                  r->asked_s);
        return false;
    }
    if (retry_until_ns && !limit_wait_until(c, retry_until_ns)) {
        ps_conform_not_run(
            c, PS_CK_LIMIT429_RECOVERS,
            "the service asked to wait %.1f s after a 429, more than --max-wait %.1f s",
            (double)(retry_until_ns - ps_clock_wall_ns()) / 1e9,
            (double)ps_conform_cfg(c)->max_wait_ns / 1e9);
        /* it applies only when a create was refused; else nothing is to be looked for */
        if (r->refused_names.n)
            ps_conform_not_run(c, PS_CK_LIMIT429_REFUSED_CREATE_NOT_STORED,
                               "%zu creates on the limit key were answered 429, but the key did "
                               "not recover within --max-wait to list them",
                               r->refused_names.n);
        else
            ps_conform_not_applicable(c, PS_CK_LIMIT429_REFUSED_CREATE_NOT_STORED,
                                      "no create on the limit key was answered 429");
        return false;
    }
    ps_exchange_free(&r->refusal);
    ps_client_request req = limit_op(c, &r->ops, r->ops.creates, r->body);
    const ps_service_clock *sc = ps_conform_clock(c);
    unsigned restarts_before = sc->restarts;
    int64_t offset_before = ps_conform_clock_offset_ns(c);
    /* No 429 named a time: back off 1 s, 2 s, 4 s ... (politeness.h) while
     * 429s come, as long as the next wait ends within --max-wait of the
     * refusal; a named time is waited for once (above) and then judged. */
    int64_t backoff_until = r->refused_at_ns + ps_conform_cfg(c)->max_wait_ns;
    ps_exchange ex;
    int rc;
    for (;;) {
        rc = ps_conform_send(c, PS_CK_LIMIT429_RECOVERS, &req, PS_KEY_LIMIT, 0, &ex);
        if (rc == PS_SENT) limit_note_refused_create(&r->refused_names, &ex);
        if (rc != PS_SENT || ex.status != 429 || r->named_wait ||
            ps_conform_key_free_at(c, PS_KEY_LIMIT) > backoff_until)
            break;
        ps_exchange_free(&ex);
    }
    int64_t step_ns = 0;
    if (rc == PS_SENT && ex.status == 429 && r->named_wait && sc->restarts > restarts_before) {
        /* The service's clock stepped while the runner waited (its Dates
         * contradict the earlier ones beyond a Date's lag): the Reset and
         * Retry-After waited for were written in a clock that has since
         * moved, so this 429 says nothing of their rounding (issue 27: a
         * step back of 2 s failed limit429.recovers, blaming Retry-After).
         * The step is named; the wait this 429 asks for, in the new clock,
         * is waited out once (ps_conform_send), and that answer judged. */
        step_ns = ps_conform_clock_offset_ns(c) - offset_before;
        if (!step_ns) step_ns = -1; /* a step the bounds no longer show: still one */
        ps_rl_info again;
        ps_rl_read(&ex.resp_headers, limit_service_s(c, ex.done_wall_ns), &again);
        int64_t more_ns =
            again.retry_after_state == PS_RL_OK ? again.retry_after_s * 1000000000LL : 0;
        int64_t explained_ns = (step_ns < 0 ? -step_ns : step_ns) + 2000000000LL; /* rounding */
        if (more_ns > explained_ns) {
            /* a step of a few seconds explains a few more seconds, not this */
            ps_conform_fail(c, PS_CK_LIMIT429_RECOVERS, &ex,
                            "2xx after waiting as Retry-After said",
                            "after waiting the %" PRId64
                            " s Retry-After asked for, the next request got 429 again asking "
                            "for %" PRId64 " s more; the service's clock stepped %+.1f s "
                            "meanwhile (its Dates contradict the earlier ones), which explains "
                            "a few seconds, not that",
                            r->asked_s, again.retry_after_s, (double)step_ns / 1e9);
            ps_exchange_free(&ex);
            return true;
        }
        ps_exchange_free(&ex);
        req = limit_op(c, &r->ops, r->ops.creates, r->body); /* a create named afresh */
        rc = ps_conform_send(c, PS_CK_LIMIT429_RECOVERS, &req, PS_KEY_LIMIT, 0, &ex);
        if (rc == PS_SENT) limit_note_refused_create(&r->refused_names, &ex);
        if (rc == PS_SEND_SKIPPED) {
            ps_conform_not_run(c, PS_CK_LIMIT429_RECOVERS,
                               "the service's clock stepped %+.1f s while the runner waited out "
                               "a 429 (its Dates contradict the earlier ones), and the 429 after "
                               "the step asked for a wait beyond --max-wait: not judged",
                               (double)step_ns / 1e9);
            ps_exchange_free(&ex);
            return true;
        }
    }
    judge_recovery(r, rc, &ex, step_ns);
    ps_exchange_free(&ex);
    return true;
}
