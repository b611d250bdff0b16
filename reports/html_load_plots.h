/* html_load_plots.h - the load report's SVG plots: latency by percentile
 * (percentile_spectrum) and the time series over intervals[] (throughput,
 * latency, responses by status class), docs/report-json.md. The tables and
 * the page around them are html_load.c's. */
#ifndef PS_HTML_LOAD_PLOTS_H
#define PS_HTML_LOAD_PLOTS_H

#include "core/buf.h"
#include "core/json.h"

/* Appends the "Latency by percentile" plot of spec (the document's
 * percentile_spectrum object; NULL or another type appends a note instead). */
void ps_html_load_spectrum_section(ps_buf *b, const ps_json *spec);

/* Appends the "Over time" section: throughput, latency and status plots over
 * iv (the document's intervals array; NULL or empty appends a note), with
 * notes on what was not drawn and why. */
void ps_html_load_intervals_section(ps_buf *b, const ps_json *iv);

#endif
