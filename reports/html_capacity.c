/* html_capacity.c - the load report's capacity table (see html_capacity.h). */
#include "reports/html_capacity.h"

#include <stdbool.h>

#include "reports/html_common.h"

static void rate_cell(ps_buf *b, const ps_json *row, const char *key)
{
    double v;
    ps_buf_puts(b, "<td class=\"n\">");
    if (ps_html_num(row, key, &v))
        ps_buf_printf(b, "%.1f/s", v);
    else
        ps_buf_puts(b, "n/a");
    ps_buf_puts(b, "</td>");
}

static void cell(ps_buf *b, const ps_json *row, const char *key)
{
    ps_buf_puts(b, "<td class=\"n\">");
    if (ps_json_get(row, key))
        ps_html_count(b, row, key);
    else
        ps_buf_puts(b, "&ndash;");
    ps_buf_puts(b, "</td>");
}

static bool has_figures(const ps_json *rows)
{
    for (size_t i = 0; rows && i < rows->count; i++)
        if (ps_json_get(rows->items[i], "offered_rps")) return true;
    return false;
}

static void rows_of(ps_buf *b, const ps_json *rows, const char *kind, const char *name)
{
    for (size_t i = 0; rows && i < rows->count; i++) {
        const ps_json *r = rows->items[i];
        if (!ps_json_get(r, "offered_rps")) continue;
        ps_buf_printf(b, "<tr data-%s=\"", kind);
        ps_html_value(b, ps_json_get(r, name), "");
        ps_buf_printf(b, "\"><td>%s ", kind);
        ps_html_value(b, ps_json_get(r, name), "n/a");
        ps_buf_puts(b, "</td>");
        cell(b, r, "keys");
        rate_cell(b, r, "offered_rps");
        rate_cell(b, r, "achieved_rps");
        rate_cell(b, r, "admitted_rps");
        double q;
        if (ps_html_num(r, "quota_share", &q))
            ps_buf_printf(b, "<td class=\"n\">%.1f%%</td>", 100.0 * q);
        else
            ps_buf_puts(b, "<td class=\"n\">n/a</td>");
        cell(b, r, "limited");
        cell(b, r, "refused_correct");
        cell(b, r, "refused_early");
        cell(b, r, "windows_filled");
        ps_buf_puts(b, "</tr>\n");
    }
}

void ps_html_capacity_section(ps_buf *b, const ps_json *doc)
{
    const ps_json *plans = ps_html_get(doc, "plans", PS_JSON_ARRAY);
    const ps_json *groups = ps_html_get(doc, "groups", PS_JSON_ARRAY);
    if (!has_figures(plans) && !has_figures(groups)) return;
    ps_buf_puts(b, "<h2>Capacity by plan and key group</h2>\n"
                   "<p class=\"note\">Rates per second of the measured time; share of quota: "
                   "offered over the keys' per-minute limits. A 429 is <i>window full</i> when "
                   "its window had admitted up to its limit (or its Remaining had reached 0), "
                   "<i>early</i> when its Remaining still said there was room "
                   "(<code>--verify-limits</code>).</p>\n"
                   "<table class=\"capacity\"><tr><th></th><th class=\"n\">keys</th>"
                   "<th class=\"n\">offered</th><th class=\"n\">achieved</th>"
                   "<th class=\"n\">admitted</th><th class=\"n\">share of quota</th>"
                   "<th class=\"n\">429s</th><th class=\"n\">window full</th>"
                   "<th class=\"n\">early</th><th class=\"n\">windows filled</th></tr>\n");
    rows_of(b, plans, "plan", "plan");
    rows_of(b, groups, "group", "group");
    ps_buf_puts(b, "</table>\n");
}
