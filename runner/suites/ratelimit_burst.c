/* ratelimit_burst.c - the limit suite's second phase: Remaining and one
 * more requests on the limit key, released together on pre-opened
 * connections where the transport allows (burst.h), one at a time up to the
 * first 429 otherwise, and what their answers showed (ratelimit_limit.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ratelimit_headers.h"
#include "runner/suites/burst.h"
#include "runner/suites/ratelimit_judge.h"
#include "runner/suites/ratelimit_limit.h"

static void count_burst(const ps_conform *c, const ps_exchange *exs, int n, int64_t probe_reset,
                        bool creates_count, burst_count *bc)
{
    memset(bc, 0, sizeof *bc);
    bc->first_429 = bc->last_429 = bc->last_admitted = bc->stacked_a = bc->stacked_b = -1;
    bc->soonest_429 = -1;
    int64_t first_sent = 0, last_done = 0, soonest_until = 0;
    for (int i = 0; i < n; i++) {
        const ps_exchange *ex = &exs[i];
        if (!ex->responded) {
            if (ex->sent_wall_ns) bc->unanswered++;
            if (ex->sent_wall_ns && ex->reply_bad) bc->bad_replies++;
            if (ex->unreachable) bc->unopened++;
            continue;
        }
        bc->sent++;
        if (!first_sent || ex->sent_wall_ns < first_sent) first_sent = ex->sent_wall_ns;
        if (ex->done_wall_ns > last_done) last_done = ex->done_wall_ns;
        ps_rl_info rl;
        ps_rl_read(&ex->resp_headers, limit_service_s(c, ex->done_wall_ns), &rl);
        if (ex->status >= 200 && ex->status < 300 && !creates_count &&
            strcmp(ex->method, "POST") == 0) {
            bc->free_admitted++;
        } else if (ex->status >= 200 && ex->status < 300) {
            bc->admitted++;
            bc->last_admitted = i;
            int64_t reset;
            if (!ps_ratelimit_reset_time(&rl, limit_service_s(c, ex->sent_wall_ns), &reset) ||
                reset != probe_reset)
                bc->reset_moved = true;
        } else if (ex->status == 429) {
            bc->refused++;
            if (bc->first_429 < 0) bc->first_429 = i;
            if (bc->last_429 < 0 || ex->done_wall_ns > exs[bc->last_429].done_wall_ns)
                bc->last_429 = i;
            ps_retry_source src;
            int64_t until =
                ps_rl_retry_at_ns(&rl, ex->done_wall_ns, ps_conform_wait_offset_ns(c), &src);
            if (until > bc->retry_until_ns) bc->retry_until_ns = until;
            if (bc->soonest_429 < 0 || until < soonest_until) {
                bc->soonest_429 = i;
                soonest_until = until;
            }
            if (src != PS_RETRY_NONE) bc->named_wait = true;
        } else {
            bc->other++;
        }
    }
    bc->elapsed_s = last_done > first_sent ? (double)(last_done - first_sent) / 1e9 : 0;
    bc->last_done_ns = last_done;
    /* One key, one instant: an admitted reply saying more remain than
     * another reply's smaller Limit allows at all cannot be true. */
    for (int i = 0; i < n && bc->stacked_a < 0; i++) {
        ps_rl_info a;
        if (!exs[i].responded || exs[i].status < 200 || exs[i].status >= 300) continue;
        ps_rl_read(&exs[i].resp_headers, 0, &a);
        if (a.limit_state != PS_RL_OK || a.remaining_state != PS_RL_OK) continue;
        for (int k = 0; k < n; k++) {
            ps_rl_info b;
            if (!exs[k].responded) continue;
            ps_rl_read(&exs[k].resp_headers, 0, &b);
            if (b.limit_state == PS_RL_OK && b.limit < a.limit && a.remaining > b.limit) {
                bc->stacked_a = i, bc->stacked_b = k;
                break;
            }
        }
    }
}

/* Whether a burst of n (or a sequential run) reached the limit in full:
 * every request sent and answered 2xx or 429, or the run stopped at a 429.
 * Otherwise it cannot show that no more than Remaining were admitted (a
 * request never answered, or answered 1xx or 5xx, may or may not have been
 * counted): false with why. */
static bool burst_whole(const burst_count *bc, const ps_burst_stats *bs, int n, char *why,
                        size_t why_size)
{
    if (!bc->unopened && !bc->unanswered && !bc->other &&
        (bc->refused || bc->admitted + bc->free_admitted >= n))
        return true;
    int len = snprintf(why, why_size,
                       "not answered in full: of %d requests %" PRId64 " admitted, %" PRId64
                       " refused, %" PRId64 " answered neither 2xx nor 429, %" PRId64
                       " answered with no whole HTTP response (cut short, not HTTP, or its head "
                       "over the cap), %" PRId64 " sent without a reply, %" PRId64
                       " never sent (their connection never opened)",
                       n, bc->admitted, bc->refused, bc->other, bc->bad_replies,
                       bc->unanswered - bc->bad_replies, bc->unopened);
    if (bs->abandoned && len > 0 && (size_t)len < why_size)
        len += snprintf(why + len, why_size - (size_t)len,
                        "; of the unanswered, %zu answered or closed later, %zu still open when "
                        "given up",
                        bs->late, bs->given_up);
    /* the peer's protocol errors say why the counts above came out so */
    if (bs->h2_peer[0] && len > 0 && (size_t)len < why_size)
        snprintf(why + len, why_size - (size_t)len, "; over HTTP/2, %s", bs->h2_peer);
    return false;
}

/* Sends the burst at once, one request per connection, each create named
 * afresh; the judge reads it as a burst of one operation each (whether it
 * was counted): its lists and its creates are handed to it apart. */
static int send_concurrent(limit_run *r, size_t together, char *why, size_t why_size)
{
    ps_conform *c = r->c;
    int n = r->n;
    ps_burst_request *brs = calloc((size_t)n, sizeof *brs);
    char(*bodies)[LIMIT_BODY_MAX] = calloc((size_t)n, sizeof *bodies);
    if (!brs || !bodies) abort();
    for (int i = 0; i < n; i++) {
        ps_client_request q =
            limit_op(c, &r->ops, r->ops.creates || (r->ops.mix_create && i == n - 1), bodies[i]);
        brs[i] = (ps_burst_request){ps_conform_base_url(c),
                                    q.method,
                                    q.path,
                                    r->auth,
                                    ps_conform_cfg(c)->limit_key_given ? "PETSTORE_LIMIT_KEY"
                                                                       : "PETSTORE_API_KEY",
                                    q.body,
                                    q.content_type,
                                    ps_conform_cfg(c)->timeout_ns + 5000000000LL};
    }
    int64_t t0 = ps_clock_mono_ns();
    if (!r->first_burst_ns) r->first_burst_ns = t0;
    /* requests left unanswered are watched for one more --timeout: once
     * answered or closed they cannot reach the next burst's window */
    ps_burst_options bo = {together, ps_conform_cfg(c)->tls, ps_conform_cfg(c)->timeout_ns};
    int got = ps_burst_run(brs, (size_t)n, &bo, r->exs, &r->bs, why, why_size);
    ps_conform_note_burst(c, &r->bs);
    free(brs);
    free(bodies);
    ps_check_add_time(ps_conform_checks(c), PS_CK_LIMIT429_NO_OVER_ADMISSION,
                      (double)(ps_clock_mono_ns() - t0) / 1e6);
    for (int op = 0; op < 2; op++) {
        ps_ratelimit_judge_concurrent(c, true);
        for (int i = 0; i < got; i++)
            if (r->exs[i].responded && (strcmp(r->exs[i].method, "POST") == 0) == (op == 1))
                ps_conform_observe(c, &r->exs[i], PS_KEY_LIMIT);
        ps_ratelimit_judge_concurrent(c, false);
    }
    return got;
}

/* Sends the burst one request at a time, up to and with the first 429. */
static int send_sequential(limit_run *r)
{
    int got;
    for (got = 0; got < r->n; got++) {
        ps_client_request q = limit_op(
            r->c, &r->ops, r->ops.creates || (r->ops.mix_create && got == r->n - 1), r->body);
        int rc = ps_conform_send(r->c, PS_CK_LIMIT429_NO_OVER_ADMISSION, &q, PS_KEY_LIMIT, 0,
                                 &r->exs[got]);
        if (rc != PS_SENT) break;
        if (r->exs[got].status == 429) {
            got++;
            break;
        }
    }
    return got;
}

/* The race a burst is built to show: two requests checked within 100 us.
 * A crossing released wider than that (the burst's own writes, a slow
 * machine) could not show it, and the burst is sent again at the next
 * fresh window, up to RACE_ATTEMPTS_WIDE bursts. --race-bursts N asks for
 * N bursts whatever the spread, each crossing the limit wide
 * (RACE_CROSSING each side, doubling each repeat, ratelimit_limit.h): a
 * race that shows in most windows, not all, is missed in all N far more
 * rarely. Repeats stop at the first over-admission and when the next wait
 * would pass --max-wait; a repeat never fails a service by itself. */
#define CROSSING_JUDGED_NS 100000
#define RACE_ATTEMPTS_WIDE 3

bool limit_race_again(limit_run *r)
{
    ps_conform *c = r->c;
    bool over = r->probe.announced >= 0 && r->bc.admitted > r->probe.announced;
    bool wide = r->bs.spread_ns[1] > CROSSING_JUDGED_NS;
    if (!r->concurrent || !r->held || !r->whole || over) return false;
    if (r->attempt >= ps_conform_cfg(c)->race_bursts && !(wide && r->attempt < RACE_ATTEMPTS_WIDE))
        return false;
    /* the wait for the next window, plus what the repeats took, within --max-wait */
    int64_t spent = ps_clock_mono_ns() - r->first_burst_ns;
    int64_t wait = r->bc.retry_until_ns - ps_clock_wall_ns();
    if (spent + (wait > 0 ? wait : 0) > ps_conform_cfg(c)->max_wait_ns) return false;
    if (ps_conform_cfg(c)->verbose)
        fprintf(stderr,
                "petstore-conform: no over-admission in burst %d (its crossing released within "
                "%.0f us%s): sent again at the next window\n",
                r->attempt, (double)r->bs.spread_ns[1] / 1e3,
                wide ? ", wider than a 100 us race" : "");
    return true;
}

void limit_burst_free(limit_run *r)
{
    for (int i = 0; i < r->got; i++)
        ps_exchange_free(&r->exs[i]);
    free(r->exs);
    r->exs = NULL;
    r->got = 0;
}

bool limit_burst_phase(limit_run *r)
{
    ps_conform *c = r->c;
    burst_count *bc = &r->bc;
    /* Remaining + the crossing's refusals, released together on
     * pre-opened connections, the crossing's on their own: an exact
     * limiter admits Remaining of them and refuses the rest. */
    int64_t admitted = CROSSING_ADMITTED, refused = CROSSING_REFUSED;
    if (ps_conform_cfg(c)->race_bursts > 1) {
        int64_t side = RACE_CROSSING;
        for (int k = 1; k < r->attempt && side < RACE_CROSSING_MOST; k++)
            side *= 2;
        admitted = refused = side < RACE_CROSSING_MOST ? side : RACE_CROSSING_MOST;
    }
    /* a create whose counting was not seen (--only limit429) is not held
     * against Remaining: it crosses as one more, so lists alone still meet
     * the limit together (else the pair is a list and that create, and a
     * race could never show) */
    if (r->ops.mix_create && !r->ops.creates_count) refused++;
    r->n = (int)(r->budget + refused);
    size_t together = (size_t)((r->budget < admitted ? r->budget : admitted) + refused);
    r->exs = calloc((size_t)r->n, sizeof *r->exs);
    if (!r->exs) abort();
    char why[300] = "";
    r->got = r->concurrent ? send_concurrent(r, together, why, sizeof why) : send_sequential(r);
    if (r->got <= 0) {
        ps_conform_not_run(c, PS_CK_LIMIT429_NO_OVER_ADMISSION, "the burst could not be sent: %s",
                           why);
        ps_conform_not_run(c, PS_CK_LIMIT429_ENFORCED, "the burst could not be sent: %s", why);
        limit_not_run_all(c, true,
                          "no 429 to judge: the burst on the limit key could not be sent "
                          "(limit429.enforced not run)");
        r->got = 0;
        return false;
    }
    count_burst(c, r->exs, r->got, r->probe.reset_s, r->ops.creates || r->ops.creates_count, bc);
    for (int i = 0; i < r->got; i++)
        limit_note_refused_create(&r->refused_names, &r->exs[i]);
    /* The burst's refusals, one attempt: the key's next request waits as
     * they asked, or backs off when they named no time (the sequential
     * run's went through ps_conform_send already). */
    if (r->concurrent && bc->last_429 >= 0) {
        /* counted from the burst's last reply: every 429 came before it */
        ps_exchange last = r->exs[bc->last_429];
        last.done_wall_ns = bc->last_done_ns;
        ps_conform_note_refusal(c, &last, PS_KEY_LIMIT);
    }
    /* Admissions beyond Remaining are judged only when the burst was
     * answered within the probed window; otherwise (a window ended, a
     * slot left, a token came back) the burst is sent again at the next
     * fresh window, so a legal limiter is never failed for them. */
    bool over = r->probe.announced >= 0 && bc->admitted > r->probe.announced;
    r->held = !over ||
              limit_within_probed_window(&r->probe, bc->last_done_ns, r->rolled, sizeof r->rolled);
    /* admissions beyond Remaining show however many answers are missing;
     * their absence shows only when every answer came */
    r->whole = over || burst_whole(bc, &r->bs, r->n, r->partial, sizeof r->partial);
    if (ps_conform_cfg(c)->verbose && !r->whole)
        fprintf(stderr, "petstore-conform: the burst was %s\n", r->partial);
    if (ps_conform_cfg(c)->verbose)
        fprintf(stderr,
                "petstore-conform: %s of %d on the limit key at Remaining %" PRId64
                " (attempt %d): %" PRId64 " admitted, %" PRId64 " refused, %" PRId64
                " other in %.1f ms%s%s%s\n",
                r->concurrent ? "a concurrent burst" : "a sequential run", r->n, r->probe.announced,
                r->attempt, bc->admitted, bc->refused, bc->other, bc->elapsed_s * 1e3,
                bc->reset_moved ? " (X-RateLimit-Reset moved)" : "",
                r->held ? "" : "; not judged: ", r->held ? "" : r->rolled);
    return true;
}
