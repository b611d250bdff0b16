/* run.c - one whole run: the suites in order, the exit code and the JSON
 * report document, both read from one pass over the check outcomes. */
#include "runner/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/clock.h"
#include "core/json_writer.h"
#include "core/service_clock.h"
#include "core/version.h"
#include "runner/conform.h"
#include "runner/suites/burst.h"
#include "runner/suites/front.h"
#include "runner/suites/ratelimit_judge.h"
#include "runner/suites/suites.h"

void ps_conform_print_list(FILE *out, const ps_checks *checks)
{
    for (int i = 0; i < PS_CK_COUNT; i++) {
        const ps_check_def *d = ps_check_def_get((ps_check_id)i);
        if (!ps_checks_selected(checks, d->ck)) continue;
        fprintf(out, "%-36s %-6s [%s]\n    %s\n    clause: %s\n", d->id,
                ps_check_level_name(d->level), d->tags, d->title, d->clause);
    }
}

/* How the selected checks came out: the one pass over every outcome that
 * the summary, the exit code and the incomplete reason all read. Each check
 * is counted once: total = passed + failed + warnings + incomplete +
 * not_applicable (a check not run is either untested or has nothing to judge). */
typedef struct outcome_tally {
    unsigned total, passed, failed, warnings, not_applicable;
    unsigned incomplete; /* not run although they apply: the summary's not_run */
    const char *first_incomplete_id, *first_incomplete_message;
} outcome_tally;

static void tally_outcomes(const ps_checks *checks, bool strict, outcome_tally *t)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < PS_CK_COUNT; i++) {
        ps_check_id ck = (ps_check_id)i;
        if (!ps_checks_selected(checks, ck)) continue;
        ps_check_outcome o;
        ps_check_outcome_get(checks, ck, strict, &o);
        t->total++;
        t->passed += o.status == PS_STATUS_PASSED;
        t->failed += o.status == PS_STATUS_FAILED;
        t->warnings += o.status == PS_STATUS_WARNING;
        if (o.status != PS_STATUS_NOT_RUN) continue;
        if (!o.applicable) {
            t->not_applicable++;
        } else if (!t->incomplete++) {
            t->first_incomplete_id = ps_check_def_get(ck)->id;
            t->first_incomplete_message = o.message;
        }
    }
}

/* aborted: 3; else a failed check: 1 (a proven deviation says more than
 * what could not be tested); else a check that applies but was not run:
 * 3, the run is incomplete (a gate must not pass what it did not test). */
static int exit_code_of(const ps_conform *c, const outcome_tally *t)
{
    if (ps_conform_aborted(c)) return 3;
    if (t->failed) return 1;
    return t->incomplete ? 3 : 0;
}

/* Why the run is incomplete (selected checks that apply were not run), with
 * what to do about it, into out; nothing when the run tested everything it
 * applies to (t->incomplete is 0). */
static void incomplete_reason(const ps_conform *c, const outcome_tally *t, ps_buf *out)
{
    if (!t->incomplete) return;
    const ps_conform_config *cfg = ps_conform_cfg(c);
    ps_conform_tally tally;
    ps_conform_tally_get(c, &tally);
    ps_buf_printf(out, "%u of %u selected checks could not be tested", t->incomplete, t->total);
    if (ps_conform_aborted(c)) {
        ps_buf_printf(out, ": the run was aborted (%s)", ps_conform_abort_reason(c));
    } else if (tally.skipped_waits) {
        ps_buf_printf(out, ": the service answered 429 and %u requests were not sent",
                      tally.skipped_waits);
        if (tally.longest_skipped_wait_ns > 0)
            ps_buf_printf(out, " (it asked to wait up to %lld s, more than --max-wait %.1f s)",
                          (long long)((tally.longest_skipped_wait_ns + 999999999) / 1000000000),
                          (double)cfg->max_wait_ns / 1e9);
        else
            ps_buf_puts(out, " (429s kept coming although each wait was honoured)");
        ps_buf_puts(
            out,
            "; to fix: raise --max-wait above the service's Retry-After, give the limit suite a "
            "key of its own with --limit-key so the main key's window is not used up, and make "
            "sure no other client is using up these keys");
    } else {
        ps_buf_puts(out, ": ");
        ps_buf_puts(out, t->first_incomplete_id);
        ps_buf_puts(out, ": ");
        ps_buf_puts(out, t->first_incomplete_message ? t->first_incomplete_message : "not run");
        if (t->incomplete > 1) ps_buf_puts(out, " (the others say why in their messages)");
    }
}

/* The tags of a check ("a,b") as a JSON array. */
static void write_tags(ps_jw *w, const char *tags)
{
    ps_jw_array_open(w);
    for (const char *t = tags; *t;) {
        const char *comma = strchr(t, ',');
        size_t n = comma ? (size_t)(comma - t) : strlen(t);
        ps_jw_string_len(w, t, n);
        t += n + (comma ? 1 : 0);
    }
    ps_jw_array_close(w);
}

static void write_check(ps_jw *w, const ps_check_def *d, const ps_check_outcome *o)
{
    ps_jw_object_open(w);
    ps_jw_kstring(w, "id", d->id);
    ps_jw_kstring(w, "title", d->title);
    ps_jw_kstring(w, "level", ps_check_level_name(d->level));
    ps_jw_kstring(w, "clause", d->clause);
    ps_jw_key(w, "tags");
    write_tags(w, d->tags);
    ps_jw_kstring(w, "status", ps_check_status_name(o->status));
    ps_jw_kdouble(w, "duration_ms", o->duration_ms, 3);
    ps_jw_key(w, "observations");
    ps_jw_object_open(w);
    ps_jw_kuint(w, "passed", o->passes);
    ps_jw_kuint(w, "failed", o->failures);
    ps_jw_object_close(w);
    if (o->status == PS_STATUS_NOT_RUN) ps_jw_kbool(w, "applicable", o->applicable);
    if (o->message && o->failures > 1) {
        ps_buf m = PS_BUF_INIT;
        ps_buf_printf(&m, "%s (and %u more failed observations)", o->message, o->failures - 1);
        ps_jw_kstring_len(w, "message", m.data, m.len);
        ps_buf_free(&m);
    } else if (o->message) {
        ps_jw_kstring(w, "message", o->message);
    }
    if (o->evidence_json) ps_jw_kraw(w, "evidence", o->evidence_json);
    ps_jw_object_close(w);
}

/* The suites in catalogue order, each with its selected checks. */
static void write_suites(ps_jw *w, const ps_checks *checks, bool strict)
{
    ps_jw_array_open(w);
    for (int i = 0; i < PS_CK_COUNT; i++) {
        char suite[32], other[32];
        ps_check_suite(ps_check_def_get((ps_check_id)i), suite, sizeof suite);
        bool seen = false, any = false;
        for (int j = 0; j < PS_CK_COUNT; j++) {
            ps_check_suite(ps_check_def_get((ps_check_id)j), other, sizeof other);
            if (strcmp(other, suite) != 0) continue;
            if (j < i)
                seen = true;
            else
                any |= ps_checks_selected(checks, (ps_check_id)j);
        }
        if (seen || !any) continue;
        ps_jw_object_open(w);
        ps_jw_kstring(w, "name", suite);
        ps_jw_key(w, "checks");
        ps_jw_array_open(w);
        for (int j = i; j < PS_CK_COUNT; j++) {
            const ps_check_def *d = ps_check_def_get((ps_check_id)j);
            ps_check_suite(d, other, sizeof other);
            if (strcmp(other, suite) != 0 || !ps_checks_selected(checks, d->ck)) continue;
            ps_check_outcome o;
            ps_check_outcome_get(checks, d->ck, strict, &o);
            write_check(w, d, &o);
        }
        ps_jw_array_close(w);
        ps_jw_object_close(w);
    }
    ps_jw_array_close(w);
}

/* The proxy curl would use for base_url (its variables, as curl reads them;
 * no_proxy may still exempt the host), credentials left out: NULL when none. */
static void proxy_of(const char *base_url, char *out, size_t size)
{
    static const char *const tls[] = {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", NULL};
    static const char *const plain[] = {"http_proxy", "all_proxy", "ALL_PROXY", NULL};
    const char *const *names = strncasecmp(base_url, "https:", 6) == 0 ? tls : plain;
    out[0] = '\0';
    for (; *names; names++) {
        const char *v = getenv(*names);
        if (!v || !*v) continue;
        const char *host = strstr(v, "://");
        host = host ? host + 3 : v;
        const char *at = strchr(host, '@'), *slash = strchr(host, '/');
        if (at && (!slash || at < slash)) /* user:password@ is no one's to read */
            snprintf(out, size, "%.*s%s", (int)(host - v), v, at + 1);
        else
            snprintf(out, size, "%s", v);
        return;
    }
}

/* "transport": what the run met on its way to the service (docs/report-json.md). */
static void write_transport(const ps_conform *c, ps_jw *w)
{
    const ps_client_transport *t = ps_conform_transport(c);
    const ps_service_clock *sc = ps_conform_clock(c);
    const ps_burst_stats *bs = ps_conform_last_burst(c);
    char proxy[512];
    proxy_of(ps_conform_base_url(c), proxy, sizeof proxy);
    ps_jw_object_open(w);
    if (t->known) {
        char http[48];
        snprintf(http, sizeof http, "%ld.%ld", t->http_version / 10, t->http_version % 10);
        ps_jw_kstring(w, "http_version", http);
    } else {
        ps_jw_knull(w, "http_version");
    }
    if (t->tls_version[0])
        ps_jw_kstring(w, "tls_version", t->tls_version);
    else
        ps_jw_knull(w, "tls_version");
    if (t->cert_subject[0])
        ps_jw_kstring(w, "certificate_subject", t->cert_subject);
    else
        ps_jw_knull(w, "certificate_subject");
    if (proxy[0])
        ps_jw_kstring(w, "proxy", proxy);
    else
        ps_jw_knull(w, "proxy");
    if (t->known)
        ps_jw_kdouble(w, "round_trip_ms", t->shortest_ms, 3);
    else
        ps_jw_knull(w, "round_trip_ms");
    if (sc->samples) {
        ps_jw_kdouble(w, "clock_offset_s", (double)ps_conform_clock_offset_ns(c) / 1e9, 3);
        ps_jw_key(w, "clock_offset_bounds_s");
        ps_jw_array_open(w);
        ps_jw_double(w, (double)sc->lo_ns / 1e9, 3);
        /* the upper bound a lagging Date allows (core/service_clock.h) */
        ps_jw_double(w, (double)(sc->hi_ns + PS_SERVICE_DATE_LAG_NS) / 1e9, 3);
        ps_jw_array_close(w);
        ps_jw_kuint(w, "clock_steps", sc->restarts); /* Dates contradicting the earlier */
    } else {
        ps_jw_knull(w, "clock_offset_s");
        ps_jw_knull(w, "clock_offset_bounds_s");
    }
    ps_jw_key(w, "burst");
    if (!bs) {
        ps_jw_null(w);
    } else {
        ps_jw_object_open(w);
        ps_jw_kstring(w, "via", bs->via);
        if (bs->h2_declined[0])
            ps_jw_kstring(w, "h2_declined", bs->h2_declined);
        else
            ps_jw_knull(w, "h2_declined");
        if (bs->h2_peer[0])
            ps_jw_kstring(w, "h2_peer_errors", bs->h2_peer);
        else
            ps_jw_knull(w, "h2_peer_errors");
        ps_jw_kuint(w, "connections", bs->opened);
        ps_jw_kdouble(w, "open_ms", (double)bs->open_ns / 1e6, 3);
        ps_jw_kdouble(w, "release_spread_us", (double)bs->spread_ns[0] / 1e3, 1);
        ps_jw_kdouble(w, "crossing_spread_us", (double)bs->spread_ns[1] / 1e3, 1);
        ps_jw_kdouble(w, "crossing_replies_us", (double)bs->crossing_replies_ns / 1e3, 1);
        ps_jw_kuint(w, "bursts", (size_t)bs->bursts);
        ps_jw_kuint(w, "reply_cap_bytes", bs->reply_cap);
        ps_jw_object_close(w);
    }
    ps_jw_object_close(w);
}

void ps_conform_report_doc(const ps_conform *c, int exit_code, ps_buf *b)
{
    const ps_conform_config *cfg = ps_conform_cfg(c);
    const ps_checks *checks = ps_conform_checks(c);
    ps_conform_tally tally;
    ps_conform_tally_get(c, &tally);
    ps_ratelimit_judge_finish(c);
    outcome_tally t;
    tally_outcomes(checks, cfg->strict, &t);
    char started[32];
    ps_clock_format_utc(tally.started_wall_ns, started, sizeof started);
    double duration_s = (double)(ps_clock_mono_ns() - tally.started_mono_ns) / 1e9;

    ps_jw w;
    ps_jw_init(&w, b, true);
    ps_jw_object_open(&w);
    ps_jw_kstring(&w, "tool", "petstore-conform");
    ps_jw_kstring(&w, "version", PS_VERSION);
    ps_jw_kint(&w, "format", 1);
    ps_jw_key(&w, "target");
    ps_jw_object_open(&w);
    ps_jw_kstring(&w, "base_url", ps_conform_base_url(c));
    ps_jw_kstring(&w, "plan", ps_plan_name(cfg->plan.id));
    ps_jw_kstring(&w, "limit_plan", ps_plan_name(cfg->limit_plan.id));
    ps_jw_kbool(&w, "strict", cfg->strict);
    ps_jw_kbool(&w, "separate_limit_key", cfg->limit_key_given);
    ps_jw_kdouble(&w, "timeout_s", (double)cfg->timeout_ns / 1e9, 3);
    ps_jw_kdouble(&w, "max_wait_s", (double)cfg->max_wait_ns / 1e9, 3);
    ps_jw_object_close(&w);
    ps_jw_kstring(&w, "started_at", started);
    ps_jw_kdouble(&w, "duration_s", duration_s, 3);
    ps_jw_kuint(&w, "exchanges", tally.exchanges);
    ps_jw_key(&w, "generate"); /* the generative phase: how to reproduce it, what it made */
    ps_jw_object_open(&w);
    ps_jw_kuint(&w, "seed", ps_conform_seed(c));
    ps_jw_kuint(&w, "requests", tally.generated);
    ps_jw_kdouble(&w, "duration_s", (double)tally.generate_ns / 1e9, 3);
    ps_jw_kuint(&w, "examples", cfg->examples);
    if (tally.generate_stop[0])
        ps_jw_kstring(&w, "stopped_early", tally.generate_stop);
    else
        ps_jw_knull(&w, "stopped_early");
    ps_jw_kuint(&w, "creates", tally.creates);
    ps_jw_kuint(&w, "create_budget", cfg->create_budget);
    ps_jw_object_close(&w);
    ps_jw_kuint(&w, "body_cap_bytes", cfg->max_body);
    ps_jw_key(&w, "transport");
    write_transport(c, &w);
    ps_jw_key(&w, "summary");
    ps_jw_object_open(&w);
    ps_jw_kuint(&w, "total", t.total);
    ps_jw_kuint(&w, "passed", t.passed);
    ps_jw_kuint(&w, "failed", t.failed);
    ps_jw_kuint(&w, "warnings", t.warnings);
    ps_jw_kuint(&w, "not_run", t.incomplete);
    ps_jw_kuint(&w, "not_applicable", t.not_applicable);
    ps_jw_object_close(&w);
    const char *verdict = exit_code == 0                           ? "pass"
                          : exit_code == 1                         ? "fail"
                          : ps_conform_aborted(c) || !t.incomplete ? "aborted"
                                                                   : "incomplete";
    ps_jw_kstring(&w, "verdict", verdict);
    ps_jw_kint(&w, "exit_code", exit_code);
    ps_jw_kstring(&w, "aborted", ps_conform_abort_reason(c)); /* null unless aborted */
    ps_buf why = PS_BUF_INIT;
    incomplete_reason(c, &t, &why);
    if (t.incomplete)
        ps_jw_kstring_len(&w, "incomplete", why.data, why.len);
    else
        ps_jw_knull(&w, "incomplete");
    ps_buf_free(&why);
    ps_jw_key(&w, "fronts"); /* replies a gateway made, not judged (runner/suites/front.h) */
    ps_front_report(c, &w);
    ps_jw_key(&w, "ratelimit"); /* the limiter model and counting observed (information) */
    ps_ratelimit_judge_report(c, &w);
    ps_jw_key(&w, "suites");
    write_suites(&w, checks, cfg->strict);
    ps_jw_object_close(&w);
    ps_buf_putc(b, '\n');
}

/* One line on stderr as each suite starts (unless --quiet), so a run that
 * takes minutes shows where it is. */
static void announce_suite(const ps_conform_config *cfg, const char *name, const char *what)
{
    if (cfg->quiet) return;
    fprintf(stderr, "petstore-conform: suite %s: %s\n", name, what);
    fflush(stderr);
}

int ps_conform_run(const ps_conform_config *cfg, ps_checks *checks, ps_buf *doc, ps_error *err)
{
    ps_conform *c =
        ps_conform_create(cfg, checks, ps_suite_observers, ps_suite_observer_count, err);
    if (!c) return 2;

    announce_suite(cfg, "probe", "is the target there and speaking HTTP");
    if (ps_suite_probe(c) == 0 && !ps_conform_aborted(c)) {
        bool errors = ps_checks_any_selected(checks, "errors.");
        if (!ps_conform_aborted(c) && (ps_checks_any_selected(checks, "auth.") || errors)) {
            announce_suite(cfg, "auth", "keys and the Authorization header");
            ps_suite_auth(c);
        }
        if (!ps_conform_aborted(c) && (ps_checks_any_selected(checks, "validation.") || errors)) {
            announce_suite(cfg, "validation", "bodies the service must refuse");
            ps_suite_validation(c);
        }
        if (!ps_conform_aborted(c) && (ps_checks_any_selected(checks, "create.") ||
                                       ps_checks_any_selected(checks, "roundtrip.") ||
                                       ps_checks_selected(checks, PS_CK_SCHEMA_CREATED_CATEGORY))) {
            announce_suite(cfg, "roundtrip", "create, then find it in the list");
            ps_suite_roundtrip(c);
        }
        if (!ps_conform_aborted(c) && ps_checks_any_selected(checks, "ratelimit.")) {
            announce_suite(cfg, "ratelimit", "rate-limit headers over a short burst");
            ps_suite_ratelimit(c);
        }
        /* Last: it exhausts a limit (and, without --limit-key, the main key's). */
        if (!ps_conform_aborted(c) && ps_checks_any_selected(checks, "limit429.")) {
            announce_suite(cfg, "limit429", "exhaust the limit key's window, then wait it out");
            ps_suite_limit429(c);
        }
        if (!ps_conform_aborted(c) && ps_conform_selected(c, PS_CK_LIMIT429_EVERY_OPERATION)) {
            announce_suite(cfg, "limit429", "cross the limit with creates and 400s");
            ps_suite_limit429_crossing(c);
        }
        /* After the limit suite: it must not spend the window that suite needs. */
        if (!ps_conform_aborted(c) && ps_checks_any_selected(checks, "generate.")) {
            announce_suite(cfg, "generate", "generated requests, concurrent creates, a long list");
            ps_suite_generate(c);
        }
    }
    ps_suite_http_dates_finish(c);

    ps_suite_clock_finish(c);
    ps_suite_reset_past_finish(c);
    ps_ratelimit_judge_finish(c); /* its whole-run rules, before the outcomes are read */
    outcome_tally t;
    tally_outcomes(checks, cfg->strict, &t);
    int exit_code = exit_code_of(c, &t);
    ps_conform_report_doc(c, exit_code, doc);
    ps_conform_destroy(c);
    return exit_code;
}
