/* summary.c - the JSON summary and thresholds. */
#include "loadgen/summary.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/histogram_print.h"
#include "core/version.h"

double ps_lg_error_rate(const ps_lg_stats *t)
{
    if (t->scheduled == 0) return 0;
    int64_t e5 = 0;
    for (int s = 500; s < 600; s++) e5 += t->status[s];
    return (double)(t->failed + t->timed_out + e5) / (double)t->scheduled;
}

ps_lg_threshold_result ps_lg_threshold_eval(const ps_lg_threshold *th, const ps_lg_stats *total)
{
    ps_lg_threshold_result r = {false, 0};
    const ps_hist *h = total->all.corr;
    switch (th->metric) {
    case PS_LG_METRIC_PERCENTILE: r.actual = (double)ps_hist_value_at_percentile(h, th->percentile); break;
    case PS_LG_METRIC_MAX: r.actual = (double)ps_hist_max(h); break;
    case PS_LG_METRIC_MEAN: r.actual = ps_hist_mean(h); break;
    case PS_LG_METRIC_ERROR_RATE: r.actual = ps_lg_error_rate(total); break;
    }
    r.passed = th->or_equal ? r.actual <= th->bound : r.actual < th->bound;
    /* No answer at all cannot pass a latency threshold. */
    if (th->metric != PS_LG_METRIC_ERROR_RATE && ps_hist_total_count(h) == 0) r.passed = false;
    return r;
}

static void latency_obj(ps_buf *b, const ps_hist *h)
{
    if (!h) {
        ps_buf_puts(b, "{}");
        return;
    }
    ps_buf_printf(b,
                  "{\"p50\": %" PRId64 ", \"p75\": %" PRId64 ", \"p90\": %" PRId64 ", \"p95\": %" PRId64
                  ", \"p99\": %" PRId64 ", \"p99_9\": %" PRId64 ", \"p99_99\": %" PRId64
                  ", \"max\": %" PRId64 ", \"mean\": %.1f, \"count\": %" PRId64 "}",
                  ps_hist_value_at_percentile(h, 50), ps_hist_value_at_percentile(h, 75),
                  ps_hist_value_at_percentile(h, 90), ps_hist_value_at_percentile(h, 95),
                  ps_hist_value_at_percentile(h, 99), ps_hist_value_at_percentile(h, 99.9),
                  ps_hist_value_at_percentile(h, 99.99), ps_hist_max(h), ps_hist_mean(h),
                  ps_hist_total_count(h));
}

static void pair_obj(ps_buf *b, const ps_lg_hpair *p)
{
    ps_buf_puts(b, "{\"corrected\": ");
    latency_obj(b, p->corr);
    ps_buf_puts(b, ", \"uncorrected\": ");
    latency_obj(b, p->unc);
    ps_buf_putc(b, '}');
}

int ps_lg_spectrum_json(const ps_hist *h, ps_buf *out, ps_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) return ps_error_set(err, "open_memstream failed");
    int rc = ps_hist_percentiles_print(h, mem, 5, 1.0, PS_HIST_FORMAT_CLASSIC);
    fclose(mem);
    if (rc != 0) {
        free(text);
        return ps_error_set(err, "cannot render the percentile spectrum");
    }
    ps_buf_putc(out, '[');
    bool first = true;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        double v, p;
        long long c;
        if (line[0] != '#' && sscanf(line, "%lf %lf %lld", &v, &p, &c) == 3) {
            ps_buf_printf(out, "%s[%.0f, %.12g, %lld]", first ? "" : ", ", v, p, c);
            first = false;
        }
        line = nl ? nl + 1 : NULL;
    }
    ps_buf_putc(out, ']');
    free(text);
    return 0;
}

static void json_str(ps_buf *b, const char *s)
{
    ps_buf_json_string(b, s, strlen(s));
}

int ps_lg_summary_json(const ps_lg_summary *s, ps_buf *b, ps_error *err)
{
    const ps_lg_config *cfg = s->cfg;
    const ps_lg_stats *t = s->total;
    char started[32];
    ps_clock_format_utc(s->started_wall_ns, started, sizeof started);

    ps_buf_puts(b, "{\n  \"tool\": \"petstore-load\", \"version\": \"" PS_VERSION "\", \"format\": 1,\n");
    ps_buf_puts(b, "  \"parameters\": {\"base_url\": ");
    json_str(b, cfg->base_url);
    ps_buf_printf(b, ", \"threads\": %d, \"connections\": %d, \"duration_s\": ", cfg->threads,
                  cfg->connections);
    if (cfg->duration_ns)
        ps_buf_printf(b, "%.3f", (double)cfg->duration_ns / 1e9);
    else
        ps_buf_puts(b, "null");
    if (cfg->requests)
        ps_buf_printf(b, ", \"requests_limit\": %" PRId64, cfg->requests);
    else
        ps_buf_puts(b, ", \"requests_limit\": null");
    if (cfg->rate > 0)
        ps_buf_printf(b, ", \"rate\": %.3f", cfg->rate);
    else
        ps_buf_puts(b, ", \"rate\": null");
    if (cfg->ramp)
        ps_buf_printf(b, ", \"ramp\": [%.3f, %.3f]", cfg->ramp_from, cfg->ramp_to);
    else
        ps_buf_puts(b, ", \"ramp\": null");
    ps_buf_printf(b, ", \"model\": \"%s\"", ps_lg_config_open_model(cfg) ? "open" : "closed");
    ps_buf_printf(b, ", \"mix\": {\"list\": %u, \"create\": %u}", cfg->mix[PS_LG_OP_LIST],
                  cfg->mix[PS_LG_OP_CREATE]);
    ps_buf_printf(b, ", \"engine\": \"%s\"", cfg->engine == PS_LG_ENGINE_CURL ? "curl" : "epoll");
    ps_buf_printf(b, ", \"timeout_s\": %.3f", (double)cfg->timeout_ns / 1e9);
    ps_buf_printf(b, ", \"verify_limits\": %s, \"burst\": %s, \"honour_retry_after\": %s",
                  cfg->verify_limits ? "true" : "false", cfg->burst ? "true" : "false",
                  cfg->honour_retry_after ? "true" : "false");
    ps_buf_printf(b, ", \"keys\": %zu, \"plans\": [", cfg->nkeys);
    bool first = true;
    for (int p = 0; p < PS_LG_PLANS; p++) {
        bool present = false;
        for (size_t k = 0; k < cfg->nkeys; k++) present |= cfg->keys[k].plan.id == (ps_plan_id)p;
        if (!present) continue;
        ps_buf_printf(b, "%s\"%s\"", first ? "" : ", ", ps_plan_name((ps_plan_id)p));
        first = false;
    }
    ps_buf_puts(b, "]},\n");
    ps_buf_printf(b, "  \"started_at\": \"%s\",\n", started);
    double dur = s->duration_s > 0 ? s->duration_s : 1e-9;
    ps_buf_printf(b,
                  "  \"requests\": %" PRId64 ", \"duration_s\": %.3f, \"throughput_rps\": %.1f,\n"
                  "  \"scheduled\": %" PRId64 ", \"answered\": %" PRId64 ", \"failed\": %" PRId64
                  ", \"timed_out\": %" PRId64 ", \"skipped_retry_after\": %" PRId64
                  ", \"accounting_exact\": %s,\n",
                  t->scheduled, s->duration_s, (double)t->answered / dur, t->scheduled, t->answered,
                  t->failed, t->timed_out, t->skipped_retry_after,
                  t->scheduled == t->answered + t->failed + t->timed_out ? "true" : "false");
    if (cfg->duration_ns && ps_lg_config_open_model(cfg))
        ps_buf_printf(b, "  \"send_rate_rps\": %.1f,\n",
                      (double)(t->scheduled + t->skipped_retry_after) / ((double)cfg->duration_ns / 1e9));
    ps_buf_puts(b, "  \"status\": {");
    first = true;
    for (int c = 0; c < 600; c++) {
        if (!t->status[c]) continue;
        ps_buf_printf(b, "%s\"%d\": %" PRId64, first ? "" : ", ", c, t->status[c]);
        first = false;
    }
    ps_buf_printf(b, "},\n  \"errors\": {\"connect\": %" PRId64 ", \"read\": %" PRId64
                     ", \"timeout\": %" PRId64 "},\n",
                  t->err_connect, t->err_read, t->err_timeout);
    ps_buf_printf(b, "  \"connect_failures\": %" PRId64 ",\n", t->connect_failures);
    ps_buf_printf(b, "  \"error_rate\": %.6f,\n", ps_lg_error_rate(t));
    ps_buf_puts(b, "  \"latency_us\": ");
    pair_obj(b, &t->all);
    ps_buf_puts(b, ",\n  \"operations\": {");
    static const char *op_names[PS_LG_OPS] = {"list", "create"};
    for (int o = 0; o < PS_LG_OPS; o++) {
        ps_buf_printf(b, "%s\"%s\": {\"requests\": %" PRId64 ", \"latency_us\": ", o ? ", " : "",
                      op_names[o], t->op_requests[o]);
        pair_obj(b, &t->op[o]);
        ps_buf_putc(b, '}');
    }
    ps_buf_puts(b, "},\n  \"status_classes\": {");
    static const char *cls_names[PS_LG_CLASSES] = {"2xx", "3xx", "4xx", "5xx"};
    for (int c = 0; c < PS_LG_CLASSES; c++) {
        ps_buf_printf(b, "%s\"%s\": {\"count\": %" PRId64 ", \"latency_us\": ", c ? ", " : "",
                      cls_names[c], t->cls[c].corr ? ps_hist_total_count(t->cls[c].corr) : 0);
        pair_obj(b, &t->cls[c]);
        ps_buf_putc(b, '}');
    }
    ps_buf_puts(b, "},\n  \"percentile_spectrum\": {\"corrected\": ");
    if (ps_lg_spectrum_json(t->all.corr, b, err) != 0) return -1;
    ps_buf_puts(b, ", \"uncorrected\": ");
    if (ps_lg_spectrum_json(t->all.unc, b, err) != 0) return -1;
    ps_buf_puts(b, "},\n  \"intervals\": [");
    for (size_t i = 0; i < s->nrows; i++) {
        const ps_lg_interval_row *r = &s->rows[i];
        ps_buf_printf(b,
                      "%s\n    {\"t_s\": %.3f, \"length_s\": %.3f, \"requests\": %" PRId64
                      ", \"throughput_rps\": %.1f, ",
                      i ? "," : "", r->t_s, r->length_s, r->requests,
                      r->length_s > 0 ? (double)r->requests / r->length_s : 0.0);
        /* no answer in the interval, no latency: null, not a measured 0 */
        if (r->requests > 0)
            ps_buf_printf(b,
                          "\"p50_us\": %" PRId64 ", \"p90_us\": %" PRId64 ", \"p99_us\": %" PRId64
                          ", \"max_us\": %" PRId64,
                          r->p50_us, r->p90_us, r->p99_us, r->max_us);
        else
            ps_buf_puts(b, "\"p50_us\": null, \"p90_us\": null, \"p99_us\": null, \"max_us\": null");
        ps_buf_printf(b,
                      ", \"status_classes\": {\"2xx\": %" PRId64 ", \"3xx\": %" PRId64
                      ", \"4xx\": %" PRId64 ", \"5xx\": %" PRId64 ", \"429\": %" PRId64
                      ", \"errors\": %" PRId64 "}}",
                      r->c2xx, r->c3xx, r->c4xx, r->c5xx, r->c429, r->errors);
    }
    ps_buf_puts(b, "],\n  \"plans\": [");
    first = true;
    for (int p = 0; p < PS_LG_PLANS; p++) {
        size_t nkeys = 0;
        for (size_t k = 0; k < cfg->nkeys; k++) nkeys += cfg->keys[k].plan.id == (ps_plan_id)p;
        if (!nkeys) continue;
        ps_buf_printf(b,
                      "%s\n    {\"plan\": \"%s\", \"keys\": %zu, \"admitted\": %" PRId64
                      ", \"limited\": %" PRId64 ", \"latency_us\": ",
                      first ? "" : ",", ps_plan_name((ps_plan_id)p), nkeys, t->plan_admitted[p],
                      t->plan_limited[p]);
        pair_obj(b, &t->plan[p]);
        ps_buf_putc(b, '}');
        first = false;
    }
    /* Nothing checked is not a pass: no window seen, no violation, no verdict. */
    const char *lverdict = !s->limits_checked          ? "not_checked"
                           : s->failing_violations      ? "fail"
                           : s->windows == 0            ? "not_checked"
                                                        : "pass";
    ps_buf_printf(b, "],\n  \"limits\": {\"verdict\": \"%s\", \"checked\": %s, \"windows\": %zu, "
                     "\"violations\": [",
                  lverdict, s->limits_checked ? "true" : "false", s->windows);
    for (size_t i = 0; i < s->nviolations; i++) {
        const ps_lg_violation *v = &s->violations[i];
        char red[8];
        ps_lg_redact(cfg->keys[v->key].key, red);
        ps_buf_printf(b, "%s\n    {\"key\": ", i ? "," : "");
        json_str(b, red);
        ps_buf_printf(b,
                      ", \"plan\": \"%s\", \"kind\": \"%s\", \"severity\": \"%s\", \"window\": "
                      "\"%s\", \"window_reset\": %" PRId64 ", \"admitted\": %" PRId64
                      ", \"limit\": %" PRId64 ", \"count\": %" PRId64 ", \"message\": ",
                      ps_plan_name(cfg->keys[v->key].plan.id), ps_lg_violation_kind_name(v->kind),
                      v->fails ? "error" : "warning", v->window, v->reset, v->admitted, v->limit,
                      v->count);
        json_str(b, v->message);
        ps_buf_putc(b, '}');
    }
    ps_buf_puts(b, "]},\n  \"thresholds\": [");
    for (size_t i = 0; i < cfg->nthresholds; i++) {
        const ps_lg_threshold *th = &cfg->thresholds[i];
        const ps_lg_threshold_result *r = &s->thresholds[i];
        ps_buf_printf(b, "%s\n    {\"expression\": ", i ? "," : "");
        json_str(b, th->expression);
        ps_buf_printf(b, ", \"passed\": %s, ", r->passed ? "true" : "false");
        if (th->metric == PS_LG_METRIC_ERROR_RATE)
            ps_buf_printf(b, "\"actual\": %.6f, \"bound\": %.6f}", r->actual, th->bound);
        else
            ps_buf_printf(b, "\"actual_us\": %.0f, \"bound_us\": %.0f}", r->actual, th->bound);
    }
    ps_buf_printf(b, "],\n  \"interrupted\": %s,\n  \"aborted\": ", s->interrupted ? "true" : "false");
    if (s->aborted)
        json_str(b, s->aborted);
    else
        ps_buf_puts(b, "null");
    ps_buf_printf(b, ",\n  \"verdict\": \"%s\",\n  \"exit_code\": %d\n}\n",
                  s->verdict ? s->verdict : s->exit_code == 0 ? "pass" : "fail", s->exit_code);
    return 0;
}
