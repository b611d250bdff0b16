/* ratelimit.c - the rate-limit suites: a short burst on the main key (the
 * header rules themselves are observed on every response, see
 * every_response.c), and the 429 suite that exhausts the limit key's
 * window, checks the refusal and waits it out. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/json.h"
#include "core/ratelimit_headers.h"
#include "runner/suites/burst.h"
#include "runner/suites/ratelimit_judge.h"
#include "runner/suites/shapes.h"
#include "runner/suites/suites.h"

/* Consecutive list requests on the main key: enough pairs to see Remaining
 * fall and Reset hold within a window. */
#define BURST 6
/* The last requests of the limit burst, released together once the others
 * are answered: CROSSING_ADMITTED that Remaining still allows and
 * CROSSING_REFUSED beyond it. A burst released all at once ends on whichever
 * worker still has a queue, one request at a time, so a race rarely shows
 * there; two released alone at Remaining 1 meet in the limiter whenever they
 * reach two workers (the reference server's over-admission-race, 4 event
 * loops: about 2 runs of 3 direct, 3 of 6 through nginx terminating TLS).
 * Tried: 5 admitted + 5 refused caught it 5 of 5 direct but its five
 * refusals together trip a ban-after-one-refusal limiter; 5 + 1 caught it
 * 2 of 5. One refusal, so no ban is provoked. */
#define CROSSING_ADMITTED 1
#define CROSSING_REFUSED 1
/* Beyond this many requests the limit is not exhausted (use a smaller plan). */
#define MAX_EXHAUST 5000

/* The service's Unix second at the client's wall-clock time wall_ns (its
 * clock measured from Date, conform.h): what its headers are written in. */
static int64_t service_s(const ps_conform *c, int64_t wall_ns)
{
    return ps_conform_service_ns(c, wall_ns) / 1000000000;
}

/* The client's wall-clock time at the service's Unix second s. */
static int64_t client_ns(const ps_conform *c, int64_t s)
{
    return ps_clock_s_to_ns(s) - ps_conform_clock_offset_ns(c);
}

/* Waits until the wall clock reaches until_ns; false when that is more than
 * --max-wait away or the run is interrupted. */
static bool wait_until(ps_conform *c, int64_t until_ns)
{
    int64_t now = ps_clock_wall_ns();
    if (until_ns - now > ps_conform_cfg(c)->max_wait_ns) return false;
    while ((now = ps_clock_wall_ns()) < until_ns) {
        if (ps_conform_interrupted) return false;
        int64_t step = until_ns - now;
        ps_clock_sleep_ns(step < 100000000 ? step : 100000000);
    }
    return true;
}

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

/* The checks of the 429 itself when there is none to judge: not run (the
 * run is incomplete) when the suite could not go on, not applicable when
 * limit429.enforced failed (nothing else is to be judged then). */
static void not_run_all(ps_conform *c, bool incomplete, const char *why)
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
}

/* What the 429 itself must carry. */
static void check_refusal(ps_conform *c, const ps_exchange *ex)
{
    char why[300];
    ps_json *v = ps_conform_parse_body(ex, why, sizeof why);
    if (!v) {
        ps_conform_fail(c, PS_CK_LIMIT429_ERROR_BODY, ex, "an Error body with status 429",
                        "the 429: %s", why);
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

    int64_t now_s = service_s(c, ex->done_wall_ns);
    ps_rl_info rl;
    ps_rl_read(&ex->resp_headers, now_s, &rl);
    /* Remaining alone: a bad Limit or Reset is another check's finding */
    if (rl.remaining_state != PS_RL_OK) {
        ps_conform_fail(c, PS_CK_LIMIT429_REMAINING_ZERO, ex, "X-RateLimit-Remaining: 0",
                        "the 429's X-RateLimit-Remaining is %s%s%s", rl.remaining_raw ? "'" : "",
                        rl.remaining_raw ? rl.remaining_raw : "absent",
                        rl.remaining_raw ? "', not 0" : "");
    } else if (rl.remaining != 0) {
        ps_conform_fail(c, PS_CK_LIMIT429_REMAINING_ZERO, ex, "X-RateLimit-Remaining: 0",
                        "the 429 says X-RateLimit-Remaining %" PRId64, rl.remaining);
    } else {
        ps_conform_pass(c, PS_CK_LIMIT429_REMAINING_ZERO);
    }

    if (rl.retry_after_state == PS_RL_ABSENT) {
        ps_conform_fail(c, PS_CK_LIMIT429_RETRY_AFTER, ex,
                        "Retry-After: delay-seconds or HTTP-date",
                        "the 429 carries no Retry-After");
        ps_conform_not_applicable(c, PS_CK_LIMIT429_RETRY_AFTER_AGREES,
                                  "the 429 carries no Retry-After");
        return;
    }
    if (rl.retry_after_state != PS_RL_OK) {
        ps_conform_fail(
            c, PS_CK_LIMIT429_RETRY_AFTER, ex, "Retry-After: delay-seconds or HTTP-date",
            "Retry-After '%s' is neither delay-seconds nor an HTTP-date", rl.retry_after_raw);
        ps_conform_not_applicable(c, PS_CK_LIMIT429_RETRY_AFTER_AGREES, "Retry-After is not valid");
        return;
    }
    ps_conform_pass(c, PS_CK_LIMIT429_RETRY_AFTER);
    /* a fractional Reset still names a time (ratelimit.reset-unix-seconds fails its form) */
    if (rl.reset_state != PS_RL_OK && !ps_ratelimit_reset_lenient(rl.reset_raw, &rl.reset)) {
        ps_conform_not_applicable(c, PS_CK_LIMIT429_RETRY_AFTER_AGREES,
                                  "the 429 has no numeric X-RateLimit-Reset");
        return;
    }
    /* Retry-After says when to retry, Reset when the limit resets: waiting
     * past the reset contradicts it. Earlier is legal (a token bucket's next
     * token, a sliding counter's decay); a fixed window names the same time
     * (ratelimit.reset-consistent holds the rest of the headers to it).
     * Allow whole-second rounding on both sides and the exchange's duration. */
    int64_t sent_s = service_s(c, ex->sent_wall_ns);
    int64_t ends = rl.retry_after_form == PS_RETRY_AFTER_DELAY ? sent_s + rl.retry_after_s
                                                               : rl.retry_after_unix_s;
    int64_t ends_hi = rl.retry_after_form == PS_RETRY_AFTER_DELAY ? now_s + rl.retry_after_s
                                                                  : rl.retry_after_unix_s;
    if (ends <= rl.reset + 2) {
        ps_conform_pass(c, PS_CK_LIMIT429_RETRY_AFTER_AGREES);
    } else {
        char exp[128];
        snprintf(exp, sizeof exp, "Retry-After ending by X-RateLimit-Reset %" PRId64 " (+2 s)",
                 rl.reset);
        const char *hint = rl.reset < 1000000000LL
                               ? " (X-RateLimit-Reset looks like seconds left, not a Unix time)"
                           : rl.reset > 100000000000LL
                               ? " (X-RateLimit-Reset looks like milliseconds)"
                               : "";
        ps_conform_fail(c, PS_CK_LIMIT429_RETRY_AFTER_AGREES, ex, exp,
                        "Retry-After '%s' ends around %" PRId64 ", after X-RateLimit-Reset %" PRId64
                        " says the limit resets%s",
                        rl.retry_after_raw, ends_hi, rl.reset, hint);
    }
}

/* What one burst showed. */
typedef struct burst_count {
    int64_t sent, admitted, refused, other;
    int64_t free_admitted;        /* creates admitted that may not count (not seen counted) */
    int first_429, last_admitted; /* indexes, -1 when none */
    int last_429;                 /* the 429 read last, -1 when none */
    bool reset_moved;             /* an admitted reply named another Reset than the probe */
    int64_t retry_until_ns;       /* the latest moment a 429 asked to wait for */
    bool named_wait;              /* a 429 named a time ahead (Retry-After, a Reset ahead) */
    double elapsed_s;
    int stacked_a, stacked_b; /* a reply saying more remain than another's Limit allows */
    int64_t last_done_ns;     /* when the last reply was read */
    int64_t unanswered;       /* requests sent but not answered: the service may count them */
    int64_t bad_replies;      /* of those, answered with no whole HTTP response (cut short,
                                 not HTTP, its head over the cap) */
    int64_t unopened;         /* requests never sent: their connection never opened */
} burst_count;

static void count_burst(const ps_conform *c, const ps_exchange *exs, int n, int64_t probe_reset,
                        bool creates_count, burst_count *bc)
{
    memset(bc, 0, sizeof *bc);
    bc->first_429 = bc->last_429 = bc->last_admitted = bc->stacked_a = bc->stacked_b = -1;
    int64_t first_sent = 0, last_done = 0;
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
        ps_rl_read(&ex->resp_headers, service_s(c, ex->done_wall_ns), &rl);
        if (ex->status >= 200 && ex->status < 300 && !creates_count &&
            strcmp(ex->method, "POST") == 0) {
            bc->free_admitted++;
        } else if (ex->status >= 200 && ex->status < 300) {
            bc->admitted++;
            bc->last_admitted = i;
            int64_t reset;
            if (!ps_ratelimit_reset_time(&rl, service_s(c, ex->sent_wall_ns), &reset) ||
                reset != probe_reset)
                bc->reset_moved = true;
        } else if (ex->status == 429) {
            bc->refused++;
            if (bc->first_429 < 0) bc->first_429 = i;
            if (bc->last_429 < 0 || ex->done_wall_ns > exs[bc->last_429].done_wall_ns)
                bc->last_429 = i;
            ps_retry_source src;
            int64_t until =
                ps_rl_retry_at_ns(&rl, ex->done_wall_ns, ps_conform_clock_offset_ns(c), &src);
            if (until > bc->retry_until_ns) bc->retry_until_ns = until;
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
static bool burst_whole(const burst_count *bc, int n, char *why, size_t why_size)
{
    if (!bc->unopened && !bc->unanswered && !bc->other &&
        (bc->refused || bc->admitted + bc->free_admitted >= n))
        return true;
    snprintf(why, why_size,
             "not answered in full: of %d requests %" PRId64 " admitted, %" PRId64
             " refused, %" PRId64 " answered neither 2xx nor 429, %" PRId64
             " answered with no whole HTTP response (cut short, not HTTP, or its head over the "
             "cap), %" PRId64 " sent without a reply, %" PRId64
             " never sent (their connection never opened)",
             n, bc->admitted, bc->refused, bc->other, bc->bad_replies,
             bc->unanswered - bc->bad_replies, bc->unopened);
    return false;
}

/* What the limit key is exhausted with: lists, unless the run showed lists
 * uncounted and creates counted (spec 8 rule 4 leaves it open). With both
 * counted, the burst's last request is a create, written after the list
 * released with it: both operations meet the limit, so a service that
 * admits a create at Remaining 0 while it refuses lists exactly is caught,
 * and a refused create can be looked for in the list. When creates were
 * seen uncounted, none is mixed in; when their counting was not seen (the
 * ratelimit suite not run), one is, but its admission is not held against
 * Remaining (an uncounted create admitted beyond it is legal). Every create names a category of
 * its own (the run token and a number), which tells a refused one apart
 * from those admitted. */
typedef struct limit_ops {
    const char *auth;
    bool creates;       /* every request is a create */
    bool mix_create;    /* lists, the burst's last request a create */
    bool creates_count; /* creates were seen counted: one admitted beyond Remaining over-admits */
    int seq;            /* creates named so far */
} limit_ops;

/* Room for a create's body: {"name":"c<run token> limit <n>"}. */
#define LIMIT_BODY_MAX 96

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
static ps_client_request limit_op(ps_conform *c, limit_ops *ops, bool create,
                                  char body[LIMIT_BODY_MAX])
{
    if (!create) return (ps_client_request){"GET", "/categories", ops->auth, NULL, 0, NULL};
    snprintf(body, LIMIT_BODY_MAX, "{\"name\":\"c%s limit %d\"}", ps_conform_run_token(c),
             ++ops->seq);
    return (ps_client_request){"POST", "/categories", ops->auth,
                               body,   strlen(body),  "application/json"};
}

/* The names of the creates answered 429 on the limit key. */
typedef struct refused_creates {
    char **names;
    size_t n, cap;
} refused_creates;

/* Keeps the name of ex's create when it was answered 429. */
static void note_refused_create(refused_creates *r, const ps_exchange *ex)
{
    if (!ex->responded || ex->status != 429 || !ex->method || strcmp(ex->method, "POST") != 0)
        return;
    ps_json *v =
        ps_json_parse(ex->req_body.data ? ex->req_body.data : "", ex->req_body.len, NULL, NULL);
    const char *name = ps_json_get_string(v, "name", NULL);
    if (name) {
        if (r->n == r->cap) {
            r->cap = r->cap ? 2 * r->cap : 8;
            r->names = realloc(r->names, r->cap * sizeof *r->names);
            if (!r->names) abort();
        }
        r->names[r->n] = strdup(name);
        if (!r->names[r->n]) abort();
        r->n++;
    }
    ps_json_free(v);
}

static void refused_creates_free(refused_creates *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->names[i]);
    free(r->names);
    memset(r, 0, sizeof *r);
}

/* A create answered 429 was refused (spec 8 rule 2, RFC 6585 4): storing
 * it anyway admits it beyond the limit. Once the key recovered, the list
 * (on the main key) must hold none of the refused creates' names. */
static void check_refused_creates(ps_conform *c, const refused_creates *r)
{
    const ps_check_id ck = PS_CK_LIMIT429_REFUSED_CREATE_NOT_STORED;
    if (!r->n) {
        ps_conform_not_applicable(c, ck, "no create on the limit key was answered 429");
        return;
    }
    char auth[1024];
    ps_conform_bearer(c, PS_KEY_MAIN, auth, sizeof auth);
    ps_client_request req = {"GET", "/categories", auth, NULL, 0, NULL};
    ps_exchange ex;
    int rc = ps_conform_send(c, ck, &req, PS_KEY_MAIN, PS_SEND_RETRY_429, &ex);
    char why[300];
    ps_json *list = NULL;
    if (rc != PS_SENT) {
        ps_conform_no_response(c, ck, rc, &ex);
    } else if (ex.status != 200) {
        ps_conform_not_run(c, ck, "the list after the recovery answered %ld", ex.status);
    } else if (ex.truncated) {
        ps_conform_not_run(c, ck,
                           "the list is %zu bytes, more than the %zu KiB kept (raise --max-body)",
                           ex.body_total, ex.body_cap >> 10);
    } else if (!(list = ps_conform_parse_body(&ex, why, sizeof why)) ||
               list->type != PS_JSON_ARRAY) {
        ps_conform_not_run(c, ck, "the list after the recovery is not an array: %s",
                           list ? "another JSON value" : why);
    } else {
        const char *stored = NULL;
        for (size_t k = 0; k < r->n && !stored; k++)
            for (size_t i = 0; i < list->count && !stored; i++) {
                const char *name = ps_json_get_string(list->items[i], "name", NULL);
                if (name && strcmp(name, r->names[k]) == 0) stored = r->names[k];
            }
        if (stored) {
            char exp[160];
            snprintf(exp, sizeof exp, "no category named '%s' (its create was answered 429)",
                     stored);
            ps_conform_fail(c, ck, &ex, exp,
                            "a create on the limit key was answered 429, but the list after the "
                            "recovery holds the category it named ('%s'): a refused request was "
                            "admitted beyond the limit (of %zu creates refused)",
                            stored, r->n);
        } else {
            ps_conform_pass(c, ck);
        }
    }
    ps_json_free(list);
    ps_exchange_free(&ex);
}

/* Waits, once the key may be used again, until the service's clock is
 * phase_ms into a second: where a window opens decides how much of it a
 * burst can use before "Reset minus a second", and where in a second a 429
 * falls decides whether a truncated delay-seconds Retry-After ends early. */
static void wait_phase(ps_conform *c, int phase_ms)
{
    int64_t start = ps_clock_wall_ns(), free_at = ps_conform_key_free_at(c, PS_KEY_LIMIT);
    if (free_at > start) start = free_at;
    int64_t at = client_ns(c, service_s(c, start)) + (int64_t)phase_ms * 1000000;
    if (at < start) at += 1000000000;
    if (at - start > 20000000) wait_until(c, at); /* within 20 ms of it is close enough */
}

/* Phases (ms into a second) the probe is sent at. Half a second: a window
 * that leaves room waits for the next whole second before the burst, so its
 * 429s fall early in a second after the window opened late in one (a
 * Retry-After truncated like int(ceil(end) - now) then always ends before
 * the window does, and int(end - now) about half a second before), and a
 * window ending within the second still leaves the burst half of it. Just
 * after a whole second: a burst that did not fit is given the whole second. */
#define PROBE_PHASE_MS 500
#define PROBE_PHASE_EARLY_MS 2
/* The burst waits for the next whole second only when at least this much
 * of the window is left after it (a 3 s window keeps its burst's 2.5 s). */
#define ALIGN_ROOM_NS 2500000000LL

/* What the request before a burst found on the limit key. */
typedef struct window_probe {
    int64_t announced; /* X-RateLimit-Remaining, -1 when not an integer */
    int64_t limit;     /* X-RateLimit-Limit, -1 when not an integer */
    int64_t reset_s;   /* the Unix second Reset names (ps_ratelimit_reset_time), 0: none */
    int64_t offset_ns; /* the service's clock ahead of the client's when probed */
    bool fresh;        /* nothing but this request counted in the window yet */
    bool reset_plan;   /* reset_s is the probe's time plus the plan's window: the
                          service's Reset named no time ahead (never a legal limiter) */
} window_probe;

/* 1: a fresh window (nothing counted yet on the key), within --max-wait.
 * False when the suite cannot go on (already reported). */
static bool probe_window(ps_conform *c, const ps_client_request *req, int phase_ms, window_probe *p)
{
    ps_exchange ex;
    ps_rl_info rl;
    bool timed;
    for (int tries = 0;; tries++) {
        wait_phase(c, phase_ms);
        int rc =
            ps_conform_send(c, PS_CK_LIMIT429_ENFORCED, req, PS_KEY_LIMIT, PS_SEND_RETRY_429, &ex);
        if (rc != PS_SENT) {
            ps_conform_no_response(c, PS_CK_LIMIT429_ENFORCED, rc, &ex);
            ps_conform_no_response(c, PS_CK_LIMIT429_NO_OVER_ADMISSION, rc, &ex);
            not_run_all(c, true, "no 429 to judge: the limit key's first request got no response");
            ps_exchange_free(&ex);
            return false;
        }
        if (ex.status == 401) {
            ps_conform_fail(c, PS_CK_LIMIT429_ENFORCED, &ex, "2xx",
                            "the limit key was refused with 401");
            ps_conform_not_applicable(c, PS_CK_LIMIT429_NO_OVER_ADMISSION,
                                      "the limit key was refused");
            not_run_all(c, false, "the limit key was refused (limit429.enforced failed)");
            ps_exchange_free(&ex);
            return false;
        }
        ps_rl_read(&ex.resp_headers, service_s(c, ex.done_wall_ns), &rl);
        timed = ps_ratelimit_reset_time(&rl, service_s(c, ex.sent_wall_ns), &p->reset_s);
        p->fresh = rl.remaining_state == PS_RL_OK && rl.limit_state == PS_RL_OK &&
                   rl.remaining >= rl.limit - 1;
        if (p->fresh || tries == 3 || !timed) break;
        int64_t until = client_ns(c, p->reset_s) + 50000000;
        if (until < ps_clock_wall_ns() || !wait_until(c, until)) break;
        ps_exchange_free(&ex);
    }
    p->announced = rl.remaining_state == PS_RL_OK ? rl.remaining : -1;
    p->limit = rl.limit_state == PS_RL_OK ? rl.limit : -1;
    /* A Reset naming no time ahead claims no window: the plan's (the spec's
     * minute or day for the figure Limit equals), from the probe on. */
    int64_t sent_s = service_s(c, ex.sent_wall_ns), end_s = service_s(c, ex.done_wall_ns);
    p->reset_plan = false;
    if (!timed || p->reset_s < sent_s - 2 || p->reset_s > end_s + 86400 + 2) {
        int64_t w = p->limit >= 0 ? ps_ratelimit_judge_window_s(c, PS_KEY_LIMIT, p->limit) : 0;
        p->reset_s = w ? sent_s + w : 0;
        p->reset_plan = w != 0;
    }
    /* the window's end in the client's clock: the service's Reset less its lead */
    p->offset_ns = ps_conform_clock_offset_ns(c);
    ps_exchange_free(&ex);
    return true;
}

/* Whether every answer up to until_ns came from the window the probe
 * found, whatever the limiter: true, or false with why. The window (or the
 * sliding log's oldest slot, or the bucket's missing token) ends after
 * Reset minus the second it is rounded up by, so answers read before then
 * are within it. It takes a fresh window: with more already counted, a
 * window counter's decay or a bucket's refill admits more at any moment. */
static bool within_probed_window(const window_probe *p, int64_t until_ns, char *why,
                                 size_t why_size)
{
    if (!p->fresh) {
        snprintf(why, why_size,
                 "the request before it found no fresh window (X-RateLimit-Remaining %" PRId64
                 " of %" PRId64
                 "): with more already counted, a window counter's decay or a bucket's "
                 "refill may admit more than Remaining said",
                 p->announced, p->limit);
        return false;
    }
    if (!p->reset_s) {
        snprintf(why, why_size,
                 "X-RateLimit-Reset named no time, so whether the window ended while the "
                 "requests ran cannot be told");
        return false;
    }
    int64_t deadline_ns = ps_clock_s_to_ns(p->reset_s - 1) - p->offset_ns;
    if (until_ns >= deadline_ns) {
        snprintf(why, why_size,
                 "the last answer came %.3f s after X-RateLimit-Reset %" PRId64
                 " minus the second it is rounded up by%s%s: the window may have ended (a "
                 "logged request left, a token came back) while the requests ran",
                 (double)(until_ns - deadline_ns) / 1e9, p->reset_s,
                 p->offset_ns ? " (in the service's clock, by its Date)" : "",
                 p->reset_plan ? " (the plan's window from the probe: its X-RateLimit-Reset "
                                 "named no time ahead)"
                               : "");
        return false;
    }
    return true;
}

/* A burst is sent at most this many times, each at a fresh window: again
 * when it admitted more than Remaining said but the window may have ended
 * while it ran (a legal limiter then admits more). */
#define BURST_ATTEMPTS 3

/* The race a burst is built to show: two requests checked within 100 us.
 * A crossing released wider than that (the burst's own writes, a slow
 * machine) could not show it, and the burst is sent again at the next
 * fresh window, up to RACE_ATTEMPTS_WIDE bursts. --race-bursts N asks for
 * N bursts whatever the spread: a race that shows in some windows only
 * (whether both requests reach two workers: 11 windows in 15 direct, 12 in
 * 15 through nginx terminating TLS) is missed in all N far more rarely. Repeats stop at the first
 * over-admission and when the next wait would pass --max-wait; a repeat
 * never fails a service by itself. */
#define CROSSING_JUDGED_NS 100000
#define RACE_ATTEMPTS_WIDE 3

/* Whether another burst for the race fits: the wait for the next window,
 * plus what the repeats took since the first burst, within --max-wait. */
static bool race_budget_left(const ps_conform *c, int64_t first_burst_mono_ns,
                             int64_t retry_until_wall_ns)
{
    int64_t spent = ps_clock_mono_ns() - first_burst_mono_ns;
    int64_t wait = retry_until_wall_ns - ps_clock_wall_ns();
    return spent + (wait > 0 ? wait : 0) <= ps_conform_cfg(c)->max_wait_ns;
}

void ps_suite_limit429(ps_conform *c)
{
    char auth[1024], body[LIMIT_BODY_MAX];
    ps_conform_bearer(c, PS_KEY_LIMIT, auth, sizeof auth);
    limit_ops ops;
    limit_ops_init(c, auth, &ops);
    ps_client_request req;
    refused_creates refused_names = {NULL, 0, 0};
    ps_exchange ex;
    ps_rl_info rl;
    int rc;
    bool concurrent = ps_burst_supported(ps_conform_base_url(c));

    window_probe probe;
    bool whole = true; /* the last burst over-admitted or reached the limit in full */
    char partial[400] = "";
    int64_t budget = 0;
    int n = 0, got = 0, attempt;
    ps_exchange *exs = NULL;
    burst_count bc;
    bool held = true;     /* the last burst was answered within the probed window */
    bool aligned = false; /* the last burst waited for a whole second after its probe */
    char rolled[400] = "";
    ps_burst_stats bs = {0};
    int64_t first_burst_ns = 0;
    for (attempt = 1;; attempt++) {
        req = limit_op(c, &ops, ops.creates, body);
        if (!probe_window(c, &req, attempt == 1 || aligned ? PROBE_PHASE_MS : PROBE_PHASE_EARLY_MS,
                          &probe)) {
            refused_creates_free(&refused_names);
            return;
        }
        /* Room left in the window after the next whole second: with enough,
         * the burst starts there (see PROBE_PHASE_MS). */
        int64_t next_s = client_ns(c, service_s(c, ps_clock_wall_ns()) + 1);
        aligned = probe.fresh && probe.reset_s &&
                  ps_clock_s_to_ns(probe.reset_s - 1) - probe.offset_ns - next_s >= ALIGN_ROOM_NS;
        if (aligned) wait_until(c, next_s + 2000000);
        budget = probe.announced >= 0 ? probe.announced
                 : ps_conform_cfg(c)->limit_plan.per_minute > 0
                     ? ps_conform_cfg(c)->limit_plan.per_minute
                     : 1000; /* the largest published minute limit */
        if (budget + 1 > MAX_EXHAUST) {
            ps_conform_not_run(c, PS_CK_LIMIT429_ENFORCED,
                               "%" PRId64 " requests remain on the limit key: too many to exhaust "
                               "(give --limit-key with a free or pro key)",
                               budget);
            ps_conform_not_run(c, PS_CK_LIMIT429_NO_OVER_ADMISSION,
                               "no burst was sent: %" PRId64 " requests remain on the limit key, "
                               "too many to exhaust",
                               budget);
            not_run_all(c, true,
                        "no 429 to judge: the limit key was not exhausted (limit429.enforced "
                        "not run: too many requests remain)");
            refused_creates_free(&refused_names);
            return;
        }

        /* 2: Remaining + CROSSING_REFUSED requests released together on
         * pre-opened connections, the crossing's on their own: an exact
         * limiter admits Remaining of them and refuses the rest. */
        n = (int)budget + CROSSING_REFUSED;
        size_t together =
            (size_t)(budget < CROSSING_ADMITTED ? budget : CROSSING_ADMITTED) + CROSSING_REFUSED;
        exs = calloc((size_t)n, sizeof *exs);
        if (!exs) abort();
        char why[300] = "";
        got = 0;
        if (concurrent) {
            /* one request per connection, each create named afresh */
            ps_burst_request *brs = calloc((size_t)n, sizeof *brs);
            char(*bodies)[LIMIT_BODY_MAX] = calloc((size_t)n, sizeof *bodies);
            if (!brs || !bodies) abort();
            for (int i = 0; i < n; i++) {
                ps_client_request r =
                    limit_op(c, &ops, ops.creates || (ops.mix_create && i == n - 1), bodies[i]);
                brs[i] = (ps_burst_request){
                    ps_conform_base_url(c),
                    r.method,
                    r.path,
                    auth,
                    ps_conform_cfg(c)->limit_key_given ? "PETSTORE_LIMIT_KEY" : "PETSTORE_API_KEY",
                    r.body,
                    r.content_type,
                    ps_conform_cfg(c)->timeout_ns + 5000000000LL};
            }
            int64_t t0 = ps_clock_mono_ns();
            /* a repeat for the race is paced, each differently, so a
             * keep-alive proxy hands the crossing other connections
             * (burst.c BURST_PACE_NS) */
            ps_burst_options bo = {together, ps_conform_cfg(c)->tls, attempt > 1,
                                   (size_t)(attempt > 1 ? attempt - 2 : 0) * 2};
            if (!first_burst_ns) first_burst_ns = t0;
            got = ps_burst_run(brs, (size_t)n, &bo, exs, &bs, why, sizeof why);
            ps_conform_note_burst(c, &bs);
            free(brs);
            free(bodies);
            ps_check_add_time(ps_conform_checks(c), PS_CK_LIMIT429_NO_OVER_ADMISSION,
                              (double)(ps_clock_mono_ns() - t0) / 1e6);
            /* the judge reads a burst of one operation (whether it was
             * counted): the lists and the creates of a mixed burst are
             * handed to it as a burst each */
            for (int op = 0; op < 2; op++) {
                ps_ratelimit_judge_concurrent(c, true);
                for (int i = 0; i < got; i++)
                    if (exs[i].responded && (strcmp(exs[i].method, "POST") == 0) == (op == 1))
                        ps_conform_observe(c, &exs[i], PS_KEY_LIMIT);
                ps_ratelimit_judge_concurrent(c, false);
            }
        } else {
            for (got = 0; got < n; got++) {
                req = limit_op(c, &ops, ops.creates || (ops.mix_create && got == n - 1), body);
                rc = ps_conform_send(c, PS_CK_LIMIT429_NO_OVER_ADMISSION, &req, PS_KEY_LIMIT, 0,
                                     &exs[got]);
                if (rc != PS_SENT) break;
                if (exs[got].status == 429) {
                    got++;
                    break;
                }
            }
        }
        if (got <= 0) {
            ps_conform_not_run(c, PS_CK_LIMIT429_NO_OVER_ADMISSION,
                               "the burst could not be sent: %s", why);
            ps_conform_not_run(c, PS_CK_LIMIT429_ENFORCED, "the burst could not be sent: %s", why);
            not_run_all(c, true,
                        "no 429 to judge: the burst on the limit key could not be sent "
                        "(limit429.enforced not run)");
            free(exs);
            refused_creates_free(&refused_names);
            return;
        }
        count_burst(c, exs, got, probe.reset_s, ops.creates || ops.creates_count, &bc);
        for (int i = 0; i < got; i++)
            note_refused_create(&refused_names, &exs[i]);
        /* The burst's refusals, one attempt: the key's next request waits as
         * they asked, or backs off when they named no time (the sequential
         * run's went through ps_conform_send already). */
        if (concurrent && bc.last_429 >= 0) {
            /* counted from the burst's last reply: every 429 came before it */
            ps_exchange last = exs[bc.last_429];
            last.done_wall_ns = bc.last_done_ns;
            ps_conform_note_refusal(c, &last, PS_KEY_LIMIT);
        }
        /* Admissions beyond Remaining are judged only when the burst was
         * answered within the probed window; otherwise (a window ended, a
         * slot left, a token came back) the burst is sent again at the next
         * fresh window, so a legal limiter is never failed for them. */
        bool over = probe.announced >= 0 && bc.admitted > probe.announced;
        held = !over || within_probed_window(&probe, bc.last_done_ns, rolled, sizeof rolled);
        /* admissions beyond Remaining show however many answers are missing;
         * their absence shows only when every answer came */
        whole = over || burst_whole(&bc, n, partial, sizeof partial);
        if (ps_conform_cfg(c)->verbose && !whole)
            fprintf(stderr, "petstore-conform: the burst was %s\n", partial);
        if (ps_conform_cfg(c)->verbose)
            fprintf(stderr,
                    "petstore-conform: %s of %d on the limit key at Remaining %" PRId64
                    " (attempt %d): %" PRId64 " admitted, %" PRId64 " refused, %" PRId64
                    " other in %.1f ms%s%s%s\n",
                    concurrent ? "a concurrent burst" : "a sequential run", n, probe.announced,
                    attempt, bc.admitted, bc.refused, bc.other, bc.elapsed_s * 1e3,
                    bc.reset_moved ? " (X-RateLimit-Reset moved)" : "",
                    held ? "" : "; not judged: ", held ? "" : rolled);
        /* no over-admission yet: again at the next window while asked for or
         * while the crossing was released too wide to judge (CROSSING_JUDGED_NS) */
        bool wide = bs.spread_ns[1] > CROSSING_JUDGED_NS;
        bool again =
            concurrent && held && whole && !over &&
            (attempt < ps_conform_cfg(c)->race_bursts || (wide && attempt < RACE_ATTEMPTS_WIDE)) &&
            race_budget_left(c, first_burst_ns, bc.retry_until_ns);
        if (ps_conform_cfg(c)->verbose && again)
            fprintf(stderr,
                    "petstore-conform: no over-admission in burst %d (its crossing released "
                    "within %.0f us%s): sent again at the next window\n",
                    attempt, (double)bs.spread_ns[1] / 1e3,
                    wide ? ", wider than a 100 us race" : "");
        if (!again && ((held && whole) || attempt >= BURST_ATTEMPTS)) break;
        /* the burst's own 429s are waited out before the key is used again */
        if (bc.retry_until_ns && !wait_until(c, bc.retry_until_ns)) break;
        for (int i = 0; i < got; i++)
            ps_exchange_free(&exs[i]);
        free(exs);
        exs = NULL;
    }
    int64_t announced = probe.announced, probe_reset = probe.reset_s;

    /* 3: the count, exact against what was announced */
    if (announced < 0) {
        ps_conform_not_applicable(c, PS_CK_LIMIT429_NO_OVER_ADMISSION,
                                  "Remaining was not announced as an integer");
    } else if (!held) {
        ps_conform_not_run(c, PS_CK_LIMIT429_NO_OVER_ADMISSION,
                           "%d bursts of %d admitted more than the X-RateLimit-Remaining announced "
                           "before them (last: %" PRId64 " of %" PRId64 " at Remaining %" PRId64
                           "), but none was judged: %s",
                           attempt, n, bc.admitted, bc.sent, announced, rolled);
    } else if (!whole) {
        ps_conform_not_run(c, PS_CK_LIMIT429_NO_OVER_ADMISSION,
                           "%d bursts of %d at X-RateLimit-Remaining %" PRId64
                           ", none judged: the last was %s",
                           attempt, n, announced, partial);
    } else {
        if (bc.admitted > announced) {
            char exp[160];
            snprintf(exp, sizeof exp,
                     "at most %" PRId64 " admissions (X-RateLimit-Remaining before the burst)",
                     announced);
            ps_conform_fail(c, PS_CK_LIMIT429_NO_OVER_ADMISSION, &exs[bc.last_admitted], exp,
                            "%s of %" PRId64 " requests at X-RateLimit-Remaining %" PRId64
                            " admitted %" PRId64 " (%" PRId64
                            " over the limit, all within one fresh window: answered before "
                            "X-RateLimit-Reset %" PRId64 " minus a second)",
                            concurrent ? "a concurrent burst" : "a run", bc.sent, announced,
                            bc.admitted, bc.admitted - announced, probe_reset);
        } else {
            ps_conform_pass(c, PS_CK_LIMIT429_NO_OVER_ADMISSION);
        }
        if (bc.refused && bc.admitted + bc.free_admitted < announced &&
            bc.admitted + bc.free_admitted + bc.other < bc.sent) {
            char exp[96];
            snprintf(exp, sizeof exp,
                     "%" PRId64 " admissions (X-RateLimit-Remaining before the burst)", announced);
            ps_conform_fail(c, PS_CK_RATELIMIT_NO_EARLY_REFUSAL, &exs[bc.first_429], exp,
                            "X-RateLimit-Remaining said %" PRId64 " remain, but %s of %" PRId64
                            " requests admitted only %" PRId64 " and refused %" PRId64
                            " (is Remaining computed before the request is counted, or does "
                            "another limiter refuse?)",
                            announced, concurrent ? "a concurrent burst" : "a run", bc.sent,
                            bc.admitted, bc.refused);
        }
    }
    if (bc.stacked_a >= 0) {
        ps_rl_info a, b;
        ps_rl_read(&exs[bc.stacked_a].resp_headers, 0, &a);
        ps_rl_read(&exs[bc.stacked_b].resp_headers, 0, &b);
        ps_conform_fail(c, PS_CK_RATELIMIT_HEADERS_CONSISTENT, &exs[bc.stacked_b],
                        "one limit described by all replies",
                        "within one burst a %ld says Limit %" PRId64 ", Remaining %" PRId64
                        " and a %ld says Limit %" PRId64 ", Remaining %" PRId64
                        ": no more than %" PRId64 " can remain under the second, so both cannot be "
                        "true (two limiters writing the same headers?)",
                        exs[bc.stacked_a].status, a.limit, a.remaining, exs[bc.stacked_b].status,
                        b.limit, b.remaining, b.limit);
    }

    /* 4: no 429 yet (a bucket refilled, or no limit at all): go on, one at a time */
    int64_t sent_after = 0;
    ps_exchange refusal;
    memset(&refusal, 0, sizeof refusal);
    bool refused = bc.first_429 >= 0;
    if (refused) {
        refusal = exs[bc.first_429];
        memset(&exs[bc.first_429], 0, sizeof exs[bc.first_429]);
    }
    /* A burst request that was never answered may still be counted by the
     * service while these go out: their sequence cannot be judged then. */
    if (bc.unanswered) ps_ratelimit_judge_concurrent(c, true);
    while (!refused && sent_after < budget + 3) {
        ps_exchange_free(&refusal);
        req = limit_op(c, &ops, ops.creates, body);
        rc = ps_conform_send(c, PS_CK_LIMIT429_ENFORCED, &req, PS_KEY_LIMIT, 0, &refusal);
        if (rc != PS_SENT) {
            ps_ratelimit_judge_concurrent(c, false);
            ps_conform_no_response(c, PS_CK_LIMIT429_ENFORCED, rc, &refusal);
            not_run_all(c, true,
                        "no 429 to judge: a request on the limit key got no response "
                        "(limit429.enforced not run)");
            ps_exchange_free(&refusal);
            for (int i = 0; i < got; i++)
                ps_exchange_free(&exs[i]);
            free(exs);
            refused_creates_free(&refused_names);
            return;
        }
        note_refused_create(&refused_names, &refusal);
        sent_after++;
        if (refusal.status == 429) refused = true;
    }
    ps_ratelimit_judge_concurrent(c, false);
    const ps_exchange *last_seen = bc.last_admitted >= 0 ? &exs[bc.last_admitted] : &refusal;
    char rolled_after[400];
    if (!refused &&
        (!held ||
         !within_probed_window(&probe, refusal.responded ? refusal.done_wall_ns : bc.last_done_ns,
                               rolled_after, sizeof rolled_after))) {
        /* more admissions than Remaining, but a new window may have given them */
        ps_conform_not_run(c, PS_CK_LIMIT429_ENFORCED,
                           "%" PRId64 " requests on the limit key (a burst of %" PRId64
                           ", then %" PRId64 " one at a time) were all admitted, "
                           "X-RateLimit-Remaining having said %" PRId64 ", but not judged: %s",
                           bc.sent + sent_after, bc.sent, sent_after, announced,
                           held ? rolled_after : rolled);
        not_run_all(c, true,
                    "no 429 to judge: none came within one window (limit429.enforced not run)");
        ps_exchange_free(&refusal);
        for (int i = 0; i < got; i++)
            ps_exchange_free(&exs[i]);
        free(exs);
        refused_creates_free(&refused_names);
        return;
    }
    if (!refused) {
        char exp[96];
        snprintf(exp, sizeof exp, "429 within %" PRId64 " requests", budget + 1);
        ps_conform_fail(
            c, PS_CK_LIMIT429_ENFORCED, refusal.responded ? &refusal : last_seen, exp,
            "%" PRId64 " requests on the limit key (a burst of %" PRId64 ", then %" PRId64
            " one at a time) were all admitted within one fresh window, X-RateLimit-Remaining "
            "having said %" PRId64,
            bc.sent + sent_after, bc.sent, sent_after, announced);
        not_run_all(c, false, "no 429 was obtained (limit429.enforced failed)");
        ps_exchange_free(&refusal);
        for (int i = 0; i < got; i++)
            ps_exchange_free(&exs[i]);
        free(exs);
        refused_creates_free(&refused_names);
        return;
    }
    ps_conform_pass(c, PS_CK_LIMIT429_ENFORCED);
    check_refusal(c, &refusal);
    int64_t reset_before = 0;
    ps_rl_read(&refusal.resp_headers, service_s(c, refusal.done_wall_ns), &rl);
    if (rl.reset_state == PS_RL_OK) reset_before = rl.reset;
    int64_t asked_s = rl.retry_after_state == PS_RL_OK ? rl.retry_after_s : -1;
    /* Without a time named by any 429 the runner backs off (1 s, 2 s, ...,
     * politeness.h): a refusal after that contradicts nothing the service
     * said (limit429.retry-after already fails the missing Retry-After). */
    ps_retry_source named;
    ps_rl_retry_at_ns(&rl, refusal.done_wall_ns, ps_conform_clock_offset_ns(c), &named);
    bool named_wait = bc.named_wait || named != PS_RETRY_NONE;
    int64_t refused_at_ns = refusal.done_wall_ns; /* the last 429 read */
    if (bc.last_429 >= 0 && exs[bc.last_429].done_wall_ns > refused_at_ns)
        refused_at_ns = exs[bc.last_429].done_wall_ns;
    for (int i = 0; i < got; i++)
        ps_exchange_free(&exs[i]);
    free(exs);

    /* 5: recovery. The burst's refusals are waited out here (ps_conform_send
     * waits for those it saw itself), within --max-wait; one request then,
     * and no retry if it is refused again. */
    if (bc.retry_until_ns && !wait_until(c, bc.retry_until_ns)) {
        ps_conform_not_run(
            c, PS_CK_LIMIT429_RECOVERS,
            "the service asked to wait %.1f s after a 429, more than --max-wait %.1f s",
            (double)(bc.retry_until_ns - ps_clock_wall_ns()) / 1e9,
            (double)ps_conform_cfg(c)->max_wait_ns / 1e9);
        /* it applies only when a create was refused; else nothing is to be looked for */
        if (refused_names.n)
            ps_conform_not_run(c, PS_CK_LIMIT429_REFUSED_CREATE_NOT_STORED,
                               "%zu creates on the limit key were answered 429, but the key did "
                               "not recover within --max-wait to list them",
                               refused_names.n);
        else
            ps_conform_not_applicable(c, PS_CK_LIMIT429_REFUSED_CREATE_NOT_STORED,
                                      "no create on the limit key was answered 429");
        ps_exchange_free(&refusal);
        refused_creates_free(&refused_names);
        return;
    }
    ps_exchange_free(&refusal);
    req = limit_op(c, &ops, ops.creates, body);
    /* No 429 named a time: back off 1 s, 2 s, 4 s ... (politeness.h) while
     * 429s come, as long as the next wait ends within --max-wait of the
     * refusal; a named time is waited for once (above) and then judged. */
    int64_t backoff_until = refused_at_ns + ps_conform_cfg(c)->max_wait_ns;
    for (;;) {
        rc = ps_conform_send(c, PS_CK_LIMIT429_RECOVERS, &req, PS_KEY_LIMIT, 0, &ex);
        if (rc == PS_SENT) note_refused_create(&refused_names, &ex);
        if (rc != PS_SENT || ex.status != 429 || named_wait ||
            ps_conform_key_free_at(c, PS_KEY_LIMIT) > backoff_until)
            break;
        ps_exchange_free(&ex);
    }
    if (rc != PS_SENT) {
        ps_conform_no_response(c, PS_CK_LIMIT429_RECOVERS, rc, &ex);
    } else if (ex.status >= 200 && ex.status < 300) {
        ps_rl_read(&ex.resp_headers, service_s(c, ex.done_wall_ns), &rl);
        if (rl.reset_state == PS_RL_OK && reset_before && rl.reset < reset_before) {
            ps_conform_fail(
                c, PS_CK_LIMIT429_RECOVERS, &ex, "a new window (a later X-RateLimit-Reset)",
                "admitted again, but X-RateLimit-Reset went back from %" PRId64 " to %" PRId64,
                reset_before, rl.reset);
        } else {
            ps_conform_pass(c, PS_CK_LIMIT429_RECOVERS);
        }
    } else {
        int64_t sent_s = service_s(c, ex.sent_wall_ns);
        ps_rl_read(&ex.resp_headers, sent_s, &rl);
        if (ex.status == 429 && !named_wait)
            ps_conform_not_applicable(
                c, PS_CK_LIMIT429_RECOVERS,
                "no 429 named a time to wait for (no Retry-After, no X-RateLimit-Reset ahead: "
                "limit429.retry-after fails that); backing off 1 s, 2 s, 4 s ... for %.1f s "
                "(the next wait would end beyond --max-wait %.1f s), every request answered "
                "429 again, which contradicts no time the service named",
                (double)(ex.sent_wall_ns - refused_at_ns) / 1e9,
                (double)ps_conform_cfg(c)->max_wait_ns / 1e9);
        else if (ex.status == 429 && reset_before && sent_s < reset_before && asked_s >= 0)
            ps_conform_fail(
                c, PS_CK_LIMIT429_RECOVERS, &ex, "2xx after waiting as Retry-After said",
                "after waiting the %" PRId64
                " s Retry-After asked for, the next request (at %" PRId64
                ") got 429 again: the Retry-After ran out before the window reset at %" PRId64
                " (X-RateLimit-Reset); was it rounded down?",
                asked_s, sent_s, reset_before);
        else
            ps_conform_fail(
                c, PS_CK_LIMIT429_RECOVERS, &ex, "2xx after waiting as Retry-After said",
                "after waiting as the 429 asked, the next request answered %ld", ex.status);
    }
    ps_exchange_free(&ex);

    /* 6: no refused create was stored */
    check_refused_creates(c, &refused_names);
    refused_creates_free(&refused_names);
}
