/* html_capacity.h - the load report's capacity table (petstore-load's
 * plans[] and groups[], docs/report-json.md): per plan and per key group the
 * offered, achieved and admitted rates, the share of quota, and the 429s
 * split into window full (correct) and early. */
#ifndef PS_HTML_CAPACITY_H
#define PS_HTML_CAPACITY_H

#include "core/buf.h"
#include "core/json.h"

/* Appends the section; nothing when no row has capacity figures (a merge,
 * an older report). */
void ps_html_capacity_section(ps_buf *b, const ps_json *doc);

#endif
