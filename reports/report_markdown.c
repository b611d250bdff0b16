/* report_markdown.c - the --summary-md writers; see report_markdown.h. */
#include "reports/report_markdown.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "reports/report_conform_text.h"

/* CommonMark lets any ASCII punctuation be backslash-escaped; these are the
 * ones that open markup inside a line (emphasis, code, links and images,
 * HTML, table cells, strikethrough, entities, GitHub's math), and ':',
 * which GFM's autolinks need (a server's "http://..." must not become a
 * link on the job page; an e-mail address still becomes a mailto: one,
 * which no escape prevents). Text never starts a line here, so the
 * line-start ones (#, -, +, digits) need none. */
static const char md_special[] = "\\`*_[]<>|~&!$:";

void ps_md_text(ps_buf *b, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            ps_buf_putc(b, ' ');
        else if (c == '.' && i >= 3 && strncasecmp(s + i - 3, "www", 3) == 0)
            ps_buf_puts(b, "\\."); /* "www." starts an autolink too */
        else if (strchr(md_special, c))
            ps_buf_putc(b, '\\'), ps_buf_putc(b, (char)c);
        else
            ps_buf_putc(b, (char)c);
    }
}

static void md_str(ps_buf *b, const char *s)
{
    ps_md_text(b, s, strlen(s));
}

/* s as an inline code span: delimited by one more backtick than its
 * longest run (CommonMark 6.1), padded with a space (stripped when
 * rendered) where it starts or ends with a backtick; control bytes are
 * spaces, so it cannot end the line or the cell. A '|' inside a table cell
 * must still be escaped (GFM splits cells before inline parsing). */
static void md_code(ps_buf *b, const char *s, bool in_table)
{
    size_t run = 0, longest = 0;
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    size_t n = strlen(s);
    bool pad = n == 0 || s[0] == '`' || s[n - 1] == '`';
    for (size_t i = 0; i <= longest; i++)
        ps_buf_putc(b, '`');
    if (pad) ps_buf_putc(b, ' ');
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f)
            ps_buf_putc(b, ' ');
        else if (c == '|' && in_table)
            ps_buf_puts(b, "\\|");
        else
            ps_buf_putc(b, (char)c);
    }
    if (pad) ps_buf_putc(b, ' ');
    for (size_t i = 0; i <= longest; i++)
        ps_buf_putc(b, '`');
}

/* A fenced code block holding text (lines kept, other control bytes made
 * '.'), fenced with more backticks than any run inside it. */
static void md_fence(ps_buf *b, const char *lang, const char *text)
{
    size_t run = 0, longest = 0;
    for (const char *p = text; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    size_t fence = longest >= 3 ? longest + 1 : 3;
    for (size_t i = 0; i < fence; i++)
        ps_buf_putc(b, '`');
    ps_buf_printf(b, "%s\n", lang);
    for (const char *p = text; *p; p++) {
        unsigned char c = (unsigned char)*p;
        ps_buf_putc(b, c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f) ? (char)c : '.');
    }
    if (*text && text[strlen(text) - 1] != '\n') ps_buf_putc(b, '\n');
    for (size_t i = 0; i < fence; i++)
        ps_buf_putc(b, '`');
    ps_buf_puts(b, "\n\n");
}

static int64_t num_or(const ps_json *doc, const char *path, int64_t dflt)
{
    const ps_json *v = ps_json_path(doc, path);
    if (!v || v->type != PS_JSON_NUMBER) return dflt;
    return v->is_int ? v->i : (int64_t)v->d;
}

static const char *str_or(const ps_json *doc, const char *path, const char *dflt)
{
    const ps_json *v = ps_json_path(doc, path);
    return v && v->type == PS_JSON_STRING ? v->str : dflt;
}

/* The verdict as a heading word: an emoji GitHub shows, and the word. */
static const char *verdict_mark(const char *verdict)
{
    if (strcmp(verdict, "pass") == 0) return "\xE2\x9C\x85"; /* white heavy check mark */
    if (strcmp(verdict, "fail") == 0) return "\xE2\x9D\x8C"; /* cross mark */
    return "\xE2\x9A\xA0\xEF\xB8\x8F";                       /* warning sign */
}

static int flush_out(ps_buf *b, FILE *out, ps_error *err)
{
    if (fwrite(b->data, 1, b->len, out) != b->len || fflush(out) != 0) {
        if (err) ps_error_set(err, "writing the Markdown summary failed: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- petstore-conform ---- */

/* Rows of checks whose status is `status`: | check | level | clause | message |. */
static size_t conform_rows(ps_buf *b, const ps_json *suites, const char *status)
{
    size_t n = 0;
    for (size_t s = 0; suites && s < suites->count; s++) {
        const ps_json *checks = ps_json_get(suites->items[s], "checks");
        for (size_t c = 0; checks && checks->type == PS_JSON_ARRAY && c < checks->count; c++) {
            const ps_json *ck = checks->items[c];
            if (strcmp(ps_json_get_string(ck, "status", ""), status) != 0) continue;
            if (strcmp(status, "not_run") == 0 && !ps_report_check_untested(ck)) continue;
            if (n++ == 0)
                ps_buf_puts(b, "| check | level | clause | message |\n|---|---|---|---|\n");
            ps_buf_puts(b, "| ");
            md_code(b, ps_json_get_string(ck, "id", "?"), true);
            ps_buf_puts(b, " | ");
            md_str(b, ps_json_get_string(ck, "level", ""));
            ps_buf_puts(b, " | ");
            md_str(b, ps_json_get_string(ck, "clause", ""));
            ps_buf_puts(b, " | ");
            md_str(b, ps_json_get_string(ck, "message", ps_json_get_string(ck, "title", "")));
            ps_buf_puts(b, " |\n");
        }
    }
    if (n) ps_buf_putc(b, '\n');
    return n;
}

/* "### heading", intro and the table of the checks with that status, when
 * there is one; returns whether there was. */
static bool conform_section(ps_buf *b, const char *heading, const char *intro,
                            const ps_json *suites, const char *status)
{
    ps_buf rows = PS_BUF_INIT;
    size_t n = conform_rows(&rows, suites, status);
    if (n) {
        ps_buf_printf(b, "### %s\n\n%s", heading, intro);
        ps_buf_append(b, rows.data, rows.len);
    }
    ps_buf_free(&rows);
    return n > 0;
}

/* Each failed check's curl line (keys already ${PETSTORE_...}). */
static void conform_reproduce(ps_buf *b, const ps_json *suites)
{
    bool any = false;
    for (size_t s = 0; suites && s < suites->count; s++) {
        const ps_json *checks = ps_json_get(suites->items[s], "checks");
        for (size_t c = 0; checks && checks->type == PS_JSON_ARRAY && c < checks->count; c++) {
            const ps_json *ck = checks->items[c];
            const char *curl = str_or(ck, "evidence.curl", NULL);
            if (strcmp(ps_json_get_string(ck, "status", ""), "failed") != 0 || !curl) continue;
            if (!any)
                ps_buf_puts(b, "### Reproduce\n\nWith the keys in the environment "
                               "(`PETSTORE_API_KEY`, `PETSTORE_LIMIT_KEY`):\n\n");
            any = true;
            md_code(b, ps_json_get_string(ck, "id", "?"), false);
            ps_buf_puts(b, "\n\n");
            md_fence(b, "sh", curl);
        }
    }
}

int ps_report_md_conform(const ps_json *doc, FILE *out, ps_error *err)
{
    if (!doc || doc->type != PS_JSON_OBJECT) {
        if (err) ps_error_set(err, "Markdown summary: no report document");
        return -1;
    }
    ps_buf b = PS_BUF_INIT;
    const char *verdict = str_or(doc, "verdict", "unknown");
    ps_buf_printf(&b, "## petstore-conform: %s ", verdict_mark(verdict));
    md_str(&b, verdict);
    ps_buf_puts(&b, "\n\nTarget ");
    md_code(&b, str_or(doc, "target.base_url", "?"), false);
    const char *plan = str_or(doc, "target.plan", NULL),
               *lplan = str_or(doc, "target.limit_plan", NULL);
    if (plan) ps_buf_puts(&b, ", plan "), md_str(&b, plan);
    if (lplan) ps_buf_puts(&b, ", limit plan "), md_str(&b, lplan);
    const ps_json *dur = ps_json_get(doc, "duration_s");
    if (dur && dur->type == PS_JSON_NUMBER) ps_buf_printf(&b, ", %.1f s", dur->d);
    ps_buf_printf(&b, ", exit %lld, petstore-conform ", (long long)num_or(doc, "exit_code", -1));
    md_str(&b, str_or(doc, "version", "?"));
    ps_buf_puts(&b, "\n\n");
    const char *aborted = str_or(doc, "aborted", NULL),
               *incomplete = str_or(doc, "incomplete", NULL);
    if (aborted) ps_buf_puts(&b, "**Aborted:** "), md_str(&b, aborted), ps_buf_puts(&b, "\n\n");
    if (incomplete)
        ps_buf_puts(&b, "**Incomplete:** "), md_str(&b, incomplete), ps_buf_puts(&b, "\n\n");
    /* a gateway that answered in the service's place (runner/suites/front.h) */
    const ps_json *fronts = ps_json_get(doc, "fronts");
    if (fronts && fronts->type == PS_JSON_OBJECT) {
        ps_buf_printf(&b, "**Front:** %lld replies made by ",
                      (long long)ps_json_get_int(fronts, "replies", 0));
        md_str(&b, ps_json_get_string(fronts, "who", "a gateway"));
        ps_buf_puts(&b, " in front of the service, not judged as its answers (first: ");
        md_str(&b, ps_json_get_string(fronts, "first", ""));
        ps_buf_puts(&b, ")\n\n");
    }
    ps_buf_printf(
        &b,
        "| checks | passed | failed | warnings | not run | not applicable |\n"
        "|---:|---:|---:|---:|---:|---:|\n"
        "| %lld | %lld | %lld | %lld | %lld | %lld |\n\n",
        (long long)num_or(doc, "summary.total", 0), (long long)num_or(doc, "summary.passed", 0),
        (long long)num_or(doc, "summary.failed", 0), (long long)num_or(doc, "summary.warnings", 0),
        (long long)num_or(doc, "summary.not_run", 0),
        (long long)num_or(doc, "summary.not_applicable", 0));
    const ps_json *suites = ps_json_get(doc, "suites");
    if (suites && suites->type != PS_JSON_ARRAY) suites = NULL;
    if (!conform_section(&b, "Failed checks", "", suites, "failed"))
        ps_buf_puts(&b, "No check failed.\n\n");
    conform_section(&b, "Warnings", "", suites, "warning");
    conform_section(&b, "Not tested", "These checks apply but could not be tested:\n\n", suites,
                    "not_run");
    conform_reproduce(&b, suites);
    int rc = flush_out(&b, out, err);
    ps_buf_free(&b);
    return rc;
}

/* ---- petstore-load ---- */

/* Microseconds as a person reads them: 850 us, 12.3 ms, 1.25 s. */
static void md_latency(ps_buf *b, const ps_json *v)
{
    if (!v || v->type != PS_JSON_NUMBER || !isfinite(v->d)) {
        ps_buf_puts(b, "n/a");
        return;
    }
    double us = v->d;
    if (fabs(us) >= 1e6)
        ps_buf_printf(b, "%.2f s", us / 1e6);
    else if (fabs(us) >= 1e3)
        ps_buf_printf(b, "%.*f ms", fabs(us) < 1e4 ? 2 : 1, us / 1e3);
    else
        ps_buf_printf(b, "%.0f us", us);
}

static void load_heading(ps_buf *b, const ps_json *doc)
{
    const char *verdict = str_or(doc, "verdict", "unknown");
    ps_buf_printf(b, "## petstore-load: %s ", verdict_mark(verdict));
    md_str(b, verdict);
    ps_buf_puts(b, "\n\nTarget ");
    md_code(b, str_or(doc, "parameters.base_url", "?"), false);
    const ps_json *rate = ps_json_path(doc, "parameters.rate");
    if (strcmp(str_or(doc, "parameters.model", ""), "open") == 0 && rate &&
        rate->type == PS_JSON_NUMBER)
        ps_buf_printf(b, ", open model at %g req/s", rate->d);
    else
        ps_buf_printf(b, ", %s model",
                      strcmp(str_or(doc, "parameters.model", ""), "open") == 0 ? "open" : "closed");
    ps_buf_printf(b, ", %lld thread(s), %lld connection(s)",
                  (long long)num_or(doc, "parameters.threads", 0),
                  (long long)num_or(doc, "parameters.connections", 0));
    const ps_json *dur = ps_json_get(doc, "duration_s");
    if (dur && dur->type == PS_JSON_NUMBER) ps_buf_printf(b, ", %.1f s", dur->d);
    ps_buf_puts(b, ", engine ");
    md_str(b, str_or(doc, "parameters.engine", "?"));
    ps_buf_printf(b, ", exit %lld, petstore-load ", (long long)num_or(doc, "exit_code", -1));
    md_str(b, str_or(doc, "version", "?"));
    ps_buf_puts(b, "\n\n");
    const char *aborted = str_or(doc, "aborted", NULL);
    if (aborted) ps_buf_puts(b, "**Why:** "), md_str(b, aborted), ps_buf_puts(b, "\n\n");
}

static void load_counts(ps_buf *b, const ps_json *doc)
{
    const ps_json *tp = ps_json_get(doc, "throughput_rps"), *er = ps_json_get(doc, "error_rate");
    ps_buf_printf(b,
                  "| requests | answered | failed | timed out | 429 | throughput | error rate |\n"
                  "|---:|---:|---:|---:|---:|---:|---:|\n"
                  "| %lld | %lld | %lld | %lld | %lld | %.1f req/s | %.2f%% |\n\n",
                  (long long)num_or(doc, "scheduled", 0), (long long)num_or(doc, "answered", 0),
                  (long long)num_or(doc, "failed", 0), (long long)num_or(doc, "timed_out", 0),
                  (long long)num_or(doc, "status.429", 0),
                  tp && tp->type == PS_JSON_NUMBER ? tp->d : 0.0,
                  er && er->type == PS_JSON_NUMBER ? er->d * 100 : 0.0);
    static const char *const cols[] = {"p50", "p90", "p99", "p99_9", "max"};
    ps_buf_puts(b, "| latency | p50 | p90 | p99 | p99.9 | max |\n|---|---:|---:|---:|---:|---:|\n");
    static const char *const kinds[] = {"corrected", "uncorrected"};
    for (size_t k = 0; k < 2; k++) {
        const ps_json *lat = ps_json_get(ps_json_get(doc, "latency_us"), kinds[k]);
        if (!lat || lat->type != PS_JSON_OBJECT) continue;
        ps_buf_printf(b, "| %s |", kinds[k]);
        for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
            ps_buf_putc(b, ' ');
            md_latency(b, ps_json_get(lat, cols[c]));
            ps_buf_puts(b, " |");
        }
        ps_buf_putc(b, '\n');
    }
    ps_buf_putc(b, '\n');
}

static void load_thresholds(ps_buf *b, const ps_json *doc)
{
    const ps_json *th = ps_json_get(doc, "thresholds");
    if (!th || th->type != PS_JSON_ARRAY || th->count == 0) return;
    ps_buf_puts(b, "### Thresholds\n\n| threshold | actual | result |\n|---|---:|---|\n");
    for (size_t i = 0; i < th->count; i++) {
        const ps_json *t = th->items[i], *passed = ps_json_get(t, "passed");
        ps_buf_puts(b, "| ");
        md_code(b, ps_json_get_string(t, "expression", "?"), true);
        ps_buf_puts(b, " | ");
        const ps_json *actual = ps_json_get(t, "actual");
        if (actual && actual->type == PS_JSON_NUMBER)
            ps_buf_printf(b, "%.3f%%", actual->d * 100);
        else
            md_latency(b, ps_json_get(t, "actual_us"));
        bool ok = passed && passed->type == PS_JSON_BOOL && passed->boolean;
        const ps_json *lost = ps_json_get(t, "lost_to_generator");
        bool generator = !ok && lost && lost->type == PS_JSON_BOOL && lost->boolean;
        ps_buf_printf(b, " | %s |\n",
                      ok          ? "\xE2\x9C\x85 pass"
                      : generator ? "\xE2\x9A\xA0\xEF\xB8\x8F lost to the generator's lateness"
                                  : "\xE2\x9D\x8C fail");
    }
    ps_buf_putc(b, '\n');
}

static void load_limits(ps_buf *b, const ps_json *doc)
{
    const ps_json *lim = ps_json_get(doc, "limits");
    if (!lim || lim->type != PS_JSON_OBJECT) return;
    ps_buf_puts(b, "### Rate limits (--verify-limits)\n\nVerdict: **");
    md_str(b, ps_json_get_string(lim, "verdict", "?"));
    ps_buf_printf(b, "**, %lld window(s) judged", (long long)ps_json_get_int(lim, "windows", 0));
    const ps_json *models = ps_json_get(lim, "models");
    for (size_t i = 0; models && models->type == PS_JSON_ARRAY && i < models->count; i++) {
        ps_buf_puts(b, i ? ", " : "; limiter seen: ");
        md_str(b, ps_json_get_string(models->items[i], "key", "?"));
        ps_buf_puts(b, " ");
        md_str(b, ps_json_get_string(models->items[i], "model", "?"));
    }
    ps_buf_puts(b, "\n\n");
    const ps_json *v = ps_json_get(lim, "violations");
    if (!v || v->type != PS_JSON_ARRAY || v->count == 0) return;
    ps_buf_puts(b, "| key | kind | window | admitted | limit | message |\n"
                   "|---|---|---|---:|---:|---|\n");
    for (size_t i = 0; i < v->count; i++) {
        const ps_json *x = v->items[i];
        ps_buf_puts(b, "| ");
        md_code(b, ps_json_get_string(x, "key", ""), true);
        ps_buf_puts(b, " | ");
        md_code(b, ps_json_get_string(x, "kind", ""), true);
        ps_buf_puts(b, " | ");
        md_str(b, ps_json_get_string(x, "window", ""));
        const ps_json *adm = ps_json_get(x, "admitted"), *l = ps_json_get(x, "limit");
        if (adm && adm->type == PS_JSON_NUMBER)
            ps_buf_printf(b, " | %lld", (long long)adm->d);
        else
            ps_buf_puts(b, " | ");
        if (l && l->type == PS_JSON_NUMBER)
            ps_buf_printf(b, " | %lld | ", (long long)l->d);
        else
            ps_buf_puts(b, " |  | ");
        md_str(b, ps_json_get_string(x, "message", ""));
        ps_buf_puts(b, " |\n");
    }
    ps_buf_putc(b, '\n');
}

/* Capacity per plan and key group (a run's plans[] and groups[] with
 * offered_rps): rates, share of quota, 429s window full and early. */
static void load_capacity(ps_buf *b, const ps_json *doc)
{
    static const char *const arrays[][2] = {{"plans", "plan"}, {"groups", "group"}};
    bool head = false;
    for (size_t a = 0; a < 2; a++) {
        const ps_json *rows = ps_json_get(doc, arrays[a][0]);
        for (size_t i = 0; rows && rows->type == PS_JSON_ARRAY && i < rows->count; i++) {
            const ps_json *r = rows->items[i], *q = ps_json_get(r, "quota_share");
            if (!ps_json_get(r, "offered_rps")) continue;
            if (!head)
                ps_buf_puts(b, "### Capacity by plan and key group\n\n"
                               "| | keys | offered/s | achieved/s | admitted/s | share of quota "
                               "| 429s | window full | early | windows filled |\n"
                               "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            head = true;
            ps_buf_printf(b, "| %s ", arrays[a][1]);
            md_str(b, ps_json_get_string(r, arrays[a][1], "?"));
            ps_buf_printf(
                b, " | %lld | %.1f | %.1f | %.1f | ", (long long)ps_json_get_int(r, "keys", 0),
                ps_json_get_number(r, "offered_rps", 0), ps_json_get_number(r, "achieved_rps", 0),
                ps_json_get_number(r, "admitted_rps", 0));
            if (q && q->type == PS_JSON_NUMBER)
                ps_buf_printf(b, "%.1f%%", 100.0 * q->d);
            else
                ps_buf_puts(b, "n/a");
            ps_buf_printf(b, " | %lld", (long long)ps_json_get_int(r, "limited", 0));
            static const char *const tally[] = {"refused_correct", "refused_early",
                                                "windows_filled"};
            for (size_t k = 0; k < 3; k++)
                if (ps_json_get(r, tally[k]))
                    ps_buf_printf(b, " | %lld", (long long)ps_json_get_int(r, tally[k], 0));
                else
                    ps_buf_puts(b, " | \xE2\x80\x93");
            ps_buf_puts(b, " |\n");
        }
    }
    if (head) ps_buf_putc(b, '\n');
}

/* The capacity search (`petstore-load search`'s `search` member,
 * loadgen/search.c): the knee, i.e. the highest rate measured passing every
 * objective, the lowest failing one, the objectives, and each step. */
static void load_search(ps_buf *b, const ps_json *doc)
{
    const ps_json *s = ps_json_get(doc, "search");
    if (!s || s->type != PS_JSON_OBJECT) return;
    ps_buf_puts(b, "### Capacity search\n\n");
    const ps_json *max = ps_json_get(s, "max_rate"), *minf = ps_json_get(s, "min_failing_rate");
    if (max && max->type == PS_JSON_NUMBER)
        ps_buf_printf(b, "Knee: **%.10g req/s**, the highest rate measured passing", max->d);
    else
        ps_buf_puts(b, "Knee: **none**: no rate passed");
    if (minf && minf->type == PS_JSON_NUMBER)
        ps_buf_printf(b, "; the lowest failing: %.10g req/s", minf->d);
    ps_buf_puts(b, "; result ");
    md_str(b, ps_json_get_string(s, "result", "?"));
    const ps_json *slos = ps_json_get(s, "slos");
    for (size_t i = 0; slos && slos->type == PS_JSON_ARRAY && i < slos->count; i++) {
        ps_buf_puts(b, i ? ", " : "; objectives ");
        if (slos->items[i]->type == PS_JSON_STRING) md_code(b, slos->items[i]->str, false);
    }
    ps_buf_puts(b, "\n\n");
    /* search --customers: the customers per plan of the answer */
    const ps_json *cust = ps_json_get(s, "customers");
    for (size_t i = 0; cust && cust->type == PS_JSON_OBJECT && i < cust->count; i++)
        ps_buf_printf(b, "%s%s %.0f%s", i ? ", " : "Customers at the knee: ", cust->keys[i],
                      cust->items[i]->type == PS_JSON_NUMBER ? cust->items[i]->d : 0,
                      i + 1 == cust->count ? "\n\n" : "");
    const ps_json *steps = ps_json_get(s, "steps");
    if (!steps || steps->type != PS_JSON_ARRAY || steps->count == 0) return;
    ps_buf_puts(b, "| rate | achieved | p99 | error rate | generator | result |\n"
                   "|---:|---:|---:|---:|---|---|\n");
    for (size_t i = 0; i < steps->count; i++) {
        const ps_json *st = steps->items[i], *passed = ps_json_get(st, "passed");
        ps_buf_printf(b, "| %.10g", ps_json_get_number(st, "rate", 0));
        const ps_json *sc = ps_json_get(st, "customers"); /* the step's customers */
        for (size_t k = 0; sc && sc->type == PS_JSON_OBJECT && k < sc->count; k++)
            ps_buf_printf(b, "%s%s %.0f%s", k ? ", " : " (", sc->keys[k],
                          sc->items[k]->type == PS_JSON_NUMBER ? sc->items[k]->d : 0,
                          k + 1 == sc->count ? ")" : "");
        ps_buf_printf(b, " | %.1f | ", ps_json_get_number(st, "achieved_rps", 0));
        md_latency(b, ps_json_path(st, "latency_us.p99"));
        ps_buf_printf(b, " | %.3f%% | ", ps_json_get_number(st, "error_rate", 0) * 100);
        md_str(b, str_or(st, "generator.verdict", ""));
        if (passed && passed->type == PS_JSON_BOOL && passed->boolean) {
            ps_buf_puts(b, " | \xE2\x9C\x85 pass |\n");
        } else {
            ps_buf_puts(b, " | \xE2\x9D\x8C ");
            md_str(b, ps_json_get_string(st, "why", "fail"));
            ps_buf_puts(b, " |\n");
        }
    }
    ps_buf_putc(b, '\n');
}

int ps_report_md_load(const ps_json *doc, FILE *out, ps_error *err)
{
    if (!doc || doc->type != PS_JSON_OBJECT) {
        if (err) ps_error_set(err, "Markdown summary: no report document");
        return -1;
    }
    ps_buf b = PS_BUF_INIT;
    load_heading(&b, doc);
    load_counts(&b, doc);
    load_thresholds(&b, doc);
    load_limits(&b, doc);
    load_capacity(&b, doc);
    load_search(&b, doc);
    int rc = flush_out(&b, out, err);
    ps_buf_free(&b);
    return rc;
}
