/* html_conform.c - the conformance report as one self-contained HTML page. */
#include "reports/html_report.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "reports/html_common.h"

/* Response bodies can be anything a server sends; past this the page would
 * stop being a report. */
#define BODY_CAP (64 * 1024)

/* "not_applicable" is a not_run check with applicable false: nothing to
 * judge, so it is counted apart from the checks that could not be tested
 * (the summary's not_run), each check once. */
static const char *const statuses[] = {"passed", "failed", "warning", "not_run", "not_applicable"};
static const char *const status_labels[] = {"passed", "failed", "warnings", "not run",
                                            "not applicable"};
static const char *const badge_labels[] = {"passed", "failed", "warning", "not run",
                                           "not applicable"};
static const char *const status_colours[] = {"var(--ok)", "var(--bad)", "var(--warn)",
                                             "var(--skip)", "var(--skip)"};
#define NSTATUS 5
#define ST_NOT_RUN 3
#define ST_NOT_APPLICABLE 4

/* Filtering without a server: the checkboxes only appear once the script has
 * run (data-script lets a headless browser test see that it did). A link
 * ending in #show=failed,warning opens the page already filtered. */
static const char script[] =
    "(function(){var d=document.documentElement;d.setAttribute('data-script','ran');\n"
    "var f=document.getElementById('filters');if(!f)return;f.hidden=false;\n"
    "var boxes=f.querySelectorAll('input');\n"
    "function apply(){var on={};boxes.forEach(function(i){on[i.value]=i.checked;});\n"
    "document.querySelectorAll('.check').forEach(function(c){c.hidden=on[c.getAttribute('data-"
    "status')]===false;});\n"
    "document.querySelectorAll('section.suite').forEach(function(s){\n"
    "s.hidden=s.querySelector('.check')!==null&&s.querySelector('.check:not([hidden])')===null;});}"
    "\n"
    "var m=/^#show=([a-z_,]+)$/.exec(location.hash);\n"
    "if(m){var "
    "want=m[1].split(',');boxes.forEach(function(i){i.checked=want.indexOf(i.value)>=0;});}\n"
    "f.addEventListener('change',apply);apply();\n"
    "function openHash(){var "
    "t=document.getElementById(decodeURIComponent(location.hash.slice(1)));\n"
    "if(t&&t.tagName==='DETAILS')t.open=true;}\n"
    "window.addEventListener('hashchange',openHash);openHash();\n"
    "window.addEventListener('beforeprint',function(){\n"
    "document.querySelectorAll('details.check:not([hidden])').forEach(function(e){e.open=true;});})"
    ";})();\n";

/* A check's index in statuses[], -1 for an unknown status. */
static int status_index(const ps_json *check)
{
    const char *s = ps_json_get_string(check, "status", NULL);
    for (int i = 0; s && i < ST_NOT_APPLICABLE; i++) {
        if (strcmp(s, statuses[i]) != 0) continue;
        const ps_json *applicable = ps_json_get(check, "applicable");
        if (i == ST_NOT_RUN && applicable && applicable->type == PS_JSON_BOOL &&
            !applicable->boolean)
            return ST_NOT_APPLICABLE;
        return i;
    }
    return -1;
}

/* Credentials must not reach a file attached to a CI job: the runner already
 * writes "***", this catches a writer that forgot. */
static bool is_secret_header(const char *name)
{
    return name && (strcasecmp(name, "authorization") == 0 ||
                    strcasecmp(name, "proxy-authorization") == 0 ||
                    strcasecmp(name, "x-api-key") == 0 || strcasecmp(name, "cookie") == 0);
}

static void header_value(ps_buf *b, const char *name, const ps_json *v)
{
    if (is_secret_header(name) && v && v->type == PS_JSON_STRING && !strstr(v->str, "***")) {
        const char *sp = memchr(v->str, ' ', v->len);
        if (sp) ps_html_esc_n(b, v->str, (size_t)(sp - v->str) + 1);
        ps_buf_puts(b, "***");
        return;
    }
    ps_html_value(b, v, "");
}

/* headers: [["Name","value"],...] per the contract; {"Name":"value"} tolerated. */
static void headers_block(ps_buf *b, const ps_json *h)
{
    if (!h) return;
    if (h->type == PS_JSON_ARRAY) {
        for (size_t i = 0; i < h->count; i++) {
            const ps_json *pair = h->items[i];
            if (pair->type == PS_JSON_ARRAY && pair->count >= 2 &&
                pair->items[0]->type == PS_JSON_STRING) {
                ps_html_esc_n(b, pair->items[0]->str, pair->items[0]->len);
                ps_buf_puts(b, ": ");
                header_value(b, pair->items[0]->str, pair->items[1]);
            } else {
                ps_html_value(b, pair, "");
            }
            ps_buf_putc(b, '\n');
        }
    } else if (h->type == PS_JSON_OBJECT) {
        for (size_t i = 0; i < h->count; i++) {
            ps_html_esc_n(b, h->keys[i], h->key_lens[i]);
            ps_buf_puts(b, ": ");
            header_value(b, h->keys[i], h->items[i]);
            ps_buf_putc(b, '\n');
        }
    } else {
        ps_html_value(b, h, "");
        ps_buf_putc(b, '\n');
    }
}

static void body_block(ps_buf *b, const ps_json *body)
{
    if (!body || (body->type == PS_JSON_STRING && body->len == 0)) return;
    ps_buf_putc(b, '\n');
    if (body->type == PS_JSON_STRING)
        ps_html_esc_capped(b, body, BODY_CAP);
    else
        ps_html_value(b, body, "");
}

/* Members beyond the contract's method/url/status/headers/body (a writer's
 * elapsed_ms, say) still show, after the exchange. */
static void extra_members(ps_buf *b, const ps_json *obj)
{
    static const char *const known[] = {"method", "url", "status", "headers", "body"};
    bool first = true;
    for (size_t i = 0; i < obj->count; i++) {
        bool skip = false;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            skip |= !strcmp(obj->keys[i], known[k]);
        if (skip) continue;
        ps_buf_puts(b, first ? "\n<span class=\"note\">" : "<span class=\"note\">");
        first = false;
        ps_html_esc_n(b, obj->keys[i], obj->key_lens[i]);
        ps_buf_puts(b, ": ");
        ps_html_value(b, obj->items[i], "");
        ps_buf_puts(b, "</span>\n");
    }
}

/* The evidence's request or response: start line, headers, body and any
 * other members; a value that is not an object is shown as it is. */
static void message_block(ps_buf *b, const ps_json *msg, bool is_request)
{
    ps_buf_puts(b, is_request ? "<h4>Request</h4><pre class=\"req\">"
                              : "<h4>Response</h4><pre class=\"resp\">");
    if (msg && msg->type == PS_JSON_OBJECT) {
        if (is_request) {
            ps_html_value(b, ps_json_get(msg, "method"), "?");
            ps_buf_putc(b, ' ');
            ps_html_value(b, ps_json_get(msg, "url"), "?");
        } else {
            ps_buf_puts(b, "HTTP ");
            ps_html_value(b, ps_json_get(msg, "status"), "(no status)");
        }
        ps_buf_putc(b, '\n');
        headers_block(b, ps_json_get(msg, "headers"));
        body_block(b, ps_json_get(msg, "body"));
        extra_members(b, msg);
    } else {
        ps_html_value(b, msg, "");
    }
    ps_buf_puts(b, "</pre>\n");
}

static void evidence_block(ps_buf *b, const ps_json *check)
{
    const ps_json *msg = ps_json_get(check, "message");
    const ps_json *ev = ps_json_get(check, "evidence");
    const ps_json *tags = ps_html_get(check, "tags", PS_JSON_ARRAY);
    ps_buf_puts(b, "<div class=\"ev\">");
    if (msg) {
        ps_buf_puts(b, "<p class=\"msg\">");
        ps_html_value(b, msg, "");
        ps_buf_puts(b, "</p>");
    }
    const ps_json *obs = ps_html_get(check, "observations", PS_JSON_OBJECT);
    if (obs) {
        ps_buf_puts(b, "<p class=\"note\">observations: ");
        for (size_t i = 0; i < obs->count; i++) {
            if (i) ps_buf_puts(b, ", ");
            ps_html_value(b, obs->items[i], "");
            ps_buf_putc(b, ' ');
            ps_html_esc_n(b, obs->keys[i], obs->key_lens[i]);
        }
        ps_buf_puts(b, "</p>");
    }
    if (ev && ev->type == PS_JSON_OBJECT) {
        const ps_json *req = ps_json_get(ev, "request");
        const ps_json *resp = ps_json_get(ev, "response");
        const ps_json *exp = ps_json_get(ev, "expected");
        const ps_json *curl = ps_json_get(ev, "curl");
        if (req) message_block(b, req, true);
        if (resp) message_block(b, resp, false);
        if (exp) {
            ps_buf_puts(b, "<h4>Expected</h4><pre class=\"exp\">");
            ps_html_value(b, exp, "");
            ps_buf_puts(b, "</pre>\n");
        }
        if (curl) {
            ps_buf_puts(b, "<h4>Reproduce</h4><pre class=\"curl\"><code>");
            ps_html_value(b, curl, "");
            ps_buf_puts(b, "</code></pre>\n");
        }
        /* members added to the contract later still show */
        for (size_t i = 0; i < ev->count; i++) {
            const char *k = ev->keys[i];
            if (!strcmp(k, "request") || !strcmp(k, "response") || !strcmp(k, "expected") ||
                !strcmp(k, "curl"))
                continue;
            ps_buf_puts(b, "<h4>");
            ps_html_esc_n(b, k, ev->key_lens[i]);
            ps_buf_puts(b, "</h4><pre>");
            ps_html_value(b, ev->items[i], "");
            ps_buf_puts(b, "</pre>\n");
        }
    } else if (ev) {
        ps_buf_puts(b, "<h4>Evidence</h4><pre>");
        ps_html_value(b, ev, "");
        ps_buf_puts(b, "</pre>\n");
    }
    if (tags && tags->count) {
        ps_buf_puts(b, "<p class=\"note\">tags: ");
        for (size_t i = 0; i < tags->count; i++) {
            if (i) ps_buf_puts(b, ", ");
            ps_html_value(b, tags->items[i], "");
        }
        ps_buf_puts(b, "</p>");
    }
    ps_buf_puts(b, "</div>\n");
}

/* failed and warning checks are also listed at the top, linking to their row */
static void attention_item(ps_buf *attn, const ps_json *check, int si)
{
    ps_buf_printf(attn, "<li><span class=\"badge st-%s\">%s</span> <a href=\"#", statuses[si],
                  badge_labels[si]);
    ps_html_value(attn, ps_json_get(check, "id"), "");
    ps_buf_puts(attn, "\"><code>");
    ps_html_value(attn, ps_json_get(check, "id"), "(no id)");
    ps_buf_puts(attn, "</code></a> ");
    ps_html_value(attn, ps_json_get(check, "message"), "");
    ps_buf_puts(attn, "</li>\n");
}

static void check_row(ps_buf *b, ps_buf *attn, const ps_json *check, int counts[NSTATUS + 1])
{
    int si = status_index(check);
    counts[si < 0 ? NSTATUS : si]++;
    const char *cls = si < 0 ? "unknown" : statuses[si];
    if (si == 1 || si == 2) attention_item(attn, check, si);
    bool expandable = ps_json_get(check, "evidence") || ps_json_get(check, "message");
    const char *outer = expandable ? "details" : "div";
    double dur;

    /* a failed check opens: its evidence is what the reader came for */
    ps_buf_printf(b, "<%s class=\"check\" data-status=\"%s\"%s id=\"", outer, cls,
                  expandable && si == 1 ? " open" : "");
    ps_html_value(b, ps_json_get(check, "id"), "");
    ps_buf_printf(b, "\"><%s class=\"row\"><span><span class=\"badge st-%s\">",
                  expandable ? "summary" : "div", cls);
    if (si < 0)
        ps_html_value(b, ps_json_get(check, "status"), "unknown");
    else
        ps_buf_puts(b, badge_labels[si]);
    ps_buf_puts(b, "</span></span><code class=\"id\">");
    ps_html_value(b, ps_json_get(check, "id"), "(no id)");
    ps_buf_puts(b, "</code><span class=\"ti\">");
    ps_html_value(b, ps_json_get(check, "title"), "");
    ps_buf_puts(b, "</span><span class=\"lvl\">");
    ps_html_value(b, ps_json_get(check, "level"), "");
    ps_buf_puts(b, "</span><span class=\"cl\">");
    ps_html_value(b, ps_json_get(check, "clause"), "");
    ps_buf_puts(b, "</span><span class=\"dur\">");
    /* 0 means not timed (not run, or judged from other checks' exchanges) */
    if (ps_html_num(check, "duration_ms", &dur) && dur > 0) ps_html_latency_us(b, dur * 1000);
    ps_buf_printf(b, "</span></%s>\n", expandable ? "summary" : "div");
    if (expandable) evidence_block(b, check);
    ps_buf_printf(b, "</%s>\n", outer);
}

/* A run that stopped early (aborted) or could not test everything
 * (incomplete) must say so before anything else, in words: its counts alone
 * read like a result. Styled inline: html_common's sheet is shared. */
static void run_banner(ps_buf *b, const ps_json *doc)
{
    static const struct {
        const char *member, *title, *after;
    } kinds[] = {
        {"aborted", "The run was aborted",
         "Checks after that point were not run: this report is not a verdict on the service."},
        {"incomplete", "The run is incomplete",
         "No check failed, but some could not be tested: a CI gate must not treat this run as a "
         "pass."},
    };
    /* A failed or aborted run may be incomplete as well: then only the
     * reason is added, the verdict says the rest. */
    const char *verdict = ps_json_get_string(doc, "verdict", NULL);
    bool only_incomplete = verdict && strcmp(verdict, "incomplete") == 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const ps_json *why = ps_json_get(doc, kinds[i].member);
        if (!why || why->type == PS_JSON_NULL || (why->type == PS_JSON_BOOL && !why->boolean))
            continue;
        ps_buf_printf(b,
                      "<div class=\"run-banner\" role=\"alert\" data-banner=\"%s\" "
                      "style=\"border:2px solid var(--bad);border-left-width:8px;border-radius:4px;"
                      "padding:10px 14px;margin:12px 0;font-size:15px\">"
                      "<strong style=\"color:var(--bad)\">%s:</strong> <span class=\"reason\">",
                      kinds[i].member, kinds[i].title);
        if (why->type == PS_JSON_STRING)
            ps_html_esc_capped(b, why, 4096);
        else
            ps_html_value(b, why, "");
        if (i == 1 && !only_incomplete)
            ps_buf_puts(b, "</span></div>\n");
        else
            ps_buf_printf(b, "</span><br><small>%s</small></div>\n", kinds[i].after);
    }
}

static void summary_section(ps_buf *b, const ps_json *doc, const int counted[NSTATUS + 1])
{
    const ps_json *sum = ps_html_get(doc, "summary", PS_JSON_OBJECT);
    static const char *const keys[] = {"passed", "failed", "warnings", "not_run", "not_applicable"};
    double n[NSTATUS], total = 0, t;
    for (int i = 0; i < NSTATUS; i++) {
        /* the document's summary is authoritative; count rows only without one */
        if (!ps_html_num(sum, keys[i], &n[i]) || n[i] < 0) n[i] = sum ? 0 : counted[i];
        total += n[i];
    }
    ps_buf_puts(b, "<section class=\"summary\">\n<div class=\"cards\">");
    ps_buf_puts(b, "<div class=\"card\" data-count=\"total\"><b>");
    if (ps_html_num(sum, "total", &t))
        ps_html_number(b, t);
    else
        ps_html_number(b, total);
    ps_buf_puts(b, "</b><span>checks</span></div>");
    for (int i = 0; i < NSTATUS; i++) {
        ps_buf_printf(b, "<div class=\"card\" data-count=\"%s\"><b>", statuses[i]);
        ps_html_number(b, n[i]);
        ps_buf_printf(b, "</b><span><i class=\"sw\" style=\"background:%s\"></i>%s</span></div>",
                      status_colours[i], status_labels[i]);
    }
    ps_buf_puts(b, "</div>\n<div class=\"bar\" role=\"img\" aria-label=\"");
    for (int i = 0; i < NSTATUS; i++) {
        if (i) ps_buf_puts(b, ", ");
        ps_html_number(b, n[i]);
        ps_buf_printf(b, " %s", n[i] == 1 ? badge_labels[i] : status_labels[i]);
    }
    ps_buf_puts(b, "\">");
    for (int i = 0; total > 0 && i < NSTATUS; i++) {
        if (n[i] <= 0) continue;
        ps_buf_printf(b, "<div style=\"width:%.3f%%;background:%s\" title=\"%s: %.0f\"></div>",
                      100.0 * n[i] / total, status_colours[i], status_labels[i], n[i]);
    }
    ps_buf_puts(b, "</div>\n</section>\n");
}

int ps_report_html_conform(const ps_json *doc, FILE *out, ps_error *err)
{
    if (!doc || doc->type != PS_JSON_OBJECT)
        return ps_error_set(err, "HTML report: the conformance summary is %s, not a JSON object",
                            doc ? ps_json_type_name(doc->type) : "missing");
    ps_buf b = PS_BUF_INIT, body = PS_BUF_INIT, attn = PS_BUF_INIT;
    int counted[NSTATUS + 1] = {0};
    int rc = -1;
    const ps_json *target = ps_html_get(doc, "target", PS_JSON_OBJECT);
    const ps_json *suites = ps_html_get(doc, "suites", PS_JSON_ARRAY);
    const char *verdict = ps_json_get_string(doc, "verdict", NULL);

    /* checks first, into their own buffer: the summary needs their counts */
    for (size_t i = 0; suites && i < suites->count; i++) {
        const ps_json *s = suites->items[i];
        const ps_json *checks = ps_html_get(s, "checks", PS_JSON_ARRAY);
        int sc[NSTATUS + 1] = {0};
        ps_buf rows = PS_BUF_INIT;
        for (size_t j = 0; checks && j < checks->count; j++)
            check_row(&rows, &attn, checks->items[j], sc);
        for (int k = 0; k <= NSTATUS; k++)
            counted[k] += sc[k];
        ps_buf_puts(&body, "<section class=\"suite\" data-suite=\"");
        ps_html_value(&body, ps_json_get(s, "name"), "");
        ps_buf_puts(&body, "\">\n<h2>");
        ps_html_value(&body, ps_json_get(s, "name"), "(unnamed suite)");
        ps_buf_printf(&body,
                      " <small class=\"note\">%d passed, %d failed, %d warning%s, %d not run",
                      sc[0], sc[1], sc[2], sc[2] == 1 ? "" : "s", sc[ST_NOT_RUN]);
        if (sc[ST_NOT_APPLICABLE])
            ps_buf_printf(&body, ", %d not applicable", sc[ST_NOT_APPLICABLE]);
        if (sc[NSTATUS]) ps_buf_printf(&body, ", %d with an unknown status", sc[NSTATUS]);
        ps_buf_puts(&body, "</small></h2>\n");
        if (!checks || !checks->count) ps_buf_puts(&body, "<p class=\"note\">No checks.</p>\n");
        ps_buf_append(&body, rows.data, rows.len);
        ps_buf_puts(&body, "</section>\n");
        ps_buf_free(&rows);
    }

    ps_html_report_begin(&b, "Conformance report", ps_json_get_string(target, "base_url", NULL),
                         "conform");

    ps_buf_puts(&b, "<header>\n<h1>Pet Store conformance report");
    if (verdict) ps_html_verdict_badge(&b, verdict, "verdict");
    ps_buf_puts(&b, "</h1>\n<p class=\"meta\">Target <code>");
    ps_html_value(&b, ps_json_get(target, "base_url"), "unknown");
    ps_buf_puts(&b, "</code> &middot; plan ");
    ps_html_value(&b, ps_json_get(target, "plan"), "n/a");
    ps_buf_puts(&b, " &middot; limit plan ");
    ps_html_value(&b, ps_json_get(target, "limit_plan"), "n/a");
    ps_buf_puts(&b, " &middot; strict ");
    ps_html_value(&b, ps_json_get(target, "strict"), "n/a");
    ps_buf_puts(&b, "</p>\n<p class=\"meta\">");
    ps_html_run_meta_end(&b, doc, "Started ", "took ");

    run_banner(&b, doc);
    summary_section(&b, doc, counted);

    ps_buf_puts(&b, "<div class=\"filters\" id=\"filters\" hidden>Show: ");
    for (int i = 0; i < NSTATUS; i++)
        ps_buf_printf(&b, "<label><input type=\"checkbox\" value=\"%s\" checked> %s</label>",
                      statuses[i], status_labels[i]);
    if (counted[NSTATUS])
        ps_buf_puts(&b,
                    "<label><input type=\"checkbox\" value=\"unknown\" checked> unknown</label>");
    ps_buf_puts(&b, "</div>\n");
    if (attn.len) {
        ps_buf_puts(&b, "<h2>Needs attention</h2>\n<ul class=\"attention\">\n");
        ps_buf_append(&b, attn.data, attn.len);
        ps_buf_puts(&b, "</ul>\n");
    }
    ps_buf_puts(&b, "<p class=\"note\">Failed and warning checks open to show the request, the "
                    "response, what was expected and a curl command that reproduces it.</p>\n");

    if (!suites || !suites->count)
        ps_buf_puts(&b, "<p class=\"note\">The report lists no suites.</p>\n");
    ps_buf_append(&b, body.data, body.len);

    ps_html_footer(&b, doc, "petstore-conform");
    ps_html_page_end(&b, script);

    rc = ps_html_write(&b, out, err);
    ps_buf_free(&b);
    ps_buf_free(&body);
    ps_buf_free(&attn);
    return rc;
}
