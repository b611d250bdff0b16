/* every_response.c - the judges every response of a run goes through,
 * whichever suite sent it: the content type (schema.content-type-json), the
 * Error shape of error responses (errors.*) and the X-RateLimit-* headers
 * with each key's sequence (ratelimit.* but the burst, which only feeds
 * them more responses). The framework calls them through ps_suite_observers. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/ratelimit_headers.h"
#include "runner/suites/shapes.h"
#include "runner/suites/suites.h"

/* Clock slack for Reset comparisons: whole-second rounding on both sides
 * plus the exchange's own duration. */
#define RESET_SLACK_S 2

/* The last judged response on one key. */
typedef struct key_track {
    bool have;
    int64_t limit, remaining, reset;
    long status;
    bool reset_sane;
} key_track;

/* observe_ratelimit's memory for the run: one sequence per key. */
typedef struct ratelimit_state {
    key_track main, limit;
} ratelimit_state;

/* schema.content-type-json */
static void observe_content_type(ps_conform *c, void *state, const ps_observation *o)
{
    (void)state;
    const ps_exchange *ex = o->ex;
    const char *ct = ps_headers_get(&ex->resp_headers, "Content-Type");
    size_t n = 0;
    if (ct) {
        n = strcspn(ct, ";");
        while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t')) n--;
    }
    if (ct && n == 16 && strncasecmp(ct, "application/json", 16) == 0) {
        ps_conform_pass(c, PS_CK_SCHEMA_CONTENT_TYPE_JSON);
        return;
    }
    if (ct)
        ps_conform_fail(c, PS_CK_SCHEMA_CONTENT_TYPE_JSON, ex, "Content-Type: application/json",
                        "a %ld response is labelled '%s', not application/json", ex->status, ct);
    else
        ps_conform_fail(c, PS_CK_SCHEMA_CONTENT_TYPE_JSON, ex, "Content-Type: application/json",
                        "a %ld response has no Content-Type", ex->status);
}

/* errors.schema, errors.status-matches */
static void observe_error_body(ps_conform *c, void *state, const ps_observation *o)
{
    (void)state;
    const ps_exchange *ex = o->ex;
    if (ex->status < 400) return;
    char why[300];
    ps_json *v = ps_conform_parse_body(ex, why, sizeof why);
    if (!v) {
        ps_conform_fail(c, PS_CK_ERRORS_SCHEMA, ex, "an Error object {code, message, status}",
                        "the %ld response: %s", ex->status, why);
        return;
    }
    if (!ps_shape_is_error(v, why, sizeof why)) {
        ps_conform_fail(c, PS_CK_ERRORS_SCHEMA, ex, "an Error object {code, message, status}",
                        "the %ld response body is not an Error: %s", ex->status, why);
    } else {
        ps_conform_pass(c, PS_CK_ERRORS_SCHEMA);
    }
    const ps_json *st = ps_json_get(v, "status");
    if (st && st->type == PS_JSON_NUMBER && st->is_int) {
        if (st->i == ex->status) {
            ps_conform_pass(c, PS_CK_ERRORS_STATUS_MATCHES);
        } else {
            char exp[64];
            snprintf(exp, sizeof exp, "\"status\": %ld", ex->status);
            ps_conform_fail(c, PS_CK_ERRORS_STATUS_MATCHES, ex, exp,
                            "the Error says status %" PRId64 " on a %ld response", st->i, ex->status);
        }
    }
    ps_json_free(v);
}

/* Remaining may legitimately be checked for sign: "-3" is an integer out of
 * bounds (ratelimit.remaining-bounds), not a malformed header. */
static bool parse_signed(const char *raw, int64_t *out)
{
    if (!raw) return false;
    while (*raw == ' ' || *raw == '\t') raw++;
    if (*raw != '-') return false;
    int64_t v;
    if (!ps_rl_parse_uint(raw + 1, &v)) return false;
    *out = -v;
    return true;
}

/* The sequence a response continues: its key's (without --limit-key the
 * limit key is the main key), or none for a request without a known key. */
static key_track *track_for(const ps_conform *c, ratelimit_state *st, ps_key_role role)
{
    if (role == PS_KEY_MAIN) return &st->main;
    if (role == PS_KEY_LIMIT) return ps_conform_cfg(c)->limit_key_given ? &st->limit : &st->main;
    return NULL;
}

/* ratelimit.* but the burst's: every response's X-RateLimit-* headers, and
 * the sequence of Remaining and Reset on each key. */
static void observe_ratelimit(ps_conform *c, void *state, const ps_observation *o)
{
    ratelimit_state *st = state;
    const ps_exchange *ex = o->ex;
    ps_key_role role = o->role;
    /* A mangled credential the server nevertheless accepted may have been
     * counted against the main key: its Remaining sequence starts afresh. */
    if (role == PS_KEY_MANGLED_MAIN && ex->status != 401) st->main.have = false;
    int64_t sent_s = ex->sent_wall_ns / 1000000000;
    int64_t done_s = ex->done_wall_ns / 1000000000;
    ps_rl_info rl;
    ps_rl_read(&ex->resp_headers, sent_s, &rl);
    key_track *tr = track_for(c, st, role);
    bool counted_ok = ex->status != 401; /* a 401 cannot be counted against our key */

    /* presence */
    const char *missing[3];
    int nmissing = 0;
    if (rl.limit_state == PS_RL_ABSENT) missing[nmissing++] = "X-RateLimit-Limit";
    if (rl.remaining_state == PS_RL_ABSENT) missing[nmissing++] = "X-RateLimit-Remaining";
    if (rl.reset_state == PS_RL_ABSENT) missing[nmissing++] = "X-RateLimit-Reset";
    if (nmissing) {
        ps_conform_fail(c, PS_CK_RATELIMIT_HEADERS_PRESENT, ex,
                        "X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset",
                        "a %ld response lacks %s%s%s%s%s", ex->status, missing[0],
                        nmissing > 1 ? ", " : "", nmissing > 1 ? missing[1] : "",
                        nmissing > 2 ? ", " : "", nmissing > 2 ? missing[2] : "");
        if (tr) tr->have = false;
    } else {
        ps_conform_pass(c, PS_CK_RATELIMIT_HEADERS_PRESENT);
    }

    /* integer syntax */
    int64_t remaining = rl.remaining;
    bool remaining_ok = rl.remaining_state == PS_RL_OK;
    if (!remaining_ok && rl.remaining_state == PS_RL_MALFORMED && parse_signed(rl.remaining_raw, &remaining))
        remaining_ok = true;
    struct {
        ps_rl_field_state st;
        const char *name, *raw;
        bool ok;
    } f[3] = {{rl.limit_state, "X-RateLimit-Limit", rl.limit_raw, rl.limit_state == PS_RL_OK},
              {rl.remaining_state, "X-RateLimit-Remaining", rl.remaining_raw, remaining_ok},
              {rl.reset_state, "X-RateLimit-Reset", rl.reset_raw, rl.reset_state == PS_RL_OK}};
    bool all_int = true;
    for (int i = 0; i < 3; i++) {
        if (f[i].st == PS_RL_ABSENT || f[i].ok) continue;
        all_int = false;
        ps_conform_fail(c, PS_CK_RATELIMIT_HEADERS_INTEGERS, ex, "a plain decimal integer, sent once",
                        "%s is '%s' on a %ld response: not a plain integer (or repeated with different values)",
                        f[i].name, f[i].raw ? f[i].raw : "", ex->status);
    }
    if (all_int && !nmissing) ps_conform_pass(c, PS_CK_RATELIMIT_HEADERS_INTEGERS);
    if (nmissing || !all_int) {
        if (tr) tr->have = false;
        return;
    }
    int64_t limit = rl.limit, reset = rl.reset;

    /* bounds */
    if (remaining < 0 || remaining > limit) {
        ps_conform_fail(c, PS_CK_RATELIMIT_REMAINING_BOUNDS, ex, "0 <= Remaining <= Limit",
                        "X-RateLimit-Remaining is %" PRId64 " with X-RateLimit-Limit %" PRId64
                        " on a %ld response",
                        remaining, limit, ex->status);
    } else {
        ps_conform_pass(c, PS_CK_RATELIMIT_REMAINING_BOUNDS);
    }

    /* the plan's figures */
    if (tr && counted_ok) {
        const ps_conform_config *cfg = ps_conform_cfg(c);
        const ps_plan *plan = role == PS_KEY_LIMIT ? &cfg->limit_plan : &cfg->plan;
        if (plan->per_minute > 0 || plan->per_day > 0) {
            if (limit == plan->per_minute || limit == plan->per_day) {
                ps_conform_pass(c, PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN);
            } else {
                char exp[96];
                snprintf(exp, sizeof exp, "%" PRId64 " (per minute) or %" PRId64 " (per day)",
                         plan->per_minute, plan->per_day);
                ps_conform_fail(c, PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN, ex, exp,
                                "X-RateLimit-Limit is %" PRId64 " for a key of plan %s (%s)", limit,
                                ps_plan_name(plan->id), exp);
            }
        } else {
            ps_conform_not_applicable(c, PS_CK_RATELIMIT_LIMIT_MATCHES_PLAN,
                             plan->id == PS_PLAN_ENTERPRISE
                                 ? "enterprise plan without figures: give --plan enterprise:PER_MIN:PER_DAY"
                                 : "the key's plan is not known: give --plan (and --limit-plan)");
        }
    }

    /* a Unix time in seconds, at most a day ahead */
    bool reset_sane = reset >= sent_s - RESET_SLACK_S && reset <= done_s + 86400 + RESET_SLACK_S;
    if (reset_sane) {
        ps_conform_pass(c, PS_CK_RATELIMIT_RESET_UNIX_SECONDS);
    } else {
        const char *hint = reset > 100000000000LL ? " (that looks like milliseconds)"
                           : reset < 1000000000LL ? " (that looks like seconds left, not a Unix time)"
                                                  : "";
        char exp[96];
        snprintf(exp, sizeof exp, "a Unix time in seconds between %" PRId64 " and %" PRId64,
                 sent_s - RESET_SLACK_S, done_s + 86400 + RESET_SLACK_S);
        ps_conform_fail(c, PS_CK_RATELIMIT_RESET_UNIX_SECONDS, ex, exp,
                        "X-RateLimit-Reset is %" PRId64 " at client time %" PRId64 "%s", reset, sent_s, hint);
    }

    if (!tr || !counted_ok) return; /* a 401 is not about our key: its sequence goes on */

    /* Sequences on one key: Reset holds within a window (judged only when
     * Reset is a plausible time), Remaining falls one by one (judged
     * whenever two responses name the same Reset: even a static, bogus
     * Reset then shows a static Remaining). */
    if (tr->have && tr->limit == limit) {
        bool same_reset = reset == tr->reset;
        bool fell = remaining < tr->remaining && ex->status != 429 && tr->status != 429;
        if (!reset_sane || !tr->reset_sane) {
            /* reset-unix-seconds already says what is wrong */
        } else if (same_reset) {
            ps_conform_pass(c, PS_CK_RATELIMIT_RESET_STABLE);
        } else if (fell) {
            ps_conform_fail(c, PS_CK_RATELIMIT_RESET_STABLE, ex, "the same X-RateLimit-Reset within a window",
                            "X-RateLimit-Reset moved from %" PRId64 " to %" PRId64
                            " while Remaining fell from %" PRId64 " to %" PRId64 " (same window)",
                            tr->reset, reset, tr->remaining, remaining);
        } else if (sent_s < tr->reset - RESET_SLACK_S) {
            ps_conform_fail(c, PS_CK_RATELIMIT_RESET_STABLE, ex, "the same X-RateLimit-Reset within a window",
                            "X-RateLimit-Reset moved from %" PRId64 " to %" PRId64 " at %" PRId64
                            ", before the announced reset", tr->reset, reset, sent_s);
        } else {
            ps_conform_pass(c, PS_CK_RATELIMIT_RESET_STABLE); /* a new window */
        }
        if (same_reset && ex->status != 429 && tr->status != 429 && tr->remaining > 0) {
            bool success = ex->status >= 200 && ex->status < 300;
            bool ok = success ? remaining == tr->remaining - 1
                              : (remaining == tr->remaining || remaining == tr->remaining - 1);
            if (ok) {
                ps_conform_pass(c, PS_CK_RATELIMIT_REMAINING_DECREMENTS);
            } else {
                char exp[128];
                if (success) snprintf(exp, sizeof exp, "X-RateLimit-Remaining: %" PRId64, tr->remaining - 1);
                else snprintf(exp, sizeof exp, "X-RateLimit-Remaining: %" PRId64 " or %" PRId64 " (errors may or may not count)",
                              tr->remaining, tr->remaining - 1);
                ps_conform_fail(c, PS_CK_RATELIMIT_REMAINING_DECREMENTS, ex, exp,
                                "X-RateLimit-Remaining went from %" PRId64 " to %" PRId64
                                " over one %ld request in the same window (Reset %" PRId64 ")%s",
                                tr->remaining, remaining, ex->status, reset,
                                remaining < tr->remaining - 1 ? "; is another client using this key?" : "");
            }
        }
    }
    tr->have = true;
    tr->limit = limit;
    tr->remaining = remaining;
    tr->reset = reset;
    tr->status = ex->status;
    tr->reset_sane = reset_sane;
}

const ps_observer ps_suite_observers[] = {
    {"content-type", 0, observe_content_type},
    {"error-body", 0, observe_error_body},
    {"ratelimit-headers", sizeof(ratelimit_state), observe_ratelimit},
};
const size_t ps_suite_observer_count = sizeof ps_suite_observers / sizeof ps_suite_observers[0];
