/* html_common.c - page frame, CSS and tolerant JSON access for the HTML reports. */
#include "reports/html_common.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* One stylesheet for both reports: system fonts (nothing fetched), dark text
 * on white, Okabe-Ito status colours always paired with a text label, and a
 * print layout that opens nothing and hides the filter controls. */
static const char css[] =
    ":root{--fg:#1a1a1a;--muted:#5b5b5b;--line:#d9d9d9;--bg2:#f5f6f7;"
    "--ok:#00795a;--bad:#c24e00;--warn:#a86b00;--skip:#6b6b6b;}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0 auto;max-width:1240px;padding:24px;color:var(--fg);background:#fff;"
    "font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,\"Helvetica "
    "Neue\",Arial,sans-serif}\n"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;"
    "border-bottom:1px solid var(--line);padding-bottom:4px}h3{font-size:15px;margin:16px 0 6px}\n"
    "code,pre,.mono{font:12.5px/1.4 ui-monospace,\"SFMono-Regular\",Menlo,Consolas,\"DejaVu Sans "
    "Mono\",monospace}\n"
    "pre{background:var(--bg2);border:1px solid var(--line);border-radius:4px;padding:8px 10px;"
    "white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0 10px}\n"
    ".meta{color:var(--muted);margin:2px 0}\n"
    ".verdict{display:inline-block;padding:2px 10px;border-radius:4px;font-weight:700;"
    "color:#fff;vertical-align:middle;font-size:14px;margin-left:8px}\n"
    ".v-pass{background:var(--ok)}.v-fail{background:var(--bad)}.v-other{background:var(--skip)}\n"
    "table{border-collapse:collapse;margin:6px 0 12px;font-variant-numeric:tabular-nums}\n"
    "th,td{border-bottom:1px solid var(--line);padding:4px "
    "10px;text-align:left;vertical-align:top}\n"
    "th{background:var(--bg2);font-weight:600}td.n,th.n{text-align:right}\n"
    "td.none{color:var(--muted)}\n"
    ".cards{display:flex;flex-wrap:wrap;gap:10px;margin:14px 0}\n"
    ".card{border:1px solid var(--line);border-radius:6px;padding:6px 12px;min-width:100px}\n"
    ".card b{display:block;font-size:20px}.card span{color:var(--muted);font-size:12px}\n"
    ".badge{display:inline-block;min-width:64px;text-align:center;border-radius:3px;"
    "padding:0 6px;font-size:12px;font-weight:600;color:#fff}\n"
    ".st-passed{background:var(--ok)}.st-failed{background:var(--bad)}"
    ".st-warning{background:var(--warn)}.st-not_run,.st-not_applicable,.st-unknown{background:var(-"
    "-skip)}\n"
    ".bar{display:flex;height:22px;border-radius:4px;overflow:hidden;border:1px solid var(--line);"
    "margin:10px 0 6px}.bar div{height:100%}\n"
    ".legend-row span{margin-right:18px}.sw{display:inline-block;width:11px;height:11px;"
    "border-radius:2px;margin-right:5px;vertical-align:-1px}\n"
    ".check{border-bottom:1px solid var(--line)}\n"
    ".row{display:grid;grid-template-columns:76px minmax(170px,1.3fr) 2.2fr 52px 2fr 64px;"
    "gap:10px;padding:4px 6px;align-items:baseline}\n"
    "summary.row{cursor:pointer;list-style:none}summary.row::-webkit-details-marker{display:none}\n"
    "summary.row::before{content:\"\\25B8\";position:absolute;margin-left:-14px;color:var(--muted)}"
    "\n"
    "details[open]>summary.row::before{content:\"\\25BE\"}\n"
    ".check:hover{background:#fafafa}.row .id{overflow-wrap:anywhere}.row .dur{text-align:right;"
    "color:var(--muted)}.row .lvl,.row .cl{color:var(--muted)}\n"
    ".msg{color:var(--bad)}.ev{padding:4px 6px 10px 96px}.ev h4{margin:8px 0 2px;font-size:13px}\n"
    ".attention{margin:6px 0 4px;padding-left:18px}.attention li{margin:2px 0}\n"
    ".filters{margin:8px 0}.filters label{margin-right:16px;cursor:pointer}\n"
    "svg.plot{display:block;max-width:100%;height:auto;margin:8px 0 18px}\n"
    "svg.plot text{font:12px system-ui,-apple-system,\"Segoe "
    "UI\",Roboto,Arial,sans-serif;fill:#333}\n"
    "svg.plot .pt{font-weight:600;font-size:14px;fill:#1a1a1a}\n"
    "svg.plot .grid line{stroke:#e3e3e3;stroke-width:1}svg.plot .frame{fill:none;stroke:#999}\n"
    "svg.plot .nodata{fill:#888;font-size:14px}\n"
    ".note{color:var(--muted);font-size:12.5px}\n"
    ".kv{display:grid;grid-template-columns:repeat(auto-fill,minmax(270px,1fr));gap:2px 18px}\n"
    ".kv div{display:flex;gap:8px;border-bottom:1px solid var(--line);padding:3px 0}"
    ".kv span{color:var(--muted);min-width:130px}.kv code{overflow-wrap:anywhere}\n"
    ".kv div.wide{grid-column:span 2}\n"
    "footer{margin-top:32px;color:var(--muted);font-size:12px}\n"
    "@media print{body{max-width:none;padding:0}.filters{display:none}details>.ev{display:block}"
    ".check,table,svg.plot{break-inside:avoid}}\n";

void ps_html_page_begin(ps_buf *b, const char *title, const char *report_kind)
{
    ps_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                   "<title>");
    ps_html_esc(b, title);
    ps_buf_puts(b, "</title>\n<style>\n");
    ps_buf_puts(b, css);
    ps_buf_puts(b, "</style>\n</head>\n<body data-report=\"");
    ps_html_esc(b, report_kind);
    ps_buf_puts(b, "\">\n");
}

void ps_html_report_begin(ps_buf *b, const char *what, const char *base_url,
                          const char *report_kind)
{
    ps_buf title = PS_BUF_INIT;
    ps_buf_puts(&title, what);
    if (base_url) ps_buf_printf(&title, ": %s", base_url);
    ps_html_page_begin(b, title.data, report_kind);
    ps_buf_free(&title);
}

void ps_html_verdict_badge(ps_buf *b, const char *verdict, const char *attr)
{
    if (!verdict) {
        ps_buf_puts(b, "n/a");
        return;
    }
    ps_buf_printf(b, "<span class=\"verdict %s\" data-%s=\"",
                  !strcmp(verdict, "pass")   ? "v-pass"
                  : !strcmp(verdict, "fail") ? "v-fail"
                                             : "v-other",
                  attr);
    ps_html_esc(b, verdict);
    ps_buf_puts(b, "\">");
    ps_html_esc(b, verdict);
    ps_buf_puts(b, "</span>");
}

void ps_html_run_meta_end(ps_buf *b, const ps_json *doc, const char *started_label,
                          const char *took_label)
{
    double v;
    ps_buf_puts(b, started_label);
    ps_html_value(b, ps_json_get(doc, "started_at"), "n/a");
    ps_buf_printf(b, " &middot; %s", took_label);
    if (ps_html_num(doc, "duration_s", &v))
        ps_buf_printf(b, "%.2f s", v);
    else
        ps_buf_puts(b, "n/a");
    ps_buf_puts(b, " &middot; exit code ");
    ps_html_value(b, ps_json_get(doc, "exit_code"), "n/a");
    ps_buf_puts(b, "</p>\n</header>\n");
}

void ps_html_footer(ps_buf *b, const ps_json *doc, const char *default_tool)
{
    ps_buf_puts(b, "<footer>");
    ps_html_value(b, ps_json_get(doc, "tool"), default_tool);
    ps_buf_puts(b, " ");
    ps_html_value(b, ps_json_get(doc, "version"), "");
    ps_buf_puts(b, " &middot; report format ");
    ps_html_value(b, ps_json_get(doc, "format"), "n/a");
    ps_buf_puts(b, "</footer>\n");
}

void ps_html_page_end(ps_buf *b, const char *script)
{
    if (script) {
        ps_buf_puts(b, "<script>\n");
        ps_buf_puts(b, script);
        ps_buf_puts(b, "</script>\n");
    }
    ps_buf_puts(b, "</body>\n</html>\n");
}

/* What stands for a character a page must not hold raw, or NULL. A report
 * quotes server bytes, and control characters there would reach whoever
 * copies the text to a terminal (ESC sequences) or break a script: NUL
 * becomes U+FFFD; the other C0 controls but tab, newline and carriage return
 * become their Control Pictures symbol (U+2400 + code, ESC is U+241B), DEL
 * U+2421; C1 controls (U+0080-U+009F) U+FFFD; U+2028 and U+2029 character
 * references. *n is how many bytes of s the character spans. */
static const char *html_unsafe(const unsigned char *s, size_t len, size_t *n, char picture[4])
{
    *n = 1;
    if (s[0] == 0) return "\xEF\xBF\xBD";
    if (s[0] < 0x20 && s[0] != '\t' && s[0] != '\n' && s[0] != '\r') {
        picture[0] = '\xE2', picture[1] = '\x90', picture[2] = (char)(0x80 + s[0]),
        picture[3] = '\0';
        return picture;
    }
    if (s[0] == 0x7f) return "\xE2\x90\xA1";
    if (s[0] == 0xC2 && len >= 2 && s[1] >= 0x80 && s[1] <= 0x9F) {
        *n = 2;
        return "\xEF\xBF\xBD";
    }
    if (s[0] == 0xE2 && len >= 3 && s[1] == 0x80 && (s[2] == 0xA8 || s[2] == 0xA9)) {
        *n = 3;
        return s[2] == 0xA8 ? "&#x2028;" : "&#x2029;";
    }
    return NULL;
}

void ps_html_esc_n(ps_buf *b, const char *s, size_t len)
{
    if (!s) return;
    const unsigned char *u = (const unsigned char *)s;
    size_t start = 0;
    for (size_t i = 0; i < len;) {
        size_t n;
        char picture[4];
        const char *instead = u[i] < 0x20 || u[i] == 0x7f || u[i] == 0xC2 || u[i] == 0xE2
                                  ? html_unsafe(u + i, len - i, &n, picture)
                                  : NULL;
        if (!instead) {
            i++;
            continue;
        }
        ps_buf_html_escape(b, s + start, i - start);
        ps_buf_puts(b, instead);
        i += n;
        start = i;
    }
    ps_buf_html_escape(b, s + start, len - start);
}

void ps_html_esc(ps_buf *b, const char *s)
{
    if (s) ps_html_esc_n(b, s, strlen(s));
}

void ps_html_esc_capped(ps_buf *b, const ps_json *str, size_t max)
{
    if (!str || str->type != PS_JSON_STRING) return;
    size_t n = str->len;
    if (n <= max) {
        ps_html_esc_n(b, str->str, n);
        return;
    }
    n = ps_utf8_floor(str->str, max); /* the page stays valid UTF-8 */
    ps_html_esc_n(b, str->str, n);
    ps_buf_printf(b, "\n\xE2\x80\xA6 (%zu more bytes not shown)", str->len - n);
}

static void json_compact(ps_buf *b, const ps_json *v)
{
    switch (v->type) {
    case PS_JSON_NULL:
        ps_buf_puts(b, "null");
        break;
    case PS_JSON_BOOL:
        ps_buf_puts(b, v->boolean ? "true" : "false");
        break;
    case PS_JSON_NUMBER:
        ps_buf_puts(b, v->str ? v->str : "0");
        break;
    case PS_JSON_STRING:
        ps_buf_json_string(b, v->str, v->len);
        break;
    case PS_JSON_ARRAY:
        ps_buf_putc(b, '[');
        for (size_t i = 0; i < v->count; i++) {
            if (i) ps_buf_puts(b, ", ");
            json_compact(b, v->items[i]);
        }
        ps_buf_putc(b, ']');
        break;
    case PS_JSON_OBJECT:
        ps_buf_putc(b, '{');
        for (size_t i = 0; i < v->count; i++) {
            if (i) ps_buf_puts(b, ", ");
            ps_buf_json_string(b, v->keys[i], v->key_lens[i]);
            ps_buf_puts(b, ": ");
            json_compact(b, v->items[i]);
        }
        ps_buf_putc(b, '}');
        break;
    }
}

void ps_html_value(ps_buf *b, const ps_json *v, const char *dflt)
{
    if (!v) {
        ps_html_esc(b, dflt);
        return;
    }
    switch (v->type) {
    case PS_JSON_STRING:
        ps_html_esc_n(b, v->str, v->len);
        return;
    case PS_JSON_NUMBER:
        ps_html_esc(b, v->str);
        return;
    default:
        break;
    }
    ps_buf tmp = PS_BUF_INIT;
    json_compact(&tmp, v);
    ps_html_esc_n(b, tmp.data, tmp.len);
    ps_buf_free(&tmp);
}

const ps_json *ps_html_get(const ps_json *v, const char *key, ps_json_type type)
{
    const ps_json *m = ps_json_get(v, key);
    return m && m->type == type ? m : NULL;
}

bool ps_html_num(const ps_json *v, const char *key, double *out)
{
    const ps_json *m = ps_html_get(v, key, PS_JSON_NUMBER);
    if (!m || !isfinite(m->d)) return false;
    *out = m->d;
    return true;
}

void ps_html_number(ps_buf *b, double v)
{
    if (!isfinite(v)) {
        ps_buf_puts(b, "n/a");
        return;
    }
    if (v == floor(v) && fabs(v) < 1e15) {
        /* group thousands with a thin space: 1 234 567 */
        char tmp[32];
        snprintf(tmp, sizeof tmp, "%.0f", fabs(v));
        size_t n = strlen(tmp);
        if (v < 0) ps_buf_putc(b, '-');
        for (size_t i = 0; i < n; i++) {
            if (i && (n - i) % 3 == 0) ps_buf_puts(b, "\xE2\x80\x89");
            ps_buf_putc(b, tmp[i]);
        }
        return;
    }
    ps_buf_printf(b, fabs(v) >= 100 ? "%.1f" : fabs(v) >= 1 ? "%.2f" : "%.3g", v);
}

void ps_html_count(ps_buf *b, const ps_json *obj, const char *key)
{
    double v;
    if (ps_html_num(obj, key, &v))
        ps_html_number(b, v);
    else
        ps_buf_puts(b, "n/a");
}

void ps_html_latency_us(ps_buf *b, double us)
{
    if (!isfinite(us)) {
        ps_buf_puts(b, "n/a");
        return;
    }
    double a = fabs(us);
    if (a < 1000)
        ps_buf_printf(b, "%.*f\xC2\xA0\xC2\xB5s", us == floor(us) ? 0 : 1, us);
    else if (a < 1e6)
        ps_buf_printf(b, "%.*f\xC2\xA0ms", a < 10e3 ? 2 : a < 100e3 ? 1 : 0, us / 1e3);
    else
        ps_buf_printf(b, "%.*f\xC2\xA0s", a < 10e6 ? 2 : 1, us / 1e6);
}

int ps_html_write(const ps_buf *b, FILE *out, ps_error *err)
{
    if (!out) return ps_error_set(err, "HTML report: no output stream");
    if (b->len && fwrite(b->data, 1, b->len, out) != b->len)
        return ps_error_set(err, "HTML report: write failed: %s", strerror(errno));
    if (fflush(out) != 0 || ferror(out))
        return ps_error_set(err, "HTML report: write failed: %s", strerror(errno));
    return 0;
}
