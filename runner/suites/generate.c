/* generate.c - the generative phase: seeded requests from NewCategory, the
 * Error shape and the bearer scheme (runner/gen_probes.c), each judged by
 * the clause it names (runner/gen_judge.c); a failure is shrunk to a
 * minimal request and, with --replay-dir, saved for `petstore-conform
 * replay`. Then concurrent creates (same and different names) and a list
 * grown beyond common page sizes, within --create-budget: everything the
 * phase created must be listed, once. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/ratelimit_headers.h"
#include "runner/gen_judge.h"
#include "runner/gen_ledger.h"
#include "runner/gen_probes.h"
#include "runner/suites/burst.h"
#include "runner/suites/ratelimit_judge.h"
#include "runner/suites/front.h"
#include "runner/suites/suites.h"

/* The list must hold more than the largest common page size (10, 20, 25,
 * 50, 100) for a list cut at one to show. */
#define LIST_TARGET 110
/* Concurrent creates: half with distinct names, half with one name. */
#define BURST_CREATES 12
/* Requests one shrink may send. */
#define SHRINK_ATTEMPTS 40
/* The phase waits for the main key's window only where a check would
 * otherwise go untested (its first requests, the burst), and never longer
 * than this or --max-wait: a real-time minute would cost the run too much,
 * and the phase stops instead. */
#define MAX_WINDOW_WAIT_NS (10LL * 1000000000)
/* The fill of the long list waits longer (within --max-wait): a 10 s window
 * names a Reset up to 12 s ahead, and without a second window of 60 creates
 * the list never passes 100 (generate.list-complete untested). */
#define FILL_WINDOW_WAIT_NS (15LL * 1000000000)

typedef struct gen_run {
    ps_conform *c;
    ps_gen_rng rng;
    ps_gen_context ctx;
    char tag[32];
    int64_t *ids; /* categories the phase created */
    size_t nids, cap;
    size_t burst_from, burst_to; /* ids[burst_from, burst_to): the concurrent creates' */
    unsigned creates_left;       /* of --create-budget */
    unsigned sent, failed;
    bool shrunk[PS_CK_COUNT]; /* a check's first failure was shrunk and reported */
    long remaining;           /* the main key's last Remaining, -1 unknown */
    long reserve;             /* generation stops at this Remaining: the burst's and lists' room */
    int64_t reset_s;          /* and Reset */
    char stop_reason[200];    /* why generation stopped early ("" = it did not) */
    int64_t wait_cap_ns;      /* the longest wait for a window room_for takes */
    bool fill_refused;        /* the fill stopped at a refusal the spec allows (not a 429) */
    /* generate.credentials' failures are held to the end of the generated
     * requests, so its headline lists every form that failed, not only the
     * first one's probe: the first case, exchange and verdict, the forms. */
    bool cred_held;
    ps_gen_case cred_gc;
    ps_exchange cred_ex;
    ps_gen_verdict cred_v;
    ps_buf cred_forms;
    unsigned cred_more;
} gen_run;

static void note_id(gen_run *g, int64_t id)
{
    if (g->nids == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 64;
        g->ids = realloc(g->ids, g->cap * sizeof *g->ids);
        if (!g->ids) abort();
    }
    g->ids[g->nids++] = id;
}

/* The main key's Remaining and the second its window ends (Reset in any
 * form that names a time: a Unix time, seconds left, milliseconds), in the
 * service's clock (core/service_clock.h). */
static void note_limits(gen_run *g, const ps_exchange *ex)
{
    ps_rl_info rl;
    int64_t sent_s = ps_conform_service_ns(g->c, ex->sent_wall_ns) / 1000000000;
    ps_rl_read(&ex->resp_headers, ps_conform_service_ns(g->c, ex->done_wall_ns) / 1000000000, &rl);
    if (rl.remaining_state == PS_RL_OK) g->remaining = (long)rl.remaining;
    if (!ps_ratelimit_reset_time(&rl, sent_s, &g->reset_s)) g->reset_s = 0;
}

/* Whether need more requests fit the main key's window; may_wait: wait for
 * the next window (within 10 s and --max-wait) instead of saying no. On no,
 * stop_reason says why. */
static bool room_for(gen_run *g, long need, bool may_wait)
{
    if (g->remaining < 0 || g->remaining >= need + 2) return true;
    int64_t now = ps_conform_service_ns(g->c, ps_clock_wall_ns());
    int64_t until = (g->reset_s + 1) * 1000000000LL; /* in the service's clock */
    int64_t cap = ps_conform_cfg(g->c)->max_wait_ns;
    if (cap > g->wait_cap_ns) cap = g->wait_cap_ns;
    if (may_wait && g->reset_s > 0 && until - now <= cap) {
        /* until the service's clock has surely reached it (conform.h) */
        while (ps_clock_wall_ns() + ps_conform_wait_offset_ns(g->c) < until &&
               !ps_conform_interrupted)
            ps_clock_sleep_ns(50000000);
        g->remaining = -1;
        return true;
    }
    char when[64];
    if (g->reset_s <= 0)
        snprintf(when, sizeof when, "no X-RateLimit-Reset naming its window's end");
    else if (until <= now)
        snprintf(when, sizeof when, "its window due to reset now");
    else
        snprintf(when, sizeof when, "its window resetting in %lld s",
                 (long long)((until - now + 999999999) / 1000000000));
    snprintf(g->stop_reason, sizeof g->stop_reason,
             "the main key's X-RateLimit-Remaining fell to %ld, %s (%s)", g->remaining, when,
             !may_wait         ? "it waits for a window only at its start and before the burst"
             : g->reset_s <= 0 ? "no time to wait for"
             : g->wait_cap_ns > MAX_WINDOW_WAIT_NS
                 ? "longer than the fill waits, 15 s or --max-wait"
                 : "longer than the phase waits, 10 s or --max-wait");
    return false;
}

static bool may_create(const ps_gen_case *gc)
{
    return gc->expect == PS_GEN_CREATED || gc->expect == PS_GEN_CREATED_ONLY ||
           gc->expect == PS_GEN_NO_5XX;
}

/* Sends gc (credentials expanded) and judges the answer into v; the exchange
 * stays in ex (caller frees). Returns ps_conform_send's code. */
static int send_case(gen_run *g, const ps_gen_case *gc, ps_exchange *ex, ps_gen_verdict *v)
{
    ps_gen_wire w;
    ps_gen_wire_build(gc, ps_conform_cfg(g->c)->api_key, ps_conform_unknown_key(g->c), &w);
    bool proper = ps_gen_case_proper_key(gc);
    /* a repeated singleton field, or a control character in a field value (RFC 9110
     * 5.5: invalid), is malformed at the HTTP level: Node's parser answers such a
     * request itself, a bare 400, which the observers must not judge */
    bool ctl = false;
    for (const char *p = w.req.authorization; p && *p && !ctl; p++)
        ctl = (unsigned char)*p < 0x20 && *p != '\t';
    unsigned flags = PS_SEND_RETRY_429 | (w.auth2 || ctl ? PS_SEND_NOT_OBSERVED : 0);
    int rc = ps_conform_send_ex(g->c, gc->ck, &w.req, w.auth2,
                                proper ? PS_KEY_MAIN : PS_KEY_MANGLED_MAIN, flags, ex);
    g->sent++;
    memset(v, 0, sizeof *v);
    v->outcome = PS_GEN_UNJUDGED;
    if (rc == PS_SENT) {
        if (proper) note_limits(g, ex);
        ps_gen_judge(gc, w.body.data ? w.body.data : "", w.body.len, ex, v);
        if (v->created) {
            note_id(g, v->id);
            if (g->creates_left) g->creates_left--;
        }
    }
    ps_gen_wire_free(&w);
    return rc;
}

/* Does gc still fail the way the original did (same status)? */
static bool still_fails(gen_run *g, const ps_gen_case *gc, long status, ps_exchange *best,
                        ps_gen_verdict *best_v)
{
    if (may_create(gc) && !g->creates_left) return false;
    ps_exchange ex;
    ps_gen_verdict v;
    int rc = send_case(g, gc, &ex, &v);
    bool fails = rc == PS_SENT && v.outcome == PS_GEN_FAIL && ex.status == status;
    if (fails) {
        ps_exchange_free(best);
        *best = ex;
        *best_v = v;
    } else {
        ps_exchange_free(&ex);
    }
    return fails;
}

/* Shrinks gc's probed string while it keeps failing: first the shortest
 * failing prefix of its removable units (a length limit is found in
 * log2(n) requests), then chunks removed, halving their size. best holds
 * the smallest failing exchange seen. */
/* Cuts gc's removable units to the shortest prefix that still fails
 * (binary search: a length limit is found in log2(n) requests). */
static void shrink_prefix(gen_run *g, ps_gen_case *gc, long status, ps_exchange *best,
                          ps_gen_verdict *best_v, unsigned *attempts, bool *keep)
{
    size_t n = gc->nunits, removable = 0;
    for (size_t i = 0; i < n; i++)
        removable += !gc->units[i].fixed;
    size_t lo = 0, hi = removable;
    while (lo < hi && *attempts < SHRINK_ATTEMPTS && !ps_conform_aborted(g->c)) {
        size_t mid = lo + (hi - lo) / 2, seen = 0;
        for (size_t i = 0; i < n; i++)
            keep[i] = gc->units[i].fixed || seen++ < mid;
        ps_gen_case trial;
        ps_gen_case_copy(&trial, gc);
        ps_gen_case_keep_units(&trial, keep);
        ++*attempts;
        if (still_fails(g, &trial, status, best, best_v))
            hi = mid;
        else
            lo = mid + 1;
        ps_gen_case_free(&trial);
    }
    size_t seen = 0;
    for (size_t i = 0; i < n; i++)
        keep[i] = gc->units[i].fixed || seen++ < hi;
    ps_gen_case_keep_units(gc, keep);
}

/* The bytes a unit stands for once decoded: a \\u escape its UTF-8 length
 * (a surrogate pair 4), another escape 1, raw text its own length. */
static size_t decoded_len(const ps_gen_unit *u)
{
    if (u->len < 2 || u->text[0] != '\\') return u->len;
    if (u->text[1] != 'u') return 1;
    if (u->len >= 12) return 4;
    unsigned cp = (unsigned)strtoul(u->text + 2, NULL, 16);
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
}

/* Every removable unit that is not one plain letter becomes as many "a"
 * units as it has bytes: the body stays as long, and when the answer still
 * fails (the text's kind did not matter) a byte limit is then found to the
 * byte by the prefix search; when it passes, the change is undone. */
static bool simplify_units(gen_run *g, ps_gen_case *gc, long status, ps_exchange *best,
                           ps_gen_verdict *best_v, unsigned *attempts)
{
    ps_gen_case trial;
    ps_gen_case_copy(&trial, gc);
    for (size_t i = 0; i < trial.nunits; i++)
        free(trial.units[i].text);
    trial.nunits = 0;
    bool changed = false;
    for (size_t i = 0; i < gc->nunits; i++) {
        const ps_gen_unit *u = &gc->units[i];
        if (u->fixed || (u->len == 1 && u->text[0] >= 'a' && u->text[0] <= 'z')) {
            ps_gen_case_add_unit(&trial, u->text, u->len, u->fixed);
            continue;
        }
        for (size_t k = decoded_len(u); k > 0; k--)
            ps_gen_case_add_unit(&trial, "a", 1, false);
        changed = true;
    }
    if (changed && *attempts < SHRINK_ATTEMPTS) {
        ++*attempts;
        if (still_fails(g, &trial, status, best, best_v)) {
            ps_gen_case_free(gc);
            *gc = trial;
            return true;
        }
    }
    ps_gen_case_free(&trial);
    return false;
}

static void shrink(gen_run *g, ps_gen_case *gc, long status, ps_exchange *best,
                   ps_gen_verdict *best_v)
{
    unsigned attempts = 0;
    if (!gc->nunits) return;
    /* 1: the shortest failing prefix; then in plain letters (a unit may become
     * several), and that shortest again */
    bool *keep = malloc(gc->nunits * sizeof *keep);
    if (!keep) abort();
    shrink_prefix(g, gc, status, best, best_v, &attempts, keep);
    if (simplify_units(g, gc, status, best, best_v, &attempts)) {
        free(keep);
        keep = malloc((gc->nunits ? gc->nunits : 1) * sizeof *keep);
        if (!keep) abort();
        shrink_prefix(g, gc, status, best, best_v, &attempts, keep);
    }
    /* 2: chunks of the rest removed, halving their size */
    for (size_t size = gc->nunits / 2; size >= 1 && attempts < SHRINK_ATTEMPTS; size /= 2) {
        for (size_t at = 0; at + size <= gc->nunits && attempts < SHRINK_ATTEMPTS;) {
            bool any = false;
            for (size_t i = 0; i < gc->nunits; i++) {
                keep[i] = !(i >= at && i < at + size) || gc->units[i].fixed;
                any |= !keep[i];
            }
            if (!any) {
                at += size;
                continue;
            }
            ps_gen_case trial;
            ps_gen_case_copy(&trial, gc);
            ps_gen_case_keep_units(&trial, keep);
            attempts++;
            if (still_fails(g, &trial, status, best, best_v)) {
                ps_gen_case_keep_units(gc, keep);
            } else {
                at += size;
            }
            ps_gen_case_free(&trial);
        }
        if (ps_conform_aborted(g->c)) break;
    }
    free(keep);
}

/* A failing case: its first failure per check is shrunk, saved (with
 * --replay-dir) and reported with the smallest failing exchange; later
 * ones are counted. */
static void report_failure(gen_run *g, ps_gen_case *gc, ps_exchange *ex, ps_gen_verdict *v)
{
    g->failed++;
    if (g->shrunk[gc->ck]) {
        ps_conform_fail(g->c, gc->ck, ex, v->expected, "%s", v->message);
        return;
    }
    g->shrunk[gc->ck] = true;
    ps_buf before = PS_BUF_INIT, after = PS_BUF_INIT;
    ps_gen_case_body(gc, &before);
    ps_exchange best = *ex; /* owned here from now on */
    memset(ex, 0, sizeof *ex);
    ps_gen_verdict best_v = *v;
    shrink(g, gc, best.status, &best, &best_v);
    ps_gen_case_body(gc, &after);
    const ps_conform_config *cfg = ps_conform_cfg(g->c);
    char where[600] = "";
    if (cfg->replay_dir) {
        char path[512];
        snprintf(path, sizeof path, "%s/generate-%" PRIu64 "-%s.json", cfg->replay_dir,
                 ps_conform_seed(g->c), ps_check_def_get(gc->ck)->id + 9);
        ps_error err;
        if (ps_gen_replay_write(path, gc, ps_conform_base_url(g->c), ps_conform_unknown_key(g->c),
                                ps_conform_seed(g->c), best_v.message, &err) == 0)
            snprintf(where, sizeof where, "; replay: petstore-conform replay %s", path);
        else
            snprintf(where, sizeof where, "; %s", err.message);
    }
    ps_buf msg = PS_BUF_INIT;
    ps_buf_printf(&msg, "%s [seed %" PRIu64, best_v.message, ps_conform_seed(g->c));
    if (after.len < before.len)
        ps_buf_printf(&msg, "; body shrunk from %zu to %zu bytes", before.len, after.len);
    ps_buf_printf(&msg, "%s]", where);
    ps_conform_fail(g->c, gc->ck, &best, best_v.expected, "%s", msg.data);
    ps_buf_free(&msg);
    ps_exchange_free(&best);
    ps_buf_free(&before);
    ps_buf_free(&after);
}

/* ---- the generated requests --------------------------------------------------- */

/* Holds a generate.credentials failure (see gen_run): the first whole, each
 * later one as its form and status (once per form); ex is taken over. */
static void hold_credentials_failure(gen_run *g, const ps_gen_case *gc, ps_exchange *ex,
                                     const ps_gen_verdict *v)
{
    ps_buf form = PS_BUF_INIT;
    ps_gen_auth_forms(gc, &form);
    ps_buf_printf(&form, " %ld", ex->status);
    bool seen = g->cred_forms.data && strstr(g->cred_forms.data, form.data);
    if (!seen) ps_buf_printf(&g->cred_forms, "%s%s", g->cred_forms.len ? ", " : "", form.data);
    ps_buf_free(&form);
    if (g->cred_held) {
        g->cred_more++;
        return;
    }
    g->cred_held = true;
    ps_gen_case_copy(&g->cred_gc, gc);
    g->cred_ex = *ex;
    memset(ex, 0, sizeof *ex);
    g->cred_v = *v;
}

static void generate_cases(gen_run *g)
{
    const ps_conform_config *cfg = ps_conform_cfg(g->c);
    int64_t deadline = ps_clock_mono_ns() + cfg->generate_time_ns;
    size_t made = 0;
    for (size_t i = 0; made < cfg->examples; i++) {
        if (ps_conform_aborted(g->c)) return;
        if (ps_clock_mono_ns() >= deadline) {
            snprintf(g->stop_reason, sizeof g->stop_reason,
                     "the time bound (--generate-time %.0f s) was reached",
                     (double)cfg->generate_time_ns / 1e9);
            return;
        }
        /* the first requests are one per check (gen_probes.c): worth a wait */
        if (!room_for(g, g->reserve, i < 4)) return;
        ps_gen_case gc;
        ps_gen_make(&g->rng, i, &g->ctx, &gc);
        /* a create beyond the budget is not sent (the case is drawn, so the
         * seed's later cases stay the same) */
        if (may_create(&gc) && !g->creates_left) {
            ps_gen_case_free(&gc);
            if (i > 4 * (size_t)cfg->examples + ps_gen_probe_count()) return;
            continue;
        }
        made++;
        if (!ps_conform_selected(g->c, gc.ck)) {
            ps_gen_case_free(&gc);
            continue;
        }
        ps_exchange ex;
        ps_gen_verdict v;
        int rc = send_case(g, &gc, &ex, &v);
        if (rc == PS_SEND_SKIPPED) {
            /* a wait beyond --max-wait (or 429s kept coming): so would the next one be */
            ps_conform_no_response(g->c, gc.ck, rc, &ex);
            snprintf(g->stop_reason, sizeof g->stop_reason,
                     "a request was not sent: the main key's 429s asked for more than "
                     "--max-wait, or kept coming");
            ps_exchange_free(&ex);
            ps_gen_case_free(&gc);
            return;
        }
        if (rc != PS_SENT)
            ps_conform_no_response(g->c, gc.ck, rc, &ex);
        else if (v.outcome == PS_GEN_PASS)
            ps_conform_pass(g->c, gc.ck);
        else if (v.outcome == PS_GEN_FAIL && gc.ck == PS_CK_GENERATE_CREDENTIALS &&
                 !ps_front_made(&ex, NULL, 0))
            hold_credentials_failure(g, &gc, &ex, &v); /* a front's page: reported, not judged */
        else if (v.outcome == PS_GEN_FAIL)
            report_failure(g, &gc, &ex, &v);
        ps_exchange_free(&ex);
        ps_gen_case_free(&gc);
    }
}

/* Reports the held generate.credentials failures: the first one's exchange
 * as evidence, its message naming every form that failed with its status. */
static void report_credentials_failures(gen_run *g)
{
    if (!g->cred_held) return;
    size_t n = strlen(g->cred_v.message);
    if (g->cred_more)
        snprintf(g->cred_v.message + n, sizeof g->cred_v.message - n,
                 "; every form that failed: %s", g->cred_forms.data);
    report_failure(g, &g->cred_gc, &g->cred_ex, &g->cred_v);
    for (unsigned k = 0; k < g->cred_more; k++) {
        g->failed++;
        ps_conform_fail(g->c, PS_CK_GENERATE_CREDENTIALS, NULL, "",
                        "another form of the credential failed (named in the first failure)");
    }
    ps_exchange_free(&g->cred_ex);
    ps_gen_case_free(&g->cred_gc);
    ps_buf_free(&g->cred_forms);
    g->cred_held = false;
}

/* ---- concurrent creates --------------------------------------------------------- */

static void concurrent_creates(gen_run *g)
{
    ps_conform *c = g->c;
    const ps_conform_config *cfg = ps_conform_cfg(c);
    ps_check_id ck = PS_CK_GENERATE_CONCURRENT_CREATES;
    if (!ps_burst_supported(ps_conform_base_url(c))) {
        ps_conform_not_applicable(c, ck,
                                  "the burst client cannot reach %s (user information in the "
                                  "URL?)",
                                  ps_conform_base_url(c));
        return;
    }
    if (g->creates_left < BURST_CREATES) {
        /* the run's own budget: untested (the run incomplete), not "does not apply" */
        ps_conform_not_run(c, ck,
                           "--create-budget leaves %u creates, fewer than the %d of the "
                           "concurrent burst (raise it)",
                           g->creates_left, BURST_CREATES);
        return;
    }
    if (!room_for(g, BURST_CREATES, true)) {
        ps_conform_not_run(c, ck, "not sent: %s", g->stop_reason);
        return;
    }
    /* a 429 asked the key to wait: the burst honours it (politeness.h), or is not sent */
    int64_t free_at = ps_conform_key_free_at(c, PS_KEY_MAIN), now = ps_clock_wall_ns();
    if (free_at - now > MAX_WINDOW_WAIT_NS || free_at - now > cfg->max_wait_ns) {
        ps_conform_not_run(c, ck,
                           "not sent: after a 429 the main key may be used again in %.1f s, "
                           "longer than the phase waits (10 s or --max-wait)",
                           (double)(free_at - now) / 1e9);
        return;
    }
    while (ps_clock_wall_ns() < free_at && !ps_conform_interrupted)
        ps_clock_sleep_ns(50000000);
    char auth[1024];
    ps_conform_bearer(c, PS_KEY_MAIN, auth, sizeof auth);
    char bodies[BURST_CREATES][96];
    ps_burst_request reqs[BURST_CREATES];
    for (int i = 0; i < BURST_CREATES; i++) {
        if (i < BURST_CREATES / 2)
            snprintf(bodies[i], sizeof bodies[i], "{\"name\":\"%sburst %d\"}", g->tag, i);
        else
            snprintf(bodies[i], sizeof bodies[i], "{\"name\":\"%sburst same\"}", g->tag);
        reqs[i] = (ps_burst_request){
            ps_conform_base_url(c), "POST",    "/categories",      auth,
            "PETSTORE_API_KEY",     bodies[i], "application/json", cfg->timeout_ns};
    }
    ps_exchange out[BURST_CREATES];
    memset(out, 0, sizeof out);
    char why[300];
    ps_burst_options opt = {0, cfg->tls, 0};
    ps_burst_stats stats;
    if (ps_burst_run(reqs, BURST_CREATES, &opt, out, &stats, why, sizeof why) < 0) {
        ps_conform_not_run(c, ck, "the burst could not open its connections: %s", why);
        return;
    }
    /* every observer judges the replies, the rate-limit judge each on its own */
    ps_ratelimit_judge_concurrent(c, true);
    for (int i = 0; i < BURST_CREATES; i++)
        if (out[i].responded) ps_conform_observe(c, &out[i], PS_KEY_MAIN);
    ps_ratelimit_judge_concurrent(c, false);
    int64_t ids[BURST_CREATES];
    int nids = 0, refused = 0, first_refusal = -1;
    const char *exp = "201 with a new id each (or 400/409 for a name already taken: uniqueness "
                      "is not shown)";
    for (int i = 0; i < BURST_CREATES; i++) {
        const ps_exchange *ex = &out[i];
        if (!ex->responded) continue;
        if (ex->status == 429) {
            if (!refused++) first_refusal = i;
            continue;
        }
        if (ex->status >= 500) {
            ps_conform_fail(c, ck, ex, exp, "a create of a concurrent burst answered %ld",
                            ex->status);
            continue;
        }
        if (ex->status != 201) continue; /* a refusal: uniqueness or limits, not shown */
        ps_json *got = ps_conform_parse_body(ex, why, sizeof why);
        const ps_json *id = got ? ps_json_get(got, "id") : NULL;
        if (id && id->type == PS_JSON_NUMBER && id->is_int) {
            for (int k = 0; k < nids; k++)
                if (ids[k] == id->i)
                    ps_conform_fail(c, ck, ex, exp,
                                    "two creates of one concurrent burst got id %" PRId64
                                    " (ids handed out read-then-insert?)",
                                    id->i);
            for (size_t k = 0; k < g->nids; k++)
                if (g->ids[k] == id->i)
                    ps_conform_fail(c, ck, ex, exp,
                                    "a concurrent create got id %" PRId64
                                    ", already given to another category of this run",
                                    id->i);
            ids[nids++] = id->i;
        }
        ps_json_free(got);
    }
    if (refused) ps_conform_note_refusal(c, &out[first_refusal], PS_KEY_MAIN);
    ps_conform_count_creates(c, (unsigned)nids);
    g->creates_left = g->creates_left > (unsigned)nids ? g->creates_left - (unsigned)nids : 0;
    g->burst_from = g->nids;
    for (int k = 0; k < nids; k++)
        note_id(g, ids[k]);
    g->burst_to = g->nids;
    if (nids >= 2)
        ps_conform_pass(c, ck);
    else
        ps_conform_not_run(c, ck,
                           "only %d of %d concurrent creates were answered 201 (%d refused with "
                           "429): no ids to compare",
                           nids, BURST_CREATES, refused);
    for (int i = 0; i < BURST_CREATES; i++)
        ps_exchange_free(&out[i]);
}

/* ---- the list beyond page sizes -------------------------------------------------- */

/* GET /categories as an array (NULL: the outcome of ck already recorded). */
static ps_json *get_list(gen_run *g, ps_check_id ck, ps_exchange *ex)
{
    char auth[1024], why[300];
    ps_conform_bearer(g->c, PS_KEY_MAIN, auth, sizeof auth);
    ps_client_request req = {"GET", "/categories", auth, NULL, 0, NULL};
    int rc = ps_conform_send(g->c, ck, &req, PS_KEY_MAIN, PS_SEND_RETRY_429, ex);
    if (rc != PS_SENT) {
        ps_conform_no_response(g->c, ck, rc, ex);
        return NULL;
    }
    note_limits(g, ex);
    if (ex->status != 200) {
        ps_conform_fail(g->c, ck, ex, "200 with every category", "the list answered %ld",
                        ex->status);
        return NULL;
    }
    if (ex->truncated) {
        ps_conform_not_run(g->c, ck,
                           "the list is %zu bytes, more than the %zu KiB kept (raise --max-body)",
                           ex->body_total, ex->body_cap >> 10);
        return NULL;
    }
    ps_json *list = ps_ledger_parse_body(ex, why, sizeof why);
    if (!list || list->type != PS_JSON_ARRAY) {
        ps_conform_fail(g->c, ck, ex, "a JSON array", "%s",
                        list ? "the list is not an array" : why);
        ps_json_free(list);
        return NULL;
    }
    return list;
}

/* Creates plain tagged categories until the list would hold LIST_TARGET,
 * waiting for the main key's next window (within 10 s and --max-wait) when
 * one runs out: a short window's 60 creates would not reach 110 otherwise. */
static void fill_list(gen_run *g, size_t have)
{
    char auth[1024], body[96];
    ps_conform_bearer(g->c, PS_KEY_MAIN, auth, sizeof auth);
    for (size_t k = 0; have < LIST_TARGET && g->creates_left && !ps_conform_aborted(g->c); k++) {
        if (!room_for(g, 1, true)) return;
        snprintf(body, sizeof body, "{\"name\":\"%sfill %zu\"}", g->tag, k);
        ps_client_request req = {"POST", "/categories", auth,
                                 body,   strlen(body),  "application/json"};
        ps_exchange ex;
        int rc = ps_conform_send(g->c, PS_CK_GENERATE_LIST_COMPLETE, &req, PS_KEY_MAIN,
                                 PS_SEND_RETRY_429, &ex);
        if (rc == PS_SENT) note_limits(g, &ex);
        if (rc == PS_SENT && ex.status == 201) {
            ps_json *got = ps_conform_parse_body(&ex, NULL, 0);
            const ps_json *id = got ? ps_json_get(got, "id") : NULL;
            if (id && id->type == PS_JSON_NUMBER && id->is_int) note_id(g, id->i);
            ps_json_free(got);
            g->creates_left--;
            have++;
        } else {
            /* the fill is best effort (a refusal, a name taken, no reply: it stops): the
             * check judges what the list holds */
            snprintf(g->stop_reason, sizeof g->stop_reason, "a create of the fill answered %ld",
                     rc == PS_SENT ? ex.status : 0L);
            /* a count limit is not shown (spec 8 rule 4): such a refusal leaves nothing to
             * judge; no reply, a 429 or a 5xx leaves the check untested */
            g->fill_refused =
                rc == PS_SENT && ex.status >= 400 && ex.status < 500 && ex.status != 429;
            ps_exchange_free(&ex);
            return;
        }
        ps_exchange_free(&ex);
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void list_complete(gen_run *g)
{
    ps_conform *c = g->c;
    ps_check_id ck = PS_CK_GENERATE_LIST_COMPLETE;
    ps_exchange ex;
    ps_json *list = get_list(g, ck, &ex);
    size_t have = list ? list->count : 0;
    ps_json_free(list);
    ps_exchange_free(&ex);
    if (!list) return;
    if (have < LIST_TARGET && LIST_TARGET - have > g->creates_left) {
        /* the run's own budget: untested, so the run says it is incomplete */
        ps_conform_not_run(c, ck,
                           "the list holds %zu categories; growing it to %d (beyond the "
                           "common page sizes 10 to 100) takes %zu creates, more than the "
                           "%u that --create-budget leaves (raise it)",
                           have, LIST_TARGET, LIST_TARGET - have, g->creates_left);
    } else if (have < LIST_TARGET) {
        g->wait_cap_ns = FILL_WINDOW_WAIT_NS;
        fill_list(g, have);
        g->wait_cap_ns = MAX_WINDOW_WAIT_NS;
    }
    list = get_list(g, ck, &ex);
    if (!list) goto out;
    size_t n = list->count;
    int64_t *listed = calloc(n + 1, sizeof *listed);
    if (!listed) abort();
    size_t nl = 0;
    for (size_t i = 0; i < n; i++) {
        const ps_json *id = ps_json_get(list->items[i], "id");
        if (id && id->type == PS_JSON_NUMBER && id->is_int) listed[nl++] = id->i;
    }
    qsort(listed, nl, sizeof *listed, cmp_i64);
    bool dup = false;
    for (size_t i = 1; i < nl && !dup; i++)
        if (listed[i] == listed[i - 1]) {
            dup = true;
            ps_conform_fail(c, ck, &ex, "every category once",
                            "id %" PRId64 " occurs more than once in a list of %zu", listed[i], n);
        }
    size_t missing = 0, burst_missing = 0;
    int64_t first_missing = 0, first_burst_missing = 0;
    for (size_t k = 0; k < g->nids; k++) {
        if (bsearch(&g->ids[k], listed, nl, sizeof *listed, cmp_i64)) continue;
        bool burst = k >= g->burst_from && k < g->burst_to;
        if (burst && !burst_missing++) first_burst_missing = g->ids[k];
        if (!missing++) first_missing = g->ids[k];
    }
    if (burst_missing)
        ps_conform_fail(c, PS_CK_GENERATE_CONCURRENT_CREATES, &ex, "every created category listed",
                        "%zu categories created by the concurrent burst are not in the list "
                        "(%zu items), e.g. id %" PRId64,
                        burst_missing, n, first_burst_missing);
    if (missing)
        ps_conform_fail(c, ck, &ex, "every created category listed",
                        "%zu of the %zu categories this phase created are not in the list of %zu "
                        "items, e.g. id %" PRId64 " (a list cut at a page size? the spec defines "
                        "no pagination: the list returns all categories)",
                        missing, g->nids, n, first_missing);
    else if (!dup && n >= LIST_TARGET)
        ps_conform_pass(c, ck);
    else if (!dup && g->fill_refused)
        ps_conform_not_applicable(c, ck,
                                  "the list holds %zu categories, not beyond the common page "
                                  "sizes (%d needed: %s, a limit the spec leaves open); every "
                                  "one this phase created is listed",
                                  n, LIST_TARGET, g->stop_reason);
    else if (!dup)
        ps_conform_not_run(c, ck,
                           "the list holds %zu categories, not beyond the common page sizes (%d "
                           "needed: %s); every one this phase created is listed",
                           n, LIST_TARGET,
                           g->stop_reason[0] ? g->stop_reason
                           : g->creates_left ? "creating more failed"
                                             : "--create-budget is spent (raise it)");
    /* every create of the run, whichever suite sent it (gen_ledger.h) */
    ps_ledger_judge_list(c, list, &ex, true);
    free(listed);
    ps_json_free(list);
out:
    ps_exchange_free(&ex);
}

/* ---- the phase ---------------------------------------------------------------------- */

static const ps_check_id generated_checks[] = {PS_CK_GENERATE_STRING_FIELDS, PS_CK_GENERATE_MEMBERS,
                                               PS_CK_GENERATE_CONTENT_TYPE,
                                               PS_CK_GENERATE_CREDENTIALS};

static void add_secret(void *ctx, const char *secret, const char *env)
{
    ps_conform_add_secret(ctx, secret, env);
}

void ps_suite_generate(ps_conform *c)
{
    const ps_conform_config *cfg = ps_conform_cfg(c);
    int64_t started = ps_clock_mono_ns();
    gen_run g;
    memset(&g, 0, sizeof g);
    g.c = c;
    g.remaining = -1;
    g.wait_cap_ns = MAX_WINDOW_WAIT_NS;
    ps_gen_rng_seed(&g.rng, ps_conform_seed(c));
    snprintf(g.tag, sizeof g.tag, "c%s g", ps_conform_run_token(c));
    g.ctx.tag = g.tag;
    g.ctx.key_cases = ps_gen_key_cases(cfg->api_key, add_secret, c);
    g.reserve = ps_conform_selected(c, PS_CK_GENERATE_CONCURRENT_CREATES) ? BURST_CREATES + 4 : 1;
    ps_conform_tally t;
    ps_conform_tally_get(c, &t);
    g.creates_left = cfg->create_budget > t.creates ? cfg->create_budget - t.creates : 0;
    if (!cfg->quiet) {
        fprintf(stderr,
                "petstore-conform: generative phase: seed %" PRIu64 " (--seed %" PRIu64
                " sends the same requests), up to %u requests in %.0f s, "
                "%u creates left of --create-budget %u\n",
                ps_conform_seed(c), ps_conform_seed(c), cfg->examples,
                (double)cfg->generate_time_ns / 1e9, g.creates_left, cfg->create_budget);
        fflush(stderr);
    }
    if (cfg->examples == 0) {
        for (size_t i = 0; i < sizeof generated_checks / sizeof generated_checks[0]; i++)
            ps_conform_not_applicable(c, generated_checks[i],
                                      "--examples 0: no requests are generated");
    } else {
        generate_cases(&g);
        report_credentials_failures(&g);
        for (size_t i = 0; i < sizeof generated_checks / sizeof generated_checks[0]; i++)
            ps_conform_not_run(c, generated_checks[i],
                               "no generated request of this check was judged: %s",
                               g.stop_reason[0] ? g.stop_reason : "none was sent");
    }
    /* why the generated requests stopped early (the burst and the list say their own) */
    char generation_stop[sizeof g.stop_reason];
    memcpy(generation_stop, g.stop_reason, sizeof generation_stop);
    g.stop_reason[0] = '\0';
    if (!ps_conform_aborted(c) && ps_conform_selected(c, PS_CK_GENERATE_CONCURRENT_CREATES))
        concurrent_creates(&g);
    if (!ps_conform_aborted(c) && (ps_conform_selected(c, PS_CK_GENERATE_LIST_COMPLETE) ||
                                   ps_conform_selected(c, PS_CK_GENERATE_CONCURRENT_CREATES) ||
                                   ps_conform_selected(c, PS_CK_ROUNDTRIP_STORED_AS_ANSWERED)))
        list_complete(&g);
    ps_conform_note_generated(c, g.sent, generation_stop, ps_clock_mono_ns() - started);
    free(g.ids);
}
