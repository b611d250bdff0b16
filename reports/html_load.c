/* html_load.c - the load report as one self-contained HTML page: its header
 * cards, parameters and tables; the SVG plots are html_load_plots.c's. */
#include "reports/html_report.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "reports/html_common.h"
#include "reports/html_capacity.h"
#include "reports/html_load_plots.h"
#include "reports/report_search.h"
#include "reports/svg.h"

static const char script[] = "document.documentElement.setAttribute('data-script','ran');\n";

static const char *const pct_keys[] = {"p50",   "p75",    "p90", "p95", "p99",
                                       "p99_9", "p99_99", "max", "mean"};
static const char *const pct_labels[] = {"50%",   "75%",    "90%", "95%", "99%",
                                         "99.9%", "99.99%", "max", "mean"};
#define NPCT (sizeof pct_keys / sizeof pct_keys[0])

#define DASH "\xE2\x80\x93" /* U+2013: "nothing was measured", never a number */

/* A latency object (or a row) that counted nothing: its percentiles, written
 * 0 or null, are not measurements. */
static bool counted_nothing(const ps_json *obj, const char *count_key)
{
    double n;
    return ps_html_num(obj, count_key, &n) && n == 0;
}

static void dash_cell(ps_buf *b)
{
    ps_buf_puts(b, "<td class=\"n none\" title=\"nothing measured\">" DASH "</td>");
}

/* A latency cell: human units, the raw microseconds in data-us; a dash when
 * the object counted nothing or the value is null. */
static void latency_cell(ps_buf *b, const ps_json *obj, const char *key)
{
    double v;
    const ps_json *m = obj && obj->type == PS_JSON_OBJECT ? ps_json_get(obj, key) : NULL;
    if (counted_nothing(obj, "count") || (m && m->type == PS_JSON_NULL)) {
        dash_cell(b);
    } else if (ps_html_num(obj, key, &v)) {
        ps_buf_puts(b, "<td class=\"n\" data-us=\"");
        ps_svg_put_number(b, v);
        ps_buf_puts(b, "\">");
        ps_html_latency_us(b, v);
        ps_buf_puts(b, "</td>");
    } else {
        ps_buf_puts(b, "<td class=\"n\">n/a</td>");
    }
}

static void count_cell(ps_buf *b, const ps_json *obj, const char *key)
{
    ps_buf_puts(b, "<td class=\"n\">");
    ps_html_count(b, obj, key);
    ps_buf_puts(b, "</td>");
}

static void card(ps_buf *b, const char *label, const char *key, const ps_json *obj, bool latency)
{
    double v;
    ps_buf_printf(b, "<div class=\"card\" data-card=\"%s\"><b>", key);
    if (latency && (counted_nothing(obj, "count") ||
                    (ps_json_get(obj, key) && ps_json_get(obj, key)->type == PS_JSON_NULL)))
        ps_buf_puts(b, DASH);
    else if (!ps_html_num(obj, key, &v))
        ps_buf_puts(b, "n/a");
    else if (latency)
        ps_html_latency_us(b, v);
    else
        ps_html_number(b, v);
    ps_buf_printf(b, "</b><span>%s</span></div>", label);
}

/* A card of a figure the renderer derives; data-value holds it exactly. */
static void card_value(ps_buf *b, const char *label, const char *key, double v)
{
    ps_buf_printf(b, "<div class=\"card\" data-card=\"%s\" data-value=\"", key);
    ps_svg_put_number(b, v);
    ps_buf_puts(b, "\"><b>");
    ps_html_number(b, v);
    ps_buf_printf(b, "</b><span>%s</span></div>", label);
}

/* A card showing text (already HTML) for the figure v. */
static void card_text(ps_buf *b, const char *label, const char *key, double v, const char *text)
{
    ps_buf_printf(b, "<div class=\"card\" data-card=\"%s\" data-value=\"", key);
    ps_svg_put_number(b, v);
    ps_buf_printf(b, "\"><b>%s</b><span>%s</span></div>", text, label);
}

/* A fraction as a percentage with two decimals (static buffer: one use per call site). */
static const char *percent(double frac)
{
    static char text[32];
    snprintf(text, sizeof text, "%.2f%%", frac * 100);
    return text;
}

/* Appends the schedule's target as words ("400 requests/s", "a ramp from
 * 10 to 400 requests/s", "per-key rates") and sets *target to the fixed rate
 * (NaN otherwise); false for a closed-model run, which has no target. */
static bool rate_target(const ps_json *doc, ps_buf *out, double *target)
{
    const ps_json *params = ps_html_get(doc, "parameters", PS_JSON_OBJECT);
    const ps_json *ramp = ps_html_get(params, "ramp", PS_JSON_ARRAY);
    const char *model = ps_json_get_string(params, "model", NULL);
    *target = NAN;
    if (ps_html_num(params, "rate", target)) {
        ps_svg_put_number(out, *target);
        ps_buf_puts(out, " requests/s");
        return true;
    }
    if (ramp && ramp->count == 2 && ramp->items[0]->type == PS_JSON_NUMBER &&
        ramp->items[1]->type == PS_JSON_NUMBER) {
        ps_buf_puts(out, "a ramp from ");
        ps_svg_put_number(out, ramp->items[0]->d);
        ps_buf_puts(out, " to ");
        ps_svg_put_number(out, ramp->items[1]->d);
        ps_buf_puts(out, " requests/s");
        return true;
    }
    if (model && !strcmp(model, "open")) {
        ps_buf_puts(out, "per-key rates");
        return true;
    }
    return false;
}

/* Open model: the rate the requests went out at against the target, and
 * the requests skipped while a key waited out a Retry-After. */
static void rate_cards(ps_buf *b, const ps_json *doc)
{
    double sent, dur, skipped, target;
    ps_buf t = PS_BUF_INIT;
    bool open = rate_target(doc, &t, &target);
    ps_buf_free(&t);
    if (!open) return;
    if (ps_html_num(doc, "scheduled", &sent) && ps_html_num(doc, "duration_s", &dur) && dur > 0)
        card_value(b, "sent/s", "sent_rps", sent / dur);
    if (isfinite(target)) card_value(b, "target/s", "target_rps", target);
    if (ps_html_num(doc, "skipped_retry_after", &skipped))
        card_value(b, "skipped for Retry-After", "skipped_retry_after", skipped);
}

/* One sentence that adds the figures up: due = skipped + sent, and what
 * came back, so "135.8 requests/s" against a target of 400 is explained. */
static void rate_note(ps_buf *b, const ps_json *doc)
{
    double sent, skipped = 0, dur, answered, target, n429 = 0;
    ps_buf t = PS_BUF_INIT;
    if (!rate_target(doc, &t, &target) || !ps_html_num(doc, "scheduled", &sent) ||
        !ps_html_num(doc, "duration_s", &dur) || !(dur > 0)) {
        ps_buf_free(&t);
        return;
    }
    ps_html_num(doc, "skipped_retry_after", &skipped);
    ps_html_num(ps_json_get(doc, "status"), "429", &n429);
    ps_buf_puts(b, "<p class=\"rate\" data-rate-note>Open model at ");
    ps_buf_append(b, t.data, t.len);
    ps_buf_puts(b, ": ");
    ps_html_number(b, sent + skipped);
    ps_buf_puts(b, " requests were due; ");
    if (skipped > 0) {
        ps_html_number(b, skipped);
        ps_buf_printf(b, " (%.1f%%) were skipped because their key was waiting out a Retry-After, ",
                      100 * skipped / (sent + skipped));
    } else {
        ps_buf_puts(b, "none was skipped for Retry-After, ");
    }
    ps_html_number(b, sent);
    ps_buf_printf(b, " were sent (%.1f/s over %.2f s)", sent / dur, dur);
    if (ps_html_num(doc, "answered", &answered)) {
        ps_buf_puts(b, " and ");
        ps_html_number(b, answered);
        ps_buf_puts(b, " answered");
        if (n429 > 0) {
            ps_buf_puts(b, ", ");
            ps_html_number(b, n429);
            ps_buf_puts(b, " of them with 429");
        }
    }
    ps_buf_puts(b, ".</p>\n");
    ps_buf_free(&t);
}

/* A parameter's value as a person writes it: numbers in their shortest form
 * (1000, not 1000.000), objects as "list 9, create 1", arrays as "a, b";
 * a container inside another is put in parentheses; null and empty
 * containers are "none". */
static void param_value(ps_buf *b, const ps_json *v, int depth)
{
    switch (v->type) {
    case PS_JSON_NULL:
        ps_buf_puts(b, "none");
        return;
    case PS_JSON_NUMBER:
        if (isfinite(v->d)) {
            ps_svg_put_number(b, v->d);
            return;
        }
        break;
    case PS_JSON_ARRAY:
    case PS_JSON_OBJECT:
        if (!v->count) {
            ps_buf_puts(b, "none");
            return;
        }
        if (depth > 8) break; /* absurdly deep: as JSON */
        if (depth) ps_buf_putc(b, '(');
        for (size_t i = 0; i < v->count; i++) {
            if (i) ps_buf_puts(b, ", ");
            if (v->type == PS_JSON_OBJECT) {
                ps_html_esc_n(b, v->keys[i], v->key_lens[i]);
                ps_buf_putc(b, ' ');
            }
            param_value(b, v->items[i], depth + 1);
        }
        if (depth) ps_buf_putc(b, ')');
        return;
    default:
        break;
    }
    ps_html_value(b, v, "");
}

/* The one table of parameter labels: what docs/report-json.md calls
 * "requests_limit" a reader knows as "Request limit"; a unit follows a
 * number. A member not listed keeps its JSON name. */
static const struct param_label {
    const char *key, *label, *unit;
} param_labels[] = {
    {"base_url", "Target", NULL},
    {"threads", "Threads", NULL},
    {"connections", "Connections", NULL},
    {"duration_s", "Duration", "s"},
    {"requests_limit", "Request limit", NULL},
    {"rate", "Target rate", "requests/s"},
    {"ramp", "Rate ramp", "requests/s"},
    {"model", "Load model", NULL},
    {"mix", "Operation mix", NULL},
    {"engine", "Engine", NULL},
    {"timeout_s", "Timeout", "s"},
    {"verify_limits", "Verify limits", NULL},
    {"burst", "Burst", NULL},
    {"honour_retry_after", "Honour Retry-After", NULL},
    {"keys", "API keys", NULL},
    {"plans", "Plans", NULL},
};

static const struct param_label *param_label(const char *key, size_t len)
{
    for (size_t i = 0; i < sizeof param_labels / sizeof param_labels[0]; i++)
        if (strlen(param_labels[i].key) == len && memcmp(param_labels[i].key, key, len) == 0)
            return &param_labels[i];
    return NULL;
}

static void parameters_section(ps_buf *b, const ps_json *params)
{
    ps_buf_puts(b, "<h2>Parameters</h2>\n");
    if (!params || params->type != PS_JSON_OBJECT || !params->count) {
        ps_buf_puts(b, "<p class=\"note\">The report records no parameters.</p>\n");
        return;
    }
    /* every member, in the document's order: a report must say exactly what
     * was measured; the JSON name stays in data-key and the tooltip */
    ps_buf_puts(b, "<div class=\"kv\">\n");
    for (size_t i = 0; i < params->count; i++) {
        const struct param_label *l = param_label(params->keys[i], params->key_lens[i]);
        const ps_json *item = params->items[i];
        ps_buf v = PS_BUF_INIT;
        if (item->type == PS_JSON_BOOL) {
            ps_buf_puts(&v, item->boolean ? "yes" : "no");
        } else if (l && !strcmp(l->key, "ramp") && item->type == PS_JSON_ARRAY &&
                   item->count == 2 && item->items[0]->type == PS_JSON_NUMBER &&
                   item->items[1]->type == PS_JSON_NUMBER) {
            ps_svg_put_number(&v, item->items[0]->d);
            ps_buf_puts(&v, " \xE2\x86\x92 "); /* U+2192: from -> to */
            ps_svg_put_number(&v, item->items[1]->d);
        } else {
            param_value(&v, item, 0);
        }
        bool number = item->type == PS_JSON_NUMBER || (item->type == PS_JSON_ARRAY && item->count);
        if (l && l->unit && number) ps_buf_printf(&v, " %s", l->unit);
        /* a long value (a URL) takes two columns rather than wrapping mid-word */
        ps_buf_puts(b, v.len > 18 ? "<div class=\"wide\" data-key=\"" : "<div data-key=\"");
        ps_html_esc_n(b, params->keys[i], params->key_lens[i]);
        ps_buf_puts(b, "\"><span title=\"");
        ps_html_esc_n(b, params->keys[i], params->key_lens[i]);
        ps_buf_puts(b, "\">");
        if (l)
            ps_html_esc(b, l->label);
        else
            ps_html_esc_n(b, params->keys[i], params->key_lens[i]);
        ps_buf_puts(b, "</span><code>");
        ps_buf_append(b, v.data ? v.data : "", v.len);
        ps_buf_puts(b, "</code></div>\n");
        ps_buf_free(&v);
    }
    ps_buf_puts(b, "</div>\n");
}

static void percentiles_table(ps_buf *b, const ps_json *lat)
{
    const ps_json *c = ps_html_get(lat, "corrected", PS_JSON_OBJECT);
    const ps_json *u = ps_html_get(lat, "uncorrected", PS_JSON_OBJECT);
    ps_buf_puts(b, "<h2>Latency</h2>\n");
    if (!c && !u) {
        ps_buf_puts(b, "<p class=\"note\">No latency was recorded.</p>\n");
        return;
    }
    ps_buf_puts(b,
                "<p class=\"note\">Corrected latency counts from when each request should have "
                "been sent (coordinated omission corrected); uncorrected from when it was "
                "sent.</p>\n<table class=\"pct\"><tr><th>percentile</th><th class=\"n\">corrected"
                "</th><th class=\"n\">uncorrected</th></tr>\n");
    for (size_t i = 0; i < NPCT; i++) {
        ps_buf_printf(b, "<tr data-key=\"%s\"><th>%s</th>", pct_keys[i], pct_labels[i]);
        latency_cell(b, c, pct_keys[i]);
        latency_cell(b, u, pct_keys[i]);
        ps_buf_puts(b, "</tr>\n");
    }
    ps_buf_puts(b, "<tr data-key=\"count\"><th>count</th>");
    count_cell(b, c, "count");
    count_cell(b, u, "count");
    ps_buf_puts(b, "</tr>\n</table>\n");
}

static void status_section(ps_buf *b, const ps_json *doc)
{
    const ps_json *st = ps_html_get(doc, "status", PS_JSON_OBJECT);
    const ps_json *errs = ps_html_get(doc, "errors", PS_JSON_OBJECT);
    double total = 0, v;
    ps_buf_puts(b, "<h2>Status codes and errors</h2>\n");
    if (!st || !st->count) {
        ps_buf_puts(b, "<p class=\"note\">No responses were recorded.</p>\n");
    } else {
        for (size_t i = 0; i < st->count; i++)
            if (st->items[i]->type == PS_JSON_NUMBER && isfinite(st->items[i]->d))
                total += st->items[i]->d;
        ps_buf_puts(b, "<table class=\"status\"><tr><th>status</th><th class=\"n\">responses</th>"
                       "<th class=\"n\">share</th></tr>\n");
        for (size_t i = 0; i < st->count; i++) {
            ps_buf_puts(b, "<tr><td>");
            ps_html_esc_n(b, st->keys[i], st->key_lens[i]);
            ps_buf_puts(b, "</td><td class=\"n\">");
            if (st->items[i]->type == PS_JSON_NUMBER) {
                v = st->items[i]->d;
                ps_html_number(b, v);
                ps_buf_puts(b, "</td><td class=\"n\">");
                if (total > 0 && isfinite(v)) ps_buf_printf(b, "%.2f%%", 100 * v / total);
            } else {
                ps_html_value(b, st->items[i], "");
                ps_buf_puts(b, "</td><td class=\"n\">");
            }
            ps_buf_puts(b, "</td></tr>\n");
        }
        ps_buf_puts(b, "</table>\n");
    }
    if (errs && errs->count) {
        ps_buf_puts(b,
                    "<table class=\"errors\"><tr><th>error</th><th class=\"n\">count</th></tr>\n");
        for (size_t i = 0; i < errs->count; i++) {
            ps_buf_puts(b, "<tr><td>");
            ps_html_esc_n(b, errs->keys[i], errs->key_lens[i]);
            ps_buf_puts(b, "</td><td class=\"n\">");
            ps_html_value(b, errs->items[i], "");
            ps_buf_puts(b, "</td></tr>\n");
        }
        ps_buf_puts(b, "</table>\n");
    }
}

/* Tables keyed by name (operations, status classes): requests/count then corrected percentiles. */
static void breakdown_table(ps_buf *b, const char *heading, const char *first, const ps_json *obj,
                            const char *count_key)
{
    if (!obj || obj->type != PS_JSON_OBJECT || !obj->count) return;
    ps_buf_printf(b,
                  "<h3>%s</h3>\n<table><tr><th>%s</th><th class=\"n\">%s</th>"
                  "<th class=\"n\">p50</th><th class=\"n\">p90</th><th class=\"n\">p99</th>"
                  "<th class=\"n\">max</th><th class=\"n\">p99 uncorrected</th></tr>\n",
                  heading, first, count_key);
    for (size_t i = 0; i < obj->count; i++) {
        const ps_json *e = obj->items[i];
        const ps_json *lat = ps_html_get(e, "latency_us", PS_JSON_OBJECT);
        const ps_json *c = ps_html_get(lat, "corrected", PS_JSON_OBJECT);
        const ps_json *u = ps_html_get(lat, "uncorrected", PS_JSON_OBJECT);
        ps_buf_puts(b, "<tr><td>");
        ps_html_esc_n(b, obj->keys[i], obj->key_lens[i]);
        ps_buf_puts(b, "</td>");
        count_cell(b, e, count_key);
        if (counted_nothing(e, count_key)) {
            /* an operation or class that saw no request has no latency, not "0 µs" */
            for (int k = 0; k < 5; k++)
                dash_cell(b);
        } else {
            latency_cell(b, c, "p50");
            latency_cell(b, c, "p90");
            latency_cell(b, c, "p99");
            latency_cell(b, c, "max");
            latency_cell(b, u, "p99");
        }
        ps_buf_puts(b, "</tr>\n");
    }
    ps_buf_puts(b, "</table>\n");
}

/* Violations of one plan (by the violation's "plan" member). */
static size_t plan_violations(const ps_json *viol, const ps_json *plan)
{
    size_t n = 0;
    if (!viol || !plan || plan->type != PS_JSON_STRING) return 0;
    for (size_t i = 0; i < viol->count; i++) {
        const char *vp = ps_json_get_string(viol->items[i], "plan", NULL);
        n += vp && strcmp(vp, plan->str) == 0;
    }
    return n;
}

/* The per-plan limit verdict: what each plan admitted and refused, and
 * whether any of its windows broke the plan's limits. */
static void plans_table(ps_buf *b, const ps_json *plans, const ps_json *lim)
{
    if (!plans || plans->type != PS_JSON_ARRAY || !plans->count) return;
    const ps_json *viol = ps_html_get(lim, "violations", PS_JSON_ARRAY);
    const ps_json *checked = ps_html_get(lim, "checked", PS_JSON_BOOL);
    ps_buf_puts(b, "<table class=\"plans\"><tr><th>plan</th><th class=\"n\">keys</th>"
                   "<th class=\"n\">admitted</th><th class=\"n\">limited</th>"
                   "<th class=\"n\">violations</th><th>limits</th><th class=\"n\">p50</th>"
                   "<th class=\"n\">p99</th><th class=\"n\">max</th></tr>\n");
    for (size_t i = 0; i < plans->count; i++) {
        const ps_json *p = plans->items[i];
        const ps_json *c =
            ps_html_get(ps_html_get(p, "latency_us", PS_JSON_OBJECT), "corrected", PS_JSON_OBJECT);
        size_t nv = plan_violations(viol, ps_json_get(p, "plan"));
        ps_buf_puts(b, "<tr><td>");
        ps_html_value(b, ps_json_get(p, "plan"), "n/a");
        ps_buf_puts(b, "</td>");
        count_cell(b, p, "keys");
        count_cell(b, p, "admitted");
        count_cell(b, p, "limited");
        ps_buf_printf(b, "<td class=\"n\">%zu</td><td>", nv);
        if (nv)
            ps_buf_puts(b, "<span class=\"badge st-failed\">violated</span>");
        else if (checked && checked->boolean)
            ps_buf_puts(b, "<span class=\"badge st-passed\">kept</span>");
        else
            ps_buf_puts(b, "<span class=\"badge st-not_run\">not checked</span>");
        ps_buf_puts(b, "</td>");
        latency_cell(b, c, "p50");
        latency_cell(b, c, "p99");
        latency_cell(b, c, "max");
        ps_buf_puts(b, "</tr>\n");
    }
    ps_buf_puts(b, "</table>\n");
}

static void limits_section(ps_buf *b, const ps_json *lim, const ps_json *plans)
{
    ps_buf_puts(b, "<h2>Rate-limit verdict</h2>\n");
    if (lim && lim->type != PS_JSON_OBJECT) lim = NULL;
    if (!lim) {
        ps_buf_puts(b, "<p class=\"note\">Limits were not checked in this run.</p>\n");
        plans_table(b, plans, lim);
        return;
    }
    const ps_json *viol = ps_html_get(lim, "violations", PS_JSON_ARRAY);
    const ps_json *checked = ps_html_get(lim, "checked", PS_JSON_BOOL);
    const char *verdict = ps_json_get_string(lim, "verdict", NULL);
    if ((checked && !checked->boolean) || (verdict && !strcmp(verdict, "not_checked"))) {
        /* "Verdict not_checked · checked false · windows observed 0" says it three times */
        ps_buf_puts(b, "<p class=\"note\" data-limits-verdict=\"not_checked\">Limits were not "
                       "checked in this run (<code>--verify-limits</code> checks every window "
                       "against the plan).</p>\n");
        plans_table(b, plans, lim);
        return;
    }
    ps_buf_puts(b, "<p>Verdict ");
    ps_html_verdict_badge(b, ps_json_get_string(lim, "verdict", NULL), "limits-verdict");
    /* "checked true" is what a verdict of pass or fail already says */
    ps_buf_puts(b, " &middot; windows observed ");
    ps_html_value(b, ps_json_get(lim, "windows"), "n/a");
    ps_buf_printf(b, " &middot; %zu violation%s</p>\n", viol ? viol->count : 0,
                  viol && viol->count == 1 ? "" : "s");
    plans_table(b, plans, lim);
    if (!viol || !viol->count) return;
    ps_buf_puts(b, "<table class=\"violations\"><tr><th>key</th><th>plan</th><th>kind</th>"
                   "<th>window</th><th>window reset</th><th class=\"n\">admitted</th>"
                   "<th class=\"n\">limit</th><th>message</th></tr>\n");
    for (size_t i = 0; i < viol->count; i++) {
        const ps_json *v = viol->items[i];
        const ps_json *reset = ps_html_get(v, "window_reset", PS_JSON_NUMBER);
        ps_buf_puts(b, "<tr data-kind=\"");
        ps_html_value(b, ps_json_get(v, "kind"), "");
        ps_buf_puts(b, "\"><td class=\"mono\">");
        ps_html_value(b, ps_json_get(v, "key"), "");
        ps_buf_puts(b, "</td><td>");
        ps_html_value(b, ps_json_get(v, "plan"), "");
        ps_buf_puts(b, "</td><td>");
        ps_html_value(b, ps_json_get(v, "kind"), "");
        ps_buf_puts(b, "</td><td>");
        ps_html_value(b, ps_json_get(v, "window"), "");
        ps_buf_puts(b, "</td><td>");
        if (reset && reset->d >= 0 && reset->d < 253402300800.0) {
            /* epoch seconds are unreadable; show UTC, keep the number in the title */
            time_t t = (time_t)reset->d;
            struct tm tm;
            char when[32];
            if (gmtime_r(&t, &tm) && strftime(when, sizeof when, "%Y-%m-%d %H:%M:%SZ", &tm)) {
                ps_buf_printf(b, "<span title=\"%s\">%s</span>", reset->str ? reset->str : "",
                              when);
            }
        } else {
            ps_html_value(b, ps_json_get(v, "window_reset"), "");
        }
        ps_buf_puts(b, "</td>");
        count_cell(b, v, "admitted");
        count_cell(b, v, "limit");
        ps_buf_puts(b, "<td>");
        ps_html_value(b, ps_json_get(v, "message"), "");
        ps_buf_puts(b, "</td></tr>\n");
    }
    ps_buf_puts(b, "</table>\n");
}

/* A threshold's figure: latency in human units, an error rate in percent. */
static void threshold_cell(ps_buf *b, const ps_json *t, const char *us_key, const char *frac_key)
{
    double v;
    if (ps_html_num(t, us_key, &v)) {
        ps_buf_puts(b, "<td class=\"n\" data-us=\"");
        ps_svg_put_number(b, v);
        ps_buf_puts(b, "\">");
        ps_html_latency_us(b, v);
    } else if (ps_html_num(t, frac_key, &v)) {
        ps_buf_puts(b, "<td class=\"n\" data-fraction=\"");
        ps_svg_put_number(b, v);
        ps_buf_printf(b, "\">%s", percent(v));
    } else {
        ps_buf_puts(b, "<td class=\"n\">n/a");
    }
    ps_buf_puts(b, "</td>");
}

static void thresholds_section(ps_buf *b, const ps_json *th)
{
    if (!th || th->type != PS_JSON_ARRAY || !th->count) return;
    ps_buf_puts(b,
                "<h2>Thresholds</h2>\n<table class=\"thresholds\"><tr><th>result</th>"
                "<th>expression</th><th class=\"n\">actual</th><th class=\"n\">bound</th></tr>\n");
    for (size_t i = 0; i < th->count; i++) {
        const ps_json *t = th->items[i];
        const ps_json *passed = ps_html_get(t, "passed", PS_JSON_BOOL);
        ps_buf_printf(b, "<tr data-passed=\"%s\"><td>",
                      passed ? (passed->boolean ? "true" : "false") : "unknown");
        if (passed)
            ps_buf_printf(b, "<span class=\"badge st-%s\">%s %s</span>",
                          passed->boolean ? "passed" : "failed",
                          passed->boolean ? "\xE2\x9C\x93" : "\xE2\x9C\x97",
                          passed->boolean ? "passed" : "failed");
        else
            ps_buf_puts(b, "n/a");
        ps_buf_puts(b, "</td><td class=\"mono\">");
        ps_html_value(b, ps_json_get(t, "expression"), "");
        ps_buf_puts(b, "</td>");
        threshold_cell(b, t, "actual_us", "actual");
        threshold_cell(b, t, "bound_us", "bound");
        ps_buf_puts(b, "</tr>\n");
    }
    ps_buf_puts(b, "</table>\n");
}

int ps_report_html_load(const ps_json *doc, FILE *out, ps_error *err)
{
    if (!doc || doc->type != PS_JSON_OBJECT)
        return ps_error_set(err, "HTML report: the load summary is %s, not a JSON object",
                            doc ? ps_json_type_name(doc->type) : "missing");
    ps_buf b = PS_BUF_INIT;
    const ps_json *params = ps_json_get(doc, "parameters");
    const ps_json *lat = ps_html_get(doc, "latency_us", PS_JSON_OBJECT);
    const char *base = ps_json_get_string(params, "base_url", NULL);

    ps_html_report_begin(&b, "Load report", base, "load");

    ps_buf_puts(&b, "<header>\n<h1>Pet Store load report");
    const char *run_verdict = ps_json_get_string(doc, "verdict", NULL);
    if (run_verdict) ps_html_verdict_badge(&b, run_verdict, "verdict");
    ps_buf_puts(&b, "</h1>\n<p class=\"meta\">Target <code>");
    ps_html_value(&b, ps_json_get(params, "base_url"), "unknown");
    ps_buf_puts(&b, "</code> &middot; ");
    ps_html_run_meta_end(&b, doc, "started ", "ran ");
    ps_buf_puts(&b, "<div class=\"cards\">");
    card(&b, "requests sent", "scheduled", doc, false);
    rate_cards(&b, doc);
    card(&b, "answered", "answered", doc, false);
    card(&b, "answered/s", "throughput_rps", doc, false);
    if (ps_html_get(doc, "status", PS_JSON_OBJECT)) {
        double n429 = 0;
        ps_html_num(ps_json_get(doc, "status"), "429", &n429);
        card_value(&b, "429 responses", "status_429", n429);
    }
    card(&b, "failed", "failed", doc, false);
    card(&b, "timed out", "timed_out", doc, false);
    if (ps_json_get(doc, "error_rate")) {
        double er;
        if (ps_html_num(doc, "error_rate", &er))
            card_text(&b, "error rate", "error_rate", er, percent(er));
        else
            card(&b, "error rate", "error_rate", doc, false);
    }
    card(&b, "p50 (corrected)", "p50", ps_html_get(lat, "corrected", PS_JSON_OBJECT), true);
    card(&b, "p99 (corrected)", "p99", ps_html_get(lat, "corrected", PS_JSON_OBJECT), true);
    card(&b, "max (corrected)", "max", ps_html_get(lat, "corrected", PS_JSON_OBJECT), true);
    ps_buf_puts(&b, "</div>\n");
    rate_note(&b, doc);

    parameters_section(&b, params);
    percentiles_table(&b, lat);
    ps_html_load_spectrum_section(&b, ps_html_get(doc, "percentile_spectrum", PS_JSON_OBJECT));
    ps_html_load_intervals_section(&b, ps_html_get(doc, "intervals", PS_JSON_ARRAY));
    status_section(&b, doc);
    ps_buf_puts(&b, "<h2>Breakdown</h2>\n");
    if (!ps_html_get(doc, "operations", PS_JSON_OBJECT) &&
        !ps_html_get(doc, "status_classes", PS_JSON_OBJECT))
        ps_buf_puts(&b, "<p class=\"note\">No breakdown in the report.</p>\n");
    breakdown_table(&b, "By operation", "operation", ps_html_get(doc, "operations", PS_JSON_OBJECT),
                    "requests");
    breakdown_table(&b, "By status class", "class",
                    ps_html_get(doc, "status_classes", PS_JSON_OBJECT), "count");
    limits_section(&b, ps_json_get(doc, "limits"), ps_html_get(doc, "plans", PS_JSON_ARRAY));
    ps_html_capacity_section(&b, doc);
    thresholds_section(&b, ps_html_get(doc, "thresholds", PS_JSON_ARRAY));
    ps_report_html_search(&b, ps_json_get(doc, "search")); /* petstore-load search */

    ps_html_footer(&b, doc, "petstore-load");
    ps_html_page_end(&b, script);

    int rc = ps_html_write(&b, out, err);
    ps_buf_free(&b);
    return rc;
}
