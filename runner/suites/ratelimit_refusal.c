/* ratelimit_refusal.c - what the 429 of the limit suite must carry (an
 * Error body, Remaining 0, a Retry-After that ends by the Reset), and its
 * last phase: no create answered 429 was stored (ratelimit_limit.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/ratelimit_headers.h"
#include "runner/suites/ratelimit_judge.h"
#include "runner/suites/ratelimit_limit.h"
#include "runner/suites/shapes.h"

/* What the 429 itself must carry. */
void limit_check_refusal(ps_conform *c, const ps_exchange *ex, const window_probe *probe)
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

    int64_t now_s = limit_service_s(c, ex->done_wall_ns);
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
     * Allow whole-second rounding on both sides and the exchange's duration:
     * the end is counted from when the request was sent (ends) and from when
     * its answer was read (ends_hi, what the message names), both by the one
     * retry-time function (core ps_rl_retry_at_ns). */
    ps_retry_source src;
    int64_t offset = ps_conform_clock_offset_ns(c);
    int64_t ends = limit_service_s(c, ps_rl_retry_at_ns(&rl, ex->sent_wall_ns, offset, &src));
    int64_t ends_hi = limit_service_s(c, ps_rl_retry_at_ns(&rl, ex->done_wall_ns, offset, &src));
    if (ends <= rl.reset + 2) {
        ps_conform_pass(c, PS_CK_LIMIT429_RETRY_AFTER_AGREES);
    } else if (!probe->fresh) {
        /* the first refusal of a fresh window can have no ban behind it; a
         * refusal in a window already counting may (an earlier refusal's) */
        ps_conform_not_applicable(
            c, PS_CK_LIMIT429_RETRY_AFTER_AGREES,
            "Retry-After '%s' ends around %" PRId64 ", after X-RateLimit-Reset %" PRId64
            ", but the window was not seen fresh before this refusal (X-RateLimit-Remaining "
            "%" PRId64 " of %" PRId64
            "): a temporary ban an earlier refusal started (spec 8 rule 3) may "
            "outlast it",
            rl.retry_after_raw, ends_hi, rl.reset, probe->announced, probe->limit);
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
                        " says the limit resets%s; of the first refusals of a fresh window it "
                        "named the soonest retry, so no ban (spec 8 rule 3) can explain it",
                        rl.retry_after_raw, ends_hi, rl.reset, hint);
    }
}

void limit_note_refused_create(refused_creates *r, const ps_exchange *ex)
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

void limit_refused_creates_free(refused_creates *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->names[i]);
    free(r->names);
    memset(r, 0, sizeof *r);
}

/* A create answered 429 was refused (spec 8 rule 2, RFC 6585 4): storing
 * it anyway admits it beyond the limit. Once the key recovered, the list
 * (on the main key) must hold none of the refused creates' names. */
void limit_stored_create_phase(limit_run *run)
{
    ps_conform *c = run->c;
    const refused_creates *r = &run->refused_names;
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
