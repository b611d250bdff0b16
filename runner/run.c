/* run.c - suite order and the JSON report document. */
#include "runner/run.h"

#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/version.h"
#include "runner/conform.h"
#include "runner/suites/suites.h"

void ps_conform_print_list(FILE *out, const ps_checks *checks)
{
    for (int i = 0; i < PS_CK_COUNT; i++) {
        const ps_check_def *d = ps_check_def_get((ps_check_id)i);
        if (!ps_checks_selected(checks, d->ck)) continue;
        fprintf(out, "%-36s %-6s [%s]\n    %s\n    clause: %s\n", d->id, ps_check_level_name(d->level), d->tags,
                d->title, d->clause);
    }
}

static void json_str(ps_buf *b, const char *s)
{
    ps_conform_json_string(b, s ? s : "", s ? strlen(s) : 0);
}

static void json_tags(ps_buf *b, const char *tags)
{
    ps_buf_putc(b, '[');
    bool first = true;
    for (const char *t = tags; *t;) {
        const char *comma = strchr(t, ',');
        size_t n = comma ? (size_t)(comma - t) : strlen(t);
        if (!first) ps_buf_putc(b, ',');
        ps_buf_json_string(b, t, n);
        first = false;
        t += n + (comma ? 1 : 0);
    }
    ps_buf_putc(b, ']');
}

/* Why the run is incomplete (selected checks that apply were not run), with
 * what to do about it, into out; returns how many such checks, 0 (out left
 * empty) when the run tested everything it applies to. */
static unsigned incomplete_reason(const ps_conform *c, ps_buf *out)
{
    const ps_conform_config *cfg = ps_conform_cfg(c);
    ps_checks *checks = ps_conform_checks(c);
    ps_conform_tally tally;
    ps_conform_tally_get(c, &tally);
    unsigned selected = 0, incomplete = 0;
    const char *first_id = NULL, *first_msg = NULL;
    for (int i = 0; i < PS_CK_COUNT; i++) {
        if (!ps_checks_selected(checks, (ps_check_id)i)) continue;
        selected++;
        ps_check_outcome o;
        ps_check_outcome_get(checks, (ps_check_id)i, cfg->strict, &o);
        if (o.status != PS_STATUS_NOT_RUN || !o.applicable) continue;
        if (!incomplete++) first_id = ps_check_def_get((ps_check_id)i)->id, first_msg = o.message;
    }
    if (!incomplete) return 0;
    ps_buf_printf(out, "%u of %u selected checks could not be tested", incomplete, selected);
    if (ps_conform_aborted(c)) {
        ps_buf_printf(out, ": the run was aborted (%s)", ps_conform_abort_reason(c));
    } else if (tally.skipped_waits) {
        ps_buf_printf(out, ": the service answered 429 and %u requests were not sent", tally.skipped_waits);
        if (tally.longest_skipped_wait_ns > 0)
            ps_buf_printf(out, " (it asked to wait up to %lld s, more than --max-wait %.1f s)",
                          (long long)((tally.longest_skipped_wait_ns + 999999999) / 1000000000),
                          (double)cfg->max_wait_ns / 1e9);
        else
            ps_buf_puts(out, " (429s kept coming although each wait was honoured)");
        ps_buf_puts(out, "; to fix: raise --max-wait above the service's Retry-After, give the limit suite a "
                         "key of its own with --limit-key so the main key's window is not used up, and make "
                         "sure no other client is using up these keys");
    } else {
        ps_buf_puts(out, ": ");
        ps_buf_puts(out, first_id);
        ps_buf_puts(out, ": ");
        ps_buf_puts(out, first_msg ? first_msg : "not run");
        if (incomplete > 1) ps_buf_puts(out, " (the others say why in their messages)");
    }
    return incomplete;
}

void ps_conform_report_doc(const ps_conform *c, int exit_code, ps_buf *b)
{
    const ps_conform_config *cfg = ps_conform_cfg(c);
    const ps_checks *checks = ps_conform_checks(c);
    ps_conform_tally tally;
    ps_conform_tally_get(c, &tally);
    char started[32];
    ps_clock_format_utc(tally.started_wall_ns, started, sizeof started);
    double duration_s = (double)(ps_clock_mono_ns() - tally.started_mono_ns) / 1e9;

    unsigned total = 0, passed = 0, failed = 0, warnings = 0, not_run = 0, not_applicable = 0;
    for (int i = 0; i < PS_CK_COUNT; i++) {
        if (!ps_checks_selected(checks, (ps_check_id)i)) continue;
        ps_check_outcome o;
        ps_check_outcome_get(checks, (ps_check_id)i, cfg->strict, &o);
        total++;
        passed += o.status == PS_STATUS_PASSED;
        failed += o.status == PS_STATUS_FAILED;
        warnings += o.status == PS_STATUS_WARNING;
        not_run += o.status == PS_STATUS_NOT_RUN;
        not_applicable += o.status == PS_STATUS_NOT_RUN && !o.applicable;
    }

    ps_buf_puts(b, "{\"tool\":\"petstore-conform\",\"version\":\"" PS_VERSION "\",\"format\":1,\n");
    ps_buf_puts(b, "\"target\":{\"base_url\":");
    json_str(b, ps_conform_base_url(c));
    ps_buf_puts(b, ",\"plan\":");
    json_str(b, ps_plan_name(cfg->plan.id));
    ps_buf_puts(b, ",\"limit_plan\":");
    json_str(b, ps_plan_name(cfg->limit_plan.id));
    ps_buf_printf(b, ",\"strict\":%s,\"separate_limit_key\":%s,\"timeout_s\":%.3f,\"max_wait_s\":%.3f},\n",
                  cfg->strict ? "true" : "false", cfg->limit_key_given ? "true" : "false",
                  (double)cfg->timeout_ns / 1e9, (double)cfg->max_wait_ns / 1e9);
    ps_buf_printf(b, "\"started_at\":\"%s\",\"duration_s\":%.3f,\"exchanges\":%u,\"body_cap_bytes\":%zu,\n",
                  started, duration_s, tally.exchanges, cfg->max_body);
    ps_buf_printf(b,
                  "\"summary\":{\"total\":%u,\"passed\":%u,\"failed\":%u,\"warnings\":%u,\"not_run\":%u,"
                  "\"not_applicable\":%u},\n",
                  total, passed, failed, warnings, not_run, not_applicable);
    ps_buf why = PS_BUF_INIT;
    bool incomplete = incomplete_reason(c, &why) > 0;
    const char *verdict = exit_code == 0 ? "pass"
                          : exit_code == 1 ? "fail"
                          : ps_conform_aborted(c) || !incomplete ? "aborted"
                                                      : "incomplete";
    ps_buf_printf(b, "\"verdict\":\"%s\",\"exit_code\":%d,\"aborted\":", verdict, exit_code);
    if (ps_conform_aborted(c)) json_str(b, ps_conform_abort_reason(c));
    else ps_buf_puts(b, "null");
    ps_buf_puts(b, ",\"incomplete\":");
    if (incomplete) json_str(b, why.data);
    else ps_buf_puts(b, "null");
    ps_buf_free(&why);
    ps_buf_puts(b, ",\n\"suites\":[");

    /* Suites in catalogue order, each with its selected checks. */
    char done[PS_CK_COUNT][32];
    int ndone = 0;
    bool first_suite = true;
    for (int i = 0; i < PS_CK_COUNT; i++) {
        char suite[32];
        ps_check_suite(ps_check_def_get((ps_check_id)i), suite, sizeof suite);
        bool seen = false;
        for (int k = 0; k < ndone; k++) seen |= strcmp(done[k], suite) == 0;
        if (seen) continue;
        strcpy(done[ndone++], suite);
        bool any = false;
        for (int j = i; j < PS_CK_COUNT; j++) {
            char s2[32];
            ps_check_suite(ps_check_def_get((ps_check_id)j), s2, sizeof s2);
            if (strcmp(s2, suite) == 0 && ps_checks_selected(checks, (ps_check_id)j)) any = true;
        }
        if (!any) continue;
        ps_buf_puts(b, first_suite ? "\n" : ",\n");
        first_suite = false;
        ps_buf_puts(b, "{\"name\":");
        json_str(b, suite);
        ps_buf_puts(b, ",\"checks\":[");
        bool first_check = true;
        for (int j = i; j < PS_CK_COUNT; j++) {
            const ps_check_def *d = ps_check_def_get((ps_check_id)j);
            char s2[32];
            ps_check_suite(d, s2, sizeof s2);
            if (strcmp(s2, suite) != 0 || !ps_checks_selected(checks, (ps_check_id)j)) continue;
            ps_check_outcome o;
            ps_check_outcome_get(checks, (ps_check_id)j, cfg->strict, &o);
            ps_buf_puts(b, first_check ? "\n " : ",\n ");
            first_check = false;
            ps_buf_puts(b, "{\"id\":");
            json_str(b, d->id);
            ps_buf_puts(b, ",\"title\":");
            json_str(b, d->title);
            ps_buf_printf(b, ",\"level\":\"%s\",\"clause\":", ps_check_level_name(d->level));
            json_str(b, d->clause);
            ps_buf_puts(b, ",\"tags\":");
            json_tags(b, d->tags);
            ps_buf_printf(b, ",\"status\":\"%s\",\"duration_ms\":%.3f,\"observations\":{\"passed\":%u,\"failed\":%u}",
                          ps_check_status_name(o.status), o.duration_ms, o.passes, o.failures);
            if (o.status == PS_STATUS_NOT_RUN) ps_buf_printf(b, ",\"applicable\":%s", o.applicable ? "true" : "false");
            if (o.message) {
                ps_buf_puts(b, ",\"message\":");
                if (o.failures > 1) {
                    ps_buf m = PS_BUF_INIT;
                    ps_buf_printf(&m, "%s (and %u more failed observations)", o.message, o.failures - 1);
                    json_str(b, m.data);
                    ps_buf_free(&m);
                } else {
                    json_str(b, o.message);
                }
            }
            if (o.evidence_json) {
                ps_buf_puts(b, ",\"evidence\":");
                ps_buf_puts(b, o.evidence_json);
            }
            ps_buf_putc(b, '}');
        }
        ps_buf_puts(b, "]}");
    }
    ps_buf_puts(b, "\n]}\n");
}

int ps_conform_run(const ps_conform_config *cfg, ps_checks *checks, ps_buf *doc, ps_error *err)
{
    ps_conform *c = ps_conform_create(cfg, checks, ps_suite_observers, ps_suite_observer_count, err);
    if (!c) return 2;

    if (ps_suite_probe(c) == 0 && !ps_conform_aborted(c)) {
        bool errors = ps_checks_any_selected(checks, "errors.");
        if (!ps_conform_aborted(c) && (ps_checks_any_selected(checks, "auth.") || errors)) ps_suite_auth(c);
        if (!ps_conform_aborted(c) && (ps_checks_any_selected(checks, "validation.") || errors)) ps_suite_validation(c);
        if (!ps_conform_aborted(c) && (ps_checks_any_selected(checks, "create.") || ps_checks_any_selected(checks, "roundtrip.") ||
                            ps_checks_selected(checks, PS_CK_SCHEMA_CREATED_CATEGORY)))
            ps_suite_roundtrip(c);
        if (!ps_conform_aborted(c) && ps_checks_any_selected(checks, "ratelimit.")) ps_suite_ratelimit(c);
        /* Last: it exhausts a limit (and, without --limit-key, the main key's). */
        if (!ps_conform_aborted(c) && ps_checks_any_selected(checks, "limit429.")) ps_suite_limit429(c);
    }

    /* aborted: 3; else a failed check: 1 (a proven deviation says more than
     * what could not be tested); else a check that applies but was not run:
     * 3, the run is incomplete (a gate must not pass what it did not test). */
    int exit_code = 0;
    if (ps_conform_aborted(c)) {
        exit_code = 3;
    } else {
        bool incomplete = false;
        for (int i = 0; i < PS_CK_COUNT; i++) {
            if (!ps_checks_selected(checks, (ps_check_id)i)) continue;
            ps_check_outcome o;
            ps_check_outcome_get(checks, (ps_check_id)i, cfg->strict, &o);
            if (o.status == PS_STATUS_FAILED) exit_code = 1;
            if (o.status == PS_STATUS_NOT_RUN && o.applicable) incomplete = true;
        }
        if (!exit_code && incomplete) exit_code = 3;
    }
    ps_conform_report_doc(c, exit_code, doc);
    ps_conform_destroy(c);
    return exit_code;
}
